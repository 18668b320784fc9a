package pack

import (
	"slices"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/store"
)

func TestSignalVerdicts(t *testing.T) {
	sig := func(actor string, at domain.ActorType, card, signal, request, terms, day string) store.CardSignal {
		return store.CardSignal{CardID: card, Signal: signal, Actor: actor, ActorType: at, RequestID: request, RequestTerms: terms,
			CreatedAt: day + "T10:00:00.000Z"}
	}
	const d1, d2 = "2026-03-02", "2026-03-03"
	agent, human := domain.ActorAgent, domain.ActorHuman
	for _, tc := range []struct {
		name string
		sigs []store.CardSignal
		want []string
	}{
		{"one actor, one request: the first counts, whatever the signal",
			[]store.CardSignal{sig("a", agent, "kc_1", "rejected", "rq_1", "x", d1), sig("a", agent, "kc_1", "rejected", "rq_1", "x", d1), sig("a", agent, "kc_1", "used", "rq_1", "x", d2)},
			[]string{"", cardview.NotCountedRepeat, cardview.NotCountedRepeat}},
		{"no request: one per actor and card; the same terms are the same request",
			[]store.CardSignal{sig("a", agent, "kc_1", "rejected", "", "", d1), sig("a", agent, "kc_1", "rejected", "", "", d2), sig("a", agent, "kc_1", "used", "", "q w", d2), sig("a", agent, "kc_1", "used", "", "q w", d2)},
			[]string{"", cardview.NotCountedRepeat, "", cardview.NotCountedRepeat}},
		{"other actors, other cards and other requests count",
			[]store.CardSignal{sig("a", agent, "kc_1", "used", "rq_1", "", d1), sig("b", agent, "kc_1", "used", "rq_1", "", d1), sig("a", agent, "kc_2", "used", "rq_1", "", d1), sig("a", agent, "kc_1", "used", "rq_2", "", d2)},
			[]string{"", "", "", ""}},
		{"a day's limit per card and actor type; repeats take no place",
			[]store.CardSignal{
				sig("a", agent, "kc_1", "used", "rq_1", "", d1), sig("a", agent, "kc_1", "used", "rq_1", "", d1),
				sig("b", agent, "kc_1", "used", "rq_2", "", d1), sig("c", agent, "kc_1", "rejected", "rq_3", "", d1),
				sig("d", agent, "kc_1", "rejected", "rq_4", "", d1), sig("p", human, "kc_1", "used", "rq_4", "", d1),
				sig("e", agent, "kc_2", "used", "rq_4", "", d1), sig("d", agent, "kc_1", "rejected", "rq_4", "", d2),
			},
			[]string{"", cardview.NotCountedRepeat, "", "", cardview.NotCountedDailyLimit, "", "", ""}},
		{"neutral signals and card-less misses are never limited and take no place",
			[]store.CardSignal{sig("a", agent, "kc_1", "neutral", "rq_1", "", d1), sig("a", agent, "kc_1", "used", "rq_1", "", d1), sig("a", agent, "", "miss", "rq_1", "", d1), sig("a", agent, "", "miss", "rq_1", "", d1)},
			[]string{"", "", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cardview.SignalVerdicts(tc.sigs); !slices.Equal(got, tc.want) {
				t.Errorf("verdicts %q, want %q", got, tc.want)
			}
		})
	}
}
