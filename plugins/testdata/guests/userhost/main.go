// Command userhost imports an Extism host function (extism:host/user), the
// namespace where Extism hosts put their own functions; palace provides none,
// so Load must refuse it.
package main

import "github.com/extism/go-pdk"

//go:wasmimport extism:host/user fetch
func fetch(uint64) uint64

//go:wasmexport scope
func scope() int32 {
	mem := pdk.FindMemory(fetch(0))
	pdk.Output(mem.ReadBytes())
	return 0
}

func main() {}
