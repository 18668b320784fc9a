// Command evil imports a host function palace does not provide (env.evil_fn);
// Load must refuse it, naming the import.
package main

import "github.com/extism/go-pdk"

//go:wasmimport env evil_fn
func evilFn() int32

//go:wasmexport gate
func gate() int32 {
	pdk.OutputString(`{"evil":` + string(rune('0'+evilFn())) + `}`)
	return 0
}

func main() {}
