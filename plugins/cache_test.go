package plugins_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/palacehq/palace/plugins"
)

// loadAndCall loads wasm in a fresh Runtime (a new process, as far as the
// cache can tell), checks that it answers, and returns how long Load took.
func loadAndCall(t *testing.T, cfg plugins.Config, name string, wasm []byte, input string) time.Duration {
	t.Helper()
	rt, err := plugins.NewRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	start := time.Now()
	m, err := rt.Load(context.Background(), name, wasm)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(context.Background(), m.Points()[0], []byte(input)); err != nil {
		t.Fatal(err)
	}
	return elapsed
}

func entryDir(base, version string, wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return filepath.Join(base, version, hex.EncodeToString(sum[:])+"-"+plugins.RewriteID)
}

// TestDiskCacheWarmLoadAndCorruption follows one real Go guest through the
// cache's life: cold load (compiles, seals), warm load (much faster), every
// cached file corrupted (ignored, rebuilt), warm again.
func TestDiskCacheWarmLoadAndCorruption(t *testing.T) {
	base := t.TempDir()
	cfg := plugins.Config{}.WithCacheDir(base).WithVersion("v1.2.3+dirty").WithDeadline(5 * time.Second)
	wasm := guest(t, "gate")
	input := `{"action":"publish","target":"repo"}`

	cold := loadAndCall(t, cfg, "gate.wasm", wasm, input)
	dir := entryDir(base, "v1.2.3_dirty", wasm)
	if _, err := os.Stat(filepath.Join(dir, "SEAL")); err != nil {
		t.Fatalf("cache entry not sealed: %v", err)
	}
	sealed := sealInfo(t, dir)
	warm := loadAndCall(t, cfg, "gate.wasm", wasm, input)
	t.Logf("cold load %v, warm load %v", cold, warm)
	// A hit leaves the entry as it was; a miss deletes the directory and
	// seals a new one. Asserting on the files, not on the times, keeps the
	// test from failing on a loaded machine.
	if !os.SameFile(sealed, sealInfo(t, dir)) {
		t.Errorf("warm load rebuilt the cache entry instead of using it")
	}

	// Corrupt each cached file differently: wazero itself would trip over
	// some of these, and would load others (the offset table carries no
	// checksum) as garbage machine code, so nothing compiled from an entry
	// may run before the entry is known to match its seal.
	files := cachedFiles(t, dir)
	if len(files) < 2 { // the guest and the Extism kernel
		t.Fatalf("cache holds %d files, want at least 2", len(files))
	}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 2 {
		case 0: // flip a byte inside the function offset table
			b[20] ^= 0xff
		case 1: // truncate
			b = b[:len(b)/2]
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rebuilt := loadAndCall(t, cfg, "gate.wasm", wasm, input)
	resealed := sealInfo(t, dir)
	if os.SameFile(sealed, resealed) {
		t.Errorf("the corrupted entry was kept instead of rebuilt")
	}
	for _, f := range cachedFiles(t, dir) {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("rebuilt entry lacks %s: %v", f, err)
		}
	}
	again := loadAndCall(t, cfg, "gate.wasm", wasm, input)
	t.Logf("load after corruption %v, then %v", rebuilt, again)
	if !os.SameFile(resealed, sealInfo(t, dir)) {
		t.Errorf("the load after the rebuild did not use the rebuilt entry")
	}
}

// sealInfo returns the entry's seal file, whose identity tells a cache hit
// (kept) from a rebuild (the directory deleted and sealed anew). A hard link
// outside the entry holds the inode, so a new seal cannot reuse its number.
func sealInfo(t *testing.T, dir string) os.FileInfo {
	t.Helper()
	seal := filepath.Join(dir, "SEAL")
	fi, err := os.Stat(seal)
	if err != nil {
		t.Fatalf("cache entry not sealed: %v", err)
	}
	if err := os.Link(seal, filepath.Join(t.TempDir(), "SEAL")); err != nil {
		t.Fatalf("hold the seal's inode: %v", err)
	}
	return fi
}

// A cache entry whose rewritten module was swapped for another valid module
// (here: another guest's) must not serve that module: wazero compiles it
// happily, so only the seal tells, and Load must throw away what it
// compiled and rebuild from the module it was given.
func TestDiskCacheSwappedModuleIsNotRun(t *testing.T) {
	base := t.TempDir()
	cfg := plugins.Config{}.WithCacheDir(base).WithVersion("test").WithDeadline(5 * time.Second)
	gate, lanes := guest(t, "gate"), guest(t, "lanes")
	input := `{"action":"publish","target":"repo"}`
	loadAndCall(t, cfg, "gate.wasm", gate, input)
	loadAndCall(t, cfg, "lanes.wasm", lanes, `{"cards":[]}`)
	rewritten := func(wasm []byte) string {
		return filepath.Join(entryDir(base, "test", wasm), plugins.RewrittenFile)
	}
	other, err := os.ReadFile(rewritten(lanes))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rewritten(gate), other, 0o644); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, cfg)
	m, err := rt.Load(context.Background(), "gate.wasm", gate)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Call(context.Background(), "gate", []byte(input))
	if err != nil {
		t.Fatalf("the swapped entry was used: %v", err)
	}
	assertSameJSON(t, out, `{"allow":true,"reasons":["publish → repo: allowed"],"missing":{}}`)
	if b, err := os.ReadFile(rewritten(gate)); err != nil || string(b) == string(other) {
		t.Errorf("the entry was not rebuilt (read error %v)", err)
	}
}

func cachedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "SEAL" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDiskCacheDamage covers the ways a cache directory goes wrong, on a tiny
// module so each case costs milliseconds: Load must always succeed.
func TestDiskCacheDamage(t *testing.T) {
	wasm := gateModule([]byte{0x00}) // traps when called; loading is what matters here
	tests := []struct {
		name   string
		damage func(t *testing.T, base, dir string)
	}{
		{"garbage in every file", func(t *testing.T, _, dir string) {
			for _, f := range cachedFiles(t, dir) {
				os.WriteFile(f, []byte("not a compiled module"), 0o600)
			}
		}},
		{"seal deleted", func(t *testing.T, _, dir string) { os.Remove(filepath.Join(dir, "SEAL")) }},
		{"seal garbled", func(t *testing.T, _, dir string) {
			os.WriteFile(filepath.Join(dir, "SEAL"), []byte("nonsense\n"), 0o600)
		}},
		{"stray file", func(t *testing.T, _, dir string) {
			os.WriteFile(filepath.Join(cachedFiles(t, dir)[0]+".1234.tmp"), []byte("half"), 0o600)
		}},
		{"entry removed", func(t *testing.T, _, dir string) { os.Remove(cachedFiles(t, dir)[0]) }},
		{"cache dir is a file", func(t *testing.T, base, _ string) {
			os.RemoveAll(base)
			os.WriteFile(base, []byte("x"), 0o600)
		}},
		{"cache dir unwritable", func(t *testing.T, base, _ string) {
			if os.Geteuid() == 0 {
				t.Skip("root writes anywhere")
			}
			os.RemoveAll(base)
			os.MkdirAll(base, 0o500)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "cache")
			cfg := plugins.Config{}.WithCacheDir(base).WithVersion("test")
			rt := newRuntime(t, cfg)
			if _, err := rt.Load(context.Background(), "tiny.wasm", wasm); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, base, entryDir(base, "test", wasm))
			rt2 := newRuntime(t, cfg)
			m, err := rt2.Load(context.Background(), "tiny.wasm", wasm)
			if err != nil {
				t.Fatalf("load with a damaged cache: %v", err)
			}
			_, err = m.Call(context.Background(), "gate", nil)
			mustContain(t, err, "wasm error: unreachable")
		})
	}
}

// A new palace version never reads an older version's entries.
func TestDiskCacheKeyedByVersion(t *testing.T) {
	base := t.TempDir()
	wasm := gateModule(returnsZero)
	for _, v := range []string{"v1", "v2", "", "../.."} {
		rt := newRuntime(t, plugins.Config{}.WithCacheDir(base).WithVersion(v))
		if _, err := rt.Load(context.Background(), "tiny.wasm", wasm); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if _, err := os.Stat(filepath.Join(entryDir(base, e.Name(), wasm), "SEAL")); err != nil {
			t.Errorf("version %s: %v", e.Name(), err)
		}
	}
	want := []string{".._..", "unversioned", "v1", "v2"}
	if len(got) != len(want) {
		t.Fatalf("version directories %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("version directories %q, want %q", got, want)
		}
	}
}

// Concurrent Loads of the same bytes through one cache directory all succeed
// and leave one sealed entry.
func TestDiskCacheConcurrentLoads(t *testing.T) {
	base := t.TempDir()
	rt := newRuntime(t, plugins.Config{}.WithCacheDir(base).WithVersion("test"))
	wasm := gateModule(returnsZero)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := rt.Load(context.Background(), "tiny.wasm", wasm); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := os.Stat(filepath.Join(entryDir(base, "test", wasm), "SEAL")); err != nil {
		t.Fatalf("entry not sealed: %v", err)
	}
}
