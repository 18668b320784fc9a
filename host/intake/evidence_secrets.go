package intake

import (
	"fmt"
	"strings"

	"github.com/palacehq/palace/secrets"
)

// RefuseSecrets is the intake check for text that would be stored: evidence
// content (record, import, MCP) and a card's statement and content
// (distill). Text holding a secret is refused as a "no" (exit 1) naming each
// finding by rule and location, with the secret redacted. The marker
// palace:allow-secret anywhere in the text lets a deliberate fixture through
// (evidence is often a multi-line snippet, so the marker is not tied to the
// secret's line as it is in a letter).
func RefuseSecrets(field, text string) error {
	if strings.Contains(text, secrets.AllowPragma) {
		return nil
	}
	found := secrets.ScanString(text)
	if len(found) == 0 {
		return nil
	}
	reasons := make([]string, len(found))
	for i, f := range found {
		reasons[i] = fmt.Sprintf("%s at line %d, column %d: %s", f.Rule, f.Line, f.Column, f.Redacted)
	}
	noun := "a secret"
	if len(found) > 1 {
		noun = fmt.Sprintf("%d secrets", len(found))
	}
	return &Error{Kind: KindDenied, Field: field, Reasons: reasons,
		Msg: fmt.Sprintf("%s holds %s (%s): nothing was stored; remove it, or mark a deliberate test fixture with %q in the text",
			field, noun, reasons[0], secrets.AllowPragma)}
}
