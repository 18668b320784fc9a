package main

import (
	"strings"
	"testing"
)

func TestAdoptChecksTheRecord(t *testing.T) {
	e := newEnv(t)
	ev := e.record("WAL mode keeps readers off the writer", "--field", "storage")
	card := e.distill("Open SQLite in WAL mode", "shu", "--field", "storage", "--supporting", ev, "--direct", "--status", "promoted", "--reason", "seed")
	pack := e.jsonOf("context", "sqlite wal mode")
	rq := pack["request_id"].(string)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown signal", []string{"adopt", "liked", "--card", card}, 2, `signal "liked" is not valid: use one of used, accepted, rejected, miss, rollback, contradiction, neutral`},
		{"card signal without card", []string{"adopt", "used", "--note", "x"}, 2, "signal used needs --card ID"},
		{"unknown card", []string{"adopt", "used", "--card", "kc_nope", "--note", "x"}, 2, "card kc_nope does not exist"},
		{"empty miss", []string{"adopt", "miss"}, 2, "a miss needs --note"},
		{"unknown evidence", []string{"adopt", "contradiction", "--card", card, "--evidence", "ev_nope", "--note", "x"}, 2, "evidence ev_nope does not exist"},
		{"thin outcome", []string{"adopt", "rejected", "--card", card}, 2, "pass --allow-warnings to record it anyway"},
		{"contradiction without evidence", []string{"adopt", "contradiction", "--card", card, "--note", "saw a lock"}, 2, "a contradiction without --evidence"},
		{"unknown request", []string{"adopt", "used", "--card", card, "--request", "rq_gone"}, 2, "request rq_gone is not on record"},
		{"check of a thin record", []string{"adopt", "rejected", "--card", card, "--check"}, 1, ""},
		{"check of a good record", []string{"adopt", "used", "--card", card, "--request", rq, "--check"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, e.run(tc.args...), tc.code, tc.want)
		})
	}
	if got := e.jsonOf("adoption", "stats"); got["total"] != float64(0) {
		t.Fatalf("refused and checked signals were written: %v", got)
	}
	// Agent mode records signals: they are evidence, not authority.
	e.vars = []string{"PALACE_MODE=agent"}
	e.ok("adopt", "used", "--card", card, "--request", rq, "--note", "followed it")
	e.ok("adopt", "rejected", "--card", card, "--allow-warnings")
	e.ok("adopt", "miss", "--query", "how to vacuum without blocking")
	contra := e.record("a reader blocked the writer in WAL mode under NFS", "--field", "storage")
	e.ok("adopt", "contradiction", "--card", card, "--evidence", contra, "--note", "blocked on NFS")
	e.vars = nil

	st := e.jsonOf("adoption", "stats", "--card", card)
	sig := st["signals"].(map[string]any)
	if st["total"] != float64(3) || sig["used"] != float64(1) || sig["rejected"] != float64(1) || sig["contradiction"] != float64(1) {
		t.Errorf("stats: %v", st)
	}
	rev := e.ok("adoption", "review")
	for _, want := range []string{"how to vacuum without blocking", "turned down", "contradicted", "contradiction: blocked on NFS"} {
		if !strings.Contains(rev, want) {
			t.Errorf("review does not mention %q:\n%s", want, rev)
		}
	}
	wantCode(t, e.run("adoption", "stats", "--since", "last week"), 2, "--since \"last week\" is not a date")
	if got := e.jsonOf("adoption", "stats", "--since", "2999-01-01"); got["total"] != float64(0) {
		t.Errorf("--since in the future: %v", got)
	}
	audit := e.ok("audit")
	// The contradiction contested the promoted card (its status stays).
	for _, want := range []string{"used 1 · rejected 1 · contradiction 1", "warning contested:", "warning contradicted:", "palace demote " + card + " --reason \"contradicted\" --counterexample " + contra} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit does not show %q:\n%s", want, audit)
		}
	}
	// Signals change no status.
	if got := e.jsonOf("card", "show", card); got["status"] != "promoted" {
		t.Errorf("status %v after signals", got["status"])
	}
}

// A repeated signal is recorded and says it counts nowhere; a check says
// so before anything is written.
func TestAdoptRepeatCountsOnce(t *testing.T) {
	e := newEnv(t)
	ev := e.record("WAL mode keeps readers off the writer", "--field", "storage")
	card := e.distill("Open SQLite in WAL mode", "shu", "--field", "storage", "--supporting", ev, "--direct", "--status", "promoted", "--reason", "seed")
	e.vars = []string{"PALACE_MODE=agent"}
	first := e.jsonOf("adopt", "rejected", "--card", card, "--note", "ignore this card")
	if first["counts"] != true || first["written"] != true {
		t.Fatalf("first signal: %v", first)
	}
	check := e.jsonOf("adopt", "rejected", "--card", card, "--note", "ignore this card", "--check")
	if check["written"] != false || check["counts"] != false || !strings.Contains(check["not_counted"].(string), "a repeat") {
		t.Errorf("check of a repeat: %v", check)
	}
	again := e.run("adopt", "rejected", "--card", card, "--note", "ignore this card")
	wantCode(t, again, 0)
	if !strings.Contains(again.stdout, "recorded and counts nowhere: a repeat") {
		t.Errorf("repeat: %s", again.stdout)
	}
	e.vars = nil
	if st := e.jsonOf("adoption", "stats", "--card", card); st["total"] != float64(2) {
		t.Errorf("stats: %v; want both signals on record", st)
	}
}
