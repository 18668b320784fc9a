package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnexpandedHomeIsRefused: a PALACE_HOME or --home holding a "~" or "$"
// that no shell expanded (an MCP client's env, a JSON setting) is refused
// with exit 2 and a message, instead of becoming a folder of that name in
// the current directory; doctor says so too.
func TestUnexpandedHomeIsRefused(t *testing.T) {
	e := newEnv(t)
	for _, home := range []string{"~/.palace", "${HOME}/.palace", "$HOME/.palace", "${PALACE_HOME:-${HOME}/.palace}"} {
		e.vars = []string{"PALACE_HOME=" + home}
		r := e.run("record", "--content", "x")
		wantCode(t, r, 2, "PALACE_HOME=", "was not expanded", "absolute path")
		r = e.run("doctor")
		wantCode(t, r, 1)
		if !strings.Contains(r.stdout, "FAIL home") || !strings.Contains(r.stdout, "was not expanded") {
			t.Errorf("doctor with PALACE_HOME=%s:\n%s", home, r.stdout)
		}
	}
	e.vars = nil
	wantCode(t, e.run("card", "list", "--home", "~/p"), 2, `--home "~/p" holds a literal "~"`)
	entries, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if strings.ContainsAny(en.Name(), "~$") {
			t.Errorf("a refused home left %s in the checkout", filepath.Join(e.dir, en.Name()))
		}
	}
	// A "~" inside a name is no shell's tilde.
	e.ok("card", "list", "--home", filepath.Join(t.TempDir(), "a~b"))
}

// TestUsageErrorsPointAtTheCommandsHelp: a usage error names the help of the
// command that was called, and a missing argument is named, as git, gh and
// kubectl do.
func TestUsageErrorsPointAtTheCommandsHelp(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"card", "list", "--bogus"}, []string{"unknown flag: --bogus", "Run 'palace card list --help' for usage."}},
		{[]string{"card", "lst"}, []string{"Did you mean this?", "Run 'palace card --help' for usage."}},
		{[]string{"promote"}, []string{"missing CARD_ID: usage: palace promote CARD_ID --reason R", "Run 'palace promote --help' for usage."}},
		{[]string{"promote", "kc_a", "kc_b", "--reason", "r"}, []string{"too many arguments (kc_a kc_b)", "Run 'palace promote --help'"}},
		{[]string{"evidence", "show"}, []string{"missing EVIDENCE_ID", "Run 'palace evidence show --help'"}},
		{[]string{"help", "contxt"}, []string{`unknown help topic "contxt"`, "Did you mean this?\n\tcontext", "Run 'palace --help' for usage."}},
		{[]string{"help", "card", "lst"}, []string{`unknown help topic "lst" for "palace card"`, "list"}},
		{[]string{"crad"}, []string{"Run 'palace --help' for usage."}},
	} {
		r := e.run(c.args...)
		wantCode(t, r, 2, c.want...)
		if r.stdout != "" {
			t.Errorf("palace %v printed to stdout: %q", c.args, r.stdout)
		}
	}
	if out := e.ok("help", "card", "list"); !strings.Contains(out, "palace card list [flags]") {
		t.Errorf("palace help card list:\n%s", out)
	}
}

// TestHelpReadsLikeGit: the root's help groups the commands and hides the
// developer ones; boolean flags read as switches, in aligned columns.
func TestHelpReadsLikeGit(t *testing.T) {
	e := newEnv(t)
	root := e.ok("--help")
	for _, g := range []string{"Everyday commands:", "Card lifecycle", "Team memory", "Inspect and audit:", "Set up and serve:"} {
		if !strings.Contains(root, g) {
			t.Errorf("palace --help has no group %q", g)
		}
	}
	if strings.Contains(root, "Additional Commands") {
		t.Errorf("a command is in no group:\n%s", root[strings.Index(root, "Additional Commands"):])
	}
	if strings.Contains(root, "bench") {
		t.Error("palace --help lists the developer command bench")
	}
	if i, j := strings.Index(root, "Everyday commands:"), strings.Index(root, "  record "); j < i {
		t.Errorf("record is not under the everyday commands:\n%s", root)
	}
	for _, args := range [][]string{{"context", "--help"}, {"sync", "--help"}, {"--help"}} {
		out := e.ok(args...)
		if strings.Contains(out, "[=true|false]") {
			t.Errorf("palace %v shows [=true|false]", args)
		}
		// Every flag's description starts in one column, 3 spaces past the
		// longest flag.
		for _, block := range []string{"Flags:\n", "Global Flags:\n"} {
			i := strings.Index(out, block)
			if i < 0 {
				continue
			}
			cols := map[int]bool{}
			longest := 0
			for _, l := range strings.Split(out[i+len(block):], "\n") {
				if strings.TrimSpace(l) == "" {
					break
				}
				if !strings.HasPrefix(strings.TrimSpace(l), "-") {
					continue
				}
				end := len(l) - len(strings.TrimLeft(l, " "))
				end += strings.Index(l[end:], "  ")
				longest = max(longest, end)
				cols[end+len(l[end:])-len(strings.TrimLeft(l[end:], " "))] = true
			}
			if len(cols) != 1 || !cols[longest+3] {
				t.Errorf("palace %v %s columns %v, want one at %d:\n%s", args, block, cols, longest+3, out[i:])
			}
		}
	}
	// Hidden is not gone.
	if out := e.ok("bench", "--help"); !strings.Contains(out, "gen") {
		t.Errorf("palace bench --help:\n%s", out)
	}
}

// TestReadableOutputs: card events and doctor read as text, --explain shows
// the request's words, counts agree with their nouns.
func TestReadableOutputs(t *testing.T) {
	e := newEnv(t)
	seen := e.record("without busy_timeout the tests fail with database is locked")
	fixed := e.record("with busy_timeout 50 of 50 runs pass")
	card := e.distill("Set busy_timeout before enabling WAL", "qi", "--supporting", seen)
	e.ok("promote", card, "--reason", "verified", "--verification", fixed)

	events := e.ok("card", "events", card)
	if strings.Contains(events, "{") || !strings.Contains(events, "links: supporting "+seen) || !strings.Contains(events, "links: verification "+fixed) {
		t.Errorf("card events is not readable text:\n%s", events)
	}
	if js := e.jsonOf("card", "events", card); !strings.Contains(mustJSON(t, js), `"data":{"links":[{`) {
		t.Errorf("card events --format json lost the data: %s", mustJSON(t, js))
	}

	doctor := e.ok("doctor")
	col := -1
	for _, l := range strings.Split(doctor, "\n")[1:] {
		for _, mark := range []string{"ok   ", "warn ", "FAIL "} {
			if strings.HasPrefix(l, "  "+mark) {
				rest := l[len("  "+mark):]
				i := strings.Index(rest, "  ")
				c := len(l) - len(rest) + i + len(rest[i:]) - len(strings.TrimLeft(rest[i:], " "))
				if col >= 0 && c != col {
					t.Errorf("doctor's details start at columns %d and %d:\n%s", col, c, doctor)
				}
				col = c
			}
		}
	}
	if !strings.Contains(doctor, "1 card, 2 evidence") {
		t.Errorf("doctor does not say 1 card:\n%s", doctor)
	}

	explain := e.ok("context", "the database is busy", "--explain", "--dry-run")
	if !strings.Contains(explain, "the request shares database, busy with the card") {
		t.Errorf("--explain does not show the request's words:\n%s", explain)
	}
	if !strings.Contains(explain, "memory here: 1 card (1 authoritative)") {
		t.Errorf("--explain: no singular card count:\n%s", explain)
	}

	// The failure report supports the card: it is the card's evidence, not
	// a conflict with it. An uncited one is.
	brief := e.jsonOf("brief", "busy_timeout locked")
	if strings.Contains(mustJSON(t, brief["uncertainty"]), "conflicting_evidence") {
		t.Errorf("brief calls the card's supporting evidence conflicting: %s", mustJSON(t, brief["uncertainty"]))
	}
	e.record("busy_timeout failed on NFS: database is locked again")
	brief = e.jsonOf("brief", "busy_timeout locked")
	if !strings.Contains(mustJSON(t, brief["uncertainty"]), "conflicting_evidence") {
		t.Errorf("brief misses an uncited failure report: %s", mustJSON(t, brief["uncertainty"]))
	}

	// One candidate is one candidate.
	e2 := newEnv(t)
	ev := e2.record("vacuum takes a lock for minutes")
	e2.distill("Run VACUUM off hours", "qi", "--supporting", ev)
	if got := mustJSON(t, e2.jsonOf("brief", "vacuum lock")["uncertainty"]); !strings.Contains(got, "1 candidate card matches") {
		t.Errorf("brief: %s", got)
	}
}

// TestImportKeepsAWrappedSentence: a rule of AGENTS.md wrapped in the middle
// of a sentence becomes a candidate whose statement is the whole sentence.
func TestImportKeepsAWrappedSentence(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "AGENTS.md"), []byte("# Rules\n\n- Always run the migrations before\n  starting the server. It checks the schema.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok("import", "AGENTS.md")
	list := mustJSON(t, e.jsonOf("card", "list", "--status", "candidate"))
	if !strings.Contains(list, `"statement":"Always run the migrations before starting the server."`) {
		t.Errorf("imported statement is not the whole sentence: %s", list)
	}
}

// TestExternalTakesASpacedValue: --external JIRA-12 records the reference,
// as docs/mailbox.md writes it; bare --external means true.
func TestExternalTakesASpacedValue(t *testing.T) {
	e := newEnv(t)
	out := mustJSON(t, e.jsonOf("mailbox", "file", "--class", "question", "--what", "a", "--external", "JIRA-12"))
	if !strings.Contains(out, `"external":"JIRA-12"`) {
		t.Errorf("--external JIRA-12: %s", out)
	}
	out = mustJSON(t, e.jsonOf("mailbox", "file", "--class", "question", "--what", "b", "--external"))
	if !strings.Contains(out, `"external":true`) {
		t.Errorf("bare --external: %s", out)
	}
	wantCode(t, e.run("mailbox", "file", "stray", "--class", "question", "--what", "c"), 2, `unexpected argument "stray"`)
}
