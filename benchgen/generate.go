// Package benchgen generates deterministic synthetic palaces for benchmarks
// and caches them. It writes rows straight to the store, bypassing the
// gates, so only `palace bench gen` and the benchmarks reach it.
package benchgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/store"
)

// Version changes whenever Generate's output for the same spec changes;
// benchmark caches key on it.
const Version = 3

// historyVersion changes whenever the history stage's output changes; it
// keys only palaces with a history (Spec.Requests > 0).
const historyVersion = 2

// Spec describes a synthetic palace for benchmarks.
type Spec struct {
	Cards     int   `json:"cards"`
	Evidence  int   `json:"evidence"`
	Links     int   `json:"links"`
	Repos     int   `json:"repos"`
	Worktrees int   `json:"worktrees"`
	Seed      int64 `json:"seed"`
	// Events is how many injection events of recent telemetry to write
	// (as request records of 50 events).
	Events int `json:"events"`
	// Requests is how many context requests of history to write over the
	// last Days days, shaped like real packs of repository 0. 0 writes none.
	Requests int `json:"requests,omitempty"`
	Days     int `json:"days,omitempty"`
}

// Spec10k is the standard palace.
var Spec10k = Spec{Cards: 10_000, Evidence: 100_000, Links: 300_000, Repos: 50, Worktrees: 200, Seed: 1, Events: 30_000}

// Spec100k is the large variant: 100k cards and 1M evidence.
var Spec100k = Spec{Cards: 100_000, Evidence: 1_000_000, Links: 3_000_000, Repos: 50, Worktrees: 200, Seed: 1, Events: 300_000}

// Key names the spec in cache paths.
func (s Spec) Key() string {
	k := fmt.Sprintf("v%d-%dc-%de-%dl-%dr-%dw-%dq-s%d", Version, s.Cards, s.Evidence, s.Links, s.Repos, s.Worktrees, s.Events, s.Seed)
	if s.Requests > 0 {
		k += fmt.Sprintf("-%dh%dd-hv%d", s.Requests, s.Days, historyVersion)
	}
	return k
}

// WithYear is the spec with a year of history: 200k requests over 365 days
// (about 550 a day, one busy developer's agents).
func (s Spec) WithYear() Spec {
	s.Requests, s.Days = 200_000, 365
	return s
}

// Progress reports generation progress: Stage names the table, Done of
// Total rows are written.
type Progress struct {
	Stage       string
	Done, Total int
}

// Stats counts what Generate wrote.
type Stats struct {
	Spec     Spec `json:"spec"`
	Anchors  int  `json:"anchors"`
	Cards    int  `json:"cards"`
	Evidence int  `json:"evidence"`
	Links    int  `json:"links"`
	Events   int  `json:"events"`
	// Requests are the history's request records, Pruned those the
	// retention dropped again.
	Requests  int    `json:"requests,omitempty"`
	Pruned    int    `json:"pruned,omitempty"`
	Elapsed   string `json:"elapsed"`
	Worktree  string `json:"worktree"`
	Repo      string `json:"repo"`
	Requested string `json:"requested_from"`
}

// benchBatch rows go in one transaction.
const benchBatch = 5000

// benchVocabulary are the words of generated text; the first ones are most
// frequent (Zipf), the tail are synthetic tokens.
var benchVocabulary = strings.Fields(`the a to of and in for is on with when use not it be store sqlite wal lock
test go error api request handler cache index query import export build deploy config retry timeout busy
transaction commit migration schema table row column file path module package function method type struct
interface context deadline cancel goroutine channel mutex race leak memory alloc buffer stream reader writer
json yaml toml proto grpc http client server session token auth user role permission secret key encrypt
log trace metric span latency throughput benchmark profile cpu disk network socket dns tls cert proxy queue
worker batch job schedule cron event hook plugin policy rego wasm gate card evidence anchor repo worktree
branch merge rebase review lint vet format release version tag changelog docs readme example fixture golden
flaky ci pipeline runner docker image container volume kubernetes helm terraform backup restore checkpoint
vacuum fsync journal pragma foreign constraint trigger fts rank bm25 snapshot replica shard partition`)

var benchFields = strings.Fields(`storage testing ci errors api auth perf deploy docs security build release
networking logging config cli lsp mcp policy plugins mailbox imports migrations cache concurrency frontend
backend database observability tooling review onboarding style general`)

var benchIntents = strings.Fields(`debug refactor review test deploy storage perf security docs release migrate
optimize investigate`)

var benchTools = strings.Fields(`go git make docker sqlite3 opa kubectl npm`)

var benchDirs = strings.Fields(`store host cmd api internal pkg web docs scripts policies plugins lsp mcp
deploy test tools`)

var benchLangs = strings.Fields(`go rust python typescript sql rego shellscript markdown`)

// Generate fills the empty palace h has open with a synthetic one following
// spec, deterministically for spec.Seed; repository 0 and worktree 0 are h's
// own. Human mode only (KindMode), into a palace with no cards or evidence
// (KindInvalid). progress, when not nil, hears each batch.
func Generate(ctx context.Context, h *host.Host, spec Spec, progress func(Progress)) (Stats, error) {
	if h.Mode() != host.Human {
		return Stats{}, &host.Error{Kind: host.KindMode, Msg: fmt.Sprintf("bench gen is refused in agent mode: only a human may bench gen (mode is fixed by --mode/%s=agent)", host.ModeEnv)}
	}
	if spec.Cards <= 0 || spec.Evidence <= 0 || spec.Repos <= 0 || spec.Worktrees < spec.Repos {
		return Stats{}, invalid("spec", "bench spec %+v: cards, evidence and repos must be positive, worktrees at least one per repo", spec)
	}
	loc := h.Location()
	if !loc.InGit {
		return Stats{}, invalid("cwd", "bench gen needs a git checkout as its repository 0: pass --cwd inside one")
	}
	// A second connection: the generator writes rows itself, h reads them
	// for the history's packs once committed.
	st, err := store.Open(ctx, h.DatabasePath())
	if err != nil {
		return Stats{}, internal(err, "bench gen: open %s", h.DatabasePath())
	}
	defer st.Close()
	nc, err := st.CountCards(ctx)
	if err != nil {
		return Stats{}, internal(err, "bench gen")
	}
	ne, err := st.CountEvidence(ctx)
	if err != nil {
		return Stats{}, internal(err, "bench gen")
	}
	if nc+ne > 0 {
		return Stats{}, invalid("home", "bench gen writes only into an empty palace, and %s holds %d cards and %d evidence rows: pass --home with a new directory", h.Home(), nc, ne)
	}
	start := time.Now()
	g := &benchGen{h: h, st: st, loc: loc, spec: spec, rng: rand.New(rand.NewPCG(uint64(spec.Seed), 0x9a1ace)), now: h.Now(), progress: progress}
	for _, stage := range []func(context.Context) error{g.anchors, g.evidence, g.cards, g.events, g.history} {
		if err := stage(ctx); err != nil {
			return Stats{}, err
		}
	}
	return Stats{
		Spec: spec, Anchors: len(g.anchorIDs), Cards: spec.Cards, Evidence: spec.Evidence, Links: g.links, Events: spec.Events,
		Requests: g.requests, Pruned: g.pruned,
		Elapsed: time.Since(start).Round(time.Millisecond).String(), Worktree: loc.Worktree, Repo: loc.RepoIdentity,
		Requested: loc.Dir,
	}, nil
}

// invalid is bad input (exit 2), naming the field at fault.
func invalid(field, format string, args ...any) error {
	return &host.Error{Kind: host.KindInvalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// internal is a storage failure (exit 4); a host error passes through as
// it is.
func internal(err error, format string, args ...any) error {
	if he := (*host.Error)(nil); errors.As(err, &he) {
		return err
	}
	return &host.Error{Kind: host.KindInternal, Msg: fmt.Sprintf(format, args...), Err: err}
}

type benchGen struct {
	h        *host.Host
	st       *store.Store
	loc      anchor.Location
	spec     Spec
	rng      *rand.Rand
	now      time.Time
	progress func(Progress)
	// anchorIDs: 0 global, 1..Repos repositories, then worktrees.
	anchorIDs []string
	// evByAnchor lists evidence ids per anchor index.
	evByAnchor [][]string
	cardIDs    []string
	links      int
	requests   int
	pruned     int
}

func (g *benchGen) report(stage string, done, total int) {
	if g.progress != nil {
		g.progress(Progress{Stage: stage, Done: done, Total: total})
	}
}

func (g *benchGen) anchors(ctx context.Context) error {
	stamp := store.FormatTime(g.now)
	loc := g.loc
	// The host's own chain (global, repository 0, worktree 0) with the
	// ids host gives it, so requests made through h see these anchors.
	global := store.Anchor{ID: host.AnchorID(anchor.GlobalIdentity), Kind: string(domain.AnchorGlobal), Identity: anchor.GlobalIdentity, CreatedAt: stamp}
	repoID := loc.Identity(domain.AnchorRepo)
	repo0 := store.Anchor{ID: host.AnchorID(repoID), Kind: string(domain.AnchorRepo), ParentID: global.ID, Path: loc.RepoRoot, Identity: repoID, CreatedAt: stamp}
	wtID := loc.Identity(domain.AnchorWorktree)
	wt0 := store.Anchor{ID: host.AnchorID(wtID), Kind: string(domain.AnchorWorktree), ParentID: repo0.ID, Path: loc.Worktree, Identity: wtID, CreatedAt: stamp}
	rows := []store.Anchor{global, repo0}
	for r := 1; r < g.spec.Repos; r++ {
		id := fmt.Sprintf("repo:bench.example/org/repo-%02d", r)
		rows = append(rows, store.Anchor{ID: host.AnchorID(id), Kind: "repo", ParentID: global.ID,
			Path: fmt.Sprintf("/bench/repo-%02d", r), Identity: id, CreatedAt: stamp})
	}
	rows = append(rows, wt0)
	for w := 1; w < g.spec.Worktrees; w++ {
		r := w % g.spec.Repos
		id := fmt.Sprintf("worktree:/bench/repo-%02d/wt-%03d", r, w)
		rows = append(rows, store.Anchor{ID: host.AnchorID(id), Kind: "worktree", ParentID: rows[1+r].ID,
			Path: id[len("worktree:"):], Identity: id, CreatedAt: stamp})
	}
	err := g.st.Tx(ctx, func(tx *store.Tx) error {
		for _, a := range rows {
			if _, err := tx.EnsureAnchor(ctx, a); err != nil {
				return err
			}
			g.anchorIDs = append(g.anchorIDs, a.ID)
		}
		return nil
	})
	if err != nil {
		return internal(err, "bench gen: anchors")
	}
	g.evByAnchor = make([][]string, len(g.anchorIDs))
	return nil
}

// pickAnchor draws an anchor index: 2% global, 40% a repository, 58% a worktree.
func (g *benchGen) pickAnchor() int {
	x := g.rng.Float64()
	switch {
	case x < 0.02:
		return 0
	case x < 0.42:
		return 1 + g.rng.IntN(g.spec.Repos)
	}
	return 1 + g.spec.Repos + g.rng.IntN(g.spec.Worktrees)
}

// word draws a vocabulary word with a Zipf-like skew, or a tail token.
func (g *benchGen) word() string {
	if g.rng.IntN(5) == 0 {
		return fmt.Sprintf("kw%d", g.rng.IntN(20000))
	}
	i := int(float64(len(benchVocabulary)) * g.rng.Float64() * g.rng.Float64())
	return benchVocabulary[i]
}

func (g *benchGen) sentence(minWords, maxWords int) string {
	n := minWords + g.rng.IntN(maxWords-minWords+1)
	if n == 0 {
		return ""
	}
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (g *benchGen) when() time.Time {
	return g.now.Add(-time.Duration(g.rng.IntN(365*24)) * time.Hour)
}

func (g *benchGen) evidence(ctx context.Context) error {
	total := g.spec.Evidence
	for done := 0; done < total; {
		n := min(benchBatch, total-done)
		err := g.st.Tx(ctx, func(tx *store.Tx) error {
			for range n {
				ai := g.pickAnchor()
				t := g.when()
				content := g.sentence(12, 60)
				if g.rng.IntN(10) == 0 {
					content += " TODO: " + g.sentence(4, 10)
				}
				sum := sha256.Sum256([]byte(content))
				src := fmt.Sprintf("%s/%s.go:%d", benchDirs[g.rng.IntN(len(benchDirs))], g.word(), 1+g.rng.IntN(900))
				if g.rng.IntN(3) == 0 {
					src = fmt.Sprintf("ci://build/%d", 1000+g.rng.IntN(90000))
				}
				e := domain.Evidence{
					ID: store.NewID(store.EvidencePrefix, t), Content: content, Domain: "project",
					Field: benchFields[g.rng.IntN(len(benchFields))], Provenance: domain.Provenances[g.rng.IntN(3)],
					SourceRef: src, Tags: []string{g.word()}, AnchorID: g.anchorIDs[ai], ContentSHA256: hex.EncodeToString(sum[:]),
					Actor: "bench", ActorType: "agent", CreatedAt: store.FormatTime(t),
				}
				if ai == 0 {
					e.Domain = "global"
				}
				if err := tx.InsertEvidence(ctx, e); err != nil {
					return err
				}
				g.evByAnchor[ai] = append(g.evByAnchor[ai], e.ID)
			}
			return nil
		})
		if err != nil {
			return internal(err, "bench gen: evidence")
		}
		done += n
		g.report("evidence", done, total)
	}
	return nil
}

func (g *benchGen) cards(ctx context.Context) error {
	total := g.spec.Cards
	perCard := max(1, g.spec.Links/total)
	for done := 0; done < total; {
		n := min(benchBatch/4, total-done)
		err := g.st.Tx(ctx, func(tx *store.Tx) error {
			ws := make([]store.CardWrite, 0, n)
			for i := range n {
				c, ai := g.card(done + i)
				g.cardIDs = append(g.cardIDs, c.ID)
				// Each card is a direct write by the person who wrote it.
				ws = append(ws, store.CardWrite{Insert: &c, Links: g.linkCard(c, ai, perCard),
					Event: domain.Event{ID: "ke_" + strings.TrimPrefix(c.ID, store.CardPrefix), CardID: c.ID,
						Type: domain.EventDirectWrite, ToStatus: c.Status, Reason: "benchmark data", Actor: "bench",
						ActorType: domain.ActorHuman, DecidedBy: domain.DecidedByHuman, CreatedAt: c.CreatedAt}})
			}
			_, err := tx.WriteCards(ctx, ws)
			return err
		})
		if err != nil {
			return internal(err, "bench gen: cards")
		}
		done += n
		g.report("cards+links", done, total)
	}
	return nil
}

func (g *benchGen) card(n int) (domain.Card, int) {
	ai := g.pickAnchor()
	t := g.when()
	// pick draws an index by percentage weights.
	pick := func(weights []int) int {
		x := g.rng.IntN(100)
		for i, w := range weights {
			if x < w {
				return i
			}
			x -= w
		}
		return len(weights) - 1
	}
	stmt := fmt.Sprintf("%s (rule %d)", g.sentence(6, 24), n)
	if len(stmt) > intake.MaxStatementRunes {
		stmt = stmt[len(stmt)-intake.MaxStatementRunes:]
	}
	c := domain.Card{
		ID: store.NewID(store.CardPrefix, t), Statement: stmt, StatementNorm: domain.NormalizeStatement(stmt),
		Content:     g.sentence(0, 80),
		Tier:        domain.Tiers[pick([]int{2, 18, 35, 45})],
		Status:      []domain.Status{domain.StatusPromoted, domain.StatusCanonical, domain.StatusCandidate, domain.StatusDemoted, domain.StatusRetired}[pick([]int{60, 5, 25, 5, 5})],
		Domain:      "project",
		Field:       benchFields[g.rng.IntN(len(benchFields))],
		AnchorID:    g.anchorIDs[ai],
		Persistence: []domain.Persistence{domain.PersistenceFoundational, domain.PersistenceProtected, domain.PersistenceStandard}[pick([]int{2, 5, 93})],
		RenderPref:  domain.RenderPrefs[pick([]int{85, 5, 5, 5})],
		CreatedBy:   "bench", CreatedAt: store.FormatTime(t), UpdatedAt: store.FormatTime(t),
	}
	if ai == 0 {
		c.Domain = "global"
	}
	c.Scope = domain.Scope{Paths: []string{}, Languages: []string{}, Fields: []string{}}
	if g.rng.IntN(2) == 0 {
		c.Scope.Paths = append(c.Scope.Paths, benchDirs[g.rng.IntN(len(benchDirs))]+"/**")
	}
	if g.rng.IntN(10) < 3 {
		c.Scope.Languages = append(c.Scope.Languages, benchLangs[g.rng.IntN(len(benchLangs))])
	}
	if g.rng.IntN(10) < 3 {
		c.Scope.Fields = append(c.Scope.Fields, c.Field)
	}
	c.Trigger = domain.Trigger{Patterns: []string{}, Intents: []string{}, ToolNeeds: []string{}}
	for range g.rng.IntN(4) {
		if in := benchIntents[g.rng.IntN(len(benchIntents))]; !slices.Contains(c.Trigger.Intents, in) {
			c.Trigger.Intents = append(c.Trigger.Intents, in)
		}
	}
	if g.rng.IntN(4) == 0 {
		c.Trigger.ToolNeeds = append(c.Trigger.ToolNeeds, benchTools[g.rng.IntN(len(benchTools))])
	}
	if g.rng.IntN(20) == 0 {
		c.ReviewAfter = store.FormatTime(g.now.Add(time.Duration(g.rng.IntN(120)-60) * 24 * time.Hour))
	}
	return c, ai
}

// linkCard draws links of c to about perCard evidence rows of its own
// anchor (or any anchor when it has too few), each (evidence, role) once.
func (g *benchGen) linkCard(c domain.Card, ai, perCard int) []domain.Link {
	pool := g.evByAnchor[ai]
	if len(pool) < 4 {
		pool = g.evByAnchor[1+g.spec.Repos]
		if len(pool) == 0 {
			pool = g.evByAnchor[0]
		}
	}
	if len(pool) == 0 {
		return nil
	}
	var links []domain.Link
	seen := map[string]bool{}
	n := 1 + g.rng.IntN(2*perCard-1)
	for i := range n {
		role := domain.RoleSupporting
		switch x := g.rng.IntN(100); {
		case i == 0:
		case x < 25:
			role = domain.RoleVerification
		case x < 35:
			role = domain.RoleTeaching
		case x < 38:
			role = domain.RoleCounterexample
		}
		l := domain.Link{CardID: c.ID, EvidenceID: pool[g.rng.IntN(len(pool))], Role: role, CreatedAt: c.CreatedAt}
		if k := l.EvidenceID + "|" + string(role); !seen[k] {
			seen[k] = true
			links = append(links, l)
			g.links++
		}
	}
	return links
}

// events writes injection telemetry of the last 30 days; every 50 events
// form one request record.
func (g *benchGen) events(ctx context.Context) error {
	total := g.spec.Events
	outcomes := []string{store.OutcomeInlineFull, store.OutcomeInlineCompact, store.OutcomeRefOnly, store.OutcomeTrimmed, store.OutcomeSkippedCooled, store.OutcomeSkippedScope, store.OutcomeViewed}
	for done := 0; done < total; {
		n := min(benchBatch, total-done)
		var batch [][]store.InjectionEvent
		for i := 0; i < n; i += 50 {
			k := min(50, n-i)
			t := store.FormatTime(g.now.Add(-time.Duration(g.rng.IntN(30*24*60)) * time.Minute))
			rows := make([]store.InjectionEvent, k)
			for j := range rows {
				rows[j] = store.InjectionEvent{
					RequestID: fmt.Sprintf("rq_bench_%d", (done+i)/50), CardID: g.cardIDs[g.rng.IntN(len(g.cardIDs))],
					Outcome: outcomes[g.rng.IntN(len(outcomes))], CreatedAt: t,
				}
			}
			batch = append(batch, rows)
		}
		_, err := g.st.RecordInjectionBatch(ctx, batch)
		if err != nil {
			return internal(err, "bench gen: injection events")
		}
		done += n
		g.report("injection events", done, total)
	}
	return nil
}

// historyRequests are the requests whose packs shape the history.
var historyRequests = []pack.ContextRequest{
	{Query: "sqlite lock timeout", File: "store/db.go", Field: "storage", Intents: []string{"debug"}},
	{File: "api/handler.go", Intents: []string{"review"}},
	{Query: "retry deadline context cancel", Field: "api"},
	{Query: "flaky ci pipeline runner", Intents: []string{"test", "investigate"}, Tools: []string{"go"}},
	{},
	{File: "host/context.go", Language: "go", Intents: []string{"refactor", "perf"}},
	{Query: "migration schema index", Field: "database"},
	{Query: "cache memory leak", Intents: []string{"perf"}},
}

// history writes spec.Requests request records over the last spec.Days
// days, oldest first, each a dry-run pack at repository 0 with one card in
// ten given another outcome; records past retention are dropped as they age.
func (g *benchGen) history(ctx context.Context) error {
	total, days := g.spec.Requests, max(1, g.spec.Days)
	if total <= 0 {
		return nil
	}
	var shapes [][]store.InjectionEvent
	for _, r := range historyRequests {
		r.DryRun = true
		p, err := g.h.Pack().Context(ctx, r)
		if err != nil {
			return err
		}
		shapes = append(shapes, packOutcomes(p))
	}
	drift := []string{store.OutcomeInlineFull, store.OutcomeInlineCompact, store.OutcomeRefOnly, store.OutcomeTrimmed, store.OutcomeSkippedCooled}
	span := time.Duration(days) * 24 * time.Hour
	start := g.now.Add(-span)
	const batch = 500
	for done := 0; done < total; {
		n := min(batch, total-done)
		var last time.Time
		batch := make([][]store.InjectionEvent, n)
		for i := range n {
			last = start.Add(time.Duration(float64(span) * float64(done+i) / float64(total)))
			t := store.FormatTime(last)
			shape := shapes[g.rng.IntN(len(shapes))]
			rows := make([]store.InjectionEvent, len(shape))
			for j, ev := range shape {
				ev.RequestID, ev.CreatedAt = fmt.Sprintf("rq_hist_%d", done+i), t
				if ev.Outcome != store.OutcomeSkippedScope && g.rng.IntN(10) == 0 {
					ev.Outcome = drift[g.rng.IntN(len(drift))]
				}
				rows[j] = ev
			}
			if g.rng.IntN(20) == 0 {
				rows = append(rows, store.InjectionEvent{RequestID: rows[0].RequestID, CardID: shape[g.rng.IntN(len(shape))].CardID, Outcome: store.OutcomeViewed, CreatedAt: t})
			}
			batch[i] = rows
		}
		_, err := g.st.RecordInjectionBatch(ctx, batch)
		if err != nil {
			return internal(err, "bench gen: history")
		}
		done += n
		g.requests += n
		pruned, err := g.st.PruneTelemetry(ctx, cutoffDays(last, g.h.TelemetryDays()), 0)
		if err != nil {
			return internal(err, "bench gen: history")
		}
		g.pruned += pruned
		g.report("history", done, total)
	}
	return nil
}

// packOutcomes is what a request for p records: every item by the form it
// rendered in, then the skipped cards that count (out of scope or cooled).
func packOutcomes(p pack.Pack) []store.InjectionEvent {
	var out []store.InjectionEvent
	for _, it := range p.Items {
		o := store.OutcomeSkippedCooled
		switch {
		case it.Trimmed != nil:
			o = store.OutcomeTrimmed
		case it.RenderForm == domain.FormInlineFull:
			o = store.OutcomeInlineFull
		case it.RenderForm == domain.FormInlineCompact:
			o = store.OutcomeInlineCompact
		case it.RenderForm == domain.FormRefOnly:
			o = store.OutcomeRefOnly
		}
		out = append(out, store.InjectionEvent{CardID: it.ID, Outcome: o})
	}
	for _, sk := range p.Skipped {
		switch sk.Reason {
		case store.OutcomeSkippedScope, store.OutcomeSkippedCooled:
			out = append(out, store.InjectionEvent{CardID: sk.ID, Outcome: sk.Reason})
		}
	}
	return out
}

// cutoffDays is the start of the UTC day days days before now's: the
// oldest raw telemetry a host keeps at now.
func cutoffDays(now time.Time, days int) string {
	return store.FormatTime(now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days))
}
