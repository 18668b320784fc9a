package mailbox

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DenyInput is the input of the palace.mailbox decision point for one
// letter: {box, path, line, letter}, plus the letter's id.
type DenyInput struct {
	// Box is "project" (a repository's box) or "global", as palace.mailbox
	// documents it (policies/README.md).
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
// matters for a 100k-letter box. out[i] holds the messages for in[i]. An
// error refuses every letter of the batch (PM101), except a *BatchError of
// the batch's length: then only the letters it names are refused and the
// others' results stand.
type BatchDenyRules interface {
	DenyRules
	DenyBatch(ctx context.Context, in []DenyInput) ([][]string, error)
}

// BatchError reports the letters of a DenyBatch call that could not be
// evaluated: Errs[i] is in[i]'s error, nil for a letter whose result stands.
// It lets one letter that trips a policy (a deadline, an undefined decision)
// be refused alone instead of failing the whole box.
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
	// refused reports letters the policy could not decide, fail closed: the
	// first maxPolicyFailures each get their error, then one finding names
	// how many more were refused, so a broken policy yields a readable
	// report rather than one line per letter of a 100k-letter box.
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
			// Stop calling a policy that keeps failing: each call may wait
			// out its deadline.
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
