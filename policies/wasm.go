package policies

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/valyala/fastjson"

	"github.com/palacehq/palace/plugins"
)

// ErrSetClosed is returned (wrapped) by a decision a closed Set serves with
// a .wasm module.
var ErrSetClosed = errors.New("policy set closed: ask for the current set")

// parseWasm reads a .wasm policy file the plugins sandbox would load,
// without compiling it.
func parseWasm(source, path string, content []byte) (File, error) {
	rep := plugins.Inspect(filepath.Base(path), content)
	if !rep.WouldLoad {
		msg := rep.Problems[0]
		if n := len(rep.Problems) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more; see palace plugin inspect %s)", n, path)
		}
		return File{}, Errors{newError("plugin_refused", path, 0, 0, msg)}
	}
	f := File{Source: source, Path: path, Kind: KindWasm, SHA256: rep.SHA256, content: content}
	for _, name := range rep.DecisionPoints {
		if p, err := ParsePoint(name); err == nil {
			f.exports = append(f.exports, p)
		}
	}
	return f, nil
}

// loadWasm loads the set's .wasm modules and serves their points. A module
// that fails to load fails the set with an error located at its file.
func (s *Set) loadWasm(ctx context.Context, opts Options) error {
	var host *wasmHost
	for _, f := range s.files {
		if f.Kind != KindWasm {
			continue
		}
		if host == nil {
			host = wasmHostFor(opts, s.timeout)
			s.life = &lifetime{}
			runtime.AddCleanup(s, func(l *lifetime) { go l.close() }, s.life)
		}
		m, release, err := host.acquire(ctx, f)
		if err != nil {
			s.Close()
			return Errors{newError("plugin_error", f.Path, 0, 0, err.Error())}
		}
		s.life.releases = append(s.life.releases, release)
		e := &wasmEngine{m: m, life: s.life, timeout: s.timeout}
		for _, p := range f.Points {
			sv := servedBy(p, []File{f})
			sv.Engine = EngineWasm
			s.served[p] = sv
			s.engines[p] = e
		}
	}
	return nil
}

// Close releases the set's .wasm modules once every decision in progress on
// it has returned. Later decisions on its WASM points fail with
// ErrSetClosed; Rego and Go points keep working. An unclosed set releases
// its modules when garbage collected. Safe to call more than once and
// concurrently.
func (s *Set) Close() error {
	if s.life != nil {
		s.life.close()
	}
	return nil
}

// lifetime tracks the decisions in progress on a set's modules: each holds
// mu for reading, so close, taking it for writing, waits for them.
type lifetime struct {
	mu       sync.RWMutex
	calls    atomic.Int32
	closed   atomic.Bool
	releases []func()
}

func (l *lifetime) enter() bool {
	l.mu.RLock()
	if l.closed.Load() {
		l.mu.RUnlock()
		return false
	}
	l.calls.Add(1)
	return true
}

func (l *lifetime) exit() {
	l.calls.Add(-1)
	l.mu.RUnlock()
}

func (l *lifetime) isClosed() bool { return l.closed.Load() }

func (l *lifetime) close() {
	if l.closed.Swap(true) {
		return
	}
	l.mu.Lock()
	releases := l.releases
	l.releases = nil
	l.mu.Unlock()
	for _, r := range releases {
		r()
	}
}

// wasmEngine serves points with one loaded module.
type wasmEngine struct {
	m       *plugins.Module
	life    *lifetime
	timeout time.Duration
}

func (e *wasmEngine) Decide(ctx context.Context, p Point, in any) (ast.Value, error) {
	out, err := e.answer(ctx, p, in)
	if err != nil {
		return nil, err
	}
	return parseOutput(p, out, func(v *fastjson.Value) (ast.Value, error) { return astOf(v), nil })
}

// lanes is Decide for the lanes point, decoding without an OPA value when
// it can.
func (e *wasmEngine) lanes(ctx context.Context, in LanesInput) (LanesOutput, error) {
	out, err := e.answer(ctx, Lanes, in)
	if err != nil {
		return nil, err
	}
	return parseOutput(Lanes, out, func(v *fastjson.Value) (LanesOutput, error) {
		if res, ok := decodeLanesJSON(v, in.Cards); ok {
			return res, nil
		}
		return decodeLanes(astOf(v), in.Cards)
	})
}

// answer runs the module's export for p on in and returns its JSON output.
func (e *wasmEngine) answer(ctx context.Context, p Point, in any) ([]byte, error) {
	input, err := wasmInput(p, in)
	if err != nil {
		return nil, err
	}
	return e.call(ctx, p, input)
}

var parsers sync.Pool // of *fastjson.Parser

// parseOutput parses a module's JSON output for p and hands it to decode;
// the parsed value is valid only during decode.
func parseOutput[T any](p Point, out []byte, decode func(*fastjson.Value) (T, error)) (T, error) {
	parser, _ := parsers.Get().(*fastjson.Parser)
	if parser == nil {
		parser = new(fastjson.Parser)
	}
	defer parsers.Put(parser)
	v, err := parser.ParseBytes(out)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s returned a malformed decision: output must be JSON: %w", p.Package(), err)
	}
	return decode(v)
}

func astOf(v *fastjson.Value) ast.Value {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		items := make([][2]*ast.Term, 0, o.Len())
		o.Visit(func(k []byte, x *fastjson.Value) {
			items = append(items, [2]*ast.Term{ast.InternedTerm(string(k)), ast.NewTerm(astOf(x))})
		})
		return ast.NewObject(items...)
	case fastjson.TypeArray:
		xs, _ := v.Array()
		terms := make([]*ast.Term, len(xs))
		for i, x := range xs {
			terms[i] = ast.NewTerm(astOf(x))
		}
		return ast.NewArray(terms...)
	case fastjson.TypeString:
		return ast.String(v.GetStringBytes())
	case fastjson.TypeNumber:
		return ast.Number(v.MarshalTo(nil)) // the number as written
	case fastjson.TypeTrue:
		return ast.Boolean(true)
	case fastjson.TypeFalse:
		return ast.Boolean(false)
	}
	return ast.Null{}
}

// call runs the module's export for p under the set's deadline, which
// covers waiting for a free instance as well as the guest's run.
func (e *wasmEngine) call(ctx context.Context, p Point, input []byte) ([]byte, error) {
	if !e.life.enter() {
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), ErrSetClosed)
	}
	defer e.life.exit()
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	out, err := e.m.Call(ctx, string(p), input)
	if err != nil {
		if errors.Is(err, plugins.ErrDeadline) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("evaluate %s: deadline of %s exceeded: %w", p.Package(), e.timeout, err)
		}
		return nil, fmt.Errorf("evaluate %s: %w", p.Package(), err)
	}
	return out, nil
}

// wasmHost is the plugins runtime of one configuration and the modules
// loaded through it, shared by every set of the process.
type wasmHost struct {
	rt *plugins.Runtime

	mu   sync.Mutex // guards mods
	mods map[moduleKey]*sharedModule
}

// moduleKey names a module by its file and its bytes.
type moduleKey struct{ path, sha string }

type sharedModule struct {
	refs  int
	ready chan struct{} // closed when the load finished
	m     *plugins.Module
	err   error
}

type hostKey struct {
	cacheDir, version string
	deadline          time.Duration
}

var (
	hostsMu sync.Mutex
	hosts   = map[hostKey]*wasmHost{}
)

// wasmHostFor returns the process's host for this configuration, creating
// it on first use. Hosts live as long as the process; their modules do not.
func wasmHostFor(opts Options, deadline time.Duration) *wasmHost {
	k := hostKey{opts.CacheDir, opts.Version, deadline}
	hostsMu.Lock()
	defer hostsMu.Unlock()
	if h, ok := hosts[k]; ok {
		return h
	}
	cfg := plugins.Config{}.WithCacheDir(opts.CacheDir).WithVersion(opts.Version).WithDeadline(deadline)
	rt, err := plugins.NewRuntime(context.Background(), cfg)
	if err != nil { // only an invalid Config fails
		panic(fmt.Sprintf("palace: plugin runtime: %v", err))
	}
	h := &wasmHost{rt: rt, mods: map[moduleKey]*sharedModule{}}
	hosts[k] = h
	return h
}

// acquire returns f's module, loading it unless a set already holds it,
// and the function that gives it back; the last give-back closes it.
func (h *wasmHost) acquire(ctx context.Context, f File) (*plugins.Module, func(), error) {
	k := moduleKey{f.Path, f.SHA256}
	h.mu.Lock()
	sm, ok := h.mods[k]
	if !ok {
		sm = &sharedModule{ready: make(chan struct{})}
		h.mods[k] = sm
	}
	sm.refs++
	h.mu.Unlock()
	if !ok {
		sm.m, sm.err = h.rt.Load(ctx, filepath.Base(f.Path), f.content)
		close(sm.ready)
	}
	<-sm.ready
	var once sync.Once
	release := func() {
		once.Do(func() {
			h.mu.Lock()
			sm.refs--
			last := sm.refs == 0
			if last && h.mods[k] == sm {
				delete(h.mods, k)
			}
			h.mu.Unlock()
			if last && sm.m != nil {
				_ = sm.m.Close(context.Background())
			}
		})
	}
	if sm.err != nil {
		release()
		return nil, nil, sm.err
	}
	return sm.m, release, nil
}

// isWasm reports whether a policy path names a WebAssembly module.
func isWasm(path string) bool { return strings.HasSuffix(path, ".wasm") }
