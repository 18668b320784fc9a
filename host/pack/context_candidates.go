package pack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// selectCandidates runs the bounded selection of a request and fills
// a.considered. With nothing to rank by it is the first CandidateLimit cards
// in fill order (sortByFill). Otherwise the visible cards are ranked: past
// CandidateLimit, a first pass over their texts picks which to read
// (mergeCandidates, so foundational cards are never crowded out by text
// matches); with AllRepos, FTS5 picks from the whole palace instead. The
// cards read are then ranked over every field.
func (pl *Pipeline) selectCandidates(ctx context.Context, a *assembly) error {
	q := pl.candidateQuery(a.req, a.now)
	pr := a.pack.Request
	rq := newRelQuery(pr.Query, pr.File)
	var (
		cards []domain.Card
		total int
		err   error
	)
	rel := map[string]relScore{}
	if !rq.empty() || q.Match != "" {
		if total, err = pl.Store.CountCandidates(ctx, q); err != nil {
			return hosterr.Internal(err, "select context candidates")
		}
	}
	switch {
	case !rq.empty() && !a.req.AllRepos && total <= CandidateLimit:
		if cards, err = pl.Store.CandidateCards(ctx, q); err != nil {
			return hosterr.Internal(err, "select context candidates")
		}
		sortByFill(pl.Loc.ChainIDs(), cards, cardFillKey)
	case !rq.empty() && !a.req.AllRepos:
		// A large selection is held as texts, far smaller than cards.
		texts, err := pl.Store.CandidateTexts(ctx, q)
		if err != nil {
			return hosterr.Internal(err, "select context candidates")
		}
		sortByFill(pl.Loc.ChainIDs(), texts, textFillKey)
		docs := make([]relevanceDoc, len(texts))
		fill := make([]int, len(texts))
		for i, t := range texts {
			docs[i] = relevanceDoc{id: t.ID, statement: t.Statement, content: t.Content}
			fill[i] = i
		}
		first := rq.rank(docs)
		matched := make([]int, 0, len(first))
		for i, t := range texts {
			if _, ok := first[t.ID]; ok {
				matched = append(matched, i)
			}
		}
		slices.SortFunc(matched, func(x, y int) int {
			return cmp.Or(cmp.Compare(first[texts[y].ID].score, first[texts[x].ID].score), strings.Compare(texts[x].ID, texts[y].ID))
		})
		picked := mergeCandidates(fill, matched)
		ids := make([]string, len(picked))
		pickedTexts := make([]store.CandidateText, len(picked))
		for i, k := range picked {
			ids[i], pickedTexts[i] = texts[k].ID, texts[k]
		}
		byID, err := pl.Store.CardsOf(ctx, pickedTexts)
		if err != nil {
			return hosterr.Internal(err, "read context candidates")
		}
		cards = inOrder(ids, byID)
	case q.Match != "":
		// AllRepos with a query: FTS5 picks from the whole palace.
		matched, fill, err := pl.Store.Candidates(ctx, q)
		if err != nil {
			return hosterr.Internal(err, "select context candidates")
		}
		ids := make([]string, len(matched))
		for i, m := range matched {
			ids[i] = m.ID
		}
		ids = mergeCandidates(fill, ids)
		byID, err := pl.Store.CardsByIDs(ctx, ids)
		if err != nil {
			return hosterr.Internal(err, "read context candidates")
		}
		cards = inOrder(ids, byID)
	default:
		if cards, total, err = pl.Store.CandidateFill(ctx, q); err != nil {
			return hosterr.Internal(err, "select context candidates")
		}
	}
	if !rq.empty() && len(cards) > 0 {
		if rel, err = pl.rankCards(ctx, rq, cards); err != nil {
			return err
		}
	}
	// Without query words every card is taken as just relevant, so scope,
	// file words and persistence decide.
	if len(tokenTerms(pr.Query)) == 0 {
		for _, c := range cards {
			r := rel[c.ID]
			r.relevance = max(r.relevance, noQueryRelevance)
			rel[c.ID] = r
		}
	}
	refs := map[string]cardview.AnchorRef{}
	ranks := map[string]int{}
	for _, id := range pl.Loc.ChainIDs() {
		ranks[id] = anchorKindRank(string(pl.Loc.KindOf(id)))
	}
	for _, c := range cards {
		ref, ok := refs[c.AnchorID]
		if !ok {
			ref = pl.anchorRef(ctx, c.AnchorID)
			refs[c.AnchorID] = ref
		}
		r := rel[c.ID]
		cand := &candidate{card: c, anchor: ref, relevance: r.relevance, matched: r.matched}
		if r, ok := ranks[c.AnchorID]; ok {
			cand.rank = r
		} else {
			cand.rank, cand.foreign = 3, true
		}
		a.considered = append(a.considered, cand)
	}
	a.pack.Selection = Selection{
		TotalCandidates: total, Considered: len(a.considered), CandidateLimit: CandidateLimit,
		InlineCoreIDs: []string{}, InlineScopedIDs: []string{}, RefOnlyIDs: []string{},
		InspectorOnlyIDs: []string{}, TrimmedDueToBudgetIDs: []string{},
	}
	return nil
}

// noQueryRelevance is every card's relevance to a request without query
// words: just relevant (persistence counts, a reference line is earned).
const noQueryRelevance = 0.3

// evidencePerCard is how many of a card's cited evidence rows, in link
// order, the model reads: evidence often says why a rule exists.
const evidencePerCard = 2

// evidenceRankLimit is the largest selection whose cited evidence is read.
const evidenceRankLimit = 64

// rankCards ranks cards with every field of the model; their cited evidence
// is read only within evidenceRankLimit (past it, for the latency target).
func (pl *Pipeline) rankCards(ctx context.Context, rq *relQuery, cards []domain.Card) (map[string]relScore, error) {
	docs := make([]relevanceDoc, len(cards))
	if len(cards) > evidenceRankLimit {
		for i, c := range cards {
			docs[i] = cardDoc(c, "")
		}
		return rq.rank(docs), nil
	}
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	links, err := pl.Store.LinkRows(ctx, ids)
	if err != nil {
		return nil, hosterr.Internal(err, "read citations for ranking")
	}
	var evIDs []string
	for _, id := range ids {
		for _, l := range links[id][:min(len(links[id]), evidencePerCard)] {
			evIDs = append(evIDs, l.EvidenceID)
		}
	}
	texts, err := pl.Store.EvidenceTexts(ctx, evIDs)
	if err != nil {
		return nil, hosterr.Internal(err, "read evidence for ranking")
	}
	var b strings.Builder
	for i, c := range cards {
		b.Reset()
		for _, l := range links[c.ID][:min(len(links[c.ID]), evidencePerCard)] {
			e := texts[l.EvidenceID]
			b.WriteString(e.Content)
			b.WriteByte(' ')
			b.WriteString(e.SourceRef)
			b.WriteByte(' ')
		}
		docs[i] = cardDoc(c, b.String())
	}
	return rq.rank(docs), nil
}

// mergeCandidates picks at most CandidateLimit of fill and matched (ids, or
// indices of them): the first quarter of fill, then matched, then the rest
// of fill, each once.
func mergeCandidates[K comparable](fill, matched []K) []K {
	var picked []K
	seen := map[K]bool{}
	add := func(k K) {
		if !seen[k] && len(picked) < CandidateLimit {
			seen[k] = true
			picked = append(picked, k)
		}
	}
	head := min(len(fill), CandidateLimit/4)
	for _, k := range fill[:head] {
		add(k)
	}
	for _, k := range matched {
		add(k)
	}
	for _, k := range fill[head:] {
		if len(picked) == CandidateLimit {
			break
		}
		add(k)
	}
	return picked
}

// inOrder is the cards of byID in the order of ids, skipping absent ones
// (cards that vanished meanwhile).
func inOrder(ids []string, byID map[string]domain.Card) []domain.Card {
	out := make([]domain.Card, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out
}

var persistenceRank = map[domain.Persistence]int{domain.PersistenceFoundational: 0, domain.PersistenceProtected: 1, domain.PersistenceStandard: 2}

func cardFillKey(c *domain.Card) (domain.Persistence, domain.Tier, string, string) {
	return c.Persistence, c.Tier, c.AnchorID, c.ID
}

func textFillKey(t *store.CandidateText) (domain.Persistence, domain.Tier, string, string) {
	return t.Persistence, t.Tier, t.AnchorID, t.ID
}

// sortByFill orders xs as the SQL fill does: persistence, tier, anchor
// (innermost first, other repositories last), id, reading each through key.
// It sorts slim keys and permutes xs in place.
func sortByFill[T any](chain []string, xs []T, key func(*T) (domain.Persistence, domain.Tier, string, string)) {
	type fillKey struct {
		id      string
		at      int32
		p, t, a int8
	}
	keys := make([]fillKey, len(xs))
	for i := range xs {
		p, t, anchorID, id := key(&xs[i])
		a := slices.Index(chain, anchorID)
		if a < 0 {
			a = len(chain)
		}
		keys[i] = fillKey{id: id, at: int32(i), p: int8(persistenceRank[p]), t: int8(t.Rank()), a: int8(a)}
	}
	slices.SortFunc(keys, func(x, y fillKey) int {
		if d := cmp.Or(cmp.Compare(x.p, y.p), cmp.Compare(x.t, y.t), cmp.Compare(x.a, y.a)); d != 0 {
			return d
		}
		return strings.Compare(x.id, y.id)
	})
	// Position j takes the element at keys[j].at: follow each cycle of the
	// permutation once, marking positions done.
	for j := range keys {
		if keys[j].at < 0 {
			continue
		}
		tmp := xs[j]
		cur := j
		for {
			src := int(keys[cur].at)
			keys[cur].at = -1
			if src == j {
				xs[cur] = tmp
				break
			}
			xs[cur] = xs[src]
			cur = src
		}
	}
}

// evidenceWindow is how many of the newest visible evidence rows a query
// ranks for --include-evidence and briefs (docs/rationale.md).
const evidenceWindow = 100

// addEvidence adds up to evidenceLimit evidence rows of the visible anchors
// (of Field, when set): the query's best matches among the newest
// evidenceWindow rows, or the newest without a query.
func (pl *Pipeline) addEvidence(ctx context.Context, a *assembly) error {
	terms := queryTerms(a.req.Query)
	window := evidenceLimit
	if len(terms) > 0 {
		window = evidenceWindow
	}
	rows, err := pl.Store.RecentEvidence(ctx, pl.Loc.ChainIDs(), a.pack.Request.Field, window)
	if err != nil {
		return hosterr.Internal(err, "read evidence")
	}
	if len(terms) > 0 {
		docs := make([]relevanceDoc, len(rows))
		for i, e := range rows {
			docs[i] = relevanceDoc{id: e.ID, content: e.Content}
		}
		rel := bm25Rank(a.req.Query, docs)
		matched := rows[:0:0]
		for _, e := range rows {
			if rel[e.ID] > 0 {
				matched = append(matched, e)
			}
		}
		// Among equals the newer first (rows are newest first).
		byRelevance(matched, func(e domain.Evidence) float64 { return rel[e.ID] })
		rows = matched
	}
	for _, e := range rows[:min(len(rows), evidenceLimit)] {
		a.pack.Evidence = append(a.pack.Evidence, EvidenceItem{
			ID: e.ID, Field: e.Field, Provenance: e.Provenance, SourceRef: e.SourceRef,
			Anchor: pl.anchorRef(ctx, e.AnchorID), Content: e.Content,
		})
	}
	return nil
}

// requestFile makes the request's file worktree-relative (slash-separated)
// and guesses its language from its extension.
func (pl *Pipeline) requestFile(file string) (rel, lang string) {
	if file == "" {
		return "", ""
	}
	p := pl.absFile(file)
	root := pl.Loc.Dir
	if pl.Loc.InGit {
		root = pl.Loc.Worktree
	}
	if r, err := filepath.Rel(root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		p = r
	}
	return filepath.ToSlash(p), extLanguages[strings.ToLower(filepath.Ext(p))]
}

// absFile is file made absolute against the host's directory, with
// symbolic links resolved as far as it exists.
func (pl *Pipeline) absFile(file string) string {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(pl.Loc.Dir, p)
	}
	p = filepath.Clean(p)
	if c, err := anchor.Canonical(p); err == nil {
		p = c
	}
	return p
}

// ErrOtherCheckout is matched (errors.Is) by the refusal of a request's
// file that lies in another git checkout.
var ErrOtherCheckout = errors.New("the file is in another git checkout")

// checkFileCheckout refuses a request's file in another git checkout than
// the host's (another repository or worktree, a submodule): a pack for it
// would silently be the wrong repository's. A file in no checkout is taken
// as it is. The checkout is the nearest directory with a .git entry.
func (pl *Pipeline) checkFileCheckout(file string) error {
	if file == "" {
		return nil
	}
	p := pl.absFile(file)
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if pl.Loc.InGit && dir == pl.Loc.Worktree {
			return nil
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			here := "this directory is in no git checkout"
			if pl.Loc.InGit {
				here = "this request's checkout is " + pl.Loc.Worktree
			}
			return &hosterr.Error{Kind: hosterr.KindInvalid, Field: "file", Err: ErrOtherCheckout, Msg: fmt.Sprintf(
				"--file %s is in the git checkout %s, but %s: its memory is not this request's; run palace from that checkout (--cwd %s), or name a file of this one",
				file, dir, here, dir)}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

var extLanguages = map[string]string{
	".go": "go", ".rs": "rust", ".py": "python", ".ts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".jsx": "javascriptreact", ".java": "java", ".kt": "kotlin", ".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby", ".sh": "shellscript", ".md": "markdown",
	".sql": "sql", ".rego": "rego", ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml",
	".swift": "swift", ".cs": "csharp", ".php": "php", ".lua": "lua", ".zig": "zig",
}

// byRelevance sorts xs by rel, best first, stably.
func byRelevance[T any](xs []T, rel func(T) float64) {
	slices.SortStableFunc(xs, func(x, y T) int { return cmp.Compare(rel(y), rel(x)) })
}
