package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

// One statement typed in its composed (NFC) and decomposed (NFD) spellings
// is one card: the second distill is refused naming the first, and the
// card keeps the composed spelling whichever came first.
func TestDistillTreatsNFCAndNFDAsOneStatement(t *testing.T) {
	e := newCxEnv(t)
	h := e.open(e.repo("r", "https://example.com/o/r.git"), host.Human)
	ctx := context.Background()
	ev := e.ev(h, "résumé parsing needs UTF-8", "general", "")
	const nfd = "Re\u0301sume\u0301 files are parsed as UTF-8"
	first, err := h.Distill(ctx, intake.DistillRequest{Statement: nfd, Tier: "shu", Supporting: []string{ev}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "R\u00e9sum\u00e9 files are parsed as UTF-8"; first.Statement != want {
		t.Errorf("stored statement %q, want its NFC form %q", first.Statement, want)
	}
	_, err = h.Distill(ctx, intake.DistillRequest{Statement: "R\u00e9sum\u00e9 files are parsed as UTF-8.", Tier: "shu", Supporting: []string{ev}})
	var he *host.Error
	if !errors.As(err, &he) || he.Kind != host.KindInvalid || !strings.Contains(he.Error(), first.ID) {
		t.Fatalf("second spelling: err = %v, want KindInvalid naming %s", err, first.ID)
	}
}
