package lsp

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// maxHintLabel is the longest statement an inlay hint label shows (runes).
const maxHintLabel = 60

// inlayHint puts `‹qi› statement` at the end of each line in r that a
// card's trigger pattern matches; the tooltip has the full statement, the
// citations and the card id.
func (s *Server) inlayHint(ctx context.Context, p *protocol.InlayHintParams) ([]protocol.InlayHint, error) {
	d, ws, matches, ok, err := s.sourceDocument(ctx, p.TextDocument.URI, s.currentSettings().Hints.InlayHints)
	if !ok {
		return nil, err
	}
	out := []protocol.InlayHint{}
	yes := true
	for _, m := range matches {
		if line := uint32(m.Line - 1); line < p.Range.Start.Line || line > p.Range.End.Line {
			continue
		}
		c, err := ws.views.Card(ctx, m.Card.ID)
		if err != nil {
			return nil, err
		}
		label := m.Card.Label()
		if m.Stale != nil {
			label = "stale " + label
		}
		if m.Contest != nil {
			label = "contested " + label
		}
		out = append(out, protocol.InlayHint{
			Position:    d.lineEnd(m.Line - 1),
			Label:       protocol.String(shorten(label, maxHintLabel)),
			Tooltip:     &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: hintTooltip(m, c)},
			PaddingLeft: &yes,
		})
	}
	return out, nil
}

func hintTooltip(m pack.TriggerMatch, c host.Card) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** ‹%s› %s · %s\n\n", mdText(c.Statement), c.Tier, stateText(string(c.Status), m.Contest != nil, m.Stale != nil, ""), c.Anchor.Kind)
	if m.Contest != nil {
		fmt.Fprintf(&b, "**Contested** (%s): do not apply it until a human demotes or resolves it.\n\n", contestMarkdown(m.Contest))
	}
	if m.Stale != nil {
		fmt.Fprintf(&b, "**Stale**: %s — %s.\n\n", mdText(m.Stale.Reason), staleRepair(c.ID, m.Stale))
	}
	if len(c.Links) > 0 {
		b.WriteString("Citations:\n")
		for _, l := range c.Links {
			fmt.Fprintf(&b, "- %s `%s`", l.Role, l.EvidenceID)
			if l.SourceRef != "" {
				fmt.Fprintf(&b, " — %s", mdText(l.SourceRef))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Card `%s` · trigger `%s`", c.ID, m.Pattern)
	return b.String()
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
