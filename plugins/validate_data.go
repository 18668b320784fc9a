package plugins

import (
	"errors"
	"fmt"
)

// validate's pass over a module's data and custom sections, and the table
// cap applied to a module that passed it.

func (v *validator) dataSection(r *reader) error {
	n, err := r.vector("data segments", "segment", 2, maxDataSegments, func(uint32) error {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		switch flags {
		case 0:
			err = r.constExpr()
		case 1:
		case 2:
			if _, err = r.u32(); err == nil { // memory index
				err = r.constExpr()
			}
		default:
			err = fmt.Errorf("flags %d (want 0, 1 or 2)", flags)
		}
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("size: %w", err)
		}
		if _, err := r.bytes(uint64(size)); err != nil {
			return fmt.Errorf("declares %d bytes but only %d remain", size, len(r.b)-r.off)
		}
		return nil
	})
	v.dataSegments = n
	return err
}

// custom checks a custom section's name and, for the "name" section, which
// wazero always decodes, its contents; any other custom section is skipped.
func (v *validator) custom(r *reader) error {
	name, err := r.name()
	if err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if name != "name" {
		r.off = len(r.b)
		return nil
	}
	if v.sawNameSection {
		return errors.New("a second name section")
	}
	v.sawNameSection = true
	for r.off < len(r.b) {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("name subsection %d: %w", id, err)
		}
		body, err := r.bytes(uint64(size))
		if err != nil {
			return fmt.Errorf("name subsection %d: declares %d bytes but only %d remain", id, size, len(r.b)-r.off)
		}
		sr := &reader{b: body}
		switch id {
		case 0: // module name
			_, err = sr.name()
		case 1: // function names
			err = sr.nameMap()
		case 2: // local names: a map of maps
			var n uint32
			if n, err = sr.count("functions with local names", 2, maxNameEntries); err == nil {
				for range n {
					if _, err = sr.u32(); err != nil {
						break
					}
					if err = sr.nameMap(); err != nil {
						break
					}
				}
			}
		default:
			sr.off = len(body)
		}
		if err == nil && sr.off != len(body) {
			err = fmt.Errorf("%d bytes left over", len(body)-sr.off)
		}
		if err != nil {
			return fmt.Errorf("name subsection %d: %w", id, err)
		}
	}
	return nil
}

func (r *reader) nameMap() error {
	n, err := r.count("names", 2, maxNameEntries)
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.u32(); err != nil {
			return err
		}
		if _, err := r.name(); err != nil {
			return err
		}
	}
	return nil
}

// capTables returns wasm, which passed validate, with every table's maximum
// lowered to maxTableEntries (added where none is declared): a table.grow
// past it returns -1.
func capTables(wasm []byte) []byte {
	r := &reader{b: wasm, off: 8}
	for r.off < len(wasm) {
		start := r.off
		id, _ := r.byte()
		size, _ := r.u32()
		bodyStart := r.off
		body, _ := r.bytes(uint64(size))
		if id != 4 {
			continue
		}
		sr := &reader{b: body}
		n, _ := sr.u32()
		out := uleb(uint64(n))
		for range n {
			t, _ := sr.byte()
			flags, _ := sr.byte()
			lo, _ := sr.u32()
			hi := uint32(maxTableEntries)
			if flags == 1 {
				m, _ := sr.u32()
				hi = min(m, hi)
			}
			out = append(out, t, 1)
			out = append(out, uleb(uint64(lo))...)
			out = append(out, uleb(uint64(hi))...)
		}
		capped := append([]byte{}, wasm[:start]...)
		capped = append(capped, section(4, out)...)
		return append(capped, wasm[bodyStart+len(body):]...)
	}
	return wasm
}
