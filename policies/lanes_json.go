package policies

import "github.com/valyala/fastjson"

// decodeLanesJSON decodes a .wasm module's lanes answer straight from its
// JSON when decodeLanes would accept it as written; anything else (ok false)
// goes through decodeLanes and its messages.
func decodeLanesJSON(v *fastjson.Value, cards []LanesCard) (_ LanesOutput, ok bool) {
	obj, err := v.Object()
	if err != nil {
		return nil, false
	}
	results := make(map[string]*fastjson.Object, obj.Len())
	dup := false
	obj.Visit(func(k []byte, x *fastjson.Value) {
		o, err := x.Object()
		if _, seen := results[string(k)]; seen || err != nil {
			dup = true
			return
		}
		results[string(k)] = o
	})
	if dup {
		return nil, false
	}
	out := make(LanesOutput, len(cards))
	for _, c := range cards {
		r := results[c.Card.ID]
		if r == nil {
			return nil, false
		}
		res, ok := jsonLaneResult(r)
		if !ok {
			return nil, false
		}
		out[c.Card.ID] = res
	}
	return out, true
}

// intJSON reads an integer within lo..hi.
func intJSON(x *fastjson.Value, lo, hi int) (int, bool) {
	n, err := x.Int()
	return n, err == nil && n >= lo && n <= hi
}

func enumJSON[T ~string](x *fastjson.Value, allowed []T) (T, bool) {
	b, err := x.StringBytes()
	if err != nil {
		return "", false
	}
	for _, a := range allowed {
		if string(b) == string(a) {
			return a, true
		}
	}
	return "", false
}

func intMapJSON(x *fastjson.Value) (map[string]int, bool) {
	o, err := x.Object()
	if err != nil {
		return nil, false
	}
	out := make(map[string]int, o.Len())
	ok := true
	o.Visit(func(k []byte, v *fastjson.Value) {
		n, err := v.Int()
		if _, dup := out[string(k)]; dup || err != nil {
			ok = false
		}
		out[string(k)] = n
	})
	return out, ok
}
