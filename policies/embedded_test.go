package policies

import (
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestEmbeddedPackagesMatchTheirModules: the embedded defaults' packages
// are read from their package line, so that a short command never parses
// them; each must be what the parser reads (the palace.default alias
// under its own package), and each must parse.
func TestEmbeddedPackagesMatchTheirModules(t *testing.T) {
	files := embeddedFiles()
	if len(files) == 0 {
		t.Fatal("no embedded policies")
	}
	aliases := 0
	for _, f := range files {
		m := f.Module()
		if m == nil {
			t.Fatalf("%s: no module", f.Path)
		}
		if want := ast.MustParseRef("data." + f.Package); !m.Package.Path.Equal(want) {
			t.Errorf("%s: package %q from its line, %v from the parser", f.Path, f.Package, m.Package.Path)
		}
		if strings.Contains(f.Path, "#") {
			aliases++
			if !strings.HasPrefix(f.Package, "palace.default.") {
				t.Errorf("%s: alias package %q", f.Path, f.Package)
			}
		}
	}
	if aliases == 0 {
		t.Error("no palace.default aliases")
	}
	if packageLine([]byte("# a comment\n\n  package palace.gate  \nimport rego.v1\n")) != "palace.gate" {
		t.Error("packageLine misses an indented package line after comments")
	}
	if packageLine([]byte("# package in a comment only\n")) != "" {
		t.Error("packageLine read a comment")
	}
}
