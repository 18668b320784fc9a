package domain

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// NormalizeStatement is the form of a card statement that duplicate
// detection compares (Card.StatementNorm): Unicode NFC (so a composed é and
// an e with a combining accent are one spelling), lower case, single
// spaces, no trailing sentence punctuation.
func NormalizeStatement(s string) string {
	s = norm.NFC.String(strings.ToLower(strings.Join(strings.Fields(s), " ")))
	return strings.TrimRight(s, ".!;: ")
}

// NFC is s in Unicode normalization form C: the form palace stores a card's
// statement and content in, whatever spelling the writer's keyboard or
// file system produced.
func NFC(s string) string { return norm.NFC.String(s) }
