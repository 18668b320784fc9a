package pack_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/hosterr"
)

// A --file of another checkout is refused, naming that checkout: the pack
// would otherwise be built from this checkout's memory for another
// repository's file. A file of this checkout, or of no checkout, is taken.
func TestContextRefusesAFileOfAnotherCheckout(t *testing.T) {
	fx := newFixture(t, jobtest.Options{Git: true, Remote: "https://example.com/o/a.git"})
	a := fx.Dir
	b := fx.sibling(t, "b", "https://example.com/o/b.git").Dir
	nested := filepath.Join(a, "vendor", "lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	jobtest.Git(t, nested, "init", "-q")
	outside := t.TempDir()
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
		_, err := fx.pl.Context(ctx, pack.ContextRequest{File: tt.file, DryRun: true})
		if tt.refusedFor == "" {
			if err != nil {
				t.Errorf("--file %s: %v, want a pack", tt.file, err)
			}
			continue
		}
		var he *hosterr.Error
		if !errors.As(err, &he) || he.Kind != hosterr.KindInvalid || !strings.Contains(he.Error(), "--cwd "+tt.refusedFor) {
			t.Errorf("--file %s: err = %v, want KindInvalid naming %s", tt.file, err, tt.refusedFor)
		}
	}
	// Outside git, a file of a checkout is refused too.
	out := newFixture(t, jobtest.Options{})
	if _, err := out.pl.Context(ctx, pack.ContextRequest{File: filepath.Join(a, "x.go"), DryRun: true}); err == nil || !strings.Contains(err.Error(), "in no git checkout") {
		t.Errorf("outside git, a file of a checkout: err = %v", err)
	}
}
