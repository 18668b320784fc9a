// Package plugintest builds palace's example and test plugins for tests,
// once per source version: guests are kept under the temporary directory in
// palace-test-guests/<hash of the sources, toolchain and flags>/, compiled
// code in CacheDir.
package plugintest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Guests are the plugins Guest can build: the examples and the test guests.
var Guests = map[string]struct{ Module, Pkg string }{
	"gate":     {"examples/plugins/gate-go", "."},
	"lanes":    {"examples/plugins/lanes-go", "."},
	"hostile":  {"plugins/testdata/guests", "./hostile"},
	"evil":     {"plugins/testdata/guests", "./evil"},
	"userhost": {"plugins/testdata/guests", "./userhost"},
	"policy":   {"plugins/testdata/guests", "./policy"},
}

// BuildFlags are the go build flags of every guest, as
// examples/plugins/Makefile uses them.
var BuildFlags = []string{"-buildmode=c-shared", "-trimpath", "-ldflags=-s -w"}

var (
	mu    sync.Mutex
	built = map[string][]byte{}
)

// Guest returns the bytes of the named guest, building it on first use in
// this source version (a few seconds; nothing on later runs).
func Guest(tb testing.TB, name string) []byte {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if b, ok := built[name]; ok {
		return b
	}
	b, err := build(name)
	if err != nil {
		tb.Fatalf("build guest %s: %v", name, err)
	}
	built[name] = b
	return b
}

// Path returns the path of the built guest, building it first.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	Guest(tb, name)
	p, err := outPath(name)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// CacheDir is a wazero disk cache shared by test runs, so each distinct
// module is compiled once per machine rather than once per test.
func CacheDir() string { return filepath.Join(os.TempDir(), "palace-test-wazero") }

// Root is the palace module's directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func outPath(name string) (string, error) {
	src, ok := Guests[name]
	if !ok {
		return "", fmt.Errorf("unknown guest %q", name)
	}
	key, err := sourceKey(filepath.Join(Root(), src.Module), src.Pkg)
	if err != nil {
		return "", err
	}
	return filepath.Join(os.TempDir(), "palace-test-guests", key, name+".wasm"), nil
}

func build(name string) ([]byte, error) {
	out, err := outPath(name)
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	// Build beside the target and rename: other test binaries may race.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	src := Guests[name]
	args := append([]string{"build"}, BuildFlags...)
	args = append(args, "-o", tmp, src.Pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(Root(), src.Module)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("%v\n%s", err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// sourceKey hashes what decides a guest's bytes: every file of its module
// directory and of the local modules its go.mod replaces others with
// (`=> ../dir`), the package built, the toolchain and the flags.
func sourceKey(dir, pkg string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", runtime.Version(), pkg, strings.Join(BuildFlags, " "))
	dirs := []string{dir}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(mod), "\n") {
		_, target, ok := strings.Cut(line, "=>")
		if target = strings.TrimSpace(target); ok && (strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../")) {
			dirs = append(dirs, filepath.Join(dir, target))
		}
	}
	for _, d := range dirs {
		if err := hashModule(h, d); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashModule writes the Go sources, go.mod and go.sum of a module
// directory to h, each under its path relative to dir.
func hashModule(h io.Writer, dir string) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "go.mod") || strings.HasSuffix(p, "go.sum")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	fmt.Fprintf(h, "%s\x00", filepath.Base(dir))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return nil
}
