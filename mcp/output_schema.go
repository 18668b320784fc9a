package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/palacehq/palace/host/mailbox"
)

// outputTypes are the types whose JSON is not what their Go fields say:
// raw JSON (an event's data and decision) is any value, and a letter's
// external field is true or the place it is tracked.
var outputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage]():  {},
	reflect.TypeFor[mailbox.External](): {Types: []string{"boolean", "string"}},
}

// outputOf is the output schema of a tool whose structuredContent is the
// JSON of a T: inferred from T's fields and json tags, as the input schemas
// are, so a client can validate and use a result without guessing.
func outputOf[T any](desc string) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: outputTypes})
	if err != nil {
		// A programming error, caught by every test that builds a server.
		panic(fmt.Sprintf("mcp: output schema of %T: %v", *new(T), err))
	}
	s.Description = desc
	return s
}

// returning sets the tool's output schema.
func (t tool) returning(s *jsonschema.Schema) tool {
	t.def.OutputSchema = s
	return t
}
