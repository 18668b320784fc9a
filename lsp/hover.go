package lsp

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/host/cardview"

	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/staleness"
)

// hover shows, first, the cards triggered at the cursor — trigger
// patterns matching this line, intent tags and tool needs equal to the word
// — then the cards that apply to the file by the scope and lanes policies,
// grouped by tier, and the reference-only ones as a count. host composes
// the view (EditorViews.Hover); this renders it.
func (s *Server) hover(ctx context.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	d, ws, matches, ok, err := s.sourceDocument(ctx, p.TextDocument.URI, s.currentSettings().Hints.Hover)
	if !ok {
		return nil, err
	}
	line := int(p.Position.Line)
	text := d.line(line)
	wordStart, wordEnd := wordAt(text, utf16ToByte(text, int(p.Position.Character)))
	word := text[wordStart:wordEnd]
	var set *pack.TriggerSet
	if word != "" {
		if set, _, err = ws.triggerSet(ctx); err != nil {
			return nil, err
		}
	}
	view, err := ws.views.Hover(ctx, host.HoverRequest{
		File: d.path, Language: d.lang, Budget: s.currentSettings().Budget,
		Line: line + 1, Word: word, Matches: matches, Triggers: set,
	})
	if err != nil {
		return nil, err
	}
	md := hoverMarkdown(view)
	if md == "" {
		return nil, nil
	}
	h := &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md}}
	if !s.clientCapabilities().markdown {
		h.Contents = &protocol.MarkupContent{Kind: protocol.MarkupKindPlainText, Value: plainText.Replace(md)}
	}
	if wordEnd > wordStart {
		h.Range = &protocol.Range{Start: d.position(line, wordStart), End: d.position(line, wordEnd)}
	}
	return h, nil
}

// hoverMarkdown renders a hover view; "" when there is nothing to show.
func hoverMarkdown(v host.HoverView) string {
	var b strings.Builder
	if len(v.Triggered) > 0 {
		b.WriteString("**palace · triggered here**\n\n")
		for _, c := range v.Triggered {
			why := "pattern `" + c.Pattern + "` matches this line"
			if c.Pattern == "" {
				why = "`" + c.Tag + "` is one of its intents or tool needs"
			}
			fmt.Fprintf(&b, "- %s — %s · %s · %s · `%s`  \n  _%s_\n", mdText(c.Label()), stateText(string(c.Status), c.Contest != nil, c.Stale != nil, "**"), c.AnchorKind, countsText(c.Counts), c.ID, why)
			warnings(&b, c)
		}
	}
	if len(v.Applies) > 0 {
		para(&b)
		fmt.Fprintf(&b, "**palace · applies to %s**\n", mdText(v.File))
		for _, g := range v.Applies {
			fmt.Fprintf(&b, "\n*%s*\n", g.Tier)
			for _, c := range g.Cards {
				fmt.Fprintf(&b, "- %s — %s · %s · %s · `%s`\n", mdText(c.Statement), stateText(string(c.Status), c.Contest != nil, c.Stale != nil, "**"), c.AnchorKind, countsText(c.Counts), c.ID)
				warnings(&b, c)
			}
		}
	}
	if len(v.Flagged) > 0 {
		para(&b)
		b.WriteString("**palace · needs a person** (shown as references)\n\n")
		for _, c := range v.Flagged {
			fmt.Fprintf(&b, "- %s — %s · %s · `%s`\n", mdText(c.Label()), stateText(string(c.Status), c.Contest != nil, c.Stale != nil, "**"), c.AnchorKind, c.ID)
			warnings(&b, c)
		}
	}
	if v.Refs+v.Trimmed+v.Cooled > 0 {
		para(&b)
		var parts []string
		if v.Refs > 0 {
			parts = append(parts, plural(v.Refs, "more card")+" as references")
		}
		if v.Trimmed > 0 {
			parts = append(parts, plural(v.Trimmed, "card")+" left out by the budget")
		}
		if v.Cooled > 0 {
			parts = append(parts, plural(v.Cooled, "cooled card")+" (inspector only)")
		}
		fmt.Fprintf(&b, "_%s: run `palace context --file %s --explain` or the palace.context command to see them._\n", strings.Join(parts, ", "), v.File)
	}
	return b.String()
}

// para starts a paragraph after what b holds.
func para(b *strings.Builder) {
	if b.Len() > 0 {
		b.WriteString("\n")
	}
}

// stateText is a card's status as an editor names it: "promoted", or
// "promoted · contested · stale" when a warning holds, each warning
// between the marks em.
func stateText(status string, contested, stale bool, em string) string {
	if contested {
		status += " · " + em + "contested" + em
	}
	if stale {
		status += " · " + em + "stale" + em
	}
	return status
}

// warnings writes the warning lines of a contested or stale card under
// its line.
func warnings(b *strings.Builder, c host.HoverCard) {
	if c.Contest != nil {
		fmt.Fprintf(b, "  **contested** (%s): do not apply it until a human demotes or resolves it\n", contestMarkdown(c.Contest))
	}
	if c.Stale != nil {
		fmt.Fprintf(b, "  **stale**: %s — %s\n", mdText(c.Stale.Reason), staleRepair(c.ID, c.Stale))
	}
}

// staleRepair is the short repair of a stale card.
func staleRepair(id string, st *staleness.Stale) string {
	if len(st.Citations) > 0 {
		return "re-verify it (`palace verify " + id + "`) or demote it"
	}
	return "confirm it still holds and set the next review date"
}

// contestMarkdown names what contests a card: its kinds, the contradicting
// evidence ids as code with their sources, and what a person said.
func contestMarkdown(c *cardview.ItemContest) string {
	parts := []string{mdText(strings.Join(c.Kinds, ", "))}
	for _, cit := range c.Citations {
		s := "`" + cit.EvidenceID + "`"
		if cit.SourceRef != "" {
			s += " " + mdText(cit.SourceRef)
		}
		parts = append(parts, s)
	}
	for _, r := range c.Reasons {
		parts = append(parts, mdText(r))
	}
	return strings.Join(parts, " · ")
}

// plainText strips the Markdown of a hover for clients that cannot render it.
var plainText = strings.NewReplacer("**", "", "`", "", "\\_", "_", "\\*", "*", "\\`", "`", "\\[", "[", "\\]", "]", "\\\\", "\\", "&lt;", "<")

// wordAt returns the byte range of the word (letters, digits, _ . -) around
// byte offset i of line.
func wordAt(line string, i int) (start, end int) {
	isWord := func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'
	}
	start, end = i, i
	for start > 0 {
		r, n := utf8.DecodeLastRuneInString(line[:start])
		if !isWord(r) {
			break
		}
		start -= n
	}
	for end < len(line) {
		r, n := utf8.DecodeRuneInString(line[end:])
		if !isWord(r) {
			break
		}
		end += n
	}
	// A word does not end in punctuation (`db.` at the end of a sentence).
	for end > start && (line[end-1] == '.' || line[end-1] == '-') {
		end--
	}
	for start < end && (line[start] == '.' || line[start] == '-') {
		start++
	}
	return start, end
}

// countsText renders evidence counts by role: "2 supporting · 1 verification".
func countsText(counts domain.RoleCounts) string {
	var parts []string
	for _, role := range domain.Roles {
		if n := counts.Of(role); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, role))
		}
	}
	if len(parts) == 0 {
		return "no evidence"
	}
	return strings.Join(parts, " · ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// mdText escapes the Markdown characters that would change how a statement
// renders.
var mdText = strings.NewReplacer("\\", "\\\\", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "<", "&lt;", "\n", " ").Replace
