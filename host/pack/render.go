package pack

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
)

// The rendering of a pack: Markdown with typed sections. Each item renders
// on its own (its size never depends on its neighbours), so the budget
// packer counts exactly.

// maxInlineEvidenceRunes is the longest evidence content rendered inline;
// longer evidence renders as a reference line (never cut).
const maxInlineEvidenceRunes = 600

// maxRenderedCitations is how many citations a rendered item names before
// "+N more" (the JSON lists every one).
const maxRenderedCitations = 3

// sectionKey identifies a section of the rendering: a name and, for the
// sections of another repository (all_repos), the origin's position.
type sectionKey struct {
	origin int // 0 = this location; i > 0 = the i-th other origin
	name   string
}

// sectionTitles are the headings of the sections, short since they are
// read on every prompt; a wake-up pack titles its inline lanes by wakeTitles.
var sectionTitles = map[string]string{
	"transient_instructions": "Transient instructions (this request only)",
	"core":                   "Core",
	"scoped":                 "More",
	"references":             "References",
	"evidence":               "Evidence",
}

var wakeTitles = map[string]string{
	"core":   "Foundations",
	"scoped": "Most valued",
}

func sectionTitle(name string, wake bool) string {
	if t, ok := wakeTitles[name]; ok && wake {
		return t
	}
	return sectionTitles[name]
}

// CardFetch is how the reader of a rendering fetches a card it names.
type CardFetch int

const (
	// FetchByCLI names `palace card show ID`.
	FetchByCLI CardFetch = iota
	// FetchByMCPTool names the palace_cards tool, for an agent over MCP.
	FetchByMCPTool
)

// command is how the reader fetches a card, with ID for its id.
func (f CardFetch) command() string {
	if f == FetchByMCPTool {
		return "palace_cards get `ID`"
	}
	return "`palace card show ID`"
}

// preamble opens every rendering: whose memory it is and how to fetch a
// card in full (said once here, not on every reference line), and, for a
// wake-up pack, that it is one.
func (pl *Pipeline) preamble(allRepos, wake bool, fetch CardFetch) string {
	where := "global memory (no repository here)"
	if pl.Loc.InGit {
		where = "repository " + strings.TrimPrefix(pl.Loc.Identity(domain.AnchorRepo), "repo:")
	}
	if allRepos {
		where += " and, explicitly requested, every other repository"
	}
	s := "# palace context\n\nMemory of " + where + "; fetch a card with " + fetch.command() + ".\n"
	if wake {
		s += "No task was named, so this is the wake-up layer: the laws, foundations and most valued cards. Ask with the task (a query or a file) for what applies to it.\n"
	}
	return s
}

// sectionHeader is the heading block of a section.
func sectionHeader(k sectionKey, origin *cardview.AnchorRef, wake bool) string {
	if origin != nil {
		return fmt.Sprintf("\n## From %s %s\n\n", origin.Kind, cardview.DisplayIdentity(*origin))
	}
	return "\n## " + sectionTitle(k.name, wake) + "\n\n"
}

func renderInstructions(list []string) string {
	var b strings.Builder
	for _, s := range list {
		b.WriteString("- ")
		b.WriteString(oneLine(s))
		b.WriteString("\n")
	}
	return b.String()
}

// renderItem renders a card in form: inline_full (statement, content,
// citations), inline_compact (one line, citations counted, the statement cut
// to compactCap when set) or ref_only (one line with the id); inspector_only
// renders nothing.
func renderItem(it *Item, form domain.RenderForm, compactCap int) string {
	var b strings.Builder
	switch form {
	case domain.FormInlineFull, domain.FormInlineCompact:
		b.WriteString("- **" + string(it.Tier) + "**")
		if !it.Status.Authoritative() {
			b.WriteString(" _(" + string(it.Status) + ", not yet authoritative)_")
		}
		statement := oneLine(it.Statement)
		if form == "inline_compact" && compactCap > 0 {
			statement = shorten(statement, compactCap)
		}
		b.WriteString(" " + statement)
		b.WriteString(" — `" + it.ID + "` · " + originLabel(it))
		// The compact form is one short line: its citations are counted,
		// and listed in the full form and when the card is fetched.
		if form == domain.FormInlineFull {
			if c := citeLine(it.Citations, it.CitationCount); c != "" {
				b.WriteString(" · " + c)
			}
		} else {
			b.WriteString(" · " + countNoun(max(it.CitationCount, len(it.Citations)), "citation"))
		}
		if it.Stale != nil {
			b.WriteString(staleLine(it.ID, it.Stale))
		}
		b.WriteString("\n")
		if form == domain.FormInlineFull && strings.TrimSpace(it.Content) != "" {
			writeIndented(&b, it.Content)
		}
	case domain.FormRefOnly:
		b.WriteString("- `" + it.ID + "` " + string(it.Tier))
		if !it.Status.Authoritative() {
			b.WriteString(" (" + string(it.Status) + ")")
		}
		b.WriteString(" · field " + it.Field + " · " + originLabel(it))
		if it.NearDuplicateOf != "" {
			b.WriteString(" · near-duplicate of `" + it.NearDuplicateOf + "`")
		}
		if it.Contest != nil {
			// A contested card keeps its own statement, so the warning is
			// read against what it contests, never in its place.
			b.WriteString(": " + oneLine(it.Statement) + " · **contested**: " + contestLine(it.Contest))
		}
		if it.Stale != nil {
			b.WriteString(staleLine(it.ID, it.Stale))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func originLabel(it *Item) string {
	if it.Foreign {
		return it.Anchor.Kind + " " + cardview.DisplayIdentity(it.Anchor)
	}
	return it.Anchor.Kind
}

// citeLine names up to maxRenderedCitations citations, then "+N more"
// counting every link of the card (total).
func citeLine(cs []cardview.Citation, total int) string {
	if len(cs) == 0 {
		return "no citations"
	}
	parts := make([]string, 0, maxRenderedCitations+1)
	for i, c := range cs {
		if i == maxRenderedCitations {
			break
		}
		p := "`" + c.EvidenceID + "` " + string(c.Role)
		if c.SourceRef != "" {
			p += " (" + oneLine(c.SourceRef) + ")"
		}
		parts = append(parts, p)
	}
	if more := max(total, len(cs)) - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", more))
	}
	return "cites " + strings.Join(parts, ", ")
}

// evidenceForm is the form evidence renders in before any budget pressure.
func evidenceForm(e *EvidenceItem) domain.RenderForm {
	if utf8.RuneCountInString(e.Content) <= maxInlineEvidenceRunes {
		return domain.FormInlineFull
	}
	return domain.FormRefOnly
}

func renderEvidence(e *EvidenceItem, form domain.RenderForm) string {
	head := "- `" + e.ID + "` " + e.Field + " · " + string(e.Provenance)
	if e.SourceRef != "" {
		head += " · " + oneLine(e.SourceRef)
	}
	switch form {
	case domain.FormInlineFull:
		var b strings.Builder
		b.WriteString(head + "\n")
		writeIndented(&b, e.Content)
		return b.String()
	case domain.FormRefOnly:
		return fmt.Sprintf("%s · %d characters — `palace evidence show %s`\n", head, utf8.RuneCountInString(e.Content), e.ID)
	}
	return ""
}

// emptyNote is the body of a pack that renders no card: never a bare
// absence, always what exists and why none was selected.
func emptyNote(m MemoryExists) string {
	return "\nNo card is injected for this request. " + m.Reason + "\n"
}

// writeIndented writes text's lines indented by two spaces, trailing
// whitespace trimmed.
func writeIndented(b *strings.Builder, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line = strings.TrimRight(line, " \t\r"); line != "" {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
}

// shorten cuts s to at most n characters at a word boundary, marking the
// cut with an ellipsis; a text that fits is returned as it is.
func shorten(s string, n int) string {
	if runeLen(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return strings.TrimRight(string(r)[:i], " ,;:") + "…"
	}
	return string(r) + "…"
}

// oneLine folds whitespace runs (newlines included) to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func runeLen(s string) int { return utf8.RuneCountInString(s) }
