package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// recentDays is how many days back from a running count's newest day its
// day list reaches: the cooling window (30 days) and a day either side, so
// a window starting any time since that day is summed from the list.
const recentDays = 32

// recentDaysBack is recentDays-1 as SQL's date modifier wants it.
const recentDaysBack = "31"

// recentDaysSQL is the expression of a running count's day list, for the
// injection_window row named by table: its card's daily counts of its
// outcome from recentDays-1 days before its newest day on, "day:n"
// joined by commas (in no order), NULL when there are none.
func recentDaysSQL(table string) string {
	return `(SELECT group_concat(d.day || ':' || d.n, ',') FROM injection_daily d
		WHERE d.card_id = ` + table + `.card_id AND d.outcome = ` + table + `.outcome
		AND d.day >= date(substr(` + table + `.last_at, 1, 10), '-` + recentDaysBack + ` days'))`
}

// eachDay calls fn for every "day:n" entry of a day list.
func eachDay(days string, fn func(day string, n int)) {
	for days != "" {
		var entry string
		entry, days, _ = strings.Cut(days, ",")
		if d, count, ok := strings.Cut(entry, ":"); ok {
			if c, err := strconv.Atoi(count); err == nil {
				fn(d, c)
			}
		}
	}
}

// sumDaysFrom sums the counts of a day list from day on.
func sumDaysFrom(days, day string) int {
	n := 0
	eachDay(days, func(d string, c int) {
		if d >= day {
			n += c
		}
	})
	return n
}

// writeRecentDays merges sums into the day lists of the pairs they touch,
// in Go (docs/rationale.md), dropping days more than recentDays-1 before
// each list's newest.
func (tx *Tx) writeRecentDays(ctx context.Context, sums *rollups) error {
	type pair struct{ card, outcome string }
	lists := map[pair]map[string]int{}
	var order []pair
	for _, k := range sums.order {
		p := pair{k.card, k.outcome}
		if _, ok := lists[p]; !ok {
			lists[p] = map[string]int{}
			order = append(order, p)
		}
	}
	for chunk := range slices.Chunk(order, 400) {
		n := len(chunk)
		args := make([]any, 0, 2*n)
		for _, p := range chunk {
			args = append(args, p.card, p.outcome)
		}
		err := queryEach(ctx, tx.tx, `SELECT card_id, outcome, days FROM injection_recent
			WHERE days IS NOT NULL AND (card_id, outcome) IN (VALUES `+strings.TrimSuffix(strings.Repeat("(?,?),", n), ",")+`)`, args, func(rows *sql.Rows) error {
			var p pair
			var days string
			if err := rows.Scan(&p.card, &p.outcome, &days); err != nil {
				return err
			}
			m := lists[p]
			eachDay(days, func(d string, c int) { m[d] += c })
			return nil
		})
		if err != nil {
			return fmt.Errorf("read recent injection days: %w", err)
		}
	}
	for _, k := range sums.order {
		lists[pair{k.card, k.outcome}][k.day] += sums.sums[k].n
	}
	for chunk := range slices.Chunk(order, 300) {
		n := len(chunk)
		args := make([]any, 0, 3*n)
		for _, p := range chunk {
			args = append(args, p.card, p.outcome, encodeRecentDays(lists[p]))
		}
		if _, err := tx.tx.ExecContext(ctx, `INSERT OR REPLACE INTO injection_recent(card_id, outcome, days) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?,?,?),", n), ","), args...); err != nil {
			return fmt.Errorf("roll up injections by recent day: %w", err)
		}
	}
	return nil
}

// encodeRecentDays writes a day list: the days from recentDays-1 days
// before the newest on, in day order.
func encodeRecentDays(m map[string]int) string {
	days := make([]string, 0, len(m))
	newest := ""
	for d := range m {
		days = append(days, d)
		newest = max(newest, d)
	}
	from := newest
	if t, err := time.Parse(time.DateOnly, newest); err == nil {
		from = t.AddDate(0, 0, -(recentDays - 1)).Format(time.DateOnly)
	}
	slices.Sort(days)
	var b strings.Builder
	for _, d := range days {
		if d < from || m[d] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(m[d]))
	}
	return b.String()
}
