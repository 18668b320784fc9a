package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// Module is a loaded plugin. It is safe for concurrent use: each call borrows
// an instance of its own from a bounded pool.
type Module struct {
	name     string
	hash     string
	points   []string
	s        settings
	compiled *extism.CompiledPlugin
	cache    wazero.CompilationCache // nil without a disk cache
	rt       *Runtime
	// interruptible: the module was rewritten with checks that call the
	// host's Osyield (interrupt.go), which stops the guest once its call's
	// context is done; else it was compiled with wazero's
	// WithCloseOnContextDone.
	interruptible bool
	// hasStart: the module declares a start function, which wazero runs
	// whenever an instance is created.
	hasStart bool

	// pool holds Config's pool size of slots; a slot is an idle instance
	// or nil, meaning "instantiate on demand". Taking a slot is the right
	// to run one call, so instances are never shared.
	pool chan *instance
	// done is closed when Close starts; waiting calls then give up.
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Name returns the name given to Load.
func (m *Module) Name() string { return m.name }

// Hash returns the lowercase hex SHA-256 of the module's bytes, which is what
// an audit event stamps as the policy's hash.
func (m *Module) Hash() string { return m.hash }

// Points returns the decision points the module serves, in DecisionPoints
// order. The slice is a copy.
func (m *Module) Points() []string { return slices.Clone(m.points) }

// Serves reports whether the module exports the decision point.
func (m *Module) Serves(point string) bool { return slices.Contains(m.points, point) }

// Call runs the decision point with its JSON input and returns the JSON the
// plugin wrote, unparsed. It waits for a free instance while ctx allows, then
// runs the guest under Config's deadline (or ctx's, if earlier).
//
// It fails, with the plugin and point named, when the module does not serve
// the point (ErrNotServed), the guest runs past the deadline (ErrDeadline),
// traps, exits, returns a non-zero status or sets an Extism error (the
// guest's message and the start of its stderr are quoted), writes no output,
// or writes more than the output limit (ErrOutputTooLarge). After any failure
// the instance is discarded and the next call gets a fresh one, so the Module
// keeps serving.
func (m *Module) Call(ctx context.Context, point string, input []byte) ([]byte, error) {
	out, err := m.call(ctx, point, input)
	if err != nil {
		return nil, fmt.Errorf("call plugin %s %s: %w", m.name, point, err)
	}
	return out, nil
}

func (m *Module) call(ctx context.Context, point string, input []byte) (_ []byte, err error) {
	if !m.Serves(point) {
		return nil, fmt.Errorf("%w (it serves %s)", ErrNotServed, strings.Join(m.points, ", "))
	}
	if uint64(len(input)) >= uint64(m.s.memoryPages)*pageSize {
		return nil, fmt.Errorf("input of %d bytes does not fit the plugin memory limit of %d MiB", len(input), uint64(m.s.memoryPages)*pageSize>>20)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cancelled: %w", err) // before costing an instance
	}
	var inst *instance
	select {
	case inst = <-m.pool:
	case <-m.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for an instance: %w", ctx.Err())
	}
	select {
	case <-m.done:
		m.pool <- inst
		return nil, ErrClosed
	default:
	}
	keep := false
	defer func() {
		if !keep && inst != nil {
			inst.close()
			inst = nil
		}
		m.pool <- inst
	}()
	fresh := inst == nil
	if fresh {
		if inst, err = m.instantiate(ctx); err != nil {
			return nil, err
		}
	}

	callCtx, cancel := context.WithTimeout(ctx, m.s.deadline)
	defer cancel()
	rc, out, err := inst.run(callCtx, point, input)
	if errors.Is(err, errInstanceClosed) && !fresh {
		// The guest ended its own instance in an earlier call that still
		// succeeded (WASI proc_exit(0)); the SDK refused before running any
		// guest code, so running the call on a fresh instance is safe.
		inst.close()
		if inst, err = m.instantiate(ctx); err != nil {
			return nil, err
		}
		rc, out, err = inst.run(callCtx, point, input)
	}
	// wazero closes a module whose context ends while it runs, and may do so
	// just after a call that returned in time: such an instance is not
	// reused even when the call succeeded.
	keep = callCtx.Err() == nil
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("cancelled: %w", ctx.Err())
	case err != nil && callCtx.Err() != nil:
		return nil, fmt.Errorf("%w: still running after %v, stopped", ErrDeadline, m.s.deadline)
	case err != nil:
		keep = false
		return nil, inst.explain(err)
	case rc != 0:
		keep = false
		return nil, inst.explain(fmt.Errorf("returned status %d", rc))
	case len(out) > m.s.outputLimit:
		keep = false
		return nil, fmt.Errorf("%w: wrote %d bytes, the limit is %d", ErrOutputTooLarge, len(out), m.s.outputLimit)
	case len(out) == 0:
		keep = false
		return nil, errors.New("returned status 0 but wrote no output (a decision point must write JSON with pdk.Output)")
	}
	return out, nil
}

// Close waits for calls in progress (each ends within the deadline), closes
// every instance and frees the compiled code; later Calls fail with
// ErrClosed. It is safe to call more than once and concurrently with Call.
func (m *Module) Close(ctx context.Context) error {
	m.closeOnce.Do(func() {
		close(m.done)
		var errs []error
		for range cap(m.pool) {
			if inst := <-m.pool; inst != nil {
				errs = append(errs, inst.close())
			}
		}
		errs = append(errs, m.release(ctx))
		m.closeErr = errors.Join(errs...)
		m.rt.forget(m)
	})
	return m.closeErr
}

// release frees the compiled plugin and its compilation cache.
func (m *Module) release(ctx context.Context) error {
	err := m.compiled.Close(ctx)
	if m.cache != nil {
		err = errors.Join(err, m.cache.Close(ctx))
	}
	return err
}

// errInstanceClosed is a call refused because the instance's main module is
// closed. The Extism go-sdk reports that only as fmt.Errorf("module is
// closed") (CallWithContext, v1.7.1) and does not expose the module to ask;
// run, the one place that calls the SDK, turns that message into this error
// so everything else matches with errors.Is.
var errInstanceClosed = errors.New("plugin instance is closed")

// extismClosedMessage is the go-sdk's message for errInstanceClosed.
const extismClosedMessage = "module is closed"

// instance is one instantiation of the module: its own memories, its own
// Extism kernel state, its own stderr.
type instance struct {
	plugin *extism.Plugin
	stderr *headBuffer
	// callCtx is the context of the call in progress, which the guest's
	// checks test through Osyield. Only the goroutine running the call
	// touches it.
	callCtx context.Context
}

// errInterrupted stops a guest from inside its Osyield check; wazero turns
// the panic into the call's error.
var errInterrupted = errors.New("stopped at the deadline")

// wasiOutputEnv makes the Extism SDK connect a plugin's stdout and stderr to
// the process's own. palace's LSP and MCP servers speak JSON-RPC on stdout,
// so a plugin must never write there.
const wasiOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

func (m *Module) instantiate(ctx context.Context) (*instance, error) {
	if _, set := os.LookupEnv(wasiOutputEnv); set {
		return nil, fmt.Errorf("instantiate: %s is set, which would connect the plugin's stdout to palace's; unset it", wasiOutputEnv)
	}
	stderr := &headBuffer{}
	inst := &instance{stderr: stderr}
	// A fresh wazero ModuleConfig is the sandbox: no mounts, environment,
	// arguments or stdin; stdout discarded; clocks and random source are
	// deterministic fakes; no exported start function (Extism runs the
	// guest's runtime initialiser on the first call, under the deadline).
	mc := wazero.NewModuleConfig().WithStderr(stderr)
	if m.interruptible {
		mc = mc.WithOsyield(func() {
			if c := inst.callCtx; c != nil && c.Err() != nil {
				panic(errInterrupted)
			}
		})
	}
	// Instantiating runs the module's start function, if it declares one
	// (the binary's start section, which wazero runs whatever the module
	// config says). It gets a call's deadline and is stopped the way a call
	// is: by the inserted checks, which test callCtx, or by wazero closing
	// the module when the context ends. Without a start function no guest
	// code runs here, only host work bounded by the module's validated
	// size, which a deadline would only make fail on a busy machine.
	startCtx, cancel := ctx, context.CancelFunc(func() {})
	if m.hasStart {
		startCtx, cancel = context.WithTimeout(ctx, m.s.deadline)
	}
	defer cancel()
	inst.callCtx = startCtx
	p, err := m.compiled.Instance(startCtx, extism.PluginInstanceConfig{ModuleConfig: mc})
	inst.callCtx = nil
	if err == nil && startCtx.Err() != nil {
		// The start function returned as the context ended; wazero may
		// have closed the instance under it.
		_ = p.Close(context.WithoutCancel(ctx))
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("instantiate: cancelled: %w", ctx.Err())
	case err != nil && startCtx.Err() != nil:
		return nil, fmt.Errorf("instantiate: %w: the start function was still running after %v, stopped", ErrDeadline, m.s.deadline)
	case err != nil:
		return nil, fmt.Errorf("instantiate: %w", err)
	case startCtx.Err() != nil:
		return nil, fmt.Errorf("instantiate: %w: the start function ran until the deadline of %v", ErrDeadline, m.s.deadline)
	}
	p.SetLogger(func(extism.LogLevel, string) {}) // pdk.Log output is not palace's to print
	inst.plugin = p
	return inst, nil
}

func (i *instance) close() error { return i.plugin.Close(context.Background()) }

// run calls the guest's export under ctx.
func (i *instance) run(ctx context.Context, point string, input []byte) (rc uint32, out []byte, err error) {
	i.stderr.reset()
	i.callCtx = ctx
	defer func() { i.callCtx = nil }()
	rc, out, err = i.plugin.CallWithContext(ctx, point, input)
	if err != nil && err.Error() == extismClosedMessage {
		err = fmt.Errorf("%w: %w", errInstanceClosed, err)
	}
	return rc, out, err
}

// explain turns a failed call into one line: what happened, then the first
// line the guest wrote to stderr (a Go guest prints "panic: …" or "fatal
// error: out of memory" there before exiting).
func (i *instance) explain(err error) error {
	var exit *sys.ExitError
	msg := firstLine(err.Error(), 300)
	if errors.As(err, &exit) {
		msg = fmt.Sprintf("guest exited with code %d", exit.ExitCode())
	}
	if line := firstLine(i.stderr.String(), 300); line != "" {
		msg += ": stderr: " + line
	}
	return errors.New(msg)
}

// firstLine returns the first non-empty line of s, cut to at most max bytes
// on a rune boundary.
func firstLine(s string, max int) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut] + "…"
		}
		return line
	}
	return ""
}

// headBuffer keeps the first 4 KiB written to it and drops the rest, so a
// guest cannot grow host memory by writing to stderr.
type headBuffer struct{ b []byte }

const headBufferLimit = 4 << 10

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := headBufferLimit - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) reset()         { h.b = h.b[:0] }
func (h *headBuffer) String() string { return string(h.b) }
