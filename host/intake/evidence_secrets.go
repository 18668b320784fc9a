package intake

import (
	"fmt"
	"strings"

	"github.com/palacehq/palace/secrets"
)

// RefuseSecrets is the intake check for evidence content and a card's
// statement and content: a secret is refused as a "no" naming each finding
// redacted. The marker palace:allow-secret anywhere in the text (evidence is
// often a multi-line snippet) lets a deliberate fixture through.
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
