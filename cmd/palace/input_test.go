package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/palacehq/palace/store"
)

func countEvidence(t *testing.T, e *env) int {
	t.Helper()
	return int(e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--limit", "1")["total"].(float64))
}

func TestBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.record("a fact")
	card := e.distill("A card", "qi", "--supporting", ev)
	big := strings.Repeat("x", 1<<20+1)
	bigFile := filepath.Join(t.TempDir(), "big.txt")
	os.WriteFile(bigFile, []byte(big), 0o644)
	badUTF8 := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(badUTF8, []byte("caf\xc3\x28 latte"), 0o644)
	jsonl := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(jsonl, []byte("{\"content\":\"ok one\"}\n\n{\"content\":\"ok two\"}\n{\"content\": \"broken\"\n{\"content\":\"ok four\"}\n"), 0o644)
	jsonlEmpty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(jsonlEmpty, []byte("{\"content\":\"ok\"}\n{\"content\":\"  \"}\n"), 0o644)
	jsonlField := filepath.Join(t.TempDir(), "field.jsonl")
	os.WriteFile(jsonlField, []byte("{\"content\":\"ok\",\"provenance\":\"dream\"}\n"), 0o644)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"empty content", []string{"record", "--content", "   "}, []string{"content is empty"}},
		{"invalid utf-8", []string{"record", "--file", badUTF8}, []string{"not valid UTF-8"}},
		{"over 1 MiB", []string{"record", "--file", bigFile}, []string{"1 MiB"}},
		{"unknown provenance", []string{"record", "--content", "x", "--provenance", "dream"}, []string{"provenance", "dream"}},
		{"unknown tier", []string{"distill", "--statement", "s", "--tier", "law", "--supporting", ev}, []string{"tier", "law", "dao_tian"}},
		{"unknown direct status", []string{"distill", "--statement", "s", "--tier", "qi", "--supporting", ev, "--direct", "--status", "approved"}, []string{"--status"}},
		{"unknown card status filter", []string{"card", "list", "--status", "approved"}, []string{"status", "approved"}},
		{"unknown role", []string{"card", "link", card, "--role", "friend", "--evidence", ev}, []string{"role", "friend"}},
		{"malformed jsonl line", []string{"record", "--jsonl", jsonl}, []string{jsonl + ":4:", "invalid JSON"}},
		{"empty jsonl content", []string{"record", "--jsonl", jsonlEmpty}, []string{jsonlEmpty + ":2:", "content is empty"}},
		{"bad jsonl field", []string{"record", "--jsonl", jsonlField}, []string{":1:", "provenance"}},
		{"unknown format", []string{"card", "list", "--format", "yaml"}, []string{"--format"}},
		{"unknown flag", []string{"record", "--contnet", "x"}, []string{"unknown flag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := countEvidence(t, e)
			cards := e.jsonOf("card", "list", "--anchor", "all", "--all-repos")
			r := e.run(tt.args...)
			wantCode(t, r, 2, tt.want...)
			if after := countEvidence(t, e); after != before {
				t.Errorf("evidence rows %d → %d on bad input", before, after)
			}
			if after := e.jsonOf("card", "list", "--anchor", "all", "--all-repos"); fmt.Sprint(after) != fmt.Sprint(cards) {
				t.Error("cards changed on bad input")
			}
		})
	}
}

func writeJSONL(t *testing.T, path string, n int, tag string) {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "{\"content\":\"%s row %d: the build needs WAL mode\",\"field\":\"import\",\"source_ref\":\"gen:%d\"}\n", tag, i, i)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentImports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("init")
	dir := t.TempDir()
	var wg sync.WaitGroup
	results := make([]result, 4)
	for p := range 4 {
		path := filepath.Join(dir, fmt.Sprintf("p%d.jsonl", p))
		writeJSONL(t, path, 1000, fmt.Sprintf("proc%d", p))
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[p] = e.runIn(e.dir, nil, "record", "--jsonl", path)
		}()
	}
	wg.Wait()
	for p, r := range results {
		if r.code != 0 || strings.Contains(r.stderr, "locked") {
			t.Errorf("process %d: exit %d, stderr %q", p, r.code, r.stderr)
		}
	}
	if n := countEvidence(t, e); n != 4000 {
		t.Fatalf("evidence rows = %d, want exactly 4000", n)
	}
}

func TestKilledImportKeepsWholeBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("init")
	path := filepath.Join(t.TempDir(), "big.jsonl")
	writeJSONL(t, path, 200_000, "kill")
	cmd := exec.Command(palaceBin, "record", "--jsonl", path)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once at least one batch has committed and the import is still going.
	db := filepath.Join(e.home, "palace.db")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("import never committed a batch")
		}
		if n := rowsIn(t, db); n >= 2000 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res, err := st.IntegrityCheck(context.Background())
	if err != nil || len(res) != 1 || res[0] != "ok" {
		t.Fatalf("integrity_check = %v, %v", res, err)
	}
	n, _ := st.CountEvidence(context.Background())
	if n == 200_000 {
		t.Skip("import finished before the kill; machine too fast for this file size")
	}
	if n%1000 != 0 || n == 0 {
		t.Fatalf("%d rows after kill -9: not whole batches of 1000", n)
	}
	t.Logf("killed after %d committed rows", n)
}

// rowsIn counts evidence with sqlite reading the file directly (read-only, no
// migration), returning 0 while the database does not exist yet.
func rowsIn(t *testing.T, db string) int {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		return 0
	}
	defer st.Close()
	n, _ := st.CountEvidence(context.Background())
	return n
}

// TestNewerSchemaRefused stamps the database as written by a newer palace
// (PRAGMA user_version lives at byte 60 of the file header) and checks that
// every command refuses it, naming both versions, and doctor says so too.
func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("init")
	db := filepath.Join(e.home, "palace.db")
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0, 0, 99}, 60); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := []string{"schema version 99", fmt.Sprintf("up to version %d", store.SchemaVersion)}
	wantCode(t, e.run("card", "list"), 4, want...)
	r := e.run("doctor")
	if r.code != 1 {
		t.Fatalf("doctor exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range append(want, "FAIL", "upgrade palace") {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("doctor output does not mention %q:\n%s", w, r.stdout)
		}
	}
}

// TestEvidenceSearchAfterImport: rows of a JSONL import and of single
// records are all found by full-text search.
func TestEvidenceSearchAfterImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, path, 2500, "batch")
	e.ok("record", "--jsonl", path)
	e.record("checkpoint starvation seen once", "--field", "storage")
	out := e.jsonOf("evidence", "list", "--query", "row 2499 WAL", "--limit", "5")
	if out["total"].(float64) != 1 {
		t.Fatalf("search for the last imported row: %v", out)
	}
	out = e.jsonOf("evidence", "list", "--query", "checkpoint starvation")
	if out["total"].(float64) != 1 {
		t.Fatalf("search for a single record: %v", out)
	}
	if n := e.jsonOf("evidence", "list", "--query", "needs WAL mode", "--limit", "1")["total"].(float64); n != 2500 {
		t.Fatalf("%v imported rows match, want 2500", n)
	}
}

// TestConcurrentFirstUse runs four commands at once on a home that does
// not exist yet: all create, migrate and write the one database without an
// error.
func TestConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	for trial := range 3 {
		e := newEnv(t)
		var wg sync.WaitGroup
		results := make([]result, 4)
		for p := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[p] = e.runIn(e.dir, nil, "record", "--content", fmt.Sprintf("first use %d", p))
			}()
		}
		wg.Wait()
		for p, r := range results {
			if r.code != 0 {
				t.Fatalf("trial %d, process %d: exit %d: %s", trial, p, r.code, r.stderr)
			}
		}
		if n := countEvidence(t, e); n != 4 {
			t.Fatalf("trial %d: %d evidence rows, want 4", trial, n)
		}
	}
}
