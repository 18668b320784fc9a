// Package pluginjson is a small JSON reader and writer for palace's example
// policy plugins, which are Go compiled to WebAssembly.
//
// Go compiled to WebAssembly runs parsing code many times slower than
// native Go, and encoding/json's reflection or a general parser that builds
// a tree is most of a call's cost. This reader walks the input once, in
// place, and the decision point pulls exactly the fields it needs: strings
// come back as slices of the input (copied only when they hold escapes),
// numbers without allocating. It accepts the JSON of RFC 8259 and nothing
// else, except that strings are not checked for valid UTF-8 (AppendString
// writes invalid bytes back as U+FFFD); an error names what was expected
// and the byte offset. A value of the wrong type is an error naming its
// field; an absent or null one reads as zero.
package pluginjson

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Words of eight bytes, for scanning and comparing eight bytes at a time:
// WebAssembly has 64-bit loads and arithmetic, and every turn of a byte
// loop costs a guest several times what it costs native code.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specials marks, with its high bit, each byte of the word x that a JSON
// string cannot hold as it is: '"', '\\' or a control character. Only the
// lowest mark is exact (a borrow can mark a byte above it), which is all
// its callers read: whether there is one, and where the first is.
func specials(x uint64) uint64 {
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (x-ones*0x20)&^x) & highs
}

// maxDepth bounds the nesting of skipped values, so a hostile input ends
// with an error rather than by exhausting the plugin's memory.
const maxDepth = 512

// Reader reads one JSON document; each method consumes what it reads.
type Reader struct {
	b     []byte
	i     int
	depth int
}

// NewReader reads the document b, which must stay unchanged while strings
// read from it are in use.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Pos is the offset of the next byte to read.
func (r *Reader) Pos() int { return r.i }

// Peek skips whitespace and returns the next byte, or 0 at the end.
func (r *Reader) Peek() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// Open reads the start of an object ('{'), or null: it returns false for
// null. what names the value in an error.
func (r *Reader) Open(what string) (bool, error) {
	switch r.Peek() {
	case '{':
		r.i++
		return true, nil
	case 'n':
		return false, r.literal("null")
	}
	return false, r.expected(what, "an object")
}

// OpenArray is open for arrays ('[').
func (r *Reader) OpenArray(what string) (bool, error) {
	switch r.Peek() {
	case '[':
		r.i++
		return true, nil
	case 'n':
		return false, r.literal("null")
	}
	return false, r.expected(what, "an array")
}

// Next moves to the next member of the object or array opened last, whose
// closing byte is end: it consumes the ',' before a member that is not the
// first, or the closing byte, and reports whether a member follows.
func (r *Reader) Next(end byte, first bool) (bool, error) {
	c := r.Peek()
	if c == end {
		r.i++
		return false, nil
	}
	if !first {
		if c != ',' {
			return false, r.syntax("',' or '" + string(end) + "'")
		}
		r.i++
		c = r.Peek()
	}
	if end == '}' && c != '"' {
		return false, r.syntax("a member name")
	}
	return true, nil
}

// Member moves to the next member of the object opened last, as next does,
// and reads its name and the ':' after it. It returns the member's index in
// names, or -1 for a name not listed. *next is the index of the name
// expected next (0 for a new object); member keeps it up to date, so that
// a writer that keeps the order of names costs one comparison per member.
//
// A name written plainly, as "name": with no escapes and no space before
// the colon, is matched by comparing three words of input with each listed
// name, without scanning it byte by byte; anything else takes the general
// path.
func (r *Reader) Member(first bool, names []Name, next *int) (found bool, index int, err error) {
	var c byte
	if r.i < len(r.b) {
		c = r.b[r.i]
	}
	if c <= ' ' { // whitespace, or the end
		c = r.Peek()
	}
	if c == '}' {
		r.i++
		return false, -1, nil
	}
	if !first {
		if c != ',' {
			return false, -1, r.syntax("',' or '}'")
		}
		if r.i++; r.i < len(r.b) {
			c = r.b[r.i]
		}
		if c <= ' ' {
			c = r.Peek()
		}
	}
	if c != '"' {
		return false, -1, r.syntax("a member name")
	}
	if i := r.i; i+24 <= len(r.b) {
		w0 := binary.LittleEndian.Uint64(r.b[i:])
		w1 := binary.LittleEndian.Uint64(r.b[i+8:])
		w2 := binary.LittleEndian.Uint64(r.b[i+16:])
		from := *next
		for j := range len(names) {
			if j += from; j >= len(names) {
				j -= len(names)
			}
			nm := &names[j]
			if !nm.long && w0&nm.mask[0] == nm.lit[0] && w1&nm.mask[1] == nm.lit[1] && w2&nm.mask[2] == nm.lit[2] {
				r.i = i + nm.n + 3
				*next = j + 1
				return true, j, nil
			}
		}
		// Not listed. A plain name (no escape, the colon right after its
		// closing quote) that ends within these 24 bytes is one the loop
		// would have matched if it were listed: skip it without scanning.
		if n := plainName(w0, w1, w2); n > 0 {
			r.i = i + n
			return true, -1, nil
		}
	}
	k, err := r.key()
	if err != nil {
		return false, -1, err
	}
	for j := range names {
		if string(k) == names[j].s {
			*next = j + 1
			return true, j, nil
		}
	}
	return true, -1, nil
}

// plainName returns how many bytes `"name":` takes at the start of the 24
// bytes w0 w1 w2, or 0 if the name holds an escape or a control character,
// is followed by anything but the colon, or does not end within them.
func plainName(w0, w1, w2 uint64) int {
	ws := [3]uint64{w0 | 0xff, w1, w2} // 0xff hides the opening quote
	for k, x := range ws {
		special := specials(x)
		if special == 0 {
			continue
		}
		at := k*8 + bits.TrailingZeros64(special)/8 // the first special byte
		if byte(ws[at/8]>>(8*(at%8))) != '"' || at == 23 || byte(ws[(at+1)/8]>>(8*((at+1)%8))) != ':' {
			return 0
		}
		return at + 2
	}
	return 0
}

// Name is a member name prepared for Member: it is also kept as the 24
// bytes "name": takes in the input, in three words, with masks for the
// bytes past its end. A name longer than 21 bytes does not fit them
// (long): member matches it the general way.
type Name struct {
	s         string
	n         int
	lit, mask [3]uint64
	long      bool
}

// Names prepares the member names of one object, in the order a writer
// puts them.
func Names(ss ...string) []Name {
	out := make([]Name, len(ss))
	for i, s := range ss {
		lit := `"` + s + `":`
		nm := Name{s: s, n: len(s)}
		if len(lit) > 24 {
			nm.long = true
			out[i] = nm
			continue
		}
		for j := range len(lit) {
			nm.lit[j/8] |= uint64(lit[j]) << (8 * (j % 8))
			nm.mask[j/8] |= 0xff << (8 * (j % 8))
		}
		out[i] = nm
	}
	return out
}

// key reads a member name and the ':' after it.
func (r *Reader) key() ([]byte, error) {
	k, err := r.string()
	if err != nil {
		return nil, err
	}
	if r.Peek() != ':' {
		return nil, r.syntax("':'")
	}
	r.i++
	return k, nil
}

// Str reads a string value; null is nil.
func (r *Reader) Str(what string) ([]byte, error) {
	switch r.Peek() {
	case '"':
		return r.string()
	case 'n':
		return nil, r.literal("null")
	}
	return nil, r.expected(what, "a string")
}

// Num reads a number value; null is 0.
func (r *Reader) Num(what string) (float64, error) {
	b, i := r.b, r.i
	c := byte(0)
	if i < len(b) {
		c = b[i]
	}
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		c = r.Peek()
		i = r.i
	}
	if c >= '0' && c <= '9' {
		// A plain integer of up to 15 digits, the common case, here;
		// anything else in number.
		v, j := uint64(0), i
		for ; j < len(b) && j-i < 15 && b[j] >= '0' && b[j] <= '9'; j++ {
			v = v*10 + uint64(b[j]-'0')
		}
		if j < len(b) && (c != '0' || j == i+1) {
			if d := b[j]; d != '.' && d != 'e' && d != 'E' && (d < '0' || d > '9') {
				r.i = j
				return float64(v), nil
			}
		}
	}
	switch {
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	case c == 'n':
		return 0, r.literal("null")
	}
	return 0, r.expected(what, "a number")
}

// string reads a string at r.i, which holds '"'.
func (r *Reader) string() ([]byte, error) {
	start := r.i + 1
	i := start
	for i+8 <= len(r.b) { // skip eight plain bytes at a time
		x := binary.LittleEndian.Uint64(r.b[i:])
		if specials(x) != 0 {
			break
		}
		i += 8
	}
	for ; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			r.i = i + 1
			return r.b[start:i], nil
		case c == '\\':
			return r.unescape(start, i)
		case c < 0x20:
			r.i = i
			return nil, r.syntax("no control character in a string")
		}
	}
	r.i = len(r.b)
	return nil, r.syntax("the end of the string")
}

// unescape finishes a string that has an escape at esc, copying it.
func (r *Reader) unescape(start, esc int) ([]byte, error) {
	out := append([]byte(nil), r.b[start:esc]...)
	i := esc
	for i < len(r.b) {
		c := r.b[i]
		switch {
		case c == '"':
			r.i = i + 1
			return out, nil
		case c < 0x20:
			r.i = i
			return nil, r.syntax("no control character in a string")
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(r.b) {
			break
		}
		switch e := r.b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			ch, ok := hex4(r.b, i+2)
			if !ok {
				r.i = i
				return nil, r.syntax("four hex digits after \\u")
			}
			i += 6
			if utf16.IsSurrogate(ch) {
				if lo, ok := hex4(r.b, i+2); ok && i+1 < len(r.b) && r.b[i] == '\\' && r.b[i+1] == 'u' {
					if pair := utf16.DecodeRune(ch, lo); pair != utf8.RuneError {
						ch = pair
						i += 6
					} else {
						ch = utf8.RuneError
					}
				} else {
					ch = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, ch)
			continue
		default:
			r.i = i
			return nil, r.syntax("a valid escape")
		}
		i += 2
	}
	r.i = len(r.b)
	return nil, r.syntax("the end of the string")
}

// hex4 decodes the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// number reads a number at r.i. Integers and plain decimals whose digits,
// read as one integer, stay below 2^53, which is what a host sends for
// counts and scores, are converted without strconv (exactly: both that
// integer and the power of ten are exact float64s, and one division rounds
// once, as strconv's own fast path does).
func (r *Reader) number() (float64, error) {
	start := r.i
	end, v, fraction, simple, err := r.scanNumber()
	if err != nil {
		return 0, err
	}
	r.i = end
	if simple {
		f := float64(v) / pow10[fraction]
		if r.b[start] == '-' {
			return -f, nil
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(r.b[start:end]), 64)
	if err != nil {
		return 0, errors.New("number " + string(r.b[start:end]) + " at offset " + strconv.Itoa(start) + " is out of range")
	}
	return f, nil
}

// scanNumber checks the number at r.i and returns where it ends; when
// simple, its digits as one integer v below 2^53 and how many of them
// follow the point. It moves r.i only to report an error.
func (r *Reader) scanNumber() (end int, v uint64, fraction int, simple bool, err error) {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := 0
	switch {
	case i < len(b) && b[i] == '0':
		i++
		digits = 1
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + uint64(b[i]-'0')
			digits++
		}
	default:
		r.i = i
		return 0, 0, 0, false, r.syntax("a digit")
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || b[i] < '0' || b[i] > '9' {
			r.i = i
			return 0, 0, 0, false, r.syntax("a digit after '.'")
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + uint64(b[i]-'0')
			digits++
			fraction++
		}
	}
	// 19 digits cannot overflow v; below 2^53 it is an exact float64.
	simple = digits <= 19 && v < 1<<53 && fraction < len(pow10)
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		simple = false
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			r.i = i
			return 0, 0, 0, false, r.syntax("a digit in the exponent")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, v, fraction, simple, nil
}

// pow10 holds the powers of ten that are exact float64s.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// literal reads the word (true, false or null) at r.i.
func (r *Reader) literal(word string) error {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return r.syntax(word)
	}
	r.i += len(word)
	return nil
}

// Skip reads any value and drops it.
func (r *Reader) Skip() error {
	switch c := r.Peek(); {
	case c == '"':
		_, err := r.string()
		return err
	case c == '-' || c >= '0' && c <= '9':
		end, _, _, _, err := r.scanNumber()
		if err == nil {
			r.i = end
		}
		return err
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '{' || c == '[':
		if r.depth++; r.depth > maxDepth {
			return errors.New("values nested deeper than " + strconv.Itoa(maxDepth) + " at offset " + strconv.Itoa(r.i))
		}
		defer func() { r.depth-- }()
		r.i++
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		for first := true; ; first = false {
			more, err := r.Next(end, first)
			if err != nil || !more {
				return err
			}
			if end == '}' {
				if _, err := r.key(); err != nil {
					return err
				}
			}
			if err := r.Skip(); err != nil {
				return err
			}
		}
	}
	return r.syntax("a value")
}

// End checks that nothing but whitespace follows the document.
func (r *Reader) End() error {
	if r.Peek() != 0 || r.i < len(r.b) {
		return r.syntax("the end of the input")
	}
	return nil
}

// syntaxError is malformed JSON; the Reader's other errors are well-formed
// values of the wrong type and carry their field's name.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

func (r *Reader) syntax(want string) error {
	if r.i >= len(r.b) {
		return &syntaxError{"invalid JSON: want " + want + ", found the end of the input"}
	}
	return &syntaxError{"invalid JSON at offset " + strconv.Itoa(r.i) + ": want " + want + ", found " + strconv.QuoteRune(rune(r.b[r.i]))}
}

// At puts a syntax error under the path of the value being read; other
// errors already name their field and pass through.
func At(path string, err error) error {
	if se, ok := err.(*syntaxError); ok {
		return errors.New(path + ": " + se.msg)
	}
	return err
}

// expected is the error for a well-formed value of the wrong type.
func (r *Reader) expected(what, want string) error {
	found := "the end of the input"
	switch c := r.Peek(); {
	case c == '"':
		found = "a string"
	case c == '{':
		found = "an object"
	case c == '[':
		found = "an array"
	case c == 't' || c == 'f':
		found = "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		found = "a number"
	case c != 0:
		return r.syntax(want)
	}
	return errors.New(what + ": want " + want + ", found " + found)
}

// AppendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func AppendString(b []byte, s []byte) []byte {
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}

// plain reports whether s is printable ASCII without '"' or '\\', which a
// JSON string holds as it is.
func plain(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if specials(x)|x&highs != 0 { // or not ASCII
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// AppendNum writes a number as encoding/json does: integers without a
// fraction, others in the shortest form that reads back the same.
func AppendNum(b []byte, f float64) []byte {
	if v := int64(f); v > -100 && v < 100 && float64(v) == f { // the common case
		if v < 0 {
			b = append(b, '-')
			v = -v
		}
		if v < 10 {
			return append(b, byte('0'+v))
		}
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return appendNumber(b, f)
}

func appendNumber(b []byte, f float64) []byte {
	if f >= -1e15 && f <= 1e15 && f == float64(int64(f)) {
		v := int64(f)
		if v < 0 {
			b = append(b, '-')
			v = -v
		}
		if v < 10 {
			return append(b, byte('0'+v))
		}
		if v < 100 {
			return append(b, byte('0'+v/10), byte('0'+v%10))
		}
		return strconv.AppendInt(b, v, 10)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
