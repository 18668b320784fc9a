// Package mail binds the letter engine (mailbox) to one home and workspace
// with the team's palace.mailbox rules, for `palace mailbox`, the pre-commit
// hook and the LSP. It never opens the store, writes cards, parses letters
// or evaluates policies itself; host imports mail, never the reverse.
package mail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/repofs"
)

// Config is what a Mail needs of the palace it serves. Every field is
// required.
type Config struct {
	jobenv.Env
	// Home is the palace home directory (spool, global box, registry).
	Home string
	// PolicySources are the folders policies load from; Rules looks in
	// them before paying for a load.
	PolicySources func() policies.Sources
	// Checkouts lists the checkouts of repositories the palace knows, read
	// when letters are routed. Optional.
	Checkouts func(context.Context) []mailbox.RegisteredBox
}

// Mail is the mailbox face of a palace seen from one workspace. It never
// opens the database and compiles policies only when a team mailbox policy
// may exist. It is safe for concurrent use.
type Mail struct {
	home          string
	loc           anchor.Location
	actor         string
	now           func() time.Time
	policySources func() policies.Sources
	policies      func(context.Context) (*policies.Set, error)
	checkouts     func(context.Context) []mailbox.RegisteredBox
}

func New(cfg Config) *Mail {
	return &Mail{home: cfg.Home, loc: cfg.Loc, actor: cfg.Actor, now: cfg.Now, policySources: cfg.PolicySources, policies: cfg.Policies, checkouts: cfg.Checkouts}
}

// router is the mailbox with the checkouts the palace knows, for routing
// letters.
func (m *Mail) router(ctx context.Context) *mailbox.Mailbox {
	mb := m.Mailbox()
	if m.checkouts != nil {
		mb.Checkouts = m.checkouts(ctx)
	}
	return mb
}

// Mailbox returns the mailbox under this palace's home, stamping letters
// with its clock.
func (m *Mail) Mailbox() *mailbox.Mailbox { return &mailbox.Mailbox{Home: m.home, Now: m.now} }

// MaxBoxBytes bounds one box or spool file palace reads.
const MaxBoxBytes = mailbox.MaxBoxBytes

// Rules returns the team's palace.mailbox rules and what serves them; both
// nil when the embedded default serves (found without a compile when no
// policy file mentions the mailbox). A set that does not load yields rules
// refusing every letter (PM101).
func (m *Mail) Rules(ctx context.Context) (mailbox.DenyRules, *policies.Served) {
	if !mayServeMailbox(m.policySources()) {
		return nil, nil
	}
	set, err := m.policies(ctx)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return failingRules{fmt.Errorf("the policy set does not load: %s", msg)}, nil
	}
	sv, ok := set.Served(policies.Mailbox)
	if !ok || sv.Source == policies.SourceEmbedded || sv.Engine == policies.EngineGo {
		return nil, nil
	}
	return &teamRules{set: set}, &sv
}

// maxPolicyFileBytes bounds a policy file mayServeMailbox reads, as the
// policy load does.
const maxPolicyFileBytes = 64 << 20

// mayServeMailbox reports whether a team policy file could replace the
// embedded palace.mailbox: a non-test .rego file mentioning "mailbox", or a
// .wasm module. It errs towards yes, also for a directory it cannot read.
func mayServeMailbox(src policies.Sources) bool {
	for _, dir := range []string{src.HomeDir, src.RepoDir} {
		if dir == "" {
			continue
		}
		// Read as the load reads: bounded, a repository's file only inside it.
		read := func(p string) ([]byte, error) { return bounded.ReadFile(p, maxPolicyFileBytes) }
		if dir == src.RepoDir && src.RepoRoot != "" {
			read = func(p string) ([]byte, error) { return bounded.ReadFileWithin(src.RepoRoot, p, maxPolicyFileBytes) }
		}
		found := false
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") && path != dir {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case d.IsDir():
				return nil
			case strings.HasSuffix(name, ".wasm"):
				found = true
			case strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego"):
				b, err := read(path)
				if err != nil {
					return err
				}
				found = strings.Contains(string(b), "mailbox")
			}
			if found {
				return filepath.SkipAll
			}
			return nil
		})
		if found || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			return true
		}
	}
	return false
}

// CheckRequest is what `palace mailbox check` checks.
type CheckRequest struct {
	// Paths are box files, relative to the workspace directory or absolute.
	// Empty: with Staged, every box staged differently from HEAD; without,
	// this checkout's box and the global box, those that exist.
	Paths []string
	// Staged checks the index version of each box against HEAD (append-only
	// history, PM006) instead of the file on disk.
	Staged bool
}

// CheckReport is the result of a mailbox check.
type CheckReport struct {
	// Checked lists the boxes checked, as named in the findings.
	Checked  []string          `json:"checked"`
	Staged   bool              `json:"staged"`
	Findings []mailbox.Finding `json:"findings"`
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	// Policy is the team palace.mailbox policy that ran on every letter;
	// null when the embedded default served (it denies nothing).
	Policy *policies.Served `json:"policy"`
}

// Check runs every mailbox check on the requested boxes with the team's
// rules (PM008 for the global box). Findings are a result; the error is for
// a box that cannot be read (KindInvalid) or git failing (KindInternal).
func (m *Mail) Check(ctx context.Context, req CheckRequest) (CheckReport, error) {
	rep := CheckReport{Checked: []string{}, Findings: []mailbox.Finding{}, Staged: req.Staged}
	dir, paths := m.loc.Dir, req.Paths
	if req.Staged && !m.loc.InGit {
		return rep, hosterr.Invalid("--staged", "--staged checks what git is about to commit, and %s is not inside a git checkout: run it in a checkout or drop --staged", dir)
	}
	if len(paths) == 0 {
		var err error
		if paths, err = m.defaultBoxes(ctx, req.Staged); err != nil || len(paths) == 0 {
			return rep, err
		}
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		if abs[i] = p; !filepath.IsAbs(p) {
			abs[i] = filepath.Join(dir, p)
		}
		// Files on disk are checked for links before any is read; the
		// index holds a link as a link.
		if !req.Staged {
			if err := m.refuseLinkedBox(abs[i]); err != nil {
				return rep, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "FILE", Msg: "read box " + p, Err: err}
			}
		}
	}
	rules, served := m.Rules(ctx)
	rep.Policy = served
	if req.Staged {
		// The index never holds the global box, so Global stays false.
		found, err := mailbox.StagedCheck(ctx, dir, paths, mailbox.CheckOptions{Deny: rules})
		if errors.Is(err, mailbox.ErrNotStaged) {
			return rep, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "FILE", Msg: "check staged box", Err: fmt.Errorf("%w: stage it (git add) or check the file on disk without --staged", err)}
		}
		var se *bounded.SizeError
		var pe *fs.PathError
		if errors.As(err, &se) && errors.As(err, &pe) {
			return rep, boxReadError(pe.Path, se)
		}
		if err != nil {
			return rep, hosterr.Internal(err, "check staged boxes")
		}
		rep.Checked, rep.Findings = paths, append(rep.Findings, found...)
	} else {
		for i, p := range paths {
			found, err := checkBoxFile(ctx, p, abs[i], mailbox.CheckOptions{Deny: rules, Global: m.Mailbox().IsGlobalBox(abs[i])})
			if err != nil {
				return rep, err
			}
			rep.Checked = append(rep.Checked, p)
			rep.Findings = append(rep.Findings, found...)
		}
	}
	for _, f := range rep.Findings {
		if f.Severity == mailbox.SeverityError {
			rep.Errors++
		} else {
			rep.Warnings++
		}
	}
	return rep, ctx.Err()
}

// checkBoxFile streams the box at abs (named p); a file over MaxBoxBytes or
// not regular is refused before it is read (KindInvalid).
func checkBoxFile(ctx context.Context, p, abs string, opts mailbox.CheckOptions) ([]mailbox.Finding, error) {
	f, _, err := bounded.Open(abs, MaxBoxBytes)
	if err != nil {
		return nil, boxReadError(p, err)
	}
	defer f.Close()
	found, err := mailbox.CheckReader(ctx, p, f, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, boxReadError(p, err)
	}
	return found, nil
}

// boxReadError is the KindInvalid error of a box that cannot be read: a
// box over MaxBoxBytes names its size, the limit and what to do.
func boxReadError(p string, err error) error {
	var se *bounded.SizeError
	if errors.As(err, &se) {
		size := "larger than the limit"
		if se.Size >= 0 {
			size = fmt.Sprintf("%d bytes, over the limit", se.Size)
		}
		return hosterr.Invalid("FILE", "box %s is %s of %s for one box, and is not read: a box holds short letters, so check that the path names a box, or split it (move older letters to another file)",
			p, size, bounded.Human(se.Limit))
	}
	return &hosterr.Error{Kind: hosterr.KindInvalid, Field: "FILE", Msg: "read box " + p, Err: err}
}

// refuseLinkedBox refuses a box inside the checkout that is, or is under, a
// symbolic link, so no file from outside the repository feeds findings.
func (m *Mail) refuseLinkedBox(abs string) error {
	wt := m.loc.Worktree
	if !m.loc.InGit || wt == "" {
		return nil
	}
	rel, err := filepath.Rel(wt, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	f, err := repofs.OpenFile(wt, rel, os.O_RDONLY, 0)
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return err
	}
	if err == nil {
		f.Close()
	}
	return nil // a missing or unreadable file is reported by the read
}

// defaultBoxes lists the boxes a check without paths covers, relative to
// the workspace directory where they can be.
func (m *Mail) defaultBoxes(ctx context.Context, staged bool) ([]string, error) {
	loc := m.loc
	if staged {
		top, err := stagedBoxes(ctx, loc.Worktree)
		if err != nil {
			return nil, hosterr.Internal(err, "list staged boxes")
		}
		out := make([]string, 0, len(top))
		for _, p := range top {
			out = append(out, relTo(loc.Dir, filepath.Join(loc.Worktree, p)))
		}
		return out, nil
	}
	var out []string
	if loc.InGit {
		if p := filepath.Join(loc.Worktree, ".palace", "inbox.jsonl"); exists(p) {
			out = append(out, relTo(loc.Dir, p))
		}
	}
	if p := m.Mailbox().GlobalBoxPath(); exists(p) {
		out = append(out, p)
	}
	return out, nil
}

// relTo names p relative to dir, as git does ("../.palace/inbox.jsonl"
// from a subdirectory), or absolutely if it cannot.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return r
	}
	return p
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// File files a letter into the spool; Agent defaults to the actor, a
// relative repo is made absolute. A bad letter or linked spool is
// KindInvalid, a secret KindDenied (nothing written).
func (m *Mail) File(ctx context.Context, l mailbox.Letter) (mailbox.Filed, error) {
	if r := strings.TrimSpace(l.Repo); r == "." || strings.HasPrefix(r, "./") || strings.HasPrefix(r, "../") {
		l.Repo = filepath.Join(m.loc.Dir, r)
	}
	if strings.TrimSpace(l.Agent) == "" {
		l.Agent = m.actor
	}
	filed, err := m.Mailbox().File(ctx, l)
	if err == nil {
		return filed, nil
	}
	var le *mailbox.LetterError
	var se *mailbox.SecretError
	switch {
	case errors.As(err, &le):
		return mailbox.Filed{}, &hosterr.Error{Kind: hosterr.KindInvalid, Field: le.Field, Msg: le.Error()}
	case errors.As(err, &se):
		return mailbox.Filed{}, &hosterr.Error{Kind: hosterr.KindDenied, Field: "letter", Msg: se.Error()}
	case errors.Is(err, repofs.ErrLink), errors.Is(err, repofs.ErrNotRegular):
		return mailbox.Filed{}, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "spool", Msg: "file letter", Err: err}
	}
	return mailbox.Filed{}, hosterr.Internal(err, "file letter")
}

// Distribution is what Distribute did.
type Distribution struct {
	mailbox.DistributeReport
	// Registered is the current checkout's box, registered before the run
	// so letters naming its remote find it; empty outside git.
	Registered string `json:"registered,omitempty"`
}

// Distribute registers this checkout's box (if any), then files the spool's
// letters into their boxes (idempotent).
func (m *Mail) Distribute(ctx context.Context) (Distribution, error) {
	var out Distribution
	mb := m.router(ctx)
	if m.loc.InGit {
		rb, err := mb.Register(ctx, m.loc.Dir)
		if err != nil {
			return out, mailError(err, "register this checkout's box")
		}
		out.Registered = rb.Path
	}
	rep, err := mb.Distribute(ctx)
	out.DistributeReport = rep
	return out, mailError(err, "distribute letters")
}

// Waiting says which spool letters are not in their box yet (see
// mailbox.Mailbox.Waiting), for doctor.
func (m *Mail) Waiting(ctx context.Context) (mailbox.WaitingReport, error) {
	rep, err := m.router(ctx).Waiting(ctx)
	return rep, mailError(err, "read the spool")
}

// Sweep reads the spool, the global box and every registered box, each
// letter once, with fates.
func (m *Mail) Sweep(ctx context.Context) (mailbox.SweepResult, error) {
	res, err := m.Mailbox().Sweep(ctx)
	return res, mailError(err, "sweep mailbox")
}

// List lists letters with fates and counts; a relative opts.Box is read
// from the workspace directory. A missing box is KindInvalid.
func (m *Mail) List(ctx context.Context, opts mailbox.ListOptions) (mailbox.SweepResult, error) {
	if opts.Box != "" && !filepath.IsAbs(opts.Box) {
		opts.Box = filepath.Join(m.loc.Dir, opts.Box)
	}
	res, err := m.Mailbox().List(ctx, opts)
	if errors.Is(err, fs.ErrNotExist) {
		return res, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "--box", Msg: "list box", Err: err}
	}
	return res, mailError(err, "list mailbox")
}

// mailError classifies a mailbox error as File does: a
// bad letter is bad input, a secret is a "no", anything else is internal.
func mailError(err error, what string) error {
	if err == nil {
		return nil
	}
	var le *mailbox.LetterError
	if errors.As(err, &le) {
		return &hosterr.Error{Kind: hosterr.KindInvalid, Field: le.Field, Msg: what, Err: err}
	}
	var se *mailbox.SecretError
	if errors.As(err, &se) {
		return &hosterr.Error{Kind: hosterr.KindDenied, Msg: what, Err: err}
	}
	var size *bounded.SizeError
	var pe *fs.PathError
	if errors.As(err, &size) && errors.As(err, &pe) {
		return boxReadError(pe.Path, size)
	}
	if errors.Is(err, bounded.ErrNotRegular) || errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return &hosterr.Error{Kind: hosterr.KindInvalid, Msg: what, Err: err}
	}
	return hosterr.Internal(err, "%s", what)
}

// stagedBoxes lists the .palace/inbox.jsonl files at any depth whose index
// version differs from HEAD, relative to the checkout's top level.
func stagedBoxes(ctx context.Context, worktree string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", worktree, "diff", "--cached", "--name-only", "-z",
		"--no-renames", "--", ":(glob)**/.palace/inbox.jsonl").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("git diff --cached: %w", err)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, filepath.FromSlash(p))
		}
	}
	return paths, nil
}

// teamRules runs the team's palace.mailbox policy on letters.
type teamRules struct {
	set *policies.Set
}

var _ mailbox.BatchDenyRules = (*teamRules)(nil)

func (r *teamRules) Deny(ctx context.Context, in mailbox.DenyInput) ([]string, error) {
	msgs, _, err := r.set.Mailbox(ctx, mailboxInput(in))
	return msgs, err
}

// maxMailboxFailures stops evaluating a policy that keeps failing: each
// failure may be a deadline waited out, and a box has 100k letters.
const maxMailboxFailures = 10

// errMailboxNotEvaluated is the error of letters skipped after too many
// failures.
var errMailboxNotEvaluated = fmt.Errorf("not evaluated: the policy failed on %d letters before it", maxMailboxFailures)

// DenyBatch evaluates the letters in parallel windows of growing size; once
// failures reach maxMailboxFailures the rest are skipped, so which ran
// depends only on order. Failures are named in a *mailbox.BatchError.
func (r *teamRules) DenyBatch(ctx context.Context, in []mailbox.DenyInput) ([][]string, error) {
	out := make([][]string, len(in))
	errs := make([]error, len(in))
	failed := 0
	workers := runtime.GOMAXPROCS(0)
	for lo, window := 0, 16; lo < len(in); lo, window = lo+window, min(window*2, 1024) {
		hi := min(lo+window, len(in))
		if failed >= maxMailboxFailures || ctx.Err() != nil {
			for k := lo; k < len(in); k++ {
				errs[k] = cmp.Or(ctx.Err(), errMailboxNotEvaluated)
			}
			break
		}
		var next atomic.Int64
		next.Store(int64(lo))
		var wg sync.WaitGroup
		for range min(workers, hi-lo) {
			wg.Go(func() {
				for k := int(next.Add(1) - 1); k < hi; k = int(next.Add(1) - 1) {
					out[k], errs[k] = r.Deny(ctx, in[k])
					if errors.Is(errs[k], context.DeadlineExceeded) && ctx.Err() == nil {
						// Once more: a trivial rule can miss its deadline when descheduled.
						out[k], errs[k] = r.Deny(ctx, in[k])
					}
				}
			})
		}
		wg.Wait()
		for k := lo; k < hi; k++ {
			if errs[k] != nil {
				failed++
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return out, &mailbox.BatchError{Errs: errs}
		}
	}
	return out, nil
}

// mailboxInput is the palace.mailbox input of one letter: {box, path, line,
// letter}, the letter with the fields it has, as written.
func mailboxInput(in mailbox.DenyInput) policies.MailboxInput {
	l := in.Letter
	letter := map[string]any{"ts": l.TS, "agent": l.Agent, "class": l.Class, "what": l.What}
	for k, v := range map[string]string{"repo": l.Repo, "tool": l.Tool, "expected": l.Expected, "snippet": l.Snippet, "kind": l.Kind} {
		if v != "" {
			letter[k] = v
		}
	}
	if l.Answers != nil {
		answers := make([]any, len(l.Answers))
		for i, a := range l.Answers {
			answers[i] = a
		}
		letter["answers"] = answers
	}
	switch {
	case l.External.Ref != "":
		letter["external"] = l.External.Ref
	case l.External.Set:
		letter["external"] = true
	}
	return policies.MailboxInput{Box: in.Box, Path: in.Path, Line: in.Line, Letter: letter}
}

// failingRules refuses every letter: the policy set did not load, and the
// mailbox fails closed.
type failingRules struct{ err error }

var _ mailbox.BatchDenyRules = failingRules{}

func (r failingRules) Deny(context.Context, mailbox.DenyInput) ([]string, error) { return nil, r.err }

func (r failingRules) DenyBatch(context.Context, []mailbox.DenyInput) ([][]string, error) {
	return nil, r.err
}
