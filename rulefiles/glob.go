package rulefiles

import "strings"

// expandAll expands the alternations of every pattern (see Expand), keeping
// order and dropping repeats.
func expandAll(patterns []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		for _, e := range Expand(p) {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// Expand rewrites a glob's {a,b} alternations, nested ones too, as separate
// patterns ("{cmd,host}/**" → "cmd/**", "host/**"). A backslash escapes the
// next character; unbalanced braces leave the pattern unchanged.
func Expand(p string) []string {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				return []string{p}
			}
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTop(p[open+1 : i]) {
					out = append(out, Expand(p[:open]+alt+p[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{p}
}

// splitTop splits s at the commas outside nested braces.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// splitList splits a comma-separated glob list, not at commas inside braces.
func splitList(s string) []string {
	var out []string
	for _, p := range splitTop(s) {
		if p = strings.TrimSpace(strings.Trim(strings.TrimSpace(p), `"'`)); p != "" {
			out = append(out, p)
		}
	}
	return out
}
