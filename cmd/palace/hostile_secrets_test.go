package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/secrets/secretstest"
)

// noLeak fails when any of out holds the secret (or a long piece of it).
func noLeak(t *testing.T, secret string, out ...string) {
	t.Helper()
	piece := secret[len(secret)/4 : len(secret)/4+len(secret)/2]
	for _, o := range out {
		if strings.Contains(o, piece) {
			t.Errorf("output shows the secret:\n%s", o)
		}
	}
}

// TestHostileSecrets: secrets that hide behind escapes, and the twenty
// fixture kinds, are refused by every intake with the finding redacted; the
// allow marker lets fixtures through; redaction works for humans only.
func TestHostileSecrets(t *testing.T) {
	e := newEnv(t)
	key := "AKIA" + secretstest.Gen(7, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	escaped := `\u0041` + key[1:]

	t.Run("escaped secret in a staged letter", func(t *testing.T) {
		box := letterLine("ok", "") + "\n" + `{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"leak","what":"` + escaped + `"}` + "\n"
		e.writeFile(".palace/inbox.jsonl", []byte(box))
		e.git("add", ".palace/inbox.jsonl")
		r := e.run("mailbox", "check", "--staged")
		wantCode(t, r, 1)
		if out := r.stdout + r.stderr; !strings.Contains(out, "aws-access-key-id") || !strings.Contains(out, "AKIA") || !strings.Contains(out, ":2:") {
			t.Errorf("finding not reported with rule and line:\n%s", out)
		}
		noLeak(t, key, r.stdout, r.stderr)
		e.git("rm", "-q", "--cached", ".palace/inbox.jsonl")
		os.Remove(filepath.Join(e.dir, ".palace/inbox.jsonl"))
	})

	t.Run("escaped and zero-width secrets filed", func(t *testing.T) {
		for _, what := range []string{escaped, key[:5] + `\u200b` + key[5:], key[:5] + "\u2060" + key[5:]} {
			r := e.runIn(e.dir, []byte(`{"agent":"a","class":"leak","what":"`+what+`"}`), "mailbox", "file", "-")
			wantCode(t, r, 1, "aws-access-key-id", "palace:allow-secret")
			noLeak(t, key, r.stdout, r.stderr)
		}
	})

	for _, f := range secretstest.Fixtures(3) {
		t.Run("refused: "+f.Kind, func(t *testing.T) {
			// The PEM fixture is JSON-escaped; as a flag it is text.
			text := strings.ReplaceAll(f.Text, `\n`, "\n")
			r := e.run("mailbox", "file", "--class", "leak", "--what", "found "+text)
			wantCode(t, r, 1, "letter refused, it contains a secret: "+f.Rule)
			noLeak(t, f.Secret, r.stdout, r.stderr)
			r = e.run("record", "--content", "log line: "+text)
			wantCode(t, r, 1, "content holds a secret ("+f.Rule+" at line ", "palace:allow-secret")
			noLeak(t, f.Secret, r.stdout, r.stderr)
		})
	}

	fx := secretstest.Fixtures(4)
	openai := fx[0]
	if openai.Kind != "openai" {
		t.Fatalf("first fixture is %s", openai.Kind)
	}

	t.Run("distill refuses a secret", func(t *testing.T) {
		ev := e.record("the deploy failed")
		r := e.run("distill", "--statement", "Deploy with the service key", "--tier", "qi", "--supporting", ev, "--content", "use "+openai.Text)
		wantCode(t, r, 1, "statement and content holds a secret (openai-api-key")
		noLeak(t, openai.Secret, r.stdout, r.stderr)
	})

	t.Run("import refuses a secret and writes nothing", func(t *testing.T) {
		lines := `{"content":"fine"}` + "\n" + `{"content":"` + fx[1].Text + `"}` + "\n"
		p := e.writeFile("import.jsonl", []byte(lines))
		before := e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--limit", "0")["total"]
		r := e.run("record", "--jsonl", p)
		wantCode(t, r, 1, "import.jsonl:2: content holds a secret (anthropic-api-key")
		noLeak(t, fx[1].Secret, r.stdout, r.stderr)
		if after := e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--limit", "0")["total"]; after != before {
			t.Errorf("evidence count %v → %v after a refused import", before, after)
		}
	})

	t.Run("MCP palace_record refuses a secret", func(t *testing.T) {
		cs := e.mcpSession(t, nil)
		res := mcpCall(t, cs, "palace_record", map[string]any{"content": "env: " + fx[3].Text})
		got := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError || !strings.Contains(got, "huggingface-access-token") {
			t.Errorf("palace_record: error=%v %s", res.IsError, got)
		}
		noLeak(t, fx[3].Secret, got)
		ev := e.record("the maps call failed")
		res = mcpCall(t, cs, "palace_distill", map[string]any{"statement": "Keys live in " + fx[2].Secret, "tier": "qi", "supporting": []string{ev}})
		if got := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(got, "google-api-key") {
			t.Errorf("palace_distill: error=%v %s", res.IsError, got)
		}
	})

	var fixtureID string
	t.Run("allow marker passes", func(t *testing.T) {
		r := e.run("mailbox", "file", "--class", "fixture", "--what", "test key "+openai.Secret+" palace:allow-secret")
		wantCode(t, r, 0)
		fixtureID = e.record("fixture for the scanner test (palace:allow-secret)\n" + openai.Text)
	})

	t.Run("redact", func(t *testing.T) {
		if fixtureID == "" {
			t.Skip("no fixture evidence")
		}
		before := e.jsonOf("evidence", "show", fixtureID)
		e.vars = []string{"PALACE_MODE=agent"}
		wantCode(t, e.run("evidence", "redact", fixtureID, "--reason", "leaked key"), 3, "refused in agent mode")
		e.vars = nil
		wantCode(t, e.run("evidence", "redact", fixtureID), 2, "needs a reason")
		wantCode(t, e.run("evidence", "redact", "ev_nope", "--reason", "r"), 2, "no evidence ev_nope")

		r := e.run("evidence", "redact", fixtureID, "--reason", "leaked key, rotated")
		wantCode(t, r, 0)
		noLeak(t, openai.Secret, r.stdout)
		show := e.run("evidence", "show", fixtureID)
		wantCode(t, show, 0)
		if !strings.Contains(show.stdout, "[redacted by ") || !strings.Contains(show.stdout, "leaked key, rotated") {
			t.Errorf("evidence show:\n%s", show.stdout)
		}
		noLeak(t, openai.Secret, show.stdout)
		after := e.jsonOf("evidence", "show", fixtureID)
		if after["id"] != before["id"] || after["content_sha256"] != before["content_sha256"] || after["created_at"] != before["created_at"] {
			t.Errorf("row changed beyond its content:\nbefore %v\nafter  %v", before, after)
		}
		red, _ := after["redaction"].(map[string]any)
		if red["reason"] != "leaked key, rotated" || red["actor"] == "" || red["actor_type"] != "human" {
			t.Errorf("redaction record %v", after["redaction"])
		}
		// The full-text index forgets the old text and finds the notice.
		word := "scanner"
		if got := e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--query", word)["total"]; got != float64(0) {
			t.Errorf("search for %q still finds %v rows", word, got)
		}
		if got := e.jsonOf("evidence", "list", "--anchor", "all", "--all-repos", "--query", "rotated")["total"]; got != float64(1) {
			t.Errorf("search for the notice finds %v rows", got)
		}
		wantCode(t, e.run("evidence", "redact", fixtureID, "--reason", "again"), 2, "already redacted")
		var list map[string]any
		if err := json.Unmarshal([]byte(e.ok("evidence", "list", "--anchor", "all", "--all-repos", "--format", "json")), &list); err != nil {
			t.Fatal(err)
		}
		noLeak(t, openai.Secret, e.ok("evidence", "list", "--anchor", "all", "--all-repos", "--format", "json"))
	})
}
