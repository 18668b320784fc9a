package host

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// ErrNoPalace is returned by OpenExisting when the home holds no database
// yet. Readers that have nothing to show on a fresh home (shell completion,
// an MCP resource listing) check for it instead of creating a palace.
var ErrNoPalace = errors.New("no palace database yet")

// dbFile is the database's file name inside the home.
const dbFile = "palace.db"

// OpenExisting is Open for readers: when the home has no database it
// returns an error matching ErrNoPalace and creates nothing.
func OpenExisting(ctx context.Context, opts Options) (*Host, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(h.home, dbFile)); errors.Is(err, os.ErrNotExist) {
		return nil, &Error{Kind: KindInvalid, Msg: "palace home " + h.home + " has no database yet: run `palace init` or record evidence first", Err: ErrNoPalace}
	}
	return Open(ctx, opts)
}

// IDHint is one completion candidate: an id and a short description.
type IDHint struct {
	ID   string
	Note string
}

// RecentCardIDs lists the ids of the cards visible from here that start
// with prefix, most recently changed first, at most n (n > 0).
func (h *Host) RecentCardIDs(ctx context.Context, prefix string, n int) ([]IDHint, error) {
	rows, err := h.store.ListCards(ctx, store.CardFilter{AnchorIDs: h.loc.ChainIDs()})
	if err != nil {
		return nil, internal(err, "list cards")
	}
	rows = slices.DeleteFunc(rows, func(c domain.Card) bool { return !strings.HasPrefix(c.ID, prefix) })
	// Stored times are RFC 3339 in UTC with a fixed width, so they sort as text.
	slices.SortStableFunc(rows, func(a, b domain.Card) int {
		return cmp.Or(strings.Compare(b.UpdatedAt, a.UpdatedAt), strings.Compare(b.ID, a.ID))
	})
	out := make([]IDHint, 0, min(n, len(rows)))
	for _, c := range rows[:min(n, len(rows))] {
		out = append(out, IDHint{ID: c.ID, Note: string(c.Tier) + " " + string(c.Status) + " · " + c.Statement})
	}
	return out, nil
}

// RecentEvidenceIDs lists the ids of the evidence visible from here that
// start with prefix, newest first, at most n (n > 0).
func (h *Host) RecentEvidenceIDs(ctx context.Context, prefix string, n int) ([]IDHint, error) {
	var out []IDHint
	// Evidence comes newest first; a page at a time keeps a large palace
	// cheap when the prefix is empty or common.
	const page = 200
	for offset := 0; len(out) < n; offset += page {
		rows, _, err := h.store.ListEvidence(ctx, store.EvidenceFilter{AnchorIDs: h.loc.ChainIDs(), Limit: page, Offset: offset})
		if err != nil {
			return nil, internal(err, "list evidence")
		}
		for _, e := range rows {
			if strings.HasPrefix(e.ID, prefix) && len(out) < n {
				out = append(out, IDHint{ID: e.ID, Note: e.Field + " · " + e.Content})
			}
		}
		if len(rows) < page {
			break
		}
	}
	return out, nil
}
