package mcp_test

import (
	"strings"
	"testing"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/mcp"
)

// samplePack has the shape of host's rendering (host/pack/render.go).
const samplePack = "# palace context\n\n" +
	"Governed memory for repository github.com/acme/widgets. Each card names its id and the evidence it cites; fetch one with `palace card show ID`.\n\n" +
	"## Core\n\n" +
	"- **qi** Open SQLite in WAL mode — `kc_01kjmma2g0h7p36grq3zgryb44` · worktree · cites `ev_01kjmma2g0abcdefghjkmnpqrs` supporting (ci#12)\n" +
	"  Without WAL the tests flake with 'database is locked'.\n\n" +
	"## References\n\n" +
	"Cards that apply but render as a reference; fetch the full text with `palace card show ID`.\n" +
	"- `kc_01kjmma2g0h7p36grq3zgryb45` shu · field storage · repo — `palace card show kc_01kjmma2g0h7p36grq3zgryb45`\n"

func TestRecordRefusesItsOwnEcho(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Agent))
	itemLine := strings.Split(samplePack, "\n")[6]
	for _, tc := range []struct {
		name, content, why string
	}{
		{"whole pack", samplePack, "it contains a context pack palace rendered"},
		{"pack inside notes", "Notes from the session:\n\n" + samplePack + "\nThen I ran the tests.", "it contains a context pack palace rendered"},
		{"quoted pack", "> " + strings.ReplaceAll(strings.TrimSpace(samplePack), "\n", "\n> "), "it contains a context pack palace rendered"},
		{"indented pack", "    " + strings.ReplaceAll(samplePack, "\n", "\n    "), "it contains a context pack palace rendered"},
		{"brief heading", "## palace brief\n\n" + itemLine, "it contains a context pack palace rendered"},
		{"one card line", "I was told: " + itemLine, "it contains a card line of a context pack palace rendered"},
		{"one reference line", "see " + strings.Split(samplePack, "\n")[12], "it contains a card line of a context pack palace rendered"},
		{"one reference line as MCP rendered it", "see - `kc_01kjmma2g0h7p36grq3zgryb45` shu · field storage · repo — palace_cards get `kc_01kjmma2g0h7p36grq3zgryb45`", "it contains a card line of a context pack palace rendered"},
		{"one reference line as it renders now", "see - `kc_01kjmma2g0h7p36grq3zgryb45` shu · field storage · repo", "it contains a card line of a context pack palace rendered"},
		{"the preamble as it renders now", "# palace context\n\nMemory of repository github.com/acme/widgets; fetch a card with `palace card show ID`.\n", "it contains a context pack palace rendered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.on(t).fail(mcp.ToolRecord, map[string]any{"content": tc.content})
			want := "palace: content is refused: " + tc.why
			if !strings.HasPrefix(got, want) || !strings.Contains(got, "memory must not feed on its own echo") {
				t.Errorf("\n got %q\nwant prefix %q", got, want)
			}
		})
	}
	if cards := s.ok(mcp.ToolCards, map[string]any{})["cards"].([]any); len(cards) != 0 {
		t.Fatalf("refused records wrote cards: %v", cards)
	}

	// Evidence that talks about palace and its cards in an agent's own words
	// is what memory is for.
	for _, content := range []string{
		"card kc_01kjmma2g0h7p36grq3zgryb44 (Open SQLite in WAL mode) held: the tests passed with WAL on",
		"the palace context pack said to use WAL; on NFS that corrupts the database",
		"# palace contextual notes are in docs/palace.md",
		"Run `palace card show kc_01kjmma2g0h7p36grq3zgryb44` to see the card",
	} {
		s.ok(mcp.ToolRecord, map[string]any{"content": content})
	}
}
