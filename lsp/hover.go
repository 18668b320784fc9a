package lsp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

func (s *Server) hover(ctx context.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	d, ws, ok, err := s.sourceDocument(ctx, p.TextDocument.URI, s.currentSettings().Hints.Hover)
	if !ok || err != nil {
		return nil, err
	}
	h, err := s.sourceHover(ctx, ws, d, p.Position)
	return h, rpcError(err)
}

// sourceHover shows, first, the cards triggered at the cursor — trigger
// patterns matching this line, intent tags and tool needs equal to the word
// — then the cards that apply to the file by the scope and lanes policies,
// grouped by tier, and the reference-only ones as a count.
func (s *Server) sourceHover(ctx context.Context, ws *workspace, d *document, pos protocol.Position) (*protocol.Hover, error) {
	if _, err := ws.sync(ctx); err != nil {
		return nil, err
	}
	line := int(pos.Line)
	text := d.line(line)
	wordStart, wordEnd := wordAt(text, utf16ToByte(text, int(pos.Character)))
	word := text[wordStart:wordEnd]

	hints, err := ws.hints(ctx, d)
	if err != nil {
		return nil, err
	}
	var triggered []trigHit
	seen := map[string]bool{}
	ms := hints.Matches
	for i := sort.Search(len(ms), func(i int) bool { return ms[i].Line >= line+1 }); i < len(ms) && ms[i].Line == line+1; i++ {
		if !seen[ms[i].Card.ID] {
			seen[ms[i].Card.ID] = true
			triggered = append(triggered, trigHit{card: ms[i].Card, why: "pattern `" + ms[i].Pattern + "` matches this line"})
		}
	}
	if word != "" {
		set, _, err := ws.triggerSet(ctx)
		if err != nil {
			return nil, err
		}
		tagged, err := ws.h.TaggedCards(ctx, set, host.HintsRequest{File: d.path, Language: d.lang}, word)
		if err != nil {
			return nil, err
		}
		for _, c := range tagged {
			if !seen[c.ID] {
				seen[c.ID] = true
				triggered = append(triggered, trigHit{card: c, why: "`" + word + "` is one of its intents or tool needs"})
			}
		}
	}
	pack, err := ws.pack(ctx, d.path, d.lang, s.currentSettings().Budget)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if len(triggered) > 0 {
		b.WriteString("**palace · triggered here**\n\n")
		for _, t := range triggered {
			c, err := ws.card(ctx, t.card.ID)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "- %s — %s · %s · %s · `%s`  \n  _%s_\n", mdText(t.card.Label()), c.Status, c.Anchor.Kind, countsText(c.Counts), c.ID, t.why)
		}
	}
	g := groupPack(pack)
	if len(g.inline) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**palace · applies to %s**\n", mdText(pack.Request.File))
		for _, tier := range domain.Tiers {
			if len(g.inline[tier]) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n*%s*\n", tier)
			for _, it := range g.inline[tier] {
				fmt.Fprintf(&b, "- %s — %s · %s · %s · `%s`\n", mdText(it.Statement), it.Status, it.Anchor.Kind, countsText(citationCounts(it.Citations)), it.ID)
			}
		}
	}
	if g.refs+g.trimmed+g.cooled > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		var parts []string
		if g.refs > 0 {
			parts = append(parts, plural(g.refs, "more card")+" as references")
		}
		if g.trimmed > 0 {
			parts = append(parts, plural(g.trimmed, "card")+" left out by the budget")
		}
		if g.cooled > 0 {
			parts = append(parts, plural(g.cooled, "cooled card")+" (inspector only)")
		}
		fmt.Fprintf(&b, "_%s: run `palace context --file %s --explain` or the palace.context command to see them._\n", strings.Join(parts, ", "), pack.Request.File)
	}
	if b.Len() == 0 {
		return nil, nil
	}
	h := &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: b.String()}}
	if !s.clientCapabilities().markdown {
		h.Contents = &protocol.MarkupContent{Kind: protocol.MarkupKindPlainText, Value: plainText.Replace(b.String())}
	}
	if wordEnd > wordStart {
		h.Range = &protocol.Range{Start: d.position(line, wordStart), End: d.position(line, wordEnd)}
	}
	return h, nil
}

// plainText strips the Markdown of a hover for clients that cannot render it.
var plainText = strings.NewReplacer("**", "", "`", "", "\\_", "_", "\\*", "*", "\\`", "`", "\\[", "[", "\\]", "]", "\\\\", "\\", "&lt;", "<")

type trigHit struct {
	card host.TriggerCard
	why  string
}

// packView is a pack as the editor shows it.
type packView struct {
	// inline are the items rendered in full or compact, by tier.
	inline map[domain.Tier][]host.Item
	// byTier counts inline and reference items by tier.
	byTier map[domain.Tier]int
	// refs are rendered as references only; trimmed were left out by the
	// budget; cooled apply by scope but their lane is inspector_only.
	refs, trimmed, cooled int
}

func groupPack(p *host.Pack) packView {
	v := packView{inline: map[domain.Tier][]host.Item{}, byTier: map[domain.Tier]int{}}
	for _, it := range p.Items {
		switch it.RenderForm {
		case domain.FormInlineFull, domain.FormInlineCompact:
			v.inline[it.Tier] = append(v.inline[it.Tier], it)
			v.byTier[it.Tier]++
		case domain.FormRefOnly:
			v.refs++
			v.byTier[it.Tier]++
		default:
			v.trimmed++
		}
	}
	for _, sk := range p.Skipped {
		if sk.Reason == "skipped_cooled" {
			v.cooled++
		}
	}
	return v
}

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

func citationCounts(cs []host.Citation) domain.RoleCounts {
	var out domain.RoleCounts
	for _, c := range cs {
		out.Add(c.Role, 1)
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// mdText escapes the Markdown characters that would change how a statement
// renders.
func mdText(s string) string { return mdEscaper.Replace(s) }

var mdEscaper = strings.NewReplacer("\\", "\\\\", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "<", "&lt;", "\n", " ")
