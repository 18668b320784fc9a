package plugins

import (
	"errors"
	"fmt"
)

// palace's own pass over a hostile module binary, before wazero's decoder
// allocates from the counts it declares (README.md, "wazero allocates from
// untrusted counts"): every count and length is checked against the bytes
// that remain and against the limits below, far above what a real plugin
// uses. Code is left to wazero, except that each function body's locals
// are checked and its instructions stepped over, counting branches and
// refusing opcodes outside WebAssembly 2.0.
const (
	maxModuleBytes   = 64 << 20
	maxTypes         = 100_000
	maxTypeArity     = 1_000 // parameters or results of one type
	maxImports       = 100_000
	maxFunctions     = 1_000_000 // imported and defined
	maxTables        = 10
	maxTableEntries  = 1 << 20 // a table's size, at start or grown: 8 MiB of references
	maxGlobals       = 100_000
	maxExports       = 100_000
	maxElemSegments  = 100_000
	maxElemEntries   = 10_000_000 // over all element segments
	maxDataSegments  = 100_000
	maxLocals        = 50_000 // declared locals of one function
	maxNameEntries   = 1_000_000
	maxFunctionBytes = 8 << 20 // one function body
	// maxBranches bounds the blocks, loops, ifs and conditional branches of
	// one function, whose compile time grows with their square.
	maxBranches = 5_000
)

// sectionNames are the names the binary format gives section ids.
var sectionNames = [...]string{
	0: "custom", 1: "type", 2: "import", 3: "function", 4: "table", 5: "memory",
	6: "global", 7: "export", 8: "start", 9: "element", 10: "code", 11: "data",
	12: "data count", 13: "tag",
}

// validOrder ranks each non-custom section where the binary format puts it;
// the tag section sits between memory and global, data count between element
// and code.
var validOrder = [...]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

// validator holds what earlier sections declared, which later ones are
// checked against.
type validator struct {
	memoryPages uint32 // the runtime's memory cap, in pages

	types                            uint32
	funcs, tables, memories, globals uint32 // index spaces: imports, then definitions
	definedFuncs, codes              uint32
	elemEntries                      uint64
	dataSegments                     uint32
	dataCount                        *uint32
	start                            *uint32
	// per defined function, for a module with a start function
	// (startRecursion): the functions its body calls, and whether it calls
	// through a table.
	calls          [][]uint32
	callsTable     []bool
	exportNames    map[string]struct{}
	sawNameSection bool

	mod wasmModule // the types, imports, functions and exports read
}

// validateModule checks the binary b section by section; memoryPages is the
// cap a memory may declare. The error names the section, its offset in the
// file and what is wrong. It returns what the sections declared (mod).
func validateModule(b []byte, memoryPages uint32) (*validator, error) {
	if len(b) > maxModuleBytes {
		return nil, fmt.Errorf("%d bytes, over the %d MiB limit for a module", len(b), maxModuleBytes>>20)
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly binary (missing \\0asm magic)")
	}
	if v := b[4:8]; v[0] != 1 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		return nil, fmt.Errorf("unsupported WebAssembly binary version % x (want 01 00 00 00; components are not supported)", v)
	}
	v := &validator{memoryPages: memoryPages}
	r := &reader{b: b, off: 8}
	last := 0
	for r.off < len(b) {
		start := r.off
		id, _ := r.byte()
		if int(id) >= len(sectionNames) {
			return nil, fmt.Errorf("byte %d: unknown section id %d", start, id)
		}
		what := fmt.Sprintf("%s section at byte %d", sectionNames[id], start)
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("%s: size: %w", what, err)
		}
		if rest := len(b) - r.off; uint64(size) > uint64(rest) {
			return nil, fmt.Errorf("%s: declares %d bytes but only %d remain in the file", what, size, rest)
		}
		body, _ := r.bytes(uint64(size))
		if id != 0 {
			if validOrder[id] <= last {
				return nil, fmt.Errorf("%s: out of order or repeated (sections must appear once each, in the order the binary format defines)", what)
			}
			last = validOrder[id]
		}
		sr := &reader{b: body}
		if err := v.section(id, sr); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if sr.off != len(body) {
			return nil, fmt.Errorf("%s: %d bytes left over after its contents", what, len(body)-sr.off)
		}
	}
	if v.definedFuncs != v.codes {
		return nil, fmt.Errorf("the function section declares %d functions but the code section holds %d bodies", v.definedFuncs, v.codes)
	}
	if v.dataCount != nil && *v.dataCount != v.dataSegments {
		return nil, fmt.Errorf("the data count section says %d segments but the data section holds %d", *v.dataCount, v.dataSegments)
	}
	if v.start != nil && *v.start >= v.funcs {
		return nil, fmt.Errorf("the start section names function %d but the module has %d", *v.start, v.funcs)
	}
	if err := v.startRecursion(); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *validator) section(id byte, r *reader) error {
	switch id {
	case 0:
		return v.custom(r)
	case 1:
		return v.typeSection(r)
	case 2:
		return v.importSection(r)
	case 3:
		return v.functionSection(r)
	case 4:
		return v.tableSection(r)
	case 5:
		return v.memorySection(r)
	case 6:
		return v.globalSection(r)
	case 7:
		return v.exportSection(r)
	case 8:
		idx, err := r.u32()
		v.start = &idx
		return err
	case 9:
		return v.elementSection(r)
	case 10:
		return v.codeSection(r)
	case 11:
		return v.dataSection(r)
	case 12:
		n, err := r.u32()
		v.dataCount = &n
		return err
	case 13:
		return errors.New("exception handling (tags) is not supported")
	}
	return fmt.Errorf("unknown section id %d", id)
}

// count reads a vector length and checks it against limit and against the
// bytes left in r, given that each entry takes at least minBytes.
func (r *reader) count(what string, minBytes, limit int) (uint32, error) {
	n, err := r.u32()
	if err != nil {
		return 0, fmt.Errorf("number of %s: %w", what, err)
	}
	if uint64(n) > uint64(limit) {
		return 0, fmt.Errorf("declares %d %s; the limit is %d", n, what, limit)
	}
	if rest := len(r.b) - r.off; uint64(n)*uint64(minBytes) > uint64(rest) {
		return 0, fmt.Errorf("declares %d %s but only %d bytes remain to hold them", n, what, rest)
	}
	return n, nil
}

// vector reads a count (see count) and then each entry, naming the entry and
// its index in an error.
func (r *reader) vector(what, entry string, minBytes, limit int, each func(i uint32) error) (uint32, error) {
	n, err := r.count(what, minBytes, limit)
	if err != nil {
		return 0, err
	}
	for i := range n {
		if err := each(i); err != nil {
			return 0, fmt.Errorf("%s %d: %w", entry, i, err)
		}
	}
	return n, nil
}

func (v *validator) typeSection(r *reader) (err error) {
	v.types, err = r.vector("types", "type", 3, maxTypes, func(uint32) error {
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("form 0x%02x is not a function type (only WebAssembly 2.0 types are supported)", form)
		}
		var t funcType
		for _, list := range []struct {
			what string
			dst  *[]byte
		}{{"parameters", &t.params}, {"results", &t.results}} {
			k, err := r.count(list.what, 1, maxTypeArity)
			if err != nil {
				return err
			}
			start := r.off
			for range k {
				if err := r.valueType(); err != nil {
					return err
				}
			}
			*list.dst = r.b[start:r.off]
		}
		v.mod.types = append(v.mod.types, t)
		return nil
	})
	return err
}

func (r *reader) valueType() error {
	t, err := r.byte()
	if err != nil {
		return err
	}
	if !simpleValType(t) {
		return fmt.Errorf("value type 0x%02x is not a WebAssembly 2.0 type", t)
	}
	return nil
}

func (r *reader) refType() error {
	t, err := r.byte()
	if err != nil {
		return err
	}
	if t != 0x70 && t != 0x6f {
		return fmt.Errorf("reference type 0x%02x is not funcref or externref", t)
	}
	return nil
}

// limitsOf reads a table or memory limits encoding; only the WebAssembly
// 2.0 forms (no shared memory, no 64-bit indexes) are accepted.
func (r *reader) limitsOf() (min uint32, max *uint32, err error) {
	flags, err := r.byte()
	if err != nil {
		return 0, nil, err
	}
	if flags > 1 {
		return 0, nil, fmt.Errorf("limits flags 0x%02x (shared or 64-bit memories and tables are not supported)", flags)
	}
	if min, err = r.u32(); err != nil {
		return 0, nil, err
	}
	if flags == 1 {
		m, err := r.u32()
		if err != nil {
			return 0, nil, err
		}
		if m < min {
			return 0, nil, fmt.Errorf("maximum %d is below minimum %d", m, min)
		}
		max = &m
	}
	return min, max, nil
}

func (v *validator) table(r *reader) error {
	if v.tables++; v.tables > maxTables {
		return fmt.Errorf("more than %d tables", maxTables)
	}
	if err := r.refType(); err != nil {
		return err
	}
	min, _, err := r.limitsOf()
	if err != nil {
		return err
	}
	if min > maxTableEntries {
		return fmt.Errorf("table of %d entries; the limit is %d", min, maxTableEntries)
	}
	return nil // a larger maximum is lowered by capTables
}

func (v *validator) memory(r *reader) error {
	if v.memories++; v.memories > 1 {
		return errors.New("more than one memory (multiple memories are not supported)")
	}
	min, _, err := r.limitsOf()
	if err != nil {
		return err
	}
	if min > v.memoryPages {
		return fmt.Errorf("memory of %d pages (%d MiB) at start; the plugin memory limit is %d MiB", min, uint64(min)*pageSize>>20, uint64(v.memoryPages)*pageSize>>20)
	}
	return nil
}

func (v *validator) importSection(r *reader) error {
	_, err := r.vector("imports", "import", 4, maxImports, func(uint32) error { return v.importEntry(r) })
	return err
}

func (v *validator) importEntry(r *reader) error {
	var imp wasmImport
	var err error
	if imp.module, err = r.name(); err != nil {
		return fmt.Errorf("module name: %w", err)
	}
	if imp.name, err = r.name(); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	k, err := r.byte()
	if err != nil {
		return err
	}
	imp.kind = externKind(k)
	v.mod.imports = append(v.mod.imports, imp)
	switch imp.kind {
	case kindFunc:
		t, err := r.u32()
		if err != nil {
			return err
		}
		if t >= v.types {
			return fmt.Errorf("type %d does not exist (%d types)", t, v.types)
		}
		if v.funcs++; v.funcs > maxFunctions {
			return fmt.Errorf("more than %d functions", maxFunctions)
		}
		v.mod.imports[len(v.mod.imports)-1].typeIndex = t
		v.mod.funcTypes = append(v.mod.funcTypes, t)
		return nil
	case kindTable:
		return v.table(r)
	case kindMemory:
		return v.memory(r)
	case kindGlobal:
		if err := r.valueType(); err != nil {
			return err
		}
		if err := r.mutability(); err != nil {
			return err
		}
		if v.globals++; v.globals > maxGlobals {
			return fmt.Errorf("more than %d globals", maxGlobals)
		}
		return nil
	}
	return fmt.Errorf("import kind 0x%02x is not supported", k)
}

func (r *reader) mutability() error {
	m, err := r.byte()
	if err != nil {
		return err
	}
	if m > 1 {
		return fmt.Errorf("mutability 0x%02x", m)
	}
	return nil
}

func (v *validator) functionSection(r *reader) error {
	n, err := r.vector("functions", "function", 1, maxFunctions-int(v.funcs), func(uint32) error {
		t, err := r.u32()
		if err == nil && t >= v.types {
			err = fmt.Errorf("type %d does not exist (%d types)", t, v.types)
		}
		v.mod.funcTypes = append(v.mod.funcTypes, t)
		return err
	})
	if err != nil {
		return err
	}
	v.definedFuncs = n
	v.funcs += n
	return nil
}

func (v *validator) tableSection(r *reader) error {
	_, err := r.vector("tables", "table", 3, maxTables, func(uint32) error { return v.table(r) })
	return err
}

func (v *validator) memorySection(r *reader) error {
	n, err := r.count("memories", 2, 1)
	if err != nil {
		return err
	}
	for range n {
		if err := v.memory(r); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) globalSection(r *reader) error {
	n, err := r.vector("globals", "global", 4, maxGlobals-int(v.globals), func(uint32) error {
		if err := r.valueType(); err != nil {
			return err
		}
		if err := r.mutability(); err != nil {
			return err
		}
		return r.constExpr()
	})
	v.globals += n
	return err
}

// constExpr reads a constant expression: one constant instruction and end,
// as WebAssembly 2.0 allows them.
func (r *reader) constExpr() error {
	op, err := r.byte()
	if err != nil {
		return err
	}
	switch op {
	case 0x41, 0x42: // i32.const i64.const
		err = skipSLEB(r)
	case 0x43: // f32.const
		_, err = r.bytes(4)
	case 0x44: // f64.const
		_, err = r.bytes(8)
	case 0x23, 0xd2: // global.get ref.func
		_, err = r.u32()
	case 0xd0: // ref.null
		err = r.refType()
	case 0xfd: // v128.const
		var sub uint32
		if sub, err = r.u32(); err == nil && sub != 12 {
			err = fmt.Errorf("0xfd %d is not a constant instruction", sub)
		}
		if err == nil {
			_, err = r.bytes(16)
		}
	default:
		return fmt.Errorf("constant expression: opcode 0x%02x is not a constant instruction", op)
	}
	if err != nil {
		return fmt.Errorf("constant expression: %w", err)
	}
	end, err := r.byte()
	if err != nil {
		return fmt.Errorf("constant expression: %w", err)
	}
	if end != 0x0b {
		return errors.New("constant expression: more than one instruction")
	}
	return nil
}

func (v *validator) exportSection(r *reader) error {
	n, err := r.count("exports", 3, maxExports)
	if err != nil {
		return err
	}
	v.exportNames = make(map[string]struct{}, n)
	for i := range n {
		name, err := r.name()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if _, dup := v.exportNames[name]; dup {
			return fmt.Errorf("export %d: the name %q is exported twice", i, name)
		}
		v.exportNames[name] = struct{}{}
		k, err := r.byte()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		idx, err := r.u32()
		if err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		var space uint32
		switch externKind(k) {
		case kindFunc:
			space = v.funcs
		case kindTable:
			space = v.tables
		case kindMemory:
			space = v.memories
		case kindGlobal:
			space = v.globals
		default:
			return fmt.Errorf("export %d (%q): kind 0x%02x is not supported", i, name, k)
		}
		if idx >= space {
			return fmt.Errorf("export %d (%q): %s %d does not exist", i, name, externKind(k), idx)
		}
		v.mod.exports = append(v.mod.exports, wasmExport{name: name, kind: externKind(k), index: idx})
	}
	return nil
}
