package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// auditTurnedDown is the number of rejected and rollback signals in 30
// days from which the audit flags a card as turned down.
const auditTurnedDown = 2

// cardSignalEvents reads the cooling window's adoption signals of cards,
// by card, oldest first.
func (a *Auditor) cardSignalEvents(ctx context.Context, ids []string, now time.Time) (map[string][]store.AdoptionEvent, error) {
	out := map[string][]store.AdoptionEvent{}
	since := store.FormatTime(now.Add(-cardview.CoolingWindow))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		evs, err := a.cfg.Store.ListAdoption(ctx, store.AdoptionFilter{CardIDs: ids[:n], Since: since})
		if err != nil {
			return nil, hosterr.Internal(err, "audit: read adoption signals")
		}
		for _, e := range evs {
			out[e.CardID] = append(out[e.CardID], e)
		}
		ids = ids[n:]
	}
	return out, nil
}

// signalCountsOf counts signals by kind; nil for none.
func signalCountsOf(evs []store.AdoptionEvent) map[string]int {
	if len(evs) == 0 {
		return nil
	}
	m := map[string]int{}
	for _, e := range evs {
		m[e.Signal]++
	}
	return m
}

// contradictionFindings is the one place contradiction signals become audit
// output: a "contradicted" warning and a suggested demote citing the
// signals' evidence. A signal never changes a status: a person decides. The
// signallers' notes stay out, since agents read the audit too.
func contradictionFindings(c domain.Card, evs []store.AdoptionEvent) ([]Warning, []Suggestion) {
	var n int
	var evidence []string
	for _, e := range evs {
		if e.Signal != "contradiction" {
			continue
		}
		n++
		if e.EvidenceID != "" && !slices.Contains(evidence, e.EvidenceID) {
			evidence = append(evidence, e.EvidenceID)
		}
	}
	if n == 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("%d contradiction signals in 30 days citing evidence %s", n, strings.Join(evidence, ", "))
	if len(evidence) == 0 {
		msg = fmt.Sprintf("%d contradiction signals in 30 days, none citing evidence: a suggestion to review, not a contest (`palace adoption review --card %s` has their notes)", n, c.ID)
	}
	w := Warning{Code: "contradicted", Message: msg}
	s := Suggestion{Action: string(domain.ActionDemote), Why: "an agent saw it contradicted; demote it with that evidence as counterexample if it holds"}
	if len(evidence) == 0 {
		s.Why = "an agent saw it contradicted but linked no evidence: review it; if it does not hold, record what contradicts it, then demote with that evidence"
		s.Command = fmt.Sprintf("palace record --content \"what contradicts it\" --source-ref REF && palace demote %s --reason \"contradicted\" --counterexample EV_ID", c.ID)
	} else {
		s.Command = fmt.Sprintf("palace demote %s --reason \"contradicted\" --counterexample %s", c.ID, strings.Join(evidence, ","))
	}
	return []Warning{w}, []Suggestion{s}
}

// turnedDownFindings flags a card agents keep rejecting or rolling back.
func turnedDownFindings(c domain.Card, counts map[string]int) ([]Warning, []Suggestion) {
	n := counts["rejected"] + counts["rollback"]
	if n < auditTurnedDown {
		return nil, nil
	}
	return []Warning{{Code: "turned_down", Message: fmt.Sprintf("rejected %d and rolled back %d times in 30 days (used %d): it cools for requests like those", counts["rejected"], counts["rollback"], counts["used"]+counts["accepted"])}},
		[]Suggestion{{Action: domain.AuditRescope, Why: "agents turn it down: narrow its scope to where it helps (`palace adoption review --card " + c.ID + "` has their notes)", Command: auditCommand(c.ID, domain.AuditRescope)}}
}
