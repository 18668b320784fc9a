package secrets

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// scanDecoded scans each line holding a backslash or a non-ASCII byte again,
// JSON escapes decoded anywhere on it and format characters (Unicode Cf)
// dropped. Hits map back to the bytes they came from; the redacted form
// shows the decoded secret. Decoding only adds findings.
func scanDecoded(text []byte, hits []hit) []hit {
	if bytes.IndexByte(text, '\\') < 0 && !hasNonASCII(text) {
		return hits
	}
	var view []byte
	var offs []int
	for ls := 0; ls < len(text); {
		le := bytes.IndexByte(text[ls:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += ls
		}
		line := text[ls:le]
		if bytes.IndexByte(line, '\\') >= 0 || hasNonASCII(line) {
			var changed bool
			view, offs, changed = decodeLine(line, view[:0], offs[:0])
			if changed {
				for _, h := range scanHits(view, nil) {
					if h.show == "" {
						h.show = Redact(string(view[h.start:h.end]))
					}
					h.start = ls + offs[h.start]
					if h.end < len(view) {
						h.end = ls + offs[h.end]
					} else {
						h.end = le
					}
					if h.end > h.start { // a match inside one escape's bytes spans nothing written
						hits = append(hits, h)
					}
				}
			}
		}
		ls = le + 1
	}
	return hits
}

// hasNonASCII looks at eight bytes at a time: it runs over every line.
func hasNonASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// decodeLine appends to view the line with valid JSON escapes decoded and Cf
// runes dropped, and to offs, per byte of view, the offset in line it came
// from. changed is false when view is the line as it was.
func decodeLine(line, view []byte, offs []int) ([]byte, []int, bool) {
	changed := false
	emit := func(b []byte, at int) {
		view = append(view, b...)
		for range b {
			offs = append(offs, at)
		}
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			if r, n := unescape(line[i:]); n > 0 {
				changed = true
				if !unicode.Is(unicode.Cf, r) {
					emit(buf[:utf8.EncodeRune(buf[:], r)], i)
				}
				i += n
				continue
			}
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(line[i:])
			if r != utf8.RuneError && unicode.Is(unicode.Cf, r) {
				changed = true
				i += n
				continue
			}
			emit(line[i:i+n], i)
			i += n
			continue
		}
		view = append(view, c)
		offs = append(offs, i)
		i++
	}
	return view, offs, changed
}

// unescape decodes the JSON escape at the start of s, returning the rune
// and the escape's length, or n == 0 when s does not start with one.
func unescape(s []byte) (rune, int) {
	if i := strings.IndexByte(`"\/bfnrt`, s[1]); i >= 0 {
		return rune("\"\\/\b\f\n\r\t"[i]), 2
	}
	if s[1] == 'u' {
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if 0xD800 <= r && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok && 0xDC00 <= lo && lo < 0xE000 {
				return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
			}
		}
		if 0xD800 <= r && r < 0xE000 {
			return utf8.RuneError, 6
		}
		return r, 6
	}
	return 0, 0
}

func hex4(s []byte) (rune, bool) {
	var b [2]byte
	if len(s) < 4 {
		return 0, false
	}
	if _, err := hex.Decode(b[:], s[:4]); err != nil {
		return 0, false
	}
	return rune(b[0])<<8 | rune(b[1]), true
}
