package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// InputError says that an input document does not fit a decision point's
// input type. The CLI maps it to exit 2.
type InputError struct {
	Point Point
	Err   error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("input for %s: %v", e.Point.Package(), e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// EvalJSON decodes a JSON input for point p strictly (an unknown field is
// an InputError naming it), evaluates it exactly as palace would, and
// returns the typed output (for mailbox, the sorted deny messages). Only
// mailbox returns an evaluation error; the others report failures in
// Decision.
func (s *Set) EvalJSON(ctx context.Context, p Point, input []byte) (any, Decision, error) {
	switch p {
	case Gate:
		return evalAs(ctx, p, input, s.Gate)
	case Scope:
		return evalAs(ctx, p, input, s.Scope)
	case Lanes:
		return evalAs(ctx, p, input, s.Lanes)
	case Research:
		return evalAs(ctx, p, input, s.Research)
	case Mailbox:
		var in MailboxInput
		if err := decodeStrict(input, &in); err != nil {
			return nil, Decision{Point: p}, &InputError{p, err}
		}
		return s.Mailbox(ctx, in)
	}
	return nil, Decision{Point: p}, fmt.Errorf("unknown decision point %q", p)
}

// evalAs decodes input strictly as I and decides it.
func evalAs[I, O any](ctx context.Context, p Point, input []byte, decide func(context.Context, I) (O, Decision)) (any, Decision, error) {
	var in I
	if err := decodeStrict(input, &in); err != nil {
		return nil, Decision{Point: p}, &InputError{p, err}
	}
	out, d := decide(ctx, in)
	return out, d, nil
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid JSON at byte %d: %w", se.Offset, err)
		}
		// encoding/json has no error type for an unknown field; rather than
		// read its message, look for one in the input itself.
		var raw any
		if json.Unmarshal(b, &raw) == nil {
			if p := unknownField(reflect.TypeOf(v), raw, ""); p != "" {
				return fmt.Errorf("unknown field %s: palace never sends it, so a policy cannot read it", p)
			}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %s must be %s, got JSON %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value: give one input document")
	}
	return nil
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
