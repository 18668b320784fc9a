package policies

// defaultLanes is default/lanes.rego in Go (and what
// examples/plugins/lanes-go computes). It serves the lanes point when the
// active set's lanes package is the unmodified embedded one, and it is the
// fallback when a team's lanes policy fails. TestNativeMatchesRego proves
// the two identical over generated inputs; change both together.
func defaultLanes(in LanesInput) LanesOutput {
	cfg := in.Config.withDefaults()
	out := make(LanesOutput, len(in.Cards))
	for _, c := range in.Cards {
		b := map[string]int{
			"scope_fit":     c.ScopeFit,
			"operation_fit": c.OperationFit,
			"persistence":   persistenceBonus(c.Card.Persistence),
			"applied":       min(c.Counts30d.Applied*2, 10),
			"viewed":        min(c.Counts30d.Viewed, 5),
			"skipped":       -min(c.Counts30d.Skipped*2, 15),
			"trimmed":       -min(c.Counts30d.Trimmed*2, 10),
			"inactivity":    -min(cfg.InactivityMax, max(0, floorDiv(c.AgeDays-cfg.InactivityGraceDays, cfg.InactivityStepDays))),
		}
		sum := 0
		for _, v := range b {
			sum += v
		}
		salience := min(100, max(0, sum))
		lane := laneOf(salience, c.Card.Persistence)
		out[c.Card.ID] = LaneResult{Salience: salience, Breakdown: b, Lane: lane, RenderForm: renderForm(lane, c.Card.RenderPref)}
	}
	return out
}

// floorDiv is floor(a / b) as Rego's floor of a division gives, also for
// negative operands (Go's / truncates toward zero).
func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func persistenceBonus(p string) int {
	switch p {
	case "foundational":
		return 20
	case "protected":
		return 10
	}
	return 0
}

func laneOf(salience int, persistence string) string {
	switch {
	case persistence == "foundational" && salience >= 40, salience >= 70:
		return "core"
	case salience >= 45:
		return "scoped"
	case salience >= 20:
		return "ref_only"
	}
	return "inspector_only"
}

// renderForm applies a card's render_pref to its lane's default form; the
// lane itself never changes.
func renderForm(lane, pref string) string {
	switch lane {
	case "core":
		switch pref {
		case "inline_compact":
			return "inline_compact"
		case "ref_preferred":
			return "ref_only"
		}
		return "inline_full"
	case "scoped":
		switch pref {
		case "inline_full":
			return "inline_full"
		case "ref_preferred":
			return "ref_only"
		}
		return "inline_compact"
	}
	return lane
}
