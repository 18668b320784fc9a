package host_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
)

// laneOf is where a card ended up in p: its item lane, or inspector_only
// when it was skipped as cooled.
func laneOf(p host.Pack, id string) string {
	if it, ok := item(p, id); ok {
		return it.Lane
	}
	if skippedReason(p, id) == "skipped_cooled" {
		return "inspector_only"
	}
	return "absent"
}

// TestContextCoolingMovesLanesNeverStatus follows one card through three
// months of requests with the default policies. It used to be applied in
// file-level requests (path 15 + language 8 + field 7 + two intents 20 = 50,
// scoped); then language-level requests that name no file, no field and one
// intent (path 5 + language 8, lifted to 20 as the language matched, + field
// 5 + intent 10 = 35, plus the applied bonus) keep trimming it for budget. The trim penalty moves it to
// ref_only, and when the applied bonus ages out of the 30-day window and
// inactivity sets in it moves to inspector_only. Its status never changes.
func TestContextCoolingMovesLanesNeverStatus(t *testing.T) {
	ctx := context.Background()
	e := newCxEnv(t)
	h := e.openClock(e.repo("a", "https://github.com/acme/a"))
	id := e.card(h, scoped("keep write transactions short", "shu"))

	fileReq := cxScopedRequest()
	fileReq.DryRun = false
	for day := range 5 {
		e.now = cxEpoch.Add(time.Duration(day) * 24 * time.Hour)
		p, err := h.Context(ctx, fileReq)
		if err != nil {
			t.Fatal(err)
		}
		if it, ok := item(p, id); !ok || it.RenderForm != "inline_compact" || it.Trimmed != nil {
			t.Fatalf("day %d: the card is not applied inline: %+v", day, it)
		}
	}

	langReq := host.ContextRequest{Language: "go", Intents: []string{"debug"}, Budget: 1, Explain: true}
	var lanes []string
	var last host.Pack
	for day := 5; day <= 150; day += 3 {
		e.now = cxEpoch.Add(time.Duration(day) * 24 * time.Hour)
		p, err := h.Context(ctx, langReq)
		if err != nil {
			t.Fatal(err)
		}
		lane := laneOf(p, id)
		if len(lanes) == 0 || lanes[len(lanes)-1] != lane {
			lanes = append(lanes, lane)
			t.Logf("day %3d: %s", day, lane)
		}
		if it, ok := item(p, id); ok && it.Trimmed == nil {
			t.Fatalf("day %d: a budget of 1 character did not trim the card: %+v", day, it)
		}
		last = p
		if lane == "inspector_only" {
			break
		}
	}
	if want := []string{"scoped", "ref_only", "inspector_only"}; !slices.Equal(lanes, want) {
		t.Fatalf("lanes over time = %v, want %v", lanes, want)
	}
	for _, s := range last.Skipped {
		if s.ID == id && (s.SalienceBreakdown["trimmed"] >= 0 || s.SalienceBreakdown["inactivity"] >= 0) {
			t.Errorf("the cooled card's breakdown does not show why: %v", s.SalienceBreakdown)
		}
	}
	c, err := h.ShowCard(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != "promoted" {
		t.Errorf("cooling changed the status to %s", c.Status)
	}
	events, err := h.CardEvents(ctx, id)
	if err != nil || len(events) != 1 {
		t.Errorf("cooling wrote card events: %v, %v", events, err)
	}
}
