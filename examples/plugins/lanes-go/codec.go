package main

import (
	"errors"
	"strconv"

	pj "github.com/palacehq/palace/examples/plugins/pluginjson"
)

// Member names, in the order palace writes them.
var (
	topNames    = pj.Names("cards", "config", "wake")
	cardNames   = pj.Names("card", "scope_fit", "operation_fit", "relevance", "counts30d", "age_days")
	fieldNames  = pj.Names("id", "tier", "status", "persistence", "render_pref", "anchor", "field")
	countNames  = pj.Names("applied", "skipped", "trimmed", "viewed", "used", "accepted", "rejected", "rollback", "miss")
	configNames = pj.Names("inactivity_grace_days", "inactivity_step_days", "inactivity_max", "skip_cooling_threshold_30d", "trim_cooling_threshold_30d")
)

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
	next := 0
	for first := true; ; first = false {
		more, k, err := r.Member(first, topNames, &next)
		if err != nil {
			return in, err
		}
		if !more {
			break
		}
		switch k {
		case 0:
			in.Cards, err = parseCards(r, in.Cards)
		case 1:
			err = parseConfig(r, &in)
		case 2:
			in.Wake, err = r.Bool("wake")
		default:
			err = r.Skip()
		}
		if err != nil {
			return in, err
		}
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

// cardSlot says where fill puts each value of a card entry: strings in
// strs, numbers in nums, as parseCards reads them back.
func cardSlot(path string, str bool) int {
	if str {
		switch path {
		case "card.id":
			return 0
		case "card.persistence":
			return 1
		case "card.render_pref":
			return 2
		case "card.tier":
			return 3
		case "card.status":
			return 4
		}
		return -1
	}
	switch path {
	case "scope_fit":
		return 0
	case "operation_fit":
		return 1
	case "counts30d.applied":
		return 2
	case "counts30d.skipped":
		return 3
	case "counts30d.trimmed":
		return 4
	case "counts30d.viewed":
		return 5
	case "age_days":
		return 6
	case "relevance":
		return 7
	case "counts30d.used":
		return 8
	case "counts30d.accepted":
		return 9
	case "counts30d.rejected":
		return 10
	case "counts30d.rollback":
		return 11
	case "counts30d.miss":
		return 12
	}
	return -1
}

// parseCard reads one card entry; its errors start with the field's path
// inside the entry (".card.id: …"), or ": " for the entry itself.
func parseCard(r *pj.Reader, c *cardInput) error {
	ok, err := r.Open("")
	if err != nil || !ok {
		return pj.At("", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.Member(first, cardNames, &next)
		if err != nil || !more {
			return pj.At("", err)
		}
		switch k {
		case 0:
			err = parseCardFields(r, c)
		case 1:
			c.ScopeFit, err = r.Num(".scope_fit")
		case 2:
			c.OperationFit, err = r.Num(".operation_fit")
		case 3:
			c.Relevance, err = r.Num(".relevance")
		case 4:
			err = parseCounts(r, c)
		case 5:
			c.AgeDays, err = r.Num(".age_days")
		default:
			err = r.Skip()
		}
		if err != nil {
			return pj.At("", err)
		}
	}
}

func parseCardFields(r *pj.Reader, c *cardInput) error {
	ok, err := r.Open(".card")
	if err != nil || !ok {
		return pj.At(".card", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.Member(first, fieldNames, &next)
		if err != nil || !more {
			return pj.At(".card", err)
		}
		var s []byte
		switch k {
		case 0:
			c.Card.ID, err = r.Str(".card.id")
		case 1:
			if s, err = r.Str(".card.tier"); err == nil {
				c.Card.Tier = tierOf(s)
			}
		case 2:
			if s, err = r.Str(".card.status"); err == nil {
				c.Card.Canonical = string(s) == "canonical"
			}
		case 3:
			if s, err = r.Str(".card.persistence"); err == nil {
				c.Card.Persistence = persistenceOf(s)
			}
		case 4:
			if s, err = r.Str(".card.render_pref"); err == nil {
				c.Card.RenderPref = renderPrefOf(s)
			}
		default: // anchor, field and any other
			err = r.Skip()
		}
		if err != nil {
			return pj.At(".card", err)
		}
	}
}

func parseCounts(r *pj.Reader, c *cardInput) error {
	ok, err := r.Open(".counts30d")
	if err != nil || !ok {
		return pj.At(".counts30d", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.Member(first, countNames, &next)
		if err != nil || !more {
			return pj.At(".counts30d", err)
		}
		switch k {
		case 0:
			c.Counts30d.Applied, err = r.Num(".counts30d.applied")
		case 1:
			c.Counts30d.Skipped, err = r.Num(".counts30d.skipped")
		case 2:
			c.Counts30d.Trimmed, err = r.Num(".counts30d.trimmed")
		case 3:
			c.Counts30d.Viewed, err = r.Num(".counts30d.viewed")
		case 4:
			c.Counts30d.Used, err = r.Num(".counts30d.used")
		case 5:
			c.Counts30d.Accepted, err = r.Num(".counts30d.accepted")
		case 6:
			c.Counts30d.Rejected, err = r.Num(".counts30d.rejected")
		case 7:
			c.Counts30d.Rollback, err = r.Num(".counts30d.rollback")
		case 8:
			c.Counts30d.Miss, err = r.Num(".counts30d.miss")
		default:
			err = r.Skip()
		}
		if err != nil {
			return pj.At(".counts30d", err)
		}
	}
}

func parseConfig(r *pj.Reader, in *input) error {
	ok, err := r.Open("config")
	if err != nil || !ok {
		return err
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.Member(first, configNames, &next)
		if err != nil || !more {
			return err
		}
		switch k {
		case 0:
			in.Config.GraceDays, err = r.Num("config.inactivity_grace_days")
		case 1:
			in.Config.StepDays, err = r.Num("config.inactivity_step_days")
		case 2:
			in.Config.Max, err = r.Num("config.inactivity_max")
		case 3:
			in.Config.SkipThreshold, err = r.Num("config.skip_cooling_threshold_30d")
		case 4:
			in.Config.TrimThreshold, err = r.Num("config.trim_cooling_threshold_30d")
		default:
			err = r.Skip()
		}
		if err != nil {
			return err
		}
	}
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
