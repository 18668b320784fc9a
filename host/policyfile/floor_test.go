package policyfile_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/policies"
)

// allowAll is a team gate that lets every claim through: only the floor
// stands between it and an authoritative card.
const allowAll = `package palace.gate

import rego.v1

decision := {"allow": true, "reasons": ["the team allows it"], "missing": {}}
`

// repoPolicies points f's policy set at its checkout's .palace/policies,
// loaded afresh on every decision (real OPA), and returns that folder.
func repoPolicies(t *testing.T, f *jobtest.Fixture) string {
	t.Helper()
	dir := filepath.Join(f.Dir, ".palace", "policies")
	f.Policies = func(ctx context.Context) (*policies.Set, error) {
		return policies.Load(ctx, policies.Sources{RepoDir: dir, RepoRoot: f.Dir}, policies.Options{})
	}
	return dir
}

// gate asks the fixture's gate whether a shu candidate with no evidence may
// be promoted.
func gate(t *testing.T, f *jobtest.Fixture, allowLocal bool) gatekeep.Result {
	t.Helper()
	k := f.Keeper()
	c := domain.Card{ID: "kc_01floorfloorfloorfloorfl", Statement: "Ship on Fridays", Tier: domain.TierShu, Status: domain.StatusCandidate,
		Domain: domain.DomainProject, Field: "general", Persistence: domain.PersistenceStandard}
	return k.Evaluate(context.Background(), c, nil, nil, "promote", "promoted", k.Reviewer(""), allowLocal)
}

// TestGateFloorRefusesLocalPolicy: a repo gate policy that allows
// everything decides nothing while it is untracked or modified in git —
// the floor refuses and names the file and its state — unless the caller
// allows local policy; once committed as it is, its answer stands.
func TestGateFloorRefusesLocalPolicy(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	dir := repoPolicies(t, f)
	path := filepath.Join(dir, "gate.rego")
	write(t, path, allowAll)

	floor := func(r gatekeep.Result) string {
		i := slices.IndexFunc(r.Reasons, func(s string) bool { return strings.HasPrefix(s, "floor: the deciding policy") })
		if i < 0 {
			return ""
		}
		return r.Reasons[i]
	}
	r := gate(t, f, false)
	if r.Allow || r.Policy.Source != policies.SourceRepo || r.Policy.File != path || r.Policy.FileState != "untracked" {
		t.Fatalf("untracked team gate: allow %v, policy %+v; want refused, decided by %s, untracked", r.Allow, r.Policy, path)
	}
	if msg := floor(r); !strings.Contains(msg, "palace.gate") || !strings.Contains(msg, path) || !strings.Contains(msg, "is untracked") || !strings.Contains(msg, "--allow-local-policy") {
		t.Errorf("floor reason %q does not name the policy, its file and state, and the way out (reasons %v)", msg, r.Reasons)
	}
	if r := gate(t, f, true); !r.Allow || floor(r) != "" {
		t.Errorf("untracked team gate with local policy allowed: allow %v, reasons %v", r.Allow, r.Reasons)
	}

	jobtest.Git(t, f.Dir, "add", ".palace")
	jobtest.Git(t, f.Dir, "commit", "-q", "-m", "team gate")
	if r := gate(t, f, false); !r.Allow || r.Policy.FileState != "tracked" {
		t.Errorf("committed team gate: allow %v, file state %q, reasons %v; want allowed, tracked", r.Allow, r.Policy.FileState, r.Reasons)
	}

	write(t, path, allowAll+"# edited here\n")
	r = gate(t, f, false)
	if r.Allow || r.Policy.FileState != "modified" || !strings.Contains(floor(r), "is modified") {
		t.Errorf("modified team gate: allow %v, file state %q, reasons %v; want refused as modified", r.Allow, r.Policy.FileState, r.Reasons)
	}
}

// TestGateFloorLeavesDefaultsAndHomeAlone: the embedded defaults and the
// palace home's own policies are no checkout's files: no file state from
// git, no floor.
func TestGateFloorLeavesDefaultsAndHomeAlone(t *testing.T) {
	f := jobtest.New(t, jobtest.Options{Git: true})
	if r := gate(t, f, false); r.Policy.Source != policies.SourceEmbedded || r.Policy.FileState != "" ||
		slices.ContainsFunc(r.Reasons, func(s string) bool { return strings.HasPrefix(s, "floor: ") && strings.Contains(s, "deciding policy") }) {
		t.Errorf("embedded gate: policy %+v, reasons %v; want no file state and no floor", r.Policy, r.Reasons)
	}
	home := filepath.Join(f.Home, "policies")
	write(t, filepath.Join(home, "gate.rego"), allowAll)
	f.Policies = func(ctx context.Context) (*policies.Set, error) {
		return policies.Load(ctx, policies.Sources{HomeDir: home}, policies.Options{})
	}
	if r := gate(t, f, false); !r.Allow || r.Policy.Source != policies.SourceHome || r.Policy.FileState != "home" {
		t.Errorf("home gate: allow %v, policy %+v; want allowed with file state home", r.Allow, r.Policy)
	}
}

func TestFloor(t *testing.T) {
	repo := func(state string) policies.Decision {
		return policies.Decision{Point: policies.Gate, Source: policies.SourceRepo, File: "/w/.palace/policies/gate.rego", FileState: state}
	}
	for _, c := range []struct {
		name       string
		d          policies.Decision
		allowLocal bool
		want       string // a part of the floor's reason; "" for none
	}{
		{"tracked", repo("tracked"), false, ""},
		{"untracked", repo("untracked"), false, "(/w/.palace/policies/gate.rego) is untracked in git"},
		{"modified", repo("modified"), false, "is modified in git: a local policy change cannot make a card authoritative"},
		{"unknown", repo("unknown"), false, "git cannot say whether the deciding policy palace.gate (/w/.palace/policies/gate.rego) is committed"},
		{"untracked allowed", repo("untracked"), true, ""},
		{"home", policies.Decision{Point: policies.Gate, Source: policies.SourceHome, FileState: "home"}, false, ""},
		{"embedded", policies.Decision{Point: policies.Gate, Source: policies.SourceEmbedded}, false, ""},
	} {
		got := policyfile.Floor(c.d, c.allowLocal)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: Floor = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestFloorNamesWhereALinkLeads: a policy reached through a symbolic link
// is named with the file it resolves to.
func TestFloorNamesWhereALinkLeads(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "elsewhere", "gate.rego")
	write(t, real, allowAll)
	link := filepath.Join(base, "repo", ".palace", "policies", "gate.rego")
	symlink(t, real, link)
	got := policyfile.Floor(policies.Decision{Point: policies.Gate, Source: policies.SourceRepo, File: link, FileState: "untracked"}, false)
	if !strings.Contains(got, link+" -> "+real) {
		t.Errorf("Floor = %q, want it to name %s -> %s", got, link, real)
	}
}

// TestStamp: a repo decision is stamped with git's word on its file, a
// home decision "home", an embedded one nothing.
func TestStamp(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	tracked := filepath.Join(f.Dir, "README.md")
	loose := filepath.Join(f.Dir, "loose.rego")
	write(t, loose, allowAll)
	for _, c := range []struct {
		d    policies.Decision
		want string
	}{
		{policies.Decision{Source: policies.SourceRepo, File: tracked}, "tracked"},
		{policies.Decision{Source: policies.SourceRepo, File: loose}, "untracked"},
		{policies.Decision{Source: policies.SourceRepo, File: ""}, "unknown"},
		{policies.Decision{Source: policies.SourceHome, File: "/home/policies/gate.rego"}, "home"},
		{policies.Decision{Source: policies.SourceEmbedded}, ""},
	} {
		d := c.d
		policyfile.Stamp(ctx, &d)
		if d.FileState != c.want {
			t.Errorf("Stamp(%s %q) = %q, want %q", c.d.Source, c.d.File, d.FileState, c.want)
		}
	}
}

// TestStampCachedFollowsTheFile: the cached stamp agrees with git, is
// asked again once the file changes, says unknown for a file that is
// gone, and leaves home and embedded decisions to Stamp.
func TestStampCachedFollowsTheFile(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	path := filepath.Join(f.Dir, ".palace", "policies", "gate.rego")
	write(t, path, allowAll)
	jobtest.Git(t, f.Dir, "add", ".palace")
	jobtest.Git(t, f.Dir, "commit", "-q", "-m", "team gate")
	var cache policyfile.Cache
	stamp := func(d policies.Decision) string {
		t.Helper()
		cache.StampCached(ctx, &d)
		return d.FileState
	}
	repo := policies.Decision{Source: policies.SourceRepo, File: path}
	if got := stamp(repo); got != "tracked" {
		t.Fatalf("committed policy: %q, want tracked", got)
	}
	if got := stamp(repo); got != "tracked" {
		t.Errorf("committed policy asked twice: %q, want tracked", got)
	}
	// A change of size is a new file to the cache: git is asked again.
	write(t, path, allowAll+"# a local edit\n")
	if got := stamp(repo); got != "modified" {
		t.Errorf("edited policy: %q, want modified", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := stamp(repo); got != "unknown" {
		t.Errorf("removed policy: %q, want unknown", got)
	}
	if got := stamp(policies.Decision{Source: policies.SourceHome, File: "/home/gate.rego"}); got != "home" {
		t.Errorf("home policy: %q, want home", got)
	}
	if got := stamp(policies.Decision{Source: policies.SourceRepo}); got != "unknown" {
		t.Errorf("repo decision without a file: %q, want unknown", got)
	}
	// Many files: the cache starts over rather than grow without bound,
	// and still answers right.
	for i := range 70 {
		p := filepath.Join(f.Dir, "many", strings.Repeat("x", i+1)+".rego")
		write(t, p, allowAll)
		if got := stamp(policies.Decision{Source: policies.SourceRepo, File: p}); got != "untracked" {
			t.Fatalf("file %d: %q, want untracked", i, got)
		}
	}
}

// TestLocalChangesListsWhatGitDoesNotHold: doctor's list of local policy
// changes names the untracked and modified policy files of the checkout's
// folder, not the committed ones; no folder, nothing to list.
func TestLocalChangesListsWhatGitDoesNotHold(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	dir := filepath.Join(f.Dir, ".palace", "policies")
	if got, err := policyfile.LocalChanges(ctx, dir); err != nil || len(got) != 0 {
		t.Fatalf("no policy folder: %v, %v; want nothing", got, err)
	}
	if got, err := policyfile.LocalChanges(ctx, ""); err != nil || got != nil {
		t.Fatalf("no folder named: %v, %v; want nothing", got, err)
	}
	write(t, filepath.Join(dir, "gate.rego"), allowAll)
	write(t, filepath.Join(dir, "scope.rego"), "package palace.scope\n")
	jobtest.Git(t, f.Dir, "add", ".palace")
	jobtest.Git(t, f.Dir, "commit", "-q", "-m", "team policies")
	if got, err := policyfile.LocalChanges(ctx, dir); err != nil || len(got) != 0 {
		t.Fatalf("committed policies: %v, %v; want no local change", got, err)
	}
	write(t, filepath.Join(dir, "scope.rego"), "package palace.scope\n# edited\n")
	write(t, filepath.Join(dir, "lanes.rego"), "package palace.lanes\n")
	write(t, filepath.Join(dir, "notes.txt"), "not a policy\n")
	got, err := policyfile.LocalChanges(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []policyfile.LocalChange{{Path: filepath.Join(dir, "lanes.rego"), State: "untracked"}, {Path: filepath.Join(dir, "scope.rego"), State: "modified"}}
	slices.SortFunc(got, func(a, b policyfile.LocalChange) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Equal(got, want) {
		t.Errorf("local changes %+v, want %+v", got, want)
	}
}
