package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/palacehq/palace/host/anchor"
	"github.com/palacehq/palace/host/secrets"
)

// DistributeReport says what Distribute did.
type DistributeReport struct {
	// Delivered counts letters appended to a box by this run.
	Delivered int `json:"delivered"`
	// AlreadyPresent counts spool letters whose id was already in their box.
	AlreadyPresent int `json:"already_present"`
	// Boxes lists every box a spool letter resolved to, sorted by path.
	Boxes []BoxDelivery `json:"boxes"`
	// Pending lists letters left in the spool, with why.
	Pending []PendingLetter `json:"pending"`
	// Invalid lists spool lines that are not deliverable letters (broken,
	// or with a secret); they stay in the spool and are never delivered.
	Invalid []LineProblem `json:"invalid"`
}

// BoxDelivery is one box's share of a run.
type BoxDelivery struct {
	Path           string `json:"path"`
	RepoRoot       string `json:"repo_root,omitempty"`
	Global         bool   `json:"global,omitempty"`
	Delivered      int    `json:"delivered"`
	AlreadyPresent int    `json:"already_present"`
}

// PendingLetter is a spool letter that could not be delivered yet.
type PendingLetter struct {
	ID string `json:"id"`
	// Line is its line in the spool.
	Line int `json:"line"`
	// Repo is the letter's repo field as written.
	Repo   string `json:"repo"`
	Reason string `json:"reason"`
}

// LineProblem is a line of the spool or a box that is not a usable letter.
type LineProblem struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

type spoolLetter struct {
	id     string
	line   int
	raw    []byte
	letter Letter
}

// Distribute files the spool's letters into the boxes of the repositories
// they name, and letters naming no project into the global box.
//
//   - repo is normalized: "~" expands to UserHome, a trailing annotation
//     such as " (worktree feature-x)" is dropped, a worktree (or any path
//     inside a checkout) resolves to its repository's main worktree, whose
//     .palace/inbox.jsonl is the box; a remote (github.com/org/name, an
//     https or scp-style URL) resolves to a registered checkout of it.
//   - A letter whose repository is not on this machine (missing path, not a
//     repository, bare, unknown remote) stays pending — never the global
//     box — and is listed with the reason.
//   - It is idempotent: a letter whose id is already in its box is not
//     appended again; lines already in a box (from git: ids the spool never
//     saw) are never touched. New letters go in one O_APPEND write per box,
//     copied byte for byte so their ids do not change.
//   - The spool is append-only and is not modified.
//
// A spool line still being written (no final '\n') is left for the next
// run. Runs are serialised by a lock in Home. The error is for the spool or
// registry; a box that cannot be written leaves its letters pending.
func (m *Mailbox) Distribute(ctx context.Context) (DistributeReport, error) {
	rep := DistributeReport{Boxes: []BoxDelivery{}, Pending: []PendingLetter{}, Invalid: []LineProblem{}}
	unlock, err := m.lock()
	if err != nil {
		return rep, err
	}
	defer unlock()
	registered, err := m.Boxes()
	if err != nil {
		return rep, err
	}
	letters, invalid, err := m.readSpool()
	if err != nil {
		return rep, err
	}
	rep.Invalid = append(rep.Invalid, invalid...)

	res := &resolver{ctx: ctx, userHome: m.userHome(), registered: registered, cache: map[string]target{}}
	groups := map[string][]spoolLetter{}
	targets := map[string]target{}
	for _, sl := range letters {
		t := res.resolve(sl.letter.Repo)
		if t.reason != "" {
			rep.Pending = append(rep.Pending, PendingLetter{ID: sl.id, Line: sl.line, Repo: sl.letter.Repo, Reason: t.reason})
			continue
		}
		if t.global {
			t.path = m.GlobalBoxPath()
		}
		targets[t.path] = t
		groups[t.path] = append(groups[t.path], sl)
	}
	paths := make([]string, 0, len(groups))
	for p := range groups {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var reg []RegisteredBox
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		t := targets[p]
		bd, err := deliver(t, groups[p])
		if err != nil {
			for _, sl := range groups[p] {
				rep.Pending = append(rep.Pending, PendingLetter{ID: sl.id, Line: sl.line, Repo: sl.letter.Repo, Reason: err.Error()})
			}
			continue
		}
		rep.Boxes = append(rep.Boxes, bd)
		rep.Delivered += bd.Delivered
		rep.AlreadyPresent += bd.AlreadyPresent
		if !t.global {
			reg = append(reg, RegisteredBox{Path: t.path, RepoRoot: t.root, RepoIdentity: t.identity})
		}
	}
	sort.Slice(rep.Pending, func(i, j int) bool { return rep.Pending[i].Line < rep.Pending[j].Line })
	if len(reg) > 0 {
		if err := m.addBoxes(reg); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// readSpool returns the spool's deliverable letters (first of each id, in
// spool order) and the lines that are not.
func (m *Mailbox) readSpool() ([]spoolLetter, []LineProblem, error) {
	var (
		out     []spoolLetter
		invalid []LineProblem
		seen    = map[string]bool{}
		path    = m.SpoolPath()
	)
	err := readFileLines(path, func(bl boxLine) error {
		if !bl.complete {
			return nil
		}
		if bl.tooLong {
			invalid = append(invalid, LineProblem{Path: path, Line: bl.n, Code: CodeLongLine,
				Message: fmt.Sprintf("line over the %d-byte limit", MaxLineBytes)})
			return nil
		}
		if len(bytes.TrimSpace(bl.b)) == 0 {
			return nil
		}
		id := ID(bl.b)
		if seen[id] {
			return nil // filed twice, byte for byte: one letter
		}
		seen[id] = true
		l, err := ParseLine(bl.b)
		var le *LetterError
		if errors.As(err, &le) {
			invalid = append(invalid, LineProblem{Path: path, Line: bl.n, Code: le.Code, Message: le.Msg})
			return nil
		}
		// The spool may have been appended to by hand: a letter with a
		// secret must not travel into a box that is committed.
		if found := secrets.Scan(bl.b); len(found) > 0 {
			invalid = append(invalid, LineProblem{Path: path, Line: bl.n, Code: CodeSecret,
				Message: fmt.Sprintf("secret (%s): %s; not delivered", found[0].Rule, found[0].Redacted)})
			return nil
		}
		out = append(out, spoolLetter{id: id, line: bl.n, raw: bytes.Clone(bl.b), letter: l})
		return nil
	})
	return out, invalid, err
}

// deliver appends the letters not yet in the box, in one write.
func deliver(t target, letters []spoolLetter) (BoxDelivery, error) {
	bd := BoxDelivery{Path: t.path, RepoRoot: t.root, Global: t.global}
	have := map[string]bool{}
	if err := readFileLines(t.path, func(bl boxLine) error {
		if !bl.tooLong {
			have[ID(bl.b)] = true
		}
		return nil
	}); err != nil {
		return bd, err
	}
	var buf bytes.Buffer
	for _, sl := range letters {
		if have[sl.id] {
			bd.AlreadyPresent++
			continue
		}
		have[sl.id] = true
		buf.Write(sl.raw)
		buf.WriteByte('\n')
		bd.Delivered++
	}
	if buf.Len() == 0 {
		return bd, nil
	}
	ends, err := endsWithNewline(t.path)
	if err != nil {
		return bd, err
	}
	out := buf.Bytes()
	if !ends {
		// Otherwise the first new letter would be glued to the last line.
		out = append([]byte{'\n'}, out...)
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return bd, fmt.Errorf("write box %s: %w", t.path, err)
	}
	if err := appendOnce(t.path, out, 0o644); err != nil {
		return bd, fmt.Errorf("write box %s: %w", t.path, err)
	}
	return bd, nil
}

// endsWithNewline is true for a missing or empty file too.
func endsWithNewline(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read box %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err == nil, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil && err != io.EOF {
		return false, fmt.Errorf("read box %s: %w", path, err)
	}
	return last[0] == '\n', nil
}

func (m *Mailbox) userHome() string {
	if m.UserHome != "" {
		return m.UserHome
	}
	h, _ := os.UserHomeDir()
	return h
}

// target is where a letter's repo field leads.
type target struct {
	path, root, identity string
	global               bool
	// reason, when set, is why the letter stays pending.
	reason string
}

type resolver struct {
	ctx        context.Context
	userHome   string
	registered []RegisteredBox
	// cache: many letters name the same repo, and resolving one costs two
	// git subprocesses.
	cache map[string]target
}

func (r *resolver) resolve(repo string) target {
	if strings.TrimSpace(repo) == "" {
		return target{global: true}
	}
	if t, ok := r.cache[repo]; ok {
		return t
	}
	t := r.resolveUncached(repo)
	r.cache[repo] = t
	return t
}

func (r *resolver) resolveUncached(repo string) target {
	path, identity, reason := normalizeRepo(repo, r.userHome)
	if reason != "" {
		return target{reason: reason}
	}
	if path != "" {
		loc, err := anchor.Resolve(r.ctx, path)
		if errors.Is(err, anchor.ErrNoDir) {
			return target{reason: "not on this machine: " + path + " does not exist"}
		}
		if err != nil {
			return target{reason: err.Error()}
		}
		root, why := boxRoot(loc)
		if why != "" {
			return target{reason: path + ": " + why}
		}
		return target{path: BoxPath(root), root: root, identity: loc.RepoIdentity}
	}
	for _, b := range r.registered {
		if strings.EqualFold(b.RepoIdentity, identity) {
			if st, err := os.Stat(b.RepoRoot); err == nil && st.IsDir() {
				return target{path: b.Path, root: b.RepoRoot, identity: b.RepoIdentity}
			}
		}
	}
	return target{reason: "no checkout of " + identity + " is known on this machine (distribute from inside one, or register its box)"}
}

var annotation = regexp.MustCompile(`\s*\([^()]*\)\s*$`)

// normalizeRepo turns a letter's repo field into a local path or a remote
// identity, or says why it can be neither.
func normalizeRepo(repo, userHome string) (path, identity, reason string) {
	s := strings.TrimSpace(repo)
	for {
		t := annotation.ReplaceAllString(s, "")
		if t == s || t == "" {
			break
		}
		s = t
	}
	s = strings.TrimPrefix(s, "file://")
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if userHome == "" {
			return "", "", "cannot expand ~: no home directory"
		}
		return filepath.Join(userHome, strings.TrimPrefix(s, "~")), "", ""
	case strings.HasPrefix(s, "~"):
		return "", "", fmt.Sprintf("%q: ~user paths are not supported; use an absolute path", s)
	case filepath.IsAbs(s):
		return filepath.Clean(s), "", ""
	}
	if id := anchor.NormalizeRemote(s); id != "" && (strings.Contains(s, "://") || strings.Contains(s, "@")) {
		return "", id, ""
	}
	if first, rest, ok := strings.Cut(s, "/"); ok && strings.Contains(first, ".") && strings.Contains(rest, "/") && !strings.HasPrefix(s, ".") {
		return "", strings.ToLower(first) + "/" + strings.TrimSuffix(strings.Trim(rest, "/"), ".git"), ""
	}
	return "", "", fmt.Sprintf("%q is a relative path; name the repository by absolute path or by remote (github.com/org/name)", s)
}
