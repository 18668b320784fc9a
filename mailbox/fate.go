package mailbox

// Fate is where a letter stands, derived from the reply graph and never
// stored.
type Fate string

// The four fates, in Fates' order of precedence.
const (
	// FateFiredClay: answered by a closing (triage or receipt) letter, or
	// one itself, the last word of a thread.
	FateFiredClay Fate = "fired_clay"
	FateExternal  Fate = "external"  // tracked outside palace
	FateInFlight  Fate = "in_flight" // answered, not closed
	FateWetInk    Fate = "wet_ink"   // nobody has answered it
)

// Open reports whether a letter with this fate still needs attention.
func (f Fate) Open() bool { return f == FateWetInk || f == FateInFlight }

// Fates derives the fate of every letter (keyed by id); only letters in the
// map count as replies. Closing beats external: a receipt is the last word
// wherever a letter was tracked.
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
	Open      int `json:"open"` // WetInk + InFlight
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
