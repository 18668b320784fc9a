package host

import (
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
)

// oneOf checks a value against its enumeration, as a bad-input error
// naming the field and the values to choose from.
func oneOf[T ~string](field string, v T, allowed []T) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return invalid(field, "%s %q is not valid: use one of %s", field, v, strings.Join(domain.Strings(allowed), ", "))
}

// normalizeStatement is the form duplicate detection compares
// (domain.NormalizeStatement).
func normalizeStatement(s string) string { return domain.NormalizeStatement(s) }
