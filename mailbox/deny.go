package mailbox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DenyInput is the palace.mailbox input for one letter (policies/README.md).
type DenyInput struct {
	Box    string `json:"box"`  // "project" or "global"
	Path   string `json:"path"` // as given to Check
	Line   int    `json:"line"` // 1-based
	ID     string `json:"id"`
	Letter Letter `json:"letter"`
}

// DenyRules is the team's palace.mailbox policy, implemented by host so this
// package never touches the engine. Deny returns one letter's deny messages
// (none: allowed); an error is PM101 on that letter (fail closed).
type DenyRules interface {
	Deny(ctx context.Context, in DenyInput) ([]string, error)
}

// BatchDenyRules lets Check make one call for the whole box; out[i] answers
// in[i]. An error refuses every letter (PM101), except a *BatchError of the
// batch's length, which refuses only the letters it names.
type BatchDenyRules interface {
	DenyRules
	DenyBatch(ctx context.Context, in []DenyInput) ([][]string, error)
}

// BatchError reports the letters of a DenyBatch call that could not be
// evaluated: Errs[i] is in[i]'s error, nil for a letter whose result stands.
type BatchError struct {
	Errs []error
}

func (e *BatchError) Error() string {
	n, first := 0, error(nil)
	for _, err := range e.Errs {
		if err != nil {
			if n++; first == nil {
				first = err
			}
		}
	}
	if first == nil {
		return "no letter failed"
	}
	return fmt.Sprintf("%d of %d letters failed, first: %v", n, len(e.Errs), first)
}

// maxPolicyFailures: past this many policy errors the remaining letters
// share one PM101 instead of each waiting out a broken policy's timeout.
const maxPolicyFailures = 10

// ownCode matches a policy message that carries its own code.
var ownCode = regexp.MustCompile(`^PM1(0[2-9]|[1-9][0-9])\b[:\s]*`)

func (c *checker) denyFindings(ctx context.Context, opts CheckOptions, letters []int) []Finding {
	if opts.Deny == nil || len(letters) == 0 {
		return nil
	}
	box := "project"
	if opts.Global {
		box = "global"
	}
	inputs := make([]DenyInput, len(letters))
	for k, i := range letters {
		r := c.result(i)
		inputs[k] = DenyInput{Box: box, Path: c.path, Line: i + 1, ID: r.id.String(), Letter: *r.extra.letter}
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
	// The first maxPolicyFailures refusals get their error, then one finding
	// counts the rest.
	refused, summarized := 0, false
	refuse := func(i int, err error, more int) {
		if summarized {
			return
		}
		msg := fmt.Sprintf("palace.mailbox policy failed: %v; the letter is refused until the policy evaluates (fail closed)", err)
		if refused++; refused > maxPolicyFailures {
			summarized = true
			msg = fmt.Sprintf("palace.mailbox policy failed for this and %d more letters: %v; they are refused until the policy evaluates (fail closed)", more, err)
		}
		f := c.finding(i, 1, CodePolicyError, SeverityError, msg)
		f.Rule = "palace.mailbox"
		out = append(out, f)
	}
	if b, ok := opts.Deny.(BatchDenyRules); ok {
		res, err := b.DenyBatch(ctx, inputs)
		var be *BatchError
		partial := errors.As(err, &be) && len(be.Errs) == len(inputs) && len(res) == len(inputs)
		switch {
		case err == nil && len(res) != len(inputs):
			err = fmt.Errorf("policy returned %d results for %d letters", len(res), len(inputs))
		case be != nil && !partial:
			err = fmt.Errorf("policy returned %d results and %d errors for %d letters", len(res), len(be.Errs), len(inputs))
		}
		failedAfter := make([]int, len(letters)+1) // failedAfter[k]: failures in letters[k:]
		for k := len(letters) - 1; k >= 0; k-- {
			failedAfter[k] = failedAfter[k+1]
			if err != nil && (!partial || be.Errs[k] != nil) {
				failedAfter[k]++
			}
		}
		for k, i := range letters {
			switch {
			case err != nil && !partial:
				refuse(i, err, failedAfter[k+1])
			case partial && be.Errs[k] != nil:
				refuse(i, be.Errs[k], failedAfter[k+1])
			default:
				emit(i, res[k])
			}
		}
		return out
	}
	failures := 0
	for k, i := range letters {
		if failures >= maxPolicyFailures {
			refuse(i, fmt.Errorf("not evaluated after %d failures", failures), len(letters)-k-1)
			break
		}
		msgs, err := opts.Deny.Deny(ctx, inputs[k])
		if err != nil {
			failures++
			refuse(i, err, 0)
			continue
		}
		emit(i, msgs)
	}
	return out
}
