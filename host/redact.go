package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/store"
)

// MaxRedactReasonRunes bounds the reason of a redaction.
const MaxRedactReasonRunes = 500

// RedactEvidence replaces the content of evidence id with a notice of who
// redacted it, when and why, keeping its other fields and the original
// content's SHA-256; it cannot be undone or repeated. Human mode only:
// evidence is the record agents learn from.
func (h *Host) RedactEvidence(ctx context.Context, id, reason string) (intake.Evidence, error) {
	if err := h.gatekeeper().RequireHuman("evidence redact"); err != nil {
		return intake.Evidence{}, err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return intake.Evidence{}, invalid("reason", "a redaction needs a reason: pass --reason TEXT (e.g. \"leaked API key, rotated\")")
	case !utf8.ValidString(reason):
		return intake.Evidence{}, invalid("reason", "reason is not valid UTF-8")
	case utf8.RuneCountInString(reason) > MaxRedactReasonRunes:
		return intake.Evidence{}, invalid("reason", "reason is %d characters, over %d: say briefly why", utf8.RuneCountInString(reason), MaxRedactReasonRunes)
	}
	if err := intake.RefuseSecrets("reason", reason); err != nil {
		return intake.Evidence{}, err
	}
	at := store.FormatTime(h.now())
	r := store.Redaction{
		EvidenceID: id,
		Notice:     fmt.Sprintf("[redacted by %s at %s: %s. The original content is gone; content_sha256 is its SHA-256.]", h.actor, at, reason),
		Reason:     reason,
		Actor:      h.actor,
		ActorType:  h.actorType(),
		CreatedAt:  at,
	}
	err := h.store.Tx(ctx, func(tx *store.Tx) error { return tx.RedactEvidence(ctx, r) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		return intake.Evidence{}, gatekeep.NotFound(err, "evidence", id)
	case errors.Is(err, store.ErrRedacted):
		return intake.Evidence{}, invalid("id", "evidence %s is already redacted", id)
	case err != nil:
		return intake.Evidence{}, internal(err, "redact evidence %s", id)
	}
	return h.ShowEvidence(ctx, id, true)
}
