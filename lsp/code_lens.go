package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/palacehq/palace/domain"
	"go.lsp.dev/protocol"
)

func (s *Server) codeLens(ctx context.Context, p *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	d, ws, ok, err := s.sourceDocument(ctx, p.TextDocument.URI, s.currentSettings().Hints.CodeLens)
	if !ok || err != nil {
		return nil, err
	}
	lens, err := s.sourceLens(ctx, ws, d)
	return lens, rpcError(err)
}

// sourceLens is one lens on the first line — `palace · dao 1 · shu 2 · qi 3`,
// the cards the context pack for this file renders, inline or as
// references, by tier (dao = dao_tian + dao_ren) — whose command returns
// the file's context pack. host counts (EditorViews.Lens); this renders.
func (s *Server) sourceLens(ctx context.Context, ws *workspace, d *document) ([]protocol.CodeLens, error) {
	if _, err := ws.sync(ctx); err != nil {
		return nil, err
	}
	v, err := ws.views.Lens(ctx, d.path, d.lang, s.currentSettings().Budget)
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("palace · dao %d · shu %d · qi %d", v.ByTier[domain.TierDaoTian]+v.ByTier[domain.TierDaoRen], v.ByTier[domain.TierShu], v.ByTier[domain.TierQi])
	arg, _ := json.Marshal(map[string]string{"uri": string(d.uri)})
	tip := fmt.Sprintf("The context pack for this file: %d inline, %s. Click to see it.", v.Inline, plural(v.Refs, "reference"))
	return []protocol.CodeLens{{
		Range:   protocol.Range{Start: protocol.Position{}, End: d.lineEnd(0)},
		Command: protocol.Command{Title: title, Tooltip: &tip, Command: cmdContext, Arguments: []protocol.LSPAny{arg}},
	}}, nil
}
