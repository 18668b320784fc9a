package plugins

import (
	"fmt"
	"runtime"
	"time"
)

// Defaults of Config. They are the sandbox palace promises (docs/architecture.md).
const (
	DefaultMemoryLimit = 64 << 20               // bytes per linear memory
	DefaultDeadline    = 100 * time.Millisecond // per call
	DefaultOutputLimit = 1 << 20                // bytes of output per call
)

const (
	pageSize     = 64 << 10
	maxPages     = 1 << 16 // 4 GiB, the wasm32 address space
	maxPageBytes = uint64(maxPages) * pageSize
)

// Config tells NewRuntime how to run plugins. The zero value is valid and
// means every default.
//
// # Notes
//
//   - Config is immutable: each With method returns a copy with one change and
//     never fails. Invalid values are reported once, by NewRuntime.
//   - None of these limits can be raised or lowered by a module.
type Config struct {
	memoryLimit uint64
	deadline    time.Duration
	outputLimit int
	poolSize    int
	cacheDir    string
	version     string
}

// WithMemoryLimit caps each linear memory of a plugin instance at bytes,
// rounded up to whole 64 KiB pages. Defaults to 64 MiB (DefaultMemoryLimit);
// 0 means the default; more than 4 GiB is an error in NewRuntime.
//
// The cap applies to the guest's memory and, separately, to the Extism
// kernel's memory that holds the call's input and output. A module whose
// declared minimum or maximum memory exceeds the cap fails to Load; a
// guest that grows past it sees memory.grow fail, which Go and Rust guests
// turn into a fatal error, so the call fails.
func (c Config) WithMemoryLimit(bytes uint64) Config {
	c.memoryLimit = bytes
	return c
}

// WithDeadline bounds each Call's guest execution, including a fresh
// instance's runtime start-up (a Go guest's runtime initialises on its first
// call, ~2 ms). Defaults to 100 ms (DefaultDeadline); 0 means the default;
// negative is an error in NewRuntime. An instance that reaches the deadline is
// closed and never reused.
func (c Config) WithDeadline(d time.Duration) Config {
	c.deadline = d
	return c
}

// WithOutputLimit caps the output of one call at n bytes; a call writing more
// fails. Defaults to 1 MiB (DefaultOutputLimit); 0 means the default;
// negative is an error in NewRuntime.
func (c Config) WithOutputLimit(n int) Config {
	c.outputLimit = n
	return c
}

// WithPoolSize bounds how many instances of one module exist, and so how many
// calls to one module run at once; further calls wait for a free instance.
// Defaults to GOMAXPROCS at NewRuntime; 0 means the default; negative is an
// error in NewRuntime.
func (c Config) WithPoolSize(n int) Config {
	c.poolSize = n
	return c
}

// WithCacheDir keeps compiled modules on disk under dir so that a later
// process loads a module in milliseconds instead of compiling it again (about
// a second for a Go guest). palace passes $PALACE_HOME/cache/wazero.
// Defaults to "", which means no disk cache.
//
// # Notes
//
//   - Entries live in dir/<version>/<sha256 of the module>-<rewrite>/ with a SEAL
//     file; an entry whose files do not match it (corrupt, truncated, left
//     over by a crash) is deleted and rebuilt, never used.
//   - The cache is an optimisation only: if dir cannot be written, Load
//     compiles in memory and succeeds anyway.
func (c Config) WithCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithVersion names the palace build in the disk cache's layout, so that a new
// palace version never reads an entry an older one wrote (wazero keys its
// entries by its own version and the module bytes, but not by how palace
// configures the runtime). Defaults to "unversioned". Characters outside
// [A-Za-z0-9._-] are replaced by '_'.
func (c Config) WithVersion(v string) Config {
	c.version = v
	return c
}

// settings is a Config with defaults applied and values checked.
type settings struct {
	memoryPages uint32
	deadline    time.Duration
	outputLimit int
	poolSize    int
	cacheDir    string
	version     string
}

func (c Config) settings() (settings, error) {
	s := settings{
		deadline:    c.deadline,
		outputLimit: c.outputLimit,
		poolSize:    c.poolSize,
		cacheDir:    c.cacheDir,
		version:     sanitizeVersion(c.version),
	}
	mem := c.memoryLimit
	if mem == 0 {
		mem = DefaultMemoryLimit
	}
	if mem > maxPageBytes {
		return s, fmt.Errorf("memory limit %d bytes: over the 4 GiB a wasm32 memory can address", mem)
	}
	s.memoryPages = uint32((mem + pageSize - 1) / pageSize)
	switch {
	case s.deadline < 0:
		return s, fmt.Errorf("deadline %v: must not be negative", s.deadline)
	case s.deadline == 0:
		s.deadline = DefaultDeadline
	}
	switch {
	case s.outputLimit < 0:
		return s, fmt.Errorf("output limit %d: must not be negative", s.outputLimit)
	case s.outputLimit == 0:
		s.outputLimit = DefaultOutputLimit
	}
	switch {
	case s.poolSize < 0:
		return s, fmt.Errorf("pool size %d: must not be negative", s.poolSize)
	case s.poolSize == 0:
		s.poolSize = runtime.GOMAXPROCS(0)
	}
	return s, nil
}

func sanitizeVersion(v string) string {
	if v == "" {
		return "unversioned"
	}
	b := []byte(v)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	if s := string(b); s != "." && s != ".." {
		return s
	}
	return "unversioned"
}
