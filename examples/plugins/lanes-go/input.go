package main

import "encoding/binary"

// The Extism kernel functions that pdk.Input uses, imported here so that
// input reads into a buffer kept from call to call: pdk.Input allocates a
// new one each time, and a 200-card batch is ~50 KB of garbage per call.

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
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], inputLoadU64(uint64(i)))
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(uint64(i)))
	}
	return b
}
