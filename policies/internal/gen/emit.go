package main

import (
	"bytes"
	"fmt"
	"go/format"
	"sort"
	"strconv"
	"strings"
)

// gen accumulates the generated functions.
type gen struct {
	l       *loader
	roots   []*typ
	done    map[string]bool
	imports map[string]bool
	keys    map[string]string // json name → key variable
	body    bytes.Buffer
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.body, format, args...) }

// key is the variable holding the OPA term of a member name.
func (g *gen) key(json string) string {
	if g.keys == nil {
		g.keys = map[string]string{}
	}
	if v, ok := g.keys[json]; ok {
		return v
	}
	v := "key"
	for part := range strings.SplitSeq(json, "_") {
		if part != "" {
			v += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	for _, other := range g.keys {
		if other == v {
			v += strconv.Itoa(len(g.keys))
		}
	}
	g.keys[json] = v
	return v
}

func (g *gen) use(t *typ) {
	if t.pkg != "" {
		g.imports[t.pkg] = true
	}
}

// listFn is the suffix of a list's codec functions.
func listFn(el *typ) string {
	if el.fn != "" {
		return el.fn
	}
	return strings.ToUpper(el.expr[:1]) + el.expr[1:]
}

// encoders writes the OPA value builder and the JSON appender of t and of
// every type it holds.
func (g *gen) encoders(t *typ) error {
	switch t.kind {
	case kStruct:
		if g.done["enc "+t.fn] {
			return nil
		}
		g.done["enc "+t.fn] = true
		g.use(t)
		for _, f := range t.fields {
			if f.t.kind == kMap && f.t.elem.kind != kAny {
				return fmt.Errorf("%s.%s: an input map must be map[string]any", t.expr, f.goName)
			}
		}
		g.p("\nfunc value%s(x %s) *ast.Term {\n\treturn ast.NewTerm(ast.NewObject(\n", t.fn, t.expr)
		for _, f := range t.fields {
			g.p("\t\tast.Item(%s, %s),\n", g.key(f.json), g.valueExpr(f.t, "x."+f.goName))
		}
		g.p("\t))\n}\n")
		g.p("\nfunc append%s(b []byte, x %s) []byte {\n", t.fn, t.expr)
		if len(t.fields) == 0 {
			g.p("\treturn append(b, \"{}\"...)\n}\n")
			return nil
		}
		for i, f := range t.fields {
			sep := ","
			if i == 0 {
				sep = "{"
			}
			g.p("\tb = %s\n", strings.Replace(g.appendExpr(f.t, "x."+f.goName), "(b, ", fmt.Sprintf("(append(b, `%s%q:`...), ", sep, f.json), 1))
		}
		g.p("\treturn append(b, '}')\n}\n")
		for _, f := range t.fields {
			if err := g.encoders(f.t); err != nil {
				return err
			}
		}
	case kSlice:
		fn := listFn(t.elem)
		if g.done["enc list "+fn] {
			return nil
		}
		g.done["enc list "+fn] = true
		g.use(t.elem)
		g.p("\nfunc valueList%s(xs %s) *ast.Term {\n\tts := make([]*ast.Term, len(xs))\n", fn, t.expr)
		g.p("\tfor i, x := range xs {\n\t\tts[i] = %s\n\t}\n\treturn ast.ArrayTerm(ts...)\n}\n", g.valueExpr(t.elem, "x"))
		g.p("\nfunc appendList%s(b []byte, xs %s) []byte {\n\tb = append(b, '[')\n", fn, t.expr)
		g.p("\tfor i, x := range xs {\n\t\tif i > 0 {\n\t\t\tb = append(b, ',')\n\t\t}\n")
		g.p("\t\tb = %s\n\t}\n\treturn append(b, ']')\n}\n", g.appendExpr(t.elem, "x"))
		return g.encoders(t.elem)
	}
	return nil
}

func (g *gen) valueExpr(t *typ, x string) string {
	switch t.kind {
	case kString, kBool, kInt:
		if t.named {
			x = basic(t) + "(" + x + ")"
		}
		return "ast.InternedTerm(" + x + ")"
	case kFloat:
		if t.named {
			x = "float64(" + x + ")"
		}
		return "ast.FloatNumberTerm(" + x + ")"
	case kStruct:
		return "value" + t.fn + "(" + x + ")"
	case kSlice:
		return "valueList" + listFn(t.elem) + "(" + x + ")"
	case kMap:
		return "valueAnyMap(" + x + ")"
	}
	return "nil"
}

func (g *gen) appendExpr(t *typ, x string) string {
	if t.named {
		x = basic(t) + "(" + x + ")"
	}
	switch t.kind {
	case kString:
		return "appendString(b, " + x + ")"
	case kBool:
		g.imports["strconv"] = true
		return "strconv.AppendBool(b, " + x + ")"
	case kInt:
		g.imports["strconv"] = true
		return "strconv.AppendInt(b, int64(" + x + "), 10)"
	case kFloat:
		return "appendFloat(b, " + x + ")"
	case kStruct:
		return "append" + t.fn + "(b, " + x + ")"
	case kSlice:
		return "appendList" + listFn(t.elem) + "(b, " + x + ")"
	case kMap:
		return "appendAnyMap(b, " + x + ")"
	}
	return "b"
}

func basic(t *typ) string {
	return [...]string{kString: "string", kBool: "bool", kInt: "int", kFloat: "float64"}[t.kind]
}

// decoder writes the strict decoder of the output struct t: each field is
// read from an OPA object with the checks its `policy` tag asks for.
func (g *gen) decoder(t *typ) error {
	if t.kind != kStruct {
		return fmt.Errorf("output %s is not a struct", t.expr)
	}
	g.p("\n// decode%s reads %s from the object r, the output of p at path\n", t.fn, t.expr)
	g.p("// (\"\" for the whole output); a field of the wrong shape is a *ShapeError.\n")
	g.p("func decode%s(p Point, path string, r ast.Object) (%s, error) {\n", t.fn, t.expr)
	g.p("\tf := fields{p: p, path: path, r: r}\n\tvar out %s\n", t.expr)
	for _, f := range t.fields {
		var call string
		tag := f.policy
		optional := tag == "optional"
		if optional {
			tag = ""
		}
		switch {
		case f.t.kind == kBool && !f.t.named && tag == "":
			call = fmt.Sprintf("f.bool(%q)", f.json)
		case f.t.kind == kInt && !f.t.named:
			lo, hi, ok := strings.Cut(tag, "..")
			if !ok {
				return fmt.Errorf("%s.%s: an output number needs a range tag policy:\"lo..hi\"", t.expr, f.goName)
			}
			call = fmt.Sprintf("f.int(%q, %s, %s)", f.json, lo, hi)
		case f.t.kind == kString && f.t.named && strings.HasPrefix(tag, "enum="):
			call = fmt.Sprintf("enum(&f, %q, %s)", f.json, strings.TrimPrefix(tag, "enum="))
		case f.t.kind == kSlice && f.t.elem.kind == kString && !f.t.elem.named && (tag == "" || tag == "nonempty"):
			call = fmt.Sprintf("f.strings(%q, %v)", f.json, tag == "nonempty")
		case f.t.kind == kMap && f.t.elem.kind == kInt && !f.t.elem.named && tag == "":
			call = fmt.Sprintf("f.intMap(%q)", f.json)
		default:
			return fmt.Errorf("%s.%s: no decoder for %s with policy tag %q", t.expr, f.goName, f.t.expr, f.policy)
		}
		if optional {
			g.p("\tif f.has(%q) {\n\t\tout.%s = %s\n\t}\n", f.json, f.goName, call)
		} else {
			g.p("\tout.%s = %s\n", f.goName, call)
		}
	}
	g.p("\treturn out, f.err\n}\n")
	return nil
}

// jsonDecoder writes the decoder of the output struct t straight from a
// module's JSON answer, for the answers its OPA decoder would accept as
// they are; ok false sends any other answer through the OPA decoder, which
// accepts or rejects it with the messages a Rego answer gets.
func (g *gen) jsonDecoder(t *typ) error {
	g.imports["github.com/valyala/fastjson"] = true
	g.p("\n// json%s reads %s from a module's JSON object r when decode%s\n", t.fn, t.expr, t.fn)
	g.p("// would accept it as written: each member once, whole numbers as integers.\n")
	g.p("// ok is false for anything else.\n")
	g.p("func json%s(r *fastjson.Object) (out %s, ok bool) {\n\tvar seen [%d]bool\n\tok = true\n", t.fn, t.expr, len(t.fields))
	g.p("\tr.Visit(func(k []byte, x *fastjson.Value) {\n\t\tvar i int\n\t\tvar good bool\n\t\tswitch string(k) {\n")
	var required []string
	for i, f := range t.fields {
		var call string
		lo, hi, isRange := strings.Cut(f.policy, "..")
		switch {
		case f.t.kind == kInt && !f.t.named && isRange:
			call = fmt.Sprintf("intJSON(x, %s, %s)", lo, hi)
		case f.t.kind == kString && f.t.named && strings.HasPrefix(f.policy, "enum="):
			call = fmt.Sprintf("enumJSON(x, %s)", strings.TrimPrefix(f.policy, "enum="))
		case f.t.kind == kMap && f.t.elem.kind == kInt && f.policy == "":
			call = "intMapJSON(x)"
		default:
			return fmt.Errorf("%s.%s: no JSON decoder for %s with policy tag %q", t.expr, f.goName, f.t.expr, f.policy)
		}
		g.p("\t\tcase %q:\n\t\t\ti = %d\n\t\t\tout.%s, good = %s\n", f.json, i, f.goName, call)
		required = append(required, fmt.Sprintf("seen[%d]", i))
	}
	g.p("\t\tdefault:\n\t\t\treturn\n\t\t}\n\t\tok = ok && good && !seen[i]\n\t\tseen[i] = true\n\t})\n")
	g.p("\treturn out, ok && %s\n}\n", strings.Join(required, " && "))
	return nil
}

// file assembles codec_gen.go.
func (g *gen) file() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/gen; DO NOT EDIT.\n\npackage policies\n\nimport (\n")
	g.imports["github.com/open-policy-agent/opa/v1/ast"] = true
	paths := make([]string, 0, len(g.imports))
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, std := range []bool{true, false} {
		for _, p := range paths {
			if !strings.Contains(strings.Split(p, "/")[0], ".") == std {
				fmt.Fprintf(&b, "\t%q\n", p)
			}
		}
		if std {
			b.WriteString("\n")
		}
	}
	b.WriteString(")\n")
	b.WriteString("\n// inputValue is the OPA value of a decision point's input; ok is false\n")
	b.WriteString("// when in is none of the input types.\n")
	b.WriteString("func inputValue(in any) (_ ast.Value, ok bool) {\n\tswitch x := in.(type) {\n")
	for _, t := range g.roots {
		fmt.Fprintf(&b, "\tcase %s:\n\t\treturn value%s(x).Value, true\n", t.expr, t.fn)
	}
	b.WriteString("\t}\n\treturn nil, false\n}\n")
	b.WriteString("\n// appendInput appends the JSON of a decision point's input to b; ok is\n")
	b.WriteString("// false when in is none of the input types.\n")
	b.WriteString("func appendInput(b []byte, in any) (_ []byte, ok bool) {\n\tswitch x := in.(type) {\n")
	for _, t := range g.roots {
		fmt.Fprintf(&b, "\tcase %s:\n\t\treturn append%s(b, x), true\n", t.expr, t.fn)
	}
	b.WriteString("\t}\n\treturn b, false\n}\n")
	names := make([]string, 0, len(g.keys))
	for j := range g.keys {
		names = append(names, j)
	}
	sort.Strings(names)
	b.WriteString("\n// Below, valueT is the OPA value of type T and appendT appends its JSON to b;\n")
	b.WriteString("// a nil list is [].\n\n// The member names of the inputs, as OPA terms.\nvar (\n")
	for _, j := range names {
		fmt.Fprintf(&b, "\t%s = ast.StringTerm(%q)\n", g.keys[j], j)
	}
	b.WriteString(")\n")
	b.Write(g.body.Bytes())
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format the generated code: %w\n%s", err, b.Bytes())
	}
	return src, nil
}
