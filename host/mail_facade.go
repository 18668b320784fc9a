package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/store"

	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/mailbox"
)

// The mailbox front end is package mail; host names its types under their
// old names and binds it to the host's home, workspace, actor, clock and
// policy set.

// Mail returns the host's mailbox face. It shares the host's policy set, so
// a watcher's swaps apply to mailbox checks too.
func (h *Host) Mail() *mail.Mail { return mail.New(h.mailConfig()) }

func (h *Host) mailConfig() mail.Config {
	return mail.Config{Home: h.home, Loc: h.loc, Actor: h.actor, Now: h.now, PolicySources: h.PolicySources, Policies: h.Policies,
		Checkouts: h.knownCheckouts}
}

// knownCheckouts are the checkouts of the repositories this palace holds
// memory of: each repo anchor named by a remote, at the path it was
// recorded from. Mailbox commands open no database, so the file is opened
// here only when it exists, and only for routing; a palace that cannot be
// read knows none (the letters wait, as they did).
func (h *Host) knownCheckouts(ctx context.Context) []mailbox.RegisteredBox {
	st := h.store
	if st == nil {
		path := filepath.Join(h.home, dbFile)
		if _, err := os.Stat(path); err != nil {
			return nil
		}
		var err error
		if st, err = store.Open(ctx, path); err != nil {
			return nil
		}
		defer st.Close()
	}
	anchors, err := st.Anchors(ctx)
	if err != nil {
		return nil
	}
	var out []mailbox.RegisteredBox
	for _, a := range anchors {
		identity := strings.TrimPrefix(a.Identity, "repo:")
		if a.Kind != string(domain.AnchorRepo) || a.Path == "" || identity == a.Path {
			continue
		}
		out = append(out, mailbox.RegisteredBox{Path: mailbox.BoxPath(a.Path), RepoRoot: a.Path, RepoIdentity: identity})
	}
	return out
}

// Mailbox returns the mailbox under the host's home, stamping letters with
// the host's clock.
func (h *Host) Mailbox() *mailbox.Mailbox {
	return &mailbox.Mailbox{Home: h.home, Now: h.now}
}

// OpenMail resolves the home and the workspace like Open, but opens no
// database and creates nothing: mailbox commands read and write only their
// own files, but for the routing of Distribute and Waiting, which reads
// the repository anchors of an existing database (knownCheckouts).
// Policies load on first need (see Mail.Rules).
func OpenMail(ctx context.Context, opts Options) (*mail.Mail, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return nil, err
	}
	return h.Mail(), nil
}

// CheckBox runs the mailbox check on one box's bytes with the team's
// rules (see Mail.CheckBox).
func (h *Host) CheckBox(ctx context.Context, req mail.BoxCheckRequest) []mailbox.Finding {
	return h.Mail().CheckBox(ctx, req)
}

// CommittedBox returns the box at path as HEAD has it (see
// Mail.CommittedBox).
func (h *Host) CommittedBox(ctx context.Context, path string) ([]byte, error) {
	return h.Mail().CommittedBox(ctx, path)
}
