package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/internal/lazyregexp"
	"github.com/palacehq/palace/mailbox"
)

// tool is one MCP tool: what tools/list shows and how tools/call runs it.
type tool struct {
	def  *sdk.Tool
	call func(context.Context, json.RawMessage) *sdk.CallToolResult
}

// output is what a tool returns. On success Value becomes the result's
// structuredContent (it must marshal to a JSON object) and Text the text
// content a model reads, defaulting to Value's JSON; Partial is dropped.
// On failure only Partial is kept: an answer that explains the error (a
// gate's reasons for a denied promote), shown as JSON after the message.
type output struct {
	Value   any
	Text    string
	Partial any
}

// hints are a tool's MCP annotations. The zero value is a tool that adds
// to the palace without destroying anything.
type hints struct {
	readOnly, destructive, idempotent bool
}

// newTool builds a tool whose arguments decode strictly into In. The input
// schema is inferred from In (jsonschema tags are the descriptions a model
// reads); enums adds the allowed values of string (or string list)
// properties, by property name.
func newTool[In any](name, title, desc string, h hints, enums map[string][]string, run func(context.Context, In) (output, error)) tool {
	schema, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: inputTypes})
	if err != nil {
		// A programming error, caught by every test that builds a server.
		panic(fmt.Sprintf("mcp: schema of %s: %v", name, err))
	}
	polishSchema(schema)
	portable(schema)
	for prop, vals := range enums {
		setEnum(schema, name, prop, vals)
	}
	def := &sdk.Tool{
		Name:        name,
		Title:       title,
		Description: desc,
		InputSchema: schema,
		// Every successful call returns its JSON object as structuredContent
		// (and the same JSON, or a rendering, as text).
		OutputSchema: &jsonschema.Schema{Type: "object", Description: "The result as a JSON object: the same value the CLI prints with --format json."},
		Annotations: &sdk.ToolAnnotations{
			Title:           title,
			ReadOnlyHint:    h.readOnly,
			DestructiveHint: &h.destructive,
			IdempotentHint:  h.idempotent || h.readOnly,
			OpenWorldHint:   new(bool),
		},
	}
	call := func(ctx context.Context, raw json.RawMessage) (res *sdk.CallToolResult) {
		// The server survives any input: a panic in a host operation becomes
		// this call's error, never the process's end.
		defer func() {
			if p := recover(); p != nil {
				res = errorResult(&host.Error{Kind: host.KindInternal,
					Msg: fmt.Sprintf("%s failed unexpectedly (a bug in palace; please report it with this message): %v\n%s", name, p, firstFrames(debug.Stack()))}, output{})
			}
		}()
		var in In
		if err := decodeArgs(name, raw, &in, schema); err != nil {
			return errorResult(err, output{})
		}
		out, err := run(ctx, in)
		if err != nil {
			return errorResult(err, out)
		}
		return okResult(out)
	}
	return tool{def: def, call: call}
}

// inputTypes are the argument types whose JSON is not what their Go type
// says: a json.RawMessage argument (a research report) is a JSON object,
// which the server decodes itself, not the array of bytes it would infer to.
var inputTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Type: "object"},
}

// Id patterns: a prefix and 26 characters of lower-case Crockford base32.
const (
	cardIDPattern     = "^kc_[0-9a-hjkmnp-tv-z]{26}$"
	evidenceIDPattern = "^ev_[0-9a-hjkmnp-tv-z]{26}$"
	letterIDPattern   = "^[0-9a-f]{12}$"
)

// polishSchema makes an inferred input schema one that clients which build
// arguments from it (forms, CLI flags converted by "type") handle: an
// optional argument is a plain type left out of "required", never a
// ["null", T] union, and the ids, statements, dates and lists palace checks
// carry the same constraints in the schema.
func polishSchema(schema *jsonschema.Schema) {
	one := 1
	maxStatement := 280
	for name, p := range schema.Properties {
		plainType(p)
		if p.Items != nil {
			plainType(p.Items)
		}
		switch name {
		case "id":
			p.Pattern = cardIDPattern
		case "evidence_id":
			p.Pattern = evidenceIDPattern
		case "supporting", "verification", "teaching", "counterexample":
			p.Items.Pattern = evidenceIDPattern
			if slices.Contains(schema.Required, name) {
				p.MinItems = &one
			}
		case "answers":
			p.Items.Pattern = letterIDPattern
		case "statement":
			p.MaxLength = &maxStatement
		case "review_after", "expires_at":
			p.Format = "date"
		}
	}
}

// plainType turns the ["null", T] that a Go pointer or slice infers to
// into T.
func plainType(p *jsonschema.Schema) {
	if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
		p.Type = p.Types[0]
		if p.Type == "null" {
			p.Type = p.Types[1]
		}
		p.Types = nil
	}
}

// setEnum restricts property prop of the tool's schema to vals.
func setEnum(schema *jsonschema.Schema, tool, prop string, vals []string) {
	p, ok := schema.Properties[prop]
	if !ok {
		panic(fmt.Sprintf("mcp: %s has no property %q to restrict", tool, prop))
	}
	enum := make([]any, len(vals))
	for i, v := range vals {
		enum[i] = v
	}
	if p.Items != nil {
		p = p.Items
	}
	p.Enum = enum
}

func okResult(out output) *sdk.CallToolResult {
	if out.Text != "" {
		// The model reads Text; the SDK marshals Value once, when it
		// writes the response. Marshalling it here too would cost a second
		// encoding and a compaction of the bytes: on a context pack that is
		// most of the stdio overhead.
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out.Text}}, StructuredContent: out.Value}
	}
	b, err := marshal(out.Value)
	if err != nil {
		return errorResult(&host.Error{Kind: host.KindInternal, Msg: "encode result", Err: err}, output{})
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// errorResult is a tool error: isError, the message the CLI prints for err
// in MCP's words (tools and arguments, not commands and flags) first, then the partial result (a gate's answer to a denied promote) as
// JSON when there is one.
func errorResult(err error, out output) *sdk.CallToolResult {
	res := &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: Reword(ErrorText(err))}}}
	if out.Partial != nil && !isNil(out.Partial) {
		if b, merr := marshal(out.Partial); merr == nil {
			res.Content = append(res.Content, &sdk.TextContent{Text: string(b)})
		}
	}
	return res
}

// ErrorText is the message `palace` prints on stderr for err, without the
// trailing newline: "palace: " and the error, then a denial's reasons one
// per line. MCP tool errors carry exactly this text, so an agent reads what
// a human at the terminal would.
func ErrorText(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "palace: %v", err)
	var he *host.Error
	if errors.As(err, &he) {
		for _, r := range he.Reasons {
			fmt.Fprintf(&b, "\n  - %s", r)
		}
	}
	return b.String()
}

// marshal is JSON without HTML escaping (statements read as written), like
// the CLI's --format json, but compact: a model pays for every byte.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// firstFrames keeps the top of a panic's stack: enough to locate the bug
// without flooding the model's context.
func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 16 {
		lines = lines[:16]
	}
	return strings.Join(lines, "\n")
}

// decodeArgs decodes a tool's arguments into dst strictly: they must be one
// JSON object whose every member is a property of the tool. Errors are
// KindInvalid host errors naming the argument at fault.
func decodeArgs(toolName string, raw json.RawMessage, dst any, schema *jsonschema.Schema) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return &host.Error{Kind: host.KindInvalid, Field: "arguments",
			Msg: fmt.Sprintf("%s arguments must be a JSON object, got %s", toolName, jsonKind(raw))}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := describeType(te.Type)
		if p := schema.Properties[te.Field]; p != nil && p.Items != nil && te.Type != nil && te.Type.Kind() != reflect.Slice {
			// The error is about one item of a list argument.
			return &host.Error{Kind: host.KindInvalid, Field: te.Field,
				Msg: fmt.Sprintf("argument %q must be an array of %s, and one item is %s", te.Field, strings.TrimPrefix(strings.TrimPrefix(want, "a "), "an ")+"s", article(te.Value))}
		}
		return &host.Error{Kind: host.KindInvalid, Field: te.Field,
			Msg: fmt.Sprintf("argument %q must be %s, got %s", te.Field, want, article(te.Value))}
	}
	if name, ok := unknownArg(raw, schema); ok {
		return &host.Error{Kind: host.KindInvalid, Field: name,
			Msg: fmt.Sprintf("argument %q is not known to %s: its arguments are %s", name, toolName, strings.Join(propertyNames(schema), ", "))}
	}
	return &host.Error{Kind: host.KindInvalid, Field: "arguments",
		Msg: fmt.Sprintf("%s arguments are not valid: %s", toolName, strings.TrimPrefix(err.Error(), "json: "))}
}

// unknownArg returns the first member of the JSON object raw that is no
// property of schema. encoding/json reports an unknown field only in its
// message, so the arguments are read again rather than the message parsed.
// Names match case-insensitively, as encoding/json matches them.
func unknownArg(raw []byte, schema *jsonschema.Schema) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := t.(string)
		known := false
		for p := range schema.Properties {
			if strings.EqualFold(p, name) {
				known = true
				break
			}
		}
		if !known {
			return name, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) > 0 {
		return s.PropertyOrder
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	return names
}

// describeType names a Go type the way a JSON schema reader would.
func describeType(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return "an object"
}

// article puts "a"/"an" before a JSON value kind as encoding/json names it
// ("number", "string", "array", "object", "bool", "number 1.5").
func article(v string) string {
	if v == "" {
		return "another type"
	}
	if strings.IndexAny(v[:1], "aeiou") == 0 {
		return "an " + v
	}
	return "a " + v
}

func jsonKind(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// The host words its errors for the terminal: flags (--supporting) and
// commands (`palace record`). An MCP client has tools and arguments
// instead, so tool errors are reworded with these before they are sent.
var (
	// cliPhrases are whole hints that read better rewritten than mapped.
	cliPhrases = strings.NewReplacer(
		"pass --content TEXT, --file PATH or text on stdin", "pass the content argument",
		"at least one --supporting evidence ref is required", "at least one evidence id in argument \"supporting\" is required",
		"list them with `palace card list --all-repos`", "list them with palace_cards (action list, all_repos true)",
		"list it with `palace evidence list --all-repos`", "use an id palace_record returned",
	)
	cliCommand = lazyregexp.New("`palace ([a-z]+)(?: ([a-z]+))?([^`]*)`")
	cliFlag    = lazyregexp.New(`(^|[\s(,])--([a-z][a-z-]*)`)
	// argNames are the MCP argument names of flags whose name differs.
	argNames = map[string]string{
		"scope-path": "scope_paths", "scope-lang": "scope_languages", "scope-field": "scope_fields",
		"trigger-pattern": "trigger_patterns", "intent": "intents", "tool-need": "tool_needs", "tool": "tools",
		"tag": "tags", "evidence": "evidence_id", "instruction": "instructions",
	}
	// commandTools are the tools of the CLI commands hints name.
	commandTools = map[string]string{
		"record": ToolRecord, "distill": ToolDistill, "gate": ToolGate, "promote": ToolPromote, "demote": ToolDemote,
		"retire": ToolRetire, "publish": ToolPublish, "context": ToolContext, "brief": ToolBrief,
		"card show": ToolCards + " (action get)", "card list": ToolCards + " (action list)", "card events": ToolCards + " (action events)",
		"card link": ToolLink, "evidence show": "a card id (kc_…) instead", "audit action": ToolAuditAction, "mailbox file": ToolMailboxFile,
	}
)

// Reword rewrites a host error message for MCP clients: each `palace
// COMMAND …` hint names the tool instead, and each --flag its argument.
func Reword(msg string) string {
	msg = cliPhrases.Replace(msg)
	msg = cliCommand.ReplaceAllStringFunc(msg, func(m string) string {
		sub := cliCommand.FindStringSubmatch(m)
		if t, ok := commandTools[sub[1]+" "+sub[2]]; ok {
			return t
		}
		if t, ok := commandTools[sub[1]]; ok && sub[1] != "card" && sub[1] != "evidence" {
			return t
		}
		return m
	})
	return cliFlag.ReplaceAllStringFunc(msg, func(m string) string {
		sub := cliFlag.FindStringSubmatch(m)
		name, ok := argNames[sub[2]]
		if !ok {
			name = strings.ReplaceAll(sub[2], "-", "_")
		}
		return sub[1] + name
	})
}

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
