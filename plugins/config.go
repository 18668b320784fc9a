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

// Config tells NewRuntime how to run plugins; the zero value means every
// default. Each With method returns a changed copy; NewRuntime reports
// invalid values. No module can change these limits.
type Config struct {
	memoryLimit uint64
	deadline    time.Duration
	outputLimit int
	poolSize    int
	cacheDir    string
	version     string
}

// WithMemoryLimit caps each linear memory of a plugin instance (the guest's
// and the Extism kernel's) at bytes, rounded up to 64 KiB pages. Defaults
// to DefaultMemoryLimit (also for 0); over 4 GiB is an error. A module
// declaring more fails to Load; growing past it fails memory.grow.
func (c Config) WithMemoryLimit(bytes uint64) Config {
	c.memoryLimit = bytes
	return c
}

// WithDeadline bounds each Call's guest execution, a fresh instance's
// start-up included; an instance reaching it is discarded. Defaults to
// DefaultDeadline (also for 0); negative is an error.
func (c Config) WithDeadline(d time.Duration) Config {
	c.deadline = d
	return c
}

// WithOutputLimit caps the output of one call at n bytes; a call writing more
// fails. Defaults to DefaultOutputLimit (also for 0); negative is an error.
func (c Config) WithOutputLimit(n int) Config {
	c.outputLimit = n
	return c
}

// WithPoolSize bounds the instances, and so the concurrent calls, of one
// module; further calls wait. Defaults to GOMAXPROCS (also for 0); negative
// is an error.
func (c Config) WithPoolSize(n int) Config {
	c.poolSize = n
	return c
}

// WithCacheDir keeps compiled modules on disk under dir, in sealed entries;
// an entry not matching its seal is rebuilt, never used. If dir cannot be
// written, Load compiles in memory. Defaults to "": no disk cache.
func (c Config) WithCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithVersion names the palace build in the disk cache's layout, so no
// build reads another's entries. Defaults to "unversioned"; characters
// outside [A-Za-z0-9._-] become '_'.
func (c Config) WithVersion(v string) Config {
	c.version = v
	return c
}

// settings is a Config with defaults applied and values checked.
type settings struct {
	Config
	memoryPages uint32
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c}
	s.version = sanitizeVersion(c.version)
	if s.memoryLimit == 0 {
		s.memoryLimit = DefaultMemoryLimit
	}
	if s.memoryLimit > maxPageBytes {
		return s, fmt.Errorf("memory limit %d bytes: over the 4 GiB a wasm32 memory can address", s.memoryLimit)
	}
	s.memoryPages = uint32((s.memoryLimit + pageSize - 1) / pageSize)
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
