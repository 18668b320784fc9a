package policies

//go:generate go run ./internal/gen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The codecs of the decision points' inputs and outputs are generated from
// their Go types into codec_gen.go; this file holds what they build on.

// regoInput is the OPA value a Rego policy reads for in: a pre-built
// ast.Value as it is, or a decision point's typed input.
func regoInput(p Point, in any) (ast.Value, error) {
	if v, ok := in.(ast.Value); ok {
		return v, nil
	}
	if v, ok := inputValue(in); ok {
		return v, nil
	}
	return nil, fmt.Errorf("evaluate %s: input of type %T is not a decision point input", p.Package(), in)
}

// wasmInput is the JSON a .wasm module reads for a decision point's typed
// input: every field present, lists never null.
func wasmInput(p Point, in any) ([]byte, error) {
	size := inputSizes[p]
	hint := 1024
	if size != nil {
		hint = max(hint, int(size.Load()))
	}
	b, ok := appendInput(make([]byte, 0, hint), in)
	if !ok {
		return nil, fmt.Errorf("evaluate %s: input of type %T is not a decision point input", p.Package(), in)
	}
	if size != nil {
		size.Store(int64(len(b) + len(b)/8))
	}
	return b, nil
}

// inputSizes holds, per point, the buffer size for its next JSON input.
var inputSizes = func() map[Point]*atomic.Int64 {
	m := make(map[Point]*atomic.Int64, len(Points))
	for _, p := range Points {
		m[p] = new(atomic.Int64)
	}
	return m
}()

// valueAnyMap is a JSON-shaped map as an OPA object; nil, or a map OPA
// cannot hold, is {} (appendAnyMap writes the same).
func valueAnyMap(m map[string]any) *ast.Term {
	v, err := ast.InterfaceToValue(m)
	if err != nil || m == nil {
		v = ast.NewObject()
	}
	return ast.NewTerm(v)
}

// appendAnyMap writes a JSON-shaped map; nil, or a map encoding/json
// cannot write, is {}.
func appendAnyMap(b []byte, m map[string]any) []byte {
	j, err := json.Marshal(m)
	if err != nil || m == nil {
		return append(b, "{}"...)
	}
	return append(b, j...)
}

// appendFloat writes f as encoding/json does; NaN and infinities, which
// JSON cannot carry, become 0.
func appendFloat(b []byte, f float64) []byte {
	if f != f || f > 1e308 || f < -1e308 {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD, as encoding/json
// does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
