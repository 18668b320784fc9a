package store

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeLists decodes a JSON object of string lists, as json.Unmarshal into
// a struct of []string fields named keys would, into dst. The scope and
// trigger columns are such objects, written by encodeScopeTrigger, and a
// context request decodes a few hundred of them: the fast path reads the
// shape those writes produce (known keys, plain strings) without reflection,
// and anything else — escapes, unknown keys, null, invalid UTF-8 — goes
// through json.Unmarshal into v, so the result is always Unmarshal's.
func decodeLists(raw string, keys []string, dst []*[]string, v any) error {
	if fastLists(raw, keys, dst) {
		return nil
	}
	for _, d := range dst {
		*d = nil
	}
	return json.Unmarshal([]byte(raw), v)
}

func fastLists(s string, keys []string, dst []*[]string) bool {
	i := 0
	ws := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	// str reads a JSON string without escapes at s[i] (the opening quote).
	str := func() (string, bool) {
		if i >= len(s) || s[i] != '"' {
			return "", false
		}
		j := i + 1
		ascii := true
		for ; j < len(s) && s[j] != '"'; j++ {
			switch c := s[j]; {
			case c == '\\' || c < 0x20:
				return "", false
			case c >= 0x80:
				ascii = false
			}
		}
		if j >= len(s) {
			return "", false
		}
		out := s[i+1 : j]
		if !ascii && !utf8.ValidString(out) {
			return "", false
		}
		i = j + 1
		return out, true
	}
	seen := make([]bool, len(keys))
	ws()
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i++
	ws()
	if i < len(s) && s[i] == '}' {
		i++
		ws()
		return i == len(s)
	}
	for {
		ws()
		k, ok := str()
		if !ok {
			return false
		}
		idx := -1
		for j, key := range keys {
			if key == k {
				idx = j
			}
		}
		if idx < 0 || seen[idx] {
			return false
		}
		seen[idx] = true
		ws()
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i++
		ws()
		if i >= len(s) || s[i] != '[' {
			return false
		}
		i++
		ws()
		var list []string
		if i < len(s) && s[i] == ']' {
			i++
			list = []string{}
		} else {
			for {
				ws()
				v, ok := str()
				if !ok {
					return false
				}
				list = append(list, v)
				ws()
				if i < len(s) && s[i] == ',' {
					i++
					continue
				}
				if i < len(s) && s[i] == ']' {
					i++
					break
				}
				return false
			}
		}
		*dst[idx] = list
		ws()
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == '}' {
			i++
			ws()
			return i == len(s)
		}
		return false
	}
}
