package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
	Statuses []string
	// Now leaves out cards whose expires_at is at or before it; "" keeps all.
	Now string
	// Match is an FTS5 expression over statement and content; "" ranks
	// without text relevance.
	Match string
	// Limit bounds each of the two result lists. It must be positive.
	Limit int
	// TierOrder, AnchorOrder and PersistenceOrder rank the unmatched fill:
	// values earlier in a list sort first, values absent sort last.
	TierOrder        []string
	AnchorOrder      []string
	PersistenceOrder []string
}

// Ranked is a card id with its FTS5 bm25 score (lower is more relevant).
type Ranked struct {
	ID   string
	BM25 float64
}

// Candidates returns two bounded id lists for q, both ordered
// deterministically: matched holds the cards whose statement or content
// matches q.Match, best bm25 first (nil without a Match); fill holds the
// cards of the same selection ordered by persistence, tier, anchor and id,
// whether they match or not. Both use the (anchor_id, status) index. An
// FTS5 syntax error in Match is returned as an error; callers pass
// sanitized expressions.
func (s *Store) Candidates(ctx context.Context, q CandidateQuery) (matched []Ranked, fill []string, err error) {
	if len(q.Statuses) == 0 || q.Limit <= 0 {
		return nil, nil, fmt.Errorf("select candidates: statuses and a positive limit are required")
	}
	where, args := candidateWhere("c.", q)
	if q.Match != "" {
		margs := append([]any{q.Match}, args...)
		margs = append(margs, q.Limit)
		rows, err := s.db.QueryContext(ctx, `SELECT c.id, m.r FROM
			(SELECT rowid AS rid, bm25(cards_fts, 2.0, 1.0) AS r FROM cards_fts WHERE cards_fts MATCH ?) m
			JOIN cards c ON c.rowid = m.rid
			WHERE `+where+` ORDER BY m.r, c.id LIMIT ?`, margs...)
		if err != nil {
			return nil, nil, fmt.Errorf("select matching cards: %w", err)
		}
		for rows.Next() {
			var r Ranked
			if err := rows.Scan(&r.ID, &r.BM25); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("select matching cards: %w", err)
			}
			matched = append(matched, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
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
	rows, err := s.db.QueryContext(ctx, `SELECT c.id FROM cards c WHERE `+where+`
		ORDER BY `+order+`, `+tier+`, `+anch+`, c.id LIMIT ?`, fargs...)
	if err != nil {
		return nil, nil, fmt.Errorf("select candidate cards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, nil, fmt.Errorf("select candidate cards: %w", err)
		}
		fill = append(fill, id)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("select candidate cards: %w", err)
	}
	return matched, fill, nil
}

// CountCandidates counts every card q selects, ignoring Match and Limit.
func (s *Store) CountCandidates(ctx context.Context, q CandidateQuery) (int, error) {
	where, args := candidateWhere("c.", q)
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cards c WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count candidate cards: %w", err)
	}
	return n, nil
}

// CandidateFill is Candidates' fill without a Match, read whole in one
// statement: the cards of q's selection ordered by persistence, tier,
// anchor and id (the order is picked from the covering index, and only the
// first q.Limit rows are read), and total, the number of cards q selects.
// The cards come in that order.
func (s *Store) CandidateFill(ctx context.Context, q CandidateQuery) (cards []Card, total int, err error) {
	if len(q.Statuses) == 0 || q.Limit <= 0 {
		return nil, 0, fmt.Errorf("select candidates: statuses and a positive limit are required")
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
	// CROSS JOIN keeps the ordered subquery as the outer loop, so rows come
	// out in its order; the count is an uncorrelated subquery, run once.
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixCols("d.")+`, (SELECT count(*) FROM cards WHERE `+cwhere+`)
		FROM (SELECT c.rowid AS rid FROM cards c WHERE `+where+` ORDER BY `+order+`, `+tier+`, `+anch+`, c.id LIMIT ?) k
		CROSS JOIN cards d ON d.rowid = k.rid`, all...)
	if err != nil {
		return nil, 0, fmt.Errorf("select candidate cards: %w", err)
	}
	cards = make([]Card, 0, q.Limit)
	err = scanCardsWith(rows, func(c Card, extra int) { cards, total = append(cards, c), extra })
	return cards, total, err
}

func candidateWhere(p string, q CandidateQuery) (string, []any) {
	var where []string
	var args []any
	if len(q.AnchorIDs) > 0 {
		where = append(where, p+"anchor_id IN ("+placeholders(len(q.AnchorIDs))+")")
		args = append(args, anySlice(q.AnchorIDs)...)
	}
	where = append(where, p+"status IN ("+placeholders(len(q.Statuses))+")")
	args = append(args, anySlice(q.Statuses)...)
	if q.Now != "" {
		where = append(where, "("+p+"expires_at IS NULL OR "+p+"expires_at > ?)")
		args = append(args, q.Now)
	}
	return strings.Join(where, " AND "), args
}

// rankCase is a CASE expression giving each value of order its index, and
// len(order) to anything else.
func rankCase(col string, order []string) (string, []any) {
	if len(order) == 0 {
		return "0", nil
	}
	var b strings.Builder
	args := make([]any, 0, len(order))
	b.WriteString("CASE " + col)
	for i, v := range order {
		fmt.Fprintf(&b, " WHEN ? THEN %d", i)
		args = append(args, v)
	}
	fmt.Fprintf(&b, " ELSE %d END", len(order))
	return b.String(), args
}

// CardsByIDs reads the cards with these ids, keyed by id; absent ids are
// missing from the map.
func (s *Store) CardsByIDs(ctx context.Context, ids []string) (map[string]Card, error) {
	out := make(map[string]Card, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		chunk := ids[:n]
		ids = ids[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT `+cardCols+` FROM cards WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		if err := scanCards(rows, func(c Card) { out[c.ID] = c }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CardsByRowIDs reads the cards with these rowids (from CandidateText),
// keyed by id: one B-tree descent per card where an id costs two (its
// unique index, then the table).
func (s *Store) CardsByRowIDs(ctx context.Context, rowids []int64) (map[string]Card, error) {
	out := make(map[string]Card, len(rowids))
	for len(rowids) > 0 {
		n := min(len(rowids), 500)
		chunk := rowids[:n]
		rowids = rowids[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT `+cardCols+` FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		if err := scanCards(rows, func(c Card) { out[c.ID] = c }); err != nil {
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
// Empty anchorIDs counts everything.
func (s *Store) CountMemory(ctx context.Context, anchorIDs []string, expiredAmong []string, now string) (MemoryCounts, error) {
	out := MemoryCounts{CardsByStatus: map[string]int{}}
	cond, args := "", []any(nil)
	if len(anchorIDs) > 0 {
		cond = " WHERE anchor_id IN (" + placeholders(len(anchorIDs)) + ")"
		args = anySlice(anchorIDs)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT status, count(*) FROM cards`+cond+` GROUP BY status`, args...)
	if err != nil {
		return out, fmt.Errorf("count cards: %w", err)
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return out, fmt.Errorf("count cards: %w", err)
		}
		out.CardsByStatus[st] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("count cards: %w", err)
	}
	if len(expiredAmong) > 0 && now != "" {
		q := CandidateQuery{AnchorIDs: anchorIDs, Statuses: expiredAmong}
		where, wargs := candidateWhere("", q)
		wargs = append(wargs, now)
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cards WHERE `+where+` AND expires_at IS NOT NULL AND expires_at <= ?`, wargs...).Scan(&out.Expired); err != nil {
			return out, fmt.Errorf("count expired cards: %w", err)
		}
	}
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(sum(n), 0) FROM evidence_counts`+cond, args...).Scan(&out.Evidence); err != nil {
		return out, fmt.Errorf("count evidence: %w", err)
	}
	return out, nil
}

// FieldEvidence is a field with evidence and no card of the given statuses.
type FieldEvidence struct {
	Field    string
	Evidence int
	// Samples are up to three of the field's evidence ids, most recently
	// recorded first.
	Samples []string
}

// FieldsWithoutCards returns up to limit fields that hold at least minEvidence
// evidence rows at anchorIDs and no card with a status in statuses there,
// ordered by evidence count (most first), then field name.
func (s *Store) FieldsWithoutCards(ctx context.Context, anchorIDs, statuses []string, minEvidence, limit int) ([]FieldEvidence, error) {
	if len(anchorIDs) == 0 || len(statuses) == 0 || limit <= 0 {
		return nil, nil
	}
	in := placeholders(len(anchorIDs))
	args := anySlice(anchorIDs)
	args = append(args, anySlice(anchorIDs)...)
	args = append(args, anySlice(statuses)...)
	args = append(args, minEvidence, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT e.field, sum(e.n) AS n FROM evidence_counts e
		WHERE e.anchor_id IN (`+in+`)
		AND e.field NOT IN (SELECT c.field FROM cards c WHERE c.anchor_id IN (`+in+`) AND c.status IN (`+placeholders(len(statuses))+`))
		GROUP BY e.field HAVING n >= ? ORDER BY n DESC, e.field LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("find fields without cards: %w", err)
	}
	var out []FieldEvidence
	for rows.Next() {
		var f FieldEvidence
		if err := rows.Scan(&f.Field, &f.Evidence); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find fields without cards: %w", err)
		}
		out = append(out, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find fields without cards: %w", err)
	}
	for i := range out {
		sargs := append(anySlice(anchorIDs), out[i].Field)
		srows, err := s.db.QueryContext(ctx, `SELECT id FROM evidence WHERE anchor_id IN (`+in+`) AND field = ?
			ORDER BY rowid DESC LIMIT 3`, sargs...)
		if err != nil {
			return nil, fmt.Errorf("sample evidence of %s: %w", out[i].Field, err)
		}
		for srows.Next() {
			var id string
			if err := srows.Scan(&id); err != nil {
				srows.Close()
				return nil, fmt.Errorf("sample evidence of %s: %w", out[i].Field, err)
			}
			out[i].Samples = append(out[i].Samples, id)
		}
		srows.Close()
		if err := srows.Err(); err != nil {
			return nil, fmt.Errorf("sample evidence of %s: %w", out[i].Field, err)
		}
	}
	return out, nil
}

// RecentEvidence returns up to limit evidence rows of anchorIDs, optionally
// of one field, most recently recorded first (by insertion order), with
// only ID, Content, Field, Provenance, SourceRef and AnchorID filled: what a
// ranking and a pack read of the hundred rows it looks at. The
// (anchor_id, field) index bounds the read to those anchors.
func (s *Store) RecentEvidence(ctx context.Context, anchorIDs []string, field string, limit int) ([]Evidence, error) {
	if len(anchorIDs) == 0 || limit <= 0 {
		return nil, nil
	}
	// One arm per anchor, each read newest first from its index with the
	// limit, so no anchor's rows are sorted whole.
	arm := `SELECT * FROM (SELECT rowid AS rid FROM evidence WHERE anchor_id = ? ORDER BY rowid DESC LIMIT ?)`
	if field != "" {
		arm = `SELECT * FROM (SELECT rowid AS rid FROM evidence WHERE anchor_id = ? AND field = ? ORDER BY rowid DESC LIMIT ?)`
	}
	arms := make([]string, len(anchorIDs))
	var args []any
	for i, a := range anchorIDs {
		arms[i] = arm
		args = append(args, a)
		if field != "" {
			args = append(args, field)
		}
		args = append(args, limit)
	}
	args = append(args, limit)
	rows, err := s.db.QueryContext(ctx, `SELECT id, content, field, provenance, source_ref, anchor_id FROM evidence WHERE rowid IN
		(SELECT rid FROM (`+strings.Join(arms, " UNION ALL ")+`) ORDER BY rid DESC LIMIT ?) ORDER BY rowid DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("read recent evidence: %w", err)
	}
	defer rows.Close()
	out := make([]Evidence, 0, limit)
	for rows.Next() {
		var e Evidence
		if err := rows.Scan(&e.ID, &e.Content, &e.Field, &e.Provenance, &e.SourceRef, &e.AnchorID); err != nil {
			return nil, fmt.Errorf("read recent evidence: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read recent evidence: %w", err)
	}
	return out, nil
}

// EvidenceTexts reads the evidence rows with these ids with only ID,
// Content, Field, Provenance, SourceRef and AnchorID filled (what a brief
// quotes); absent ids are missing from the map.
func (s *Store) EvidenceTexts(ctx context.Context, ids []string) (map[string]Evidence, error) {
	out := make(map[string]Evidence, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500)
		chunk := ids[:n]
		ids = ids[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT id, content, field, provenance, source_ref, anchor_id FROM evidence
			WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read evidence: %w", err)
		}
		for rows.Next() {
			var e Evidence
			if err := rows.Scan(&e.ID, &e.Content, &e.Field, &e.Provenance, &e.SourceRef, &e.AnchorID); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read evidence: %w", err)
			}
			out[e.ID] = e
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read evidence: %w", err)
		}
	}
	return out, nil
}

// CitingCards returns, for each of evidenceIDs, the ids of the cards with a
// status in statuses that link to it (any role), sorted. Evidence no such
// card cites is missing from the map.
func (s *Store) CitingCards(ctx context.Context, evidenceIDs, statuses []string) (map[string][]string, error) {
	out := map[string][]string{}
	for len(evidenceIDs) > 0 && len(statuses) > 0 {
		n := min(len(evidenceIDs), 400)
		chunk := evidenceIDs[:n]
		evidenceIDs = evidenceIDs[n:]
		args := append(anySlice(chunk), anySlice(statuses)...)
		rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT l.evidence_id, l.card_id FROM card_links l JOIN cards c ON c.id = l.card_id
			WHERE l.evidence_id IN (`+placeholders(len(chunk))+`) AND c.status IN (`+placeholders(len(statuses))+`)
			ORDER BY l.evidence_id, l.card_id`, args...)
		if err != nil {
			return nil, fmt.Errorf("find citing cards: %w", err)
		}
		for rows.Next() {
			var ev, card string
			if err := rows.Scan(&ev, &card); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find citing cards: %w", err)
			}
			out[ev] = append(out[ev], card)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find citing cards: %w", err)
		}
	}
	return out, nil
}

// LinkRoleCounts counts the links of each card per role; cards without
// links are missing from the map.
func (s *Store) LinkRoleCounts(ctx context.Context, cardIDs []string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	for len(cardIDs) > 0 {
		n := min(len(cardIDs), 500)
		chunk := cardIDs[:n]
		cardIDs = cardIDs[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT card_id, role, count(*) FROM card_links
			WHERE card_id IN (`+placeholders(len(chunk))+`) GROUP BY card_id, role`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("count links: %w", err)
		}
		for rows.Next() {
			var id, role string
			var c int
			if err := rows.Scan(&id, &role, &c); err != nil {
				rows.Close()
				return nil, fmt.Errorf("count links: %w", err)
			}
			if out[id] == nil {
				out[id] = map[string]int{}
			}
			out[id][role] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("count links: %w", err)
		}
	}
	return out, nil
}

// CandidateText is the part of a card a relevance ranking reads.
type CandidateText struct {
	// RowID reads the whole card back with CardsByRowIDs.
	RowID       int64
	ID          string
	Statement   string
	Content     string
	Tier        string
	Persistence string
	AnchorID    string
}

// CandidateTexts returns every card q selects (ignoring Match and Limit)
// with only the columns a relevance ranking needs, in no particular order
// (sorting whole rows in SQLite costs more than the caller's own order).
// Callers use it when the selection is too large to read whole.
//
// The selection is read from the covering index alone; statements and
// contents come from the store's text cache (see textCache), and only the
// cards it does not hold are read from the table. On the 100k benchmark
// palace that is 1.2 ms instead of 5 for the ~1,900 visible cards.
func (s *Store) CandidateTexts(ctx context.Context, q CandidateQuery) ([]CandidateText, error) {
	where, args := candidateWhere("c.", q)
	// The version is read before any text (here, in the same statement):
	// a text changed after it was read bumps it, so the next read drops
	// what this one caches.
	rows, err := s.db.QueryContext(ctx, `SELECT c.rowid, c.id, c.tier, c.persistence, c.anchor_id,
		(SELECT n FROM card_text_version) FROM cards c WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read candidate texts: %w", err)
	}
	var out []CandidateText
	var version int64
	for rows.Next() {
		var t CandidateText
		if err := rows.Scan(&t.RowID, &t.ID, &t.Tier, &t.Persistence, &t.AnchorID, &version); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read candidate texts: %w", err)
	}
	missing := s.texts.fill(version, out)
	for len(missing) > 0 {
		n := min(len(missing), 500)
		chunk := missing[:n]
		missing = missing[n:]
		at := make(map[int64]int, len(chunk))
		rowids := make([]any, len(chunk))
		for i, k := range chunk {
			at[out[k].RowID] = k
			rowids[i] = out[k].RowID
		}
		rows, err := s.db.QueryContext(ctx, `SELECT rowid, statement, content FROM cards WHERE rowid IN (`+placeholders(len(chunk))+`)`, rowids...)
		if err != nil {
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
		for rows.Next() {
			var rowid int64
			var stmt, content string
			if err := rows.Scan(&rowid, &stmt, &content); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read candidate texts: %w", err)
			}
			if k, ok := at[rowid]; ok {
				out[k].Statement, out[k].Content = stmt, content
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read candidate texts: %w", err)
		}
		s.texts.store(version, out, chunk)
	}
	return out, nil
}

// textCache holds card statements and contents by rowid, with the card id
// they belong to, as of one card_text_version. Palace never rewrites a
// card's text (lifecycle changes touch status and attributes), and any
// UPDATE of statement or content — by palace or not, by any process —
// bumps the version, which empties the cache at the next read. Cards are
// never deleted. It is bounded like refCache.
type textCache struct {
	mu      sync.Mutex
	version int64
	m       map[int64]cardText
}

type cardText struct{ id, statement, content string }

const textCacheMax = 1 << 16

// fill sets the texts of out's cards that the cache holds at version and
// returns the indexes of the others.
func (c *textCache) fill(version int64, out []CandidateText) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.version != version {
		c.m, c.version = map[int64]cardText{}, version
	}
	var missing []int
	for i := range out {
		if t, ok := c.m[out[i].RowID]; ok && t.id == out[i].ID {
			out[i].Statement, out[i].Content = t.statement, t.content
		} else {
			missing = append(missing, i)
		}
	}
	return missing
}

// store keeps the texts of out[idx...], read at version.
func (c *textCache) store(version int64, out []CandidateText, idx []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		return // a newer read has moved on; these may be stale
	}
	if len(c.m)+len(idx) > textCacheMax {
		c.m = map[int64]cardText{}
	}
	for _, k := range idx {
		t := out[k]
		c.m[t.RowID] = cardText{t.ID, t.Statement, t.Content}
	}
}

// CandidateCards returns every card q selects (ignoring Match and Limit),
// whole, in no particular order. Callers use it when the selection is
// within their bound.
func (s *Store) CandidateCards(ctx context.Context, q CandidateQuery) ([]Card, error) {
	where, args := candidateWhere("c.", q)
	rows, err := s.db.QueryContext(ctx, `SELECT `+cardCols+` FROM cards c WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read candidate cards: %w", err)
	}
	var out []Card
	if err := scanCards(rows, func(c Card) { out = append(out, c) }); err != nil {
		return nil, err
	}
	return out, nil
}

// LinkRows returns the links of many cards keyed by card id, in creation
// order, with only CardID, EvidenceID and Role filled: what citations and
// gate counts need. It reads neither evidence (see SourceRefs) nor the
// links' notes and times, and keeps every card's links in one backing
// array, as a context request reads a few thousand of them.
func (s *Store) LinkRows(ctx context.Context, cardIDs []string) (map[string][]Link, error) {
	out := make(map[string][]Link, len(cardIDs))
	for len(cardIDs) > 0 {
		n := min(len(cardIDs), 500)
		chunk := cardIDs[:n]
		cardIDs = cardIDs[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT card_id, evidence_id, role FROM card_links
			WHERE card_id IN (`+placeholders(len(chunk))+`) ORDER BY card_id, created_at, rowid`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
		all := make([]Link, 0, 32*len(chunk))
		start := 0
		flush := func() {
			if len(all) > start {
				out[all[start].CardID] = all[start:len(all):len(all)]
			}
			start = len(all)
		}
		for rows.Next() {
			var l Link
			if err := rows.Scan(&l.CardID, &l.EvidenceID, &l.Role); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read links: %w", err)
			}
			if len(all) > start && all[start].CardID != l.CardID {
				flush()
			}
			// Roles are a closed set: share one string per role rather than
			// keep the driver's copy of each.
			if r, ok := roleNames[l.Role]; ok {
				l.Role = r
			}
			// Cards share the first row's copy of their id.
			if len(all) > start {
				l.CardID = all[start].CardID
			}
			all = append(all, l)
		}
		flush()
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
	}
	return out, nil
}

var roleNames = map[string]string{"supporting": "supporting", "verification": "verification", "teaching": "teaching", "counterexample": "counterexample"}

// SourceRefs returns the source_ref of each evidence id that exists.
// Evidence is append-only (the schema refuses UPDATE and DELETE), so a
// source ref never changes once read: the store keeps the ones it has read
// (see refCache) and asks SQLite only for the others — each lookup is two
// B-tree descents, 10–15 µs at a million evidence rows, measured.
func (s *Store) SourceRefs(ctx context.Context, evidenceIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(evidenceIDs))
	missing := s.refs.lookup(evidenceIDs, out)
	for len(missing) > 0 {
		n := min(len(missing), 500)
		chunk := missing[:n]
		missing = missing[n:]
		rows, err := s.db.QueryContext(ctx, `SELECT id, source_ref FROM evidence WHERE id IN (`+placeholders(len(chunk))+`)`, anySlice(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read source refs: %w", err)
		}
		var found []string
		for rows.Next() {
			var id, ref string
			if err := rows.Scan(&id, &ref); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read source refs: %w", err)
			}
			out[id] = ref
			found = append(found, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read source refs: %w", err)
		}
		s.refs.store(found, out)
	}
	return out, nil
}

// refCache holds source refs by evidence id. It is bounded: when it holds
// refCacheMax entries it starts over, so a long-running host that cites
// ever new evidence keeps at most that many.
type refCache struct {
	mu sync.Mutex
	m  map[string]string
}

const refCacheMax = 1 << 16

// lookup fills out with the cached refs of ids and returns the ids it does
// not hold. Evidence that does not exist is never cached: it may be
// recorded later.
func (c *refCache) lookup(ids []string, out map[string]string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, id := range ids {
		if ref, ok := c.m[id]; ok {
			out[id] = ref
		} else {
			missing = append(missing, id)
		}
	}
	return missing
}

func (c *refCache) store(ids []string, refs map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(ids) > refCacheMax {
		c.m = make(map[string]string, len(ids))
	}
	for _, id := range ids {
		c.m[id] = refs[id]
	}
}
