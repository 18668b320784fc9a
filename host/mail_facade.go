package host

import (
	"context"

	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/host/mailbox"
)

// The mailbox front end is package mail; host names its types under their
// old names and binds it to the host's home, workspace, actor, clock and
// policy set.

// Mailbox front-end types (see package mail).
type (
	Mail             = mail.Mail
	MailCheckRequest = mail.CheckRequest
	MailCheckReport  = mail.CheckReport
	MailDistribution = mail.Distribution
	BoxCheckRequest  = mail.BoxCheckRequest
)

// Mail returns the host's mailbox face. It shares the host's policy set, so
// a watcher's swaps apply to mailbox checks too.
func (h *Host) Mail() *Mail { return mail.New(h.mailConfig()) }

func (h *Host) mailConfig() mail.Config {
	return mail.Config{Home: h.home, Loc: h.loc, Actor: h.actor, Now: h.now, PolicySources: h.PolicySources, Policies: h.Policies}
}

// Mailbox returns the mailbox under the host's home, stamping letters with
// the host's clock.
func (h *Host) Mailbox() *mailbox.Mailbox {
	return &mailbox.Mailbox{Home: h.home, Now: h.now}
}

// OpenMail resolves the home and the workspace like Open, but opens no
// database and creates nothing: mailbox commands read and write only their
// own files. Policies load on first need (see Mail.Rules).
func OpenMail(ctx context.Context, opts Options) (*Mail, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return nil, err
	}
	return h.Mail(), nil
}

// CheckBox runs the mailbox check on one box's bytes with the team's
// rules (see Mail.CheckBox).
func (h *Host) CheckBox(ctx context.Context, req BoxCheckRequest) []mailbox.Finding {
	return h.Mail().CheckBox(ctx, req)
}

// CommittedBox returns the box at path as HEAD has it (see
// Mail.CommittedBox).
func (h *Host) CommittedBox(ctx context.Context, path string) ([]byte, error) {
	return h.Mail().CommittedBox(ctx, path)
}
