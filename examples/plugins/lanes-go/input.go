package main

import "encoding/binary"

// The Extism kernel functions that pdk.Input uses, called here directly:
// the input is read into a buffer kept from call to call (pdk.Input
// allocates a new one each time, ~60 KB of garbage for a 200-card batch),
// four words a turn, since the kernel moves eight bytes a call and every
// turn of a loop costs a Go guest.

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

var inBuf []byte

// readInput returns the call's input in inBuf, valid until the next call.
func readInput() []byte {
	n := int(inputLength())
	if cap(inBuf) < n {
		inBuf = make([]byte, n)
	}
	b := inBuf[:n]
	i := 0
	for ; i+32 <= n; i += 32 { // four words a turn: each turn of a loop costs a Go guest
		x := b[i : i+32]
		binary.LittleEndian.PutUint64(x, inputLoadU64(uint64(i)))
		binary.LittleEndian.PutUint64(x[8:], inputLoadU64(uint64(i+8)))
		binary.LittleEndian.PutUint64(x[16:], inputLoadU64(uint64(i+16)))
		binary.LittleEndian.PutUint64(x[24:], inputLoadU64(uint64(i+24)))
	}
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], inputLoadU64(uint64(i)))
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(uint64(i)))
	}
	return b
}
