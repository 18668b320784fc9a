package benchgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/palacehq/palace/host"
)

// Epoch is the clock of generated benchmark palaces: their telemetry is
// dated around it, so a benchmark host opened with Now = Epoch sees the
// palace as it was generated.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Palace returns the home and the git checkout (repository 0 of spec) of a
// generated palace cached under dir, generating it on first use; without the
// "complete.json" marker dir is rebuilt. extra, when not nil, runs on the
// open host before the marker is written. Callers that write must work on a
// copy of home.
func Palace(ctx context.Context, dir string, spec Spec, progress func(Progress), extra func(*host.Host) error) (home, repo string, err error) {
	home, repo = filepath.Join(dir, "home"), filepath.Join(dir, "repo")
	marker := filepath.Join(dir, "complete.json")
	if _, err := os.Stat(marker); err == nil {
		return home, repo, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("bench palace %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", "", fmt.Errorf("bench palace %s: %w", dir, err)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return "", "", fmt.Errorf("bench palace %s: %w", dir, err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/bench/repo-00"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("bench palace: git %v: %w: %s", args, err, out)
		}
	}
	h, err := host.Open(ctx, host.Options{Home: home, Cwd: repo, Mode: host.Human, Now: func() time.Time { return Epoch }})
	if err != nil {
		return "", "", err
	}
	defer h.Close()
	st, err := Generate(ctx, h, spec, progress)
	if err != nil {
		return "", "", err
	}
	if extra != nil {
		if err := extra(h); err != nil {
			return "", "", fmt.Errorf("bench palace %s: %w", dir, err)
		}
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(marker, raw, 0o644); err != nil {
		return "", "", fmt.Errorf("bench palace %s: %w", dir, err)
	}
	return home, repo, nil
}

// CopyHome copies the database of the palace home src (with its log) into
// dst, which it creates, and syncs the copy, so a writing benchmark does not
// measure the writeback of the fresh copy (BENCHMARKS.md).
func CopyHome(src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("copy palace home: %w", err)
	}
	for _, f := range []string{"palace.db", "palace.db-wal"} {
		if err := copySynced(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return fmt.Errorf("copy palace home %s: %w", src, err)
		}
	}
	return nil
}

func copySynced(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
