package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

// cxEnv is a palace home shared by hosts opened at real git checkouts, with
// a clock the test moves by hand.
type cxEnv struct {
	t    testing.TB
	root string
	home string
	now  time.Time
}

var cxEpoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func newCxEnv(t testing.TB) *cxEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &cxEnv{t: t, root: root, home: filepath.Join(root, "home"), now: cxEpoch}
}

// git runs git in dir with a throwaway identity and no user configuration.
func (e *cxEnv) git(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

// repo makes a git repository with one commit and an origin remote.
func (e *cxEnv) repo(name, remote string) string {
	e.t.Helper()
	dir := filepath.Join(e.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.git(dir, "init", "-q")
	e.git(dir, "commit", "-q", "--allow-empty", "-m", "init")
	if remote != "" {
		e.git(dir, "remote", "add", "origin", remote)
	}
	return dir
}

// open opens a host at dir in mode with the env's clock as it is now.
func (e *cxEnv) open(dir string, mode host.Mode) *host.Host {
	e.t.Helper()
	now := e.now
	h, err := host.Open(context.Background(), host.Options{Home: e.home, Cwd: dir, Mode: mode, Actor: "tester", Now: func() time.Time { return now }})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { h.Close() })
	return h
}

// openClock opens a host whose clock reads e.now at every call, so a test
// can move time between requests without reopening.
func (e *cxEnv) openClock(dir string) *host.Host {
	e.t.Helper()
	h, err := host.Open(context.Background(), host.Options{Home: e.home, Cwd: dir, Mode: host.Human, Actor: "tester", Now: func() time.Time { return e.now }})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { h.Close() })
	return h
}

// ev records evidence and returns its id.
func (e *cxEnv) ev(h *host.Host, content, field, src string) string {
	e.t.Helper()
	return e.evAt(h, content, field, src, "")
}

// evAt records evidence at the global anchor when anchor is global (a host
// outside git must say so), else at the default anchor.
func (e *cxEnv) evAt(h *host.Host, content, field, src, anchor string) string {
	e.t.Helper()
	if anchor != "global" {
		anchor = ""
	}
	r, err := h.Intake().Record(context.Background(), intake.RecordRequest{Content: content, Field: field, SourceRef: src, Anchor: anchor})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.ID
}

// cxCard describes a card to write directly as authoritative (or as a
// candidate when status is "candidate").
type cxCard struct {
	statement, content, tier, field, anchor, status, persistence, renderPref string
	paths, langs, scopeFields, intents                                       []string
}

// card writes c with two fresh evidence refs (supporting, verification).
func (e *cxEnv) card(h *host.Host, c cxCard) string {
	e.t.Helper()
	field := c.field
	if field == "" {
		field = "general"
	}
	sup := e.evAt(h, "seen: "+c.statement, field, "src/"+field+".go:1", c.anchor)
	ver := e.evAt(h, "verified: "+c.statement, field, "", c.anchor)
	req := intake.DistillRequest{
		Statement: c.statement, Content: c.content, Tier: c.tier, Field: c.field, Anchor: c.anchor,
		Supporting: []string{sup}, Verification: []string{ver},
		Scope:       domain.Scope{Paths: c.paths, Languages: c.langs, Fields: c.scopeFields},
		Trigger:     domain.Trigger{Intents: c.intents},
		Persistence: c.persistence, RenderPref: c.renderPref,
	}
	if c.status != "candidate" {
		req.Direct, req.Status = true, "promoted"
		if c.status != "" {
			req.Status = c.status
		}
	}
	card, err := h.Distill(context.Background(), req)
	if err != nil {
		e.t.Fatalf("distill %q: %v", c.statement, err)
	}
	return card.ID
}

// scoped is a card that lands in the scoped lane for cxScopedRequest:
// path, language and field fit (30) plus two intents (20) = salience 50.
func scoped(statement, tier string) cxCard {
	return cxCard{statement: statement, tier: tier, field: "storage", paths: []string{"store/**"}, langs: []string{"go"},
		scopeFields: []string{"storage"}, intents: []string{"debug", "storage"}}
}

// at returns c anchored at kind.
func (c cxCard) at(kind string) cxCard { c.anchor = kind; return c }

// cxScopedRequest is the request scoped cards fit.
func cxScopedRequest() pack.ContextRequest {
	return pack.ContextRequest{File: "store/store.go", Field: "storage", Intents: []string{"debug", "storage"}, DryRun: true}
}

func itemIDs(p pack.Pack) []string {
	out := []string{}
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}

func item(p pack.Pack, id string) (pack.Item, bool) {
	for _, it := range p.Items {
		if it.ID == id {
			return it, true
		}
	}
	return pack.Item{}, false
}

// normalizer rewrites what differs between runs (temp paths, anchor ids of
// those paths, random id suffixes, policy hashes) into stable names, in
// order of first appearance.
type normalizer struct {
	fixed []string // old, new pairs
	ids   map[string]string
	n     map[string]int
}

func newNormalizer(e *cxEnv, hosts map[string]*host.Host) *normalizer {
	nz := &normalizer{ids: map[string]string{}, n: map[string]int{}}
	for label, h := range hosts {
		loc := h.Location()
		for _, k := range []domain.AnchorKind{domain.AnchorWorktree, domain.AnchorRepo} {
			nz.fixed = append(nz.fixed, host.AnchorID(loc.Identity(k)), "an_"+label+"_"+string(k))
		}
	}
	nz.fixed = append(nz.fixed, host.AnchorID(anchor.GlobalIdentity), "an_global", e.root, "$ROOT")
	return nz
}

var (
	cxIDPattern   = regexp.MustCompile(`\b(kc|ev|rq)_[0-9a-z]{26}\b`)
	cxHashPattern = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
)

func (nz *normalizer) apply(s string) string {
	for i := 0; i < len(nz.fixed); i += 2 {
		s = strings.ReplaceAll(s, nz.fixed[i], nz.fixed[i+1])
	}
	s = cxIDPattern.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := nz.ids[id]; ok {
			return v
		}
		prefix := id[:2]
		nz.n[prefix]++
		v := prefix + "_" + strings.Repeat("0", 3-len(itoa(nz.n[prefix]))) + itoa(nz.n[prefix]) + strings.Repeat("x", 23)
		nz.ids[id] = v
		return v
	})
	return cxHashPattern.ReplaceAllString(s, "<sha256>")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
