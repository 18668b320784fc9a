package mail

import (
	"context"
	"path/filepath"

	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/mailbox"
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

// CheckBox runs the mailbox check on one box with the team's Rules; a box in
// $PALACE_HOME is checked as the global box. A policy set that does not load
// fails the letters closed (PM101).
func (m *Mail) CheckBox(ctx context.Context, req BoxCheckRequest) []mailbox.Finding {
	path := req.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.loc.Dir, path)
	}
	rules, _ := m.Rules(ctx)
	opts := mailbox.CheckOptions{
		Global: m.Mailbox().IsGlobalBox(path),
		Base:   req.Base,
		Deny:   rules,
	}
	return mailbox.Check(ctx, req.Path, req.Content, opts)
}

// CommittedBox returns the box at path as HEAD has it; nil (no error) when
// the file is not in HEAD or not in a git checkout.
func (m *Mail) CommittedBox(ctx context.Context, path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.loc.Dir, path)
	}
	blob, err := mailbox.Committed(ctx, path)
	if err != nil {
		return nil, hosterr.Internal(err, "read the committed box %s", path)
	}
	return blob, nil
}
