package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// contextEnv is a palace with one scoped, promoted card that lands inline
// for contextArgs.
func contextEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	sup := e.record("WAL lets readers run during writes", "--field", "storage", "--source-ref", "store/store.go:40")
	ver := e.record("verified: 200 parallel runs, no lock errors", "--field", "storage")
	id := e.distill("Open SQLite in WAL mode with a busy timeout", "shu", "--field", "storage", "--supporting", sup,
		"--verification", ver, "--scope-path", "store/**", "--scope-lang", "go", "--scope-field", "storage",
		"--intent", "debug,storage", "--direct", "--status", "promoted")
	return e, id
}

var contextArgs = []string{"--file", "store/store.go", "--field", "storage", "--intent", "debug", "--intent", "storage"}

func TestCLIContextTextIsTheRenderedPack(t *testing.T) {
	e, id := contextEnv(t)
	args := append([]string{"context", "--dry-run", "--instruction", "answer in plain text, with commas"}, contextArgs...)
	var pack struct {
		Rendered string `json:"rendered"`
		Items    []struct {
			ID        string `json:"id"`
			Citations []struct {
				EvidenceID string `json:"evidence_id"`
				SourceRef  string `json:"source_ref"`
			} `json:"citations"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(e.ok(append(args, "--format", "json")...)), &pack); err != nil {
		t.Fatal(err)
	}
	if len(pack.Items) != 1 || pack.Items[0].ID != id || len(pack.Items[0].Citations) != 2 {
		t.Fatalf("items = %+v", pack.Items)
	}
	text := e.ok(args...)
	if text != pack.Rendered {
		t.Errorf("text output is not the rendered pack:\n%s\n---\n%s", text, pack.Rendered)
	}
	if !strings.Contains(text, "- answer in plain text, with commas\n") {
		t.Errorf("an instruction with commas was split:\n%s", text)
	}
	explained := e.ok(append(args, "--explain")...)
	if !strings.HasPrefix(explained, text) || !strings.Contains(explained, "# why (not part of the pack)") ||
		!strings.Contains(explained, id+"  shu  lane core → inline_compact  salience 81") {
		t.Errorf("--explain output:\n%s", explained)
	}
}

func TestCLIContextBriefAuditExitCodes(t *testing.T) {
	e, id := contextEnv(t)
	tests := []struct {
		name   string
		vars   []string
		args   []string
		code   int
		stderr string
	}{
		{"context runs in agent mode", []string{"PALACE_MODE=agent"}, []string{"context", "--dry-run"}, 0, ""},
		{"brief runs in agent mode", []string{"PALACE_MODE=agent"}, []string{"brief", "wal"}, 0, ""},
		{"audit reads in agent mode", []string{"PALACE_MODE=agent"}, []string{"audit"}, 0, ""},
		{"audit action refused in agent mode", []string{"PALACE_MODE=agent"}, []string{"audit", "action", id, "--action", "mark_foundational"}, 3, "refused in agent mode"},
		{"--mode human cannot raise an agent", []string{"PALACE_MODE=agent"}, []string{"--mode", "human", "audit", "action", id, "--action", "prefer_compact"}, 3, "refused in agent mode"},
		{"bad budget", nil, []string{"context", "--budget", "-5"}, 2, "--budget -5 is negative"},
		{"zero budget", nil, []string{"context", "--budget", "0"}, 2, "--budget 0 leaves no room for any card"},
		{"unknown audit action", nil, []string{"audit", "action", id, "--action", "delete"}, 2, `action "delete" is not valid`},
		{"widening through the audit", nil, []string{"audit", "action", id, "--action", "rescope", "--anchor", "repo"}, 2, "palace publish " + id + " --to repo"},
		{"unknown lane filter", nil, []string{"audit", "--lane", "hot"}, 2, `lane "hot" is not valid`},
		{"human audit action", nil, []string{"audit", "action", id, "--action", "set_review_after", "--value", "2027-01-01", "--reason", "yearly"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.vars = tt.vars
			defer func() { e.vars = nil }()
			wantCode(t, e.run(tt.args...), tt.code, tt.stderr)
		})
	}
	audit := e.jsonOf("audit")
	rows := audit["rows"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["review_after"] != "2027-01-01T00:00:00.000Z" {
		t.Errorf("audit after set_review_after = %v", rows)
	}
}

// TestMaintenanceAndDoctorTelemetry runs context requests, then
// `palace maintenance` and `palace doctor` as the real binary.
func TestMaintenanceAndDoctorTelemetry(t *testing.T) {
	e := newEnv(t)
	ev1 := e.record("writes queue behind the lock")
	ev2 := e.record("checked with two writers")
	e.distill("Keep write transactions short", "shu", "--supporting", ev1, "--verification", ev2)
	for range 3 {
		e.ok("context", "write transactions", "--include-candidates")
	}
	doc := e.jsonOf("doctor")
	found := false
	for _, c := range doc["checks"].([]any) {
		c := c.(map[string]any)
		if c["name"] == "telemetry" {
			found = true
			if d := c["detail"].(string); !strings.Contains(d, "3 request records kept 30 days") {
				t.Errorf("doctor telemetry: %q", d)
			}
		}
	}
	if !found {
		t.Error("doctor has no telemetry line")
	}
	out := e.ok("maintenance", "--vacuum")
	if !strings.Contains(out, "dropped 0 request records older than 30 days; rebuilt the file") || !strings.Contains(out, "3 request records kept") {
		t.Errorf("maintenance: %q", out)
	}
	wantCode(t, e.run("maintenance", "--keep-days", "-1"), 2, "--keep-days")
	wantCode(t, e.run("--mode", "agent", "maintenance"), 3)
}
