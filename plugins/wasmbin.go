package plugins

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// externKind is the kind byte of an import or export descriptor.
type externKind byte

const (
	kindFunc   externKind = 0
	kindTable  externKind = 1
	kindMemory externKind = 2
	kindGlobal externKind = 3
	kindTag    externKind = 4
)

func (k externKind) String() string {
	if k <= kindTag {
		return [...]string{"function", "table", "memory", "global", "tag"}[k]
	}
	return fmt.Sprintf("kind 0x%02x", byte(k))
}

type wasmImport struct {
	module, name string
	kind         externKind
	typeIndex    uint32 // functions only
}

type wasmExport struct {
	name  string
	kind  externKind
	index uint32
}

type funcType struct {
	params, results []byte
}

// wasmModule is what validateModule learned about a binary.
type wasmModule struct {
	imports   []wasmImport
	exports   []wasmExport
	types     []funcType // nil: signatures unknown
	funcTypes []uint32   // the type of each function, imported ones first
}

// signature returns the type of the function at index, or false when the
// reader could not determine it.
func (m *wasmModule) signature(index uint32) (funcType, bool) {
	if m.types == nil || int(index) >= len(m.funcTypes) {
		return funcType{}, false
	}
	t := m.funcTypes[index]
	if int(t) >= len(m.types) {
		return funcType{}, false
	}
	return m.types[t], true
}

var errTruncated = errors.New("unexpected end of data")

type reader struct {
	b   []byte
	off int
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// u32 reads an unsigned LEB128 value of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	if r.off < len(r.b) && r.b[r.off] < 0x80 { // one byte: most counts and indexes
		r.off++
		return uint32(r.b[r.off-1]), nil
	}
	v, err := r.uleb(32)
	return uint32(v), err
}

func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= bits { // 5 bytes for 32 bits, 10 for 64
			return 0, errors.New("integer representation too long")
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if bits < 64 && v>>bits != 0 {
				return 0, errors.New("integer too large")
			}
			return v, nil
		}
	}
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(uint64(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", errors.New("name is not valid UTF-8")
	}
	return string(b), nil
}

var valueTypeNames = map[byte]string{0x7f: "i32", 0x7e: "i64", 0x7d: "f32", 0x7c: "f64", 0x7b: "v128", 0x70: "funcref", 0x6f: "externref"}

func (t funcType) String() string {
	list := func(vs []byte) string {
		names := make([]string, len(vs))
		for i, v := range vs {
			names[i] = valueTypeNames[v]
		}
		return "(" + strings.Join(names, ", ") + ")"
	}
	return list(t.params) + " -> " + list(t.results)
}
