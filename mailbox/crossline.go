package mailbox

import (
	"context"
	"encoding/hex"
	"fmt"
)

// crossLine runs, in line order, the checks that need the whole file:
// PM005, PM007, PM008 and the team's rules (PM100/PM101).
func (c *checker) crossLine(ctx context.Context, opts CheckOptions) []Finding {
	var out []Finding
	first := make(map[letterID]int, c.nlines)
	var letters []int
	c.each(func(i int, r *lineResult) {
		if r.kind == kindBlank || r.kind == kindMarker {
			return
		}
		if j, dup := first[r.id]; dup {
			out = append(out, c.finding(i, 1, CodeDuplicate, SeverityError,
				fmt.Sprintf("duplicate of line %d (letter %s); each letter appears once in a box", j+1, r.id)))
			return
		}
		first[r.id] = i
		if r.kind == kindLetter && r.extra != nil {
			letters = append(letters, i)
		}
	})
	for _, i := range letters {
		ex := c.result(i).extra
		for k, a := range ex.answers {
			if id, ok := parseID(a); ok {
				if _, ok := first[id]; ok {
					continue
				}
			}
			if opts.KnownIDs != nil && opts.KnownIDs(a) {
				continue
			}
			out = append(out, c.finding(i, ex.colAnswers+c.colBase(i), CodeUnknownAnswer, SeverityWarning,
				fmt.Sprintf("%q names letter %s, which is not in this box", fmt.Sprintf("answers[%d]", k), a)))
		}
		if ex.repo != "" {
			out = append(out, c.finding(i, ex.colRepo+c.colBase(i), CodeProjectInGlobal, SeverityError,
				fmt.Sprintf("letter names project %s but sits in the global box; project letters belong in that repository's box (palace mailbox distribute files them)", quoteShort(ex.repo))))
		}
	}
	return append(out, c.denyFindings(ctx, opts, letters)...)
}

// parseID reads a letter id written as 12 lowercase hex characters.
func parseID(s string) (letterID, bool) {
	var id letterID
	if !IsID(s) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(s))
	return id, err == nil
}

func (c *checker) colBase(i int) int {
	if i == 0 {
		return c.bom
	}
	return 0
}
