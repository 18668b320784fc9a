package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/benchclock"
)

// syncBenchCards is the size of the synced card directory.
const syncBenchCards = 10_000

// benchCardDir writes n promoted shu card files, each citing one supporting
// and one verification piece of evidence (what the default gate asks), into
// a new git checkout, with mtimes an hour old (as after a checkout that is
// not brand new).
func benchCardDir(b testing.TB, n int) string {
	b.Helper()
	repo := filepath.Join(b.TempDir(), "repo")
	dir := filepath.Join(repo, cardfile.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	old := time.Now().Add(-time.Hour)
	for i := range n {
		sup := fmt.Sprintf("Seen in service %d: handlers that open a transaction must close it on every return path, or the pool drains under load.", i)
		ver := fmt.Sprintf("Verified for service %d: the leak test passes with deferred rollback.", i)
		es, ev := fmt.Sprintf("ev_%026d", 2*i), fmt.Sprintf("ev_%026d", 2*i+1)
		c := cardfile.Card{
			ID: fmt.Sprintf("kc_%026d", i), Statement: fmt.Sprintf("Service %d: defer tx.Rollback right after BeginTx", i),
			Tier: "shu", Status: "promoted", Domain: "project", Field: fmt.Sprintf("field%d", i%40),
			Scope:       cardfile.Scope{Paths: []string{fmt.Sprintf("svc%d/**", i%200)}, Languages: []string{"go"}},
			Persistence: "standard", RenderPref: "auto", CreatedBy: "alice", CreatedAt: "2026-11-01T10:00:00.000Z",
			LastEvent: &cardfile.Event{Type: "promoted", At: "2026-11-02T10:00:00.000Z", Actor: "alice",
				Reviewer: cardfile.Reviewer{Name: "alice", Type: "human"}, PolicyHash: "5abfda01d9361ef9028e4720d09d456b93d6c9af8175a5d2d11bd0c8d991d69f"},
			Citations: []cardfile.Citation{
				{Evidence: es, Role: "supporting", SourceRef: fmt.Sprintf("svc%d/db.go#L12", i%200), SHA256: cardfile.ContentSHA256(sup)},
				{Evidence: ev, Role: "verification", SHA256: cardfile.ContentSHA256(ver)},
			},
			Evidence: []cardfile.Evidence{
				{ID: es, SHA256: cardfile.ContentSHA256(sup), Domain: "project", Field: "general", Provenance: "runtime",
					SourceRef: fmt.Sprintf("svc%d/db.go#L12", i%200), Actor: "alice", ActorType: "human", CreatedAt: "2026-11-01T09:00:00.000Z", Content: sup},
				{ID: ev, SHA256: cardfile.ContentSHA256(ver), Domain: "project", Field: "general", Provenance: "runtime",
					Actor: "alice", ActorType: "human", CreatedAt: "2026-11-01T09:30:00.000Z", Content: ver},
			},
			Content: "Without the deferred rollback, an early return leaks the transaction and its connection.\n\nSee the pool metrics.",
		}
		raw, err := cardfile.Encode(c)
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(dir, cardfile.FileName(c.ID))
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	commitBench(b, repo)
	// Write the fresh files back before the clock starts, as a checkout
	// settles before its sync: otherwise the kernel writes the ~23 MB back
	// under the measured import, and its commit's fsync waits for them.
	syscall.Sync()
	return repo
}

// commitBench commits every card file of repo and makes the commit the
// upstream default branch's (origin/main), as after a pull.
func commitBench(b testing.TB, repo string) {
	b.Helper()
	for _, args := range [][]string{
		{"add", "-A", ".palace"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "gc.auto=0", "commit", "-q", "-m", "cards"},
		{"update-ref", "refs/remotes/origin/main", "HEAD"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func openBench(b *testing.B, home, repo string) *host.Host {
	b.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: home, Cwd: repo, Mode: host.Human, Actor: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func benchSync(b *testing.B, h *host.Host, req teamsync.SyncRequest) teamsync.SyncReport {
	b.Helper()
	rep, err := h.Sync(context.Background(), req)
	if err != nil {
		b.Fatalf("sync: %v %v", err, rep.Findings)
	}
	return rep
}

// BenchmarkSyncImport10k imports 10k card files (20k evidence) into an
// empty palace: decode, secret scan, gate per card, one transaction.
func BenchmarkSyncImport10k(b *testing.B) {
	repo := benchCardDir(b, syncBenchCards)
	var cpu benchclock.CPU
	n := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		h := openBench(b, filepath.Join(b.TempDir(), fmt.Sprintf("home%d", i)), repo)
		b.StartTimer()
		cpu.Start()
		rep := benchSync(b, h, teamsync.SyncRequest{})
		cpu.Stop()
		n++
		b.StopTimer()
		if len(rep.Imported) != syncBenchCards || len(rep.Held) != 0 {
			b.Fatalf("imported %d, held %d", len(rep.Imported), len(rep.Held))
		}
		h.Close()
		b.StartTimer()
	}
	cpu.Report(b, n)
}

// BenchmarkSyncExport10k writes the files of 10k cards (render from the
// database, encode, write through a temporary file, record).
func BenchmarkSyncExport10k(b *testing.B) {
	repo := benchCardDir(b, syncBenchCards)
	h := openBench(b, filepath.Join(b.TempDir(), "home"), repo)
	defer h.Close()
	benchSync(b, h, teamsync.SyncRequest{})
	sample := filepath.Join(repo, cardfile.Dir, cardfile.FileName(fmt.Sprintf("kc_%026d", syncBenchCards/2)))
	before, err := os.ReadFile(sample)
	if err != nil {
		b.Fatal(err)
	}
	var cpu benchclock.CPU
	n := 0
	cpu.Start()
	for b.Loop() {
		rep := benchSync(b, h, teamsync.SyncRequest{Rewrite: true})
		if len(rep.Exported) != syncBenchCards {
			b.Fatalf("exported %d", len(rep.Exported))
		}
		n++
	}
	cpu.Stop()
	cpu.Report(b, n)
	// Rewriting imported cards gives the bytes they were imported from.
	if after, err := os.ReadFile(sample); err != nil || string(after) != string(before) {
		b.Fatalf("rewrite changed %s (%v):\n%s\n---- was ----\n%s", sample, err, after, before)
	}
}

// BenchmarkSyncNoop10k is a sync with nothing to do over 10k committed
// card files: the file rows, HEAD's tree and the working tree's status.
func BenchmarkSyncNoop10k(b *testing.B) {
	repo := benchCardDir(b, syncBenchCards)
	h := openBench(b, filepath.Join(b.TempDir(), "home"), repo)
	defer h.Close()
	benchSync(b, h, teamsync.SyncRequest{})
	var cpu benchclock.CPU
	n := 0
	cpu.Start()
	for b.Loop() {
		rep := benchSync(b, h, teamsync.SyncRequest{})
		if rep.Unchanged != syncBenchCards || len(rep.Exported)+len(rep.Imported) != 0 {
			b.Fatalf("no-op sync: %d unchanged, %d exported, %d imported", rep.Unchanged, len(rep.Exported), len(rep.Imported))
		}
		n++
	}
	cpu.Stop()
	cpu.Report(b, n)
}
