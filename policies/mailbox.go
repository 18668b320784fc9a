package policies

import (
	"context"
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// MailboxInput is the input of palace.mailbox: one letter of one box.
type MailboxInput struct {
	// Box is "project" for <repo>/.palace/inbox.jsonl, "global" for
	// $PALACE_HOME/inbox.jsonl and "spool" for the field-report spool.
	Box string `json:"box"`
	// Path is the box file as the user named it; Line is 1-based.
	Path string `json:"path"`
	Line int    `json:"line"`
	// Letter is the parsed JSON object of that line.
	Letter map[string]any `json:"letter"`
}

// Mailbox evaluates palace.mailbox for one letter and returns its deny
// messages, sorted. It fails closed: any policy failure is an error.
func (s *Set) Mailbox(ctx context.Context, in MailboxInput) ([]string, Decision, error) {
	d := s.decision(Mailbox)
	if d.Engine == EngineGo {
		// The embedded default denies nothing: the built-in checks are Go's.
		return []string{}, d, nil
	}
	v, err := s.decide(ctx, Mailbox, in)
	if err == nil {
		var msgs []string
		if msgs, err = decodeMailbox(v); err == nil {
			return msgs, d, nil
		}
	}
	d.Error = err.Error()
	return nil, d, fmt.Errorf("policy %s failed: %w", s.who(Mailbox), err)
}

// decodeMailbox accepts a set (or array) of strings.
func decodeMailbox(v ast.Value) ([]string, error) {
	var terms []*ast.Term
	switch x := v.(type) {
	case ast.Set:
		terms = x.Slice()
	case *ast.Array:
		for i := range x.Len() {
			terms = append(terms, x.Elem(i))
		}
	default:
		return nil, shapeErr(Mailbox, "deny", "a set of strings", v)
	}
	out := make([]string, 0, len(terms))
	for i, t := range terms {
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil, shapeErr(Mailbox, fmt.Sprintf("deny[%d]", i), "a string", t.Value)
		}
		out = append(out, string(s))
	}
	slices.Sort(out)
	return out, nil
}
