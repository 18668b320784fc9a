// Package strlist holds the two ways palace tidies a list of strings from
// a request or a file, so every surface cleans them alike. It owns nothing
// else.
package strlist

import "strings"

// Clean trims each string and drops empty and repeated ones, keeping the
// first of each; the result is never nil.
func Clean(xs []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// NonNil is xs, or an empty list for nil (JSON [] rather than null).
func NonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
