package host

import (
	"context"
	"errors"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/store"
)

// Card is a card as the host shows it: the row, its anchor, its links and
// its evidence counts by role.
type Card struct {
	domain.Card
	Anchor cardview.AnchorRef `json:"anchor"`
	Links  []domain.Link      `json:"links,omitempty"`
	Counts domain.RoleCounts  `json:"counts"`
	// Authoritative is Authoritative(Status), for readers of the JSON.
	Authoritative bool `json:"authoritative"`
	// Contest is set by ShowCard when the card is contested.
	Contest *cardview.ItemContest `json:"contest,omitempty"`
	// Stale is set by ShowCard when cited code changed or the review date
	// passed.
	Stale *staleness.Stale `json:"stale,omitempty"`
	// Supersedes is the card this one replaces, SupersededBy those
	// replacing it; set by ShowCard.
	Supersedes   string   `json:"supersedes,omitempty"`
	SupersededBy []string `json:"superseded_by,omitempty"`
	// NearDuplicates, set by Distill, are live cards at the anchor nearly
	// repeating the new one (a warning).
	NearDuplicates []Neighbour `json:"near_duplicates,omitempty"`
}

// CardFilter selects cards for ListCards.
type CardFilter struct {
	Tier   string
	Status string
	// Anchor is worktree, repo, global, "" (every anchor visible) or "all"
	// (every anchor, needs AllRepos).
	Anchor string
	Field  string
	Limit  int
	// AllRepos reads every repository's cards: with Anchor "" or "all".
	AllRepos bool
}

// ViewCard is ShowCard for someone who asked to see the card, recording one
// "viewed" injection event (which warms its lane); a failure to record is
// KindInternal.
func (h *Host) ViewCard(ctx context.Context, id string, allRepos bool) (Card, error) {
	c, err := h.ReadCard(ctx, id, allRepos)
	if err != nil {
		return Card{}, err
	}
	row := []store.InjectionEvent{{RequestID: "view", CardID: id, Outcome: string(domain.OutcomeViewed), CreatedAt: h.stamp()}}
	if err := h.pack.RecordInjections(ctx, row, nil, "record the view of "+id); err != nil {
		return Card{}, err
	}
	return c, nil
}

// ReadCard is ShowCard for a reader outside palace; another repository's
// card is KindInvalid unless allRepos. It records nothing.
func (h *Host) ReadCard(ctx context.Context, id string, allRepos bool) (Card, error) {
	c, err := h.ShowCard(ctx, id)
	if err != nil {
		return Card{}, err
	}
	if err := h.mayRead(ctx, c.Card, allRepos); err != nil {
		return Card{}, err
	}
	return c, nil
}

// ShowCard returns one card with its links. It records nothing; see
// ViewCard.
func (h *Host) ShowCard(ctx context.Context, id string) (Card, error) {
	c, err := h.store.Card(ctx, id)
	if err != nil {
		return Card{}, gatekeep.NotFound(err, "card", id)
	}
	links, err := h.store.Links(ctx, id)
	if err != nil {
		return Card{}, internal(err, "read card %s", id)
	}
	v, err := h.view(ctx, c, links)
	if err != nil {
		return Card{}, err
	}
	open, err := h.openContests(ctx, []string{id})
	if err != nil {
		return Card{}, err
	}
	v.Contest = cardview.ContestOf(open[id])
	v.Stale = h.cardStale(ctx, c)
	sup, err := h.store.Supersessions(ctx, []string{id})
	if err != nil {
		return Card{}, internal(err, "read card %s", id)
	}
	v.Supersedes, v.SupersededBy = sup[id].Supersedes, sup[id].SupersededBy
	return v, nil
}

// storeCardFilter checks f and turns it into the store's filter.
func (h *Host) storeCardFilter(ctx context.Context, f CardFilter) (store.CardFilter, error) {
	if err := checkLimit(f.Limit); err != nil {
		return store.CardFilter{}, err
	}
	sf := store.CardFilter{Field: f.Field, Limit: f.Limit}
	if f.Tier != "" {
		if err := oneOf("tier", domain.Tier(f.Tier), domain.Tiers); err != nil {
			return store.CardFilter{}, err
		}
		sf.Tiers = []domain.Tier{domain.Tier(f.Tier)}
	}
	if f.Status != "" {
		if err := oneOf("status", domain.Status(f.Status), domain.Statuses); err != nil {
			return store.CardFilter{}, err
		}
		sf.Statuses = []domain.Status{domain.Status(f.Status)}
	}
	ids, err := h.crossRepoIDs(ctx, f.Anchor, f.AllRepos)
	if err != nil {
		return store.CardFilter{}, err
	}
	sf.AnchorIDs = ids
	return sf, nil
}

// ListCardsTotal is ListCards with the number of cards matching f
// regardless of its limit, as ListEvidence gives.
func (h *Host) ListCardsTotal(ctx context.Context, f CardFilter) ([]Card, int, error) {
	cards, err := h.ListCards(ctx, f)
	if err != nil || f.Limit <= 0 || len(cards) < f.Limit {
		return cards, len(cards), err
	}
	sf, err := h.storeCardFilter(ctx, CardFilter{Tier: f.Tier, Status: f.Status, Anchor: f.Anchor, Field: f.Field, AllRepos: f.AllRepos})
	if err != nil {
		return nil, 0, err
	}
	rows, err := h.store.ListCards(ctx, sf)
	if err != nil {
		return nil, 0, internal(err, "count cards")
	}
	return cards, len(rows), nil
}

// ListCards lists cards, dao_tian first.
func (h *Host) ListCards(ctx context.Context, f CardFilter) ([]Card, error) {
	sf, err := h.storeCardFilter(ctx, f)
	if err != nil {
		return nil, err
	}
	rows, err := h.store.ListCards(ctx, sf)
	if err != nil {
		return nil, internal(err, "list cards")
	}
	links, err := h.store.LinksFor(ctx, cardIDs(rows))
	if err != nil {
		return nil, internal(err, "list cards")
	}
	out := make([]Card, 0, len(rows))
	for _, c := range rows {
		v, err := h.view(ctx, c, links[c.ID])
		if err != nil {
			return nil, err
		}
		v.Links = nil
		out = append(out, v)
	}
	return out, nil
}

// CardEvents returns a card's audit trail; another repository's card needs
// allRepos (KindInvalid otherwise).
func (h *Host) CardEvents(ctx context.Context, id string, allRepos bool) ([]domain.Event, error) {
	c, err := h.store.Card(ctx, id)
	if err != nil {
		return nil, gatekeep.NotFound(err, "card", id)
	}
	if err := h.mayRead(ctx, c, allRepos); err != nil {
		return nil, err
	}
	evs, err := h.store.Events(ctx, id)
	if err != nil {
		return nil, internal(err, "read events of %s", id)
	}
	return evs, nil
}

// ShowEvidence returns one evidence row; another repository's evidence
// needs allRepos (KindInvalid otherwise).
func (h *Host) ShowEvidence(ctx context.Context, id string, allRepos bool) (intake.Evidence, error) {
	e, err := h.store.Evidence(ctx, id)
	if err != nil {
		return intake.Evidence{}, gatekeep.NotFound(err, "evidence", id)
	}
	out := intake.Evidence{Evidence: e, Anchor: h.anchorRef(ctx, e.AnchorID)}
	if !allRepos && h.loc.KindOf(e.AnchorID) == "" {
		return intake.Evidence{}, invalid("id", "evidence %s is anchored to %s %s, not to this checkout: reading another repository's evidence needs --all-repos", id, out.Anchor.Kind, cardview.DisplayIdentity(out.Anchor))
	}
	if err := h.foreignRead(ctx, allRepos, e.AnchorID); err != nil {
		return intake.Evidence{}, err
	}
	if orig, err := h.store.DuplicateOf(ctx, id); err != nil {
		return intake.Evidence{}, internal(err, "read evidence %s", id)
	} else {
		out.DuplicateOf = orig
	}
	switch r, err := h.store.EvidenceRedaction(ctx, id); {
	case err == nil:
		out.Redaction = &r
	case !errors.Is(err, store.ErrNotFound):
		return intake.Evidence{}, internal(err, "read evidence %s", id)
	}
	return out, nil
}

// EvidenceFilter selects evidence for ListEvidence.
type EvidenceFilter struct {
	Field string
	// Query keeps the evidence holding every word of it, best full-text
	// match first.
	Query string
	// Anchor and AllRepos as in CardFilter.
	Anchor   string
	Limit    int
	AllRepos bool
}

// ListEvidence lists evidence newest first, with the total match count.
func (h *Host) ListEvidence(ctx context.Context, f EvidenceFilter) ([]intake.Evidence, int, error) {
	sf := store.EvidenceFilter{Field: f.Field, Query: f.Query, Limit: f.Limit}
	ids, err := h.crossRepoIDs(ctx, f.Anchor, f.AllRepos)
	if err != nil {
		return nil, 0, err
	}
	sf.AnchorIDs = ids
	if err := checkLimit(f.Limit); err != nil {
		return nil, 0, err
	}
	rows, total, err := h.store.ListEvidence(ctx, sf)
	if err != nil {
		return nil, 0, internal(err, "list evidence")
	}
	out := make([]intake.Evidence, len(rows))
	for i, e := range rows {
		out[i] = intake.Evidence{Evidence: e, Anchor: h.anchorRef(ctx, e.AnchorID)}
	}
	return out, total, nil
}

func (h *Host) view(ctx context.Context, c domain.Card, links []domain.Link) (Card, error) {
	return Card{
		Card:          c,
		Anchor:        h.anchorRef(ctx, c.AnchorID),
		Links:         links,
		Counts:        domain.CountRoles(links),
		Authoritative: c.Status.Authoritative(),
	}, nil
}

// anchorRef names an anchor id; ids in the current chain resolve without a query.
func (h *Host) anchorRef(ctx context.Context, id string) cardview.AnchorRef {
	return cardview.RefOf(ctx, h.store, h.loc, id)
}
