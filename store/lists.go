package store

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeLists decodes a JSON object of string lists into dst, as
// json.Unmarshal into v would. The shape encodeScopeTrigger writes is read
// without reflection; anything else (escapes, unknown keys, null, invalid
// UTF-8) goes through json.Unmarshal, so the result is always Unmarshal's.
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

// appendLists appends the JSON object {"keys[0]":[…],…} of lists, byte for
// byte as json.Marshal writes a struct of []string fields with those names
// (nil lists as [], the shape normScope and normTrigger give).
func appendLists(dst []byte, keys []string, lists ...[]string) []byte {
	dst = append(dst, '{')
	for i, key := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, key)
		dst = append(dst, ':')
		dst = appendList(dst, lists[i])
	}
	return append(dst, '}')
}

// appendList appends xs as json.Marshal writes a non-nil []string.
func appendList(dst []byte, xs []string) []byte {
	dst = append(dst, '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, x)
	}
	return append(dst, ']')
}

// appendString appends s as json.Marshal writes it: quoted as it is when no
// byte needs an escape (control characters, quotes, backslashes, <, >, &).
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
