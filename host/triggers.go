package host

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Trigger matching is the one implementation behind `palace hints` and the
// LSP's inlay hints and trigger diagnostics: the authoritative cards visible
// from the host, their trigger patterns compiled once, matched line by line
// against a document, then filtered by the scope policy for that file.

// MaxTriggerLineBytes is the longest line trigger patterns are matched
// against; longer lines (minified code, data blobs) are skipped, so a
// pathological document costs time linear in its size and no more.
const MaxTriggerLineBytes = 64 << 10

// MaxTriggerMatches bounds the matches one document reports; the rest are
// dropped (TriggerMatches.Truncated says so).
const MaxTriggerMatches = 5000

// TriggerCard is the part of an authoritative card that trigger matching and
// its callers (hover, hints) show.
type TriggerCard struct {
	ID          string        `json:"id"`
	Statement   string        `json:"statement"`
	Tier        string        `json:"tier"`
	Status      string        `json:"status"`
	Domain      string        `json:"domain"`
	Field       string        `json:"field"`
	Anchor      AnchorRef     `json:"anchor"`
	Persistence string        `json:"persistence"`
	Scope       store.Scope   `json:"scope"`
	Trigger     store.Trigger `json:"trigger"`
}

// Label is the short form editors show inline: "‹qi› statement".
func (c TriggerCard) Label() string { return "‹" + c.Tier + "› " + c.Statement }

// TriggerSet is the compiled trigger patterns, intent tags and tool needs of
// the authoritative, unexpired cards visible from a host (worktree, repo and
// global anchors). It is immutable and safe for concurrent use; build a new
// one when the data changes (CompileTriggers reuses the old one's regexps).
type TriggerSet struct {
	cards    []TriggerCard
	patterns []triggerPattern
	// index maps a lower-cased trigram of a pattern's required literal to
	// the patterns that need it; bloom is a cheap pre-check of index.
	index  map[uint32][]int32
	bloom  [1 << 10]uint64
	always []int32 // patterns with no usable literal: run on every line
	tags   map[string][]int32
	// Invalid lists patterns that did not compile (stored before the
	// distill check existed, or by another tool); they never match.
	invalid []InvalidTrigger
}

// InvalidTrigger is a stored trigger pattern that does not compile.
type InvalidTrigger struct {
	CardID  string `json:"card_id"`
	Pattern string `json:"pattern"`
	Error   string `json:"error"`
}

type triggerPattern struct {
	src  string
	re   *regexp.Regexp
	card int32
	lits [][]byte // lower-cased; one of them occurs in every match (nil: unknown)
}

// Cards returns the cards of the set, dao_tian first.
func (t *TriggerSet) Cards() []TriggerCard { return t.cards }

// Len is the number of compiled patterns.
func (t *TriggerSet) Len() int { return len(t.patterns) }

// Invalid lists the stored patterns that did not compile.
func (t *TriggerSet) Invalid() []InvalidTrigger { return t.invalid }

// CompileTriggers reads the authoritative, unexpired cards visible from the
// host and compiles their trigger patterns. prev, when not nil, is a set
// compiled earlier: its regexps are reused for unchanged patterns, so
// recompiling after a small change costs a query, not 10k compilations. A
// pattern that does not compile is listed in Invalid and otherwise ignored.
func (h *Host) CompileTriggers(ctx context.Context, prev *TriggerSet) (*TriggerSet, error) {
	rows, err := h.store.ListCards(ctx, store.CardFilter{Statuses: AuthoritativeStatuses(), AnchorIDs: h.chainIDs()})
	if err != nil {
		return nil, internal(err, "read trigger cards")
	}
	old := map[string]*triggerPattern{}
	if prev != nil {
		for i := range prev.patterns {
			old[prev.patterns[i].src] = &prev.patterns[i]
		}
	}
	now := h.stamp()
	t := &TriggerSet{index: map[uint32][]int32{}, tags: map[string][]int32{}}
	for _, c := range rows {
		if c.ExpiresAt != "" && c.ExpiresAt <= now {
			continue
		}
		tr := c.Trigger
		if len(tr.Patterns)+len(tr.Intents)+len(tr.ToolNeeds) == 0 {
			continue
		}
		ci := int32(len(t.cards))
		t.cards = append(t.cards, TriggerCard{
			ID: c.ID, Statement: c.Statement, Tier: c.Tier, Status: c.Status, Domain: c.Domain, Field: c.Field,
			Anchor: h.anchorRef(ctx, c.AnchorID), Persistence: c.Persistence, Scope: c.Scope, Trigger: c.Trigger,
		})
		for _, tag := range slices.Concat(tr.Intents, tr.ToolNeeds) {
			k := strings.ToLower(strings.TrimSpace(tag))
			if k != "" && !slices.Contains(t.tags[k], ci) {
				t.tags[k] = append(t.tags[k], ci)
			}
		}
		for _, src := range tr.Patterns {
			p := triggerPattern{src: src, card: ci}
			if o, ok := old[src]; ok {
				p.re, p.lits = o.re, o.lits
			} else if p.re, p.lits, err = compileTrigger(src); err != nil {
				t.invalid = append(t.invalid, InvalidTrigger{CardID: c.ID, Pattern: src, Error: err.Error()})
				continue
			}
			t.add(p)
		}
	}
	return t, nil
}

func (t *TriggerSet) add(p triggerPattern) {
	pi := int32(len(t.patterns))
	t.patterns = append(t.patterns, p)
	if p.lits == nil {
		t.always = append(t.always, pi)
		return
	}
	for _, lit := range p.lits {
		k := trigram(lit[0], lit[1], lit[2])
		if !slices.Contains(t.index[k], pi) {
			t.index[k] = append(t.index[k], pi)
		}
		b := bloomBit(k)
		t.bloom[b>>6] |= 1 << (b & 63)
	}
}

// compileTrigger compiles a pattern and finds the literals one of which
// every match must contain, lower-cased, each at least three bytes long.
func compileTrigger(src string) (*regexp.Regexp, [][]byte, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, nil, fmt.Errorf("compile trigger pattern %q: %w", src, err)
	}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return re, nil, nil
	}
	var lits [][]byte
	for _, l := range requiredLiterals(parsed.Simplify()) {
		lits = append(lits, []byte(l))
	}
	return re, lits, nil
}

// maxLiteralAlternatives bounds how many literals a pattern may need one of.
const maxLiteralAlternatives = 16

// requiredLiterals returns strings one of which occurs (ASCII-lower-cased)
// in every match of re, or nil when it cannot tell. It is a prefilter: a
// superset of the lines a pattern can match must pass it.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if lit := safeLiteral(re.Rune, re.Flags&syntax.FoldCase != 0); len(lit) >= 3 {
			return []string{lit}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if lits := requiredLiterals(sub); lits != nil && (best == nil || shortest(lits) > shortest(best)) {
				best = lits
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			lits := requiredLiterals(sub)
			if lits == nil {
				return nil
			}
			all = append(all, lits...)
		}
		if len(all) <= maxLiteralAlternatives {
			slices.Sort(all)
			return slices.Compact(all)
		}
	}
	return nil
}

func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// safeLiteral lower-cases a literal the way lines are lower-cased for the
// prefilter (ASCII only) and returns its longest stretch that the prefilter
// can look for. A case-folded rune whose fold orbit leaves ASCII (k/K/K,
// s/S/ſ) or a non-ASCII folded letter cannot be looked for byte-wise, so it
// splits the literal.
func safeLiteral(runes []rune, fold bool) string {
	var best, cur strings.Builder
	flush := func() {
		if cur.Len() > best.Len() {
			best.Reset()
			best.WriteString(cur.String())
		}
		cur.Reset()
	}
	for _, r := range runes {
		if fold && !asciiFoldOrbit(r) {
			flush()
			continue
		}
		if r < utf8.RuneSelf {
			cur.WriteByte(lowerASCII(byte(r)))
		} else {
			cur.WriteRune(r)
		}
	}
	flush()
	return best.String()
}

// asciiFoldOrbit reports whether every case variant of r is ASCII (or r
// has no variants at all).
func asciiFoldOrbit(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf || r >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func trigram(a, b, c byte) uint32 { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }

func bloomBit(k uint32) uint32 { return (k * 2654435761) >> 16 & (1<<16 - 1) }

// TriggerMatch is one line a card's trigger pattern matches. Line is
// 1-based; Col and EndCol are 1-based byte columns of the line, EndCol
// exclusive (the LSP converts them to UTF-16).
type TriggerMatch struct {
	Line    int         `json:"line"`
	Col     int         `json:"col"`
	EndCol  int         `json:"end_col"`
	Pattern string      `json:"pattern"`
	Card    TriggerCard `json:"card"`
}

// Match finds, for every line of text, the cards whose trigger patterns
// match it: at most one match per card and line (its first pattern's first
// match), ordered by line, column and card id. Patterns match within one
// line; lines over MaxTriggerLineBytes are skipped. The result is capped at
// MaxTriggerMatches, truncated says whether the cap cut it.
func (t *TriggerSet) Match(text string) (matches []TriggerMatch, truncated bool) {
	if len(t.patterns) == 0 {
		return nil, false
	}
	m := matcher{set: t, seen: make([]int32, len(t.patterns)), cardSeen: make([]int32, len(t.cards))}
	for i := range m.seen {
		m.seen[i] = -1
	}
	for i := range m.cardSeen {
		m.cardSeen[i] = -1
	}
	lineNo := 0
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		lineNo++
		line := strings.TrimSuffix(text[start:end], "\r")
		if len(line) <= MaxTriggerLineBytes {
			if !m.line(lineNo, line) {
				return m.out, true
			}
		}
		start = end + 1
	}
	return m.out, false
}

type matcher struct {
	set   *TriggerSet
	lower []byte
	cands []int32
	// seen[p] / cardSeen[c] hold the last line number that queued pattern p
	// or matched card c, so nothing is cleared between lines.
	seen     []int32
	cardSeen []int32
	lineHits []TriggerMatch
	out      []TriggerMatch
}

// line matches one line; false when the match cap is reached.
func (m *matcher) line(n int, line string) bool {
	t := m.set
	m.cands = m.cands[:0]
	m.lower = m.lower[:0]
	for i := 0; i < len(line); i++ {
		m.lower = append(m.lower, lowerASCII(line[i]))
	}
	lw := m.lower
	for i := 0; i+2 < len(lw); i++ {
		k := trigram(lw[i], lw[i+1], lw[i+2])
		b := bloomBit(k)
		if t.bloom[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		for _, pi := range t.index[k] {
			if m.seen[pi] != int32(n) {
				m.seen[pi] = int32(n)
				m.cands = append(m.cands, pi)
			}
		}
	}
	m.cands = append(m.cands, t.always...)
	if len(m.cands) == 0 {
		return true
	}
	slices.Sort(m.cands)
	m.lineHits = m.lineHits[:0]
	for _, pi := range m.cands {
		p := &t.patterns[pi]
		if m.cardSeen[p.card] == int32(n) || !containsAny(lw, p.lits) {
			continue
		}
		loc := p.re.FindStringIndex(line)
		if loc == nil {
			continue
		}
		m.cardSeen[p.card] = int32(n)
		m.lineHits = append(m.lineHits, TriggerMatch{Line: n, Col: loc[0] + 1, EndCol: loc[1] + 1, Pattern: p.src, Card: t.cards[p.card]})
	}
	slices.SortFunc(m.lineHits, func(a, b TriggerMatch) int {
		if a.Col != b.Col {
			return a.Col - b.Col
		}
		return strings.Compare(a.Card.ID, b.Card.ID)
	})
	for _, h := range m.lineHits {
		if len(m.out) == MaxTriggerMatches {
			return false
		}
		m.out = append(m.out, h)
	}
	return true
}

func containsAny(lower []byte, lits [][]byte) bool {
	if lits == nil {
		return true
	}
	for _, l := range lits {
		if bytes.Contains(lower, l) {
			return true
		}
	}
	return false
}

// Tagged returns the cards with an intent tag or tool need equal to word
// (case-insensitive), in set order.
func (t *TriggerSet) Tagged(word string) []TriggerCard {
	idx := t.tags[strings.ToLower(strings.TrimSpace(word))]
	out := make([]TriggerCard, len(idx))
	for i, ci := range idx {
		out[i] = t.cards[ci]
	}
	return out
}

// HintsRequest asks which cards' triggers match a document.
type HintsRequest struct {
	// File is the document's path (absolute, or relative to the host's
	// directory); the scope policy sees it worktree-relative.
	File string `json:"file"`
	// Text is the document's content.
	Text string `json:"-"`
	// Language is an editor language id; defaults to one derived from File.
	Language string `json:"language,omitempty"`
}

// Hints is the answer to a HintsRequest.
type Hints struct {
	File    string         `json:"file"`
	Matches []TriggerMatch `json:"matches"`
	// Truncated says MaxTriggerMatches cut the list.
	Truncated bool `json:"truncated,omitempty"`
	// OutOfScope counts matches dropped because the card's scope does not
	// cover this file.
	OutOfScope int `json:"out_of_scope"`
	// Invalid lists stored patterns that did not compile.
	Invalid []InvalidTrigger  `json:"invalid,omitempty"`
	Policy  policies.Decision `json:"policy"`
}

// Hints matches the trigger patterns of set (compiled fresh when set is
// nil) against req.Text and keeps the matches whose card applies to
// req.File by the scope policy: the one implementation of `palace hints`
// and of the LSP's inlay hints and trigger diagnostics. A scope policy that
// fails falls back to the embedded default (Policy says so); a policy set
// that does not load is served by the embedded defaults.
func (h *Host) Hints(ctx context.Context, set *TriggerSet, req HintsRequest) (Hints, error) {
	if set == nil {
		var err error
		if set, err = h.CompileTriggers(ctx, nil); err != nil {
			return Hints{}, err
		}
	}
	file, lang := h.requestFile(req.File)
	if req.Language != "" {
		lang = strings.ToLower(req.Language)
	}
	res := Hints{File: file, Invalid: set.invalid, Matches: []TriggerMatch{}}
	matches, truncated := set.Match(req.Text)
	res.Truncated = truncated
	if len(matches) == 0 {
		return res, nil
	}
	cards := make([]TriggerCard, len(matches))
	for i, m := range matches {
		cards[i] = m.Card
	}
	applies, d, err := h.cardsApply(ctx, file, lang, cards)
	if err != nil {
		return Hints{}, err
	}
	res.Policy = d
	for _, m := range matches {
		if applies[m.Card.ID] {
			res.Matches = append(res.Matches, m)
		} else {
			res.OutOfScope++
		}
	}
	return res, nil
}

// TaggedCards returns the cards of set (compiled fresh when nil) with an
// intent tag or tool need equal to word, case-insensitive, that apply to
// req.File by the scope policy: the word half of an editor's hover.
func (h *Host) TaggedCards(ctx context.Context, set *TriggerSet, req HintsRequest, word string) ([]TriggerCard, error) {
	if set == nil {
		var err error
		if set, err = h.CompileTriggers(ctx, nil); err != nil {
			return nil, err
		}
	}
	tagged := set.Tagged(word)
	if len(tagged) == 0 {
		return nil, nil
	}
	file, lang := h.requestFile(req.File)
	if req.Language != "" {
		lang = strings.ToLower(req.Language)
	}
	applies, _, err := h.cardsApply(ctx, file, lang, tagged)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(tagged, func(c TriggerCard) bool { return !applies[c.ID] }), nil
}

// cardsApply asks the scope policy, in one batch, whether each card applies
// to file.
func (h *Host) cardsApply(ctx context.Context, file, lang string, cards []TriggerCard) (map[string]bool, policies.Decision, error) {
	set, _, err := h.policySetForContext(ctx)
	if err != nil {
		return nil, policies.Decision{}, err
	}
	in := policies.ScopeInput{Context: policies.ScopeContext{File: file, Language: lang, Anchors: h.chainIDs(),
		Intents: []string{}, Tools: []string{}}}
	seen := map[string]bool{}
	for _, c := range cards {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		in.Cards = append(in.Cards, policies.ScopeCard{
			ID: c.ID, Tier: c.Tier, Status: c.Status, Domain: c.Domain, Field: c.Field, Anchor: c.Anchor.Kind,
			Persistence: c.Persistence, Statement: c.Statement,
			Scope:   policies.CardScope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields},
			Trigger: policies.CardTrigger{Patterns: c.Trigger.Patterns, Intents: c.Trigger.Intents, ToolNeeds: c.Trigger.ToolNeeds},
		})
	}
	out, d := set.Scope(ctx, in)
	applies := make(map[string]bool, len(out))
	for id, r := range out {
		applies[id] = r.Applies
	}
	return applies, d, nil
}
