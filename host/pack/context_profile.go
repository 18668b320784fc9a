package pack

import "github.com/palacehq/palace/internal/cache"

// A text's profile is what the relevance model reads of it: its number of
// word parts and the count of each term (tokenTerms' terms). Profiles are
// kept per text for the process: every request ranks the same texts.
type textProfile struct {
	parts int
	terms map[string]int32
}

// profiles holds the profiles of the texts ranked, bounded.
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
		p.terms[stem(string(tok))]++
	})
	return p
}

// profilesOf returns the profiles of texts, locking the cache once to
// read and once to keep what it made.
func profilesOf(texts []string) []*textProfile {
	out := make([]*textProfile, len(texts))
	missing := profiles.GetMany(cache.Forever{}, texts, func(i int, p *textProfile) { out[i] = p })
	if len(missing) == 0 {
		return out
	}
	made := make(map[string]*textProfile, len(missing))
	for _, s := range missing {
		if made[s] == nil {
			made[s] = profileOf(s)
		}
	}
	for i, p := range out {
		if p == nil {
			out[i] = made[texts[i]]
		}
	}
	profiles.PutMany(cache.Forever{}, missing, func(s string) *textProfile { return made[s] })
	return out
}
