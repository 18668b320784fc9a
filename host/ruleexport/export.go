// Package ruleexport writes a repository's authoritative cards into the
// rule files agents read (CLAUDE.md, AGENTS.md, Cursor, Copilot...), below
// the checkout without following links; the formats are rulefiles'. It
// changes no card; host imports it.
package ruleexport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/rulefiles"
	"github.com/palacehq/palace/store"
)

// Config is what an export needs of the palace it reads. Every field is
// required.
type Config struct {
	jobenv.Env
	// OpenContests are the open contests of cards, by card id.
	OpenContests func(ctx context.Context, ids []string) (map[string][]store.Contest, error)
}

// Exporter exports one checkout's cards.
type Exporter struct{ cfg Config }

func New(cfg Config) *Exporter { return &Exporter{cfg: cfg} }

// Request asks for the rule files of one target.
type Request struct {
	// Target is agents-md, claude-md, cursor or copilot.
	Target string `json:"target"`
	// Check writes nothing and reports the files that differ (stale).
	Check bool `json:"check,omitempty"`
	// DryRun writes nothing and returns each file's new content.
	DryRun bool `json:"dry_run,omitempty"`
	// Budget overrides the per-file budget in characters; 0 keeps the
	// target's default (rulefiles.BlockBudget or rulefiles.FileBudget).
	Budget int `json:"budget,omitempty"`
}

// File is one file of an export.
type File struct {
	// Path is relative to the checkout root, slash-separated.
	Path string `json:"path"`
	// Action is written, unchanged or removed; with Check stale or
	// unchanged; with DryRun would_write, would_remove or unchanged.
	Action string             `json:"action"`
	Cards  []rulefiles.Placed `json:"cards,omitempty"`
	Used   int                `json:"used"`
	Budget int                `json:"budget"`
	// Content is the file as it would be written (DryRun only).
	Content string `json:"content,omitempty"`
}

// LeftOut is an authoritative card the export does not carry.
type LeftOut struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Result reports an export.
type Result struct {
	Target string `json:"target"`
	// Root is the checkout the files belong to.
	Root    string    `json:"root"`
	Cards   int       `json:"cards"`
	LeftOut []LeftOut `json:"left_out,omitempty"`
	Files   []File    `json:"files"`
	// Stale is set when a file differs from what the cards give (any mode).
	Stale bool `json:"stale"`
}

// Export writes the repository's promoted and canonical cards, less expired
// and contested ones, into a target's rule files, keeping hand-written text
// byte for byte and removing generated files left empty. Every file is
// computed, from the cards alone, before any is written. Outside git, an
// unknown target, a link on the way, a malformed block or an oversized file
// is KindInvalid.
func (e *Exporter) Export(ctx context.Context, req Request) (Result, error) {
	t, ok := rulefiles.ParseTarget(req.Target)
	if req.Target == "" {
		return Result{}, hosterr.Invalid("to", "--to is required: use %s", targetList())
	}
	if !ok {
		return Result{}, hosterr.Invalid("to", "--to %q is not a target: use %s", req.Target, targetList())
	}
	if req.Budget < 0 {
		return Result{}, hosterr.Invalid("budget", "--budget %d is negative: pass a size in characters, or 0 for the default", req.Budget)
	}
	if req.Check && req.DryRun {
		return Result{}, hosterr.Invalid("check", "--check and --dry-run do not go together: --check reports stale files, --dry-run shows the new content")
	}
	if !e.cfg.Loc.InGit {
		return Result{}, hosterr.Invalid("cwd", "export writes the rule files of a repository, and %s is not inside a git checkout: run it in one, or pass --cwd", e.cfg.Loc.Dir)
	}
	root := e.cfg.Loc.Worktree
	cards, left, err := e.exportCards(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Target: string(t), Root: root, Cards: len(cards), LeftOut: left}
	type plan struct {
		file   File
		want   []byte
		exists bool
		remove bool
	}
	var plans []plan
	keep := map[string]bool{}
	for _, f := range rulefiles.Render(t, cards, rulefiles.Options{Budget: req.Budget}) {
		keep[f.Path] = true
		old, exists, err := readRepoFile(root, f.Path)
		if err != nil {
			return Result{}, err
		}
		want := []byte(f.Content)
		if f.Block {
			if want, err = rulefiles.Merge(f.Path, old, f.Content); err != nil {
				return Result{}, hosterr.Invalid("file", "%v", err)
			}
		}
		p := plan{file: File{Path: f.Path, Cards: f.Cards, Used: f.Used, Budget: f.Budget}, want: want, exists: exists}
		if exists && bytes.Equal(old, want) {
			p.file.Action = "unchanged"
		}
		plans = append(plans, p)
	}
	stale, err := ownedFiles(root, t, keep)
	if err != nil {
		return Result{}, err
	}
	for _, rel := range stale {
		plans = append(plans, plan{file: File{Path: rel}, remove: true})
	}
	for i := range plans {
		p := &plans[i]
		if p.file.Action == "unchanged" {
			continue
		}
		res.Stale = true
		switch {
		case req.Check:
			p.file.Action = "stale"
		case req.DryRun && p.remove:
			p.file.Action = "would_remove"
		case req.DryRun:
			p.file.Action, p.file.Content = "would_write", string(p.want)
		case p.remove:
			if err := repofs.Remove(root, filepath.FromSlash(p.file.Path)); err != nil {
				return res, repoFileError(p.file.Path, "remove", err)
			}
			p.file.Action = "removed"
		default:
			if err := writeRepoFile(root, p.file.Path, p.want, p.exists); err != nil {
				return res, err
			}
			p.file.Action = "written"
		}
	}
	for _, p := range plans {
		res.Files = append(res.Files, p.file)
	}
	return res, nil
}

// Targets are the values of Request.Target.
func Targets() []string {
	names := make([]string, len(rulefiles.Targets))
	for i, t := range rulefiles.Targets {
		names[i] = string(t)
	}
	return names
}

func targetList() string { return strings.Join(Targets(), ", ") }

// exportCards reads the repository's authoritative cards as rulefiles
// cards, with the ones left out and why.
func (e *Exporter) exportCards(ctx context.Context) ([]rulefiles.Card, []LeftOut, error) {
	repoID := anchor.ID(e.cfg.Loc.Identity(domain.AnchorRepo))
	rows, err := e.cfg.Store.ListCards(ctx, store.CardFilter{AnchorIDs: []string{repoID}, Statuses: domain.AuthoritativeStatuses()})
	if err != nil {
		return nil, nil, hosterr.Internal(err, "list the repository's cards")
	}
	ids := make([]string, len(rows))
	for i, c := range rows {
		ids[i] = c.ID
	}
	links, err := e.cfg.Store.LinksFor(ctx, ids)
	if err != nil {
		return nil, nil, hosterr.Internal(err, "read the cards' evidence links")
	}
	contests, err := e.cfg.OpenContests(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	today := e.cfg.Now().UTC().Format("2006-01-02")
	var out []rulefiles.Card
	var left []LeftOut
	for _, c := range rows {
		switch {
		case c.ExpiresAt != "" && c.ExpiresAt[:min(10, len(c.ExpiresAt))] < today:
			left = append(left, LeftOut{c.ID, "expired on " + c.ExpiresAt})
		case len(contests[c.ID]) > 0:
			ic := cardview.ContestOf(contests[c.ID])
			left = append(left, LeftOut{c.ID, "contested (" + strings.Join(ic.Kinds, ", ") + "): " + strings.Join(ic.Reasons, "; ") + "; resolve or demote it"})
		case contestedByLinks(links[c.ID]):
			left = append(left, LeftOut{c.ID, "contested: a counterexample is newer than its last verification; resolve or demote it"})
		default:
			out = append(out, exportCard(c, links[c.ID]))
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].ID < left[j].ID })
	return out, left, nil
}

// contestedByLinks: a counterexample linked after the newest verification.
func contestedByLinks(links []domain.Link) bool {
	lastCounter, lastVerify := "", ""
	for _, l := range links {
		switch l.Role {
		case domain.RoleCounterexample:
			lastCounter = max(lastCounter, l.CreatedAt)
		case domain.RoleVerification:
			lastVerify = max(lastVerify, l.CreatedAt)
		}
	}
	return lastCounter != "" && lastCounter >= lastVerify
}

// exportCard maps a card to what rendering needs, from the card alone.
func exportCard(c domain.Card, links []domain.Link) rulefiles.Card {
	r := domain.CountLinks(links)
	value := min(r.Verification, 5)*4 + min(r.Supporting, 5)*2 + min(r.Teaching, 5)
	if c.Status == domain.StatusCanonical {
		value += 20
	}
	switch c.Persistence {
	case domain.PersistenceFoundational:
		value += 20
	case domain.PersistenceProtected:
		value += 10
	}
	return rulefiles.Card{
		ID: c.ID, Statement: c.Statement, Content: c.Content, Tier: string(c.Tier), Status: string(c.Status),
		Field: c.Field, RenderPref: string(c.RenderPref),
		Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields,
		Core:  c.Persistence == domain.PersistenceFoundational || c.Tier == domain.TierDaoTian,
		Value: value,
	}
}

// readRepoFile reads rel below root without following links; exists is
// false for a missing file.
func readRepoFile(root, rel string) (data []byte, exists bool, err error) {
	f, err := repofs.OpenFile(root, filepath.FromSlash(rel), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, repoFileError(rel, "read", err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, rulefiles.MaxFileBytes+1))
	if err != nil {
		return nil, false, hosterr.Internal(err, "read %s", rel)
	}
	if len(data) > rulefiles.MaxFileBytes {
		return nil, false, hosterr.Invalid("file", "%s is over the 1 MiB limit of a rule file: agents read it on every request; shorten it, then export again", rel)
	}
	return data, true, nil
}

// writeRepoFile replaces rel below root atomically, creating it (and its
// directories) first when missing.
func writeRepoFile(root, rel string, data []byte, exists bool) error {
	native := filepath.FromSlash(rel)
	if !exists {
		f, err := repofs.OpenFile(root, native, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return repoFileError(rel, "create", err)
		}
		if err := f.Close(); err != nil {
			return hosterr.Internal(err, "create %s", rel)
		}
	}
	if err := repofs.WriteFileAtomic(root, native, data, 0o644); err != nil {
		return repoFileError(rel, "write", err)
	}
	return nil
}

func repoFileError(rel, op string, err error) error {
	if errors.Is(err, repofs.ErrLink) || errors.Is(err, repofs.ErrNotRegular) {
		return &hosterr.Error{Kind: hosterr.KindInvalid, Field: "file", Msg: fmt.Sprintf("%s %s", op, rel), Err: err}
	}
	return hosterr.Internal(err, "%s %s", op, rel)
}

// ownedFiles lists target t's generated files (palace-* holding its begin
// marker) that keep does not hold.
func ownedFiles(root string, t rulefiles.Target, keep map[string]bool) ([]string, error) {
	dir := rulefiles.OwnedDir(t)
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, hosterr.Internal(err, "list %s", dir)
	}
	var out []string
	for _, e := range entries {
		rel := dir + "/" + e.Name()
		if keep[rel] || !e.Type().IsRegular() || !rulefiles.OwnedName(t, e.Name()) {
			continue
		}
		data, _, err := readRepoFile(root, rel)
		if err != nil {
			return nil, err
		}
		if rulefiles.Generated(t, data) {
			out = append(out, rel)
		}
	}
	return out, nil
}
