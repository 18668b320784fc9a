package host

import (
	"github.com/palacehq/palace/internal/hosterr"
)

// oneOf checks a value against its enumeration, as a bad-input error
// naming the field and the values to choose from.
func oneOf[T ~string](field string, v T, allowed []T) error {
	return hosterr.OneOf(field, v, allowed)
}
