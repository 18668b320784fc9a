package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/host"
)

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
