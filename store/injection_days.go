package store

import (
	"strconv"
	"strings"
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

// sumDaysFrom sums the counts of a day list from day on.
func sumDaysFrom(days, day string) int {
	n := 0
	for days != "" {
		var entry string
		entry, days, _ = strings.Cut(days, ",")
		d, count, ok := strings.Cut(entry, ":")
		if !ok || d < day {
			continue
		}
		if c, err := strconv.Atoi(count); err == nil {
			n += c
		}
	}
	return n
}
