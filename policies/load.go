package policies

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/palacehq/palace/internal/bounded"
)

// The names of the three policy sources, in load order.
const (
	SourceEmbedded = "embedded"
	SourceHome     = "home"
	SourceRepo     = "repo"
)

// Sources says where the non-embedded policies live. A directory that does
// not exist is simply empty.
type Sources struct {
	// HomeDir is $PALACE_HOME/policies.
	HomeDir string
	// RepoDir is <worktree>/.palace/policies.
	RepoDir string
	// RepoRoot, when set, confines RepoDir's files (lanes.json included):
	// one resolving outside it fails the load with a located load_error.
	// Empty: no such check.
	RepoRoot string
}

// DefaultTimeout bounds every evaluation unless Options.Timeout says otherwise.
const DefaultTimeout = 100 * time.Millisecond

// Options tune a Set. The zero value is valid.
type Options struct {
	// Timeout bounds each evaluation. Defaults to DefaultTimeout.
	Timeout time.Duration
	// RegoOnly evaluates every Rego point with OPA, even an unmodified
	// embedded default the Go engine would serve. .wasm modules are
	// unaffected. Defaults to false.
	RegoOnly bool
	// CacheDir keeps compiled .wasm modules on disk (plugins.Config's
	// WithCacheDir). Defaults to "": compile in memory on every load.
	CacheDir string
	// Version names the palace build in the cache's layout. Defaults to
	// "unversioned".
	Version string
}

// The kinds of policy file (File.Kind).
const (
	KindRego = "rego"
	KindWasm = "wasm"
)

// File is one policy file of a set: a Rego module, or a WebAssembly module
// serving the decision points it exports.
type File struct {
	Source string `json:"source"`
	Path   string `json:"path"`
	// Kind is KindRego or KindWasm.
	Kind string `json:"kind"`
	// Package is the Rego package ("" for a .wasm module).
	Package string `json:"package"`
	// Points are the decision points a .wasm module serves in this set
	// (exports that a later source replaced are left out); nil for Rego.
	Points []Point `json:"points,omitempty"`
	SHA256 string  `json:"sha256"`
	Test   bool    `json:"test,omitempty"`

	content []byte
	module  *ast.Module
	parsed  func() *ast.Module // for embedded defaults: parses at first use
	lanes   lanesOverlay       // the settings of a lanes configuration file
	exports []Point            // every point a .wasm module exports
}

// Module is f's parsed Rego module (nil for a .wasm module or a lanes
// configuration).
func (f File) Module() *ast.Module {
	if f.module == nil && f.parsed != nil {
		return f.parsed()
	}
	return f.module
}

// packages are the Rego packages f declares or, for a .wasm module, the
// packages of the points it exports: what package-level override compares.
func (f File) packages() []string {
	if f.Kind != KindWasm {
		return []string{f.Package}
	}
	out := make([]string, len(f.exports))
	for i, p := range f.exports {
		out[i] = p.Package()
	}
	return out
}

// Served says what serves one decision point.
type Served struct {
	Point  Point    `json:"point"`
	Source string   `json:"source"`
	Files  []string `json:"files"`
	Hash   string   `json:"hash"`
	Engine string   `json:"engine"`
}

// Set is one compiled, immutable set of policies. It is safe for concurrent
// use. A set that serves a point from a .wasm module holds that module open
// until the set is closed (see Close) or, failing that, garbage collected.
type Set struct {
	hash     string
	files    []File
	served   map[Point]Served
	prepared func() (map[Point]rego.PreparedEvalQuery, error) // see preparedFor
	engines  map[Point]Decider
	timeout  time.Duration
	lanes    LanesConfig // defaults and lanes.json settings
	life     *lifetime   // nil when the set holds no .wasm module
}

// Hash is the content hash of every runtime file of the set (sha256 hex).
func (s *Set) Hash() string { return s.hash }

// Files lists the set's runtime files (tests excluded) in load order.
func (s *Set) Files() []File { return slices.Clone(s.files) }

// Served says what serves p; ok is false when nothing does.
func (s *Set) Served(p Point) (Served, bool) {
	sv, ok := s.served[p]
	return sv, ok
}

// deniedBuiltins are refused at compile time: a policy decides from its input
// alone, with no network and no view of the host's environment.
var deniedBuiltins = map[string]bool{
	"http.send":          true,
	"net.lookup_ip_addr": true,
	"opa.runtime":        true,
}

var capabilities = func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	kept := c.Builtins[:0]
	for _, b := range c.Builtins {
		if !deniedBuiltins[b.Name] {
			kept = append(kept, b)
		}
	}
	c.Builtins = kept
	return c
}()

// Load reads the three sources, applies package-level override and compiles
// the result. Any parse or compile error fails the whole load with Errors
// located at file:line:col.
func Load(ctx context.Context, src Sources, opts Options) (*Set, error) {
	snap, err := readSnapshot(src)
	if err != nil {
		return nil, err
	}
	return snap.compile(ctx, opts)
}

// LoadDefaults compiles the embedded defaults alone. It cannot fail unless
// the binary itself is broken.
func LoadDefaults(ctx context.Context, opts Options) (*Set, error) {
	return Load(ctx, Sources{}, opts)
}

// rawFile is one policy file's bytes as read from disk.
type rawFile struct {
	source, path string
	content      []byte
}

// snapshot is the home and repo policy files at one moment; a watcher skips
// a reload when the fingerprint did not change.
type snapshot struct {
	files       []rawFile
	fingerprint string
}

// maxPolicyFileBytes bounds one policy file read from a policy folder.
const maxPolicyFileBytes = 64 << 20

func readSnapshot(src Sources) (snapshot, error) {
	var snap snapshot
	h := sha256.New()
	for _, s := range []struct{ name, dir string }{{SourceHome, src.HomeDir}, {SourceRepo, src.RepoDir}} {
		paths, err := sourceFiles(s.dir, true)
		if err != nil {
			return snapshot{}, err
		}
		for _, p := range paths {
			var b []byte
			if s.name == SourceRepo && src.RepoRoot != "" {
				b, err = bounded.ReadFileWithin(src.RepoRoot, p, maxPolicyFileBytes)
			} else {
				b, err = bounded.ReadFile(p, maxPolicyFileBytes)
			}
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted between the listing and the read: an editor mid-save
			}
			if errors.Is(err, bounded.ErrOutside) {
				return snapshot{}, Errors{newError("load_error", p, 1, 1, err.Error())}
			}
			if err != nil {
				return snapshot{}, fmt.Errorf("read policy %s: %w", p, err)
			}
			snap.files = append(snap.files, rawFile{source: s.name, path: p, content: b})
			fmt.Fprintf(h, "%s\x00%s\x00%d\x00", s.name, p, len(b))
			h.Write(b)
		}
	}
	snap.fingerprint = hex.EncodeToString(h.Sum(nil))
	return snap, nil
}

// parse parses the snapshot's files after the embedded ones.
func (snap snapshot) parse() ([]File, error) {
	files := slices.Clone(embeddedFiles())
	var errs Errors
	for _, r := range snap.files {
		parse := parseFile
		switch {
		case isWasm(r.path):
			parse = parseWasm
		case isLanesConfig(r.path):
			parse = parseLanesConfig
		}
		f, err := parse(r.source, r.path, r.content)
		if err != nil {
			errs = append(errs, located(err, r.path)...)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return files, nil
}

func (snap snapshot) compile(ctx context.Context, opts Options) (*Set, error) {
	files, err := snap.parse()
	if err != nil {
		return nil, err
	}
	return compile(ctx, files, opts)
}

// defaultAlias is the package under which an embedded default stays
// importable after a team replaces it: palace.scope → palace.default.scope.
func defaultAlias(pkg string) string {
	return "palace.default." + strings.TrimPrefix(pkg, "palace.")
}

// embeddedFiles are the embedded defaults, each parsed at its first use,
// their packages read from the package line. Sets share the modules (the
// compiler copies them).
var embeddedFiles = sync.OnceValue(func() []File {
	var files []File
	err := fs.WalkDir(defaultFS, "default", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") {
			return err
		}
		b, err := defaultFS.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := packageLine(b)
		if pkg == "" {
			return fmt.Errorf("%s: no package line", path)
		}
		sum := sha256.Sum256(b)
		f := File{Source: SourceEmbedded, Path: path, Kind: KindRego, Package: pkg, SHA256: hex.EncodeToString(sum[:]),
			Test: strings.HasSuffix(path, "_test.rego"), content: b}
		f.parsed = sync.OnceValue(func() *ast.Module { return mustParseEmbedded(path, b, "") })
		files = append(files, f)
		if !f.Test {
			// The same module again as palace.default.<point>, importable
			// by a team policy that replaces palace.<point>.
			a := f
			a.Path = path + "#" + defaultAlias(pkg)
			a.Package = defaultAlias(pkg)
			a.parsed = sync.OnceValue(func() *ast.Module { return mustParseEmbedded(a.Path, b, a.Package) })
			files = append(files, a)
		}
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("palace: embedded policies are broken: %v", err))
	}
	return files
})

// referencedDefaults reports which palace.default.<point> packages the
// set's non-embedded Rego modules refer to, or all when one cannot tell
// (a dynamic key, or data, data.palace or data.palace.default whole).
func referencedDefaults(runtime []File) (pkgs map[string]bool, all bool) {
	pkgs = map[string]bool{}
	path := []string{"palace", "default"}
	for _, f := range runtime {
		if f.Kind != KindRego || f.Source == SourceEmbedded || all {
			continue
		}
		m := f.Module()
		// Imports and rules only: the package path is walked as bare terms
		// (data, "palace", ...) and names the module, not what it reads.
		visit := func(t *ast.Term) bool {
			switch v := t.Value.(type) {
			case ast.Var:
				all = all || v.Equal(ast.DefaultRootDocument.Value)
			case ast.Ref:
				if !v[0].Equal(ast.DefaultRootDocument) {
					return false // input, a local or a function: look inside for data refs
				}
				for i := 1; i <= len(path)+1; i++ {
					if i >= len(v) {
						all = true // a prefix of data.palace.default.<point>
						return true
					}
					key, ok := v[i].Value.(ast.String)
					if !ok {
						all = true
						return true
					}
					if i <= len(path) && string(key) != path[i-1] {
						return true
					}
					if i == len(path)+1 {
						pkgs["palace.default."+string(key)] = true
					}
				}
				return true
			}
			return false
		}
		for _, imp := range m.Imports {
			ast.WalkTerms(imp, visit)
		}
		for _, r := range m.Rules {
			ast.WalkTerms(r, visit)
		}
	}
	return pkgs, all
}

// mustParseEmbedded parses an embedded default, under package pkg when it
// is not "" (the palace.default alias).
func mustParseEmbedded(path string, content []byte, pkg string) *ast.Module {
	f, err := parseFile(SourceEmbedded, path, content)
	if err != nil {
		panic(fmt.Sprintf("palace: embedded policy %s is broken: %v", path, err))
	}
	if pkg != "" {
		f.module.Package.Path = ast.MustParseRef("data." + pkg)
	}
	return f.module
}

// packageLine reads the package a Rego file declares from its first
// package line ("" if none).
func packageLine(b []byte) string {
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "package "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// sourceFiles lists the .rego files under dir and, with wasm, the .wasm
// modules too, sorted, skipping hidden directories and editor temp files.
func sourceFiles(dir string, wasm bool) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	// A linked folder is listed through the link; its files keep their
	// paths under dir.
	walk := dir
	if st, err := os.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			walk = r
		}
	}
	var out []string
	err := filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if walk != dir {
			rel, err := filepath.Rel(walk, path)
			if err != nil {
				return err
			}
			path = filepath.Join(dir, rel)
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && strings.HasPrefix(name, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") {
			return nil
		}
		if strings.HasSuffix(name, ".rego") || wasm && strings.HasSuffix(name, ".wasm") ||
			wasm && name == LanesConfigFile && filepath.Dir(path) == filepath.Clean(dir) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list policies in %s: %w", dir, err)
	}
	sort.Strings(out)
	return out, nil
}

// isLanesConfig says whether path is a lanes configuration file (the
// listing only returns one at the top of a policy folder).
func isLanesConfig(path string) bool { return filepath.Base(path) == LanesConfigFile }

func parseFile(source, path string, content []byte) (File, error) {
	m, err := ast.ParseModuleWithOpts(path, string(content), ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
	if err != nil {
		return File{}, err
	}
	if m == nil {
		return File{}, Errors{newError("rego_parse_error", path, 1, 1, "empty module: a policy file needs a package declaration")}
	}
	sum := sha256.Sum256(content)
	return File{
		Source:  source,
		Path:    path,
		Kind:    KindRego,
		Package: strings.TrimPrefix(m.Package.Path.String(), "data."),
		SHA256:  hex.EncodeToString(sum[:]),
		Test:    strings.HasSuffix(path, "_test.rego"),
		content: content,
		module:  m,
	}, nil
}

// sourceRank orders the sources: a later one overrides.
var sourceRank = map[string]int{SourceEmbedded: 0, SourceHome: 1, SourceRepo: 2}

// effective applies package-level override: for every package, only the
// files of the last source that declares it survive. A .wasm module counts
// as declaring the package of each point it exports; it survives when at
// least one of its points does, with Points set to those.
func effective(files []File) []File {
	winner := map[string]int{}
	for _, f := range files {
		for _, pkg := range f.packages() {
			if r, ok := winner[pkg]; !ok || sourceRank[f.Source] > r {
				winner[pkg] = sourceRank[f.Source]
			}
		}
	}
	var out []File
	for _, f := range files {
		if f.Kind == KindConfig {
			out = append(out, f) // settings overlay: home's, then repo's, keys
			continue
		}
		if f.Kind != KindWasm {
			if sourceRank[f.Source] == winner[f.Package] {
				out = append(out, f)
			}
			continue
		}
		f.Points = nil
		for _, p := range f.exports {
			if sourceRank[f.Source] == winner[p.Package()] {
				f.Points = append(f.Points, p)
			}
		}
		if f.Points != nil {
			out = append(out, f)
		}
	}
	return out
}

func compile(ctx context.Context, all []File, opts Options) (*Set, error) {
	if err := conflicts(all); err != nil {
		return nil, err
	}
	var runtime []File
	for _, f := range effective(all) {
		if !f.Test {
			runtime = append(runtime, f)
		}
	}
	s := &Set{
		files:   runtime,
		served:  map[Point]Served{},
		engines: map[Point]Decider{},
		timeout: opts.Timeout,
		lanes:   lanesConfigOf(runtime),
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	// .wasm modules load while the Rego compiles; nothing below reads s
	// before loadWasm returns.
	wasmLoaded := make(chan error, 1)
	go func() { wasmLoaded <- s.loadWasm(ctx, opts) }()
	embeddedOnly := true
	regoFiles := map[Point][]File{} // every point a Rego file serves, with its files
	for _, f := range runtime {
		if f.Kind != KindRego {
			continue
		}
		embeddedOnly = embeddedOnly && f.Source == SourceEmbedded
		if p, err := ParsePoint(f.Package); err == nil && f.Package == p.Package() {
			regoFiles[p] = append(regoFiles[p], f)
		}
	}
	prepare := func(ctx context.Context) (map[Point]rego.PreparedEvalQuery, error) {
		modules := make(map[string]*ast.Module, len(runtime))
		aliases, allAliases := referencedDefaults(runtime)
		for _, f := range runtime {
			if f.Kind != KindRego {
				continue
			}
			// A palace.default alias no team module reaches is not compiled.
			if f.Source == SourceEmbedded && strings.HasPrefix(f.Package, "palace.default.") && !allAliases && !aliases[f.Package] {
				continue
			}
			modules[f.Path] = f.Module()
		}
		c := ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities)
		c.Compile(modules)
		if c.Failed() {
			return nil, located(c.Errors, "")
		}
		out := map[Point]rego.PreparedEvalQuery{}
		for _, p := range Points {
			pf, ok := regoFiles[p]
			if !ok {
				continue
			}
			pq, err := rego.New(rego.Query(p.Query()), rego.Compiler(c)).PrepareForEval(ctx)
			if err != nil {
				return nil, located(err, pf[0].Path)
			}
			out[p] = pq
		}
		return out, nil
	}
	if embeddedOnly {
		// The Go engine decides the embedded defaults; their Rego compiles
		// at its first evaluation.
		s.prepared = sync.OnceValues(func() (map[Point]rego.PreparedEvalQuery, error) {
			return prepare(context.Background())
		})
	} else {
		// A team's policies compile now: a broken one fails the load.
		prepared, err := prepare(ctx)
		if err != nil {
			<-wasmLoaded
			s.Close()
			return nil, err
		}
		s.prepared = func() (map[Point]rego.PreparedEvalQuery, error) { return prepared, nil }
	}
	if err := <-wasmLoaded; err != nil {
		return nil, err
	}
	setHash := sha256.New()
	for _, f := range runtime {
		if f.Kind == KindWasm {
			// The points it serves are part of the set's identity.
			fmt.Fprintf(setHash, "wasm:%v\x00%s\x00%s\x00", f.Points, filepath.Base(f.Path), f.SHA256)
			continue
		}
		fmt.Fprintf(setHash, "%s\x00%s\x00%s\x00", f.Package, filepath.Base(f.Path), f.SHA256)
	}
	s.hash = hex.EncodeToString(setHash.Sum(nil))
	for _, p := range Points {
		if _, ok := s.served[p]; ok {
			continue // a .wasm module serves it
		}
		pf, ok := regoFiles[p]
		if !ok {
			continue
		}
		s.engines[p] = &regoEngine{set: s, timeout: s.timeout}
		sv := servedBy(p, pf)
		if !opts.RegoOnly {
			sv.Engine = engineFor(sv)
		}
		s.served[p] = sv
	}
	return s, nil
}

// preparedFor returns point p's prepared Rego query, compiling the set's
// Rego first if it was left for its first use; ErrNotServed when no Rego
// file serves p.
func (s *Set) preparedFor(p Point) (rego.PreparedEvalQuery, error) {
	all, err := s.prepared()
	if err != nil {
		return rego.PreparedEvalQuery{}, fmt.Errorf("compile the policies for %s: %w", p.Package(), err)
	}
	pq, ok := all[p]
	if !ok {
		return rego.PreparedEvalQuery{}, fmt.Errorf("evaluate %s: %w", p.Package(), ErrNotServed)
	}
	return pq, nil
}

// conflicts refuses a source that serves one decision point twice (a .wasm
// export and a .rego package, or two .wasm exports).
func conflicts(files []File) error {
	type key struct {
		source string
		point  Point
	}
	rego := map[key]File{}
	wasm := map[key]File{}
	for _, f := range files {
		if f.Kind != KindRego || f.Test {
			continue
		}
		if p, err := ParsePoint(f.Package); err == nil && f.Package == p.Package() {
			if _, seen := rego[key{f.Source, p}]; !seen {
				rego[key{f.Source, p}] = f
			}
		}
	}
	var errs Errors
	for _, f := range files {
		if f.Kind != KindWasm {
			continue
		}
		for _, p := range f.exports {
			k := key{f.Source, p}
			if r, ok := rego[k]; ok {
				e := newError("policy_conflict", r.Path, 1, 1,
					fmt.Sprintf("%s is served twice in the %s source: by this package and by %s; remove one of them", p.Package(), f.Source, f.Path))
				if loc := r.Module().Package.Location; loc != nil {
					e.Line, e.Col = loc.Row, loc.Col
				}
				errs = append(errs, e)
			}
			if w, ok := wasm[k]; ok {
				errs = append(errs, newError("policy_conflict", f.Path, 0, 0,
					fmt.Sprintf("%s is served twice in the %s source: by this module and by %s; remove one of them", p.Package(), f.Source, w.Path)))
				continue
			}
			wasm[k] = f
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func servedBy(p Point, files []File) Served {
	h := sha256.New()
	sv := Served{Point: p, Source: files[0].Source, Engine: EngineRego}
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\x00", filepath.Base(f.Path), f.SHA256)
		sv.Files = append(sv.Files, f.Path)
	}
	sv.Hash = hex.EncodeToString(h.Sum(nil))
	return sv
}

// ListSourceFiles lists the policy files (.rego, tests included, and .wasm)
// under dir, sorted; a missing dir has none.
func ListSourceFiles(dir string) ([]string, error) { return sourceFiles(dir, true) }
