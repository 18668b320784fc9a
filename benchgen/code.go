package benchgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/store"
)

// CodeStats counts what CodeCitations wrote.
type CodeStats struct {
	Files int `json:"files"`
	Cards int `json:"cards"`
	// Moved counts the files edited after the citations were recorded so
	// their cited lines moved down (still fresh); Changed those edited so
	// some cited lines changed (stale cards).
	Moved, Changed int
	// CardIDs are the code-citing cards.
	CardIDs []string `json:"-"`
}

// codeFiles is how many source files the code-citing cards cite, and
// codeLines the lines of each.
const (
	codeFiles = 250
	codeLines = 300
)

// CodeCitations adds n promoted cards whose supporting evidence cites a
// line range of a committed source file in h's checkout (as `palace record
// --source-ref` does), written straight to the store; then a tenth of the
// files move their cited lines (still fresh) and another tenth change them
// (stale). One card in five is worded like a benchmark request, so every
// pack holds some. Deterministic for seed.
func CodeCitations(ctx context.Context, h *host.Host, n int, seed int64) (CodeStats, error) {
	loc := h.Location()
	if !loc.InGit {
		return CodeStats{}, invalid("cwd", "bench code citations need a git checkout")
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0de))
	g := &benchGen{rng: rng}
	root := loc.Worktree
	files := make([]string, codeFiles)
	for i := range files {
		dir := benchDirs[i%len(benchDirs)]
		files[i] = fmt.Sprintf("%s/gen_%03d.go", dir, i)
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n", dir)
		for l := 2; l <= codeLines; l++ {
			fmt.Fprintf(&b, "\t// %s %d\n", strings.TrimSuffix(g.sentence(4, 10), "."), l)
		}
		p := filepath.Join(root, filepath.FromSlash(files[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return CodeStats{}, internal(err, "bench code: write %s", files[i])
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return CodeStats{}, internal(err, "bench code: write %s", files[i])
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench code"}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			return CodeStats{}, internal(fmt.Errorf("git %v: %w: %s", args, err, out), "bench code")
		}
	}
	head := staleness.Head(ctx, root)
	st, err := store.Open(ctx, h.DatabasePath())
	if err != nil {
		return CodeStats{}, internal(err, "bench code: open %s", h.DatabasePath())
	}
	defer st.Close()
	stamp := store.FormatTime(Epoch)
	repoID := host.AnchorID(loc.Identity(domain.AnchorRepo))
	wtID := host.AnchorID(loc.Identity(domain.AnchorWorktree))
	// Words of the benchmark requests, so the cards compete in their packs.
	topics := []string{"sqlite lock timeout", "retry deadline context cancel", "flaky ci pipeline runner", "handler review", "context refactor perf"}
	stats := CodeStats{Files: codeFiles, Cards: n}
	err = st.Tx(ctx, func(tx *store.Tx) error {
		var ws []store.CardWrite
		for i := range n {
			f := files[i%codeFiles]
			start := 2 + rng.IntN(codeLines-12)
			ref := fmt.Sprintf("%s#L%d-L%d", f, start, start+rng.IntN(8))
			content := fmt.Sprintf("%s (seen in %s)", g.sentence(8, 20), ref)
			sum := sha256.Sum256([]byte(content))
			ev := domain.Evidence{ID: fmt.Sprintf("ev_code%05d", i), Content: content, Domain: "project", Field: benchFields[i%len(benchFields)],
				Provenance: domain.ProvenanceRuntime, SourceRef: ref, Tags: []string{"code"}, AnchorID: repoID,
				ContentSHA256: hex.EncodeToString(sum[:]), Actor: "bench", ActorType: domain.ActorAgent, CreatedAt: stamp}
			if err := tx.InsertEvidence(ctx, ev); err != nil {
				return err
			}
			o, ok := staleness.Observe(root, head, ev.ID, ref, stamp)
			if !ok {
				return fmt.Errorf("observe %s: nothing seen", ref)
			}
			if err := tx.InsertObservations(ctx, []domain.Observation{o}); err != nil {
				return err
			}
			// Most read like the palace's other cards; one in five is
			// worded like a benchmark request, so every pack holds some.
			stmt := fmt.Sprintf("%s (code rule %d)", g.sentence(6, 24), i)
			if i%5 == 0 {
				stmt = fmt.Sprintf("%s %s (code rule %d)", topics[i%len(topics)], strings.TrimSuffix(g.sentence(4, 12), "."), i)
			}
			anchorID := wtID
			if i%2 == 1 {
				anchorID = repoID
			}
			c := domain.Card{ID: fmt.Sprintf("kc_code%05d", i), Statement: stmt, StatementNorm: domain.NormalizeStatement(stmt),
				Tier: []domain.Tier{domain.TierQi, domain.TierShu}[i%2], Status: domain.StatusPromoted, Domain: "project",
				Field: benchFields[i%len(benchFields)], AnchorID: anchorID, Persistence: domain.PersistenceStandard, RenderPref: domain.RenderAuto,
				Scope:     domain.Scope{Paths: []string{strings.SplitN(f, "/", 2)[0] + "/**"}, Languages: []string{}, Fields: []string{}},
				Trigger:   domain.Trigger{Patterns: []string{}, Intents: []string{}, ToolNeeds: []string{}},
				CreatedBy: "bench", CreatedAt: stamp, UpdatedAt: stamp}
			stats.CardIDs = append(stats.CardIDs, c.ID)
			ws = append(ws, store.CardWrite{Insert: &c,
				Links: []domain.Link{{CardID: c.ID, EvidenceID: ev.ID, Role: domain.RoleSupporting, CreatedAt: stamp}},
				Event: domain.Event{ID: "ke_code" + c.ID[len("kc_code"):], CardID: c.ID, Type: domain.EventDirectWrite, ToStatus: c.Status,
					Reason: "benchmark data", Actor: "bench", ActorType: domain.ActorHuman, DecidedBy: domain.DecidedByHuman, CreatedAt: stamp}})
		}
		_, err := tx.WriteCards(ctx, ws)
		return err
	})
	if err != nil {
		return CodeStats{}, internal(err, "bench code: cards")
	}
	// A tenth of the files gain lines at the top (their citations move),
	// another tenth have lines rewritten (their citations go stale).
	for i := range codeFiles / 10 {
		moved := filepath.Join(root, filepath.FromSlash(files[i*10]))
		b, err := os.ReadFile(moved)
		if err != nil {
			return CodeStats{}, internal(err, "bench code")
		}
		head, rest, _ := strings.Cut(string(b), "\n")
		if err := os.WriteFile(moved, []byte(head+"\n// moved\n// down\n// three\n"+rest), 0o644); err != nil {
			return CodeStats{}, internal(err, "bench code")
		}
		changed := filepath.Join(root, filepath.FromSlash(files[i*10+5]))
		if b, err = os.ReadFile(changed); err != nil {
			return CodeStats{}, internal(err, "bench code")
		}
		lines := strings.Split(string(b), "\n")
		for l := 100; l < 200; l += 3 {
			lines[l] += " (rewritten)"
		}
		if err := os.WriteFile(changed, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return CodeStats{}, internal(err, "bench code")
		}
		stats.Moved++
		stats.Changed++
	}
	return stats, nil
}
