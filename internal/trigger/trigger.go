// Package trigger owns the limits of a card's triggers (how many patterns,
// intents and tool needs, how long each, how large a pattern may compile)
// and the bounded compilation of a pattern. Every way a card enters checks
// it with Check, and every matcher compiles with Compile and skips a stored
// card over the limits.
//
// It imports the standard library only, so cardfile (which must not import
// host) and the host packages share it.
package trigger

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode/utf8"
)

// The limits: far above what a trigger needs (one to three patterns of a
// few dozen bytes), small enough to bound a palace's compiled patterns.
const (
	// MaxPatterns bounds the trigger patterns of one card.
	MaxPatterns = 32
	// MaxPatternBytes bounds one pattern.
	MaxPatternBytes = 512
	// MaxTotalBytes bounds a card's patterns together.
	MaxTotalBytes = 4 << 10
	// MaxProgram bounds the compiled program of one pattern, in
	// instructions as Go's regexp parser counts them (a{1000} is about 1,000).
	MaxProgram = 1000
	// MaxCardProgram bounds the compiled programs of a card's patterns
	// together.
	MaxCardProgram = 4000
	// MaxTags bounds the intents of a card, and its tool needs.
	MaxTags = 32
	// MaxTagBytes bounds one intent or tool need: a short label.
	MaxTagBytes = 128
	// MaxSetProgram bounds the compiled programs of every card a trigger
	// set holds (hints, the language server); cards past it are skipped.
	MaxSetProgram = 1_000_000
)

// The lists of a card's triggers, as Problem.List names them.
const (
	ListPatterns  = "patterns"
	ListIntents   = "intents"
	ListToolNeeds = "tool_needs"
)

// Problem is a trigger list over a limit, or a pattern refused.
type Problem struct {
	// List is ListPatterns, ListIntents or ListToolNeeds.
	List string
	// Index is the item at fault (0-based), -1 for the list as a whole.
	Index int
	// Msg says what is wrong, with the limit, and what to do.
	Msg string
}

// Check returns the first way a card's triggers exceed the limits, nil when
// within them: sizes first (nothing is compiled past them), then each
// pattern (Compile), then the card's programs together.
func Check(patterns, intents, toolNeeds []string) *Problem {
	if p := Sizes(patterns, intents, toolNeeds); p != nil {
		return p
	}
	total := 0
	for i, src := range patterns {
		_, size, err := Compile(src)
		if err != nil {
			return &Problem{List: ListPatterns, Index: i, Msg: err.Error()}
		}
		total += size
	}
	if total > MaxCardProgram {
		return &Problem{List: ListPatterns, Index: -1, Msg: fmt.Sprintf(
			"the trigger patterns compile to %d instructions together, over the limit of %d per card: keep fewer or simpler patterns", total, MaxCardProgram)}
	}
	return nil
}

// Sizes is the part of Check that compiles nothing: the number of items in
// each list, the bytes of each and of the patterns together.
func Sizes(patterns, intents, toolNeeds []string) *Problem {
	if n := len(patterns); n > MaxPatterns {
		return &Problem{List: ListPatterns, Index: -1, Msg: fmt.Sprintf(
			"%d trigger patterns, over the limit of %d per card: keep the few that find the code the card is about", n, MaxPatterns)}
	}
	total := 0
	for i, src := range patterns {
		if len(src) > MaxPatternBytes {
			return &Problem{List: ListPatterns, Index: i, Msg: fmt.Sprintf(
				"trigger pattern %d is %d bytes, over the limit of %d bytes: match a distinctive name or call, not a whole text", i+1, len(src), MaxPatternBytes)}
		}
		total += len(src)
	}
	if total > MaxTotalBytes {
		return &Problem{List: ListPatterns, Index: -1, Msg: fmt.Sprintf(
			"the trigger patterns are %d bytes together, over the limit of %d bytes per card: keep fewer, shorter patterns", total, MaxTotalBytes)}
	}
	for _, l := range []struct {
		list, noun string
		items      []string
	}{{ListIntents, "intent", intents}, {ListToolNeeds, "tool need", toolNeeds}} {
		if len(l.items) > MaxTags {
			return &Problem{List: l.list, Index: -1, Msg: fmt.Sprintf(
				"%d %ss, over the limit of %d per card: keep the ones the card is for", len(l.items), l.noun, MaxTags)}
		}
		for i, v := range l.items {
			if len(v) > MaxTagBytes {
				return &Problem{List: l.list, Index: i, Msg: fmt.Sprintf(
					"%s %d is %d bytes, over the limit of %d bytes: a %s is a short label", l.noun, i+1, len(v), MaxTagBytes, l.noun)}
			}
		}
	}
	return nil
}

// Compile compiles one trigger pattern within the limits and returns it
// with the size of its program. A pattern over MaxPatternBytes or
// MaxProgram is refused before regexp builds the program: the size is
// counted on the parsed pattern.
func Compile(src string) (*regexp.Regexp, int, error) {
	if len(src) > MaxPatternBytes {
		return nil, 0, fmt.Errorf("trigger pattern %s is %d bytes, over the limit of %d bytes: match a distinctive name or call, not a whole text", quote(src), len(src), MaxPatternBytes)
	}
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, 0, fmt.Errorf("trigger pattern %s is not a valid regular expression: %w", quote(src), err)
	}
	size := programSize(parsed)
	if size > MaxProgram {
		return nil, 0, fmt.Errorf("trigger pattern %s compiles to more than %d instructions (about %s): lower its repeat counts ({1000}) and alternations",
			quote(src), MaxProgram, approx(size))
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, 0, fmt.Errorf("trigger pattern %s is not a valid regular expression: %w", quote(src), err)
	}
	return re, int(size), nil
}

// sizeCap keeps programSize from overflowing: anything at or past it is
// far over every limit.
const sizeCap = 1 << 40

// programSize counts the instructions re compiles to the way Go's parser
// does for its own limit (regexp/syntax calcSize), saturating at sizeCap.
func programSize(re *syntax.Regexp) int64 {
	var size int64
	switch re.Op {
	case syntax.OpLiteral:
		size = int64(len(re.Rune))
	case syntax.OpCapture, syntax.OpStar:
		size = 2 + programSize(re.Sub[0])
	case syntax.OpPlus, syntax.OpQuest:
		size = 1 + programSize(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			size = min(size+programSize(sub), sizeCap)
		}
		if re.Op == syntax.OpAlternate && len(re.Sub) > 1 {
			size += int64(len(re.Sub)) - 1
		}
	case syntax.OpRepeat:
		sub := programSize(re.Sub[0])
		switch {
		case re.Max == -1 && re.Min == 0:
			size = 2 + sub
		case re.Max == -1:
			size = 1 + mulCap(int64(re.Min), sub)
		default:
			size = mulCap(int64(re.Max), sub) + int64(re.Max-re.Min)
		}
	}
	return min(max(1, size), sizeCap)
}

func mulCap(a, b int64) int64 {
	if a != 0 && b > sizeCap/a {
		return sizeCap
	}
	return a * b
}

func approx(n int64) string {
	if n >= sizeCap {
		return "a trillion"
	}
	return strconv.FormatInt(n, 10)
}

// quote quotes a pattern for a message, cut to its first 64 characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == 64 {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}
