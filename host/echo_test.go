package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// TestRecordRefusesRenderedPacks renders a real pack and records it back:
// the guard must recognise the renderer's actual output, whole or in part.
func TestRecordRefusesRenderedPacks(t *testing.T) {
	ctx := context.Background()
	h := openTriggerHost(t)
	ev, err := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "with WAL the store tests pass", Field: "storage"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.Distill(ctx, intake.DistillRequest{Anchor: "global", Statement: "Open SQLite in WAL mode", Tier: "qi", Field: "storage",
		Supporting: []string{ev.ID}, Direct: true, Status: "promoted", Persistence: "foundational",
		Trigger: domain.Trigger{Intents: []string{"storage"}}})
	if err != nil {
		t.Fatal(err)
	}
	pack, err := h.Pack().Context(ctx, pack.ContextRequest{Query: "sqlite wal", Field: "storage", Intents: []string{"storage"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pack.Rendered, c.ID) {
		t.Fatalf("the pack does not render the card:\n%s", pack.Rendered)
	}
	var cardLine string
	for _, l := range strings.Split(pack.Rendered, "\n") {
		if strings.Contains(l, c.ID) {
			cardLine = l
			break
		}
	}
	for name, content := range map[string]string{
		"whole pack":  pack.Rendered,
		"quoted pack": "> " + strings.ReplaceAll(pack.Rendered, "\n", "\n> "),
		"card line":   "the agent was told: " + cardLine,
	} {
		_, err := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: content})
		if host.KindOf(err) != host.KindInvalid || !strings.Contains(err.Error(), "own echo") {
			t.Errorf("%s: err = %v, want a refusal naming the echo", name, err)
		}
	}
	// An agent's own words about a card are evidence.
	if _, err := h.Intake().Record(ctx, intake.RecordRequest{Anchor: "global", Content: "card " + c.ID + " held: tests pass with WAL on"}); err != nil {
		t.Errorf("own words refused: %v", err)
	}
}
