package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/secrets"
)

// DistributeReport says what Distribute did.
type DistributeReport struct {
	Delivered      int `json:"delivered"`       // appended by this run
	AlreadyPresent int `json:"already_present"` // id already in its box
	// Boxes lists every box a spool letter resolved to, sorted by path.
	Boxes   []BoxDelivery   `json:"boxes"`
	Pending []PendingLetter `json:"pending"`
	// Invalid lists spool lines that are broken or hold a secret: never delivered.
	Invalid []LineProblem `json:"invalid"`
	// Refused lists boxes that are, or lie under, a symbolic link, or are
	// not regular files: nothing is written there; their letters stay pending.
	Refused []RefusedBox `json:"refused"`
}

// RefusedBox is a box Distribute would not write; Reason names the link and the fix.
type RefusedBox struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
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
	ID     string `json:"id"`
	Line   int    `json:"line"` // in the spool
	Repo   string `json:"repo"` // as written
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
//   - repo is normalized: "~" expands to UserHome, a trailing " (…)" is
//     dropped, a path inside a checkout resolves to its main worktree's box;
//     a remote resolves to a registered checkout, or to one of Checkouts that
//     still is one (which is then registered).
//   - A letter whose repository is not on this machine stays pending, never
//     in the global box, with the reason.
//   - It is idempotent: ids already in a box are not appended again, and
//     existing lines are never touched. New letters go byte for byte in one
//     O_APPEND write per box; the spool is not modified.
//
// A spool line without its final '\n' waits for the next run. Runs are
// serialised by a lock in Home. The error is for the spool or registry; an
// unwritable box leaves its letters pending.
func (m *Mailbox) Distribute(ctx context.Context) (DistributeReport, error) {
	rep := DistributeReport{Boxes: []BoxDelivery{}, Pending: []PendingLetter{}, Invalid: []LineProblem{}, Refused: []RefusedBox{}}
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

	groups, targets, pending := m.route(ctx, registered, letters)
	rep.Pending = append(rep.Pending, pending...)
	paths := make([]string, 0, len(groups))
	for p := range groups {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// A box over MaxBoxBytes stops the run before anything is written
	// (deliver reads a box's ids before appending to it).
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			if err := boxSizeOK(p, st); err != nil {
				return rep, err
			}
		}
	}
	var reg []RegisteredBox
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		t := targets[p]
		bd, err := deliver(t, groups[p])
		if errors.Is(err, bounded.ErrTooLarge) {
			return rep, err // it grew past the limit since the check above
		}
		if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
			rep.Refused = append(rep.Refused, RefusedBox{Path: p, Reason: err.Error()})
		}
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

// route groups letters by box path, with each box's target and the letters no box takes.
func (m *Mailbox) route(ctx context.Context, registered []RegisteredBox, letters []spoolLetter) (map[string][]spoolLetter, map[string]target, []PendingLetter) {
	res := &resolver{ctx: ctx, userHome: m.userHome(), registered: registered, known: m.Checkouts, cache: map[string]target{}}
	groups := map[string][]spoolLetter{}
	targets := map[string]target{}
	var pending []PendingLetter
	for _, sl := range letters {
		t := res.resolve(sl.letter.Repo)
		if t.reason != "" {
			pending = append(pending, PendingLetter{ID: sl.id, Line: sl.line, Repo: sl.letter.Repo, Reason: t.reason})
			continue
		}
		if t.global {
			t.path = m.GlobalBoxPath()
		}
		targets[t.path] = t
		groups[t.path] = append(groups[t.path], sl)
	}
	return groups, targets, pending
}

// Waiting says which spool letters Distribute would deliver now and which
// it would leave pending, writing nothing and taking no lock. A box that
// cannot be read counts its letters as deliverable.
func (m *Mailbox) Waiting(ctx context.Context) (WaitingReport, error) {
	rep := WaitingReport{Pending: []PendingLetter{}}
	registered, err := m.Boxes()
	if err != nil {
		return rep, err
	}
	letters, invalid, err := m.readSpool()
	if err != nil {
		return rep, err
	}
	rep.Invalid = len(invalid)
	groups, _, pending := m.route(ctx, registered, letters)
	rep.Pending = append(rep.Pending, pending...)
	for p, ls := range groups {
		have := map[string]bool{}
		_ = readFileLines(p, func(bl boxLine) error {
			if bl.complete && !bl.tooLong {
				have[ID(bl.b)] = true
			}
			return nil
		})
		for _, sl := range ls {
			if !have[sl.id] {
				rep.Deliverable++
			}
		}
	}
	sort.Slice(rep.Pending, func(i, j int) bool { return rep.Pending[i].Line < rep.Pending[j].Line })
	return rep, nil
}

// WaitingReport is what Waiting found.
type WaitingReport struct {
	Deliverable int             `json:"deliverable"`
	Pending     []PendingLetter `json:"pending"` // no known checkout here
	Invalid     int             `json:"invalid"` // spool lines that are no deliverable letter
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
		// The spool may be edited by hand: a secret must not reach a committed box.
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

// deliver appends the letters not yet in the box, in one write. A repo box
// is opened below its root without following links: a cloned .palace/ is
// untrusted.
func deliver(t target, letters []spoolLetter) (BoxDelivery, error) {
	bd := BoxDelivery{Path: t.path, RepoRoot: t.root, Global: t.global}
	root, rel := t.root, boxRel
	if t.global {
		// The home is trusted; a link in the box's place is not.
		root, rel = filepath.Dir(t.path), filepath.Base(t.path)
	}
	f, err := repofs.OpenFile(root, rel, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return bd, err // names the path already
	}
	if err != nil {
		return bd, fmt.Errorf("write box %s: %w", t.path, err)
	}
	defer f.Close()
	// Held from reading ids to the write: another palace home may deliver here too.
	unlock, err := flock(f)
	if err != nil {
		return bd, fmt.Errorf("lock box %s: %w", t.path, err)
	}
	defer unlock()
	if err := checkOpenBox(f, t.path); err != nil {
		return bd, err
	}
	have := map[string]bool{}
	if err := eachLine(f, func(bl boxLine) error {
		if !bl.tooLong {
			have[ID(bl.b)] = true
		}
		return nil
	}); err != nil {
		return bd, fmt.Errorf("read box %s: %w", t.path, err)
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
	if _, err := appendLocked(f, buf.Bytes()); err != nil {
		return bd, fmt.Errorf("write box %s: %w", t.path, err)
	}
	return bd, nil
}

// boxRel is a box's path below its repository root.
var boxRel = filepath.Join(".palace", "inbox.jsonl")

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
	known      []RegisteredBox   // Mailbox.Checkouts
	cache      map[string]target // resolving costs two git subprocesses
}

func (r *resolver) resolve(repo string) target {
	if NamesNoProject(repo) {
		return target{global: true}
	}
	t, ok := r.cache[repo]
	if !ok {
		t = r.resolveUncached(repo)
		r.cache[repo] = t
	}
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
				// BoxPath of the root, whatever a hand-edited registry says.
				return target{path: BoxPath(b.RepoRoot), root: b.RepoRoot, identity: b.RepoIdentity}
			}
		}
	}
	for _, b := range r.known {
		if !strings.EqualFold(b.RepoIdentity, identity) {
			continue
		}
		// A directory seen once as this remote's checkout must still be one.
		loc, err := anchor.Resolve(r.ctx, b.RepoRoot)
		if err != nil || !strings.EqualFold(loc.RepoIdentity, identity) {
			continue
		}
		if root, why := boxRoot(loc); why == "" {
			return target{path: BoxPath(root), root: root, identity: loc.RepoIdentity}
		}
	}
	return target{reason: "no checkout of " + identity + " is known on this machine (distribute from inside one, or register its box)"}
}

var annotation = regexp.MustCompile(`\s*\([^()]*\)\s*$`)

// noProjectWords name no single project: such letters go to the global box.
var noProjectWords = map[string]bool{"all": true, "global": true, "none": true, "n/a": true, "-": true, "*": true}

// NamesNoProject reports whether a letter's repo field names no project (so
// it belongs in the global box): after trailing "(annotations)" are dropped,
// nothing is left, or one of all, global, none, n/a, "-" or "*" in any case.
// A bare name such as "palace" names a project and stays pending.
func NamesNoProject(repo string) bool {
	s := stripAnnotations(repo)
	return s == "" || noProjectWords[strings.ToLower(s)]
}

// stripAnnotations drops trailing "(…)" groups and surrounding space:
// "~/src/a (worktree x)" is "~/src/a".
func stripAnnotations(repo string) string {
	s := strings.TrimSpace(repo)
	for {
		t := strings.TrimSpace(annotation.ReplaceAllString(s, ""))
		if t == s {
			return s
		}
		s = t
	}
}

// normalizeRepo turns a project's repo field into a local path or a remote
// identity, or says why it can be neither.
func normalizeRepo(repo, userHome string) (path, identity, reason string) {
	s := strings.TrimPrefix(stripAnnotations(repo), "file://")
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
