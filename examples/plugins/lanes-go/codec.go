package main

import (
	"errors"
	"strconv"
)

// Member names, in the order palace writes them.
var (
	topNames    = names("cards", "config", "wake")
	cardNames   = names("card", "scope_fit", "operation_fit", "relevance", "counts30d", "age_days")
	fieldNames  = names("id", "tier", "status", "persistence", "render_pref", "anchor", "field")
	countNames  = names("applied", "skipped", "trimmed", "viewed", "used", "accepted", "rejected", "rollback", "miss")
	configNames = names("inactivity_grace_days", "inactivity_step_days", "inactivity_max", "skip_cooling_threshold_30d", "trim_cooling_threshold_30d")
)

// parse reads the lanes input with the reader in json.go. A field of the
// wrong type is an error; an absent or null one is zero; fields the default
// rules do not read are skipped.
//
// The card slice is kept from call to call, and the card ids are slices of
// b, so a call leaves almost no garbage behind (see lanes).
func parse(b []byte) (input, error) {
	in := input{Cards: cards[:0]}
	defer func() { cards = in.Cards }()
	r := &reader{b: b}
	ok, err := r.open("input")
	if err != nil {
		return in, err
	}
	if !ok {
		return in, errors.New("input: want an object, found null")
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.member(first, topNames, &next)
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
			in.Wake, err = readBool(r, "wake")
		default:
			err = r.skip()
		}
		if err != nil {
			return in, err
		}
	}
	return in, r.end()
}

// readBool reads true, false or null (false).
func readBool(r *reader, what string) (bool, error) {
	switch r.peek() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	case 'n':
		return false, r.literal("null")
	}
	return false, r.expected(what, "true or false")
}

func parseCards(r *reader, cs []cardInput) ([]cardInput, error) {
	ok, err := r.openArray("cards")
	if err != nil || !ok {
		return cs, err
	}
	learned := false
	for first := true; ; first = false {
		more, err := r.next(']', first)
		if err != nil || !more {
			return cs, err
		}
		cs = append(cs, cardInput{})
		c := &cs[len(cs)-1]
		var strs [5][]byte
		var nums [13]float64
		if cardLayout != nil && r.fill(cardLayout, strs[:], nums[:]) {
			c.Card.ID, c.Card.Persistence, c.Card.RenderPref = strs[0], persistenceOf(strs[1]), renderPrefOf(strs[2])
			c.Card.Tier, c.Card.Canonical = tierOf(strs[3]), string(strs[4]) == "canonical"
			c.ScopeFit, c.OperationFit, c.AgeDays, c.Relevance = nums[0], nums[1], nums[6], nums[7]
			n := &c.Counts30d
			n.Applied, n.Skipped, n.Trimmed, n.Viewed = nums[2], nums[3], nums[4], nums[5]
			n.Used, n.Accepted, n.Rejected, n.Rollback, n.Miss = nums[8], nums[9], nums[10], nums[11], nums[12]
			continue
		}
		start := r.i // next left r.i on the card, past any whitespace
		if err := parseCard(r, c); err != nil {
			return cs, errors.New("cards[" + strconv.Itoa(len(cs)-1) + "]" + err.Error())
		}
		if !learned { // once a call: cards a layout cannot replay are read the general way
			learned = true
			if l, ok := learnLayout(r.b, start, r.i, cardSlot); ok {
				cardLayout = &l
			}
		}
	}
}

// cardLayout is the layout learned from a card read the general way (see
// layout.go), at most once a call; it carries over to the next call, whose
// cards palace writes alike.
var cardLayout *layout

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
func parseCard(r *reader, c *cardInput) error {
	ok, err := r.open("")
	if err != nil || !ok {
		return at("", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.member(first, cardNames, &next)
		if err != nil || !more {
			return at("", err)
		}
		switch k {
		case 0:
			err = parseCardFields(r, c)
		case 1:
			c.ScopeFit, err = r.num(".scope_fit")
		case 2:
			c.OperationFit, err = r.num(".operation_fit")
		case 3:
			c.Relevance, err = r.num(".relevance")
		case 4:
			err = parseCounts(r, c)
		case 5:
			c.AgeDays, err = r.num(".age_days")
		default:
			err = r.skip()
		}
		if err != nil {
			return at("", err)
		}
	}
}

func parseCardFields(r *reader, c *cardInput) error {
	ok, err := r.open(".card")
	if err != nil || !ok {
		return at(".card", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.member(first, fieldNames, &next)
		if err != nil || !more {
			return at(".card", err)
		}
		var s []byte
		switch k {
		case 0:
			c.Card.ID, err = r.str(".card.id")
		case 1:
			if s, err = r.str(".card.tier"); err == nil {
				c.Card.Tier = tierOf(s)
			}
		case 2:
			if s, err = r.str(".card.status"); err == nil {
				c.Card.Canonical = string(s) == "canonical"
			}
		case 3:
			if s, err = r.str(".card.persistence"); err == nil {
				c.Card.Persistence = persistenceOf(s)
			}
		case 4:
			if s, err = r.str(".card.render_pref"); err == nil {
				c.Card.RenderPref = renderPrefOf(s)
			}
		default: // anchor, field and any other
			err = r.skip()
		}
		if err != nil {
			return at(".card", err)
		}
	}
}

func parseCounts(r *reader, c *cardInput) error {
	ok, err := r.open(".counts30d")
	if err != nil || !ok {
		return at(".counts30d", err)
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.member(first, countNames, &next)
		if err != nil || !more {
			return at(".counts30d", err)
		}
		switch k {
		case 0:
			c.Counts30d.Applied, err = r.num(".counts30d.applied")
		case 1:
			c.Counts30d.Skipped, err = r.num(".counts30d.skipped")
		case 2:
			c.Counts30d.Trimmed, err = r.num(".counts30d.trimmed")
		case 3:
			c.Counts30d.Viewed, err = r.num(".counts30d.viewed")
		case 4:
			c.Counts30d.Used, err = r.num(".counts30d.used")
		case 5:
			c.Counts30d.Accepted, err = r.num(".counts30d.accepted")
		case 6:
			c.Counts30d.Rejected, err = r.num(".counts30d.rejected")
		case 7:
			c.Counts30d.Rollback, err = r.num(".counts30d.rollback")
		case 8:
			c.Counts30d.Miss, err = r.num(".counts30d.miss")
		default:
			err = r.skip()
		}
		if err != nil {
			return at(".counts30d", err)
		}
	}
}

func parseConfig(r *reader, in *input) error {
	ok, err := r.open("config")
	if err != nil || !ok {
		return err
	}
	next := 0
	for first := true; ; first = false {
		more, k, err := r.member(first, configNames, &next)
		if err != nil || !more {
			return err
		}
		switch k {
		case 0:
			in.Config.GraceDays, err = r.num("config.inactivity_grace_days")
		case 1:
			in.Config.StepDays, err = r.num("config.inactivity_step_days")
		case 2:
			in.Config.Max, err = r.num("config.inactivity_max")
		case 3:
			in.Config.SkipThreshold, err = r.num("config.skip_cooling_threshold_30d")
		case 4:
			in.Config.TrimThreshold, err = r.num("config.trim_cooling_threshold_30d")
		default:
			err = r.skip()
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
		b = appendString(b, r.ID)
		b = append(b, `:{"salience":`...)
		b = appendNum(b, r.Salience)
		d := &r.Breakdown
		b = append(b, `,"breakdown":{"scope_fit":`...)
		b = appendNum(b, d.ScopeFit)
		if d.Wake {
			// A wake-up card's standing (see decideWake).
			b = append(b, `,"tier":`...)
			b = appendNum(b, d.Tier)
			b = append(b, `,"status":`...)
			b = appendNum(b, d.Status)
		} else {
			b = append(b, `,"operation_fit":`...)
			b = appendNum(b, d.OperationFit)
			b = append(b, `,"relevance":`...)
			b = appendNum(b, d.Relevance)
		}
		b = append(b, `,"persistence":`...)
		b = appendNum(b, d.Persistence)
		b = append(b, `,"viewed":`...)
		b = appendNum(b, d.Viewed)
		if !d.Wake {
			b = append(b, `,"skipped":`...)
			b = appendNum(b, d.Skipped)
			b = append(b, `,"trimmed":`...)
			b = appendNum(b, d.Trimmed)
		}
		b = append(b, `,"inactivity":`...)
		b = appendNum(b, d.Inactivity)
		if d.Adopted != 0 {
			b = append(b, `,"adopted":`...)
			b = appendNum(b, d.Adopted)
		}
		if d.Rejected != 0 {
			b = append(b, `,"rejected":`...)
			b = appendNum(b, d.Rejected)
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
