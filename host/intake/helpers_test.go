package intake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
)

// newIntake is the intake of f's palace, built as host builds it, with an
// echo guard of its own.
func newIntake(f *jobtest.Fixture) *intake.Intake {
	return intake.New(intake.Config{Env: f.Env, Gate: f.Keeper(), Echo: &intake.EchoGuard{}, EnsureAnchor: f.EnsureAnchor, Door: f.Door()})
}

// wantKind fails the test unless err is an error of kind k whose message
// (with its reasons) holds every want.
func wantKind(t *testing.T, what string, err error, k hosterr.Kind, want ...string) {
	t.Helper()
	var he *hosterr.Error
	if err == nil || !errors.As(err, &he) || he.Kind != k {
		t.Errorf("%s: err = %v, want kind %v", what, err, k)
		return
	}
	msg := err.Error() + " | " + strings.Join(he.Reasons, " | ")
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %q does not say %q", what, msg, w)
		}
	}
}

// evidenceCount is how many evidence rows f's palace holds.
func evidenceCount(t *testing.T, f *jobtest.Fixture) int {
	t.Helper()
	n, err := f.Store.CountEvidence(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// token is a credential the secret scanner knows.
const token = "ghp_k9Xq2Lm8Vb3Nw7Rt5Yz1Pq4Hs6Jd0Fg2Ka8Cu" // palace:allow-secret (a test fixture)
