package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	"github.com/palacehq/palace/repofs"
)

// Source is where a letter was seen.
type Source struct {
	Path string `json:"path"`
	Line int    `json:"line"`
}

// Entry is one letter with its derived fate.
type Entry struct {
	ID      string   `json:"id"`
	Fate    Fate     `json:"fate"`
	Letter  Letter   `json:"letter"`
	Sources []Source `json:"sources"` // every place it was seen, in reading order
}

// Unreachable is a registered box that could not be read.
type Unreachable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SweepResult is the letters of a sweep or list, each once.
type SweepResult struct {
	Letters     []Entry       `json:"letters"` // by ts, then id
	Counts      Counts        `json:"counts"`  // every letter read, also when Letters is filtered
	Read        []string      `json:"read"`    // files, in order
	Unreachable []Unreachable `json:"unreachable"`
	Invalid     []LineProblem `json:"invalid"`
}

// Sweep returns each letter of the spool, the global box and every
// registered box once, with its fate. A box that is gone or unreadable is
// named in Unreachable; a missing box file is empty.
func (m *Mailbox) Sweep(ctx context.Context) (SweepResult, error) {
	boxes, err := m.Boxes()
	if err != nil {
		return SweepResult{}, err
	}
	s := newSweeper()
	for i, p := range []string{m.SpoolPath(), m.GlobalBoxPath()} {
		if err := s.read(p, i == 0); err != nil {
			s.res.Unreachable = append(s.res.Unreachable, Unreachable{Path: p, Reason: err.Error()})
		}
	}
	for _, b := range boxes {
		if err := ctx.Err(); err != nil {
			return SweepResult{}, err
		}
		if st, err := os.Stat(b.RepoRoot); err != nil || !st.IsDir() {
			s.res.Unreachable = append(s.res.Unreachable, Unreachable{Path: b.Path,
				Reason: fmt.Sprintf("repository %s is not on this machine (moved or removed?)", b.RepoRoot)})
			continue
		}
		if err := s.readBox(b.RepoRoot, BoxPath(b.RepoRoot)); err != nil {
			s.res.Unreachable = append(s.res.Unreachable, Unreachable{Path: b.Path, Reason: err.Error()})
		}
	}
	return s.finish(false), nil
}

// ListOptions selects what List returns.
type ListOptions struct {
	Box  string // one box file; empty: everything Sweep sees
	Open bool   // only open letters (Counts still cover all)
}

// List returns letters with fates and counts, derived within what is read
// (for one box, replies elsewhere do not count). A missing Box is an error
// wrapping os.ErrNotExist.
func (m *Mailbox) List(ctx context.Context, opts ListOptions) (SweepResult, error) {
	if opts.Box == "" {
		res, err := m.Sweep(ctx)
		if err != nil || !opts.Open {
			return res, err
		}
		return filterOpen(res), nil
	}
	if _, err := os.Stat(opts.Box); err != nil {
		return SweepResult{}, fmt.Errorf("read box %s: %w", opts.Box, err)
	}
	s := newSweeper()
	if err := s.read(opts.Box, false); err != nil {
		return SweepResult{}, err
	}
	return s.finish(opts.Open), nil
}

func filterOpen(res SweepResult) SweepResult {
	kept := res.Letters[:0]
	for _, e := range res.Letters {
		if e.Fate.Open() {
			kept = append(kept, e)
		}
	}
	res.Letters = kept
	return res
}

type sweeper struct {
	res     SweepResult
	byID    map[string]*Entry
	order   []string
	letters map[string]Letter
}

func newSweeper() *sweeper {
	return &sweeper{
		res:     SweepResult{Letters: []Entry{}, Read: []string{}, Unreachable: []Unreachable{}, Invalid: []LineProblem{}},
		byID:    map[string]*Entry{},
		letters: map[string]Letter{},
	}
}

// readBox adds the letters of a repository's box, opened below root without
// following links.
func (s *sweeper) readBox(root, path string) error {
	f, err := repofs.OpenFile(root, boxRel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		s.res.Read = append(s.res.Read, path)
		return nil
	}
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return err // names the path already
	}
	if err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	defer f.Close()
	if err := checkOpenBox(f, path); err != nil {
		return err
	}
	return s.readFrom(f, path, false)
}

// read adds a file's letters; a missing file has none.
func (s *sweeper) read(path string, spool bool) error {
	f, err := openBox(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.res.Read = append(s.res.Read, path)
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return s.readFrom(f, path, spool)
}

// readFrom adds the letters read from r; a spool's unterminated last line
// is still being written and is skipped.
func (s *sweeper) readFrom(r io.Reader, path string, spool bool) error {
	err := eachLine(r, func(bl boxLine) error {
		problem := func(code, msg string) {
			s.res.Invalid = append(s.res.Invalid, LineProblem{Path: path, Line: bl.n, Code: code, Message: msg})
		}
		switch {
		case bl.tooLong:
			problem(CodeLongLine, fmt.Sprintf("line over the %d-byte limit", MaxLineBytes))
			return nil
		case spool && !bl.complete, len(bytes.TrimSpace(bl.b)) == 0:
			return nil
		case isConflictMarker(bl.b):
			problem(CodeConflict, "merge conflict marker")
			return nil
		}
		id := ID(bl.b)
		if e, ok := s.byID[id]; ok {
			e.Sources = append(e.Sources, Source{Path: path, Line: bl.n})
			return nil
		}
		l, err := ParseLine(bl.b)
		if err != nil {
			var le *LetterError
			if errors.As(err, &le) {
				problem(le.Code, le.Msg)
			}
			return nil
		}
		s.byID[id] = &Entry{ID: id, Letter: l, Sources: []Source{{Path: path, Line: bl.n}}}
		s.order = append(s.order, id)
		s.letters[id] = l
		return nil
	})
	if err != nil {
		return fmt.Errorf("read box %s: %w", path, err)
	}
	s.res.Read = append(s.res.Read, path)
	return nil
}

func (s *sweeper) finish(openOnly bool) SweepResult {
	fates := Fates(s.letters)
	s.res.Counts = Count(fates)
	for _, id := range s.order {
		e := s.byID[id]
		e.Fate = fates[id]
		if openOnly && !e.Fate.Open() {
			continue
		}
		s.res.Letters = append(s.res.Letters, *e)
	}
	times := make(map[string]int64, len(s.res.Letters))
	for _, e := range s.res.Letters {
		times[e.ID] = e.Letter.Time().UnixNano()
	}
	sort.SliceStable(s.res.Letters, func(i, j int) bool {
		a, b := s.res.Letters[i], s.res.Letters[j]
		if times[a.ID] != times[b.ID] {
			return times[a.ID] < times[b.ID]
		}
		return a.ID < b.ID
	})
	return s.res
}
