package lsp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/lsp"
)

func (c *client) lens(u uri.URI) protocol.CodeLens {
	c.t.Helper()
	var lens []protocol.CodeLens
	c.mustCall(protocol.MethodTextDocumentCodeLens, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}, &lens)
	if len(lens) != 1 {
		c.t.Fatalf("lenses = %+v, want one", lens)
	}
	return lens[0]
}

func (c *client) inlay(u uri.URI) []protocol.InlayHint {
	c.t.Helper()
	var hints []protocol.InlayHint
	c.mustCall(protocol.MethodTextDocumentInlayHint, &protocol.InlayHintParams{TextDocument: protocol.TextDocumentIdentifier{URI: u},
		Range: protocol.Range{End: protocol.Position{Line: 10000}}}, &hints)
	return hints
}

func (c *client) exec(cmd string, arg any) (json.RawMessage, error) {
	c.t.Helper()
	var raw json.RawMessage
	err := c.call(protocol.MethodWorkspaceExecuteCommand, &protocol.ExecuteCommandParams{Command: cmd, Arguments: []protocol.LSPAny{mustJSON(c.t, arg)}}, &raw)
	return raw, err
}

func labelOf(h protocol.InlayHint) string {
	l, _ := h.Label.(protocol.String)
	return string(l)
}

// A contested card reads as contested on every face: the inlay hint and
// the trigger diagnostic, the hover on its line and elsewhere in the file
// (it is only a reference in the pack), and the code lens counts it.
func TestContestedCardIsContestedOnEveryFace(t *testing.T) {
	s := newSeeded(t)
	c := start(t, lsp.Options{Home: s.home}, nil)
	c.initialize(s.fixture, nil)
	u := c.open(s.file, "go", openGo)
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	ev := strings.Fields(s.palace("record", "--content", "WAL on NFS still locks", "--source-ref", "ci://nfs"))[1]
	s.palace("card", "link", s.qi, "--role", "counterexample", "--evidence", ev)
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return strings.Contains(diagText(ds), "contested") })

	if h := c.inlay(u); len(h) != 1 || !strings.HasPrefix(labelOf(h[0]), "contested ‹qi›") {
		t.Errorf("inlay hints %+v", h)
	}
	on := c.hover(u, 6, 14)
	if !strings.Contains(on, "Open SQLite in WAL mode — promoted · **contested**") || !strings.Contains(on, ev) {
		t.Errorf("hover on the trigger line:\n%s", on)
	}
	off := c.hover(u, 0, 0)
	if !strings.Contains(off, "needs a person") || !strings.Contains(off, "‹qi› Open SQLite in WAL mode — promoted · **contested**") || strings.Contains(off, "plainly") {
		t.Errorf("hover elsewhere in the file:\n%s", off)
	}
	if l := c.lens(u); !strings.HasSuffix(l.Command.Title, "· 1 contested") {
		t.Errorf("lens %q, want the contested card counted", l.Command.Title)
	}
}

// The code lens counts every card the editor shows for the file: the
// pack's, and a card whose trigger matches a line though the pack leaves
// it out (not relevant here, or cooled); a card and its published copy
// count once, give one inlay hint and one diagnostic per line.
func TestLensHintsAndPackCountTheSameCards(t *testing.T) {
	s := newSeeded(t)
	exec := s.card(cardSpec{statement: "Count affected rows", tier: "qi", trigger: domain.Trigger{Patterns: []string{`Exec\(`}}})
	ctx := context.Background()
	if _, err := s.h.Publish(ctx, s.qi, host.PublishRequest{To: "repo", Reason: "the team's rule"}); err != nil {
		t.Fatal(err)
	}
	c := start(t, lsp.Options{Home: s.home}, nil)
	c.initialize(s.fixture, nil)
	u := c.open(s.file, "go", openGo)

	hints := c.inlay(u)
	byLine := map[uint32][]string{}
	for _, h := range hints {
		byLine[h.Position.Line] = append(byLine[h.Position.Line], labelOf(h))
	}
	if got := byLine[6]; len(got) != 1 || got[0] != "‹qi› Open SQLite in WAL mode" {
		t.Errorf("line 7 hints %q: want one for the card and its copy", got)
	}
	ds := c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) >= 2 })
	perLine := map[uint32]int{}
	for _, d := range ds {
		perLine[d.Range.Start.Line]++
	}
	if perLine[6] != 1 {
		t.Errorf("diagnostics on line 7: %d, want 1\n%s", perLine[6], diagText(ds))
	}

	var raw json.RawMessage
	c.mustCall("palace/context", map[string]any{"uri": u, "dry_run": true}, &raw)
	var pack pack.Pack
	if err := json.Unmarshal(raw, &pack); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	tiers := map[domain.Tier]int{}
	for _, it := range pack.Items {
		if it.RenderForm == domain.FormRefOnly || it.RenderForm == domain.FormInlineFull || it.RenderForm == domain.FormInlineCompact {
			shown[it.Statement] = true
			tiers[it.Tier]++
		}
	}
	if shown["Count affected rows"] {
		t.Fatalf("the test needs a triggered card the pack leaves out; pack: %+v", pack.Items)
	}
	for _, h := range hints {
		st := strings.TrimPrefix(labelOf(h), "‹qi› ")
		if !shown[st] {
			shown[st] = true
			tiers[domain.TierQi]++
		}
	}
	want := "palace · dao " + strconv.Itoa(tiers[domain.TierDaoTian]+tiers[domain.TierDaoRen]) + " · shu " + strconv.Itoa(tiers[domain.TierShu]) + " · qi " + strconv.Itoa(tiers[domain.TierQi])
	if l := c.lens(u); l.Command.Title != want || !strings.Contains(*l.Command.Tooltip, "1 more card triggered on its lines") {
		t.Errorf("lens %q (%s), want %q: the pack's cards and the hints' once each", l.Command.Title, *l.Command.Tooltip, want)
	}
	if !strings.Contains(labelOf(hints[len(hints)-1]), "Count affected rows") {
		t.Errorf("the last hint is %q, want the card %s the pack leaves out", labelOf(hints[len(hints)-1]), exec)
	}
}

// A card file under .palace/cards gets the findings of `palace cards
// check` on its lines while it is edited, and loses them when fixed.
func TestCardFileDiagnostics(t *testing.T) {
	s := newSeeded(t)
	s.git("config", "palace.autoExport", "false")
	rel := filepath.Join(".palace", "cards", s.qi+".md")
	file, err := s.h.Team().CardFile(context.Background(), s.qi)
	if err != nil {
		t.Fatal(err)
	}
	path := s.write(rel, string(file))
	c := start(t, lsp.Options{Home: s.home}, nil)
	c.initialize(s.fixture, nil)
	broken := strings.Replace(string(file), "tier: qi", "tier: wizard", 1)
	line := uint32(slices.Index(strings.Split(broken, "\n"), "tier: wizard"))
	u := c.open(path, "markdown", broken)
	ds := c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if ds[0].Range.Start.Line != line || ds[0].Severity != protocol.DiagnosticSeverityError || !strings.HasPrefix(string(ds[0].Code.(protocol.String)), "PC") ||
		!strings.Contains(string(ds[0].Message.(protocol.String)), "wizard") {
		t.Errorf("diagnostics of a broken card file:\n%s\nwant an error on line %d", diagText(ds), line)
	}
	c.notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: string(file)}},
	})
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
}

// One change is published once: an edit's diagnostics arrive in one
// publish, and a commit elsewhere that changes nothing shown publishes
// nothing.
func TestDiagnosticsForOneChangeArriveOnce(t *testing.T) {
	s := newSeeded(t)
	c := start(t, lsp.Options{Home: s.home}, nil)
	c.initialize(s.fixture, nil)
	u := c.open(s.file, "go", openGo)
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	edited := strings.Replace(openGo, "return db, err", "db2, _ := sql.Open(\"sqlite\", p)\n\t_ = db2\n\treturn db, err", 1)
	c.notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: edited}},
	})
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return strings.Count(diagText(ds), s.qi) == 2 })
	// Another process commits something that shows nowhere: the poll
	// moves the generation and recomputes, and publishes nothing.
	s.palace("record", "--content", "unrelated note")
	time.Sleep(600 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.diags[u] {
		if v, ok := p.Version.Get(); ok && v == 2 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("version 2 was published %d times, want once", n)
	}
}

// The lifecycle commands of the CLI and MCP are commands of the editor
// too, through the same host calls: publish, link, verify, resolve,
// audit action and retire; agent mode neither advertises nor runs the
// human ones, and links and verifies.
func TestLifecycleCommandsOfTheCLI(t *testing.T) {
	s := newSeeded(t)
	ctx := context.Background()
	c := start(t, lsp.Options{Home: s.home}, nil)
	res := c.initialize(s.fixture, nil)
	for _, want := range []string{"palace.publish", "palace.retire", "palace.link", "palace.resolve", "palace.auditAction", "palace.verify"} {
		if !slices.Contains(res.Capabilities.ExecuteCommandProvider.Commands, want) {
			t.Errorf("human mode does not advertise %s", want)
		}
	}
	raw, err := c.exec("palace.publish", map[string]any{"id": s.qi, "to": "repo", "reason": "team rule"})
	if err != nil {
		t.Fatal(err)
	}
	var pub host.PublishResult
	_ = json.Unmarshal(raw, &pub)
	if pub.Copy.OriginCard != s.qi || pub.Copy.Anchor.Kind != "repo" {
		t.Errorf("publish: %s", raw)
	}
	ce, _ := s.h.Intake().Record(ctx, intake.RecordRequest{Content: "fails on NFS"})
	if raw, err = c.exec("palace.link", map[string]any{"id": s.shu, "role": "counterexample", "evidence_id": ce.ID}); err != nil || !strings.Contains(string(raw), `"contest"`) {
		t.Errorf("link: %s, %v", raw, err)
	}
	ver, _ := s.h.Intake().Record(ctx, intake.RecordRequest{Content: "retried on NFS: holds"})
	if raw, err = c.exec("palace.resolve", map[string]any{"id": s.shu, "verification": []string{ver.ID}, "reason": "holds"}); err != nil {
		t.Errorf("resolve: %v", err)
	} else if card, _ := s.h.ShowCard(ctx, s.shu); card.Contest != nil {
		t.Errorf("still contested after resolve: %s", raw)
	}
	if raw, err = c.exec("palace.auditAction", map[string]any{"id": s.dao, "action": "set_review_after", "value": "2030-01-01", "reason": "yearly"}); err != nil ||
		!strings.Contains(string(raw), `"review_after":"2030-01-01`) {
		t.Errorf("audit action: %s, %v", raw, err)
	}
	if _, err = c.exec("palace.verify", map[string]any{"id": s.qi}); rpcCode(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "cites no file") {
		t.Errorf("verify of a card citing no code: %v", err)
	}
	if raw, err = c.exec("palace.retire", map[string]any{"id": s.py, "reason": "not ours"}); err != nil || !strings.Contains(string(raw), `"status":"retired"`) {
		t.Errorf("retire: %s, %v", raw, err)
	}
	if _, err = c.exec("palace.retire", map[string]any{"id": s.dao}); rpcCode(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "reason") {
		t.Errorf("retire without a reason: %v", err)
	}

	a := start(t, lsp.Options{Home: s.home, Mode: host.Agent}, nil)
	res = a.initialize(s.fixture, nil)
	cmds := res.Capabilities.ExecuteCommandProvider.Commands
	for _, human := range []string{"palace.publish", "palace.retire", "palace.resolve", "palace.auditAction"} {
		if slices.Contains(cmds, human) {
			t.Errorf("agent mode advertises %s", human)
		}
		if _, err := a.exec(human, map[string]any{"id": s.dao, "reason": "r", "to": "repo", "action": "revoke"}); rpcCode(err) != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "refused in agent mode") {
			t.Errorf("%s in agent mode: %v", human, err)
		}
	}
	if card, _ := s.h.ShowCard(ctx, s.dao); card.Status != "promoted" {
		t.Errorf("agent mode changed the card: %s", card.Status)
	}
	note, _ := s.h.Intake().Record(ctx, intake.RecordRequest{Content: "seen again"})
	if _, err := a.exec("palace.link", map[string]any{"id": s.dao, "role": "supporting", "evidence_id": note.ID}); err != nil {
		t.Errorf("link in agent mode: %v", err)
	}
}

const storeGo = `package store

func Open(path string) (*DB, error) {
	return open(path, "wal")
}
`

// A card whose cited lines changed shows where the editor shows cards —
// its trigger lines (inlay hint, diagnostic, hover), the code lens — and
// on the changed lines themselves; a change made while the editor runs
// shows within a poll; palace verify clears it everywhere.
func TestStaleCardShowsInTheEditor(t *testing.T) {
	f := newFixture(t)
	path := f.write("store/db.go", storeGo)
	f.git("add", "-A")
	f.git("commit", "-q", "-m", "db")
	ctx := context.Background()
	sup, err := f.h.Intake().Record(ctx, intake.RecordRequest{Content: "Open asks for WAL", SourceRef: "store/db.go#L3-L5"})
	if err != nil || len(sup.Observed) != 1 {
		t.Fatalf("record: %+v, %v", sup.Observed, err)
	}
	ver, _ := f.h.Intake().Record(ctx, intake.RecordRequest{Content: "the WAL test passes"})
	card, err := f.h.Distill(ctx, intake.DistillRequest{Statement: "The store opens in WAL mode", Tier: "qi", Supporting: []string{sup.ID},
		Verification: []string{ver.ID}, Scope: domain.Scope{Paths: []string{"store/**"}}, Trigger: domain.Trigger{Patterns: []string{`open\(path`}},
		Direct: true, Status: "promoted"})
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, lsp.Options{Home: f.home}, nil)
	c.initialize(f, nil)
	u := c.open(path, "go", storeGo)
	ds := c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if strings.Contains(diagText(ds), "stale") {
		t.Fatalf("fresh card shown stale:\n%s", diagText(ds))
	}

	// The lines change on disk while the editor runs.
	changed := strings.Replace(storeGo, `"wal"`, `"delete"`, 1)
	f.write("store/db.go", changed)
	ds = c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return strings.Count(diagText(ds), "stale") > 0 && len(ds) == 2 })
	var onLines, onTrigger string
	for _, d := range ds {
		msg := string(d.Message.(protocol.String))
		if code, _ := d.Code.(protocol.String); string(code) != card.ID || d.Severity != protocol.DiagnosticSeverityWarning {
			t.Errorf("diagnostic %s: want a warning coded %s", diagText([]protocol.Diagnostic{d}), card.ID)
		}
		if d.Range.Start.Line == 2 && d.Range.End.Line == 4 {
			onLines = msg
		} else if d.Range.Start.Line == 3 {
			onTrigger = msg
		}
	}
	for _, want := range []string{"cites store/db.go#L3-L5: lines 3–5 changed since " + sup.ID, "palace verify " + card.ID} {
		if !strings.Contains(onLines, want) {
			t.Errorf("diagnostic on the changed lines %q lacks %q\n%s", onLines, want, diagText(ds))
		}
	}
	if !strings.HasPrefix(onTrigger, "stale (store/db.go#L3-L5: lines 3–5 changed") {
		t.Errorf("diagnostic on the trigger line: %q", onTrigger)
	}
	c.notify(protocol.MethodTextDocumentDidChange, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: changed}},
	})
	if h := c.inlay(u); len(h) != 1 || labelOf(h[0]) != "stale ‹qi› The store opens in WAL mode" {
		t.Errorf("inlay hints: %+v", h)
	}
	if hv := c.hover(u, 3, 10); !strings.Contains(hv, "promoted · **stale**") || !strings.Contains(hv, "palace verify "+card.ID) {
		t.Errorf("hover:\n%s", hv)
	}
	if l := c.lens(u); !strings.HasSuffix(l.Command.Title, "· 1 stale") {
		t.Errorf("lens %q", l.Command.Title)
	}

	if _, err := c.exec("palace.verify", map[string]any{"id": card.ID}); err != nil {
		t.Fatal(err)
	}
	c.waitDiagnostics(u, func(ds []protocol.Diagnostic) bool { return len(ds) == 1 && !strings.Contains(diagText(ds), "stale") })
	if h := c.inlay(u); len(h) != 1 || labelOf(h[0]) != "‹qi› The store opens in WAL mode" {
		t.Errorf("inlay hints after verify: %+v", h)
	}
}
