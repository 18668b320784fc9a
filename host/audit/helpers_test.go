package audit_test

import (
	"context"
	"slices"
	"testing"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// auditor is the audit of f, built as host builds it: the listing reads
// the workspace's chain (or one kind of it), staleness is the code and
// dates check host runs, held records the anchors it was told.
func auditor(f *jobtest.Fixture, held *[]string) *audit.Auditor {
	fresh := staleness.NewChecker(f.Loc.Worktree)
	return audit.New(audit.Config{
		Env: f.Env,
		AnchorIDs: func(kind string, allRepos bool) ([]string, error) {
			if kind == "" {
				return f.Loc.ChainIDs(), nil
			}
			return []string{anchor.ID(f.Loc.Identity(domain.AnchorKind(kind)))}, nil
		},
		Held: func(_ context.Context, ids []string) error {
			if held != nil {
				*held = ids
			}
			return nil
		},
		OpenContests: f.Store.OpenContests,
		PolicySet: func(ctx context.Context) (*policies.Set, string, error) {
			set, err := f.Policies(ctx)
			if err != nil {
				return nil, "", err
			}
			return set, set.Hash(), nil
		},
		AnchorRef: func(ctx context.Context, id string) cardview.AnchorRef {
			return cardview.RefOf(ctx, f.Store, f.Loc, id)
		},
		StampFileState: policyfile.Stamp,
		Stale: func(ctx context.Context, cards []domain.Card) (map[string]*staleness.Stale, error) {
			ids := make([]string, len(cards))
			for i, c := range cards {
				ids[i] = c.ID
			}
			code, err := fresh.Cards(ctx, f.Store, ids)
			if err != nil {
				return nil, err
			}
			out := map[string]*staleness.Stale{}
			for _, c := range cards {
				if st := staleness.Merge(code[c.ID], staleness.Dates(c, store.FormatTime(f.Now()))); st != nil {
					out[c.ID] = st
				}
			}
			return out, nil
		},
	})
}

func row(t *testing.T, rep audit.Report, id string) audit.Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("audit has no row %s", id)
	return audit.Row{}
}

func hasWarning(r audit.Row, code string) bool {
	return slices.ContainsFunc(r.Warnings, func(w audit.Warning) bool { return w.Code == code })
}

func hasSuggestion(r audit.Row, action string) bool {
	return slices.ContainsFunc(r.Suggested, func(s audit.Suggestion) bool { return s.Action == action })
}

// scoped is a card scoped to the storage code.
func scoped(statement string, tier domain.Tier) jobtest.Card {
	return jobtest.Card{Statement: statement, Tier: tier, Status: domain.StatusPromoted, Field: "storage",
		Scope:   domain.Scope{Paths: []string{"store/**"}, Languages: []string{"go"}, Fields: []string{"storage"}},
		Trigger: domain.Trigger{Intents: []string{"debug", "storage"}}}
}

// govern sets one of card id's dates through the door, as an audit action
// does.
func govern(t *testing.T, f *jobtest.Fixture, id string, review, expires string) {
	t.Helper()
	attrs := &store.CardAttrs{}
	to := ""
	if review != "" {
		attrs.ReviewAfter, to = &review, "review_after "+review
	}
	if expires != "" {
		attrs.ExpiresAt, to = &expires, "expires_at "+expires
	}
	f.Apply(t, authority.Change{Op: authority.OpGovern, CardID: id, Attrs: attrs, From: "none", To: to, Reason: "dated"})
}

func seed(t testing.TB, f *jobtest.Fixture, c jobtest.Card) domain.Card { return f.Seed(t, c) }

// auditWithHeld is auditor with held as its Held.
func auditWithHeld(f *jobtest.Fixture, held func(context.Context, []string) error) *audit.Auditor {
	return audit.New(audit.Config{
		Env:       f.Env,
		AnchorIDs: func(string, bool) ([]string, error) { return f.Loc.ChainIDs(), nil },
		Held:      held,
	})
}
