package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nvimView is what the e2e_truth.lua script records of one moment.
type nvimView struct {
	Hover    struct{ Contents struct{ Value string } } `json:"hover"`
	HoverTop struct{ Contents struct{ Value string } } `json:"hover_top"`
	Codelens []struct {
		Command struct{ Title string } `json:"command"`
	} `json:"codelens"`
	Inlay []struct {
		Position struct{ Line int } `json:"position"`
		Label    string             `json:"label"`
		Tooltip  struct{ Value string }
	} `json:"inlay"`
	Context struct {
		Items []struct {
			ID         string          `json:"id"`
			Statement  string          `json:"statement"`
			Tier       string          `json:"tier"`
			RenderForm string          `json:"render_form"`
			Stale      json.RawMessage `json:"stale"`
			Contest    json.RawMessage `json:"contest"`
		} `json:"items"`
	} `json:"context"`
	Diagnostics []nvimDiagnostic `json:"diagnostics"`
	VirtualText []struct {
		Line int
		Text string
	} `json:"virtual_text"`
}

type nvimDiagnostic struct {
	Lnum     int    `json:"lnum"`
	EndLnum  int    `json:"end_lnum"`
	Severity int    `json:"severity"`
	Message  string `json:"message"`
	Code     string `json:"code"`
}

type nvimResult struct {
	Errors    []string `json:"errors"`
	Before    nvimView `json:"before"`
	After     nvimView `json:"after"`
	Published []struct {
		URI     string `json:"uri"`
		Version *int   `json:"version"`
		N       int    `json:"n"`
	} `json:"published"`
	EditVersion     int              `json:"edit_version"`
	EditDiagnostics []nvimDiagnostic `json:"edit_diagnostics"`
	CardFile        []nvimDiagnostic `json:"card_file"`
}

// runNeovim opens file in headless Neovim with examples/editors/neovim,
// runs test/e2e_truth.lua with the environment vars, and returns what it
// recorded.
func runNeovim(t *testing.T, e *env, file string, vars ...string) nvimResult {
	t.Helper()
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH: install Neovim (Debian: apt-get install -y neovim) to run the editor end-to-end test")
	}
	_, self, _, _ := runtime.Caller(0)
	example := filepath.Join(filepath.Dir(self), "..", "..", "examples", "editors", "neovim")
	out := filepath.Join(t.TempDir(), "result.json")
	logFile := filepath.Join(t.TempDir(), "lsp.log")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-n", "-i", "NONE",
		"-u", filepath.Join(example, "init.lua"),
		"+luafile "+filepath.Join(example, "test", "e2e_truth.lua"), file)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "PALACE_BIN="+palaceBin,
		"PALACE_LSP_ARGS=--log-file="+logFile, "PALACE_E2E_OUT="+out, "XDG_STATE_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, vars...)
	if b, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("nvim: %v\n%s\nserver log:\n%s", err, b, log)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nvim wrote no result: %v", err)
	}
	t.Logf("neovim saw: %s", raw)
	var res nvimResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		log, _ := os.ReadFile(logFile)
		t.Fatalf("errors in neovim: %q\nserver log:\n%s", res.Errors, log)
	}
	return res
}

// TestNeovimOneStatePerCard: in a real editor, a contested card reads as
// contested in hover and inlay hints; the code lens counts exactly the
// cards of the pack and the hints; a card and its published copy give one
// hint; a broken card file gets a diagnostic on its line; and the
// diagnostics of one edit arrive once.
func TestNeovimOneStatePerCard(t *testing.T) {
	e, qi, _ := seedLSP(t)
	copyID := e.jsonOf("publish", qi, "--to", "repo", "--reason", "the team's rule")["copy"].(map[string]any)["id"].(string)
	e.ok("sync")
	cardFile := filepath.Join(e.dir, ".palace", "cards", copyID+".md")
	b, err := os.ReadFile(cardFile)
	if err != nil {
		t.Fatalf("palace sync wrote no card file: %v", err)
	}
	broken := strings.Replace(string(b), "tier: qi", "tier: wizard", 1)
	brokenLine := slices.Index(strings.Split(broken, "\n"), "tier: wizard")
	if err := os.WriteFile(cardFile, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := e.record("WAL on NFS still locks", "--source-ref", "ci://nfs")
	e.ok("--mode", "agent", "card", "link", qi, "--role", "counterexample", "--evidence", ev)

	res := runNeovim(t, e, filepath.Join("db", "open.go"), "PALACE_E2E_SCENARIO=state", "PALACE_E2E_LINE=6", "PALACE_E2E_COL=14",
		"PALACE_E2E_CARD_FILE="+cardFile)
	v := res.Before

	if len(v.Inlay) != 1 || v.Inlay[0].Position.Line != 6 || v.Inlay[0].Label != "contested ‹qi› Open SQLite in WAL mode" {
		t.Errorf("inlay hints %+v: want one contested hint for the card and its copy", v.Inlay)
	}
	if len(v.VirtualText) != 1 || !strings.Contains(v.VirtualText[0].Text, "contested ‹qi›") {
		t.Errorf("hints drawn: %+v", v.VirtualText)
	}
	if h := v.Hover.Contents.Value; !strings.Contains(h, "Open SQLite in WAL mode — promoted · **contested**") || !strings.Contains(h, ev) {
		t.Errorf("hover on the trigger:\n%s", h)
	}
	if h := v.HoverTop.Contents.Value; !strings.Contains(h, "needs a person") || !strings.Contains(h, "**contested**") {
		t.Errorf("hover on line 1:\n%s", h)
	}
	trig := 0
	for _, d := range v.Diagnostics {
		if d.Lnum == 6 {
			trig++
			if d.Code != qi || d.Severity != 2 || !strings.HasPrefix(d.Message, "contested") {
				t.Errorf("diagnostic on the trigger line: %+v", d)
			}
		}
	}
	if trig != 1 {
		t.Errorf("%d diagnostics on the trigger line, want 1: %+v", trig, v.Diagnostics)
	}

	// The lens counts what the pack renders and what the hints show, once.
	shown := map[string]bool{}
	tiers := map[string]int{}
	for _, it := range v.Context.Items {
		if it.RenderForm == "inline_full" || it.RenderForm == "inline_compact" || it.RenderForm == "ref_only" {
			shown[it.Statement] = true
			tiers[it.Tier]++
		}
	}
	for _, h := range v.Inlay {
		st := strings.TrimPrefix(strings.TrimPrefix(h.Label, "contested "), "‹qi› ")
		if !shown[st] {
			shown[st] = true
			tiers["qi"]++
		}
	}
	want := "palace · dao " + itoa(tiers["dao_tian"]+tiers["dao_ren"]) + " · shu " + itoa(tiers["shu"]) + " · qi " + itoa(tiers["qi"]) + " · 1 contested"
	if len(v.Codelens) != 1 || v.Codelens[0].Command.Title != want {
		t.Errorf("code lens %+v, want %q", v.Codelens, want)
	}

	// One edit, one publish.
	n := 0
	for _, p := range res.Published {
		if strings.HasSuffix(p.URI, "/db/open.go") && p.Version != nil && *p.Version == res.EditVersion {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the edit (version %d) was published %d times, want once: %+v", res.EditVersion, n, res.Published)
	}
	if k := countCode(res.EditDiagnostics, qi); k != 2 {
		t.Errorf("after the edit %d diagnostics of %s, want 2: %+v", k, qi, res.EditDiagnostics)
	}

	if len(res.CardFile) == 0 || res.CardFile[0].Lnum != brokenLine || res.CardFile[0].Severity != 1 ||
		!strings.HasPrefix(res.CardFile[0].Code, "PC") || !strings.Contains(res.CardFile[0].Message, "wizard") {
		t.Errorf("card file diagnostics %+v, want an error on line %d", res.CardFile, brokenLine)
	}
	check := e.run("cards", "check", cardFile)
	if check.code != 1 || !strings.Contains(check.stdout+check.stderr, ":"+itoa(brokenLine+1)+":") {
		t.Errorf("palace cards check: exit %d\n%s%s", check.code, check.stdout, check.stderr)
	}
}

func countCode(ds []nvimDiagnostic, code string) int {
	n := 0
	for _, d := range ds {
		if d.Code == code {
			n++
		}
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestNeovimShowsStaleCard is the stale bar in a real editor: the lines a
// promoted card's evidence cites change and are committed; Neovim shows
// the card stale on its trigger line (hint, diagnostic, hover, lens) and
// marks the changed lines; palace.verify clears all of it.
func TestNeovimShowsStaleCard(t *testing.T) {
	e := newStaleEnv(t)
	e.write("store/db.go", []byte(strings.Replace(staleDB, `open(path, "wal")`, `open(path, "delete")`, 1)))
	e.commitAll("journal mode delete")

	res := runNeovim(t, e.env, filepath.Join("store", "db.go"), "PALACE_E2E_SCENARIO=stale", "PALACE_E2E_LINE=3", "PALACE_E2E_COL=10",
		"PALACE_E2E_DIAGNOSTICS=2", "PALACE_E2E_CARD="+e.card)
	v := res.Before
	var onLines, onTrigger *nvimDiagnostic
	for i, d := range v.Diagnostics {
		switch {
		case d.Lnum == 2 && d.EndLnum == 4:
			onLines = &v.Diagnostics[i]
		case d.Lnum == 3:
			onTrigger = &v.Diagnostics[i]
		}
	}
	if onLines == nil || onLines.Code != e.card || onLines.Severity != 2 || !strings.Contains(onLines.Message, "store/db.go#L3-L5: lines 3–5 changed since "+e.cited) {
		t.Errorf("diagnostic on the changed lines: %+v\nall: %+v", onLines, v.Diagnostics)
	}
	if onTrigger == nil || onTrigger.Code != e.card || !strings.HasPrefix(onTrigger.Message, "stale (store/db.go#L3-L5") {
		t.Errorf("diagnostic on the trigger line: %+v", onTrigger)
	}
	if len(v.Inlay) != 1 || !strings.HasPrefix(v.Inlay[0].Label, "stale ‹qi›") || !strings.Contains(v.Inlay[0].Tooltip.Value, "palace verify "+e.card) {
		t.Errorf("inlay hints: %+v", v.Inlay)
	}
	if len(v.VirtualText) != 1 || !strings.Contains(v.VirtualText[0].Text, "stale ‹qi›") {
		t.Errorf("hints drawn: %+v", v.VirtualText)
	}
	if h := v.Hover.Contents.Value; !strings.Contains(h, "**stale**") || !strings.Contains(h, "store/db.go#L3-L5") {
		t.Errorf("hover:\n%s", h)
	}
	if len(v.Codelens) != 1 || !strings.HasSuffix(v.Codelens[0].Command.Title, "· 1 stale") {
		t.Errorf("code lens: %+v", v.Codelens)
	}
	staleItems := 0
	for _, it := range v.Context.Items {
		if it.ID == e.card && len(it.Stale) > 0 && string(it.Stale) != "null" {
			staleItems++
		}
	}
	if staleItems != 1 {
		t.Errorf("the pack does not mark the card stale: %+v", v.Context.Items)
	}

	a := res.After
	for _, d := range a.Diagnostics {
		if strings.Contains(d.Message, "stale") || strings.Contains(d.Message, "changed since") {
			t.Errorf("after palace.verify: %+v", d)
		}
	}
	if len(a.Inlay) != 1 || strings.HasPrefix(a.Inlay[0].Label, "stale") {
		t.Errorf("inlay hints after verify: %+v", a.Inlay)
	}
	if len(a.Codelens) != 1 || strings.Contains(a.Codelens[0].Command.Title, "stale") {
		t.Errorf("code lens after verify: %+v", a.Codelens)
	}
}
