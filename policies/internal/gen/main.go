// Command gen writes the policies package's codecs, codec_gen.go, from the
// decision points' Go types: for each input type its OPA value and JSON,
// for each output type a strict decoder of an OPA value (and, for
// jsonOutputs, of a module's JSON). `go generate` runs it:
//
//	go run ./internal/gen [-dir .] [-out codec_gen.go]
//
// It parses the source with go/parser only, so a missing or stale generated
// file does not stop it. Encoders write every field (omitempty is ignored),
// nil lists as [] and a nil map[string]any as {}. Decoders honour a
// `policy` struct tag on output fields:
//
//	policy:"lo..hi"       a whole number within lo..hi
//	policy:"enum=NAME"    one of the package-level list NAME
//	policy:"nonempty"     a list with at least one element
//	policy:"optional"     absent means the zero value
//
// A type it cannot encode or decode is an error naming the field.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// inputs are the decision points' input types, in the order of Points.
var inputs = []string{"GateInput", "ScopeInput", "LanesInput", "MailboxInput", "ResearchInput"}

// outputs are the result types decoded from an OPA value: whole outputs
// and the per-card results of the batch points.
var outputs = []string{"GateOutput", "ScopeResult", "LaneResult", "ResearchOutput"}

// jsonOutputs are the outputs also decoded straight from a module's JSON,
// where building the OPA value would cost more than the module's decision.
var jsonOutputs = []string{"LaneResult"}

func main() {
	dir := flag.String("dir", ".", "the policies package's folder")
	out := flag.String("out", "codec_gen.go", "the file to write, relative to -dir unless absolute")
	flag.Parse()
	if !filepath.IsAbs(*out) {
		*out = filepath.Join(*dir, *out)
	}
	src, err := Generate(*dir)
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// Generate returns the gofmt'ed source of codec_gen.go for the policies
// package in dir.
func Generate(dir string) ([]byte, error) {
	l, err := newLoader(dir)
	if err != nil {
		return nil, err
	}
	g := &gen{l: l, done: map[string]bool{}, imports: map[string]bool{}}
	for _, name := range inputs {
		t, err := l.named(l.main, nil, nil, name, name)
		if err != nil {
			return nil, err
		}
		g.roots = append(g.roots, t)
		if err := g.encoders(t); err != nil {
			return nil, err
		}
	}
	for _, name := range outputs {
		t, err := l.named(l.main, nil, nil, name, name)
		if err != nil {
			return nil, err
		}
		if err := g.decoder(t); err != nil {
			return nil, err
		}
		if slices.Contains(jsonOutputs, name) {
			if err := g.jsonDecoder(t); err != nil {
				return nil, err
			}
		}
	}
	return g.file()
}

// kind is what a Go type is to a codec.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kFloat
	kStruct
	kSlice
	kMap
	kAny
)

// basics are the predeclared types a codec handles.
var basics = map[string]kind{"string": kString, "bool": kBool, "int": kInt, "float64": kFloat, "any": kAny}

// typ is a resolved Go type.
type typ struct {
	kind   kind
	expr   string // how the policies package spells it: GateCard, domain.RoleCounts, domain.Lane
	fn     string // the suffix of its codec functions: GateCard, DomainRoleCounts
	pkg    string // the import path expr needs, "" for none
	named  bool   // a defined type over a basic type, converted for OPA and strconv
	elem   *typ   // of a slice or map (maps have string keys)
	fields []field
}

type field struct {
	goName, json string
	policy       string // the `policy` tag
	t            *typ
}

// pkg is one parsed package: its type declarations and each file's imports.
type pkg struct {
	path  string
	types map[string]typeDecl
}

type typeDecl struct {
	spec    *ast.TypeSpec
	imports map[string]string // local name → import path
}

type loader struct {
	modPath, modDir string
	main            *pkg
	pkgs            map[string]*pkg
	cache           map[string]*typ
}

func newLoader(dir string) (*loader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("policies folder: %w", err)
	}
	modDir := abs
	for {
		if _, err := os.Stat(filepath.Join(modDir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(modDir)
		if up == modDir {
			return nil, fmt.Errorf("no go.mod above %s", abs)
		}
		modDir = up
	}
	mod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	var modPath string
	for line := range strings.SplitSeq(string(mod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			modPath = strings.TrimSpace(rest)
		}
	}
	if modPath == "" {
		return nil, fmt.Errorf("%s names no module", filepath.Join(modDir, "go.mod"))
	}
	rel, err := filepath.Rel(modDir, abs)
	if err != nil {
		return nil, fmt.Errorf("policies folder: %w", err)
	}
	l := &loader{modPath: modPath, modDir: modDir, pkgs: map[string]*pkg{}, cache: map[string]*typ{}}
	l.main, err = l.load(modPath + "/" + filepath.ToSlash(rel))
	return l, err
}

// load parses the non-test, non-generated Go files of a package of the
// module.
func (l *loader) load(path string) (*pkg, error) {
	if p, ok := l.pkgs[path]; ok {
		return p, nil
	}
	rel, ok := strings.CutPrefix(path, l.modPath+"/")
	if !ok {
		return nil, fmt.Errorf("package %s is outside module %s: only the module's own types can be generated", path, l.modPath)
	}
	dir := filepath.Join(l.modDir, filepath.FromSlash(rel))
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	p := &pkg{path: path, types: map[string]typeDecl{}}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		imports := map[string]string{}
		for _, imp := range f.Imports {
			ipath, _ := strconv.Unquote(imp.Path.Value)
			local := ipath[strings.LastIndex(ipath, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = ipath
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				p.types[ts.Name.Name] = typeDecl{spec: ts, imports: imports}
			}
		}
	}
	l.pkgs[path] = p
	return p, nil
}

// resolve turns a type expression of package p, written in a file with
// the given imports, into a typ; where names the field for errors.
func (l *loader) resolve(p *pkg, imports map[string]string, e ast.Expr, where string) (*typ, error) {
	switch x := e.(type) {
	case *ast.Ident:
		if k, ok := basics[x.Name]; ok {
			return &typ{kind: k, expr: x.Name}, nil
		}
		return l.named(p, imports, nil, x.Name, where)
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported type %T", where, x.X)
		}
		return l.named(p, imports, &id.Name, x.Sel.Name, where)
	case *ast.ArrayType:
		if x.Len != nil {
			return nil, fmt.Errorf("%s: arrays are not supported, use a slice", where)
		}
		el, err := l.resolve(p, imports, x.Elt, where+"[]")
		if err != nil {
			return nil, err
		}
		return &typ{kind: kSlice, expr: "[]" + el.expr, elem: el}, nil
	case *ast.MapType:
		if k, ok := x.Key.(*ast.Ident); !ok || k.Name != "string" {
			return nil, fmt.Errorf("%s: map keys must be strings", where)
		}
		el, err := l.resolve(p, imports, x.Value, where+"{}")
		if err != nil {
			return nil, err
		}
		return &typ{kind: kMap, expr: "map[string]" + el.expr, elem: el}, nil
	}
	return nil, fmt.Errorf("%s: unsupported type %T", where, e)
}

// named resolves the type name of package p, or of the package imported
// as *qual.
func (l *loader) named(p *pkg, imports map[string]string, qual *string, name, where string) (*typ, error) {
	target := p
	expr, fn, ipath := name, name, ""
	if qual != nil {
		path, ok := imports[*qual]
		if !ok {
			return nil, fmt.Errorf("%s: %s.%s: %s is not imported", where, *qual, name, *qual)
		}
		var err error
		if target, err = l.load(path); err != nil {
			return nil, err
		}
		expr, fn, ipath = *qual+"."+name, exported(*qual)+name, path
	} else if p != l.main {
		// A name inside another package is spelt with its qualifier here.
		q := p.path[strings.LastIndex(p.path, "/")+1:]
		expr, fn, ipath = q+"."+name, exported(q)+name, p.path
	}
	key := target.path + "." + name
	if t, ok := l.cache[key]; ok {
		return t, nil
	}
	decl, ok := target.types[name]
	if !ok {
		return nil, fmt.Errorf("%s: type %s not found in %s", where, name, target.path)
	}
	switch u := decl.spec.Type.(type) {
	case *ast.StructType:
		t := &typ{kind: kStruct, expr: expr, fn: fn, pkg: ipath}
		l.cache[key] = t
		for _, f := range u.Fields.List {
			if len(f.Names) == 0 {
				return nil, fmt.Errorf("%s: embedded fields are not supported", name)
			}
			var tag reflect.StructTag
			if f.Tag != nil {
				s, _ := strconv.Unquote(f.Tag.Value)
				tag = reflect.StructTag(s)
			}
			jname, _, _ := strings.Cut(tag.Get("json"), ",")
			for _, n := range f.Names {
				if !n.IsExported() || jname == "-" {
					continue
				}
				ft, err := l.resolve(target, decl.imports, f.Type, name+"."+n.Name)
				if err != nil {
					return nil, err
				}
				j := jname
				if j == "" {
					j = n.Name
				}
				t.fields = append(t.fields, field{goName: n.Name, json: j, policy: tag.Get("policy"), t: ft})
			}
		}
		return t, nil
	case *ast.Ident:
		u2, err := l.resolve(target, decl.imports, u, where)
		if err != nil {
			return nil, err
		}
		if u2.kind > kFloat {
			return nil, fmt.Errorf("%s: defined type %s over %s is not supported", where, name, u.Name)
		}
		t := &typ{kind: u2.kind, expr: expr, fn: fn, pkg: ipath, named: true}
		l.cache[key] = t
		return t, nil
	}
	return nil, fmt.Errorf("%s: type %s is not a struct or a basic type", where, name)
}

func exported(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
