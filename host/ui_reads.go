package host

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/store"
)

// The reads of the review desk (`palace ui`) write nothing; every change a
// reviewer makes goes through the lifecycle methods.

// Review queue orders: newest first, or highest ReviewItem.Value first
// (newest first among equals).
const (
	ReviewNewest = "newest"
	ReviewValue  = "value"
)

// MaxReviewPage is the largest page ReviewQueue returns.
const MaxReviewPage = 100

// ReviewRequest asks for one page of the candidate queue.
type ReviewRequest struct {
	// Order is ReviewNewest (the default) or ReviewValue.
	Order string
	// Offset skips that many candidates; Limit is the page size, 20 when
	// 0, at most MaxReviewPage.
	Offset, Limit int
}

// ReviewPage is one page of the candidates of the anchors visible from
// here.
type ReviewPage struct {
	Order  string `json:"order"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	// Total counts every candidate of the queue, not only this page's.
	Total int          `json:"total"`
	Items []ReviewItem `json:"items"`
}

// ReviewItem is one candidate with what a reviewer needs to decide on it.
type ReviewItem struct {
	Card Card `json:"card"`
	// Value orders the queue by value: distinct supporting evidence, plus
	// verification and teaching twice, less counterexamples three times.
	Value int `json:"value"`
	// AgeDays is the candidate's age; Expired is set when its expires_at
	// has passed (`palace audit --apply-expiry` archives it).
	AgeDays int  `json:"age_days"`
	Expired bool `json:"expired"`
	// Citations are up to eight links, counterexamples first; Evidence the
	// rows they cite, by id.
	Citations []domain.Link              `json:"citations"`
	Evidence  map[string]domain.Evidence `json:"evidence"`
	// Gate is the gate's answer for the card's next step (promotion to its
	// default target), as `palace gate` gives it.
	Gate gatekeep.Result `json:"gate"`
	// Neighbours are cards visible from here that say the same (Exact) or
	// nearly the same.
	Neighbours []Neighbour `json:"neighbours"`
}

// Neighbour is a card whose statement matches another's.
type Neighbour struct {
	ID        string             `json:"id"`
	Statement string             `json:"statement"`
	Tier      domain.Tier        `json:"tier"`
	Status    domain.Status      `json:"status"`
	Anchor    cardview.AnchorRef `json:"anchor"`
	// Exact is set when the normalized statements are equal; Similarity is
	// the share of words the two statements have in common (Jaccard, 0..1).
	Exact      bool    `json:"exact"`
	Similarity float64 `json:"similarity"`
}

// ReviewQueue returns one page of the candidates visible from here, with
// evidence, the gate's answer for the next step and near-duplicates. It
// writes nothing; bad input is KindInvalid.
func (h *Host) ReviewQueue(ctx context.Context, req ReviewRequest) (ReviewPage, error) {
	order := cmp.Or(req.Order, ReviewNewest)
	if order != ReviewNewest && order != ReviewValue {
		return ReviewPage{}, invalid("order", "order %q is not valid: use %s or %s", order, ReviewNewest, ReviewValue)
	}
	if req.Offset < 0 || req.Limit < 0 || req.Limit > MaxReviewPage {
		return ReviewPage{}, invalid("limit", "offset %d, limit %d: pass an offset ≥ 0 and a limit of 1 to %d", req.Offset, req.Limit, MaxReviewPage)
	}
	limit := cmp.Or(req.Limit, 20)
	cards, err := h.store.ListCards(ctx, store.CardFilter{Statuses: []domain.Status{domain.StatusCandidate}, AnchorIDs: h.loc.ChainIDs()})
	if err != nil {
		return ReviewPage{}, internal(err, "list candidates")
	}
	// Newest first: stored times have one fixed width and sort as text.
	slices.SortFunc(cards, func(a, b domain.Card) int {
		return cmp.Or(strings.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	var values map[string]int
	if order == ReviewValue {
		counts, err := h.store.LinkRoleCounts(ctx, cardIDs(cards))
		if err != nil {
			return ReviewPage{}, internal(err, "count evidence of candidates")
		}
		values = make(map[string]int, len(counts))
		for id, rc := range counts {
			values[id] = reviewValue(rc)
		}
		slices.SortStableFunc(cards, func(a, b domain.Card) int { return values[b.ID] - values[a.ID] })
	}
	page := ReviewPage{Order: order, Offset: req.Offset, Limit: limit, Total: len(cards), Items: []ReviewItem{}}
	if req.Offset >= len(cards) {
		return page, nil
	}
	cards = cards[req.Offset:min(len(cards), req.Offset+limit)]
	ids := cardIDs(cards)
	links, err := h.store.LinksFor(ctx, ids)
	if err != nil {
		return ReviewPage{}, internal(err, "read links of candidates")
	}
	cites := make(map[string][]domain.Link, len(links))
	for id, ls := range links {
		cites[id] = reviewCitations(ls)
	}
	evidence, err := h.citedEvidence(ctx, cites)
	if err != nil {
		return ReviewPage{}, err
	}
	open, err := h.openContests(ctx, ids)
	if err != nil {
		return ReviewPage{}, err
	}
	near, err := h.Neighbours(ctx, ids)
	if err != nil {
		return ReviewPage{}, err
	}
	now := h.now()
	stamp := store.FormatTime(now)
	for _, c := range cards {
		v, err := h.view(ctx, c, links[c.ID])
		if err != nil {
			return ReviewPage{}, err
		}
		// What Gate answers, from the links and contests read for the page.
		target, err := gatekeep.PromoteTarget(c, "")
		if err != nil {
			return ReviewPage{}, err
		}
		gate := h.evaluateGate(ctx, c, links[c.ID], open[c.ID], string(domain.ActionPromote), string(target), "", false)
		page.Items = append(page.Items, ReviewItem{
			Card: v, Value: reviewValue(v.Counts), AgeDays: daysSince(c.CreatedAt, now), Expired: c.ExpiresAt != "" && c.ExpiresAt <= stamp,
			Citations: cites[c.ID], Evidence: evidence, Gate: gate, Neighbours: near[c.ID],
		})
	}
	return page, nil
}

// maxReviewCitations bounds the links a queue item quotes; the card's page
// shows the rest.
const maxReviewCitations = 8

// reviewCitations are the links a queue item quotes: counterexamples
// first, then in link order.
func reviewCitations(links []domain.Link) []domain.Link {
	out := make([]domain.Link, 0, min(len(links), maxReviewCitations))
	for _, counter := range []bool{true, false} {
		for _, l := range links {
			if (l.Role == domain.RoleCounterexample) == counter && len(out) < maxReviewCitations {
				out = append(out, l)
			}
		}
	}
	return out
}

func reviewValue(rc domain.RoleCounts) int {
	return rc.Supporting + 2*rc.Verification + 2*rc.Teaching - 3*rc.Counterexample
}

func cardIDs(cards []domain.Card) []string {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	return ids
}

// citedEvidence reads the evidence the links cite, keyed by id.
func (h *Host) citedEvidence(ctx context.Context, links map[string][]domain.Link) (map[string]domain.Evidence, error) {
	var ids []string
	for _, ls := range links {
		for _, l := range ls {
			ids = append(ids, l.EvidenceID)
		}
	}
	if len(ids) == 0 {
		return map[string]domain.Evidence{}, nil
	}
	ev, err := h.store.EvidenceByIDs(ctx, ids)
	if err != nil {
		return nil, internal(err, "read cited evidence")
	}
	return ev, nil
}

const maxNeighbours = 5

// Neighbours returns, per card id, the visible cards (any status) whose
// statement is the same normalized or a near-duplicate (internal/neardup),
// most similar first, at most maxNeighbours. Unknown ids have no entry.
func (h *Host) Neighbours(ctx context.Context, ids []string) (map[string][]Neighbour, error) {
	out := map[string][]Neighbour{}
	if len(ids) == 0 {
		return out, nil
	}
	texts, err := h.store.CandidateTexts(ctx, store.CandidateQuery{AnchorIDs: h.loc.ChainIDs(), Statuses: domain.Statuses, Limit: 1})
	if err != nil {
		return nil, internal(err, "read statements")
	}
	statements := make([]string, len(texts))
	at := make(map[string]int, len(texts))
	for i, t := range texts {
		statements[i], at[t.ID] = t.Statement, i
	}
	index := neardup.NewIndex(statements)
	found := map[int]bool{}
	for _, id := range ids {
		i, ok := at[id]
		if !ok {
			continue
		}
		hits := index.Near(statements[i], i)
		hits = hits[:min(len(hits), maxNeighbours)]
		for _, x := range hits {
			found[x.Entry] = true
			t := texts[x.Entry]
			out[id] = append(out[id], Neighbour{ID: t.ID, Statement: t.Statement, Tier: t.Tier,
				Anchor: h.anchorRef(ctx, t.AnchorID), Exact: x.Exact, Similarity: x.Similarity})
		}
	}
	if len(found) == 0 {
		return out, nil
	}
	// The texts carry no status.
	want := make([]string, 0, len(found))
	for i := range found {
		want = append(want, texts[i].ID)
	}
	cards, err := h.store.CardsByIDs(ctx, want)
	if err != nil {
		return nil, internal(err, "read neighbours")
	}
	for id, ns := range out {
		for k := range ns {
			out[id][k].Status = cards[ns[k].ID].Status
		}
	}
	return out, nil
}

// CardDossier is everything about one card that a card page shows.
type CardDossier struct {
	Card Card `json:"card"`
	// Events is the card's audit trail, oldest first.
	Events []domain.Event `json:"events"`
	// Evidence are the rows the card's links cite, by id.
	Evidence map[string]domain.Evidence `json:"evidence"`
	// Gate answers for the card's next promotion; nil when it has none.
	Gate *gatekeep.Result `json:"gate,omitempty"`
	// Origin is the card this one was published from, Copy the one it was
	// published to.
	Origin *Card `json:"origin,omitempty"`
	Copy   *Card `json:"copy,omitempty"`
	// Held is set when the gate held the card's imported file back.
	Held       *teamsync.HeldCard `json:"held,omitempty"`
	Neighbours []Neighbour        `json:"neighbours"`
	// Signals are per day of the last 90 days, oldest first; Packs the pack
	// outcomes per day of the last 30; Requests the newest kept requests
	// naming the card.
	Signals  []SignalDay         `json:"signals"`
	Packs    []store.OutcomeDay  `json:"packs"`
	Requests []store.CardRequest `json:"requests"`
}

// SignalDay counts one day's adoption signals on a card, by signal.
type SignalDay struct {
	Day    string         `json:"day"`
	Counts map[string]int `json:"counts"`
}

// Dossier windows, and how many request records are scanned for packs.
const (
	dossierSignalDays = 90
	dossierPackDays   = 30
	dossierRequests   = 10
	dossierScan       = 2000
)

// CardDossier returns everything a card page shows about card id. It writes
// nothing (no view is recorded). An unknown id is KindNotFound; another
// repository's card is KindInvalid unless allRepos.
func (h *Host) CardDossier(ctx context.Context, id string, allRepos bool) (CardDossier, error) {
	c, err := h.ReadCard(ctx, id, allRepos)
	if err != nil {
		return CardDossier{}, err
	}
	d := CardDossier{Card: c}
	if d.Events, err = h.CardEvents(ctx, id, allRepos); err != nil {
		return CardDossier{}, err
	}
	if d.Evidence, err = h.citedEvidence(ctx, map[string][]domain.Link{id: c.Links}); err != nil {
		return CardDossier{}, err
	}
	if target, ok := nextTarget(c.Card); ok {
		g, err := h.Gate(ctx, id, GateRequest{Target: target, AllRepos: allRepos})
		if err != nil {
			return CardDossier{}, err
		}
		d.Gate = &g
	}
	for _, p := range []struct {
		id  string
		dst **Card
	}{{c.OriginCard, &d.Origin}, {c.PublishedTo, &d.Copy}} {
		if p.id == "" {
			continue
		}
		other, err := h.ShowCard(ctx, p.id)
		if err != nil {
			return CardDossier{}, err
		}
		*p.dst = &other
	}
	held, err := h.Team().HeldCards(ctx, []string{c.AnchorID})
	if err != nil {
		return CardDossier{}, err
	}
	for i := range held {
		if held[i].CardID == id {
			d.Held = &held[i]
		}
	}
	near, err := h.Neighbours(ctx, []string{id})
	if err != nil {
		return CardDossier{}, err
	}
	d.Neighbours = near[id]
	now := h.now()
	sigs, err := h.store.ListAdoption(ctx, store.AdoptionFilter{CardID: id, Since: store.FormatTime(now.AddDate(0, 0, -dossierSignalDays))})
	if err != nil {
		return CardDossier{}, internal(err, "read signals of %s", id)
	}
	for _, s := range sigs {
		day := s.CreatedAt[:min(10, len(s.CreatedAt))]
		if n := len(d.Signals); n == 0 || d.Signals[n-1].Day != day {
			d.Signals = append(d.Signals, SignalDay{Day: day, Counts: map[string]int{}})
		}
		d.Signals[len(d.Signals)-1].Counts[s.Signal]++
	}
	if d.Packs, err = h.store.CardOutcomeDays(ctx, id, now.AddDate(0, 0, -dossierPackDays).UTC().Format(time.DateOnly)); err != nil {
		return CardDossier{}, internal(err, "read packs of %s", id)
	}
	if d.Requests, err = h.store.CardRequests(ctx, id, dossierRequests, dossierScan); err != nil {
		return CardDossier{}, internal(err, "read packs of %s", id)
	}
	return d, nil
}

// nextTarget is the promotion target a card page asks the gate about; false
// for a card that cannot be promoted further.
func nextTarget(c domain.Card) (string, bool) {
	if c.Status == domain.StatusCandidate || c.Status == domain.StatusDemoted {
		return "", true
	}
	if gatekeep.CanPromote(c.Status, domain.StatusCanonical) {
		return string(domain.StatusCanonical), true
	}
	return "", false
}

// daysSince is the whole days from a stored time to now, 0 if unparsable.
func daysSince(stamp string, now time.Time) int {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return 0
	}
	return int(now.Sub(t).Hours() / 24)
}

// CompletePath lists up to n sorted entries of the worktree completing the
// slash path prefix, directories with a trailing slash, dot-entries only for
// a dot prefix. It never reads outside the worktree.
func (h *Host) CompletePath(prefix string, n int) ([]string, error) {
	root := cmp.Or(h.loc.Worktree, h.loc.Dir)
	if root == "" || n <= 0 || path.IsAbs(prefix) || strings.Contains(prefix, "\\") {
		return []string{}, nil
	}
	dir, base := path.Split(prefix)
	if clean := path.Clean("/" + dir); dir != "" && strings.TrimPrefix(clean, "/")+"/" != dir {
		// "..", "." or doubled slashes: ask with a clean path.
		return []string{}, nil
	}
	full := filepath.Join(root, filepath.FromSlash(dir))
	// A symbolic link on the way may point anywhere: list it only when it
	// resolves inside the worktree.
	if real, err := filepath.EvalSymlinks(full); err != nil || (real != root && !strings.HasPrefix(real, root+string(filepath.Separator))) {
		return []string{}, nil
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return []string{}, nil
		}
		return nil, internal(err, "complete path %s", prefix)
	}
	out := []string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || name == ".git" || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		if out = append(out, dir+name); len(out) == n {
			break
		}
	}
	return out, nil
}
