package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// codeLens is one lens on the first line — `palace · dao 1 · shu 2 · qi
// 3`, every card the editor shows for this file, each once, by tier (dao =
// dao_tian + dao_ren), and how many are contested or stale — whose command
// returns the file's context pack. host counts (EditorViews.Lens).
func (s *Server) codeLens(ctx context.Context, p *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	d, ws, matches, ok, err := s.sourceDocument(ctx, p.TextDocument.URI, s.currentSettings().Hints.CodeLens)
	if !ok {
		return nil, err
	}
	v, err := ws.views.Lens(ctx, host.LensRequest{File: d.path, Language: d.lang, Budget: s.currentSettings().Budget, Matches: matches})
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("palace · dao %d · shu %d · qi %d", v.ByTier[domain.TierDaoTian]+v.ByTier[domain.TierDaoRen], v.ByTier[domain.TierShu], v.ByTier[domain.TierQi])
	if v.Contested > 0 {
		title += fmt.Sprintf(" · %d contested", v.Contested)
	}
	if v.Stale > 0 {
		title += fmt.Sprintf(" · %d stale", v.Stale)
	}
	arg, _ := json.Marshal(map[string]string{"uri": string(d.uri)})
	tip := fmt.Sprintf("The context pack for this file: %d inline, %s.", v.Inline, plural(v.Refs, "reference"))
	if v.Triggered > 0 {
		tip += fmt.Sprintf(" %s triggered on its lines.", plural(v.Triggered, "more card"))
	}
	tip += " Click to see the pack."
	return []protocol.CodeLens{{
		Range:   protocol.Range{Start: protocol.Position{}, End: d.lineEnd(0)},
		Command: protocol.Command{Title: title, Tooltip: &tip, Command: cmdContext, Arguments: []protocol.LSPAny{arg}},
	}}, nil
}
