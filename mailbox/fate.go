package mailbox

// Fate is where a letter stands, derived from the reply graph and never
// stored.
type Fate string

// The four fates. Open letters are wet_ink and in_flight.
const (
	// FateWetInk: nobody has answered it.
	FateWetInk Fate = "wet_ink"
	// FateInFlight: answered, but only by letters that do not close it.
	FateInFlight Fate = "in_flight"
	// FateFiredClay: closed by a triage or receipt letter listing it in
	// answers. A triage or receipt letter is itself fired_clay: it is the
	// closing word of a thread, not a report waiting for someone.
	FateFiredClay Fate = "fired_clay"
	// FateExternal: tracked outside palace ("external": true or a reference).
	FateExternal Fate = "external"
)

// Open reports whether a letter with this fate still needs attention.
func (f Fate) Open() bool { return f == FateWetInk || f == FateInFlight }

// Fates derives the fate of every letter in letters (keyed by id). Only
// letters in the map count as replies: an answer naming an id outside it is
// ignored (Check warns about it, PM007).
//
// Precedence, first match wins:
//
//  1. fired_clay — a closing letter (kind triage or receipt) in the map
//     answers it, or it is a closing letter itself;
//  2. external — its "external" field is true or a reference;
//  3. in_flight — some other letter in the map answers it;
//  4. wet_ink.
//
// Closing beats external because a receipt is the last word on a letter
// wherever it was tracked.
func Fates(letters map[string]Letter) map[string]Fate {
	closed := map[string]bool{}
	answered := map[string]bool{}
	for _, l := range letters {
		for _, a := range l.Answers {
			answered[a] = true
			if l.Closing() {
				closed[a] = true
			}
		}
	}
	out := make(map[string]Fate, len(letters))
	for id, l := range letters {
		switch {
		case closed[id] || l.Closing():
			out[id] = FateFiredClay
		case l.External.Set:
			out[id] = FateExternal
		case answered[id]:
			out[id] = FateInFlight
		default:
			out[id] = FateWetInk
		}
	}
	return out
}

// Counts tallies letters by fate.
type Counts struct {
	Total     int `json:"total"`
	WetInk    int `json:"wet_ink"`
	InFlight  int `json:"in_flight"`
	FiredClay int `json:"fired_clay"`
	External  int `json:"external"`
	// Open is WetInk + InFlight.
	Open int `json:"open"`
}

// Count tallies fates.
func Count(fates map[string]Fate) Counts {
	var c Counts
	for _, f := range fates {
		c.Total++
		switch f {
		case FateWetInk:
			c.WetInk++
		case FateInFlight:
			c.InFlight++
		case FateFiredClay:
			c.FiredClay++
		case FateExternal:
			c.External++
		}
	}
	c.Open = c.WetInk + c.InFlight
	return c
}
