package policies

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The field helpers below read one field of an output object (the whole
// output, or one card's result at path id) and name point, path and field
// in any shape error, so a team sees "palace.lanes returned a malformed
// decision: field kc_1.lane must be …". The generated decoders call them.

// decodeBatch reads a batch point's output, an object of card id → result,
// with one result for each of the n cards (id(i) is the i-th card's id).
func decodeBatch[R any](p Point, v ast.Value, n int, id func(int) string, one func(Point, string, ast.Object) (R, error)) (map[string]R, error) {
	obj, ok := v.(ast.Object)
	if !ok {
		return nil, shapeErr(p, "", "an object of card id → result", v)
	}
	out := make(map[string]R, n)
	for i := range n {
		k := id(i)
		rv := obj.Get(ast.InternedTerm(k))
		if rv == nil {
			return nil, shapeErr(p, k, "a result (every input card needs one)", nil)
		}
		r, ok := rv.Value.(ast.Object)
		if !ok {
			return nil, shapeErr(p, k, "an object", rv.Value)
		}
		res, err := one(p, k, r)
		if err != nil {
			return nil, err
		}
		out[k] = res
	}
	return out, nil
}

func field(r ast.Object, name string) ast.Value {
	t := r.Get(ast.InternedTerm(name))
	if t == nil {
		return nil
	}
	return t.Value
}

func boolField(p Point, id string, r ast.Object, name string) (bool, error) {
	b, ok := field(r, name).(ast.Boolean)
	if !ok {
		return false, shapeErr(p, join(id, name), "a boolean", field(r, name))
	}
	return bool(b), nil
}

func intField(p Point, id string, r ast.Object, name string, lo, hi int) (int, error) {
	v := field(r, name)
	n, ok := wholeValue(v)
	if !ok || n < lo || n > hi {
		return 0, shapeErr(p, join(id, name), fmt.Sprintf("a whole number %d..%d", lo, hi), v)
	}
	return n, nil
}

func enumField[T ~string](p Point, id string, r ast.Object, name string, allowed []T) (T, error) {
	v := field(r, name)
	s, ok := v.(ast.String)
	if !ok || !slices.Contains(allowed, T(s)) {
		return "", shapeErr(p, join(id, name), "one of "+fmt.Sprint(allowed), v)
	}
	return T(s), nil
}

// stringsField reads an array of strings; nonempty asks for at least one.
func stringsField(p Point, id string, r ast.Object, name string, nonempty bool) ([]string, error) {
	v := field(r, name)
	arr, ok := v.(*ast.Array)
	if !ok {
		return nil, shapeErr(p, join(id, name), "an array of strings", v)
	}
	if nonempty && arr.Len() == 0 {
		return nil, shapeErr(p, join(id, name), "a non-empty array of strings", v)
	}
	out := make([]string, arr.Len())
	for i := range arr.Len() {
		s, ok := arr.Elem(i).Value.(ast.String)
		if !ok {
			return nil, shapeErr(p, fmt.Sprintf("%s[%d]", join(id, name), i), "a string", arr.Elem(i).Value)
		}
		out[i] = string(s)
	}
	return out, nil
}

func intMapField(p Point, id string, r ast.Object, name string) (map[string]int, error) {
	v := field(r, name)
	obj, ok := v.(ast.Object)
	if !ok {
		return nil, shapeErr(p, join(id, name), "an object of name → whole number", v)
	}
	out := make(map[string]int, obj.Len())
	var err error
	obj.Foreach(func(k, x *ast.Term) {
		ks, ok := k.Value.(ast.String)
		n, whole := wholeValue(x.Value)
		if err == nil && (!ok || !whole) {
			err = shapeErr(p, fmt.Sprintf("%s.%v", join(id, name), k), "a whole number", x.Value)
		}
		out[string(ks)] = n
	})
	return out, err
}

// wholeValue reads an integral ast.Number that fits an int.
func wholeValue(v ast.Value) (int, bool) {
	n, ok := v.(ast.Number)
	if !ok {
		return 0, false
	}
	if i, ok := n.Int(); ok {
		return i, true
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return int(r.Num().Int64()), true
}
