package teamsync

import (
	"context"
	"maps"

	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/store"
)

// SyncRequest asks for one sync of this checkout's card files with the
// palace.
type SyncRequest struct {
	// Share lists candidate cards of this repository to write as files too
	// (authoritative repo cards are written without asking).
	Share []string `json:"share,omitempty"`
	// Resolve settles conflicts, card id → "file" (take the committed
	// file) or "palace" (overwrite the file with this palace's card).
	Resolve map[string]string `json:"resolve,omitempty"`
	// DryRun reports what a sync would do, per file with the gate's
	// answer on each claim, and writes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Rewrite renders every covered card's file again, removed ones too,
	// writing those whose bytes differ; changed committed files are still
	// imported or reported as conflicts.
	Rewrite bool `json:"rewrite,omitempty"`
}

// SyncReport says what a sync did (or, dry, would do).
type SyncReport struct {
	// Dir is the checkout's card directory.
	Dir string `json:"dir"`
	// Commit is the checkout's HEAD, the tree card files are read from.
	Commit string `json:"commit,omitempty"`
	// Upstream is the upstream default branch whose history counts as
	// reviewed ("" when the checkout has none).
	Upstream string   `json:"upstream"`
	DryRun   bool     `json:"dry_run,omitempty"`
	Exported []string `json:"exported"`
	Imported []string `json:"imported"`
	// Held are committed files whose claim the gate refused.
	Held      []HeldCard     `json:"held"`
	Conflicts []SyncConflict `json:"conflicts"`
	// Removed are cards whose committed file is gone from HEAD: kept, and
	// not written again until they change here.
	Removed []string `json:"removed"`
	// Findings are problems of card files: a file with an error is skipped
	// (nothing of it is imported), the rest of the sync goes on.
	Findings  []cardfile.Finding `json:"findings"`
	Unchanged int                `json:"unchanged"`
	// Pending counts card files palace wrote that are not committed yet:
	// commit them to share them.
	Pending int `json:"pending"`
	// WorktreeCards counts this worktree's cards, which never leave the
	// machine: publish one to the repository to share it.
	WorktreeCards int `json:"worktree_cards"`
	// Files says, per committed file a sync looks at, what it does with it
	// (filled on a dry run).
	Files []FilePlan `json:"files,omitempty"`
	// NearDuplicates name, per imported card, the live repository cards it
	// nearly repeats (warnings, filled by the host).
	NearDuplicates []SyncNear `json:"near_duplicates,omitempty"`
}

// SyncNear is an imported card and the cards it nearly repeats.
type SyncNear struct {
	CardID         string         `json:"card_id"`
	NearDuplicates []neardup.Card `json:"near_duplicates"`
}

// FilePlan is what a sync does with one card file.
type FilePlan struct {
	Path   string `json:"path"`
	CardID string `json:"card_id"`
	// State is new, changed, unchanged, held, conflict, export, removed
	// or skipped (a file with problems).
	State string `json:"state"`
	// Claimed is the status the committed file claims; Status the status
	// the card has after the sync.
	Claimed string `json:"claimed_status,omitempty"`
	Status  string `json:"status,omitempty"`
	// Commit is the commit that last changed the file and Reviewed whether
	// it is on the upstream default branch.
	Commit   string `json:"commit,omitempty"`
	Reviewed bool   `json:"on_default_branch"`
	// Gate is the gate's answer on the file's claim, when it was asked.
	Gate *GateAnswer `json:"gate,omitempty"`
}

// GateAnswer is the gate's answer on a file's claim.
type GateAnswer struct {
	Allow   bool     `json:"allow"`
	Reasons []string `json:"reasons"`
}

// HeldCard is a committed card file whose claim the gate refused.
type HeldCard struct {
	CardID  string   `json:"card_id"`
	Path    string   `json:"path"`
	Line    int      `json:"line"`
	Claimed string   `json:"claimed_status"`
	Reasons []string `json:"reasons"`
}

// SyncConflict is a card changed both in its committed file and here since
// the last sync: nothing is merged; `palace sync --resolve ID=file|palace`
// picks one.
type SyncConflict struct {
	CardID string `json:"card_id"`
	Path   string `json:"path"`
	// File is the committed file; Palace the file this palace would
	// write; Diff a unified diff from File to Palace.
	File   string `json:"file"`
	Palace string `json:"palace"`
	Diff   string `json:"diff"`
}

// committedFile is a card file of HEAD's tree.
type committedFile struct {
	id, path, blob string
}

// Sync exports this repository's cards changed in the palace to
// <worktree>/.palace/cards/ and imports the card files changed in HEAD's
// tree (never the working tree: an uncommitted file is a finding). Claims
// of authority go to the gate through authority.Door.DecideImport; a card
// changed on both sides is a conflict, left alone. A file with problems is
// skipped with a finding and the sync goes on. Worktree and global cards
// are never written. Human mode only.
func (h *Team) Sync(ctx context.Context, req SyncRequest) (SyncReport, error) {
	rep := SyncReport{Exported: []string{}, Imported: []string{}, Held: []HeldCard{}, Conflicts: []SyncConflict{},
		Removed: []string{}, Findings: []cardfile.Finding{}, DryRun: req.DryRun}
	if err := h.gate.RequireHuman("sync"); err != nil {
		return rep, err
	}
	if !h.loc.InGit {
		return rep, invalid("--cwd", "%s is not inside a git checkout: card files live in a repository's .palace/cards; run palace sync in a checkout", h.loc.Dir)
	}
	for id, side := range req.Resolve {
		if side != "file" && side != "palace" {
			return rep, invalid("resolve", "--resolve %s=%s: say file (take the file) or palace (keep this palace's card)", id, side)
		}
	}
	rep.Dir = filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir))
	if err := refuseLinkedCardDir(h.loc.Worktree); err != nil {
		return rep, err
	}
	repoID := AnchorID(h.loc.Identity(domain.AnchorRepo))
	p := &plan{h: h, rep: &rep, req: req, repoID: repoID, git: git{dir: h.loc.Worktree}}
	// git and the palace are read at the same time: git's answers are
	// most of a sync with nothing to do.
	var gits errgroup.Group
	gits.Go(func() error { return p.readHead(ctx) })
	gits.Go(func() error {
		var err error
		if p.changes, err = p.git.changes(ctx); err != nil {
			return internal(err, "read the working tree of %s", cardfile.Dir)
		}
		return nil
	})
	mark, err := h.store.EventMark(ctx)
	if err != nil {
		gits.Wait() //nolint:errcheck // the palace's error is the one to report
		return rep, internal(err, "read cards to sync")
	}
	rows, fast, err := h.syncRows(ctx, repoID, mark, req)
	if err == nil {
		err = h.share(ctx, req.Share, repoID, p.index(&rows), &rows)
	}
	if gerr := gits.Wait(); err == nil {
		err = gerr
	}
	if err != nil {
		return rep, err
	}
	p.rows = p.index(&rows)
	if err := p.classify(ctx, rows); err != nil {
		return rep, err
	}
	p.worktree(ctx)
	if err := p.importAll(ctx); err != nil {
		return rep, err
	}
	if err := p.exportAll(ctx); err != nil {
		return rep, err
	}
	if !req.DryRun {
		if err := p.record(ctx); err != nil {
			return rep, err
		}
		// Nothing left pending: until the next card event, a sync reads
		// card_files alone instead of every card.
		settled := len(rep.Imported) == 0 && len(rep.Conflicts) == 0 && !cardfile.HasErrors(rep.Findings) && len(rep.Held) == 0
		switch {
		case settled && (!fast || len(rep.Exported) > 0) && len(rows) > 0:
			err = h.store.SetSyncMark(ctx, repoID, mark)
		case !settled:
			err = h.store.SetSyncMark(ctx, repoID, -1)
		}
		if err != nil {
			return rep, internal(err, "record the sync")
		}
	}
	if n, err := h.store.CountCardsAt(ctx, AnchorID(h.loc.Identity(domain.AnchorWorktree))); err == nil {
		rep.WorktreeCards = n
	}
	slices.Sort(rep.Exported)
	slices.Sort(rep.Imported)
	sortFindings(rep.Findings)
	return rep, nil
}

// syncRows lists the cards a sync looks at: only the card_files rows when
// the last sync left nothing pending and no card event happened since
// mark, else every authoritative or tracked repository card.
func (h *Team) syncRows(ctx context.Context, repoID string, mark int64, req SyncRequest) ([]store.SyncRow, bool, error) {
	last, ok, err := h.store.SyncMark(ctx, repoID)
	if err != nil {
		return nil, false, internal(err, "read cards to sync")
	}
	if ok && last == mark && len(req.Share) == 0 && len(req.Resolve) == 0 && !req.Rewrite {
		files, err := h.store.CardFiles(ctx, repoID)
		if err != nil {
			return nil, false, internal(err, "read cards to sync")
		}
		rows := make([]store.SyncRow, len(files))
		for i := range files {
			rows[i] = store.SyncRow{CardID: files[i].CardID, EventSeq: files[i].EventSeq, File: &files[i]}
		}
		return rows, true, nil
	}
	rows, err := h.store.SyncRows(ctx, repoID, domain.AuthoritativeStatuses())
	if err != nil {
		return nil, false, internal(err, "read cards to sync")
	}
	return rows, false, nil
}

// index maps the rows by card id.
func (p *plan) index(rows *[]store.SyncRow) map[string]*store.SyncRow {
	byID := make(map[string]*store.SyncRow, len(*rows))
	for i := range *rows {
		byID[(*rows)[i].CardID] = &(*rows)[i]
	}
	return byID
}

// share marks candidate cards to be written as files.
func (h *Team) share(ctx context.Context, ids []string, repoID string, byID map[string]*store.SyncRow, rows *[]store.SyncRow) error {
	for _, id := range ids {
		if _, ok := byID[id]; ok {
			continue
		}
		c, err := h.store.Card(ctx, id)
		if err != nil {
			return gatekeep.NotFound(err, "card", id)
		}
		if c.AnchorID != repoID {
			switch h.loc.KindOf(c.AnchorID) {
			case domain.AnchorWorktree:
				return invalid("share", "card %s is anchored to this worktree, and worktree cards never leave the machine: publish it to the repository first (palace publish %s --to repo)", id, id)
			case domain.AnchorGlobal:
				return invalid("share", "card %s is global, and global cards are personal: only this repository's cards are shared", id)
			}
			return invalid("share", "card %s belongs to another repository: share it from a checkout of its own", id)
		}
		*rows = append(*rows, store.SyncRow{CardID: c.ID, Status: c.Status, EventSeq: 0})
		byID[id] = &(*rows)[len(*rows)-1]
	}
	return nil
}

// refuseLinkedCardDir refuses a checkout whose .palace or .palace/cards is
// a symbolic link, so card files are never written outside it.
func refuseLinkedCardDir(worktree string) error {
	path := worktree
	for _, c := range strings.Split(cardfile.Dir, "/") {
		path = filepath.Join(path, c)
		fi, err := os.Lstat(path)
		if err != nil {
			return nil // missing: created as a directory, or nothing to read
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return &Error{Kind: KindInvalid, Field: "card files", Msg: "use " + cardfile.Dir, Err: &repofs.LinkError{Path: path, Target: target}}
		}
	}
	return nil
}

// plan is one sync: what it reads of git and the palace, and what it does
// with each card.
type plan struct {
	h      *Team
	rep    *SyncReport
	req    SyncRequest
	repoID string
	git    git
	format string // the repository's object format, read when needed
	rows   map[string]*store.SyncRow
	// changes are the card files git sees changed in the working tree.
	changes []worktreeChange

	head map[string]committedFile // HEAD's card files by id
	// imports are the committed files to read into the palace, in id
	// order; conflicts the files to compare with the palace's rendering.
	imports   []committedFile
	conflicts []committedFile
	export    []*store.SyncRow
	// records are card_files rows to write as they are (a base that moved,
	// a file both sides changed the same way).
	records []store.CardFile
	// known holds every card id of HEAD's tree: an origin_card may name one.
	known map[string]bool
}

// readHead lists HEAD's card files. An entry that is not a regular file
// (a link, a submodule) or not named like a card is a finding.
func (p *plan) readHead(ctx context.Context) error {
	p.head, p.known = map[string]committedFile{}, map[string]bool{}
	p.rep.Commit = p.git.head(ctx)
	if p.rep.Commit == "" {
		return nil
	}
	tree, err := p.git.tree(ctx, "HEAD")
	if err != nil {
		return internal(err, "read %s at HEAD", cardfile.Dir)
	}
	for path, e := range tree {
		name := strings.TrimPrefix(path, cardfile.Dir+"/")
		if strings.Contains(name, "/") || !strings.HasSuffix(name, cardfile.Ext) || strings.HasPrefix(name, ".") {
			continue
		}
		id := strings.TrimSuffix(name, cardfile.Ext)
		if e.mode != "100644" && e.mode != "100755" {
			p.rep.Findings = append(p.rep.Findings, cardfile.Finding{Finding: finding.Finding{Path: path, Line: 1, Col: 1, Code: cardfile.CodeNotRegular,
				Severity: cardfile.SeverityWarning,
				Message:  fmt.Sprintf("committed as git mode %s, not a regular file: ignored; commit the card file itself", e.mode)}, CardID: id})
			continue
		}
		p.head[id] = committedFile{id: id, path: path, blob: e.blob}
		p.known[id] = true
	}
	return nil
}

// changedHere reports whether the card changed in this palace since its
// file was last written or read.
func changedHere(r *store.SyncRow) bool {
	return r.File == nil || r.File.Blob == "" || r.EventSeq > r.File.EventSeq
}

// classify decides, per card and per committed file, what the sync does.
func (p *plan) classify(ctx context.Context, rows []store.SyncRow) error {
	var fresh []committedFile
	for _, id := range slices.Sorted(maps.Keys(p.head)) {
		f := p.head[id]
		if r := p.rows[id]; r != nil {
			p.existing(r, f)
		} else {
			fresh = append(fresh, f)
		}
	}
	for i := range rows {
		r := &rows[i]
		if _, ok := p.head[r.CardID]; ok {
			continue
		}
		switch {
		case r.File == nil || r.File.Blob == "" || changedHere(r) || p.req.Rewrite:
			if r.File != nil && r.File.Held != "" && !r.Status.Authoritative() && r.Status != "" {
				p.rep.Unchanged++
				continue
			}
			p.export = append(p.export, r)
		case r.File.Base != "":
			p.rep.Removed = append(p.rep.Removed, r.CardID)
		default:
			p.rep.Pending++
		}
	}
	return p.freshIDs(ctx, fresh)
}

// existing decides what to do with committed file f of a card this sync
// covers.
func (p *plan) existing(r *store.SyncRow, f committedFile) {
	F, side := r.File, p.req.Resolve[r.CardID]
	switch {
	case side == "palace":
		p.export = append(p.export, r)
	case F != nil && (f.blob == F.Base || f.blob == F.Blob) && side != "file":
		if f.blob == F.Blob && F.Base != f.blob {
			rec := *F
			rec.Base = f.blob
			p.records = append(p.records, rec)
		}
		held := F.Held != ""
		switch {
		case held && !changedHere(r) && f.blob == F.Blob:
			// A held claim is asked again: the commit may have reached
			// the upstream default branch since.
			p.imports = append(p.imports, f)
		case changedHere(r) || p.req.Rewrite:
			if held && !r.Status.Authoritative() {
				// Writing the candidate back would undo the team's claim.
				p.rep.Unchanged++
				return
			}
			p.export = append(p.export, r)
		default:
			p.rep.Unchanged++
		}
	case side == "file" || (F != nil && F.Blob != "" && !changedHere(r)):
		p.imports = append(p.imports, f)
	default:
		p.conflicts = append(p.conflicts, f)
	}
}

// freshIDs looks up the ids of committed files no covered card has. An id
// held at another anchor is a finding (file skipped); one this repository
// holds without a file row is a conflict unless both sides are equal.
func (p *plan) freshIDs(ctx context.Context, fresh []committedFile) error {
	if len(fresh) == 0 {
		return nil
	}
	ids := make([]string, len(fresh))
	for i, f := range fresh {
		ids[i] = f.id
	}
	found, err := p.h.store.CardAnchors(ctx, ids)
	if err != nil {
		return internal(err, "read cards")
	}
	for _, f := range fresh {
		a, ok := found[f.id]
		switch {
		case !ok:
			p.imports = append(p.imports, f)
		case a.AnchorID == p.repoID:
			p.rows[f.id] = &store.SyncRow{CardID: f.id, Status: a.Status}
			p.conflicts = append(p.conflicts, f)
		default:
			where := p.h.anchorRef(ctx, a.AnchorID).Kind
			p.skip(f, cardfile.Finding{Finding: finding.Finding{Path: f.path, Line: 1, Col: 1, Code: cardfile.CodeLocal, Severity: cardfile.SeverityError,
				Message: fmt.Sprintf("card %s exists in this palace at the %s anchor, not this repository's: give the file's card a new id, or remove the file", f.id, where)}, CardID: f.id})
		}
	}
	return nil
}

// skip reports a committed file that is not imported, with why.
func (p *plan) skip(f committedFile, fs ...cardfile.Finding) {
	p.rep.Findings = append(p.rep.Findings, fs...)
	if p.req.DryRun {
		p.rep.Files = append(p.rep.Files, FilePlan{Path: f.path, CardID: f.id, State: "skipped"})
	}
}
