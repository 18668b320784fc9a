package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// CandidateDaysEnv sets how many days a candidate may wait for its gate
// before `palace audit --apply-expiry` archives it (a request's own
// MaxAgeDays wins over it).
const CandidateDaysEnv = "PALACE_CANDIDATE_DAYS"

// DefaultCandidateDays is how long a candidate stays a proposal.
const DefaultCandidateDays = 30

// CandidateRequest selects stale candidates.
type CandidateRequest struct {
	// MaxAgeDays is the age from which a candidate is stale. Defaults to
	// $PALACE_CANDIDATE_DAYS, else DefaultCandidateDays.
	MaxAgeDays int `json:"max_age_days,omitempty"`
	// Apply archives (retires) every stale candidate: human mode only.
	Apply bool `json:"apply,omitempty"`
}

// CandidateReport lists the candidates of the visible anchors with their
// age; Stale are those older than MaxAgeDays or past their expires_at,
// Archived those Apply retired.
type CandidateReport struct {
	AsOf       string         `json:"as_of"`
	MaxAgeDays int            `json:"max_age_days"`
	Candidates []CandidateRow `json:"candidates"`
	Stale      int            `json:"stale"`
	Archived   []string       `json:"archived"`
}

// CandidateRow is one candidate of the report.
type CandidateRow struct {
	ID        string             `json:"id"`
	Statement string             `json:"statement"`
	Tier      domain.Tier        `json:"tier"`
	Anchor    cardview.AnchorRef `json:"anchor"`
	CreatedAt string             `json:"created_at"`
	AgeDays   int                `json:"age_days"`
	ExpiresAt string             `json:"expires_at,omitempty"`
	// Stale says why the candidate is due for archiving ("" when it is not).
	Stale string `json:"stale,omitempty"`
}

// Candidates lists the visible candidate cards, oldest first, marking those
// over the age limit or past expiry. With Apply (human mode) each stale one
// is retired, kept for audit but never served, in one transaction.
func (h *Host) Candidates(ctx context.Context, req CandidateRequest) (CandidateReport, error) {
	days, err := daysSetting(req.MaxAgeDays, "candidate_days", "candidate age", CandidateDaysEnv, DefaultCandidateDays)
	if err != nil {
		return CandidateReport{}, err
	}
	if req.Apply {
		if err := h.gatekeeper().RequireHuman("audit --apply-expiry"); err != nil {
			return CandidateReport{}, err
		}
	}
	now := h.now()
	rep := CandidateReport{AsOf: store.FormatTime(now), MaxAgeDays: days, Candidates: []CandidateRow{}, Archived: []string{}}
	cards, err := h.store.ListCards(ctx, store.CardFilter{Statuses: []domain.Status{domain.StatusCandidate}, AnchorIDs: h.loc.ChainIDs()})
	if err != nil {
		return CandidateReport{}, internal(err, "list candidates")
	}
	cutoff := store.FormatTime(now.Add(-time.Duration(days) * 24 * time.Hour))
	stamp := store.FormatTime(now)
	var stale []domain.Card
	for _, c := range cards {
		r := CandidateRow{ID: c.ID, Statement: c.Statement, Tier: c.Tier, Anchor: h.anchorRef(ctx, c.AnchorID),
			CreatedAt: c.CreatedAt, AgeDays: cardview.DaysSince(c.CreatedAt, now), ExpiresAt: c.ExpiresAt}
		switch {
		case c.ExpiresAt != "" && c.ExpiresAt <= stamp:
			r.Stale = "expired " + c.ExpiresAt
		case c.CreatedAt <= cutoff:
			r.Stale = fmt.Sprintf("a candidate for %d days, over the %d-day limit", r.AgeDays, days)
		}
		if r.Stale != "" {
			rep.Stale++
			stale = append(stale, c)
		}
		rep.Candidates = append(rep.Candidates, r)
	}
	// Oldest first: the ones waiting longest lead.
	slices.SortStableFunc(rep.Candidates, func(a, b CandidateRow) int { return strings.Compare(a.CreatedAt+a.ID, b.CreatedAt+b.ID) })
	if !req.Apply || len(stale) == 0 {
		return rep, nil
	}
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		for _, c := range stale {
			why := ""
			for _, r := range rep.Candidates {
				if r.ID == c.ID {
					why = r.Stale
				}
			}
			if _, err := h.door().Apply(ctx, tx, authority.Change{Op: authority.OpExpire, CardID: c.ID, Reason: "archived: " + why,
				Data: map[string]any{"change": "expired", "max_age_days": days}}); err != nil {
				return err
			}
			rep.Archived = append(rep.Archived, c.ID)
		}
		return nil
	})
	if err != nil {
		return CandidateReport{}, hosterr.Classify(conflict(err), "archive stale candidates")
	}
	return rep, nil
}
