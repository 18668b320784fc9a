package pack

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/cache"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/trigger"
	"github.com/palacehq/palace/store"
)

// MaxTriggerLineBytes is the longest line trigger patterns are matched
// against; longer lines (minified code, data blobs) are skipped.
const MaxTriggerLineBytes = 64 << 10

// MaxTriggerMatches bounds the matches one document reports; the rest are
// dropped (TriggerMatches.Truncated says so).
const MaxTriggerMatches = 5000

// TriggerCard is the part of an authoritative card that hints and hover show.
type TriggerCard struct {
	ID          string             `json:"id"`
	Statement   string             `json:"statement"`
	Tier        domain.Tier        `json:"tier"`
	Status      domain.Status      `json:"status"`
	Domain      domain.Domain      `json:"domain"`
	Field       string             `json:"field"`
	Anchor      cardview.AnchorRef `json:"anchor"`
	Persistence domain.Persistence `json:"persistence"`
	Scope       domain.Scope       `json:"scope"`
	Trigger     domain.Trigger     `json:"trigger"`
	// ReviewAfter is the card's review date (a card past it is stale).
	ReviewAfter string `json:"review_after,omitempty"`
	norm        string // NormalizedStatement, when known
}

// NormalizedStatement is the card's statement as duplicates are found by
// (domain.NormalizeStatement): a card and its published copy are shown once.
func (c TriggerCard) NormalizedStatement() string {
	if c.norm != "" {
		return c.norm
	}
	return domain.NormalizeStatement(c.Statement)
}

// card is c as a domain card, for the scope policy and the staleness check.
func (c TriggerCard) card() domain.Card {
	return domain.Card{ID: c.ID, Tier: c.Tier, Status: c.Status, Domain: c.Domain, Field: c.Field, Persistence: c.Persistence,
		Statement: c.Statement, Scope: c.Scope, Trigger: c.Trigger, ReviewAfter: c.ReviewAfter}
}

// Label is the short form editors show inline: "‹qi› statement".
func (c TriggerCard) Label() string { return "‹" + string(c.Tier) + "› " + c.Statement }

// TriggerSet is the compiled trigger patterns, intent tags and tool needs of
// the authoritative, unexpired cards visible from a host. It is immutable
// and safe for concurrent use; CompileTriggers builds the next one.
type TriggerSet struct {
	cards    []TriggerCard
	patterns []triggerPattern
	// index maps a lower-cased trigram of a pattern's required literal to
	// the patterns that need it; bloom is a cheap pre-check of index.
	index   map[uint32][]int32
	bloom   [1 << 10]uint64
	always  []int32 // patterns with no usable literal: run on every line
	tags    map[string][]int32
	invalid []InvalidTrigger
}

// InvalidTrigger is a stored pattern that does not compile or, with Pattern
// empty, a card whose triggers were skipped whole for package trigger's limits.
type InvalidTrigger struct {
	CardID  string `json:"card_id"`
	Pattern string `json:"pattern"`
	Error   string `json:"error"`
}

type triggerPattern struct {
	src  string
	re   *regexp.Regexp
	size int // instructions of the compiled program
	card int32
	// need lists literal sets, lower-cased, one of each in every match;
	// need[0], the most selective, is indexed; nil: run on every line.
	need [][][]byte
}

// Cards returns the cards of the set, dao_tian first.
func (t *TriggerSet) Cards() []TriggerCard { return t.cards }

// Len is the number of compiled patterns.
func (t *TriggerSet) Len() int { return len(t.patterns) }

// Invalid lists the stored patterns that did not compile.
func (t *TriggerSet) Invalid() []InvalidTrigger { return t.invalid }

// CompileTriggers reads the authoritative, unexpired cards visible from the
// host and compiles their trigger patterns, reusing prev's (when not nil)
// for unchanged patterns. A pattern that does not compile is listed in
// Invalid and ignored. The limits of package trigger hold whatever the store
// holds: a card over them, or past trigger.MaxSetProgram for the set, is
// skipped whole (listed in Invalid with an empty Pattern).
func (pl *Pipeline) CompileTriggers(ctx context.Context, prev *TriggerSet) (*TriggerSet, error) {
	rows, err := pl.Store.ListCards(ctx, store.CardFilter{Statuses: domain.AuthoritativeStatuses(), AnchorIDs: pl.Loc.ChainIDs()})
	if err != nil {
		return nil, hosterr.Internal(err, "read trigger cards")
	}
	old := map[string]*triggerPattern{}
	if prev != nil {
		for i := range prev.patterns {
			old[prev.patterns[i].src] = &prev.patterns[i]
		}
	}
	now := pl.stamp()
	t := &TriggerSet{index: map[uint32][]int32{}, tags: map[string][]int32{}}
	setProgram := 0
	for _, c := range rows {
		if c.ExpiresAt != "" && c.ExpiresAt <= now {
			continue
		}
		tr := c.Trigger
		if len(tr.Patterns)+len(tr.Intents)+len(tr.ToolNeeds) == 0 {
			continue
		}
		if p := trigger.Sizes(tr.Patterns, tr.Intents, tr.ToolNeeds); p != nil {
			t.invalid = append(t.invalid, InvalidTrigger{CardID: c.ID, Error: "its triggers are skipped: " + p.Msg})
			continue
		}
		var pats []triggerPattern
		cardProgram := 0
		for _, src := range tr.Patterns {
			p := triggerPattern{src: src}
			if o, ok := old[src]; ok {
				p.re, p.need, p.size = o.re, o.need, o.size
			} else if p.re, p.need, p.size, err = compileTrigger(src); err != nil {
				t.invalid = append(t.invalid, InvalidTrigger{CardID: c.ID, Pattern: src, Error: err.Error()})
				continue
			}
			cardProgram += p.size
			pats = append(pats, p)
		}
		if cardProgram > trigger.MaxCardProgram {
			t.invalid = append(t.invalid, InvalidTrigger{CardID: c.ID, Error: fmt.Sprintf(
				"its triggers are skipped: its patterns compile to %d instructions together, over the limit of %d per card", cardProgram, trigger.MaxCardProgram)})
			continue
		}
		if setProgram+cardProgram > trigger.MaxSetProgram {
			t.invalid = append(t.invalid, InvalidTrigger{CardID: c.ID, Error: fmt.Sprintf(
				"its triggers are skipped: the trigger patterns of this palace compile to over %d instructions together; retire cards whose triggers no longer help", trigger.MaxSetProgram)})
			continue
		}
		setProgram += cardProgram
		ci := int32(len(t.cards))
		t.cards = append(t.cards, TriggerCard{
			ID: c.ID, Statement: c.Statement, Tier: c.Tier, Status: c.Status, Domain: c.Domain, Field: c.Field,
			Anchor: pl.anchorRef(ctx, c.AnchorID), Persistence: c.Persistence, Scope: c.Scope, Trigger: c.Trigger,
			ReviewAfter: c.ReviewAfter, norm: c.StatementNorm,
		})
		for _, tag := range slices.Concat(tr.Intents, tr.ToolNeeds) {
			k := strings.ToLower(strings.TrimSpace(tag))
			if k != "" && !slices.Contains(t.tags[k], ci) {
				t.tags[k] = append(t.tags[k], ci)
			}
		}
		for _, p := range pats {
			p.card = ci
			t.add(p)
		}
	}
	return t, nil
}

func (t *TriggerSet) add(p triggerPattern) {
	pi := int32(len(t.patterns))
	t.patterns = append(t.patterns, p)
	if p.need == nil {
		t.always = append(t.always, pi)
		return
	}
	for _, lit := range p.need[0] {
		k := trigram(lit[0], lit[1], lit[2])
		if !slices.Contains(t.index[k], pi) {
			t.index[k] = append(t.index[k], pi)
		}
		b := bloomBit(k)
		t.bloom[b>>6] |= 1 << (b & 63)
	}
}

// compileTrigger compiles a pattern (trigger.Compile) and returns the
// literal sets every match contains (requiredLiterals) and its program size.
func compileTrigger(src string) (*regexp.Regexp, [][][]byte, int, error) {
	re, size, err := trigger.Compile(src)
	if err != nil {
		return nil, nil, 0, err
	}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return re, nil, size, nil
	}
	sets := requiredLiterals(parsed.Simplify())
	slices.SortStableFunc(sets, func(a, b []string) int { return shortest(b) - shortest(a) })
	var need [][][]byte
	for _, set := range sets[:min(len(sets), maxLiteralSets)] {
		var bs [][]byte
		for _, l := range set {
			bs = append(bs, []byte(l))
		}
		need = append(need, bs)
	}
	return re, need, size, nil
}

// maxLiteralAlternatives bounds how many literals one set may offer, and
// maxLiteralSets how many sets a pattern checks.
const (
	maxLiteralAlternatives = 16
	maxLiteralSets         = 4
)

// requiredLiterals returns literal sets such that every match of re
// contains, ASCII-lower-cased, one literal of each set; nil when it cannot
// tell. As a prefilter it must pass every line the pattern can match.
func requiredLiterals(re *syntax.Regexp) [][]string {
	switch re.Op {
	case syntax.OpLiteral:
		if lit := safeLiteral(re.Rune, re.Flags&syntax.FoldCase != 0); len(lit) >= 3 {
			return [][]string{{lit}}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var all [][]string
		for _, sub := range re.Sub {
			all = append(all, requiredLiterals(sub)...)
		}
		return all
	case syntax.OpAlternate:
		var union []string
		for _, sub := range re.Sub {
			sets := requiredLiterals(sub)
			if sets == nil {
				return nil
			}
			union = append(union, slices.MaxFunc(sets, func(a, b []string) int { return shortest(a) - shortest(b) })...)
		}
		if len(union) <= maxLiteralAlternatives {
			slices.Sort(union)
			return [][]string{slices.Compact(union)}
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

// safeLiteral lower-cases a literal as foldLine folds lines and returns its
// longest stretch the prefilter can look for byte-wise: a case-folded
// non-ASCII letter (é/É) splits it; ſ and K fold to s and k.
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
		switch {
		case r == 'ſ':
			cur.WriteByte('s')
		case r == 'K':
			cur.WriteByte('k')
		case r < utf8.RuneSelf:
			cur.WriteByte(lowerASCII(byte(r)))
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return best.String()
}

// asciiFoldOrbit reports whether every case variant of r folds to ASCII
// under foldLine (or r has no variants at all).
func asciiFoldOrbit(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if (f >= utf8.RuneSelf && f != 'ſ' && f != 'K') || (r >= utf8.RuneSelf && r != 'ſ' && r != 'K') {
			return false
		}
	}
	return true
}

// foldLine appends line to dst with ASCII letters lower-cased and ſ (U+017F)
// and K (U+212A) written as s and k, as case-insensitive patterns read them.
func foldLine(dst []byte, line string) []byte {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c < utf8.RuneSelf:
			dst = append(dst, lowerASCII(c))
		case c == 0xC5 && i+1 < len(line) && line[i+1] == 0xBF:
			dst = append(dst, 's')
			i++
		case c == 0xE2 && i+2 < len(line) && line[i+1] == 0x84 && line[i+2] == 0xAA:
			dst = append(dst, 'k')
			i += 2
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func trigram(a, b, c byte) uint32 { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }

func bloomBit(k uint32) uint32 { return (k * 2654435761) >> 16 & (1<<16 - 1) }

// TriggerMatch is one line a card's trigger pattern matches. Line, Col and
// EndCol (exclusive) are 1-based; the columns count bytes.
type TriggerMatch struct {
	Line    int         `json:"line"`
	Col     int         `json:"col"`
	EndCol  int         `json:"end_col"`
	Pattern string      `json:"pattern"`
	Card    TriggerCard `json:"card"`
	// Contest is set when the card is contested: editors warn on the line
	// instead of hinting.
	Contest *cardview.ItemContest `json:"contest,omitempty"`
	// Stale is set when the code the card's evidence saw changed (or its
	// review date passed): editors warn on the line.
	Stale *staleness.Stale `json:"stale,omitempty"`
}

// Match finds, for every line of text, the cards whose trigger patterns
// match it: at most one match per card and line, ordered by line, column
// and card id; lines over MaxTriggerLineBytes are skipped, and truncated says
// whether MaxTriggerMatches cut the result.
func (t *TriggerSet) Match(text string) (matches []TriggerMatch, truncated bool) {
	return t.MatchCached(text, nil)
}

// MatchCache remembers the matches of the lines a TriggerSet has seen, so
// matching an edited document again costs only its changed lines. It is
// keyed by set, holds at most maxMatchCacheBytes of line text and is safe
// for concurrent use.
type MatchCache struct {
	once  sync.Once
	lines cache.Map[*TriggerSet, string, []lineHit]
}

const maxMatchCacheBytes = 4 << 20

// lineHit is one match within a line: pattern index, 0-based byte columns.
type lineHit struct{ pat, col, end int32 }

// MatchCached is Match with a line cache (nil: none).
func (t *TriggerSet) MatchCached(text string, cache *MatchCache) (matches []TriggerMatch, truncated bool) {
	if len(t.patterns) == 0 {
		return nil, false
	}
	if cache != nil {
		cache.once.Do(func() {
			cache.lines.Max, cache.lines.MaxCost = 1<<20, maxMatchCacheBytes
			cache.lines.Cost = func(line string, _ []lineHit) int { return len(line) + 32 }
		})
	}
	m := matcher{set: t, seen: make([]int32, len(t.patterns)), cardSeen: make([]int32, len(t.cards))}
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
		start = end + 1
		if len(line) > MaxTriggerLineBytes {
			continue
		}
		var hits []lineHit
		cached := false
		if cache != nil {
			hits, cached = cache.lines.Get(t, line)
		}
		if !cached {
			hits = m.line(lineNo, line)
			if cache != nil {
				cache.lines.Put(t, strings.Clone(line), slices.Clone(hits))
			}
		}
		for _, h := range hits {
			if len(m.out) == MaxTriggerMatches {
				return m.out, true
			}
			p := &t.patterns[h.pat]
			m.out = append(m.out, TriggerMatch{Line: lineNo, Col: int(h.col) + 1, EndCol: int(h.end) + 1, Pattern: p.src, Card: t.cards[p.card]})
		}
	}
	return m.out, false
}

type matcher struct {
	set   *TriggerSet
	lower []byte
	cands []int32
	// seen[p] / cardSeen[c]: the last line (1-based; 0 for none) that queued
	// pattern p or matched card c, so nothing is cleared between lines.
	seen     []int32
	cardSeen []int32
	lineHits []lineHit
	out      []TriggerMatch
}

// line returns the matches of line n, ordered by column and card id; the
// slice is reused by the next call.
func (m *matcher) line(n int, line string) []lineHit {
	t := m.set
	m.cands = m.cands[:0]
	m.lower = foldLine(m.lower[:0], line)
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
	m.lineHits = m.lineHits[:0]
	if len(m.cands) == 0 {
		return nil
	}
	slices.Sort(m.cands)
	for _, pi := range m.cands {
		p := &t.patterns[pi]
		if m.cardSeen[p.card] == int32(n) || !containsAll(lw, p.need) {
			continue
		}
		loc := p.re.FindStringIndex(line)
		if loc == nil {
			continue
		}
		m.cardSeen[p.card] = int32(n)
		m.lineHits = append(m.lineHits, lineHit{pat: pi, col: int32(loc[0]), end: int32(loc[1])})
	}
	slices.SortFunc(m.lineHits, func(a, b lineHit) int {
		if a.col != b.col {
			return int(a.col - b.col)
		}
		return strings.Compare(t.cards[t.patterns[a.pat].card].ID, t.cards[t.patterns[b.pat].card].ID)
	})
	return m.lineHits
}

// containsAll reports whether lower holds a literal of every set.
func containsAll(lower []byte, need [][][]byte) bool {
	for _, set := range need {
		found := false
		for _, l := range set {
			if bytes.Contains(lower, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
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
