package host_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
)

// TestEnumsMatchSchema writes every value of every host enumeration through
// the real store, so host's lists and the schema's CHECK constraints cannot
// drift apart unnoticed.
func TestEnumsMatchSchema(t *testing.T) {
	ctx := context.Background()
	// Inside a git checkout: the global anchor holds domain global only.
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	h, err := host.Open(ctx, host.Options{Home: filepath.Join(t.TempDir(), "home"), Cwd: repo})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var ids []string
	for _, p := range domain.Provenances {
		for _, d := range domain.Domains {
			ev, err := h.Intake().Record(ctx, intake.RecordRequest{Content: "fact " + string(p) + string(d), Provenance: string(p), Domain: string(d)})
			if err != nil {
				t.Fatalf("record provenance %s domain %s: %v", p, d, err)
			}
			ids = append(ids, ev.ID)
		}
	}
	n := 0
	for _, tier := range domain.Tiers {
		for _, pers := range domain.Persistences {
			for _, rp := range domain.RenderPrefs {
				n++
				_, err := h.Distill(ctx, intake.DistillRequest{
					Statement: fmt.Sprintf("card %d", n), Tier: string(tier), Persistence: string(pers), RenderPref: string(rp),
					Supporting: ids[:1], Verification: ids[1:2], Teaching: ids[2:3], Counterexample: ids[3:4],
				})
				if err != nil {
					t.Fatalf("distill tier %s persistence %s render %s: %v", tier, pers, rp, err)
				}
			}
		}
	}
	for _, status := range []string{"promoted", "canonical"} {
		if _, err := h.Distill(ctx, intake.DistillRequest{Statement: "direct " + status, Tier: "qi", Supporting: ids[:1], Direct: true, Status: status}); err != nil {
			t.Fatalf("direct %s: %v", status, err)
		}
	}
	if got := domain.AuthoritativeStatuses(); fmt.Sprint(got) != "[promoted canonical]" {
		t.Errorf("AuthoritativeStatuses() = %v", got)
	}
}

func TestResolveMode(t *testing.T) {
	tests := []struct {
		flag, env string
		fallback  host.Mode
		want      host.Mode
		err       bool
	}{
		{"", "", host.Human, host.Human, false},
		{"", "", host.Agent, host.Agent, false},
		{"agent", "", host.Human, host.Agent, false},
		{"human", "", host.Agent, host.Human, false},
		{"human", "agent", host.Human, host.Agent, false},
		{"", "agent", host.Human, host.Agent, false},
		{"agent", "human", host.Human, host.Agent, false},
		{"", "human", host.Agent, host.Human, false},
		{"root", "", host.Human, "", true},
		{"", "robot", host.Human, "", true},
	}
	for _, tt := range tests {
		got, err := host.ResolveMode(tt.flag, tt.env, tt.fallback)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ResolveMode(%q, %q, %s) = %q, %v; want %q, err %v", tt.flag, tt.env, tt.fallback, got, err, tt.want, tt.err)
		}
		if err != nil && host.ExitCode(err) != 2 {
			t.Errorf("bad mode exit code = %d, want 2", host.ExitCode(err))
		}
	}
}
