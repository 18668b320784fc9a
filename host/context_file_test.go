package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// A --file of another checkout is refused, naming that checkout: the pack
// would otherwise be built from this checkout's memory for another
// repository's file. A file of this checkout, or of no checkout, is taken.
func TestContextRefusesAFileOfAnotherCheckout(t *testing.T) {
	e := newCxEnv(t)
	a := e.repo("a", "https://example.com/o/a.git")
	b := e.repo("b", "https://example.com/o/b.git")
	nested := filepath.Join(a, "vendor", "lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(nested, "init", "-q")
	outside := t.TempDir()
	h := e.open(a, host.Human)
	ctx := context.Background()
	for _, tt := range []struct {
		file, refusedFor string
	}{
		{"store/db.go", ""},
		{filepath.Join(a, "store", "db.go"), ""},
		{filepath.Join(outside, "notes.md"), ""},
		{filepath.Join(b, "store", "db.go"), b},
		{"../b/main.go", b},
		{filepath.Join(nested, "x.go"), nested},
	} {
		_, err := h.Pack().Context(ctx, pack.ContextRequest{File: tt.file, DryRun: true})
		if tt.refusedFor == "" {
			if err != nil {
				t.Errorf("--file %s: %v, want a pack", tt.file, err)
			}
			continue
		}
		var he *host.Error
		if !errors.As(err, &he) || he.Kind != host.KindInvalid || !strings.Contains(he.Error(), "--cwd "+tt.refusedFor) {
			t.Errorf("--file %s: err = %v, want KindInvalid naming %s", tt.file, err, tt.refusedFor)
		}
	}
	// Outside git, a file of a checkout is refused too.
	h2 := e.open(outside, host.Human)
	if _, err := h2.Pack().Context(ctx, pack.ContextRequest{File: filepath.Join(a, "x.go"), DryRun: true}); err == nil || !strings.Contains(err.Error(), "in no git checkout") {
		t.Errorf("outside git, a file of a checkout: err = %v", err)
	}
}

// An editor's views of a file in a nested checkout (a submodule under the
// workspace) show nothing of this workspace's memory, and fail nothing.
func TestEditorViewsOfANestedCheckoutAreEmpty(t *testing.T) {
	e := newCxEnv(t)
	a := e.repo("a", "https://example.com/o/a.git")
	nested := filepath.Join(a, "vendor", "lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(nested, "init", "-q")
	h := e.open(a, host.Human)
	ctx := context.Background()
	v := h.EditorViews()
	lens, err := v.Lens(ctx, host.LensRequest{File: filepath.Join(nested, "x.go"), Language: "go"})
	if err != nil || len(lens.IDs) != 0 {
		t.Errorf("lens of a nested checkout's file: %+v, %v; want nothing, no error", lens, err)
	}
	if _, err := v.Hover(ctx, host.HoverRequest{File: filepath.Join(nested, "x.go"), Language: "go", Line: 1}); err != nil {
		t.Errorf("hover of a nested checkout's file: %v", err)
	}
	if _, err := v.Lens(ctx, host.LensRequest{File: filepath.Join(a, "x.go"), Language: "go"}); err != nil {
		t.Errorf("lens of the workspace's own file: %v", err)
	}
}
