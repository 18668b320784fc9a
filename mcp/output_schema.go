package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/palacehq/palace/mailbox"
)

// outputTypes are the types whose JSON is not what their Go fields say:
// raw JSON (an event's data and decision) is a free-form object, and a
// letter's external field is true or the place it is tracked. They are
// written in the portable form (no type arrays, no bare true) because the
// inference hands these values out as they are.
var outputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage]():  {Type: "object"},
	reflect.TypeFor[mailbox.External](): {AnyOf: []*jsonschema.Schema{{Type: "boolean"}, {Type: "string"}}},
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
	portable(s)
	s.Description = desc
	return s
}

// returning sets the tool's output schema.
func (t tool) returning(s *jsonschema.Schema) tool {
	t.def.OutputSchema = s
	return t
}

// portable rewrites s in place into the JSON Schema that every client
// reads the same way: a type array (["null", "array"], which a Go slice or
// pointer infers to, since nil marshals as null) becomes anyOf branches of
// one type each. Clients that map tool schemas onto a single-type dialect
// (Gemini's function declarations, the Inspector's --strict check, ajv's
// strict mode) refuse or drop type arrays; anyOf keeps the same contract.
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, c := range s.Properties {
		portable(c)
	}
	for _, c := range s.Defs {
		portable(c)
	}
	for _, c := range s.PatternProperties {
		portable(c)
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems, s.ItemsArray} {
		for _, c := range list {
			portable(c)
		}
	}
	portable(s.Items)
	portable(s.AdditionalProperties)
	if len(s.Types) < 2 {
		return
	}
	types := slices.Clone(s.Types)
	// null first: the branch a reader skips to get at the value's shape.
	slices.SortStableFunc(types, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "null":
			return -1
		case b == "null":
			return 1
		}
		return 0
	})
	shape := *s
	shape.Types, shape.Description, shape.Title = nil, "", ""
	branches := make([]*jsonschema.Schema, 0, len(types))
	for _, t := range types {
		if t == "null" {
			branches = append(branches, &jsonschema.Schema{Type: "null"})
			continue
		}
		b := shape
		b.Type = t
		branches = append(branches, &b)
	}
	*s = jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: branches}
}
