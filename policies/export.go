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

// ExportDefaults returns the embedded defaults and their tests as stock
// `opa test` needs them beside a team's policies: under palace.default.<point>
// (and <point>_test), keyed palace/default/<point>.rego and
// <point>_test.rego, formatted as `opa fmt` writes them.
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
	if !p.Valid() {
		return nil, fmt.Errorf("no decision point %q: use one of gate, scope, lanes, mailbox, research", p)
	}
	out := map[string][]byte{}
	for _, name := range []string{string(p) + ".rego", string(p) + "_test.rego"} {
		b, err := scaffoldFS.ReadFile("scaffold/" + name)
		if err != nil {
			return nil, fmt.Errorf("scaffold for %s: %w", p, err)
		}
		out[name] = b
	}
	return out, nil
}
