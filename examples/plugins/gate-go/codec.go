package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// parse reads the gate input. A field of the wrong type is an error, as
// with encoding/json; an absent one is zero.
func parse(b []byte) (input, error) {
	var in input
	var p fastjson.Parser
	v, err := p.ParseBytes(b)
	if err != nil {
		return in, err
	}
	if _, err := v.Object(); err != nil {
		return in, fmt.Errorf("input: %w", err)
	}
	var card, counts, reviewer *fastjson.Value
	for _, f := range []struct {
		key string
		dst **fastjson.Value
	}{{"card", &card}, {"counts", &counts}, {"reviewer", &reviewer}} {
		if *f.dst, err = object(v, f.key); err != nil {
			return in, err
		}
	}
	for _, f := range []struct {
		v   *fastjson.Value
		key string
		dst *string
	}{
		{v, "action", &in.Action}, {v, "target", &in.Target}, {v, "mode", &in.Mode},
		{card, "id", &in.Card.ID}, {card, "tier", &in.Card.Tier},
		{reviewer, "name", &in.Reviewer.Name}, {reviewer, "type", &in.Reviewer.Type},
	} {
		if *f.dst, err = str(f.v, f.key); err != nil {
			return in, err
		}
	}
	for _, f := range []struct {
		key string
		dst *float64
	}{
		{"supporting", &in.Counts.Supporting}, {"verification", &in.Counts.Verification},
		{"teaching", &in.Counts.Teaching}, {"counterexample", &in.Counts.Counterexample},
	} {
		if *f.dst, err = number(counts, f.key); err != nil {
			return in, fmt.Errorf("counts.%w", err)
		}
	}
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

// encode writes {"allow": …, "reasons": […], "missing": {…}}.
func encode(out output) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"allow":`...)
	b = strconv.AppendBool(b, out.Allow)
	b = append(b, `,"reasons":[`...)
	for i, r := range out.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, r)
	}
	b = append(b, `],"missing":{`...)
	for i, role := range slices.Sorted(maps.Keys(out.Missing)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, role)
		b = append(b, ':')
		b = append(b, num(out.Missing[role])...)
	}
	return append(b, `}}`...)
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
