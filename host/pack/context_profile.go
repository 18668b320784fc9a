package pack

import "sync"

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

// maxProfiles bounds the profile cache (texts, not cards); it is emptied
// when full.
const maxProfiles = 1 << 15

var profiles = struct {
	sync.Mutex
	m map[string]*textProfile
}{m: map[string]*textProfile{}}

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
	var missing []int
	profiles.Lock()
	for i, s := range texts {
		if p, ok := profiles.m[s]; ok {
			out[i] = p
		} else {
			missing = append(missing, i)
		}
	}
	profiles.Unlock()
	if len(missing) == 0 {
		return out
	}
	for _, i := range missing {
		out[i] = profileOf(texts[i])
	}
	profiles.Lock()
	if len(profiles.m)+len(missing) > maxProfiles {
		profiles.m = map[string]*textProfile{}
	}
	for _, i := range missing {
		profiles.m[texts[i]] = out[i]
	}
	profiles.Unlock()
	return out
}
