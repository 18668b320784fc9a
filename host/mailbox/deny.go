package mailbox

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// DenyInput is the input of the palace.mailbox decision point for one
// letter (DESIGN §5): {box, path, line, letter}, plus the letter's id.
type DenyInput struct {
	// Box is "repo" or "global".
	Box string `json:"box"`
	// Path is the box file as given to Check.
	Path string `json:"path"`
	// Line is the letter's 1-based line.
	Line   int    `json:"line"`
	ID     string `json:"id"`
	Letter Letter `json:"letter"`
}

// DenyRules is the team's palace.mailbox policy as the mailbox sees it;
// host implements it with the policy engine, so this package never touches
// one. Deny returns the deny messages for one letter (conftest style: none
// means allowed). An error is reported as PM101 on that letter: the check
// fails closed.
type DenyRules interface {
	Deny(ctx context.Context, in DenyInput) ([]string, error)
}

// BatchDenyRules is an optional interface (found by type assertion): Check
// then makes one call for the whole box instead of one per letter, which
// matters for a 100k-letter box. out[i] holds the messages for in[i]; an
// error refuses every letter of the batch (PM101).
type BatchDenyRules interface {
	DenyRules
	DenyBatch(ctx context.Context, in []DenyInput) ([][]string, error)
}

// maxPolicyFailures stops calling a failing policy: after this many errors
// the remaining letters get one PM101 together instead of each waiting out
// a broken policy's timeout.
const maxPolicyFailures = 10

// ownCode matches a policy message that carries its own code.
var ownCode = regexp.MustCompile(`^PM1(0[2-9]|[1-9][0-9])\b[:\s]*`)

func (c *checker) denyFindings(ctx context.Context, opts CheckOptions, letters []int) []Finding {
	if opts.Deny == nil || len(letters) == 0 {
		return nil
	}
	box := "repo"
	if opts.Global {
		box = "global"
	}
	inputs := make([]DenyInput, len(letters))
	for k, i := range letters {
		r := &c.results[i]
		inputs[k] = DenyInput{Box: box, Path: c.path, Line: i + 1, ID: r.id, Letter: r.letter}
	}
	var out []Finding
	emit := func(i int, msgs []string) {
		for _, m := range msgs {
			code := CodePolicyDeny
			if loc := ownCode.FindStringIndex(m); loc != nil {
				code = strings.TrimRight(m[:5], ": \t")
				m = m[loc[1]:]
			}
			f := c.finding(i, 1, code, SeverityError, m)
			f.Rule = "palace.mailbox"
			out = append(out, f)
		}
	}
	failed := func(i int, err error, what string) {
		f := c.finding(i, 1, CodePolicyError, SeverityError,
			fmt.Sprintf("palace.mailbox policy failed%s: %v; the letter is refused until the policy evaluates (fail closed)", what, err))
		f.Rule = "palace.mailbox"
		out = append(out, f)
	}
	if b, ok := opts.Deny.(BatchDenyRules); ok {
		res, err := b.DenyBatch(ctx, inputs)
		if err == nil && len(res) != len(inputs) {
			err = fmt.Errorf("policy returned %d results for %d letters", len(res), len(inputs))
		}
		if err != nil {
			for _, i := range letters {
				failed(i, err, "")
			}
			return out
		}
		for k, i := range letters {
			emit(i, res[k])
		}
		return out
	}
	failures := 0
	for k, i := range letters {
		if failures >= maxPolicyFailures {
			failed(i, fmt.Errorf("not evaluated after %d failures", failures), fmt.Sprintf(" for this and %d more letters", len(letters)-k-1))
			break
		}
		msgs, err := opts.Deny.Deny(ctx, inputs[k])
		if err != nil {
			failures++
			failed(i, err, "")
			continue
		}
		emit(i, msgs)
	}
	return out
}
