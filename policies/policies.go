// Package policies owns palace's decision points and the engines behind them.
//
// A decision point (gate, scope, lanes, mailbox, research) is a Rego package
// `palace.<point>` with a `decision` rule (mailbox: a conftest-style `deny`
// set). Sets of policies load from three sources in order — the embedded
// defaults, $PALACE_HOME/policies/ and <repo>/.palace/policies/ — and a later
// source's package replaces an earlier one's whole; the embedded defaults stay
// importable as `palace.default.<point>`. Every loaded set has a content hash
// that lifecycle events record. A Watcher keeps a long-running process's set
// current as the files change. A `.wasm` file in a source is a WebAssembly
// module (an Extism plugin) serving the points it exports, with the same
// precedence: a later source's module or package replaces an earlier one's
// point, and one source may not serve a point both ways.
//
// Each point is served through a Decider by OPA ("rego") or a module
// ("wasm"), or, when the point's package is the unmodified embedded
// default, by a Go implementation proven identical by differential tests
// ("go"). Gate and mailbox fail closed; scope and lanes fall back to the
// embedded default and say so. Outputs are shape-checked strictly, whatever
// the engine. README.md documents every input and output.
//
// This package is the only one that imports OPA; it runs modules through
// the plugins package and never touches wazero or Extism itself. It knows nothing of the
// store, of cards' lifecycle or of the CLI; callers pass typed inputs in and
// get typed outputs back.
package policies

import (
	"embed"
	"fmt"
)

// Point names a decision point.
type Point string

// The decision points.
const (
	Gate    Point = "gate"
	Scope   Point = "scope"
	Lanes   Point = "lanes"
	Mailbox Point = "mailbox"
	// Research decides whether a research report may be ingested.
	Research Point = "research"
)

// Points lists every decision point in a fixed order.
var Points = []Point{Gate, Scope, Lanes, Mailbox, Research}

// Package is the Rego package that serves p, e.g. "palace.gate".
func (p Point) Package() string { return "palace." + string(p) }

// Query is the Rego query whose value is p's output.
func (p Point) Query() string {
	if p == Mailbox {
		return "data.palace.mailbox.deny"
	}
	return "data." + p.Package() + ".decision"
}

// Valid reports whether p is one of Points.
func (p Point) Valid() bool {
	for _, q := range Points {
		if p == q {
			return true
		}
	}
	return false
}

// ParsePoint accepts "gate" or "palace.gate".
func ParsePoint(s string) (Point, error) {
	p := Point(s)
	if len(s) > len("palace.") && s[:len("palace.")] == "palace." {
		p = Point(s[len("palace."):])
	}
	if !p.Valid() {
		return "", fmt.Errorf("unknown decision point %q: use one of gate, scope, lanes, mailbox, research", s)
	}
	return p, nil
}

//go:embed default/*.rego
var defaultFS embed.FS

// scaffoldFS holds the team policies `palace policy new` starts from.
//
//go:embed scaffold/*.rego
var scaffoldFS embed.FS
