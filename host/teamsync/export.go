package teamsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/store"
)

// exportAll writes the planned cards' files (never through a link) and
// notes the rows to record; a file someone else changed is a finding.
func (p *plan) exportAll(ctx context.Context) error {
	if len(p.export) == 0 {
		return nil
	}
	if p.req.DryRun {
		for _, r := range p.export {
			p.rep.Exported = append(p.rep.Exported, r.CardID)
			p.rep.Files = append(p.rep.Files, FilePlan{Path: cardfile.Dir + "/" + cardfile.FileName(r.CardID), CardID: r.CardID,
				State: "export", Status: string(r.Status)})
		}
		return nil
	}
	ids := make([]string, len(p.export))
	for i, r := range p.export {
		ids[i] = r.CardID
	}
	files, err := p.h.renderIDs(ctx, ids)
	if err != nil {
		return err
	}
	format := p.git.formatOf(ctx, &p.format)()
	if err := repofs.MkdirAll(p.h.loc.Worktree, filepath.FromSlash(cardfile.Dir)); err != nil {
		return hosterr.Classify(err, "create "+cardfile.Dir)
	}
	type written struct {
		blob    string
		skipped *cardfile.Finding
		err     error
	}
	out := make([]written, len(p.export))
	eachParallel(len(p.export), func(i int) {
		r := p.export[i]
		rel := cardfile.Dir + "/" + cardfile.FileName(r.CardID)
		b := files[r.CardID]
		if len(b) > cardfile.MaxFileBytes {
			out[i].skipped = &cardfile.Finding{Finding: finding.Finding{Path: rel, Line: 1, Col: 1, Code: cardfile.CodeTooLarge, Severity: cardfile.SeverityWarning,
				Message: fmt.Sprintf("card %s with its evidence is %d bytes, over the %d-byte limit: not written", r.CardID, len(b), cardfile.MaxFileBytes)}, CardID: r.CardID}
			return
		}
		out[i].blob = blobID(format, b)
		cur, err := readWorktreeFile(p.h.loc.Worktree, rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			out[i].err = err
			return
		default:
			have := blobID(format, cur)
			if have == out[i].blob {
				return // the file holds these bytes already
			}
			if !p.ours(r, have) {
				out[i].skipped = &cardfile.Finding{Finding: finding.Finding{Path: rel, Line: 1, Col: 1, Code: cardfile.CodeUncommitted, Severity: cardfile.SeverityWarning,
					Message: "modified in the working tree and not committed: not overwritten; commit it (palace sync imports it after review) or restore it (git checkout) and sync again"}, CardID: r.CardID}
				return
			}
		}
		out[i].err = repofs.WriteFileAtomic(p.h.loc.Worktree, rel, b, 0o644)
	})
	for i, r := range p.export {
		w := out[i]
		switch {
		case w.err != nil:
			return hosterr.Classify(w.err, "write "+cardfile.Dir+"/"+cardfile.FileName(r.CardID))
		case w.skipped != nil:
			p.rep.Findings = append(p.rep.Findings, *w.skipped)
			continue
		}
		held := ""
		if r.File != nil && !r.Status.Authoritative() {
			held = r.File.Held
		}
		p.records = append(p.records, store.CardFile{CardID: r.CardID, AnchorID: p.repoID, Blob: w.blob, Base: p.head[r.CardID].blob,
			EventSeq: r.EventSeq, Held: held, SyncedAt: p.h.gate.Stamp()})
		p.rep.Exported = append(p.rep.Exported, r.CardID)
	}
	return nil
}

// ours reports whether a working-tree blob of r's file is one palace
// wrote or the committed one: nobody else's uncommitted edit.
func (p *plan) ours(r *store.SyncRow, blob string) bool {
	if r.File != nil && r.File.Blob == blob {
		return true
	}
	c, ok := p.head[r.CardID]
	return ok && c.blob == blob
}

// record writes the file rows the sync noted, in one transaction.
func (p *plan) record(ctx context.Context) error {
	if len(p.records) == 0 {
		return nil
	}
	err := p.h.store.Tx(ctx, func(tx *store.Tx) error {
		if _, err := p.h.ensureAnchor(ctx, tx, domain.AnchorRepo); err != nil {
			return err
		}
		return tx.PutCardFiles(ctx, p.records)
	})
	if err != nil {
		return hosterr.Classify(err, "record card files")
	}
	return nil
}

// worktree reports the card files git sees untracked or modified; those
// palace wrote unchanged count as pending a commit.
func (p *plan) worktree(ctx context.Context) {
	exporting := make(map[string]bool, len(p.export))
	for _, r := range p.export {
		exporting[r.CardID] = true
	}
	fs, pending := p.h.worktreeFindings(p.changes, p.git.formatOf(ctx, &p.format), func(id, blob string) bool {
		r := p.rows[id]
		return r != nil && r.File != nil && r.File.Blob == blob
	}, func(id string) bool { return exporting[id] })
	p.rep.Findings = append(p.rep.Findings, fs...)
	p.rep.Pending += pending
}

// Uncommitted lists the card files git sees untracked or modified as PC018
// warnings, but for those palace wrote unchanged. Nothing outside git.
func (h *Team) Uncommitted(ctx context.Context) ([]cardfile.Finding, error) {
	if !h.loc.InGit {
		return nil, nil
	}
	repoID := AnchorID(h.loc.Identity(domain.AnchorRepo))
	var files map[string]string
	if h.store != nil {
		rows, err := h.store.CardFiles(ctx, repoID)
		if err != nil {
			return nil, internal(err, "read card files")
		}
		files = make(map[string]string, len(rows))
		for _, r := range rows {
			files[r.CardID] = r.Blob
		}
	}
	g := git{dir: h.loc.Worktree}
	changes, err := g.changes(ctx)
	if err != nil {
		return nil, internal(err, "read the working tree of %s", cardfile.Dir)
	}
	var format string
	fs, _ := h.worktreeFindings(changes, g.formatOf(ctx, &format), func(id, blob string) bool { return files[id] == blob }, nil)
	return fs, nil
}

// worktreeFindings turns changes into PC018 warnings, less those ours says
// palace wrote (counted pending) and those skip names.
func (h *Team) worktreeFindings(changes []worktreeChange, format func() string, ours func(id, blob string) bool, skip func(id string) bool) ([]cardfile.Finding, int) {
	var out []cardfile.Finding
	pending := 0
	for _, c := range changes {
		name := strings.TrimPrefix(c.path, cardfile.Dir+"/")
		if strings.Contains(name, "/") || !strings.HasSuffix(name, cardfile.Ext) || strings.HasPrefix(name, ".") {
			continue
		}
		id := strings.TrimSuffix(name, cardfile.Ext)
		if skip != nil && skip(id) {
			continue
		}
		b, err := readWorktreeFile(h.loc.Worktree, c.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted here: the committed version is what counts
		}
		if err == nil && ours != nil && ours(id, blobID(format(), b)) {
			pending++
			continue
		}
		msg := "modified in the working tree and not committed: palace sync reads the committed version; commit the change to share it, or restore the file"
		switch {
		case err != nil:
			msg = fmt.Sprintf("cannot be read as a card file (%v): palace sync reads committed card files only", err)
		case c.untracked:
			msg = "not committed: palace sync imports committed card files only; review it and commit it to share it"
		}
		out = append(out, cardfile.Finding{Finding: finding.Finding{Path: c.path, Line: 1, Col: 1, Code: cardfile.CodeUncommitted, Severity: cardfile.SeverityWarning, Message: msg}, CardID: id})
	}
	return out, pending
}

// readWorktreeFile reads rel below worktree without following a link, at
// most one byte over the card file limit.
func readWorktreeFile(worktree, rel string) ([]byte, error) {
	f, err := repofs.OpenFile(worktree, filepath.FromSlash(rel), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(io.LimitReader(f, cardfile.MaxFileBytes+1))
	return buf.Bytes(), err
}

// renderIDs renders the card files of ids, reading on parallel connections
// and encoding on every core.
func (h *Team) renderIDs(ctx context.Context, ids []string) (map[string][]byte, error) {
	var (
		wg                sync.WaitGroup
		links             map[string][]domain.Link
		evidence          map[string]domain.Evidence
		events            map[string]domain.Event
		linkErr, eventErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		links, evidence, linkErr = h.citations(ctx, ids)
	}()
	go func() {
		defer wg.Done()
		events, eventErr = h.store.LastLifecycleEvents(ctx, ids)
	}()
	cards, err := h.cardsByIDs(ctx, ids)
	wg.Wait()
	switch {
	case err != nil:
		return nil, err
	case linkErr != nil:
		return nil, linkErr
	case eventErr != nil:
		return nil, internal(eventErr, "read card events")
	}
	origins, err := h.travelling(ctx, cards)
	if err != nil {
		return nil, err
	}
	enc := make([][]byte, len(cards))
	errs := make([]error, len(cards))
	eachParallel(len(cards), func(i int) {
		c := &cards[i]
		origin := ""
		if origins[c.OriginCard] {
			origin = c.OriginCard
		}
		enc[i], errs[i] = cardfile.Encode(toCardFile(*c, origin, links[c.ID], evidence, events[c.ID]))
	})
	out := make(map[string][]byte, len(cards))
	for i, c := range cards {
		if errs[i] != nil {
			return nil, internal(errs[i], "render card %s", c.ID)
		}
		out[c.ID] = enc[i]
	}
	return out, nil
}

// travelling says which origin cards travel in files too (this
// repository's): a file names its origin_card only then.
func (h *Team) travelling(ctx context.Context, cards []domain.Card) (map[string]bool, error) {
	var ids []string
	for _, c := range cards {
		if c.OriginCard != "" {
			ids = append(ids, c.OriginCard)
		}
	}
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	found, err := h.store.CardAnchors(ctx, ids)
	if err != nil {
		return nil, internal(err, "read origin cards")
	}
	for id, a := range found {
		out[id] = h.loc.KindOf(a.AnchorID) == domain.AnchorRepo
	}
	return out, nil
}

// cardsByIDs reads the cards of ids: one by one for a few (unknown is
// KindInvalid), else all of this repository's.
func (h *Team) cardsByIDs(ctx context.Context, ids []string) ([]domain.Card, error) {
	var cards []domain.Card
	if len(ids) <= 64 {
		for _, id := range ids {
			c, err := h.store.Card(ctx, id)
			if err != nil {
				return nil, gatekeep.NotFound(err, "card", id)
			}
			cards = append(cards, c)
		}
		return cards, nil
	}
	all, err := h.store.ListCards(ctx, store.CardFilter{AnchorIDs: []string{AnchorID(h.loc.Identity(domain.AnchorRepo))}})
	if err != nil {
		return nil, internal(err, "read cards")
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	cards = make([]domain.Card, 0, len(ids))
	for _, c := range all {
		if want[c.ID] {
			cards = append(cards, c)
		}
	}
	return cards, nil
}

// HeldCards lists the cards of anchorIDs (all when empty) whose file's
// claim the gate refused at import, with the reasons.
func (h *Team) HeldCards(ctx context.Context, anchorIDs []string) ([]HeldCard, error) {
	rows, err := h.store.HeldCardFiles(ctx)
	if err != nil {
		return nil, internal(err, "read held card files")
	}
	out := []HeldCard{}
	for _, r := range rows {
		if len(anchorIDs) > 0 && !slices.Contains(anchorIDs, r.AnchorID) {
			continue
		}
		claimed, reasons := DecodeHeld(r.Held)
		out = append(out, HeldCard{CardID: r.CardID, Path: cardfile.Dir + "/" + cardfile.FileName(r.CardID), Claimed: claimed, Reasons: reasons})
	}
	return out, nil
}

// DecodeHeld reads card_files.held: the claimed status and the reasons
// (the raw text as the one reason when not JSON).
func DecodeHeld(held string) (claimed string, reasons []string) {
	var rec heldRecord
	if err := json.Unmarshal([]byte(held), &rec); err != nil {
		return "", []string{held}
	}
	return rec.Claimed, rec.Reasons
}

// CardFile renders card id as palace sync writes it; unknown is
// KindInvalid.
func (h *Team) CardFile(ctx context.Context, id string) ([]byte, error) {
	files, err := h.renderIDs(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return files[id], nil
}

// AutoExportConfig is the git configuration key turning on the export of a
// card's file after a change (off by default).
const AutoExportConfig = "palace.autoExport"

// ExportNote reports the automatic export after a lifecycle change: the
// file written, or why none was.
type ExportNote struct {
	Path    string `json:"path,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// AutoExport writes card id's file after a change when AutoExportConfig is
// on and sync would write the card, never over someone else's change. Nil
// when nothing applies.
func (h *Team) AutoExport(ctx context.Context, id string) *ExportNote {
	if !h.loc.InGit || !autoExportOn(ctx, h.loc.Worktree) {
		return nil
	}
	repoID := AnchorID(h.loc.Identity(domain.AnchorRepo))
	c, err := h.store.Card(ctx, id)
	if err != nil || c.AnchorID != repoID {
		return nil
	}
	rows, err := h.store.SyncRows(ctx, repoID, domain.AuthoritativeStatuses())
	if err != nil {
		return &ExportNote{Skipped: err.Error()}
	}
	i := slices.IndexFunc(rows, func(r store.SyncRow) bool { return r.CardID == id })
	if i < 0 {
		return nil
	}
	if err := refuseLinkedCardDir(h.loc.Worktree); err != nil {
		return &ExportNote{Skipped: err.Error()}
	}
	rep := SyncReport{Dir: filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir))}
	p := &plan{h: h, rep: &rep, repoID: repoID, git: git{dir: h.loc.Worktree}, export: []*store.SyncRow{&rows[i]}, head: map[string]committedFile{}}
	if tree, err := p.git.tree(ctx, "HEAD"); err == nil {
		rel := cardfile.Dir + "/" + cardfile.FileName(id)
		if e, ok := tree[rel]; ok {
			p.head[id] = committedFile{id: id, path: rel, blob: e.blob}
		}
	}
	if err := p.exportAll(ctx); err != nil {
		return &ExportNote{Skipped: err.Error()}
	}
	if len(rep.Exported) == 0 {
		if len(rep.Findings) > 0 {
			return &ExportNote{Skipped: rep.Findings[0].Path + ": " + rep.Findings[0].Message}
		}
		return &ExportNote{Skipped: "nothing written"}
	}
	if err := p.record(ctx); err != nil {
		return &ExportNote{Skipped: err.Error()}
	}
	return &ExportNote{Path: cardfile.Dir + "/" + cardfile.FileName(id)}
}

func autoExportOn(ctx context.Context, worktree string) bool {
	out, err := exec.CommandContext(ctx, "git", "-C", worktree, "config", "--type=bool", "--get", AutoExportConfig).Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
