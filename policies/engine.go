package policies

import (
	"fmt"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// The engines that can serve a decision point (Served.Engine, Decision.Engine).
const (
	// EngineRego evaluates the point's Rego package with OPA.
	EngineRego = "rego"
	// EngineGo runs palace's Go implementation of an embedded default, only
	// while the point's package is byte-for-byte the embedded one.
	EngineGo = "go"
	// EngineWasm runs a WebAssembly module from a policy folder.
	EngineWasm = "wasm"
)

// native lists the points that have a Go implementation of their embedded
// default.
var native = map[Point]bool{Gate: true, Scope: true, Lanes: true, Mailbox: true}

// embedded is the per-point hash of the embedded defaults, computed once.
var embedded = sync.OnceValue(func() map[Point]string {
	files := embeddedFiles()
	out := map[Point]string{}
	for _, p := range Points {
		var pf []File
		for _, f := range files {
			if !f.Test && f.Package == p.Package() {
				pf = append(pf, f)
			}
		}
		if len(pf) > 0 {
			out[p] = servedBy(p, pf).Hash
		}
	}
	return out
})

// engineFor picks the engine for a point served by Rego files.
func engineFor(sv Served) string {
	if native[sv.Point] && sv.Hash == embedded()[sv.Point] {
		return EngineGo
	}
	return EngineRego
}

// rawTerm keeps OPA's result as an ast.Value.
func rawTerm(t *ast.Term, _ *rego.EvalContext) (any, error) { return t.Value, nil }

// fallback turns a failed evaluation into the embedded default's decision,
// with Error and Fallback saying what failed.
func (s *Set) fallback(p Point, err error) Decision {
	d := Decision{Point: p, Source: SourceEmbedded, Hash: embedded()[p], SetHash: s.hash, Engine: EngineGo}
	d.Error = err.Error()
	d.Fallback = fmt.Sprintf("policy %s failed, the embedded default decided: %v", s.who(p), err)
	return d
}

// who names the policy serving p for messages: "palace.gate (path/gate.rego)".
func (s *Set) who(p Point) string {
	if sv, ok := s.served[p]; ok && len(sv.Files) > 0 {
		return fmt.Sprintf("%s (%s)", p.Package(), sv.Files[0])
	}
	return p.Package()
}

// Intern the enum values palace sends and the member names the decoders
// look up (OPA allows this at init time only).
func init() {
	ast.InternStringTerm(
		"promote", "publish", "promoted", "canonical", "candidate", "demoted", "retired", "repo", "global",
		"worktree", "human", "agent", "dao_tian", "dao_ren", "shu", "qi", "project", "skill", "local", "card_file",
		"general", "standard", "protected", "foundational", "auto", "inline_full", "inline_compact",
		"ref_preferred", "allow", "reasons", "missing", "applies", "scope_fit", "operation_fit", "why",
		"salience", "breakdown", "lane", "render_form",
	)
}
