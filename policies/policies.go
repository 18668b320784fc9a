// Package policies owns palace's decision points and the engines behind them.
//
// A decision point (gate, scope, lanes, mailbox, research) is a Rego package
// `palace.<point>` with a `decision` rule (mailbox: a `deny` set), or a
// `.wasm` module's export of that name. Policies load from the embedded
// defaults, $PALACE_HOME/policies/ and <repo>/.palace/policies/, in that
// order; a later source's package or module replaces an earlier one's point
// (the defaults stay importable as `palace.default.<point>`), and one source
// may not serve a point both ways. Every set has a content hash; a Watcher
// keeps a long-running process's set current.
//
// Each point is served by OPA ("rego"), a module ("wasm") or, for an
// unmodified embedded default, a Go implementation proven identical by
// differential tests ("go"). Gate, mailbox and research fail closed; scope
// and lanes fall back to the embedded default and say so. Outputs are
// shape-checked strictly. README.md documents every input and output.
//
// This is the only package that imports OPA; it runs modules through the
// plugins package and knows nothing of the store or the CLI.
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
