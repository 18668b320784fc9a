package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// ABI names used in Report.ABI.
const (
	ABIExtism  = "extism"     // imports the Extism kernel or exports Extism-style decision points
	ABIPlain   = "plain wasm" // a WebAssembly module with neither
	ABIUnknown = "unknown"    // not a readable WebAssembly binary
)

// Report describes a module binary without running it. It backs
// `palace plugin inspect FILE.wasm`; its JSON form is stable (snake_case).
type Report struct {
	Name   string `json:"name"`
	Size   int    `json:"size"`   // bytes
	SHA256 string `json:"sha256"` // lowercase hex, as Module.Hash
	ABI    string `json:"abi"`    // ABIExtism, ABIPlain or ABIUnknown
	// DecisionPoints are the points the module would serve, in
	// DecisionPoints order.
	DecisionPoints []string `json:"decision_points"`
	Exports        []string `json:"exports"` // exported function names, sorted
	Imports        []string `json:"imports"` // "module.name", sorted, unique
	WouldLoad      bool     `json:"would_load"`
	// Verdict is "would load" or "would not load: " and the first problem,
	// worded as Load's error would be.
	Verdict  string   `json:"verdict"`
	Problems []string `json:"problems"` // every reason it would not load
}

// Inspect says what Load would make of the binary wasm (named name) without
// compiling or running it. It never fails; an unreadable binary gets
// ABIUnknown. It applies every check Load makes before compiling (memory
// against the default cap), so only invalid code or a start function
// overrunning the deadline can pass here and fail Load.
func Inspect(name string, wasm []byte) Report {
	sum := sha256.Sum256(wasm)
	r := Report{
		Name:           name,
		Size:           len(wasm),
		SHA256:         hex.EncodeToString(sum[:]),
		ABI:            ABIUnknown,
		DecisionPoints: []string{},
		Exports:        []string{},
		Imports:        []string{},
		Problems:       []string{},
	}
	v, err := validateModule(wasm, uint32(DefaultMemoryLimit/pageSize))
	if err != nil {
		r.Problems = append(r.Problems, "not a valid WebAssembly module: "+err.Error())
		r.Verdict = "would not load: " + r.Problems[0]
		return r
	}
	m := &v.mod
	r.ABI = ABIPlain
	for _, imp := range m.imports {
		r.Imports = append(r.Imports, imp.module+"."+imp.name)
		if imp.module == kernelNamespace {
			r.ABI = ABIExtism
		}
	}
	for _, e := range m.exports {
		if e.kind != kindFunc {
			continue
		}
		r.Exports = append(r.Exports, e.name)
		if sig, ok := m.signature(e.index); ok && slices.Contains(decisionPoints[:], e.name) && extismSignature(sig) {
			r.ABI = ABIExtism
		}
	}
	slices.Sort(r.Imports)
	r.Imports = slices.Compact(r.Imports) // Go guests import fd_write twice
	slices.Sort(r.Exports)
	points, problems := pointsAndProblems(m)
	if points != nil {
		r.DecisionPoints = points
	}
	if problems != nil {
		r.Problems = problems
	}
	r.WouldLoad = len(problems) == 0
	r.Verdict = "would load"
	if !r.WouldLoad {
		r.Verdict = "would not load: " + problems[0]
	}
	return r
}

// String renders the report for a terminal, one field per line, lists
// continued on indented lines.
func (r Report) String() string {
	var b strings.Builder
	field := func(label string, values ...string) {
		if len(values) == 0 {
			values = []string{"(none)"}
		}
		for i, v := range values {
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(&b, "%-9s%s\n", label, v)
		}
	}
	field("plugin", r.Name)
	field("size", fmt.Sprintf("%d bytes", r.Size))
	field("sha256", r.SHA256)
	field("abi", r.ABI)
	field("points", r.DecisionPoints...)
	field("exports", r.Exports...)
	field("imports", r.Imports...)
	if r.WouldLoad {
		field("verdict", "would load")
	} else {
		field("verdict", "would not load")
		field("problem", r.Problems...)
	}
	return b.String()
}
