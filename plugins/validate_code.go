package plugins

import (
	"errors"
	"fmt"
)

// validate's pass over what a module runs: element segments (the
// functions its tables hold), function bodies, and the start function's
// calls.

func (v *validator) elementSection(r *reader) error {
	_, err := r.vector("element segments", "segment", 3, maxElemSegments, func(uint32) error { return v.elementSegment(r) })
	return err
}

// elementSegment reads one of the eight segment encodings of WebAssembly
// 2.0 (flags 0-7): whether it has a table index and an offset, and whether
// its entries are function indexes or constant expressions.
func (v *validator) elementSegment(r *reader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("flags %d (want 0 to 7)", flags)
	}
	if flags == 2 || flags == 6 {
		if _, err := r.u32(); err != nil { // table index
			return err
		}
	}
	if flags&1 == 0 { // active: an offset
		if err := r.constExpr(); err != nil {
			return fmt.Errorf("offset: %w", err)
		}
	}
	exprs := flags&4 != 0
	if flags&3 != 0 { // an element kind or reference type
		if exprs {
			err = r.refType()
		} else {
			var kind byte
			if kind, err = r.byte(); err == nil && kind != 0 {
				err = fmt.Errorf("element kind 0x%02x (want 0x00)", kind)
			}
		}
		if err != nil {
			return err
		}
	}
	minBytes := 1
	if exprs {
		minBytes = 3
	}
	k, err := r.count("entries", minBytes, maxElemEntries)
	if err != nil {
		return err
	}
	if v.elemEntries += uint64(k); v.elemEntries > maxElemEntries {
		return fmt.Errorf("more than %d element entries in all", maxElemEntries)
	}
	for j := range k {
		if exprs {
			err = r.constExpr()
		} else {
			var f uint32
			if f, err = r.u32(); err == nil && f >= v.funcs {
				err = fmt.Errorf("function %d does not exist (%d functions)", f, v.funcs)
			}
		}
		if err != nil {
			return fmt.Errorf("entry %d: %w", j, err)
		}
	}
	return nil
}

func (v *validator) codeSection(r *reader) error {
	n, err := r.count("function bodies", 3, maxFunctions)
	if err != nil {
		return err
	}
	if n != v.definedFuncs {
		return fmt.Errorf("holds %d function bodies but the function section declares %d functions", n, v.definedFuncs)
	}
	for i := range n {
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("function body %d: size: %w", i, err)
		}
		if size > maxFunctionBytes {
			return fmt.Errorf("function body %d: %d bytes; the limit is %d", i, size, maxFunctionBytes)
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return fmt.Errorf("function body %d: declares %d bytes but only %d remain", i, size, len(r.b)-r.off)
		}
		calls, table, err := functionBody(body, v.start != nil)
		if err != nil {
			return fmt.Errorf("function body %d: %w", i, err)
		}
		if v.start != nil {
			v.calls = append(v.calls, calls)
			v.callsTable = append(v.callsTable, table)
		}
	}
	v.codes = n
	return nil
}

// functionBody checks a body's local declarations and counts its branches,
// stepping over every instruction. With withCalls it also returns the
// functions the body calls and whether it calls through a table.
func functionBody(body []byte, withCalls bool) (calls []uint32, table bool, err error) {
	r := &reader{b: body}
	groups, err := r.count("local declarations", 2, maxLocals)
	if err != nil {
		return nil, false, err
	}
	var total uint64
	for range groups {
		n, err := r.u32()
		if err != nil {
			return nil, false, err
		}
		if total += uint64(n); total > maxLocals {
			return nil, false, fmt.Errorf("declares more than %d locals", maxLocals)
		}
		if err := r.valueType(); err != nil {
			return nil, false, fmt.Errorf("local: %w", err)
		}
	}
	if r.off == len(body) || body[len(body)-1] != 0x0b {
		return nil, false, errors.New("does not end with an end instruction")
	}
	branches := 0
	for r.off < len(body) {
		start := r.off
		op := body[r.off]
		r.off++
		switch op {
		case 0x02, 0x03, 0x04, 0x0d, 0x0e: // block loop if br_if br_table
			if branches++; branches > maxBranches {
				return nil, false, fmt.Errorf("more than %d blocks, loops, ifs and conditional branches in one function (compiling takes time that grows with their square)", maxBranches)
			}
		case 0x10: // call
			if withCalls {
				at := r.off
				if callee, err := r.u32(); err == nil {
					calls = append(calls, callee)
				}
				r.off = at
			}
		case 0x11: // call_indirect
			table = true
		}
		if err := skipImmediates(r, op); err != nil {
			return nil, false, fmt.Errorf("instruction 0x%02x at byte %d: %w", op, start, err)
		}
	}
	return calls, table, nil
}

// startRecursion refuses a start function that can recurse or call through
// a table: the deadline stops a guest only at loops and function entries
// with checks, so such a start function could run until the call stack
// ceiling traps it.
func (v *validator) startRecursion() error {
	if v.start == nil {
		return nil
	}
	imported := v.funcs - v.definedFuncs
	if *v.start < imported {
		return nil // an imported host function: palace's own code
	}
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(v.calls))
	type frame struct {
		fn   uint32
		next int
	}
	root := *v.start - imported
	stack := []frame{{fn: root}}
	state[root] = open
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == 0 && v.callsTable[top.fn] {
			return fmt.Errorf("the start function (function %d) reaches function %d, which calls through a table; palace cannot bound a start function's recursion, so run that code from an exported function instead", *v.start, top.fn+imported)
		}
		if top.next == len(v.calls[top.fn]) {
			state[top.fn] = done
			stack = stack[:len(stack)-1]
			continue
		}
		callee := v.calls[top.fn][top.next]
		top.next++
		if callee < imported || callee-imported >= uint32(len(v.calls)) {
			continue // a host function, or an index the compiler will refuse
		}
		c := callee - imported
		switch state[c] {
		case open:
			return fmt.Errorf("the start function (function %d) can recurse: function %d calls function %d again; palace cannot bound a start function's recursion, so run that code from an exported function instead", *v.start, top.fn+imported, callee)
		case unseen:
			state[c] = open
			stack = append(stack, frame{fn: c})
		}
	}
	return nil
}
