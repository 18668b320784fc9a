package teamsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/finding"
)

// CardsCheckRequest asks for the check of card files.
type CardsCheckRequest struct {
	// Paths are card files, relative to the host's directory or absolute;
	// empty: every staged card file with Staged, else all of .palace/cards.
	Paths []string `json:"paths,omitempty"`
	// Staged checks the version of each file in the index (what is about to
	// be committed) instead of the working tree.
	Staged bool `json:"staged,omitempty"`
}

// CardsCheckReport is the result of CheckCards.
type CardsCheckReport struct {
	Checked  []string           `json:"checked"`
	Findings []cardfile.Finding `json:"findings"`
	Errors   int                `json:"errors"`
	Warnings int                `json:"warnings"`
	Staged   bool               `json:"staged"`
}

// CheckCards is the pre-commit check of card files: format, secrets, ids
// declared twice, and the claimed status against the gate (PC012). It opens
// no database. An unreadable or unstaged path is KindInvalid, git failing
// KindInternal. Findings are sorted by path and line.
func (h *Team) CheckCards(ctx context.Context, req CardsCheckRequest) (CardsCheckReport, error) {
	rep := CardsCheckReport{Checked: []string{}, Findings: []cardfile.Finding{}, Staged: req.Staged}
	if req.Staged && !h.loc.InGit {
		return rep, invalid("--staged", "--staged checks what git is about to commit, and %s is not inside a git checkout: run it in a checkout or drop --staged", h.loc.Dir)
	}
	files, err := h.cardFilesToCheck(ctx, req)
	if err != nil {
		return rep, err
	}
	for _, f := range files {
		rep.Checked = append(rep.Checked, f.path)
	}
	rep.Findings = append(rep.Findings, decodeChecked(files)...)
	rep.Findings = append(rep.Findings, h.gateFindings(ctx, files)...)
	if !req.Staged && len(req.Paths) == 0 && h.loc.InGit {
		// A file sync would not read is worth saying before it is
		// committed on the wrong belief.
		g := git{dir: h.loc.Worktree}
		changes, err := g.changes(ctx)
		if err != nil {
			return rep, internal(err, "read the working tree of %s", cardfile.Dir)
		}
		var format string
		fs, _ := h.worktreeFindings(changes, g.formatOf(ctx, &format), nil, nil)
		rep.Findings = append(rep.Findings, fs...)
	}
	sortFindings(rep.Findings)
	for _, f := range rep.Findings {
		if f.Severity == cardfile.SeverityError {
			rep.Errors++
		} else {
			rep.Warnings++
		}
	}
	return rep, nil
}

// CheckCardBuffer checks an editor's buffer as CheckCards checks a file
// (path's base must be the card's id and .md), without comparing ids of
// other files. Findings are in line order.
func (h *Team) CheckCardBuffer(ctx context.Context, path string, data []byte) []cardfile.Finding {
	f := &checkFile{id: strings.TrimSuffix(filepath.Base(path), cardfile.Ext), path: path, data: data}
	fs := decodeChecked([]*checkFile{f})
	fs = append(fs, h.gateFindings(ctx, []*checkFile{f})...)
	sortFindings(fs)
	return fs
}

// gateFindings checks what decoding cannot: a dangling origin_card, and
// each claimed status against the repository's gate.
func (h *Team) gateFindings(ctx context.Context, files []*checkFile) []cardfile.Finding {
	var out []cardfile.Finding
	repoID := AnchorID(h.loc.Identity(domain.AnchorRepo))
	known := h.cardIDsInDir(files)
	for _, f := range files {
		if f.parsed == nil {
			continue
		}
		if o := f.parsed.Card.OriginCard; o != "" && !known[o] {
			out = append(out, cardfile.Finding{Finding: finding.Finding{Path: f.path, Line: f.parsed.Line("origin_card"), Col: 1,
				Code: cardfile.CodeReference, Severity: cardfile.SeverityError,
				Message: fmt.Sprintf("origin_card %s names no card file of %s: remove the line (a card published from a worktree keeps its origin on that machine)", o, cardfile.Dir)}, CardID: f.parsed.Card.ID})
		}
		if !domain.Status(f.parsed.Card.Status).Authoritative() {
			continue
		}
		fc := f.parsed.Card
		// A check decides nothing, so a team's policy being edited in the
		// same change may judge the file (allowLocal).
		g := h.gate.Evaluate(ctx, fromCardFile(fc, repoID, h.gate.Stamp()), fileLinks(fc, h.gate.Stamp()), nil, string(domain.ActionPromote), fc.Status, fileReviewer(fc), true)
		if !g.Allow {
			out = append(out, cardfile.Finding{Finding: finding.Finding{Path: f.path, Line: f.parsed.Line("status"), Col: 1,
				Code: cardfile.CodeGate, Severity: cardfile.SeverityError,
				Message: fmt.Sprintf("status %s is not allowed by the gate for the evidence this file carries (%s): cite the evidence the gate needs, or set status: candidate",
					fc.Status, strings.Join(g.Reasons, "; "))}, CardID: fc.ID})
		}
	}
	return out
}

func sortFindings(fs []cardfile.Finding) {
	// Stable: a file's findings keep the order Decode gave them.
	slices.SortStableFunc(fs, func(a, b cardfile.Finding) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
}

// cardFilesToCheck reads the files a check covers.
func (h *Team) cardFilesToCheck(ctx context.Context, req CardsCheckRequest) ([]*checkFile, error) {
	var rel []string // relative to the worktree when staged
	switch {
	case len(req.Paths) > 0:
		for _, p := range req.Paths {
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(h.loc.Dir, p)
			}
			if !req.Staged {
				rel = append(rel, abs)
				continue
			}
			r, err := filepath.Rel(h.loc.Worktree, abs)
			if err != nil || strings.HasPrefix(r, "..") {
				return nil, invalid("FILE", "%s is outside the checkout %s: --staged checks files of this checkout", p, h.loc.Worktree)
			}
			rel = append(rel, filepath.ToSlash(r))
		}
	case req.Staged:
		var err error
		if rel, err = stagedCardPaths(ctx, h.loc.Worktree); err != nil {
			return nil, internal(err, "list staged card files")
		}
	case !h.loc.InGit:
		return nil, nil
	default:
		dir := filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir))
		if err := refuseLinkedCardDir(h.loc.Worktree); err != nil {
			return nil, err
		}
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, internal(err, "read %s", dir)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), cardfile.Ext) && !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
				rel = append(rel, filepath.Join(dir, e.Name()))
			}
		}
	}
	if req.Staged {
		blobs, err := indexBlobs(ctx, h.loc.Worktree, rel)
		if err != nil {
			return nil, err
		}
		out := make([]*checkFile, len(rel))
		for i, r := range rel {
			out[i] = &checkFile{id: strings.TrimSuffix(filepath.Base(r), cardfile.Ext), path: r, data: blobs[i]}
		}
		return out, nil
	}
	out := make([]*checkFile, 0, len(rel))
	for i, abs := range rel {
		f := &checkFile{id: strings.TrimSuffix(filepath.Base(abs), cardfile.Ext), path: h.display(abs)}
		if len(req.Paths) > 0 {
			f.path = req.Paths[i]
		}
		var err error
		// The file itself may not be a link.
		if f.data, err = readWorktreeFile(filepath.Dir(abs), filepath.Base(abs)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, invalid("FILE", "card file %s does not exist", f.path)
			}
			return nil, invalid("FILE", "read card file %s: %v", f.path, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// cardIDsInDir are the card ids an origin_card may name: the files checked
// and the card files of the checkout's directory.
func (h *Team) cardIDsInDir(files []*checkFile) map[string]bool {
	known := map[string]bool{}
	for _, f := range files {
		if f.parsed != nil {
			known[f.parsed.Card.ID] = true
		}
	}
	if !h.loc.InGit {
		return known
	}
	entries, _ := os.ReadDir(filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir)))
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, cardfile.Ext) {
			known[strings.TrimSuffix(name, cardfile.Ext)] = true
		}
	}
	return known
}

// display names abs relative to the host's directory when it is inside it.
func (h *Team) display(abs string) string {
	if r, err := filepath.Rel(h.loc.Dir, abs); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return abs
}

// stagedCardPaths lists the card files added, copied, modified or renamed
// in the index, relative to the worktree.
func stagedCardPaths(ctx context.Context, worktree string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", worktree, "diff", "--cached", "--name-only", "-z",
		"--diff-filter=ACMR", "--", cardfile.Dir).Output()
	if err != nil {
		return nil, fmt.Errorf("git diff --cached: %w", err)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if strings.HasSuffix(p, cardfile.Ext) && !strings.HasPrefix(filepath.Base(p), ".") {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// indexBlobs reads the index version of each path with one git cat-file;
// a path not in the index is KindInvalid.
func indexBlobs(ctx context.Context, worktree string, paths []string) ([][]byte, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	br, err := git{dir: worktree}.blobs(ctx)
	if err != nil {
		return nil, internal(err, "read the index")
	}
	defer br.close()
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = ":" + p
	}
	out, err := br.read(names)
	var missing *missingObjectError
	if errors.As(err, &missing) {
		return nil, invalid("FILE", "card file %s is not staged: stage it (git add) or check the file on disk without --staged", missing.name[1:])
	}
	if err != nil {
		return nil, internal(err, "read the index")
	}
	return out, nil
}
