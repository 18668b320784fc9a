package pack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// memoryExists counts what exists where the pack looked and, when nothing
// renders, says why (never claim absence falsely).
func (pl *Pipeline) memoryExists(ctx context.Context, a *assembly) error {
	var anchors []string
	if !a.req.AllRepos {
		anchors = pl.Loc.ChainIDs()
	}
	counts, err := pl.Store.CountMemory(ctx, anchors, domain.AuthoritativeStatuses(), store.FormatTime(a.now))
	if err != nil {
		return hosterr.Internal(err, "count memory")
	}
	m := MemoryExists{ByStatus: map[string]int{}, Expired: counts.Expired, Evidence: counts.Evidence}
	for _, st := range domain.Statuses {
		n := counts.CardsByStatus[string(st)]
		m.ByStatus[string(st)] = n
		m.Cards += n
		if st.Authoritative() {
			m.Authoritative += n
		}
	}
	for _, c := range a.considered {
		if c.scope.Applies {
			m.Applies++
		}
	}
	for _, it := range a.pack.Items {
		if it.RenderForm != domain.FormInspectorOnly {
			m.Rendered++
		}
	}
	if m.Rendered == 0 {
		if !a.req.AllRepos {
			allCards, err := pl.Store.CountCards(ctx)
			if err != nil {
				return hosterr.Internal(err, "count memory")
			}
			allEvidence, err := pl.Store.CountEvidence(ctx)
			if err != nil {
				return hosterr.Internal(err, "count memory")
			}
			m.Elsewhere = &MemoryElsewhere{Cards: allCards - m.Cards, Evidence: allEvidence - m.Evidence}
		}
		m.Reason = emptyReason(a, m)
	}
	a.pack.MemoryExists = m
	return nil
}

// emptyReason explains an empty pack from the counts, most basic cause first.
func emptyReason(a *assembly, m MemoryExists) string {
	where := "at this location's anchors (worktree, repo and global)"
	if a.req.AllRepos {
		where = "in this palace"
	}
	var elsewhere string
	if m.Elsewhere != nil && (m.Elsewhere.Cards > 0 || m.Elsewhere.Evidence > 0) {
		elsewhere = fmt.Sprintf(" %s and %s exist in other repositories or worktrees, which a request here never sees; pull them explicitly with --all-repos.",
			countNoun(m.Elsewhere.Cards, "card"), countNoun(m.Elsewhere.Evidence, "evidence row"))
	}
	byCause := map[string]int{}
	for _, s := range a.pack.Skipped {
		byCause[s.Reason]++
	}
	candidates := m.ByStatus[string(domain.StatusCandidate)]
	switch {
	case m.Cards == 0 && m.Evidence == 0:
		return "Nothing is recorded " + where + " yet." + elsewhere
	case m.Cards == 0:
		return fmt.Sprintf("%s exist %s but no card has been distilled from them yet (see distill_suggestions).%s", countNoun(m.Evidence, "evidence row"), where, elsewhere)
	case m.Authoritative == 0 && (candidates == 0 || !a.pack.Request.IncludeCandidates):
		hint := ""
		if candidates > 0 {
			hint = " Candidates join with --include-candidates."
		}
		return fmt.Sprintf("%s exist %s but none is authoritative (%s).%s%s", countNoun(m.Cards, "card"), where, countList(m.ByStatus, domain.Statuses), hint, elsewhere)
	case m.Authoritative > 0 && m.Authoritative == m.Expired && !a.pack.Request.IncludeCandidates:
		return fmt.Sprintf("All %s %s have expired; renew them with `palace audit action ID --action set_expiry`.%s", countNoun(m.Authoritative, "authoritative card"), where, elsewhere)
	case m.Applies == 0:
		return fmt.Sprintf("%s %s were considered and none applies to this request (scope policy: %s).%s",
			countNoun(len(a.considered), "card"), where, firstWhy(a), elsewhere)
	case byCause["skipped_cooled"] > 0 && byCause["skipped_cooled"]+byCause["duplicate"] >= m.Applies:
		return fmt.Sprintf("%s %s but all are cooled to inspector_only (see `palace audit --lane inspector_only` for why).", countNoun(byCause["skipped_cooled"], "card"), verb(byCause["skipped_cooled"], "applies", "apply"))
	case slices.ContainsFunc(a.pack.Items, func(it Item) bool { return it.Trimmed != nil }):
		return fmt.Sprintf("%s %s but none fits the budget of %d characters; raise --budget.", countNoun(m.Applies, "card"), verb(m.Applies, "applies", "apply"), a.pack.Request.Budget)
	case byCause["dao_tian_limit"] > 0 && byCause["dao_tian_limit"]+byCause["duplicate"] >= m.Applies:
		return fmt.Sprintf("Only dao_tian cards apply and --dao-tian-limit %d leaves them out.", a.pack.Request.DaoTianLimit)
	case a.pack.Request.Wake:
		return fmt.Sprintf("No task was named, so the pack holds the wake-up layer (dao_tian, foundational and protected cards, then the most valued), and none of the %s that apply is in it (%s). Ask with the task (a query or a file) to rank them.",
			countNoun(m.Applies, "card"), causeList(byCause))
	case byCause["not_relevant"] > 0:
		return fmt.Sprintf("%s %s but the request is about none of them (%s).", countNoun(m.Applies, "card"), verb(m.Applies, "applies", "apply"), causeList(byCause))
	}
	none := "none renders"
	if m.Applies == 1 {
		none = "it does not render"
	}
	none += " (" + causeList(byCause) + ")"
	return fmt.Sprintf("%s %s but %s.", countNoun(m.Applies, "card"), verb(m.Applies, "applies", "apply"), none)
}

func firstWhy(a *assembly) string {
	for _, c := range a.considered {
		if len(c.scope.Why) > 0 {
			return c.card.ID + ": " + strings.Join(c.scope.Why, "; ")
		}
	}
	return "no reason given"
}

// countList names the non-zero counts of by, in the order of keys.
func countList[K ~string](by map[string]int, keys []K) string {
	var parts []string
	for _, k := range keys {
		if n := by[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// causeList names how many skipped cards each reason left out; it is never
// empty, so a reason never reads "()".
func causeList(by map[string]int) string {
	return cmp.Or(countList(by, []string{"skipped_scope", "skipped_cooled", "not_relevant", "not_in_wake", "lane_limit", "duplicate", "dao_tian_limit"}),
		"no card reached an inline lane or a reference line")
}

func countNoun(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// distillSuggestions are up to three fields of the visible anchors with at
// least DistillMinEvidence evidence rows and no authoritative card, most
// evidence first.
func (pl *Pipeline) distillSuggestions(ctx context.Context) ([]DistillSuggestion, error) {
	rows, err := pl.Store.FieldsWithoutCards(ctx, pl.Loc.ChainIDs(), domain.AuthoritativeStatuses(), DistillMinEvidence, 3)
	if err != nil {
		return nil, hosterr.Internal(err, "find distill suggestions")
	}
	out := make([]DistillSuggestion, 0, len(rows))
	for _, r := range rows {
		out = append(out, DistillSuggestion{
			Field: r.Field, EvidenceCount: r.Evidence, SampleIDs: r.Samples, SuggestedTier: string(domain.TierDaoRen),
			Command: fmt.Sprintf("palace distill --field %s --tier dao_ren --statement \"…\" --supporting %s", cardview.ShellWord(r.Field), strings.Join(r.Samples, ",")),
		})
	}
	return out, nil
}
