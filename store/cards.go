package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
)

// ErrConflict is returned when a row changed under a conditional update
// (another process moved the card first).
var ErrConflict = errors.New("changed concurrently")

// cardCols is the column list queryCards reads.
const cardCols = `id, statement, statement_norm, content, tier, status, domain, field, anchor_id, scope, trigger, persistence,
	render_pref, COALESCE(review_after,''), COALESCE(expires_at,''), COALESCE(origin_card,''), COALESCE(published_to,''),
	created_by, created_at, updated_at`

// insertCard adds a card.
func (tx *Tx) insertCard(ctx context.Context, c domain.Card) error {
	scope, trig := encodeScopeTrigger(c.Scope, c.Trigger)
	res, err := tx.exec(ctx, `INSERT INTO cards(id, statement, statement_norm, content, tier, status, domain, field,
		anchor_id, scope, trigger, persistence, render_pref, review_after, expires_at, origin_card, published_to,
		created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		c.ID, c.Statement, c.StatementNorm, c.Content, c.Tier, c.Status, c.Domain, c.Field, c.AnchorID,
		scope, trig, c.Persistence, c.RenderPref, nullable(c.ReviewAfter), nullable(c.ExpiresAt),
		nullable(c.OriginCard), nullable(c.PublishedTo), c.CreatedBy, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert card %s: %w", c.ID, err)
	}
	if tx.cardsUnindexed == 0 {
		// The full-text index is written at commit (Store.Tx).
		if tx.cardsUnindexed, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("insert card %s: %w", c.ID, err)
		}
	}
	return nil
}

// Card reads one card; ErrNotFound if absent.
func (s *Store) Card(ctx context.Context, id string) (domain.Card, error) {
	return cardByID(ctx, s.db, id)
}

// Card is the in-transaction form of Store.Card.
func (tx *Tx) Card(ctx context.Context, id string) (domain.Card, error) {
	return cardByID(ctx, tx.tx, id)
}

func cardByID(ctx context.Context, q querier, id string) (domain.Card, error) {
	c, ok, err := firstCard(ctx, q, "read card "+id, `SELECT `+cardCols+` FROM cards WHERE id = ?`, id)
	if err == nil && !ok {
		err = fmt.Errorf("card %s: %w", id, ErrNotFound)
	}
	return c, err
}

// firstCard reads the first card query selects; ok is false when there is
// none. A failed query is wrapped with what.
func firstCard(ctx context.Context, q querier, what, query string, args ...any) (domain.Card, bool, error) {
	var out []domain.Card
	if err := queryCards(ctx, q, what, query, args, false, func(c domain.Card, _ int) { out = append(out, c) }); err != nil || len(out) == 0 {
		return domain.Card{}, false, err
	}
	return out[0], true, nil
}

// CardFilter selects cards for ListCards. Empty fields match all.
type CardFilter struct {
	Tiers     []domain.Tier
	Statuses  []domain.Status
	AnchorIDs []string
	Field     string
	Domain    string
	Limit     int
}

// ListCards returns matching cards ordered by tier (dao_tian first), then
// anchor, then id.
func (s *Store) ListCards(ctx context.Context, f CardFilter) ([]domain.Card, error) {
	var where []string
	var args []any
	in := func(col string, vals []any) {
		if len(vals) > 0 {
			where = append(where, col+" IN ("+placeholders(len(vals))+")")
			args = append(args, vals...)
		}
	}
	in("tier", strArgs(f.Tiers))
	in("status", strArgs(f.Statuses))
	in("anchor_id", anySlice(f.AnchorIDs))
	if f.Field != "" {
		where, args = append(where, "field = ?"), append(args, f.Field)
	}
	if f.Domain != "" {
		where, args = append(where, "domain = ?"), append(args, f.Domain)
	}
	query := `SELECT ` + cardCols + ` FROM cards`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += ` ORDER BY CASE tier WHEN 'dao_tian' THEN 0 WHEN 'dao_ren' THEN 1 WHEN 'shu' THEN 2 ELSE 3 END, anchor_id, id`
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var out []domain.Card
	if err := queryCards(ctx, s.db, "list cards", query, args, false, func(c domain.Card, _ int) { out = append(out, c) }); err != nil {
		return nil, err
	}
	return out, nil
}

// CardByStatement returns the first card at anchorID with this normalized
// statement whose status is one of statuses; ok is false when there is none.
func (tx *Tx) CardByStatement(ctx context.Context, anchorID, norm string, statuses []domain.Status) (domain.Card, bool, error) {
	args := append([]any{anchorID, norm}, strArgs(statuses)...)
	return firstCard(ctx, tx.tx, "find card by statement", `SELECT `+cardCols+` FROM cards
		WHERE anchor_id = ? AND statement_norm = ? AND status IN (`+placeholders(len(statuses))+`)
		ORDER BY created_at, id LIMIT 1`, args...)
}

// setCardStatus moves card id from status from to status to. It fails with
// ErrConflict when the card is no longer in status from.
func (tx *Tx) setCardStatus(ctx context.Context, id string, from, to domain.Status, now string) error {
	res, err := tx.exec(ctx, `UPDATE cards SET status = ?, updated_at = ? WHERE id = ? AND status = ?`, string(to), now, id, string(from))
	if err != nil {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	return oneRow(res, "card "+id+" is no longer "+string(from))
}

// setPublishedTo stamps card id as published to the card copy.
func (tx *Tx) setPublishedTo(ctx context.Context, id, copyID, now string) error {
	res, err := tx.exec(ctx, `UPDATE cards SET published_to = ?, updated_at = ? WHERE id = ? AND published_to IS NULL`, copyID, now, id)
	if err != nil {
		return fmt.Errorf("stamp %s as published: %w", id, err)
	}
	return oneRow(res, "card "+id+" was published already")
}

// updateCard replaces the governed fields of c.ID with c's: statement,
// content, tier, domain, field, scope, trigger, persistence, render
// preference, dates and origin. Identity, anchor, status and creation stay.
func (tx *Tx) updateCard(ctx context.Context, c domain.Card, now string) error {
	scope, trig := encodeScopeTrigger(c.Scope, c.Trigger)
	// The update trigger takes the old text out of the index: the row must
	// be in it.
	if err := tx.indexNew(ctx, "cards", cardTextCols, &tx.cardsUnindexed); err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE cards SET statement = ?, statement_norm = ?, content = ?, tier = ?,
		domain = ?, field = ?, scope = ?, trigger = ?, persistence = ?, render_pref = ?, review_after = ?,
		expires_at = ?, origin_card = ?, updated_at = ? WHERE id = ?`,
		c.Statement, c.StatementNorm, c.Content, c.Tier, c.Domain, c.Field, scope, trig, c.Persistence,
		c.RenderPref, nullable(c.ReviewAfter), nullable(c.ExpiresAt), nullable(c.OriginCard), now, c.ID)
	if err != nil {
		return fmt.Errorf("update card %s: %w", c.ID, err)
	}
	return oneRow(res, "card "+c.ID+" not found")
}

// CardAttrs are the governed attributes an audit action may change. A nil
// field is left as it is.
type CardAttrs struct {
	Scope       *domain.Scope
	Trigger     *domain.Trigger
	Persistence *string
	RenderPref  *string
	ReviewAfter *string // "" clears
	ExpiresAt   *string // "" clears
}

// updateCardAttrs changes the given attributes of card id.
func (tx *Tx) updateCardAttrs(ctx context.Context, id string, a CardAttrs, now string) error {
	sets := []string{"updated_at = ?"}
	args := []any{now}
	if a.Scope != nil {
		b, err := json.Marshal(normScope(*a.Scope))
		if err != nil {
			return fmt.Errorf("update %s: %w", id, err)
		}
		sets, args = append(sets, "scope = ?"), append(args, string(b))
	}
	if a.Trigger != nil {
		b, err := json.Marshal(normTrigger(*a.Trigger))
		if err != nil {
			return fmt.Errorf("update %s: %w", id, err)
		}
		sets, args = append(sets, "trigger = ?"), append(args, string(b))
	}
	if a.Persistence != nil {
		sets, args = append(sets, "persistence = ?"), append(args, *a.Persistence)
	}
	if a.RenderPref != nil {
		sets, args = append(sets, "render_pref = ?"), append(args, *a.RenderPref)
	}
	if a.ReviewAfter != nil {
		sets, args = append(sets, "review_after = ?"), append(args, nullable(*a.ReviewAfter))
	}
	if a.ExpiresAt != nil {
		sets, args = append(sets, "expires_at = ?"), append(args, nullable(*a.ExpiresAt))
	}
	args = append(args, id)
	res, err := tx.tx.ExecContext(ctx, `UPDATE cards SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...)
	if err != nil {
		return fmt.Errorf("update %s: %w", id, err)
	}
	return oneRow(res, "card "+id+" not found")
}

// CountCardsAt counts the cards of one anchor.
func (s *Store) CountCardsAt(ctx context.Context, anchorID string) (int, error) {
	return count(ctx, s.db, "count cards of "+anchorID, `SELECT count(*) FROM cards WHERE anchor_id = ?`, anchorID)
}

// CountCards counts all cards.
func (s *Store) CountCards(ctx context.Context) (int, error) {
	return count(ctx, s.db, "count cards", `SELECT count(*) FROM cards`)
}

// queryCards runs query, which selects cardCols (and, with extra, one
// integer column after them), and calls fn for each card. A failed query is
// wrapped with what.
func queryCards(ctx context.Context, q querier, what, query string, args []any, extra bool, fn func(domain.Card, int)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c domain.Card
		var scope, trig string
		dest := []any{&c.ID, &c.Statement, &c.StatementNorm, &c.Content, (*string)(&c.Tier), (*string)(&c.Status), (*string)(&c.Domain),
			&c.Field, &c.AnchorID, &scope, &trig, (*string)(&c.Persistence), (*string)(&c.RenderPref), &c.ReviewAfter, &c.ExpiresAt,
			&c.OriginCard, &c.PublishedTo, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt}
		var n int
		if extra {
			dest = append(dest, &n)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan card: %w", err)
		}
		if err := decodeLists(scope, scopeKeys, []*[]string{&c.Scope.Paths, &c.Scope.Languages, &c.Scope.Fields}, &c.Scope); err != nil {
			return fmt.Errorf("card %s: decode scope: %w", c.ID, err)
		}
		if err := decodeLists(trig, triggerKeys, []*[]string{&c.Trigger.Patterns, &c.Trigger.Intents, &c.Trigger.ToolNeeds}, &c.Trigger); err != nil {
			return fmt.Errorf("card %s: decode trigger: %w", c.ID, err)
		}
		c.Scope, c.Trigger = normScope(c.Scope), normTrigger(c.Trigger)
		fn(c, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("scan card: %w", err)
	}
	return nil
}

// scopeKeys and triggerKeys are the JSON names of Scope's and Trigger's
// fields, in field order.
var (
	scopeKeys   = []string{"paths", "languages", "fields"}
	triggerKeys = []string{"patterns", "intents", "tool_needs"}
)

func encodeScopeTrigger(s domain.Scope, t domain.Trigger) (string, string) {
	return string(appendLists(nil, scopeKeys, s.Paths, s.Languages, s.Fields)),
		string(appendLists(nil, triggerKeys, t.Patterns, t.Intents, t.ToolNeeds))
}

// normScope and normTrigger make empty lists [] rather than null so the JSON
// that policies see has one shape.
func normScope(s domain.Scope) domain.Scope {
	return domain.Scope{Paths: nonNil(s.Paths), Languages: nonNil(s.Languages), Fields: nonNil(s.Fields)}
}

func normTrigger(t domain.Trigger) domain.Trigger {
	return domain.Trigger{Patterns: nonNil(t.Patterns), Intents: nonNil(t.Intents), ToolNeeds: nonNil(t.ToolNeeds)}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func oneRow(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s: %w", what, ErrConflict)
	}
	return nil
}
