// Package plugins runs palace's WebAssembly policy plugins: Extism plugins
// executed by wazero, inside a sandbox no module can weaken.
//
// It owns the WebAssembly runtime (the Extism go-sdk and wazero are used here
// and nowhere else in palace), the sandbox limits, the on-disk compilation
// cache and the inspection of module binaries. It knows the names of the
// decision points but not their meaning: it moves JSON bytes in and out of a
// plugin and never decodes them. It imports nothing from palace; the policies
// package builds decision points on top of it, and nothing here may reach
// into policies, host or store.
//
// A plugin is a WebAssembly module that exports one function per decision
// point it serves, named after the point (gate, scope, lanes, mailbox, research), with
// the Extism ABI: the function takes no parameters, reads the point's JSON
// input from the Extism kernel, writes its JSON output there and returns 0;
// a non-zero status, an Extism error or a trap fails the call.
//
// # Sandbox
//
// Every module is checked before it is compiled: it may import only functions
// of the Extism kernel (extism:host/env) and of WASI preview 1
// (wasi_snapshot_preview1); anything else, including Extism host functions
// (extism:host/user, of which palace provides none), is refused by Load with
// the import named. At run time a plugin gets no mounted directories, no
// environment variables, arguments or stdin, no Extism config, no vars, no
// allowed HTTP hosts (the Extism HTTP function fails), clocks and randomness
// that are deterministic fakes, a memory cap, a per-call deadline after which
// its instance is thrown away, and an output cap. Its stdout is discarded; the
// start of its stderr is quoted in call errors.
//
// # Concurrency
//
// A Runtime and its Modules are safe for concurrent use. A Module keeps a
// bounded pool of instances; an instance serves one call at a time and is
// discarded after any failed call, so a trap, timeout or corrupted guest state
// never leaks into the next call. Instances are otherwise reused, so a plugin
// must not rely on state surviving (or not surviving) between calls.
package plugins

import "errors"

// DecisionPoints lists the decision points a plugin can serve, in the order
// Module.Points and Report.DecisionPoints use. Each is served by an exported
// function of the same name.
var DecisionPoints = []string{"gate", "scope", "lanes", "mailbox", "research"}

// decisionPoints is the package's own copy: DecisionPoints is a variable, and
// a caller changing it must not change what the sandbox accepts.
var decisionPoints = [...]string{"gate", "scope", "lanes", "mailbox", "research"}

// Errors returned (wrapped, with the plugin's name) by Load and Call; test
// with errors.Is.
var (
	// ErrRefused: Load rejected the binary without running it: not
	// WebAssembly, a section whose counts or sizes exceed the bytes that
	// remain or palace's limits, a forbidden import, no decision point, a
	// decision point with the wrong signature.
	ErrRefused = errors.New("plugin refused")
	// ErrDeadline: the call, or the module's start function while an
	// instance was created, ran past Config's deadline; the instance was
	// discarded.
	ErrDeadline = errors.New("plugin deadline exceeded")
	// ErrOutputTooLarge: the call wrote more than Config's output limit.
	ErrOutputTooLarge = errors.New("plugin output too large")
	// ErrNotServed: the module does not export the decision point called.
	ErrNotServed = errors.New("decision point not served by plugin")
	// ErrClosed: the Module or Runtime was closed.
	ErrClosed = errors.New("plugin closed")
)
