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
	// interruptible: rewritten with checks calling Osyield (interrupt.go);
	// else compiled with WithCloseOnContextDone.
	interruptible bool
	hasStart      bool // declares a start function, run per instantiation

	// pool holds one slot per instance: idle or nil (instantiate on
	// demand). Taking a slot is the right to run one call.
	pool      chan *instance
	done      chan struct{} // closed when Close starts
	closeOnce sync.Once
	closeErr  error
}

// Name returns the name given to Load.
func (m *Module) Name() string { return m.name }

// Hash returns the lowercase hex SHA-256 of the module's bytes.
func (m *Module) Hash() string { return m.hash }

// Points returns the decision points the module serves, in DecisionPoints
// order. The slice is a copy.
func (m *Module) Points() []string { return slices.Clone(m.points) }

// Serves reports whether the module exports the decision point.
func (m *Module) Serves(point string) bool { return slices.Contains(m.points, point) }

// Call runs the decision point with its JSON input and returns the JSON the
// plugin wrote. It waits for a free instance while ctx allows, then runs the
// guest under Config's deadline (or ctx's, if earlier).
//
// It fails, naming the plugin and point, when the point is not served
// (ErrNotServed), the guest runs past the deadline (ErrDeadline), traps,
// exits, returns non-zero or sets an Extism error (its message and stderr's
// start quoted), writes no output, or writes too much (ErrOutputTooLarge).
// A failed call's instance is discarded.
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
		// An earlier call ended the instance (proc_exit(0)); no guest code ran.
		inst.close()
		if inst, err = m.instantiate(ctx); err != nil {
			return nil, err
		}
		rc, out, err = inst.run(callCtx, point, input)
	}
	// wazero may close an instance whose context ended, even after success.
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

// errInstanceClosed is a call refused because the instance is closed; run
// maps the go-sdk's bare extismClosedMessage to it.
var errInstanceClosed = errors.New("plugin instance is closed")

const extismClosedMessage = "module is closed"

// instance is one instantiation of the module.
type instance struct {
	plugin  *extism.Plugin
	stderr  *headBuffer
	callCtx context.Context // the call in progress, tested by Osyield
}

// errInterrupted stops a guest from inside its Osyield check.
var errInterrupted = errors.New("stopped at the deadline")

// wasiOutputEnv makes the Extism SDK connect a plugin's stdout to palace's,
// where the LSP and MCP servers speak JSON-RPC; refused.
const wasiOutputEnv = "EXTISM_ENABLE_WASI_OUTPUT"

func (m *Module) instantiate(ctx context.Context) (*instance, error) {
	if _, set := os.LookupEnv(wasiOutputEnv); set {
		return nil, fmt.Errorf("instantiate: %s is set, which would connect the plugin's stdout to palace's; unset it", wasiOutputEnv)
	}
	stderr := &headBuffer{}
	inst := &instance{stderr: stderr}
	// A fresh ModuleConfig is the sandbox: no mounts, environment,
	// arguments or stdin; stdout discarded; fake clocks and randomness.
	mc := wazero.NewModuleConfig().WithStderr(stderr)
	if m.interruptible {
		mc = mc.WithOsyield(func() {
			if c := inst.callCtx; c != nil && c.Err() != nil {
				panic(errInterrupted)
			}
		})
	}
	// A start function runs under a call's deadline; without one no guest
	// code runs here.
	startCtx, cancel := ctx, context.CancelFunc(func() {})
	if m.hasStart {
		startCtx, cancel = context.WithTimeout(ctx, m.s.deadline)
	}
	defer cancel()
	inst.callCtx = startCtx
	p, err := m.compiled.Instance(startCtx, extism.PluginInstanceConfig{ModuleConfig: mc})
	inst.callCtx = nil
	if err == nil && startCtx.Err() != nil { // wazero may have closed it
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
// line the guest wrote to stderr.
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
