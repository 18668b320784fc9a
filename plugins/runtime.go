package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// Runtime loads plugins under one Config. It is safe for concurrent use.
type Runtime struct {
	s          settings
	entryLocks sync.Map // module hash -> *sync.Mutex serialising its disk cache entry

	mu      sync.Mutex  // guards the fields below
	closed  atomic.Bool // set under mu
	modules map[*Module]struct{}
}

// NewRuntime checks cfg and returns a Runtime. It fails only on an invalid
// Config or a cancelled ctx.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("new plugin runtime: %w", err)
	}
	s, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("new plugin runtime: %w", err)
	}
	return &Runtime{s: s, modules: map[*Module]struct{}{}}, nil
}

// Load checks, compiles and instantiates the module wasm, naming it name in
// every message. The bytes are not retained.
//
// A module is refused before compilation, with ErrRefused and the offending
// section, import or export named, when it is not WebAssembly, a section
// declares more than it holds or than palace's limits allow, it imports
// anything outside extism:host/env and wasi_snapshot_preview1, or it
// exports no decision point or one with the wrong signature, e.g.
//
//	load plugin team.wasm: imports env.evil_fn: only extism:host/env and wasi_snapshot_preview1 are allowed
//
// Load creates one instance, so a module that cannot be instantiated fails
// here. Its start function, the only guest code Load runs, is bounded by
// Config's deadline (ErrDeadline).
func (r *Runtime) Load(ctx context.Context, name string, wasm []byte) (*Module, error) {
	m, err := r.load(ctx, name, wasm)
	if err != nil {
		return nil, fmt.Errorf("load plugin %s: %w", name, err)
	}
	return m, nil
}

func (r *Runtime) load(ctx context.Context, name string, wasm []byte) (*Module, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	shape, err := validateModule(wasm, r.s.memoryPages)
	if err != nil {
		return nil, refusal{"not a valid WebAssembly module: " + err.Error()}
	}
	points, problems := pointsAndProblems(&shape.mod)
	if len(problems) > 0 {
		return nil, refuse(problems)
	}
	sum := sha256.Sum256(wasm)
	hash := hex.EncodeToString(sum[:])

	compiled, cache, interruptible, err := r.compile(ctx, wasm, hash)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	m := &Module{
		name:          name,
		hash:          hash,
		points:        points,
		s:             r.s,
		compiled:      compiled,
		cache:         cache,
		interruptible: interruptible,
		hasStart:      shape.start != nil,
		pool:          make(chan *instance, r.s.poolSize),
		done:          make(chan struct{}),
		rt:            r,
	}
	first, err := m.instantiate(ctx)
	if err != nil {
		m.release(context.WithoutCancel(ctx))
		return nil, err
	}
	m.pool <- first
	for range r.s.poolSize - 1 {
		m.pool <- nil // empty slots, filled on demand
	}

	r.mu.Lock()
	if r.closed.Load() {
		// Close ran while we compiled; it could not see this module.
		r.mu.Unlock()
		m.Close(context.WithoutCancel(ctx))
		return nil, ErrClosed
	}
	r.modules[m] = struct{}{}
	r.mu.Unlock()
	return m, nil
}

// compile builds the Extism plugin, through the disk cache when configured.
// An entry not matching its seal is rebuilt; a failing cache is deleted and
// the module compiled in memory: the cache never fails Load or changes what
// runs. interruptible says the module carries palace's deadline checks.
func (r *Runtime) compile(ctx context.Context, wasm []byte, hash string) (_ *extism.CompiledPlugin, _ wazero.CompilationCache, interruptible bool, _ error) {
	if r.s.cacheDir != "" {
		mu, _ := r.entryLocks.LoadOrStore(hash, new(sync.Mutex))
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
		for range 2 { // a sealed entry, then (if it was not intact) a new one
			d := openDiskCache(r.s.cacheDir, r.s.version, hash)
			compiled, cache, interruptible, ok := r.compileCached(ctx, wasm, d)
			if ok {
				return compiled, cache, interruptible, nil
			}
			if !d.sealed {
				break
			}
		}
	}
	code, interruptible := rewrite(wasm)
	compiled, err := r.compileWith(ctx, code, nil, interruptible)
	return compiled, nil, interruptible, err
}

// compileCached compiles through the cache entry d, sealing a new one; ok is
// false, with d deleted, when that failed or d was not intact.
func (r *Runtime) compileCached(ctx context.Context, wasm []byte, d diskCache) (_ *extism.CompiledPlugin, _ wazero.CompilationCache, interruptible, ok bool) {
	code, interruptible := d.rewritten()
	if !interruptible {
		code, interruptible = rewrite(wasm)
	}
	cache, err := wazero.NewCompilationCacheWithDir(d.dir)
	var compiled *extism.CompiledPlugin
	if err == nil {
		compiled, err = r.compileWith(ctx, code, cache, interruptible)
	}
	if d.sealed && !d.intact() && err == nil {
		err = errors.New("cache entry does not match its seal")
	}
	if err != nil {
		if compiled != nil {
			_ = compiled.Close(ctx)
		}
		if cache != nil {
			_ = cache.Close(ctx)
		}
		d.discard()
		return nil, nil, false, false
	}
	if !d.sealed {
		if interruptible {
			d.keepRewritten(code)
		}
		d.seal()
	}
	return compiled, cache, interruptible, true
}

// rewrite caps the module's tables and adds the deadline checks when it can
// (true).
func rewrite(wasm []byte) ([]byte, bool) {
	wasm = capTables(wasm)
	if code, err := instrument(wasm); err == nil {
		return code, true
	}
	return wasm, false
}

func (r *Runtime) compileWith(ctx context.Context, wasm []byte, cache wazero.CompilationCache, interruptible bool) (_ *extism.CompiledPlugin, err error) {
	// A damaged cache entry must fail the compile, not the process.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("compile panicked: %v", p)
		}
	}()
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(!interruptible).
		WithMemoryLimitPages(r.s.memoryPages)
	if cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm}},
		Memory: &extism.ManifestMemory{
			MaxPages: r.s.memoryPages,
			// Zero disables Extism vars and HTTP bodies.
			MaxVarBytes:          0,
			MaxHttpResponseBytes: 0,
		},
		// Empty AllowedHosts, AllowedPaths and Config are the sandbox;
		// Module.Call sets the deadline.
	}
	// At least two workers: only then does wazero stop between functions
	// when ctx ends, which is how compileBudget holds.
	ctx, cancel := context.WithTimeout(ctx, compileBudget)
	defer cancel()
	ctx = experimental.WithCompilationWorkers(ctx, max(2, runtime.GOMAXPROCS(0)))
	p, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{RuntimeConfig: rc, EnableWasi: true}, nil)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("still compiling after %v, stopped (a module that takes this long is refused): %w", compileBudget, err)
	}
	return p, err
}

// compileBudget bounds the compilation of one module.
var compileBudget = 20 * time.Second

// Close closes every Module loaded by r (see Module.Close) and makes later
// Loads fail with ErrClosed. It is safe to call more than once.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed.Store(true)
	mods := make([]*Module, 0, len(r.modules))
	for m := range r.modules {
		mods = append(mods, m)
	}
	r.mu.Unlock()
	var errs []error
	for _, m := range mods {
		errs = append(errs, m.Close(ctx))
	}
	return errors.Join(errs...)
}

func (r *Runtime) forget(m *Module) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.modules, m)
}
