package teamsync

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"
)

// AutoExportConfig is the git configuration key that turns on the
// automatic export of a card's file after a lifecycle change made in the
// checkout: `git config palace.autoExport true`. Off by default: writing
// into a checkout is something a team opts into.
const AutoExportConfig = "palace.autoExport"

// ExportNote reports the automatic export after a lifecycle change: the
// file written, or why none was.
type ExportNote struct {
	Path    string `json:"path,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// AutoExport writes card id's file after a lifecycle change when the
// checkout asks for it (AutoExportConfig) and the card is one sync would
// write (this repository's, authoritative or already shared). A file
// changed in the checkout since the last sync is left alone: that is a
// conflict for palace sync to show. Nil when nothing applies.
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
	for i := range rows {
		r := &rows[i]
		if r.CardID != id {
			continue
		}
		dir := filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir))
		if err := refuseLinkedCardDir(h.loc.Worktree); err != nil {
			return &ExportNote{Skipped: err.Error()}
		}
		rel := cardfile.Dir + "/" + cardfile.FileName(id)
		f := &syncFile{id: id, path: rel, abs: filepath.Join(dir, cardfile.FileName(id))}
		if err := f.read(); err == nil && r.File != nil && r.File.FileSHA256 != "" && f.sha != r.File.FileSHA256 {
			return &ExportNote{Skipped: rel + " changed in the checkout since the last sync: run palace sync to see both versions"}
		} else if err != nil && !os.IsNotExist(err) {
			return &ExportNote{Skipped: err.Error()}
		}
		rep := SyncReport{Dir: dir}
		p := plan{h: h, rep: &rep, repoID: repoID, export: []*store.SyncRow{r}}
		if err := p.exportAll(ctx); err != nil {
			return &ExportNote{Skipped: err.Error()}
		}
		if len(rep.Exported) == 0 {
			return &ExportNote{Skipped: rel + " is over the size limit for a card file"}
		}
		return &ExportNote{Path: rel}
	}
	return nil
}

func autoExportOn(ctx context.Context, worktree string) bool {
	out, err := exec.CommandContext(ctx, "git", "-C", worktree, "config", "--type=bool", "--get", AutoExportConfig).Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}
