package ui

import "strings"

// diffLine is one line of a conflict's diff: Op is ' ' (both), '-' (only
// in the file), '+' (only in this palace) or '@' (a hunk header).
type diffLine struct {
	Op   string
	Text string
}

// diffLines splits a sync conflict's unified diff into lines to render,
// leaving out the two file-name lines.
func diffLines(unified string) []diffLine {
	var out []diffLine
	for i, l := range strings.Split(strings.TrimSuffix(unified, "\n"), "\n") {
		if i < 2 && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) || l == "" {
			continue
		}
		out = append(out, diffLine{Op: l[:1], Text: l[1:]})
	}
	return out
}
