package pack

import "github.com/palacehq/palace/internal/cache"

// A text's profile is what the relevance model reads of it: how many word
// parts it has (its length) and how often each term occurs — the stems of
// its parts, stopwords and one-character parts left out, and its whole
// compound words. Ranking a request reads every visible card's texts, and
// the same texts come back with every request: profiles are kept per text
// for the process, so a text is tokenized once and a request only looks
// its terms up.
type textProfile struct {
	parts int
	terms map[string]int32
}

// profiles holds the profiles of the texts ranked, bounded (texts, not
// cards).
var profiles = cache.Memo[string, *textProfile]{Max: 1 << 15}

// profileOf tokenizes s into its profile.
func profileOf(s string) *textProfile {
	p := &textProfile{terms: map[string]int32{}}
	scanWords(s, func(tok []byte, whole bool) {
		if whole {
			p.terms[string(tok)]++
			return
		}
		p.parts++
		if len(tok) < 2 || relStopwords[string(tok)] {
			return
		}
		p.terms[stemBytes(tok)]++
	})
	return p
}

// profilesOf returns the profiles of texts, tokenizing the ones the cache
// does not hold.
func profilesOf(texts []string) []*textProfile {
	out := make([]*textProfile, len(texts))
	for i, s := range texts {
		out[i] = profiles.Of(cache.Forever{}, s, profileOf)
	}
	return out
}
