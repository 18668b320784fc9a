package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
)

// CandidateQuery selects the cards a context request considers. The store
// applies it as given: which statuses count, how tiers, anchors and
// persistence classes rank, and how many rows to return are the caller's
// decisions.
type CandidateQuery struct {
	// AnchorIDs limits the cards to these anchors. Empty means every anchor
	// (an explicit cross-repository request).
	AnchorIDs []string
	// Statuses limits the cards to these statuses. It must not be empty.
	Statuses []domain.Status
	// Now leaves out cards whose expires_at is at or before it; "" keeps all.
	Now string
	// Match is an FTS5 expression over statement and content; "" ranks
	// without text relevance.
	Match string
	// Limit bounds each of the two result lists. It must be positive.
	Limit int
	// TierOrder, AnchorOrder and PersistenceOrder rank the unmatched fill:
	// values earlier in a list sort first, values absent sort last.
	TierOrder        []domain.Tier
	AnchorOrder      []string
	PersistenceOrder []domain.Persistence
}

// Ranked is a card id with its FTS5 bm25 score (lower is more relevant).
type Ranked struct {
	ID   string
	BM25 float64
}

// Candidates returns two bounded, deterministic id lists for q: matched,
// the cards matching q.Match, best bm25 first (nil without a Match), and
// fill, the whole selection by persistence, tier, anchor and id. An FTS5
// syntax error in Match is an error; callers pass sanitized expressions.
func (s *Store) Candidates(ctx context.Context, q CandidateQuery) (matched []Ranked, fill []string, err error) {
	if len(q.Statuses) == 0 || q.Limit <= 0 {
		return nil, nil, fmt.Errorf("select candidates: statuses and a positive limit are required")
	}
	where, args := candidateWhere("c.", q)
	if q.Match != "" {
		margs := append([]any{q.Match}, args...)
		margs = append(margs, q.Limit)
		err := queryEach(ctx, s.db, `SELECT c.id, m.r FROM
			(SELECT rowid AS rid, bm25(cards_fts, 2.0, 1.0) AS r FROM cards_fts WHERE cards_fts MATCH ?) m
			JOIN cards c ON c.rowid = m.rid
			WHERE `+where+` ORDER BY m.r, c.id LIMIT ?`, margs, func(rows *sql.Rows) error {
			var r Ranked
			err := rows.Scan(&r.ID, &r.BM25)
			matched = append(matched, r)
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("select matching cards: %w", err)
		}
	}
	order, oargs := rankCase("c.persistence", q.PersistenceOrder)
	tier, targs := rankCase("c.tier", q.TierOrder)
	anch, aargs := rankCase("c.anchor_id", q.AnchorOrder)
	fargs := append(args, oargs...)
	fargs = append(fargs, targs...)
	fargs = append(fargs, aargs...)
	fargs = append(fargs, q.Limit)
	err = queryEach(ctx, s.db, `SELECT c.id FROM cards c WHERE `+where+`
		ORDER BY `+order+`, `+tier+`, `+anch+`, c.id LIMIT ?`, fargs, func(rows *sql.Rows) error {
		var id string
		err := rows.Scan(&id)
		fill = append(fill, id)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("select candidate cards: %w", err)
	}
	return matched, fill, nil
}

// CountCandidates counts every card q selects, ignoring Match and Limit.
func (s *Store) CountCandidates(ctx context.Context, q CandidateQuery) (int, error) {
	if len(q.AnchorIDs) > 0 {
		sel, _, err := s.selection(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("count candidate cards: %w", err)
		}
		n := 0
		for i := range sel {
			if sel[i].liveAt(q.Now) {
				n++
			}
		}
		return n, nil
	}
	where, args := candidateWhere("c.", q)
	return count(ctx, s.db, "count candidate cards", `SELECT count(*) FROM cards c WHERE `+where, args...)
}

// CandidateFill is Candidates' fill without a Match, as whole cards in
// that order (from cardCache or the table), with total, the number of
// cards q selects, read in the same statement.
func (s *Store) CandidateFill(ctx context.Context, q CandidateQuery) (cards []domain.Card, total int, err error) {
	if len(q.Statuses) == 0 || q.Limit <= 0 {
		return nil, 0, fmt.Errorf("select candidates: statuses and a positive limit are required")
	}
	version, err := s.version(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("select candidate cards: %w", err)
	}
	where, args := candidateWhere("c.", q)
	order, oargs := rankCase("c.persistence", q.PersistenceOrder)
	tier, targs := rankCase("c.tier", q.TierOrder)
	anch, aargs := rankCase("c.anchor_id", q.AnchorOrder)
	cwhere, cargs := candidateWhere("", q)
	all := append(cargs, args...)
	all = append(all, oargs...)
	all = append(all, targs...)
	all = append(all, aargs...)
	all = append(all, q.Limit)
	// The count is an uncorrelated subquery, run once.
	sel := make([]rowCard, 0, q.Limit)
	err = queryEach(ctx, s.db, `SELECT c.rowid, c.id, (SELECT count(*) FROM cards WHERE `+cwhere+`)
		FROM cards c WHERE `+where+` ORDER BY `+order+`, `+tier+`, `+anch+`, c.id LIMIT ?`, all, func(rows *sql.Rows) error {
		var r rowCard
		err := rows.Scan(&r.rowid, &r.id, &total)
		sel = append(sel, r)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("select candidate cards: %w", err)
	}
	if cards, err = s.cardsAt(ctx, version, sel); err != nil {
		return nil, 0, fmt.Errorf("select candidate cards: %w", err)
	}
	return cards, total, nil
}

func candidateWhere(p string, q CandidateQuery) (string, []any) {
	var where []string
	var args []any
	if len(q.AnchorIDs) > 0 {
		where = append(where, p+"anchor_id IN ("+placeholders(len(q.AnchorIDs))+")")
		args = append(args, anySlice(q.AnchorIDs)...)
	}
	where = append(where, p+"status IN ("+placeholders(len(q.Statuses))+")")
	args = append(args, strArgs(q.Statuses)...)
	if q.Now != "" {
		where = append(where, "("+p+"expires_at IS NULL OR "+p+"expires_at > ?)")
		args = append(args, q.Now)
	}
	return strings.Join(where, " AND "), args
}

// rankCase is a CASE expression giving each value of order its index, and
// len(order) to anything else.
func rankCase[T ~string](col string, order []T) (string, []any) {
	if len(order) == 0 {
		return "0", nil
	}
	var b strings.Builder
	args := make([]any, 0, len(order))
	b.WriteString("CASE " + col)
	for i, v := range order {
		fmt.Fprintf(&b, " WHEN ? THEN %d", i)
		args = append(args, string(v))
	}
	fmt.Fprintf(&b, " ELSE %d END", len(order))
	return b.String(), args
}

// CardsByIDs reads the cards with these ids, keyed by id; absent ids are
// missing from the map.
func (s *Store) CardsByIDs(ctx context.Context, ids []string) (map[string]domain.Card, error) {
	out := make(map[string]domain.Card, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		if err := queryCards(ctx, s.db, "read cards", `SELECT `+cardCols+` FROM cards WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk), false, func(c domain.Card, _ int) { out[c.ID] = c }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MemoryCounts is what exists at a set of anchors.
type MemoryCounts struct {
	// CardsByStatus counts cards per status (every status present).
	CardsByStatus map[string]int
	// Expired counts cards of ExpiredAmong whose expires_at is at or before Now.
	Expired int
	// Evidence counts evidence rows.
	Evidence int
}

// CountMemory counts the cards (per status) and evidence at anchorIDs, and
// the cards with a status in expiredAmong that expired at or before now.
// Empty anchorIDs counts everything. The card counts and expiry times are
// kept as of the data version (the context-with-cited-code target needs
// them: BENCHMARKS.md, "Caches: which target each serves").
func (s *Store) CountMemory(ctx context.Context, anchorIDs []string, expiredAmong []domain.Status, now string) (MemoryCounts, error) {
	out := MemoryCounts{CardsByStatus: map[string]int{}}
	cond, args := "", []any(nil)
	if len(anchorIDs) > 0 {
		cond = " WHERE anchor_id IN (" + placeholders(len(anchorIDs)) + ")"
		args = anySlice(anchorIDs)
	}
	ver, err := s.version(ctx)
	if err != nil {
		return out, err
	}
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(sum(n), 0) FROM evidence_counts`+cond, args...).Scan(&out.Evidence); err != nil {
		return out, fmt.Errorf("count evidence: %w", err)
	}
	key := strings.Join(anchorIDs, ",") + "|" + strings.Join(domain.Strings(expiredAmong), ",")
	m, ok := s.memory.Get(ver, key)
	if !ok {
		m = memoryRow{byStatus: map[string]int{}}
		err := queryEach(ctx, s.db, `SELECT status, count(*) FROM cards`+cond+` GROUP BY status`, args, func(rows *sql.Rows) error {
			var st string
			var n int
			err := rows.Scan(&st, &n)
			m.byStatus[st] = n
			return err
		})
		if err != nil {
			return out, fmt.Errorf("count cards: %w", err)
		}
		if len(expiredAmong) > 0 {
			where, wargs := candidateWhere("", CandidateQuery{AnchorIDs: anchorIDs, Statuses: expiredAmong})
			err := queryEach(ctx, s.db, `SELECT expires_at FROM cards WHERE `+where+` AND expires_at IS NOT NULL ORDER BY expires_at`, wargs, func(rows *sql.Rows) error {
				var at string
				err := rows.Scan(&at)
				m.expiries = append(m.expiries, at)
				return err
			})
			if err != nil {
				return out, fmt.Errorf("count expired cards: %w", err)
			}
		}
		s.memory.Put(ver, key, m)
	}
	maps.Copy(out.CardsByStatus, m.byStatus)
	if now != "" {
		out.Expired, _ = slices.BinarySearch(m.expiries, now+"\x00")
	}
	return out, nil
}

// memoryRow is what CountMemory keeps of one set of anchors: cards per
// status and the sorted expiry times of the cards it may count as expired.
type memoryRow struct {
	byStatus map[string]int
	expiries []string
}

// LinkRoleCounts counts the links of each card per role; cards without
// links are missing from the map.
func (s *Store) LinkRoleCounts(ctx context.Context, cardIDs []string) (map[string]domain.RoleCounts, error) {
	out := map[string]domain.RoleCounts{}
	for chunk := range slices.Chunk(cardIDs, 500) {
		err := queryEach(ctx, s.db, `SELECT card_id, role, count(*) FROM card_links
			WHERE card_id IN (`+placeholders(len(chunk))+`) GROUP BY card_id, role`, anySlice(chunk), func(rows *sql.Rows) error {
			var id, role string
			var c int
			if err := rows.Scan(&id, &role, &c); err != nil {
				return err
			}
			rc := out[id]
			rc.Add(domain.Role(role), c)
			out[id] = rc
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("count links: %w", err)
		}
	}
	return out, nil
}

// LinkRows returns the links of many cards keyed by card id, in creation
// order, with only CardID, EvidenceID and Role filled. The slices are
// shared with the link cache, so callers must not change them.
func (s *Store) LinkRows(ctx context.Context, cardIDs []string) (map[string][]domain.Link, error) {
	version, err := s.version(ctx)
	if err != nil {
		return nil, fmt.Errorf("read links: %w", err)
	}
	out := make(map[string][]domain.Link, len(cardIDs))
	cardIDs = s.links.GetMany(version, cardIDs, func(i int, ls []domain.Link) {
		if len(ls) > 0 {
			out[cardIDs[i]] = ls
		}
	})
	read := make(map[string][]domain.Link, len(cardIDs))
	for chunk := range slices.Chunk(cardIDs, 500) {
		// One backing array per chunk; roles and each card's id share one string.
		all := make([]domain.Link, 0, 32*len(chunk))
		start := 0
		flush := func() {
			if len(all) > start {
				read[all[start].CardID] = all[start:len(all):len(all)]
			}
			start = len(all)
		}
		err := queryEach(ctx, s.db, `SELECT card_id, evidence_id, role FROM card_links
			WHERE card_id IN (`+placeholders(len(chunk))+`) ORDER BY card_id, created_at, rowid`, anySlice(chunk), func(rows *sql.Rows) error {
			var l domain.Link
			if err := rows.Scan(&l.CardID, &l.EvidenceID, (*string)(&l.Role)); err != nil {
				return err
			}
			if len(all) > start && all[start].CardID != l.CardID {
				flush()
			}
			if r, ok := roleNames[l.Role]; ok {
				l.Role = r
			}
			if len(all) > start {
				l.CardID = all[start].CardID
			}
			all = append(all, l)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
		flush()
	}
	s.links.PutMany(version, cardIDs, func(id string) []domain.Link { return read[id] })
	for id, ls := range read {
		out[id] = ls
	}
	return out, nil
}

var roleNames = func() map[domain.Role]domain.Role {
	m := make(map[domain.Role]domain.Role, len(domain.Roles))
	for _, r := range domain.Roles {
		m[r] = r
	}
	return m
}()
