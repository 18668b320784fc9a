package policies

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"

	"github.com/palacehq/palace/internal/lazyregexp"
)

// defaultPackage matches the package line of an embedded default or of its
// test; defaultImport an import of a default in a test. Only the line's own
// blanks are matched: the blank line after it stays.
var (
	defaultPackage = lazyregexp.New(`(?m)^package palace\.([a-z_]+)[ \t]*$`)
	defaultImport  = lazyregexp.New(`(?m)^import data\.palace\.([a-z_]+)[ \t]*$`)
)

// ExportDefaults returns the embedded default policies and their tests as
// stock `opa test` and `opa check` need them beside a team's policies: each
// policy under the package palace.default.<point> that team policies import,
// each test under palace.default.<point>_test importing it there, keyed by a
// slash-separated file name (palace/default/<point>.rego and
// <point>_test.rego), formatted as `opa fmt` writes them. Inside palace the
// same modules are aliased there when they load.
func ExportDefaults() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(defaultFS, "default", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		b, err := defaultFS.ReadFile(p)
		if err != nil {
			return err
		}
		if !defaultPackage.Match(b) {
			return fmt.Errorf("embedded %s declares no palace.<point> package", p)
		}
		header := "# The embedded default palace." + strings.TrimSuffix(path.Base(p), ".rego") +
			", exported by `palace policy defaults` under the package\n# team policies import. Regenerate it rather than edit it.\n"
		if strings.HasSuffix(p, "_test.rego") {
			header = "# The tests of the embedded default palace." + strings.TrimSuffix(path.Base(p), "_test.rego") +
				", exported by `palace policy defaults`\n# beside it: `opa test` on the folder runs them. Regenerate it rather than edit it.\n"
			b = defaultImport.ReplaceAll(b, []byte("import data.palace.default.$1"))
		}
		b = defaultPackage.ReplaceAll(b, []byte("package palace.default.$1"))
		name := "palace/default/" + path.Base(p)
		// Stock tooling checks formatting too (opa fmt --list in CI): the
		// export is what opa fmt writes, whatever the layout of the source.
		f, err := format.SourceWithOpts(name, append([]byte(header), b...), format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			return fmt.Errorf("format exported %s: %w", p, err)
		}
		out[name] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export embedded policies: %w", err)
	}
	return out, nil
}

// Scaffold returns a team policy for point p and its test, both passing
// `palace policy test` and stock `opa test` (with ExportDefaults beside
// them): file name → content.
func Scaffold(p Point) (map[string][]byte, error) {
	s, ok := scaffolds[p]
	if !ok {
		return nil, fmt.Errorf("no decision point %q: use one of gate, scope, lanes, mailbox, research", p)
	}
	return map[string][]byte{string(p) + ".rego": []byte(s[0]), string(p) + "_test.rego": []byte(s[1])}, nil
}

var scaffolds = map[Point][2]string{
	Gate: {`# Team gate: replaces palace.gate whole. It starts as the embedded default
# (importable as data.palace.default.gate); change decision to add your rules,
# e.g. deny with your own reason when your condition holds.
package palace.gate

import rego.v1

import data.palace.default.gate as base

decision := base.decision
`, `package palace.gate_test

import rego.v1

import data.palace.gate

promote(counts) := {
	"action": "promote", "target": "promoted", "mode": "human",
	"card": {"id": "kc_1", "tier": "qi", "status": "candidate", "field": "general", "scope": {"paths": [], "languages": [], "fields": []}},
	"counts": object.union({"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}, counts),
	"reviewer": {"name": "alice", "type": "human"},
}

test_qi_with_one_supporting_and_one_verification_is_promoted if {
	gate.decision.allow with input as promote({"supporting": 1, "verification": 1})
}

test_qi_without_verification_is_denied if {
	not gate.decision.allow with input as promote({"supporting": 1})
}
`},
	Scope: {`# Team scope: replaces palace.scope whole. It starts as the embedded default
# (importable as data.palace.default.scope); change decision to adjust which
# cards apply and how well they fit.
package palace.scope

import rego.v1

import data.palace.default.scope as base

decision := base.decision
`, `package palace.scope_test

import rego.v1

import data.palace.scope

test_double_star_glob_matches_a_root_file if {
	d := scope.decision with input as {"context": {"file": "main.go"}, "cards": [{"id": "kc_1", "scope": {"paths": ["**/*.go"]}}]}
	d.kc_1.applies
}

test_other_language_does_not_apply if {
	d := scope.decision with input as {"context": {"language": "python"}, "cards": [{"id": "kc_1", "scope": {"languages": ["go"]}}]}
	not d.kc_1.applies
}
`},
	Lanes: {`# Team lanes: replaces palace.lanes whole. It starts as the embedded default
# (importable as data.palace.default.lanes); change decision to move cards
# between lanes.
package palace.lanes

import rego.v1

import data.palace.default.lanes as base

decision := base.decision
`, `package palace.lanes_test

import rego.v1

import data.palace.lanes

none := {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}

test_every_card_gets_a_lane if {
	c := {"card": {"id": "kc_1", "persistence": "standard", "render_pref": "auto"}, "scope_fit": 20, "operation_fit": 0, "relevance": 0, "counts30d": none, "age_days": 0}
	d := lanes.decision with input as {"cards": [c], "config": {}}
	d.kc_1.lane in {"core", "scoped", "ref_only", "inspector_only"}
}
`},
	Mailbox: {`# Team mailbox hygiene: each message in deny is an error on the letter's
# line in ` + "`palace mailbox check`" + ` and in the editor. palace's built-in checks
# (valid JSON, required fields, secrets, append-only history) run anyway.
package palace.mailbox

import rego.v1

deny contains "bug letters need a snippet of what was seen" if {
	input.letter.class == "bug"
	not input.letter.snippet
}
`, `package palace.mailbox_test

import rego.v1

import data.palace.mailbox

test_bug_without_snippet_is_denied if {
	count(mailbox.deny) == 1 with input as {"box": "global", "letter": {"class": "bug", "what": "crash"}}
}

test_bug_with_snippet_passes if {
	count(mailbox.deny) == 0 with input as {"box": "global", "letter": {"class": "bug", "what": "crash", "snippet": "panic: x"}}
}
`},
	Research: {`# Team research policy: replaces palace.research whole. This one lets an
# agent ingest a small report as evidence too (research never becomes a
# card by itself: candidate insights stay suggestions).
package palace.research

import rego.v1

import data.palace.default.research as base

decision := {"allow": true, "reasons": ["agents may ingest reports of at most 50 findings"]} if {
	input.mode == "agent"
	input.report.findings <= 50
} else := base.decision
`, `package palace.research_test

import rego.v1

import data.palace.research

test_agent_ingests_a_small_report if {
	research.decision.allow with input as {"action": "ingest", "dry_run": false, "mode": "agent", "report": {"findings": 3}}
}

test_agent_does_not_ingest_a_large_one if {
	not research.decision.allow with input as {"action": "ingest", "dry_run": false, "mode": "agent", "report": {"findings": 500}}
}
`},
}
