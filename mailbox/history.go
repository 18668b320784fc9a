package mailbox

import (
	"bytes"
	"fmt"
)

// maxHistoryFindings caps PM006; past it one summary counts the rest.
const maxHistoryFindings = 50

// lineIDs returns the id of every line, blank ones too, as Check sees them.
func lineIDs(content []byte) []letterID {
	content = bytes.TrimPrefix(content, bom)
	spans := lineSpans(nil, content)
	ids := make([]letterID, len(spans))
	for i, sp := range spans {
		ids[i] = lineID(content[sp.start:sp.end])
	}
	return ids
}

// historyFindings requires every committed line still in its place, byte
// for byte: letters are cited by id, so a rewritten line orphans its answers.
func historyFindings(c *checker, base []byte) []Finding {
	// Base a prefix of the box (the usual append-only commit): nothing moved.
	prefix := !c.baseDiffers && c.baseMatched == len(base)
	if n := len(base); n == 0 || (prefix && (base[n-1] == '\n' || n == c.size)) {
		return nil
	}
	baseIDs := lineIDs(base)
	cur := make([]letterID, 0, c.nlines)
	pos := make(map[letterID]int, c.nlines)
	c.each(func(i int, r *lineResult) {
		cur = append(cur, r.id) // every line has one, blank lines too
		if _, seen := pos[r.id]; !seen {
			pos[r.id] = i
		}
	})
	inBase := make(map[letterID]bool, len(baseIDs))
	for _, id := range baseIDs {
		inBase[id] = true
	}
	var out []Finding
	extra := 0
	add := func(i int, msg string) {
		if len(out) >= maxHistoryFindings {
			extra++
			return
		}
		// A deleted tail points at the last line (line 1 of an emptied file).
		i = max(min(i, c.nlines-1), 0)
		out = append(out, c.finding(i, 1, CodeHistory, SeverityError, msg))
	}
	for i, id := range baseIDs {
		if i < len(cur) && cur[i] == id {
			continue
		}
		at, present := pos[id]
		switch {
		case present:
			add(at, fmt.Sprintf("committed line %d (letter %s) moved to line %d; boxes are append-only: add new letters at the end", i+1, id, at+1))
		case i < len(cur) && !inBase[cur[i]]:
			add(i, fmt.Sprintf("line %d rewrites committed history: letter %s was replaced by %s; boxes are append-only: restore the line and add a new letter at the end", i+1, id, cur[i]))
		default:
			add(i, fmt.Sprintf("committed line %d (letter %s) was deleted; boxes are append-only: restore it", i+1, id))
		}
	}
	if extra > 0 {
		f := out[len(out)-1]
		f.Message = fmt.Sprintf("… and %d more changes to committed lines", extra)
		f.LetterID = ""
		out = append(out, f)
	}
	return out
}
