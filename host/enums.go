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

// normalizeStatement is the form duplicate detection compares: lower case,
// single spaces, no trailing sentence punctuation.
func normalizeStatement(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!;: ")
}
