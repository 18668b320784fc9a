package adoption

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// Filter selects the signals of Stats and Review.
type Filter struct {
	// CardID keeps one card's signals.
	CardID string `json:"card_id,omitempty"`
	// Since is a date (YYYY-MM-DD), an RFC 3339 time or a number of days
	// back ("30d"); empty means every signal.
	Since string `json:"since,omitempty"`
}

// Stats counts signals per card and per field.
type Stats struct {
	// Since is the resolved lower bound, "" for none.
	Since   string         `json:"since,omitempty"`
	Total   int            `json:"total"`
	Signals map[string]int `json:"signals"`
	// Cards and Fields are ordered by number of signals, then id or name.
	Cards  []CardAdoption  `json:"cards"`
	Fields []FieldAdoption `json:"fields"`
}

// CardAdoption is one card's signals.
type CardAdoption struct {
	ID        string         `json:"id"`
	Statement string         `json:"statement"`
	Tier      domain.Tier    `json:"tier"`
	Status    domain.Status  `json:"status"`
	Field     string         `json:"field"`
	Signals   map[string]int `json:"signals"`
	Last      string         `json:"last"`
	// Notes are the notes of its rejected, rollback and contradiction
	// signals, newest last (review only).
	Notes []string `json:"notes,omitempty"`
}

// FieldAdoption is one field's signals.
type FieldAdoption struct {
	Field   string         `json:"field"`
	Signals map[string]int `json:"signals"`
}

// Review is the stats plus what to do about them.
type Review struct {
	Stats
	// Misses group the miss signals by field: the queue of knowledge to
	// distill next, largest first.
	Misses []MissGroup `json:"misses"`
	// TurnedDown are cards rejected or rolled back, with the notes.
	TurnedDown []CardAdoption `json:"turned_down"`
	// Contradicted are cards with contradiction signals.
	Contradicted []CardAdoption `json:"contradicted"`
	// Conclusion sums the review up in a sentence.
	Conclusion string `json:"conclusion"`
}

// MissGroup is the misses of one field.
type MissGroup struct {
	Field string     `json:"field"`
	Count int        `json:"count"`
	Needs []MissNeed `json:"needs"`
	// Command records the missing knowledge as evidence, the first step to
	// a card.
	Command string `json:"command"`
}

// MissNeed is one distinct need (same note and query), how often it was
// signalled, and the requests and cards it named.
type MissNeed struct {
	Note       string   `json:"note,omitempty"`
	Query      string   `json:"query,omitempty"`
	Count      int      `json:"count"`
	RequestIDs []string `json:"request_ids"`
	CardIDs    []string `json:"card_ids"`
	Last       string   `json:"last"`
}

// Stats counts the signals matching f per card and field: on cards of the
// caller's anchors, and misses naming no card. Bad Since is KindInvalid.
func (a *Adoption) Stats(ctx context.Context, f Filter) (Stats, error) {
	st, _, err := a.stats(ctx, f, false)
	return st, err
}

func (a *Adoption) stats(ctx context.Context, f Filter, notes bool) (Stats, []store.AdoptionEvent, error) {
	since, err := parseSince(f.Since, a.cfg.Now())
	if err != nil {
		return Stats{}, nil, err
	}
	evs, err := a.cfg.Store.ListAdoption(ctx, store.AdoptionFilter{CardID: strings.TrimSpace(f.CardID), Since: since})
	if err != nil {
		return Stats{}, nil, hosterr.Internal(err, "read adoption signals")
	}
	var ids []string
	for _, e := range evs {
		if e.CardID != "" && !slices.Contains(ids, e.CardID) {
			ids = append(ids, e.CardID)
		}
	}
	found, err := a.cfg.Store.CardsByIDs(ctx, ids)
	if err != nil {
		return Stats{}, nil, hosterr.Internal(err, "read adoption signals")
	}
	// Signals on another repository's or worktree's cards stay with that
	// memory: their cards' statements and the notes are not read from here.
	evs = slices.DeleteFunc(evs, func(e store.AdoptionEvent) bool {
		c, ok := found[e.CardID]
		return ok && !slices.Contains(a.cfg.ChainIDs, c.AnchorID)
	})
	st := Stats{Since: since, Total: len(evs), Signals: zeroSignals(), Cards: []CardAdoption{}, Fields: []FieldAdoption{}}
	cards := map[string]*CardAdoption{}
	fields := map[string]*FieldAdoption{}
	var cardIDs []string
	for _, e := range evs {
		st.Signals[e.Signal]++
		field := cmp.Or(e.Field, "general")
		fa, ok := fields[field]
		if !ok {
			fa = &FieldAdoption{Field: field, Signals: zeroSignals()}
			fields[field] = fa
		}
		fa.Signals[e.Signal]++
		if e.CardID == "" {
			continue
		}
		ca, ok := cards[e.CardID]
		if !ok {
			ca = &CardAdoption{ID: e.CardID, Field: e.Field, Signals: zeroSignals()}
			cards[e.CardID] = ca
			cardIDs = append(cardIDs, e.CardID)
		}
		ca.Signals[e.Signal]++
		ca.Last = max(ca.Last, e.CreatedAt)
		if notes && e.Note != "" && slices.Contains([]string{"rejected", "rollback", "contradiction"}, e.Signal) {
			ca.Notes = append(ca.Notes, e.Signal+": "+e.Note)
		}
	}
	for _, id := range cardIDs {
		ca := cards[id]
		if c, ok := found[id]; ok {
			ca.Statement, ca.Tier, ca.Status, ca.Field = c.Statement, c.Tier, c.Status, c.Field
		}
		st.Cards = append(st.Cards, *ca)
	}
	for _, fa := range fields {
		st.Fields = append(st.Fields, *fa)
	}
	slices.SortFunc(st.Cards, func(x, y CardAdoption) int {
		return cmp.Or(total(y.Signals)-total(x.Signals), strings.Compare(x.ID, y.ID))
	})
	slices.SortFunc(st.Fields, func(x, y FieldAdoption) int {
		return cmp.Or(total(y.Signals)-total(x.Signals), strings.Compare(x.Field, y.Field))
	})
	return st, evs, nil
}

// Review is Stats with misses grouped by field, the cards agents turned
// down and the contradicted ones, each with what to do. Read-only.
func (a *Adoption) Review(ctx context.Context, f Filter) (Review, error) {
	st, evs, err := a.stats(ctx, f, true)
	if err != nil {
		return Review{}, err
	}
	rev := Review{Stats: st, Misses: []MissGroup{}, TurnedDown: []CardAdoption{}, Contradicted: []CardAdoption{}}
	groups := map[string]*MissGroup{}
	needs := map[[3]string]*MissNeed{}
	for _, e := range evs {
		if e.Signal != "miss" {
			continue
		}
		field := cmp.Or(e.Field, "general")
		g, ok := groups[field]
		if !ok {
			g = &MissGroup{Field: field, Command: fmt.Sprintf("palace record --field %s --content \"what was needed, and where it comes from\" --source-ref REF", cardview.ShellWord(field))}
			groups[field] = g
		}
		g.Count++
		k := [3]string{field, e.Note, e.Query}
		n, ok := needs[k]
		if !ok {
			n = &MissNeed{Note: e.Note, Query: e.Query, RequestIDs: []string{}, CardIDs: []string{}}
			needs[k] = n
		}
		n.Count++
		n.Last = max(n.Last, e.CreatedAt)
		if e.RequestID != "" && !slices.Contains(n.RequestIDs, e.RequestID) {
			n.RequestIDs = append(n.RequestIDs, e.RequestID)
		}
		if e.CardID != "" && !slices.Contains(n.CardIDs, e.CardID) {
			n.CardIDs = append(n.CardIDs, e.CardID)
		}
	}
	for field, g := range groups {
		for k, n := range needs {
			if k[0] == field {
				g.Needs = append(g.Needs, *n)
			}
		}
		slices.SortFunc(g.Needs, func(x, y MissNeed) int {
			return cmp.Or(y.Count-x.Count, strings.Compare(x.Note+"\x00"+x.Query, y.Note+"\x00"+y.Query))
		})
		rev.Misses = append(rev.Misses, *g)
	}
	slices.SortFunc(rev.Misses, func(x, y MissGroup) int { return cmp.Or(y.Count-x.Count, strings.Compare(x.Field, y.Field)) })
	for _, c := range st.Cards {
		if c.Signals["rejected"]+c.Signals["rollback"] > 0 {
			rev.TurnedDown = append(rev.TurnedDown, c)
		}
		if c.Signals["contradiction"] > 0 {
			rev.Contradicted = append(rev.Contradicted, c)
		}
	}
	rev.Conclusion = reviewConclusion(rev)
	return rev, nil
}

func reviewConclusion(r Review) string {
	if r.Total == 0 {
		return "no adoption signal on record: agents record them with palace_feedback (or `palace adopt`) after using or rejecting a card, or on a miss"
	}
	var parts []string
	if n := len(r.Misses); n > 0 {
		parts = append(parts, fmt.Sprintf("%d miss signals in %d fields to distill (largest first)", r.Signals["miss"], n))
	}
	if n := len(r.Contradicted); n > 0 {
		parts = append(parts, fmt.Sprintf("%d contradicted cards to review for demotion", n))
	}
	if n := len(r.TurnedDown); n > 0 {
		parts = append(parts, fmt.Sprintf("%d cards turned down (cooled for requests like those; consider rescoping)", n))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d signals, all used, accepted or neutral: nothing to act on", r.Total)
	}
	return strings.Join(parts, "; ")
}

func zeroSignals() map[string]int {
	m := make(map[string]int, len(Signals))
	for _, s := range Signals {
		m[s] = 0
	}
	return m
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// parseSince resolves a --since value to a stored time: "" (none),
// YYYY-MM-DD, an RFC 3339 time, or Nd (N days before now).
func parseSince(s string, now time.Time) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return store.FormatTime(now.AddDate(0, 0, -n)), nil
		}
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return store.FormatTime(t), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return store.FormatTime(t), nil
	}
	return "", hosterr.Invalid("since", "--since %q is not a date: pass YYYY-MM-DD, an RFC 3339 time or a number of days such as 30d", s)
}
