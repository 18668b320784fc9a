package archtest

import (
	"errors"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/palacehq/palace"

// surfaces are the packages, with every package below them, that speak to
// people and agents; they wire flags and protocols to host and must not
// import what host keeps behind it.
var surfaces = []string{"cmd", "lsp", "mcp", "ui"}

// behindHost are the packages only host (and the packages below it) may
// import: the surfaces read and change a palace through host.
var behindHost = []string{"store"}

func TestSurfacesDoNotImportStore(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	for _, s := range surfaces {
		for _, pkg := range packagesUnder(t, root, s) {
			checked++
			for _, imp := range imports(t, root, pkg) {
				for _, b := range behindHost {
					if within(imp, module+"/"+b) {
						t.Errorf("%s imports %s: read and change a palace through host and its jobs", pkg, imp)
					}
				}
			}
		}
	}
	if checked < 4 {
		t.Fatalf("found %d surface packages, want cmd/palace, lsp, mcp and ui at least", checked)
	}
}

// besideHost are the packages a surface may import that reach store
// without going through host, each for a stated reason. Nothing
// else may: a helper package under a surface's import would otherwise be a
// way around the rule above.
var besideHost = map[string]string{
	// `palace bench gen` and the benchmarks write synthetic palaces row by
	// row, each card a person's direct write.
	"benchgen": "benchmark palace generator",
}

// TestSurfacesReachStoreOnlyThroughHost walks what the surfaces import,
// below the direct imports, and fails on a path to store that does not
// pass through host (or one of besideHost).
func TestSurfacesReachStoreOnlyThroughHost(t *testing.T) {
	root := moduleRoot(t)
	seen := map[string]bool{}
	var walk func(pkg string, path []string)
	walk = func(pkg string, path []string) {
		for _, imp := range imports(t, root, pkg) {
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !within(imp, module) || within(imp, module+"/host") || seen[rel] {
				continue
			}
			if _, ok := besideHost[rel]; ok {
				continue
			}
			for _, b := range behindHost {
				if within(imp, module+"/"+b) {
					t.Errorf("a surface reaches %s without host: %s", b, strings.Join(append(path, imp), " → "))
				}
			}
			seen[rel] = true
			walk(rel, append(path, imp))
		}
	}
	for _, s := range surfaces {
		for _, pkg := range packagesUnder(t, root, s) {
			walk(pkg, []string{module + "/" + pkg})
		}
	}
	for pkg := range besideHost {
		if _, err := build.ImportDir(filepath.Join(root, pkg), 0); err != nil {
			t.Errorf("besideHost names %s, which does not load (%v): keep the list to packages that exist", pkg, err)
		}
	}
}

func TestDomainImportsNothingOfPalace(t *testing.T) {
	root := moduleRoot(t)
	// Walk the whole closure, as `go list -deps` would, so that a palace
	// import anywhere below domain is caught with the path that leads to it.
	seen := map[string]bool{}
	var walk func(pkg string, path []string)
	walk = func(pkg string, path []string) {
		for _, imp := range imports(t, root, pkg) {
			if !within(imp, module) {
				continue
			}
			t.Errorf("domain must import nothing of palace's: %s", strings.Join(append(path, imp), " → "))
			rel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !seen[rel] {
				seen[rel] = true
				walk(rel, append(path, imp))
			}
		}
	}
	walk("domain", []string{module + "/domain"})
}

// TestImportReaderSeesImports guards the two tests above against passing
// for want of reading anything: host does import store and policies.
func TestImportReaderSeesImports(t *testing.T) {
	got := imports(t, moduleRoot(t), "host")
	for _, want := range []string{module + "/store", module + "/policies", module + "/domain"} {
		if !slices.Contains(got, want) {
			t.Errorf("imports of host = %v, missing %s", got, want)
		}
	}
}

// imports lists the imports of the package in dir (relative to root) as
// the go command builds it for this platform, test files excluded: tests
// may set up fixtures with the store.
func imports(t *testing.T, root, dir string) []string {
	t.Helper()
	p, err := build.ImportDir(filepath.Join(root, dir), 0)
	if err != nil {
		t.Fatalf("read package %s: %v", dir, err)
	}
	return p.Imports
}

// packagesUnder lists dir and the directories below it that hold a Go
// package (non-test files), relative to root.
func packagesUnder(t *testing.T, root, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(path, 0); err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatalf("list packages under %s: %v", dir, err)
	}
	return out
}

// within reports whether import path imp is pkg or below it.
func within(imp, pkg string) bool { return imp == pkg || strings.HasPrefix(imp, pkg+"/") }

// moduleRoot finds the directory of palace's go.mod above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module "+module+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod of " + module + " above the test")
		}
		dir = parent
	}
}
