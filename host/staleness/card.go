package staleness

import (
	"context"
	"fmt"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// Stale says why a card no longer matches what it rests on: code its
// evidence saw changed, or its review date or expiry passed.
type Stale struct {
	// Reason is one line naming each changed file and the change, or the
	// date that passed.
	Reason string `json:"reason"`
	// Citations are the changed citations (code staleness).
	Citations []StaleCitation `json:"citations,omitempty"`
	// ReviewDue is the review date that passed; Expired the expiry.
	ReviewDue string `json:"review_due,omitempty"`
	Expired   string `json:"expired,omitempty"`
	// Action is the repair, with its commands.
	Action string `json:"action"`
}

// StaleCitation is one citation whose code changed.
type StaleCitation struct {
	EvidenceID string      `json:"evidence_id"`
	Role       domain.Role `json:"role"`
	SourceRef  string      `json:"source_ref"`
	// Path is the file where the code was looked for (the cited path, or
	// the name git gave it since); Line and EndLine the cited lines.
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	EndLine int    `json:"end_line,omitempty"`
	// Change is changed, gone, deleted, symbol_missing or not_regular;
	// Detail says it in words.
	Change string `json:"change"`
	Detail string `json:"detail"`
	// Commit is the repository's HEAD when the evidence saw the code.
	Commit string `json:"commit,omitempty"`
}

// Checked picks the citations a card is checked against: those of its
// newest verification citing code (palace verify records them all in one),
// else those of every supporting evidence citing code.
func Checked(cits []store.CodeCitation) []store.CodeCitation {
	var newest int64 = -1
	for _, c := range cits {
		if c.Role == domain.RoleVerification && c.EvidenceSeq > newest {
			newest = c.EvidenceSeq
		}
	}
	var out []store.CodeCitation
	for _, c := range cits {
		if (newest >= 0 && c.Role == domain.RoleVerification && c.EvidenceSeq == newest) ||
			(newest < 0 && c.Role == domain.RoleSupporting) {
			out = append(out, c)
		}
	}
	return out
}

// Look is one checked citation and what the look found.
type Look struct {
	store.CodeCitation
	Result
}

// Card looks at the citations card id is checked against (Checked) and
// returns the looks and the card's staleness (nil when none is stale).
func (p *Pass) Card(id string, cits []store.CodeCitation) ([]Look, *Stale) {
	checked := Checked(cits)
	if len(checked) == 0 {
		return nil, nil
	}
	looks := make([]Look, len(checked))
	var st *Stale
	for i, c := range checked {
		r := p.Look(c.Observation)
		looks[i] = Look{CodeCitation: c, Result: r}
		if r.State != Changed {
			continue
		}
		if st == nil {
			st = &Stale{Action: CodeAction(id)}
		}
		st.Citations = append(st.Citations, StaleCitation{EvidenceID: c.EvidenceID, Role: c.Role, SourceRef: c.SourceRef,
			Path: r.Path, Line: r.Start, EndLine: r.End, Change: r.Change, Detail: r.Detail, Commit: c.Commit})
	}
	if st != nil {
		st.Reason = citationsReason(st.Citations)
	}
	return looks, st
}

// Cards checks every card of ids that cites code, reading the citations
// from s (kept in memory under the links' version), in one pass. Cards
// without code citations, or none stale, are absent from the result.
func (c *Checker) Cards(ctx context.Context, s *store.Store, ids []string) (map[string]*Stale, error) {
	if c.root == "" || len(ids) == 0 {
		return nil, nil
	}
	all, err := s.CodeCitations(ctx)
	if err != nil {
		return nil, err
	}
	p := c.Pass(ctx)
	var out map[string]*Stale
	for _, id := range ids {
		if _, st := p.Card(id, all[id]); st != nil {
			if out == nil {
				out = map[string]*Stale{}
			}
			out[id] = st
		}
	}
	return out, nil
}

// citationsReason names each changed citation: "store/db.go#L3-L5: lines
// 3–5 changed since ev_… saw them (commit 1a2b3c4)".
func citationsReason(cs []StaleCitation) string {
	parts := make([]string, 0, 3)
	for i, c := range cs {
		if i == 2 {
			parts = append(parts, fmt.Sprintf("+%d more", len(cs)-2))
			break
		}
		where := c.SourceRef
		if where == "" || (c.Path != "" && !strings.HasPrefix(where, c.Path)) {
			where = c.Path
		}
		s := fmt.Sprintf("%s: %s since %s saw it", where, c.Detail, c.EvidenceID)
		if c.Commit != "" {
			s += " (commit " + prefix(c.Commit, 7) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// prefix is s cut to n bytes.
func prefix(s string, n int) string { return s[:min(n, len(s))] }

// CodeAction is the repair of a card whose cited code changed.
func CodeAction(id string) string {
	return "re-verify it against the code now (`palace verify " + id + "`) or demote it (`palace demote " + id + " --counterexample EV --reason R`)"
}

// Dates returns the staleness of a card whose review date (or expiry)
// has passed at now (a stored time), nil otherwise.
func Dates(c domain.Card, now string) *Stale {
	switch {
	case c.ExpiresAt != "" && c.ExpiresAt <= now:
		return &Stale{Reason: "expired " + prefix(c.ExpiresAt, 10), Expired: c.ExpiresAt,
			Action: "extend the expiry if it still holds (`palace audit action " + c.ID + " --action set_expiry --value YYYY-MM-DD --reason R`) or retire it (`palace retire " + c.ID + " --reason R`)"}
	case c.ReviewAfter != "" && c.ReviewAfter <= now:
		return &Stale{Reason: "review was due " + prefix(c.ReviewAfter, 10), ReviewDue: c.ReviewAfter,
			Action: "confirm it still holds and set the next review date (`palace audit action " + c.ID + " --action set_review_after --value YYYY-MM-DD --reason R`)"}
	}
	return nil
}

// Merge combines a card's code staleness and its dates' (either may be nil).
func Merge(code, dates *Stale) *Stale {
	switch {
	case code == nil:
		return dates
	case dates == nil:
		return code
	}
	out := *code
	out.Reason = code.Reason + "; " + dates.Reason
	out.ReviewDue, out.Expired = dates.ReviewDue, dates.Expired
	out.Action = code.Action + "; " + dates.Action
	return &out
}

// CodeReason is the part of st's reason that names the changed code.
func CodeReason(st *Stale) string { return citationsReason(st.Citations) }
