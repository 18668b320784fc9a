package domain

import "strings"

// NormalizeStatement is the form of a card statement that duplicate
// detection compares (Card.StatementNorm): lower case, single spaces, no
// trailing sentence punctuation.
func NormalizeStatement(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!;: ")
}
