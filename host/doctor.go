package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/policyfile"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// Check is one line of a doctor report.
type Check struct {
	Name string `json:"name"`
	// Status is ok, warn or fail.
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to do when Status is not ok.
	Fix string `json:"fix,omitempty"`
}

// SchemaVersion is the database schema this palace writes.
var SchemaVersion = store.SchemaVersion

// DoctorReport is what `palace doctor` prints.
type DoctorReport struct {
	Home          string  `json:"home"`
	Database      string  `json:"database"`
	SchemaVersion int     `json:"schema_version"`
	BinarySchema  int     `json:"binary_schema_version"`
	Mode          Mode    `json:"mode"`
	Checks        []Check `json:"checks"`
}

// OK reports whether no check failed.
func (r DoctorReport) OK() bool {
	for _, c := range r.Checks {
		if c.Status == "fail" {
			return false
		}
	}
	return true
}

// Doctor inspects a palace without changing it. It works on a database it
// cannot open (a newer schema, a corrupt file) and says so.
func Doctor(ctx context.Context, opts Options) DoctorReport {
	h, err := newHost(ctx, opts)
	if err != nil {
		// Say which part failed: a home that cannot be used is the home's
		// check, with the value as given, not a workspace problem.
		name, home := "workspace", opts.Home
		var he *Error
		if errors.As(err, &he) && he.Field == "home" {
			name, home = "home", cmp.Or(home, os.Getenv(HomeEnv))
		}
		return DoctorReport{Home: home, Mode: cmp.Or(opts.Mode, Human), Checks: []Check{{Name: name, Status: "fail", Detail: err.Error()}}}
	}
	r := DoctorReport{Home: h.home, Database: filepath.Join(h.home, "palace.db"), BinarySchema: store.SchemaVersion, Mode: h.mode}
	add := func(name, status, detail, fix string) {
		r.Checks = append(r.Checks, Check{Name: name, Status: status, Detail: detail, Fix: fix})
	}
	if _, err := exec.LookPath("git"); err != nil {
		add("git", "warn", "git is not on PATH: every directory resolves to the global anchor", "install git")
	} else {
		add("git", "ok", "git found", "")
	}
	if h.loc.InGit {
		add("anchors", "ok", fmt.Sprintf("worktree %s, repo %s", h.loc.Worktree, h.loc.RepoIdentity), "")
	} else {
		add("anchors", "ok", fmt.Sprintf("%s is outside git: global anchor only", h.loc.Dir), "")
	}
	if _, err := os.Stat(r.Database); errors.Is(err, os.ErrNotExist) {
		add("database", "warn", "no database yet at "+r.Database, "run `palace init` (any write creates it too)")
	} else {
		st, err := store.Open(ctx, r.Database)
		switch {
		case errors.Is(err, store.ErrSchemaTooNew):
			add("schema", "fail", err.Error(), "upgrade palace: this binary is older than the database")
		case err != nil:
			add("database", "fail", err.Error(), "check the file's permissions, or move it aside and run `palace init`")
		default:
			defer st.Close()
			// The uncommitted-files check reads what sync wrote through it.
			h.store = st
			if err := h.reconcileRepo(ctx); err == nil && len(h.loc.RepoAliases) > 0 {
				add("repository spellings", "warn", fmt.Sprintf("this palace holds repository %s also as %s (recorded before remotes on %s were folded to lower case): their cards and evidence are read here; new ones are written to %s",
					h.loc.RepoIdentity, strings.Join(h.loc.RepoAliases, ", "), strings.SplitN(h.loc.RepoIdentity, "/", 2)[0], h.loc.RepoIdentity),
					"nothing to do; `palace sync` exports only the cards of "+h.loc.RepoIdentity)
			}
			r.SchemaVersion, _ = st.Version(ctx)
			add("schema", "ok", fmt.Sprintf("version %d (this palace writes %d)", r.SchemaVersion, store.SchemaVersion), "")
			if res, err := st.IntegrityCheck(ctx); err != nil || len(res) != 1 || res[0] != "ok" {
				add("integrity", "fail", fmt.Sprintf("PRAGMA integrity_check: %v %v", res, err), "restore from a backup; the file is damaged")
			} else {
				add("integrity", "ok", "PRAGMA integrity_check: ok", "")
			}
			cards, _ := st.CountCards(ctx)
			ev, _ := st.CountEvidence(ctx)
			add("contents", "ok", fmt.Sprintf("%s, %d evidence", pluralize(cards, "card"), ev), "")
			r.Checks = append(r.Checks, telemetryCheck(ctx, st, h.telemetryDays))
			r.Checks = append(r.Checks, heldCheck(ctx, st))
			if h.loc.InGit {
				r.Checks = append(r.Checks, workspaceCheck(ctx, st, AnchorID(h.loc.Identity(domain.AnchorWorktree))))
			}
		}
	}
	set, err := policies.Load(ctx, h.PolicySources(), policies.Options{})
	if err != nil {
		add("policies", "fail", err.Error(), "fix the policy files named above (`palace policy check`); until then gates deny")
	} else {
		detail := "set " + set.Hash()[:12]
		for _, p := range policies.Points {
			if sv, ok := set.Served(p); ok {
				detail += fmt.Sprintf("; %s from %s", p, sv.Source)
			}
		}
		add("policies", "ok", detail, "")
	}
	if changes, err := policyfile.LocalChanges(ctx, h.PolicySources().RepoDir); err != nil {
		add("local policies", "warn", err.Error(), "")
	} else if len(changes) > 0 {
		var parts []string
		for _, c := range changes {
			parts = append(parts, c.Path+" ("+c.State+")")
		}
		add("local policies", "warn", "repo policy files git does not hold as committed: "+strings.Join(parts, ", ")+"; a promotion they decide is refused without --allow-local-policy",
			"review them and commit them (or remove them)")
	} else if h.loc.InGit {
		add("local policies", "ok", "no untracked or modified repo policy files", "")
	}
	if h.loc.InGit {
		r.Checks = append(r.Checks, uncommittedCheck(ctx, h))
	}
	r.Checks = append(r.Checks, mailboxCheck(ctx, h))
	return r
}

// mailboxCheck reports the letters filed and not yet in their box: those
// `palace mailbox distribute` would deliver now, and those whose
// repository has no known checkout on this machine.
func mailboxCheck(ctx context.Context, h *Host) Check {
	w, err := h.Mail().Waiting(ctx)
	if err != nil {
		return Check{Name: "mailbox", Status: "warn", Detail: err.Error(), Fix: "see `palace mailbox sweep`"}
	}
	if w.Deliverable == 0 && len(w.Pending) == 0 {
		return Check{Name: "mailbox", Status: "ok", Detail: "no letter waits in the spool"}
	}
	var parts, fixes []string
	if w.Deliverable > 0 {
		parts = append(parts, fmt.Sprintf("%s for boxes palace can reach", pluralize(w.Deliverable, "letter")))
		fixes = append(fixes, "run `palace mailbox distribute`")
	}
	if len(w.Pending) > 0 {
		repos := map[string]bool{}
		var names []string
		for _, p := range w.Pending {
			if !repos[p.Repo] {
				repos[p.Repo] = true
				names = append(names, p.Repo)
			}
		}
		parts = append(parts, fmt.Sprintf("%s for repositories with no known checkout here (%s: %s)",
			pluralize(len(w.Pending), "letter"), strings.Join(names, ", "), w.Pending[0].Reason))
		fixes = append(fixes, "run `palace mailbox distribute` inside a checkout of each")
	}
	return Check{Name: "mailbox", Status: "warn", Detail: "letters wait in the spool: " + strings.Join(parts, "; "), Fix: strings.Join(fixes, "; ")}
}

// uncommittedCheck warns about card files git sees untracked or modified
// in the working tree: sync reads committed files only.
func uncommittedCheck(ctx context.Context, h *Host) Check {
	fs, err := h.Team().Uncommitted(ctx)
	if err != nil {
		return Check{Name: "uncommitted card files", Status: "warn", Detail: err.Error()}
	}
	if len(fs) == 0 {
		return Check{Name: "uncommitted card files", Status: "ok", Detail: "every card file in " + cardfile.Dir + " is committed"}
	}
	var paths []string
	for _, f := range fs {
		paths = append(paths, f.Path)
	}
	return Check{Name: "uncommitted card files", Status: "warn",
		Detail: fmt.Sprintf("%s untracked or modified, not read by palace sync: %s", pluralize(len(fs), "card file"), strings.Join(paths, ", ")),
		Fix:    "review and commit them to share them (palace sync imports committed files only), or remove them"}
}

func pluralize(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// workspaceCheck says whether a person let agents read every repository's
// memory from this checkout, and who, when and why.
func workspaceCheck(ctx context.Context, st *store.Store, anchorID string) Check {
	p, found, err := st.WorkspacePermission(ctx, anchorID, store.PermissionAllRepos)
	switch {
	case err != nil:
		return Check{Name: "workspace", Status: "warn", Detail: err.Error()}
	case !found:
		return Check{Name: "workspace", Status: "ok", Detail: "agents read this checkout's worktree, repository and global memory only (no one allowed all_repos here)"}
	}
	verb, what := "denied", "agents read this checkout's worktree, repository and global memory only"
	if p.Allowed {
		verb, what = "allowed", "agents may read every repository's memory from here (all_repos)"
	}
	detail := fmt.Sprintf("%s: %s by %s at %s", what, verb, p.Actor, p.CreatedAt)
	if p.Reason != "" {
		detail += " (" + p.Reason + ")"
	}
	c := Check{Name: "workspace", Status: "ok", Detail: detail}
	if p.Allowed {
		c.Fix = "palace workspace deny-all-repos takes it back"
	}
	return c
}

// heldCheck warns about imported card files whose claim of authority the
// gate refused (the cards stay candidates).
func heldCheck(ctx context.Context, st *store.Store) Check {
	rows, err := st.HeldCardFiles(ctx)
	if err != nil {
		return Check{Name: "card files", Status: "warn", Detail: err.Error()}
	}
	if len(rows) == 0 {
		return Check{Name: "card files", Status: "ok", Detail: "no imported card is held back by the gate"}
	}
	var parts []string
	for _, r := range rows {
		claimed, reasons := teamsync.DecodeHeld(r.Held)
		parts = append(parts, fmt.Sprintf("%s claims %s: %s", r.CardID, claimed, strings.Join(reasons, "; ")))
	}
	return Check{Name: "card files", Status: "warn",
		Detail: fmt.Sprintf("%d imported card(s) held as candidates by the gate: %s", len(rows), strings.Join(parts, " | ")),
		Fix:    "add the evidence the gate asks for and promote (palace promote ID), or set status: candidate in the file; palace cards check shows the same"}
}
