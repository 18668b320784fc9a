package host_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// oldSpelling writes, as a palace that kept a remote's case did, a repo
// anchor under identity and one promoted card at it, straight into the
// database file. It returns the card's id.
func oldSpelling(t *testing.T, home, identity, id, statement string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(home, "palace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const at = "2026-01-01T00:00:00.000Z"
	anchorID := anchor.ID("repo:" + identity)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO anchors(id, kind, parent_id, path, identity, created_at) VALUES (?, 'repo', ?, '/old', ?, ?)`,
			[]any{anchorID, anchor.ID(anchor.GlobalIdentity), "repo:" + identity, at}},
		{`INSERT INTO cards(id, statement, statement_norm, tier, status, domain, field, anchor_id, persistence, created_by, created_at, updated_at)
			VALUES (?, ?, lower(?), 'shu', 'promoted', 'project', 'general', ?, 'foundational', 'old', ?, ?)`,
			[]any{id, statement, statement, anchorID, at, at}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
}

// A palace that recorded github.com/ACME/X before remotes were folded keeps
// serving those cards to a checkout whose remote says acme/x, writes new
// cards to the same anchor, and when both spellings hold cards sees both.
func TestRemoteCaseFoldKeepsExistingAnchors(t *testing.T) {
	e := newCxEnv(t)
	ctx := context.Background()
	seedDir := e.repo("seed", "")
	e.ev(e.open(seedDir, host.Human), "creates the palace", "general", "")
	oldSpelling(t, e.home, "github.com/ACME/X", "kc_01old0000000000000000000000", "Old rule recorded under ACME")

	lower := e.repo("lower", "git@github.com:acme/x.git")
	h := e.open(lower, host.Human)
	if got := h.Location().RepoIdentity; got != "github.com/ACME/X" {
		t.Fatalf("repo identity %q, want the spelling the palace holds", got)
	}
	p, err := h.Pack().Context(ctx, pack.ContextRequest{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(itemIDs(p), "kc_01old0000000000000000000000") {
		t.Fatalf("the card recorded under github.com/ACME/X is missing from the pack: %v", itemIDs(p))
	}
	id := e.card(h, cxCard{statement: "New rule written from the lower-case remote", tier: "shu", anchor: "repo"})
	c, err := h.ShowCard(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.AnchorID != anchor.ID("repo:github.com/ACME/X") {
		t.Errorf("new card anchored at %s, want the existing repo anchor", c.AnchorID)
	}

	// A palace holding both spellings: the folded one is the identity, the
	// other an alias whose cards stay visible.
	oldSpelling(t, e.home, "github.com/acme/x", "kc_01new0000000000000000000000", "Rule recorded under acme")
	h2 := e.open(e.repo("mixed", "https://github.com/Acme/X.git"), host.Human)
	loc := h2.Location()
	if loc.RepoIdentity != "github.com/acme/x" || !slices.Equal(loc.RepoAliases, []string{"github.com/ACME/X"}) {
		t.Fatalf("identity %q aliases %v, want github.com/acme/x with alias github.com/ACME/X", loc.RepoIdentity, loc.RepoAliases)
	}
	p, err = h2.Pack().Context(ctx, pack.ContextRequest{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kc_01old0000000000000000000000", "kc_01new0000000000000000000000"} {
		if !slices.Contains(itemIDs(p), want) {
			t.Errorf("%s missing from the pack: %v", want, itemIDs(p))
		}
	}
	for _, it := range p.Items {
		if it.Foreign {
			t.Errorf("%s is labelled foreign: an alias is this repository", it.ID)
		}
	}
}
