package policies

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

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

// fields reads the members of one output object and keeps the first
// shape error: once err is set, every read returns its zero value.
type fields struct {
	p    Point
	path string // of the object in the output, "" for the whole output
	r    ast.Object
	err  error
}

func (f *fields) fail(path, want string, got ast.Value) {
	if f.err == nil {
		var g any
		if got != nil {
			g = got
		}
		f.err = shapeErr(f.p, path, want, g)
	}
}

// get is the member's value, nil when it is absent or an error came first.
func (f *fields) get(name string) ast.Value {
	if f.err != nil {
		return nil
	}
	return field(f.r, name)
}

// has reports whether the object has the member.
func (f *fields) has(name string) bool { return field(f.r, name) != nil }

func (f *fields) bool(name string) bool {
	b, ok := f.get(name).(ast.Boolean)
	if !ok {
		f.fail(join(f.path, name), "a boolean", f.get(name))
	}
	return bool(b)
}

// int reads a whole number within lo..hi.
func (f *fields) int(name string, lo, hi int) int {
	v := f.get(name)
	n, ok := wholeValue(v)
	if !ok || n < lo || n > hi {
		f.fail(join(f.path, name), fmt.Sprintf("a whole number %d..%d", lo, hi), v)
		return 0
	}
	return n
}

// strings reads an array of strings; nonempty asks for at least one.
func (f *fields) strings(name string, nonempty bool) []string {
	v := f.get(name)
	arr, ok := v.(*ast.Array)
	if !ok {
		f.fail(join(f.path, name), "an array of strings", v)
		return nil
	}
	if nonempty && arr.Len() == 0 {
		f.fail(join(f.path, name), "a non-empty array of strings", v)
		return nil
	}
	out := make([]string, arr.Len())
	for i := range arr.Len() {
		s, ok := arr.Elem(i).Value.(ast.String)
		if !ok {
			f.fail(fmt.Sprintf("%s[%d]", join(f.path, name), i), "a string", arr.Elem(i).Value)
			return nil
		}
		out[i] = string(s)
	}
	return out
}

// intMap reads an object of name → whole number.
func (f *fields) intMap(name string) map[string]int {
	v := f.get(name)
	obj, ok := v.(ast.Object)
	if !ok {
		f.fail(join(f.path, name), "an object of name → whole number", v)
		return nil
	}
	out := make(map[string]int, obj.Len())
	obj.Foreach(func(k, x *ast.Term) {
		ks, ok := k.Value.(ast.String)
		n, whole := wholeValue(x.Value)
		if !ok || !whole {
			f.fail(fmt.Sprintf("%s.%v", join(f.path, name), k), "a whole number", x.Value)
		}
		out[string(ks)] = n
	})
	return out
}

// enum reads a string that is one of allowed.
func enum[T ~string](f *fields, name string, allowed []T) T {
	v := f.get(name)
	s, ok := v.(ast.String)
	if !ok || !slices.Contains(allowed, T(s)) {
		f.fail(join(f.path, name), "one of "+fmt.Sprint(allowed), v)
		return ""
	}
	return T(s)
}

func field(r ast.Object, name string) ast.Value {
	t := r.Get(ast.InternedTerm(name))
	if t == nil {
		return nil
	}
	return t.Value
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
