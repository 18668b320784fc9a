package plugins

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// Stopping a guest at its deadline, more cheaply than wazero's
// WithCloseOnContextDone (README.md): at the top of every function
// and loop body a new mutable global counts down, and every yieldEvery-th
// check calls WASI sched_yield, which the host (Osyield) turns into a stop
// once the call's context is done. The call into Go also lets the garbage
// collector preempt a looping guest.
//
// Only modules that already import wasi_snapshot_preview1.sched_yield are
// rewritten (adding an import would renumber every function), and only
// WebAssembly 2.0 instructions are stepped over. Any other module is
// compiled with WithCloseOnContextDone instead.

// yieldEvery is how many checks pass between two calls to the host.
const yieldEvery = 1000

// interruptCheck is the code inserted at each check point:
//
//	global.get $n; i32.const 1; i32.sub; global.set $n
//	global.get $n; i32.eqz
//	if
//	  i32.const yieldEvery; global.set $n
//	  call $sched_yield; drop
//	end
func interruptCheck(counter, yield uint32) []byte {
	n := uleb(uint64(counter))
	return slices.Concat([]byte{0x23}, n, []byte{0x41, 0x01, 0x6b, 0x24}, n, []byte{0x23}, n,
		[]byte{0x45, 0x04, 0x40, 0x41}, sleb(yieldEvery), []byte{0x24}, n,
		[]byte{0x10}, uleb(uint64(yield)), []byte{0x1a, 0x0b})
}

type rawSection struct {
	id   byte
	body []byte
}

// instrument returns wasm with the counter global and the checks added, or
// an error saying why the module cannot be rewritten.
func instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:8], []byte("\x00asm\x01\x00\x00\x00")) {
		return nil, errors.New("not a WebAssembly 1 binary")
	}
	r := &reader{b: wasm, off: 8}
	var secs []rawSection
	for r.off < len(r.b) {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		secs = append(secs, rawSection{id, body})
	}
	globals, yield, err := scanImports(secs)
	if err != nil {
		return nil, err
	}
	newGlobal := append([]byte{0x7f, 0x01, 0x41}, sleb(yieldEvery)...) // mut i32 = yieldEvery
	newGlobal = append(newGlobal, 0x0b)
	check := interruptCheck(globals, yield)

	var out [][]byte
	addedGlobal := false
	for _, s := range secs {
		switch s.id {
		case 6:
			body, err := appendVecEntry(s.body, newGlobal)
			if err != nil {
				return nil, fmt.Errorf("global section: %w", err)
			}
			s.body, addedGlobal = body, true
		case 10:
			body, err := instrumentCode(s.body, check)
			if err != nil {
				return nil, fmt.Errorf("code section: %w", err)
			}
			s.body = body
		}
		if s.id != 0 && !addedGlobal && int(s.id) < len(validOrder) && validOrder[s.id] > validOrder[6] {
			// A module without globals gets a global section where the
			// binary format puts it: before the first section after it.
			out = append(out, section(6, append(uleb(1), newGlobal...)))
			addedGlobal = true
		}
		out = append(out, section(s.id, s.body))
	}
	if !addedGlobal {
		out = append(out, section(6, append(uleb(1), newGlobal...)))
	}
	return bytes.Join(append([][]byte{wasm[:8]}, out...), nil), nil
}

// scanImports returns the size of the global index space (imported, then
// defined globals; the added global takes the next index) and the function
// index of the imported wasi_snapshot_preview1.sched_yield.
func scanImports(secs []rawSection) (globals, yield uint32, err error) {
	v := &validator{memoryPages: ^uint32(0)} // the module passed validate with the runtime's cap
	m := &v.mod
	found := false
	for _, s := range secs {
		switch s.id {
		case 1:
			if err := v.typeSection(&reader{b: s.body}); err != nil {
				return 0, 0, err
			}
		case 2:
			if err := v.importSection(&reader{b: s.body}); err != nil {
				return 0, 0, err
			}
			var funcs uint32
			for _, imp := range m.imports {
				switch imp.kind {
				case kindGlobal:
					globals++
				case kindFunc:
					if imp.module == wasiNamespace && imp.name == "sched_yield" {
						// The check calls it as () -> i32; any other
						// signature is left to wazero's link error.
						if int(imp.typeIndex) >= len(m.types) || !returnsI32Only(m.types[imp.typeIndex]) {
							return 0, 0, errors.New("the module imports sched_yield with another signature")
						}
						yield, found = funcs, true
					}
					funcs++
				}
			}
		case 6:
			c, err := (&reader{b: s.body}).u32()
			if err != nil {
				return 0, 0, err
			}
			globals += c
		}
	}
	if !found {
		return 0, 0, errors.New("the module does not import wasi_snapshot_preview1.sched_yield")
	}
	return globals, yield, nil
}

func returnsI32Only(t funcType) bool {
	return len(t.params) == 0 && len(t.results) == 1 && t.results[0] == 0x7f
}

// appendVecEntry adds one encoded entry to a section that is a vector.
func appendVecEntry(body, entry []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := uleb(uint64(n) + 1)
	out = append(out, body[r.off:]...)
	return append(out, entry...), nil
}

// instrumentCode rewrites every function body of a code section.
func instrumentCode(body, check []byte) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(body)/8)
	out = append(out, uleb(uint64(n))...)
	var fn []byte
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		code, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		fn, err = instrumentFunc(fn[:0], code, check)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = append(out, uleb(uint64(len(fn)))...)
		out = append(out, fn...)
	}
	if r.off != len(body) {
		return nil, errors.New("trailing bytes")
	}
	return out, nil
}

// instrumentFunc copies one function body to out with a check after its
// locals and after the block type of each loop.
func instrumentFunc(out, code, check []byte) ([]byte, error) {
	r := &reader{b: code}
	groups, err := r.u32()
	if err != nil {
		return nil, err
	}
	for range groups {
		if _, err := r.u32(); err != nil {
			return nil, err
		}
		t, err := r.byte()
		if err != nil {
			return nil, err
		}
		if !simpleValType(t) {
			return nil, fmt.Errorf("local of type 0x%02x", t)
		}
	}
	out = append(out, code[:r.off]...)
	out = append(out, check...)
	for r.off < len(code) {
		start := r.off
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		if err := skipImmediates(r, op); err != nil {
			return nil, fmt.Errorf("instruction 0x%02x at byte %d: %w", op, start, err)
		}
		out = append(out, code[start:r.off]...)
		if op == 0x03 { // loop: the check runs on entry and on every branch back
			out = append(out, check...)
		}
	}
	return out, nil
}

func simpleValType(t byte) bool {
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f: // i32 i64 f32 f64 v128 funcref externref
		return true
	}
	return false
}

// skipImmediates steps over the immediates of op, or fails for an opcode
// outside WebAssembly 2.0.
func skipImmediates(r *reader, op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b || op == 0xd1:
		return nil // unreachable nop else end return drop select ref.is_null
	case op >= 0x45 && op <= 0xc4:
		return nil // numeric instructions and sign extension
	case op == 0x02 || op == 0x03 || op == 0x04:
		return skipBlockType(r)
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0xd2 || (op >= 0x20 && op <= 0x26):
		_, err := r.u32() // br br_if call ref.func local.* global.* table.get/set
		return err
	case op == 0x0e: // br_table
		n, err := r.u32()
		if err != nil {
			return err
		}
		for range uint64(n) + 1 {
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		return nil
	case op == 0x11: // call_indirect
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	case op == 0x1c: // select with types
		n, err := r.u32()
		if err != nil {
			return err
		}
		_, err = r.bytes(uint64(n))
		return err
	case op >= 0x28 && op <= 0x3e:
		return skipMemarg(r)
	case op == 0x3f || op == 0x40: // memory.size memory.grow
		_, err := r.byte()
		return err
	case op == 0x41 || op == 0x42:
		return skipSLEB(r)
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op == 0xd0: // ref.null
		_, err := r.byte()
		return err
	case op == 0xfc:
		return skipPrefixFC(r)
	case op == 0xfd:
		return skipPrefixFD(r)
	}
	return errors.New("not a WebAssembly 2.0 instruction")
}

func skipBlockType(r *reader) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c == 0x40 || simpleValType(c) {
		return nil
	}
	r.off--
	return skipSLEB(r) // a type index, as a signed 33-bit number
}

func skipMemarg(r *reader) error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		return errors.New("multi-memory")
	}
	_, err = r.u32()
	return err
}

func skipSLEB(r *reader) error {
	for range 10 {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return errors.New("integer representation too long")
}

func skipPrefixFC(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	var args int // u32 immediates
	switch {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init dataidx memidx
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case sub == 9 || sub == 13 || (sub >= 15 && sub <= 17): // data.drop elem.drop table.grow/size/fill
		args = 1
	case sub == 10: // memory.copy
		_, err := r.bytes(2)
		return err
	case sub == 11: // memory.fill
		_, err := r.byte()
		return err
	case sub == 12 || sub == 14: // table.init table.copy
		args = 2
	default:
		return fmt.Errorf("0xfc %d is not a WebAssembly 2.0 instruction", sub)
	}
	for range args {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

func skipPrefixFD(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		return skipMemarg(r)
	case sub == 12 || sub == 13: // v128.const i8x16.shuffle
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract and replace lane
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91: // load and store lane
		if err := skipMemarg(r); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case sub <= 255:
		return nil // every other SIMD instruction has no immediate
	}
	return fmt.Errorf("0xfd %d is not a WebAssembly 2.0 instruction", sub)
}

// section and uleb encode, the inverse of reader's section header and u32.
func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
