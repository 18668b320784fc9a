package host

import (
	"context"

	"github.com/palacehq/palace/cardfile"

	"github.com/palacehq/palace/host/teamsync"
)

// Team memory in git is package teamsync's; host names its types under
// their old names and lends it the store, the workspace, the gate and how
// anchors are written.

func (h *Host) team() *teamsync.Team {
	return teamsync.New(teamsync.Config{Store: h.store, Loc: h.loc, Gate: h.gatekeeper(), EnsureAnchor: h.ensureAnchor, Door: h.door()})
}

// Sync exports this repository's changed cards to its card files and
// imports the files that changed there (see teamsync.Team.Sync). Human
// mode only.
func (h *Host) Sync(ctx context.Context, req teamsync.SyncRequest) (teamsync.SyncReport, error) {
	rep, err := h.team().Sync(ctx, req)
	// Imported cards are compared with the cards that were here: a first
	// sync of a directory would cost the square of its size.
	if err != nil || len(rep.Imported) == 0 {
		return rep, err
	}
	near, err := h.nearNew(ctx, rep.Imported, false)
	if err != nil {
		return rep, err
	}
	for _, id := range rep.Imported {
		if n := near[id]; len(n) > 0 {
			rep.NearDuplicates = append(rep.NearDuplicates, teamsync.SyncNear{CardID: id, NearDuplicates: n})
		}
	}
	return rep, nil
}

// HeldCards lists the cards of anchorIDs (every anchor when empty) whose
// file claimed promoted or canonical and was held back as a candidate by
// the gate at import, with the gate's reasons.
func (h *Host) HeldCards(ctx context.Context, anchorIDs []string) ([]teamsync.HeldCard, error) {
	return h.team().HeldCards(ctx, anchorIDs)
}

// CardFile renders card id as the file palace sync writes for it.
func (h *Host) CardFile(ctx context.Context, id string) ([]byte, error) {
	return h.team().CardFile(ctx, id)
}

// autoExport writes card id's file after a lifecycle change when the
// checkout asks for it (see teamsync.Team.AutoExport); nil when nothing
// applies.
func (h *Host) autoExport(ctx context.Context, id string) *teamsync.ExportNote {
	return h.team().AutoExport(ctx, id)
}

// CheckCards is the pre-commit check of card files (see
// teamsync.Team.CheckCards). It opens no database and creates no palace
// home; it loads the policies a palace at opts would.
func CheckCards(ctx context.Context, opts Options, req teamsync.CardsCheckRequest) (teamsync.CardsCheckReport, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return teamsync.CardsCheckReport{Checked: []string{}, Findings: []cardfile.Finding{}, Staged: req.Staged}, err
	}
	return h.team().CheckCards(ctx, req)
}

// CheckCardFile checks the text of one card file as `palace cards check`
// checks a file (see teamsync.Team.CheckCardBuffer), for an editor's
// buffer: path is the file's path, content what the editor holds.
func (h *Host) CheckCardFile(ctx context.Context, path string, content []byte) []cardfile.Finding {
	return h.team().CheckCardBuffer(ctx, path, content)
}
