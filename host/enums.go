package host

import (
	"strings"

	"github.com/palacehq/palace/host/internal/hosterr"
)

// oneOf checks a value against its enumeration, as a bad-input error
// naming the field and the values to choose from.
func oneOf[T ~string](field string, v T, allowed []T) error {
	return hosterr.OneOf(field, v, allowed)
}

// normalizeStatement is the form duplicate detection compares: lower case,
// single spaces, no trailing sentence punctuation.
func normalizeStatement(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!;: ")
}
