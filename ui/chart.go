package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/palacehq/palace/host"
)

// The signal chart: one column per day, the signals of use above the axis,
// those against the card below it, the rest as a dot on the axis. SVG drawn
// on the server, with a title on every bar and a table beside it, so it
// reads without color and without sight.
const (
	chartDays  = 90
	barWidth   = 6
	chartHalf  = 40
	chartWidth = chartDays * barWidth
)

// signalChart is the chart's geometry.
type signalChart struct {
	Width, Height, Axis int
	Bars                []chartBar
	// Rows are the days with signals, for the table.
	Rows []host.SignalDay
	Max  int
}

type chartBar struct {
	X, Y, H int
	Class   string
	Title   string
}

var (
	useSignals     = []string{"used", "accepted"}
	againstSignals = []string{"rejected", "rollback", "contradiction"}
)

func newSignalChart(days []host.SignalDay, now time.Time) signalChart {
	c := signalChart{Width: chartWidth, Height: 2*chartHalf + 2, Axis: chartHalf, Rows: days}
	sum := func(d host.SignalDay, names []string) int {
		n := 0
		for _, s := range names {
			n += d.Counts[s]
		}
		return n
	}
	for _, d := range days {
		c.Max = max(c.Max, sum(d, useSignals), sum(d, againstSignals))
	}
	scale := func(n int) int {
		if n == 0 {
			return 0
		}
		return max(2, n*(chartHalf-2)/max(1, c.Max))
	}
	start := now.UTC().AddDate(0, 0, -chartDays+1).Format(time.DateOnly)
	for _, d := range days {
		t, err := time.Parse(time.DateOnly, d.Day)
		if err != nil || d.Day < start {
			continue
		}
		i := chartDays - 1 - int(now.UTC().Truncate(24*time.Hour).Sub(t).Hours()/24)
		if i < 0 || i >= chartDays {
			continue
		}
		x := i * barWidth
		title := fmt.Sprintf("%s: %s", d.Day, countsText(d.Counts))
		if n := sum(d, useSignals); n > 0 {
			h := scale(n)
			c.Bars = append(c.Bars, chartBar{X: x, Y: chartHalf - h, H: h, Class: "use", Title: title})
		}
		if n := sum(d, againstSignals); n > 0 {
			c.Bars = append(c.Bars, chartBar{X: x, Y: chartHalf + 2, H: scale(n), Class: "against", Title: title})
		}
		if d.Counts["miss"]+d.Counts["neutral"] > 0 {
			c.Bars = append(c.Bars, chartBar{X: x, Y: chartHalf, H: 2, Class: "other", Title: title})
		}
	}
	return c
}

func countsText(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// packDay is one day of a card's pack outcomes, for the card page.
type packDay struct {
	Day    string
	Counts map[string]int
}

// packDays groups a card page's pack outcomes by day.
func packDays(d host.CardDossier) []packDay {
	var out []packDay
	for _, r := range d.Packs {
		if n := len(out); n == 0 || out[n-1].Day != r.Day {
			out = append(out, packDay{Day: r.Day, Counts: map[string]int{}})
		}
		out[len(out)-1].Counts[r.Outcome] += r.N
	}
	return out
}
