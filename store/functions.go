package store

import (
	"database/sql/driver"
	"fmt"
	"sync"

	sqlite "modernc.org/sqlite"

	"github.com/palacehq/palace/domain"
)

// registerFunctions gives every connection of this process the SQL
// functions palace's own statements and migrations call, once, before the
// first connection opens.
var registerFunctions = sync.OnceValue(func() error {
	// palace_statement_norm(statement) is domain.NormalizeStatement: a
	// migration recomputes Card.StatementNorm with it when the normalized
	// form changes, so cards written before compare like new ones.
	return sqlite.RegisterDeterministicScalarFunction("palace_statement_norm", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return domain.NormalizeStatement(v), nil
		case []byte:
			return domain.NormalizeStatement(string(v)), nil
		case nil:
			return nil, nil
		}
		return nil, fmt.Errorf("palace_statement_norm: a statement is text, not %T", args[0])
	})
})
