package main

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// parse reads the lanes input. A field of the wrong type is an error, as
// with encoding/json; an absent one is zero.
//
// The parser and the card slice are kept from call to call: a call then
// leaves almost no garbage behind (see lanes).
func parse(b []byte) (input, error) {
	in := input{Cards: cards[:0]}
	v, err := parser.ParseBytes(b)
	if err != nil {
		return in, err
	}
	if _, err := v.Object(); err != nil {
		return in, fmt.Errorf("input: %w", err)
	}
	cfg, err := object(v, "config")
	if err != nil {
		return in, err
	}
	if in.Config.GraceDays, err = number(cfg, "inactivity_grace_days"); err != nil {
		return in, err
	}
	if in.Config.StepDays, err = number(cfg, "inactivity_step_days"); err != nil {
		return in, err
	}
	if in.Config.Max, err = number(cfg, "inactivity_max"); err != nil {
		return in, err
	}
	var list []*fastjson.Value
	if c := v.Get("cards"); c != nil && c.Type() != fastjson.TypeNull {
		if list, err = c.Array(); err != nil {
			return in, fmt.Errorf("cards: %w", err)
		}
	}
	in.Cards = slices.Grow(in.Cards, len(list))[:len(list)]
	for i, c := range list {
		ci := &in.Cards[i]
		*ci = cardInput{}
		card, err := object(c, "card")
		if err != nil {
			return in, fmt.Errorf("cards[%d].%w", i, err)
		}
		for _, f := range []struct {
			key string
			dst *string
		}{{"id", &ci.Card.ID}, {"persistence", &ci.Card.Persistence}, {"render_pref", &ci.Card.RenderPref}} {
			if *f.dst, err = str(card, f.key); err != nil {
				return in, fmt.Errorf("cards[%d].card.%w", i, err)
			}
		}
		counts, err := object(c, "counts30d")
		if err != nil {
			return in, fmt.Errorf("cards[%d].%w", i, err)
		}
		for _, f := range []struct {
			v   *fastjson.Value
			key string
			dst *float64
		}{
			{c, "scope_fit", &ci.ScopeFit}, {c, "operation_fit", &ci.OperationFit}, {c, "relevance", &ci.Relevance},
			{c, "age_days", &ci.AgeDays}, {counts, "applied", &ci.Counts30d.Applied}, {counts, "skipped", &ci.Counts30d.Skipped},
			{counts, "trimmed", &ci.Counts30d.Trimmed}, {counts, "viewed", &ci.Counts30d.Viewed},
		} {
			if *f.dst, err = number(f.v, f.key); err != nil {
				return in, fmt.Errorf("cards[%d].%w", i, err)
			}
		}
	}
	cards = in.Cards
	return in, nil
}

// object reads o[key]: nil when o or the key is absent or null, an error
// when it is not an object.
func object(o *fastjson.Value, key string) (*fastjson.Value, error) {
	x := o.Get(key)
	if x == nil || x.Type() == fastjson.TypeNull {
		return nil, nil
	}
	if _, err := x.Object(); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return x, nil
}

// number reads o[key]: 0 when o or the key is absent or null.
func number(o *fastjson.Value, key string) (float64, error) {
	x := o.Get(key)
	if x == nil || x.Type() == fastjson.TypeNull {
		return 0, nil
	}
	f, err := x.Float64()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return f, nil
}

// str reads o[key]: "" when o or the key is absent or null.
func str(o *fastjson.Value, key string) (string, error) {
	x := o.Get(key)
	if x == nil || x.Type() == fastjson.TypeNull {
		return "", nil
	}
	b, err := x.StringBytes()
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return string(b), nil
}

var (
	parser fastjson.Parser
	cards  []cardInput
	outBuf []byte
)

// encode writes the output object: card id → result.
func encode(results []result) []byte {
	b := outBuf[:0]
	defer func() { outBuf = b }()
	b = append(b, '{')
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, r.ID)
		b = append(b, `:{"salience":`...)
		b = appendNum(b, r.Salience)
		d := r.Breakdown
		for _, f := range []struct {
			key string
			v   float64
		}{
			{`,"breakdown":{"scope_fit":`, d.ScopeFit}, {`,"operation_fit":`, d.OperationFit},
			{`,"persistence":`, d.Persistence}, {`,"applied":`, d.Applied}, {`,"viewed":`, d.Viewed},
			{`,"skipped":`, d.Skipped}, {`,"trimmed":`, d.Trimmed}, {`,"inactivity":`, d.Inactivity},
		} {
			b = append(b, f.key...)
			b = appendNum(b, f.v)
		}
		b = append(b, `},"lane":`...)
		b = appendString(b, r.Lane)
		b = append(b, `,"render_form":`...)
		b = appendString(b, r.RenderForm)
		b = append(b, '}')
	}
	b = append(b, '}')
	return b
}

// appendNum writes a number as encoding/json would for these values.
func appendNum(b []byte, f float64) []byte {
	if f == float64(int64(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendString writes s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}
