package host

import (
	"context"
	"errors"
	"strings"

	"github.com/palacehq/palace/host/mailbox"
)

// FileLetter appends a field report to this palace's spool
// through host/mailbox, for the MCP tool palace_mailbox_file and any other
// surface that files letters. The letter's agent defaults to the host's
// actor and its ts to now. Errors are classified like every host error: a
// letter that is not valid is KindInvalid naming the field; one that trips
// the secret scanner is KindDenied and writes nothing; a failed write is
// KindInternal.
func (h *Host) FileLetter(ctx context.Context, l mailbox.Letter) (mailbox.Filed, error) {
	if strings.TrimSpace(l.Agent) == "" {
		l.Agent = h.actor
	}
	m := &mailbox.Mailbox{Home: h.home, Now: h.now}
	filed, err := m.File(ctx, l)
	if err == nil {
		return filed, nil
	}
	var le *mailbox.LetterError
	var se *mailbox.SecretError
	switch {
	case errors.As(err, &le):
		return mailbox.Filed{}, &Error{Kind: KindInvalid, Field: le.Field, Msg: le.Error()}
	case errors.As(err, &se):
		return mailbox.Filed{}, &Error{Kind: KindDenied, Field: "letter", Msg: se.Error()}
	}
	return mailbox.Filed{}, internal(err, "file letter")
}
