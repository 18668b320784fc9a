package host

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// VerifyRequest asks to verify a card against the code as it is now.
type VerifyRequest struct {
	// Evidence names visible evidence citing files of this checkout whose
	// code the verification looks at instead of the card's own citations
	// (one citation, or where the code moved).
	Evidence []string `json:"evidence,omitempty"`
	// Note is added to the verification's content: what was checked.
	Note string `json:"note,omitempty"`
}

// VerifiedCitation is one place a verification looked at.
type VerifiedCitation struct {
	// EvidenceID and SourceRef are the citation as recorded.
	EvidenceID string `json:"evidence_id"`
	SourceRef  string `json:"source_ref"`
	// Now is where the code is now (path#L3-L5), as the verification
	// records it.
	Now string `json:"now"`
	// State is fresh, moved or changed (what the look before this
	// verification found); Detail says what changed.
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// VerifyResult reports Verify.
type VerifyResult struct {
	Card Card `json:"card"`
	// Evidence is the verification recorded (Existing when the same
	// verification of the same code was on record: nothing was written).
	Evidence intake.Evidence `json:"evidence"`
	// Checked are the places looked at.
	Checked []VerifiedCitation `json:"checked"`
	// WasStale says the card was stale before.
	WasStale bool `json:"was_stale"`
	// Linked says the verification link was added now.
	Linked bool          `json:"linked"`
	Event  *domain.Event `json:"event,omitempty"`
}

// Verify records one evidence row observing, as it is now, every place card
// id is checked against (or that req.Evidence cite), linked as verification
// through the door, so a stale card is fresh again; it never changes a
// status. Bad input is KindInvalid, code that is gone KindDenied naming each
// place; then nothing is written.
func (h *Host) Verify(ctx context.Context, id string, req VerifyRequest) (VerifyResult, error) {
	if !h.loc.InGit {
		return VerifyResult{}, invalid("id", "palace verify checks a card against the code of a git checkout, and %s is not inside one: run it in the checkout whose code the card cites", h.loc.Dir)
	}
	c, err := h.store.Card(ctx, id)
	if err != nil {
		return VerifyResult{}, gatekeep.NotFound(err, "card", id)
	}
	if err := h.foreignCard(ctx, c, "verify"); err != nil {
		return VerifyResult{}, err
	}
	if c.Status == domain.StatusRetired {
		return VerifyResult{}, invalid("id", "card %s is retired: a retired card is not verified again; distill a new card if it holds", id)
	}
	var places []place
	var wasStale bool
	if len(req.Evidence) > 0 {
		places, err = h.evidencePlaces(ctx, req.Evidence)
	} else {
		places, wasStale, err = h.cardPlaces(ctx, c)
	}
	if err != nil {
		return VerifyResult{}, err
	}
	var gone []string
	for _, p := range places {
		if p.gone != "" {
			gone = append(gone, p.gone)
		}
	}
	if len(gone) > 0 {
		return VerifyResult{}, &Error{Kind: KindDenied, Msg: fmt.Sprintf("cannot verify %s: the code it cites is gone", id), Reasons: append(gone,
			fmt.Sprintf("record evidence citing where the code is now (palace record --source-ref PATH#L10-L24 …) and run palace verify %s --evidence EV, or demote the card (palace demote %s --counterexample EV --reason R)", id, id))}
	}
	head := staleness.Head(ctx, h.loc.Worktree)
	res := VerifyResult{WasStale: wasStale, Checked: make([]VerifiedCitation, len(places))}
	obs := make([]domain.Observation, len(places))
	var seen []string
	for i, p := range places {
		res.Checked[i] = p.VerifiedCitation
		o, ok := staleness.Observe(h.loc.Worktree, head, "", p.Now, "")
		if !ok {
			return VerifyResult{}, &Error{Kind: KindDenied, Msg: fmt.Sprintf("cannot verify %s: %s cannot be read now", id, p.Now)}
		}
		o.N = i
		obs[i] = o
		// What was seen is part of the content: verifying the same code
		// again is the same evidence (recorded once), other code is new.
		s := p.Now
		if o.LinesSHA256 != "" {
			s += " (lines " + o.LinesSHA256[:12] + ")"
		}
		seen = append(seen, s)
	}
	content := fmt.Sprintf("Verified %s (%q) against the code at %s: %s", id, c.Statement, shortCommit(head), strings.Join(seen, ", "))
	if n := strings.TrimSpace(req.Note); n != "" {
		content += "\n\n" + n
	}
	kind := domain.AnchorWorktree
	if k := h.loc.KindOf(c.AnchorID); k == domain.AnchorRepo {
		kind = domain.AnchorRepo
	}
	in := h.Intake()
	ev, _, err := in.PrepareEvidence(intake.RecordRequest{Content: content, Field: c.Field, SourceRef: places[0].Now,
		Tags: []string{"verification", "palace-verify"}, Anchor: string(kind)}, "")
	if err != nil {
		return VerifyResult{}, err
	}
	for i := range obs {
		obs[i].EvidenceID, obs[i].ObservedAt = ev.ID, ev.CreatedAt
	}
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, kind)
		if err != nil {
			return err
		}
		ev.AnchorID = a.ID
		if res.Evidence, err = in.InsertDistinct(ctx, tx, ev, false); err != nil {
			return err
		}
		if !res.Evidence.Existing {
			res.Evidence.Observed = obs
			if err := tx.InsertObservations(ctx, obs); err != nil {
				return err
			}
		}
		o, err := h.door().Apply(ctx, tx, authority.Change{Op: authority.OpLink, CardID: id, Note: "palace verify",
			Refs: []authority.Refs{{Role: domain.RoleVerification, IDs: []string{res.Evidence.ID}}}})
		if err != nil {
			return err
		}
		if res.Linked = len(o.Added) > 0; res.Linked {
			res.Event = &o.Events[0]
		}
		return nil
	})
	if err != nil {
		return VerifyResult{}, hosterr.Classify(err, "verify "+id)
	}
	res.Evidence.Anchor = h.anchorRef(ctx, res.Evidence.AnchorID)
	if res.Linked {
		h.autoExport(ctx, id)
	}
	res.Card, err = h.ShowCard(ctx, id)
	return res, err
}

// place is one place a verification looks at: where the code is now, or
// why it is gone.
type place struct {
	VerifiedCitation
	gone string
}

// cardPlaces are the places card c is checked against, where they are now;
// without observations, the files its evidence cites.
func (h *Host) cardPlaces(ctx context.Context, c domain.Card) ([]place, bool, error) {
	all, err := h.store.CodeCitations(ctx)
	if err != nil {
		return nil, false, internal(err, "read the code %s cites", c.ID)
	}
	looks, st := h.freshness.Pass(ctx).Card(c.ID, all[c.ID])
	if len(looks) == 0 {
		links, err := h.store.Links(ctx, c.ID)
		if err != nil {
			return nil, false, internal(err, "read links of %s", c.ID)
		}
		var ids []string
		for _, l := range links {
			if l.Role == domain.RoleVerification || l.Role == domain.RoleSupporting {
				ids = append(ids, l.EvidenceID)
			}
		}
		rows, err := h.store.EvidenceByIDs(ctx, ids)
		if err != nil {
			return nil, false, internal(err, "read evidence")
		}
		ps, _ := h.refPlaces(ids, rows, false)
		if len(ps) == 0 {
			return nil, false, invalid("id", "card %s cites no file of this checkout: nothing to verify it against; record evidence citing the code (palace record --source-ref PATH#L10-L24 …) and pass it with --evidence", c.ID)
		}
		return ps, false, nil
	}
	out := make([]place, len(looks))
	for i, l := range looks {
		p := place{VerifiedCitation: VerifiedCitation{EvidenceID: l.EvidenceID, SourceRef: l.SourceRef, State: stateName(l.State), Detail: l.Detail}}
		ref := staleness.RefOf(l.Observation)
		ref.Path = l.Result.Path
		switch {
		case l.State == staleness.Fresh || l.State == staleness.Moved || l.State == staleness.Unknown:
			if ref.Kind == domain.ObservedLines && l.Result.Start > 0 {
				ref.Start, ref.End = l.Result.Start, l.Result.End
			}
		case l.Change == staleness.ChangeLines:
			// The same lines, holding new text: the person verifying
			// says the card holds for it.
		default:
			p.gone = fmt.Sprintf("%s: %s since %s saw it", staleness.RefOf(l.Observation), l.Detail, l.EvidenceID)
		}
		p.Now = ref.String()
		out[i] = p
	}
	return out, st != nil, nil
}

// evidencePlaces are the places evidence ids cite, as they are now.
func (h *Host) evidencePlaces(ctx context.Context, ids []string) ([]place, error) {
	rows, err := h.store.EvidenceByIDs(ctx, ids)
	if err != nil {
		return nil, internal(err, "read evidence")
	}
	for _, id := range ids {
		e, ok := rows[id]
		if !ok {
			return nil, invalid("evidence", "no evidence %s: pass the id of recorded evidence (palace evidence list)", id)
		}
		if h.loc.KindOf(e.AnchorID) == "" {
			return nil, invalid("evidence", "evidence %s is anchored to another repository or worktree: verify with evidence of this checkout", id)
		}
	}
	return h.refPlaces(ids, rows, true)
}

// refPlaces parses the source refs of evidence rows ids as citations of this
// checkout's files; with strict, one citing none is KindInvalid.
func (h *Host) refPlaces(ids []string, rows map[string]domain.Evidence, strict bool) ([]place, error) {
	var out []place
	seen := map[string]bool{}
	for _, id := range ids {
		e := rows[id]
		ref, ok := staleness.ParseRef(e.SourceRef)
		if ok {
			if rel, in := staleness.Rel(h.loc.Worktree, ref.Path); in {
				ref.Path = rel
			} else {
				ok = false
			}
		}
		if ok {
			_, ok = staleness.Observe(h.loc.Worktree, "", id, ref.String(), e.CreatedAt)
		}
		if !ok {
			if strict {
				return nil, invalid("evidence", "evidence %s cites no file of this checkout (source_ref %q): record evidence whose --source-ref names the code, e.g. store/db.go#L10-L24", id, e.SourceRef)
			}
			continue
		}
		if seen[ref.String()] {
			continue
		}
		seen[ref.String()] = true
		out = append(out, place{VerifiedCitation: VerifiedCitation{EvidenceID: id, SourceRef: e.SourceRef, Now: ref.String(), State: "fresh"}})
	}
	return out, nil
}

func stateName(s staleness.State) string {
	switch s {
	case staleness.Fresh:
		return "fresh"
	case staleness.Moved:
		return "moved"
	case staleness.Changed:
		return "changed"
	}
	return "unknown"
}

func shortCommit(c string) string {
	if c == "" {
		return "no commit yet"
	}
	return "commit " + c[:min(len(c), 12)]
}

// cardStale is card c's staleness as a pack shows it, nil when none or not
// this checkout's.
func (h *Host) cardStale(ctx context.Context, c domain.Card) *staleness.Stale {
	if !c.Status.Authoritative() || h.loc.KindOf(c.AnchorID) == "" {
		return nil
	}
	code, err := h.freshness.Cards(ctx, h.store, []string{c.ID})
	if err != nil {
		return nil
	}
	return staleness.Merge(code[c.ID], staleness.Dates(c, h.stamp()))
}

// staleCards checks cards as cardStale does, in one pass: the stale ones
// of this checkout, by id.
func (h *Host) staleCards(ctx context.Context, cards []domain.Card) (map[string]*staleness.Stale, error) {
	var ids []string
	for _, c := range cards {
		if h.loc.KindOf(c.AnchorID) != "" {
			ids = append(ids, c.ID)
		}
	}
	code, err := h.freshness.Cards(ctx, h.store, ids)
	if err != nil {
		return nil, internal(err, "check the code cards cite")
	}
	stamp := h.stamp()
	out := map[string]*staleness.Stale{}
	for _, c := range cards {
		if h.loc.KindOf(c.AnchorID) == "" {
			continue
		}
		if st := staleness.Merge(code[c.ID], staleness.Dates(c, stamp)); st != nil {
			out[c.ID] = st
		}
	}
	return out, nil
}

// StaleLines is a place in a file that an authoritative card of this
// checkout cites and that changed since its evidence saw it.
type StaleLines struct {
	CardID    string      `json:"card_id"`
	Statement string      `json:"statement"`
	Tier      domain.Tier `json:"tier"`
	staleness.StaleCitation
}

// StaleLinesIn lists the changed places of file (absolute or relative to
// the host's directory) that this checkout's cards are checked against, by
// card and line (0 for a symbol or whole file). Nothing outside git.
func (h *Host) StaleLinesIn(ctx context.Context, file string) ([]StaleLines, error) {
	if !h.loc.InGit {
		return nil, nil
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(h.loc.Dir, file)
	}
	rel, ok := staleness.Rel(h.loc.Worktree, filepath.ToSlash(abs))
	if !ok {
		return nil, nil
	}
	all, err := h.store.CodeCitations(ctx)
	if err != nil {
		return nil, internal(err, "read the code cards cite")
	}
	p := h.freshness.Pass(ctx)
	var out []StaleLines
	// Every code-citing card is looked at (renames are found only so); each
	// cited file is statted once.
	for id, cits := range all {
		_, st := p.Card(id, cits)
		if st == nil {
			continue
		}
		var mine []staleness.StaleCitation
		for _, sc := range st.Citations {
			if sc.Path == rel {
				mine = append(mine, sc)
			}
		}
		if len(mine) == 0 {
			continue
		}
		c, err := h.store.Card(ctx, id)
		if err != nil || !c.Status.Authoritative() || h.loc.KindOf(c.AnchorID) == "" {
			continue
		}
		for _, sc := range mine {
			out = append(out, StaleLines{CardID: id, Statement: c.Statement, Tier: c.Tier, StaleCitation: sc})
		}
	}
	slices.SortFunc(out, func(a, b StaleLines) int { return cmp.Or(a.Line-b.Line, strings.Compare(a.CardID, b.CardID)) })
	return out, nil
}

// CitedCodeChanged reports whether a file cited by evidence changed,
// appeared or went since the last call (the first reports false).
func (h *Host) CitedCodeChanged(ctx context.Context) (bool, error) {
	ok, err := h.freshness.Changed(ctx, h.store)
	if err != nil {
		return false, internal(err, "look at the cited files")
	}
	return ok, nil
}
