package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

// Example walks the lifecycle: record evidence, distill a candidate, ask the
// gate, add verification, promote.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "palace-example")
	defer os.RemoveAll(dir)
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(repo, 0o755)
	exec.Command("git", "-C", repo, "init", "-q").Run()

	h, err := host.Open(ctx, host.Options{Home: filepath.Join(dir, "home"), Cwd: repo, Mode: host.Human, Actor: "alice"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()

	seen, _ := h.Intake().Record(ctx, intake.RecordRequest{Content: "tests flake with 'database is locked' without WAL", Field: "storage"})
	fixed, _ := h.Intake().Record(ctx, intake.RecordRequest{Content: "with WAL the tests pass 50 of 50 runs", Field: "storage"})
	card, _ := h.Distill(ctx, intake.DistillRequest{
		Statement: "Open SQLite in WAL mode", Tier: "qi", Field: "storage",
		Supporting: []string{seen.ID},
	})
	fmt.Println(card.Status, card.Anchor.Kind)

	g, _ := h.Gate(ctx, card.ID, host.GateRequest{})
	fmt.Println(g.Allow, g.Missing)

	res, err := h.Promote(ctx, card.ID, host.PromoteRequest{Reason: "verified", Verification: []string{fixed.ID}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Card.Status, res.Event.Type, res.Card.Counts.Verification)
	// Output:
	// candidate worktree
	// false map[verification:1]
	// promoted promoted 1
}
