package pack

import (
	"slices"
	"strings"
)

// likeRequest is the share of terms (Jaccard) from which two requests are
// alike: a signal from a request counts for the requests like it.
const likeRequest = 0.5

// sameRequest says whether a signal recorded with signature sig counts for
// a request with terms cur: always without sig, else past likeRequest.
func sameRequest(sig string, cur map[string]bool) bool {
	if sig == "" {
		return true
	}
	terms := strings.Fields(sig)
	shared := 0
	for _, t := range terms {
		if cur[t] {
			shared++
		}
	}
	union := len(terms) + len(cur) - shared
	return union > 0 && float64(shared) >= likeRequest*float64(union)
}

// termSet is the terms of a signature, as a set.
func termSet(sig string) map[string]bool {
	out := map[string]bool{}
	for _, t := range strings.Fields(sig) {
		out[t] = true
	}
	return out
}

// Signature is a request's signature: the sorted terms of its query and
// file (tokenTerms), its field and intents, space-separated; requests are
// alike when their signatures are (sameRequest).
func Signature(query, file, field string, intents []string) string {
	seen := map[string]bool{}
	var terms []string
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for _, t := range slices.Concat(tokenTerms(query), tokenTerms(file)) {
		add(t)
	}
	tag := func(kind, s string) {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			add(kind + strings.Join(strings.Fields(s), "_"))
		}
	}
	tag("field:", field)
	for _, i := range intents {
		tag("intent:", i)
	}
	slices.Sort(terms)
	return strings.Join(terms, " ")
}
