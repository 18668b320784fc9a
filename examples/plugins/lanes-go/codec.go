package main

import (
	"errors"
	"strconv"

	pj "github.com/palacehq/palace/examples/plugins/pluginjson"
)

// Member names, in the order palace writes them, and the paths errors name.
var (
	topNames     = pj.Names("cards", "config", "wake")
	cardNames    = pj.Names("card", "scope_fit", "operation_fit", "relevance", "counts30d", "age_days")
	fieldNames   = pj.Names("id", "tier", "status", "persistence", "render_pref", "anchor", "field")
	countFields  = []string{"applied", "skipped", "trimmed", "viewed", "used", "accepted", "rejected", "rollback", "miss"}
	countNames   = pj.Names(countFields...)
	countPaths   = paths(".counts30d.", countFields)
	configFields = []string{"inactivity_grace_days", "inactivity_step_days", "inactivity_max", "skip_cooling_threshold_30d", "trim_cooling_threshold_30d"}
	configNames  = pj.Names(configFields...)
	configPaths  = paths("config.", configFields)
)

func paths(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// parse reads the lanes input with pluginjson's reader. A field of the
// wrong type is an error; an absent or null one is zero; fields the default
// rules do not read are skipped.
//
// The card slice is kept from call to call, and the card ids are slices of
// b, so a call leaves almost no garbage behind (see lanes).
func parse(b []byte) (input, error) {
	in := input{Cards: cards[:0]}
	defer func() { cards = in.Cards }()
	r := pj.NewReader(b)
	ok, err := r.Open("input")
	if err != nil {
		return in, err
	}
	if !ok {
		return in, errors.New("input: want an object, found null")
	}
	c := &in.Config
	config := [...]*float64{&c.GraceDays, &c.StepDays, &c.Max, &c.SkipThreshold, &c.TrimThreshold}
	err = r.Object(topNames, func(k int) (err error) {
		switch k {
		case 0:
			in.Cards, err = parseCards(r, in.Cards)
		case 1:
			err = r.Nested("config", configNames, func(k int) (err error) {
				*config[k], err = r.Num(configPaths[k])
				return err
			})
		case 2:
			in.Wake, err = r.Bool("wake")
		default:
			err = r.Skip()
		}
		return err
	})
	if err != nil {
		return in, err
	}
	return in, r.End()
}

func parseCards(r *pj.Reader, cs []cardInput) ([]cardInput, error) {
	ok, err := r.OpenArray("cards")
	if err != nil || !ok {
		return cs, err
	}
	learned := false
	for first := true; ; first = false {
		more, err := r.Next(']', first)
		if err != nil || !more {
			return cs, err
		}
		cs = append(cs, cardInput{})
		c := &cs[len(cs)-1]
		var strs [5][]byte
		var nums [13]float64
		if cardLayout != nil && r.Fill(cardLayout, strs[:], nums[:]) {
			c.Card.ID, c.Card.Persistence, c.Card.RenderPref = strs[0], persistenceOf(strs[1]), renderPrefOf(strs[2])
			c.Card.Tier, c.Card.Canonical = tierOf(strs[3]), string(strs[4]) == "canonical"
			c.ScopeFit, c.OperationFit, c.AgeDays, c.Relevance = nums[0], nums[1], nums[6], nums[7]
			n := &c.Counts30d
			n.Applied, n.Skipped, n.Trimmed, n.Viewed = nums[2], nums[3], nums[4], nums[5]
			n.Used, n.Accepted, n.Rejected, n.Rollback, n.Miss = nums[8], nums[9], nums[10], nums[11], nums[12]
			continue
		}
		start := r.Pos() // Next left the reader on the card, past any whitespace
		if err := parseCard(r, c); err != nil {
			return cs, errors.New("cards[" + strconv.Itoa(len(cs)-1) + "]" + err.Error())
		}
		if !learned { // once a call: cards a layout cannot replay are read the general way
			learned = true
			if l, ok := r.Learn(start, cardSlot); ok {
				cardLayout = &l
			}
		}
	}
}

// cardLayout is the layout learned from a card read the general way (see
// pluginjson.Layout), at most once a call; it carries over to the next
// call, whose cards palace writes alike.
var cardLayout *pj.Layout

// cardSlot says where Fill puts each value of a card entry: strings in
// strs, numbers in nums, as parseCards reads them back; -1 drops it.
func cardSlot(path string, str bool) int {
	slots := numSlots
	if str {
		slots = strSlots
	}
	if i, ok := slots[path]; ok {
		return i
	}
	return -1
}

var (
	strSlots = map[string]int{"card.id": 0, "card.persistence": 1, "card.render_pref": 2, "card.tier": 3, "card.status": 4}
	numSlots = map[string]int{"scope_fit": 0, "operation_fit": 1, "counts30d.applied": 2, "counts30d.skipped": 3,
		"counts30d.trimmed": 4, "counts30d.viewed": 5, "age_days": 6, "relevance": 7, "counts30d.used": 8,
		"counts30d.accepted": 9, "counts30d.rejected": 10, "counts30d.rollback": 11, "counts30d.miss": 12}
)

// parseCard reads one card entry; its errors start with the field's path
// inside the entry (".card.id: …"), or ": " for the entry itself.
func parseCard(r *pj.Reader, c *cardInput) error {
	ok, err := r.Open("")
	if err != nil || !ok {
		return pj.At("", err)
	}
	n := &c.Counts30d
	counts := [...]*float64{&n.Applied, &n.Skipped, &n.Trimmed, &n.Viewed, &n.Used, &n.Accepted, &n.Rejected, &n.Rollback, &n.Miss}
	err = r.Object(cardNames, func(k int) (err error) {
		switch k {
		case 0:
			err = pj.At(".card", r.Nested(".card", fieldNames, func(k int) error { return cardField(r, c, k) }))
		case 1:
			c.ScopeFit, err = r.Num(".scope_fit")
		case 2:
			c.OperationFit, err = r.Num(".operation_fit")
		case 3:
			c.Relevance, err = r.Num(".relevance")
		case 4:
			err = pj.At(".counts30d", r.Nested(".counts30d", countNames, func(k int) (err error) {
				*counts[k], err = r.Num(countPaths[k])
				return err
			}))
		case 5:
			c.AgeDays, err = r.Num(".age_days")
		default:
			err = r.Skip()
		}
		return err
	})
	return pj.At("", err)
}

// cardField reads member k of fieldNames of a card's "card" object.
func cardField(r *pj.Reader, c *cardInput, k int) error {
	if k > 4 { // anchor, field
		return r.Skip()
	}
	s, err := r.Str([...]string{".card.id", ".card.tier", ".card.status", ".card.persistence", ".card.render_pref"}[k])
	switch k {
	case 0:
		c.Card.ID = s
	case 1:
		c.Card.Tier = tierOf(s)
	case 2:
		c.Card.Canonical = string(s) == "canonical"
	case 3:
		c.Card.Persistence = persistenceOf(s)
	case 4:
		c.Card.RenderPref = renderPrefOf(s)
	}
	return err
}

var (
	cards  []cardInput
	outBuf []byte
)

// encode writes the output object, card id → result, into a buffer kept
// from call to call.
func encode(results []result) []byte {
	b := outBuf[:0]
	b = append(b, '{')
	for i := range results {
		r := &results[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = pj.AppendString(b, r.ID)
		b = append(b, `:{"salience":`...)
		b = pj.AppendNum(b, r.Salience)
		d := &r.Breakdown
		b = append(b, `,"breakdown":{"scope_fit":`...)
		b = pj.AppendNum(b, d.ScopeFit)
		if d.Wake {
			// A wake-up card's standing (see decideWake).
			b = append(b, `,"tier":`...)
			b = pj.AppendNum(b, d.Tier)
			b = append(b, `,"status":`...)
			b = pj.AppendNum(b, d.Status)
		} else {
			b = append(b, `,"operation_fit":`...)
			b = pj.AppendNum(b, d.OperationFit)
			b = append(b, `,"relevance":`...)
			b = pj.AppendNum(b, d.Relevance)
		}
		b = append(b, `,"persistence":`...)
		b = pj.AppendNum(b, d.Persistence)
		b = append(b, `,"viewed":`...)
		b = pj.AppendNum(b, d.Viewed)
		if !d.Wake {
			b = append(b, `,"skipped":`...)
			b = pj.AppendNum(b, d.Skipped)
			b = append(b, `,"trimmed":`...)
			b = pj.AppendNum(b, d.Trimmed)
		}
		b = append(b, `,"inactivity":`...)
		b = pj.AppendNum(b, d.Inactivity)
		if d.Adopted != 0 {
			b = append(b, `,"adopted":`...)
			b = pj.AppendNum(b, d.Adopted)
		}
		if d.Rejected != 0 {
			b = append(b, `,"rejected":`...)
			b = pj.AppendNum(b, d.Rejected)
		}
		b = append(b, `},"lane":"`...)
		b = append(b, r.Lane...)
		b = append(b, `","render_form":"`...)
		b = append(b, r.RenderForm...)
		b = append(b, `"}`...)
	}
	b = append(b, '}')
	outBuf = b
	return b
}
