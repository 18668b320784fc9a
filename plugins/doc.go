// Package plugins runs palace's WebAssembly policy plugins: Extism plugins
// executed by wazero (used nowhere else in palace) inside a sandbox no
// module can weaken. It moves JSON bytes in and out of a plugin without
// decoding them and imports nothing from palace.
//
// A plugin exports one function per decision point it serves, named after
// the point, with the Extism ABI: no parameters, JSON input read from and
// output written to the Extism kernel, 0 returned; a non-zero status, an
// Extism error or a trap fails the call.
//
// # Sandbox
//
// A module may import only functions of the Extism kernel (extism:host/env)
// and WASI preview 1 (wasi_snapshot_preview1); Load refuses anything else,
// naming the import. A plugin gets no mounts, environment, arguments, stdin,
// Extism config, vars or HTTP hosts; fake clocks and randomness; a memory
// cap, a per-call deadline and an output cap. Its stdout is discarded; the
// start of its stderr is quoted in call errors.
//
// # Concurrency
//
// A Runtime and its Modules are safe for concurrent use. A Module keeps a
// bounded pool of instances, each serving one call at a time and discarded
// after any failed call; a plugin must not rely on state surviving (or not)
// between calls.
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
	// ErrRefused: Load rejected the binary without running it (see Load).
	ErrRefused = errors.New("plugin refused")
	// ErrDeadline: a call, or the start function, ran past Config's
	// deadline; the instance was discarded.
	ErrDeadline = errors.New("plugin deadline exceeded")
	// ErrOutputTooLarge: the call wrote more than Config's output limit.
	ErrOutputTooLarge = errors.New("plugin output too large")
	// ErrNotServed: the module does not export the decision point called.
	ErrNotServed = errors.New("decision point not served by plugin")
	// ErrClosed: the Module or Runtime was closed.
	ErrClosed = errors.New("plugin closed")
)
