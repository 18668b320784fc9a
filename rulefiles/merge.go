package rulefiles

import (
	"fmt"
	"strings"
)

// Merge puts block (a File's Content with Block set) into existing, the
// current text of the file: it replaces the palace block there, or appends
// one after a blank line; every byte outside the block is kept. An empty
// existing gives the block alone. A palace:begin without its end, a second
// block, or an end without a begin is a *ParseError naming the line (name
// is the file's name in it).
func Merge(name string, existing []byte, block string) ([]byte, error) {
	if len(existing) == 0 {
		return []byte(block), nil
	}
	text := string(existing)
	start, end := -1, -1
	startLine := 0
	fence, fenceLine := "", 0
	off := 0
	for ln := 1; off < len(text); ln++ {
		next := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		if next >= 0 {
			lineEnd = off + next + 1
		}
		l := strings.TrimRight(text[off:lineEnd], "\r\n")
		t := strings.TrimSpace(l)
		switch {
		case isFence(t):
			if fence == "" {
				fenceLine = ln
			}
			fence = nextFence(fence, t)
		case fence != "":
		case strings.HasPrefix(l, beginPrefix):
			if start >= 0 {
				return nil, &ParseError{File: name, Line: ln, Msg: fmt.Sprintf("a second palace block (the first begins on line %d): remove one, then export again", startLine)}
			}
			start, startLine = off, ln
		case strings.TrimRight(l, " \t") == endMarker:
			if start < 0 || end >= 0 {
				return nil, &ParseError{File: name, Line: ln, Msg: "palace:end without a palace:begin before it: remove it, then export again"}
			}
			end = lineEnd
		}
		off = lineEnd
	}
	switch {
	case start >= 0 && end < 0:
		return nil, &ParseError{File: name, Line: startLine, Msg: "palace:begin without a palace:end: restore the end line (<!-- palace:end -->) or remove the block, then export again"}
	case start >= 0:
		return []byte(text[:start] + block + text[end:]), nil
	case fence != "":
		// A block appended inside the fence would go unseen by the next export.
		return nil, &ParseError{File: name, Line: fenceLine, Msg: "this code fence is never closed, so palace's block cannot be placed after it: close the fence, then export again"}
	}
	sep := "\n"
	if !strings.HasSuffix(text, "\n") {
		sep = "\n\n"
	} else if strings.HasSuffix(text, "\n\n") {
		sep = ""
	}
	return []byte(text + sep + block), nil
}
