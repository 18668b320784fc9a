package plugins

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file is a small reader for the parts of a WebAssembly binary that the
// sandbox and Inspect need: imports, exports and the function signatures behind
// them. It reads section headers and skips everything else, so it costs
// microseconds where a wazero compile of a Go guest costs about a second, and
// it never runs guest code. Full validation of the code is left to wazero at
// Load.

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
	switch k {
	case kindFunc:
		return "function"
	case kindTable:
		return "table"
	case kindMemory:
		return "memory"
	case kindGlobal:
		return "global"
	case kindTag:
		return "tag"
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

// wasmModule is what parseWasm learned about a binary.
type wasmModule struct {
	imports []wasmImport
	exports []wasmExport
	// types is nil when the type section uses encodings this reader does not
	// know (e.g. GC proposal recursive types); signatures are then unknown.
	types []funcType
	// funcTypes holds the type index of every function in the function
	// index space: imported functions first, then defined ones.
	funcTypes []uint32
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

// limits skips a table or memory limits encoding.
func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x07 {
		return fmt.Errorf("invalid limits flags 0x%02x", flags)
	}
	bits := uint(32)
	if flags&0x04 != 0 { // memory64
		bits = 64
	}
	if _, err := r.uleb(bits); err != nil {
		return err
	}
	if flags&0x01 != 0 {
		if _, err := r.uleb(bits); err != nil {
			return err
		}
	}
	return nil
}

const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secExport   = 7
)

// parseWasm reads the header, type, import, function and export sections of
// a WebAssembly binary. Errors say what is malformed and where.
func parseWasm(b []byte) (*wasmModule, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly binary (missing \\0asm magic)")
	}
	if v := b[4:8]; v[0] != 1 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		return nil, fmt.Errorf("unsupported WebAssembly binary version % x (want 01 00 00 00; components are not supported)", v)
	}
	m := &wasmModule{types: []funcType{}}
	r := &reader{b: b, off: 8}
	var defined []uint32
	for r.off < len(b) {
		start := r.off
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, start, err)
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: size %d: %w", id, start, size, err)
		}
		sr := &reader{b: body}
		switch id {
		case secType:
			err = m.readTypes(sr)
		case secImport:
			err = m.readImports(sr)
		case secFunction:
			defined, err = readFunctions(sr)
		case secExport:
			err = m.readExports(sr)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, start, err)
		}
	}
	for _, imp := range m.imports {
		if imp.kind == kindFunc {
			m.funcTypes = append(m.funcTypes, imp.typeIndex)
		}
	}
	m.funcTypes = append(m.funcTypes, defined...)
	return m, nil
}

func (m *wasmModule) readTypes(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			// A GC-proposal type (rec/sub/struct/array): signatures are
			// reported as unknown rather than guessed.
			m.types = nil
			return nil
		}
		var t funcType
		for _, dst := range []*[]byte{&t.params, &t.results} {
			k, err := r.u32()
			if err != nil {
				return err
			}
			vt, err := r.bytes(uint64(k))
			if err != nil {
				return err
			}
			for _, v := range vt {
				if valueTypeName(v) == "" {
					m.types = nil // typed references etc.: unknown
					return nil
				}
			}
			*dst = vt
		}
		m.types = append(m.types, t)
	}
	return nil
}

func (m *wasmModule) readImports(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		var imp wasmImport
		if imp.module, err = r.name(); err != nil {
			return fmt.Errorf("import %d: module name: %w", i, err)
		}
		if imp.name, err = r.name(); err != nil {
			return fmt.Errorf("import %d: name: %w", i, err)
		}
		k, err := r.byte()
		if err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		imp.kind = externKind(k)
		switch imp.kind {
		case kindFunc:
			imp.typeIndex, err = r.u32()
		case kindTable:
			if _, err = r.byte(); err == nil { // reference type
				err = r.limits()
			}
		case kindMemory:
			err = r.limits()
		case kindGlobal:
			if _, err = r.byte(); err == nil { // value type
				_, err = r.byte() // mutability
			}
		case kindTag:
			if _, err = r.byte(); err == nil { // attribute
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("unknown import kind 0x%02x", k)
		}
		if err != nil {
			return fmt.Errorf("import %d (%s.%s): %w", i, imp.module, imp.name, err)
		}
		m.imports = append(m.imports, imp)
	}
	return nil
}

func readFunctions(r *reader) ([]uint32, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if uint64(n) > uint64(len(r.b)) { // each entry takes at least one byte
		return nil, errTruncated
	}
	out := make([]uint32, 0, n)
	for range n {
		t, err := r.u32()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (m *wasmModule) readExports(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := range n {
		var e wasmExport
		if e.name, err = r.name(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		k, err := r.byte()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		e.kind = externKind(k)
		if e.index, err = r.u32(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		m.exports = append(m.exports, e)
	}
	return nil
}

func valueTypeName(v byte) string {
	switch v {
	case 0x7f:
		return "i32"
	case 0x7e:
		return "i64"
	case 0x7d:
		return "f32"
	case 0x7c:
		return "f64"
	case 0x7b:
		return "v128"
	case 0x70:
		return "funcref"
	case 0x6f:
		return "externref"
	}
	return ""
}

func (t funcType) String() string {
	list := func(vs []byte) string {
		s := "("
		for i, v := range vs {
			if i > 0 {
				s += ", "
			}
			s += valueTypeName(v)
		}
		return s + ")"
	}
	return list(t.params) + " -> " + list(t.results)
}
