// Command hostile is a plugin that misbehaves on request, for the sandbox
// tests: the input {"do": "<behaviour>", "n": <number>} selects what the
// gate and lanes exports do. Every behaviour but echo, file, env, exit and
// config must end in a call error, and the module must keep serving
// afterwards.
package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/extism/go-pdk"
)

type request struct {
	Do string `json:"do"`
	N  int    `json:"n"`
}

// hoard keeps allocations reachable so the garbage collector cannot free them.
var hoard [][]byte

//go:wasmexport gate
func gate() int32 { return run() }

//go:wasmexport lanes
func lanes() int32 { return run() }

func run() int32 {
	input := pdk.Input()
	var req request
	if err := json.Unmarshal(input, &req); err != nil {
		pdk.SetError(err)
		return 1
	}
	switch req.Do {
	case "echo":
		pdk.Output(input)
	case "loop":
		for {
		}
	case "membomb":
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	case "file":
		// Every way out through WASI: each must fail, none may return data.
		res := map[string]string{}
		for _, p := range []string{"/etc/passwd", "/", ".", "../go.mod", "/proc/self/environ"} {
			if b, err := os.ReadFile(p); err != nil {
				res["read "+p] = "error: " + err.Error()
			} else {
				res["read "+p] = "DATA: " + string(b[:min(len(b), 40)])
			}
		}
		if entries, err := os.ReadDir("/"); err != nil {
			res["readdir /"] = "error: " + err.Error()
		} else {
			res["readdir /"] = "DATA: " + strings.Repeat("x", len(entries))
		}
		if err := os.WriteFile("/tmp/palace-plugin-escape", []byte("x"), 0o644); err != nil {
			res["write /tmp/palace-plugin-escape"] = "error: " + err.Error()
		} else {
			res["write /tmp/palace-plugin-escape"] = "DATA: written"
		}
		out, _ := json.Marshal(res)
		pdk.Output(out)
	case "env":
		wd, _ := os.Getwd()
		out, _ := json.Marshal(map[string]any{"environ": os.Environ(), "args": os.Args, "wd": wd})
		pdk.Output(out)
	case "http":
		resp := pdk.NewHTTPRequest(pdk.MethodGet, "https://example.com/").Send()
		pdk.OutputString(`{"status":` + string(rune('0'+resp.Status()/100)) + `}`)
	case "big":
		pdk.Output([]byte(`"` + strings.Repeat("x", req.N) + `"`))
	case "panic":
		panic("boom")
	case "seterror":
		pdk.SetErrorString("policy says no")
		return 1
	case "status":
		return int32(req.N)
	case "silent":
	case "var":
		pdk.SetVar("k", []byte("v"))
		pdk.OutputString(`{}`)
	case "exit":
		// Answer, then end the instance the way a Go main that returns does.
		pdk.Output(input)
		os.Exit(0)
	case "config":
		_, ok := pdk.GetConfig("k")
		out, _ := json.Marshal(map[string]bool{"config": ok})
		pdk.Output(out)
	default:
		pdk.SetErrorString("unknown behaviour " + req.Do)
		return 1
	}
	return 0
}

func main() {}
