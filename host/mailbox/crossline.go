package mailbox

import (
	"context"
	"fmt"
)

// crossLine runs the checks that need the whole file: duplicate ids (PM005),
// unknown answers (PM007), project letters in the global box (PM008) and
// the team's deny rules (PM100/PM101). It runs after the parallel phase, in
// line order, so its output is deterministic.
func (c *checker) crossLine(ctx context.Context, opts CheckOptions) []Finding {
	var out []Finding
	first := make(map[string]int, len(c.results))
	var letters []int
	for i := range c.results {
		r := &c.results[i]
		if r.kind == kindBlank || r.kind == kindMarker {
			continue
		}
		if j, dup := first[r.id]; dup {
			out = append(out, c.finding(i, 1, CodeDuplicate, SeverityError,
				fmt.Sprintf("duplicate of line %d (letter %s); each letter appears once in a box", j+1, r.id)))
			continue
		}
		first[r.id] = i
		if r.kind == kindLetter {
			letters = append(letters, i)
		}
	}
	for _, i := range letters {
		r := &c.results[i]
		for k, a := range r.letter.Answers {
			if _, ok := first[a]; ok || (opts.KnownIDs != nil && opts.KnownIDs(a)) {
				continue
			}
			out = append(out, c.finding(i, r.cols[fAnswers]+c.colBase(i), CodeUnknownAnswer, SeverityWarning,
				fmt.Sprintf("%q names letter %s, which is not in this box", fmt.Sprintf("answers[%d]", k), a)))
		}
		if opts.Global && !NamesNoProject(r.letter.Repo) {
			out = append(out, c.finding(i, r.cols[fRepo]+c.colBase(i), CodeProjectInGlobal, SeverityError,
				fmt.Sprintf("letter names project %s but sits in the global box; project letters belong in that repository's box (palace mailbox distribute files them)", quoteShort(r.letter.Repo))))
		}
	}
	return append(out, c.denyFindings(ctx, opts, letters)...)
}

func (c *checker) colBase(i int) int {
	if i == 0 {
		return c.bom
	}
	return 0
}
