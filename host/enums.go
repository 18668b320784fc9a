package host

import (
	"slices"
	"strings"
)

// The enumerations of palace's vocabulary. The store's CHECK constraints hold the same
// lists; a test keeps them in step.
var (
	Tiers        = []string{"dao_tian", "dao_ren", "shu", "qi"}
	Statuses     = []string{"candidate", "promoted", "canonical", "demoted", "retired"}
	Domains      = []string{"project", "agent", "skill", "global"}
	Provenances  = []string{"runtime", "research", "human"}
	Roles        = []string{"supporting", "verification", "teaching", "counterexample"}
	Persistences = []string{"standard", "protected", "foundational"}
	RenderPrefs  = []string{"auto", "inline_full", "inline_compact", "ref_preferred"}
	AnchorKinds  = []string{"worktree", "repo", "global"}
)

// Authoritative is the one place that decides whether a status makes a card
// authoritative (runtime-eligible by default). No query hard-codes the list.
func Authoritative(status string) bool {
	return status == "promoted" || status == "canonical"
}

// AuthoritativeStatuses lists the statuses Authoritative accepts.
func AuthoritativeStatuses() []string {
	var out []string
	for _, s := range Statuses {
		if Authoritative(s) {
			out = append(out, s)
		}
	}
	return out
}

// activeStatuses are statuses that still count as live knowledge (for the
// duplicate-statement rule): everything but demoted and retired.
func activeStatuses() []string {
	return []string{"candidate", "promoted", "canonical"}
}

// TierRank orders tiers dao_tian (0) → qi (3); unknown tiers sort last.
func TierRank(t string) int {
	if i := slices.Index(Tiers, t); i >= 0 {
		return i
	}
	return len(Tiers)
}

func oneOf(field, v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return invalid(field, "%s %q is not valid: use one of %s", field, v, strings.Join(allowed, ", "))
}

// normalizeStatement is the form duplicate detection compares: lower case,
// single spaces, no trailing sentence punctuation.
func normalizeStatement(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!;: ")
}
