package domain

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// NormalizeStatement is the form duplicate detection compares: NFC, lower
// case, single spaces, no trailing sentence punctuation.
func NormalizeStatement(s string) string {
	s = norm.NFC.String(strings.ToLower(strings.Join(strings.Fields(s), " ")))
	return strings.TrimRight(s, ".!;: ")
}

// NFC is s in Unicode normalization form C, the form palace stores text in.
func NFC(s string) string { return norm.NFC.String(s) }
