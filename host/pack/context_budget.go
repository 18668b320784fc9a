package pack

import (
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/store"
)

// slot is one renderable thing of a pack (a card item or an evidence row)
// with its current form and the text of each form it has taken.
type slot struct {
	item  *Item
	ev    *EvidenceItem
	cand  *candidate
	order int
	form  domain.RenderForm
	texts map[domain.RenderForm]string
	// compactCap is the lanes configuration's compact_char_limit (0: none).
	compactCap int
}

func (s *slot) text(form domain.RenderForm) string {
	if t, ok := s.texts[form]; ok {
		return t
	}
	var t string
	if s.item != nil {
		t = renderItem(s.item, form, s.compactCap)
	} else {
		t = renderEvidence(s.ev, form)
	}
	s.texts[form] = t
	return t
}

func (s *slot) size() int { return runeLen(s.text(s.form)) }

func (s *slot) inline() bool {
	return s.form == domain.FormInlineFull || s.form == domain.FormInlineCompact
}

// packer tracks the rendered size of a pack as slots change form.
type packer struct {
	a      *assembly
	slots  []*slot
	counts map[sectionKey]int
	total  int
}

func (p *packer) add(s *slot, sign int) {
	k, ok := p.a.section(s)
	if !ok {
		return
	}
	if p.counts[k] == 0 && sign > 0 {
		p.total += runeLen(p.a.header(k))
	}
	p.counts[k] += sign
	if p.counts[k] == 0 && sign < 0 {
		p.total -= runeLen(p.a.header(k))
	}
	p.total += sign * s.size()
}

// section is the section a slot renders in, false when it renders nowhere.
func (a *assembly) section(s *slot) (sectionKey, bool) {
	switch {
	case s.form == domain.FormInspectorOnly || s.form == "":
		return sectionKey{}, false
	case s.ev != nil:
		return sectionKey{name: "evidence"}, true
	case s.item.Foreign:
		return sectionKey{origin: 1 + slices.IndexFunc(a.origins, func(o cardview.AnchorRef) bool { return o.ID == s.item.Anchor.ID }), name: "origin"}, true
	case s.form == domain.FormRefOnly:
		return sectionKey{name: "references"}, true
	case s.item.Lane == domain.LaneCore:
		return sectionKey{name: string(domain.LaneCore)}, true
	}
	return sectionKey{name: string(domain.LaneScoped)}, true
}

func (a *assembly) header(k sectionKey) string {
	if k.origin > 0 {
		return sectionHeader(k, &a.origins[k.origin-1], false)
	}
	return sectionHeader(k, nil, a.pack.Request.Wake)
}

func (p *packer) set(s *slot, form domain.RenderForm) {
	p.add(s, -1)
	s.form = form
	p.add(s, +1)
}

// budgetStage is one step of the trim order.
type budgetStage struct {
	pick func(*slot) bool
	to   domain.RenderForm
	verb string
}

// packBudget packs a (packWith). A wake-up pack's preamble says what it
// is, but that line never costs a card: when no card fits beside it, the
// pack is made again without it.
func (pl *Pipeline) packBudget(a *assembly) {
	a.wakeNote = a.pack.Request.Wake
	pl.packWith(a)
	if !a.wakeNote || len(a.pack.Items) == 0 || slices.ContainsFunc(a.slots, func(s *slot) bool { return s.item != nil && s.form != domain.FormInspectorOnly }) {
		return
	}
	for i := range a.pack.Items {
		it := &a.pack.Items[i]
		it.RenderForm, it.Trimmed, it.Chars = it.LaneForm, nil, 0
	}
	for i := range a.pack.Evidence {
		a.pack.Evidence[i].Trimmed = nil
	}
	a.wakeNote = false
	pl.packWith(a)
}

// packWith fits the items under the budget by whole items, in stages:
// evidence goes first; then, least valuable first (the last in pack order),
// full items are compacted, reference lines left out, then inline items;
// what was left out comes back as a reference line where one still fits.
// Nothing is cut mid-text; only the preamble and transient instructions,
// never left out, can exceed the budget.
func (pl *Pipeline) packWith(a *assembly) {
	limit := a.pack.Request.Budget
	a.origins = nil
	for _, it := range a.pack.Items {
		if it.Foreign && !slices.ContainsFunc(a.origins, func(o cardview.AnchorRef) bool { return o.ID == it.Anchor.ID }) {
			a.origins = append(a.origins, it.Anchor)
		}
	}
	slices.SortFunc(a.origins, func(x, y cardview.AnchorRef) int { return strings.Compare(x.Identity+x.ID, y.Identity+y.ID) })
	p := &packer{a: a, counts: map[sectionKey]int{}}
	p.total = runeLen(pl.preamble(a.req.AllRepos, a.wakeNote, a.req.Fetch))
	if len(a.pack.TransientInstructions) > 0 {
		p.total += runeLen(sectionHeader(sectionKey{name: "transient_instructions"}, nil, false)) + runeLen(renderInstructions(a.pack.TransientInstructions))
	}
	for i := range a.pack.Items {
		s := &slot{item: &a.pack.Items[i], cand: a.items[i], order: i, form: a.pack.Items[i].LaneForm, texts: map[domain.RenderForm]string{}, compactCap: a.lanes.CompactCharLimit}
		p.slots = append(p.slots, s)
		p.add(s, +1)
	}
	for i := range a.pack.Evidence {
		e := &a.pack.Evidence[i]
		s := &slot{ev: e, order: len(a.pack.Items) + i, form: evidenceForm(e), texts: map[domain.RenderForm]string{}}
		p.slots = append(p.slots, s)
		p.add(s, +1)
	}
	stages := []budgetStage{
		{func(s *slot) bool { return s.ev != nil && s.form == domain.FormInlineFull }, domain.FormRefOnly, "reduced to a reference line"},
		{func(s *slot) bool { return s.ev != nil && s.form == domain.FormRefOnly }, domain.FormInspectorOnly, "left out"},
		{func(s *slot) bool { return s.item != nil && s.form == domain.FormInlineFull }, domain.FormInlineCompact, "trimmed to its compact form"},
		{func(s *slot) bool {
			return s.item != nil && s.form == domain.FormRefOnly && s.item.LaneForm == domain.FormRefOnly
		}, domain.FormInspectorOnly, "left out (inspector-only)"},
		{func(s *slot) bool { return s.item != nil && s.inline() }, domain.FormInspectorOnly, "left out (inspector-only)"},
		{func(s *slot) bool { return s.item != nil && s.form == domain.FormRefOnly }, domain.FormInspectorOnly, "left out (inspector-only)"},
	}
	for _, st := range stages {
		if p.total <= limit {
			break
		}
		var picks []*slot
		for _, s := range p.slots {
			if st.pick(s) {
				picks = append(picks, s)
			}
		}
		// Least valuable first: the one packed last.
		slices.SortStableFunc(picks, func(x, y *slot) int { return y.order - x.order })
		for _, s := range picks {
			if p.total <= limit {
				break
			}
			from := s.form
			p.set(s, st.to)
			why := "raw evidence goes before any card"
			if s.item != nil {
				why = fmt.Sprintf("it was the least valuable left in this step (salience %d)", s.item.Salience)
			}
			s.trim(from, st.to, fmt.Sprintf("%s to fit the budget of %d characters: %s", st.verb, limit, why))
		}
	}
	// What the budget left out comes back as a reference line, most
	// valuable first, wherever that line still fits.
	for _, s := range p.slots {
		if s.item == nil || s.form != domain.FormInspectorOnly || s.item.Trimmed == nil || s.item.LaneForm == domain.FormInspectorOnly {
			continue
		}
		p.set(s, domain.FormRefOnly)
		if p.total > limit {
			p.set(s, domain.FormInspectorOnly)
			continue
		}
		s.trim(s.item.Trimmed.From, domain.FormRefOnly, fmt.Sprintf("reduced to a reference line to fit the budget of %d characters: the more valuable items took the room", limit))
	}
	for _, s := range p.slots {
		if s.item != nil {
			s.item.RenderForm = s.form
			s.cand.outcome = outcomeOf(s)
			if a.pack.Request.Wake && s.cand.outcome != store.OutcomeInlineFull && s.cand.outcome != store.OutcomeInlineCompact {
				// A session start's budget says nothing about a task: only
				// what it showed is recorded, never a trim that would cool.
				s.cand.outcome = ""
			}
		} else {
			s.ev.RenderForm = s.form
		}
	}
	a.slots = p.slots
}

// trim records the budget's action, keeping the original form as From.
func (s *slot) trim(from, to domain.RenderForm, reason string) {
	var t **BudgetAction
	if s.item != nil {
		t = &s.item.Trimmed
	} else {
		t = &s.ev.Trimmed
	}
	if *t != nil {
		from = (*t).From
	}
	*t = &BudgetAction{From: from, To: to, Reason: reason}
}

// outcomeOf is the injection outcome of an item after packing.
func outcomeOf(s *slot) string {
	if s.item.Trimmed != nil {
		return store.OutcomeTrimmed
	}
	switch s.form {
	case domain.FormInlineFull:
		return store.OutcomeInlineFull
	case domain.FormInlineCompact:
		return store.OutcomeInlineCompact
	case domain.FormRefOnly:
		return store.OutcomeRefOnly
	}
	return store.OutcomeSkippedCooled
}

// finish writes Rendered, the sections, the selection lists and the budget
// use from the packed slots.
func (pl *Pipeline) finish(a *assembly) {
	pk := &a.pack
	var b strings.Builder
	b.WriteString(pl.preamble(a.req.AllRepos, a.wakeNote, a.req.Fetch))
	if len(pk.TransientInstructions) > 0 {
		head := sectionHeader(sectionKey{name: "transient_instructions"}, nil, false)
		body := renderInstructions(pk.TransientInstructions)
		b.WriteString(head + body)
		pk.Sections = append(pk.Sections, Section{Name: "transient_instructions", Title: sectionTitles["transient_instructions"],
			IDs: []string{}, Chars: runeLen(head + body)})
	}
	keys := []sectionKey{{name: string(domain.LaneCore)}, {name: string(domain.LaneScoped)}, {name: "references"}, {name: "evidence"}}
	for i := range a.origins {
		keys = append(keys, sectionKey{origin: i + 1, name: "origin"})
	}
	for _, k := range keys {
		var body strings.Builder
		ids := []string{}
		for _, s := range a.slots {
			if sk, ok := a.section(s); !ok || sk != k {
				continue
			}
			t := s.text(s.form)
			body.WriteString(t)
			if s.item != nil {
				s.item.Chars = runeLen(t)
				ids = append(ids, s.item.ID)
			} else {
				s.ev.Chars = runeLen(t)
				ids = append(ids, s.ev.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		head := a.header(k)
		b.WriteString(head)
		b.WriteString(body.String())
		var origin *cardview.AnchorRef
		name, title := k.name, sectionTitle(k.name, pk.Request.Wake)
		if k.origin > 0 {
			origin = &a.origins[k.origin-1]
			name, title = "origin", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(head), "## "))
		}
		pk.Sections = append(pk.Sections, Section{Name: name, Title: title, Origin: origin, IDs: ids, Chars: runeLen(head) + runeLen(body.String())})
	}
	if pk.MemoryExists.Rendered == 0 {
		b.WriteString(emptyNote(pk.MemoryExists))
	}
	pk.Rendered = b.String()
	if pk.Sections == nil {
		pk.Sections = []Section{}
	}
	sel := &pk.Selection
	for _, s := range a.slots {
		if s.item == nil {
			continue
		}
		switch {
		case s.inline() && s.item.Lane == domain.LaneCore:
			sel.InlineCoreIDs = append(sel.InlineCoreIDs, s.item.ID)
		case s.inline():
			sel.InlineScopedIDs = append(sel.InlineScopedIDs, s.item.ID)
		case s.form == domain.FormRefOnly:
			sel.RefOnlyIDs = append(sel.RefOnlyIDs, s.item.ID)
		default:
			sel.InspectorOnlyIDs = append(sel.InspectorOnlyIDs, s.item.ID)
		}
		if s.item.Trimmed != nil {
			sel.TrimmedDueToBudgetIDs = append(sel.TrimmedDueToBudgetIDs, s.item.ID)
		}
	}
	for _, sk := range pk.Skipped {
		if sk.Reason == "skipped_cooled" {
			sel.InspectorOnlyIDs = append(sel.InspectorOnlyIDs, sk.ID)
		}
	}
	used := runeLen(pk.Rendered)
	pk.Budget = BudgetUse{Limit: pk.Request.Budget, Used: used, Remaining: max(0, pk.Request.Budget-used), Over: used > pk.Request.Budget}
	if pk.Budget.Over {
		pk.Budget.OverflowReason = fmt.Sprintf("the preamble and transient instructions need %d characters, over the budget of %d; they are never cut, so the pack is over budget", used, pk.Request.Budget)
		if pk.MemoryExists.Rendered == 0 {
			pk.Budget.OverflowReason = fmt.Sprintf("nothing fits the budget of %d characters; the pack still says what exists (%d characters)", pk.Request.Budget, used)
		}
	}
}
