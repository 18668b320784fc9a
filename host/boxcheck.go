package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/host/mailbox"
	"github.com/palacehq/palace/policies"
)

// BoxCheckRequest asks for the mailbox check of one box's bytes, as an
// editor holds them.
type BoxCheckRequest struct {
	// Path is the box file (absolute, or relative to the host's directory).
	Path string
	// Content is the box's bytes (an unsaved buffer, or the file).
	Content []byte
	// Base is the committed version to check history against (PM006); nil
	// skips the history check. CommittedBox reads it.
	Base []byte
}

// CheckBox runs the mailbox check (mailbox.Check, the engine of `palace
// mailbox check`) on one box with the team's palace.mailbox deny rules: a
// box in $PALACE_HOME is checked as the global box. A policy set that does
// not load fails the letters closed (PM101), as the hook does.
func (h *Host) CheckBox(ctx context.Context, req BoxCheckRequest) []mailbox.Finding {
	path := req.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.loc.Dir, path)
	}
	opts := mailbox.CheckOptions{
		Global: filepath.Clean(filepath.Dir(path)) == filepath.Clean(h.home),
		Base:   req.Base,
		Deny:   boxDeny{h: h},
	}
	return mailbox.Check(ctx, req.Path, req.Content, opts)
}

// CommittedBox returns the box at path as HEAD has it; nil (no error) when
// the file is not in HEAD or not in a git checkout.
func (h *Host) CommittedBox(ctx context.Context, path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.loc.Dir, path)
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "blob", "HEAD:./"+filepath.Base(path))
	cmd.Dir = filepath.Dir(path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		return nil, nil // not in HEAD, no HEAD yet, or not a checkout
	case err != nil:
		return nil, internal(err, "read the committed box %s: %s", path, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// boxDeny is the team's palace.mailbox policy as mailbox.Check sees it.
type boxDeny struct{ h *Host }

var _ mailbox.DenyRules = boxDeny{}

func (d boxDeny) Deny(ctx context.Context, in mailbox.DenyInput) ([]string, error) {
	set, err := d.h.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("the policy set did not load: %w", err)
	}
	raw, err := json.Marshal(in.Letter)
	if err != nil {
		return nil, fmt.Errorf("encode letter: %w", err)
	}
	var letter map[string]any
	if err := json.Unmarshal(raw, &letter); err != nil {
		return nil, fmt.Errorf("encode letter: %w", err)
	}
	box := "project"
	if in.Box == "global" {
		box = "global"
	}
	msgs, _, err := set.Mailbox(ctx, policies.MailboxInput{Box: box, Path: in.Path, Line: in.Line, Letter: letter})
	return msgs, err
}
