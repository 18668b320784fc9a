package host

import "strings"

// cleanList trims each string and drops empty and repeated ones, keeping
// the first of each; the result is never nil.
func cleanList(xs []string) []string {
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

// nonNilStrings is xs, or an empty list for nil (JSON [] rather than null).
func nonNilStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
