package pluginjson

import (
	"encoding/binary"
	"math/bits"
)

// The cards of a batch are written alike: the same member names in the
// same order, only the values differ. So after reading a card the general
// way, the plugin learns its layout (the bytes between its values, and
// which field each value is) and reads the next cards, in this call and the
// next, by comparing those bytes a word at a time and scanning only the
// values: one call per card instead of several per member. A card that
// differs in any way (its member order, whitespace, an escaped string, a
// number strconv must read) is read the general way, so the layout changes
// how fast a batch is read, never what is read.

// literal is up to 32 bytes of input, kept as words to compare.
type literal struct {
	w, mask [4]uint64
	n       int
}

func makeLiteral(b []byte) (literal, bool) {
	var l literal
	if len(b) > 32 {
		return l, false
	}
	l.n = len(b)
	for j, c := range b {
		l.w[j/8] |= uint64(c) << (8 * (j % 8))
		l.mask[j/8] |= 0xff << (8 * (j % 8))
	}
	return l, true
}

// at reports whether b[i:] starts with l. It needs 32 bytes to load, which
// every card but the last of a batch has after it.
func (l *literal) at(b []byte, i int) bool {
	if i+32 > len(b) {
		return false
	}
	return binary.LittleEndian.Uint64(b[i:])&l.mask[0] == l.w[0] &&
		binary.LittleEndian.Uint64(b[i+8:])&l.mask[1] == l.w[1] &&
		binary.LittleEndian.Uint64(b[i+16:])&l.mask[2] == l.w[2] &&
		binary.LittleEndian.Uint64(b[i+24:])&l.mask[3] == l.w[3]
}

// step is a literal and the value after it: a string or a number, stored
// in slot of its kind, or dropped when slot is -1.
type step struct {
	before literal
	str    bool
	slot   int
}

// Layout is one object's steps and the literal after its last value,
// through its closing brace.
type Layout struct {
	steps []step
	tail  literal
}

// Learn derives the layout of the object from offset start to the reader's
// position, which was just read without error. slot gives the slot of the
// value at a member path ("card.id"; -1 to drop it). It fails for an object a layout cannot
// replay: one holding an array, an escaped string, or more than 32 bytes
// between two values.
func (r *Reader) Learn(start int, slot func(path string, str bool) int) (Layout, bool) {
	b, end := r.b, r.i
	var l Layout
	var path []string // the names of the members being read, outermost first
	expectKey := false
	lit := start // where the literal before the next value starts
	for i := start; i < end; {
		switch c := b[i]; {
		case c == '{':
			path = append(path, "")
			expectKey = true
			i++
		case c == '}':
			if len(path) == 0 {
				return l, false
			}
			path = path[:len(path)-1]
			i++
		case c == ',':
			expectKey = len(path) > 0
			i++
		case c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j, ok := plainString(b, i)
			if !ok || j > end {
				return l, false
			}
			if expectKey {
				path[len(path)-1] = string(b[i+1 : j-1])
				expectKey = false
				i = j
				continue
			}
			if !l.add(b[lit:i], true, slot(join(path), true)) {
				return l, false
			}
			i, lit = j, j
		case c == '-' || c >= '0' && c <= '9':
			r := Reader{b: b[:end], i: i}
			j, _, _, _, err := r.scanNumber()
			if err != nil || !l.add(b[lit:i], false, slot(join(path), false)) {
				return l, false
			}
			i, lit = j, j
		case c == 't' || c == 'f' || c == 'n': // part of the literal
			word := "null"
			switch c {
			case 't':
				word = "true"
			case 'f':
				word = "false"
			}
			r := Reader{b: b[:end], i: i}
			if r.literal(word) != nil {
				return l, false
			}
			i = r.i
		default: // '[' and anything else
			return l, false
		}
	}
	tail, ok := makeLiteral(b[lit:end])
	l.tail = tail
	return l, ok && len(path) == 0
}

func (l *Layout) add(before []byte, str bool, slot int) bool {
	lit, ok := makeLiteral(before)
	l.steps = append(l.steps, step{before: lit, str: str, slot: slot})
	return ok
}

func join(path []string) string {
	s := ""
	for i, p := range path {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}

// plainString returns the end of the string at b[i] (just past its closing
// quote) when it holds no escape and no control character.
func plainString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// Fill reads one object laid out as l at r.i: strings into strs, numbers
// into nums, by slot. It reports false, having consumed nothing, at the
// first difference from the layout; the caller then reads the object the
// general way. It is one function on purpose: a call costs a Go guest more
// than comparing a literal.
func (r *Reader) Fill(l *Layout, strs [][]byte, nums []float64) bool {
	b, i := r.b, r.i
	for k := range l.steps {
		s := &l.steps[k]
		lit := &s.before
		if i+32 > len(b) ||
			binary.LittleEndian.Uint64(b[i:])&lit.mask[0] != lit.w[0] ||
			binary.LittleEndian.Uint64(b[i+8:])&lit.mask[1] != lit.w[1] ||
			binary.LittleEndian.Uint64(b[i+16:])&lit.mask[2] != lit.w[2] ||
			binary.LittleEndian.Uint64(b[i+24:])&lit.mask[3] != lit.w[3] {
			return false
		}
		i += lit.n
		if i >= len(b) {
			return false
		}
		if s.str { // '"', then plain bytes up to the closing quote
			if b[i] != '"' {
				return false
			}
			j := i + 1
			for {
				if j+8 > len(b) {
					return false
				}
				x := binary.LittleEndian.Uint64(b[j:])
				if special := specials(x); special != 0 {
					j += bits.TrailingZeros64(special) / 8
					break
				}
				j += 8
			}
			if b[j] != '"' {
				return false
			}
			if s.slot >= 0 {
				strs[s.slot] = b[i+1 : j]
			}
			i = j + 1
			continue
		}
		// A number as number reads it without strconv: -?(0|[1-9][0-9]*)
		// (.[0-9]+)?, digits below 2^53 as one integer; a dropped one may
		// have more digits. Anything else is left to the general path.
		neg := b[i] == '-'
		if neg {
			i++
		}
		start := i
		var v uint64
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + uint64(b[i]-'0')
		}
		digits, fraction := i-start, 0
		if digits == 0 || digits > 1 && b[start] == '0' {
			return false
		}
		if i < len(b) && b[i] == '.' {
			i++
			f := i
			for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
				v = v*10 + uint64(b[i]-'0')
			}
			if fraction = i - f; fraction == 0 {
				return false
			}
		}
		if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
			return false
		}
		if s.slot >= 0 {
			if digits+fraction > 19 || v >= 1<<53 || fraction >= len(pow10) {
				return false
			}
			f := float64(v) / pow10[fraction]
			if neg {
				f = -f
			}
			nums[s.slot] = f
		}
	}
	if !l.tail.at(b, i) {
		return false
	}
	r.i = i + l.tail.n
	return true
}
