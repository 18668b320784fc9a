package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// A context pack for a file: the card's scope (path, language, field) and
// triggers (two intents) fit the request fully and the file's path words
// make it relevant, so it lands in the core lane and renders compactly
// (core and scoped items are one line by default), with its two citations.
func ExampleHost_Pack() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "palace-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// Outside git only the global anchor exists; the request's file is
	// matched relative to the directory.
	h, err := host.Open(ctx, host.Options{Home: filepath.Join(dir, "home"), Cwd: dir, Mode: host.Human,
		Now: func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	seen, _ := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "parallel tests hit SQLITE_BUSY without WAL", Field: "storage", SourceRef: "ci://4812"})
	fixed, _ := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "WAL + busy_timeout: 200 clean runs", Field: "storage"})
	_, err = h.Distill(ctx, intake.DistillRequest{Anchor: "global",
		Statement: "Open SQLite in WAL mode with a busy timeout", Tier: "shu", Field: "storage",
		Supporting: []string{seen.ID}, Verification: []string{fixed.ID},
		Scope:   domain.Scope{Paths: []string{"store/**"}, Languages: []string{"go"}, Fields: []string{"storage"}},
		Trigger: domain.Trigger{Intents: []string{"debug", "storage"}},
		Direct:  true, Status: "promoted",
	})
	if err != nil {
		panic(err)
	}
	p, err := h.Pack().Context(ctx, pack.ContextRequest{
		File: "store/db.go", Field: "storage", Intents: []string{"debug", "storage"}, DryRun: true,
	})

	if err != nil {
		panic(err)
	}
	for _, it := range p.Items {
		fmt.Println(it.Lane, it.RenderForm, it.Salience, it.Statement)
		for _, c := range it.Citations {
			fmt.Printf("  cites %s %q\n", c.Role, c.SourceRef)
		}
	}
	fmt.Println(p.Budget.Used <= p.Budget.Limit, p.Sections[0].Name)
	// Output:
	// core inline_compact 72 Open SQLite in WAL mode with a busy timeout
	//   cites supporting "ci://4812"
	//   cites verification ""
	// true core
}
