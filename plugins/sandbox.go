package plugins

import (
	"fmt"
	"slices"
	"strings"
)

// The import namespaces a plugin may use; everything else is refused at
// load. WASI reaches nothing outside the guest: nothing is mounted or given.
const (
	kernelNamespace = "extism:host/env"
	userNamespace   = "extism:host/user" // palace provides no host functions; refused by name
	wasiNamespace   = "wasi_snapshot_preview1"
)

const allowedNamespaces = "only " + kernelNamespace + " and " + wasiNamespace + " are allowed"

// kernelFuncs are the functions of the Extism kernel in go-sdk v1.7.1;
// TestKernelImportsLink proves each one links.
var kernelFuncs = setOf(
	"alloc", "free", "length", "length_unsafe", "memory_bytes",
	"load_u8", "load_u64", "store_u8", "store_u64",
	"input_length", "input_offset", "input_load_u8", "input_load_u64", "input_set",
	"output_length", "output_offset", "output_set",
	"reset", "error_set", "error_get",
	"config_get", "var_get", "var_set",
	"http_request", "http_status_code", "http_headers",
	"get_log_level", "log_trace", "log_debug", "log_info", "log_warn", "log_error",
)

// wasiFuncs are the functions of WASI preview 1 (frozen), all of which
// wazero implements.
var wasiFuncs = setOf(
	"args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
	"clock_res_get", "clock_time_get",
	"fd_advise", "fd_allocate", "fd_close", "fd_datasync", "fd_fdstat_get",
	"fd_fdstat_set_flags", "fd_fdstat_set_rights", "fd_filestat_get",
	"fd_filestat_set_size", "fd_filestat_set_times", "fd_pread", "fd_prestat_dir_name",
	"fd_prestat_get", "fd_pwrite", "fd_read", "fd_readdir", "fd_renumber", "fd_seek",
	"fd_sync", "fd_tell", "fd_write",
	"path_create_directory", "path_filestat_get", "path_filestat_set_times", "path_link",
	"path_open", "path_readlink", "path_remove_directory", "path_rename", "path_symlink",
	"path_unlink_file",
	"poll_oneoff", "proc_exit", "proc_raise", "random_get", "sched_yield",
	"sock_accept", "sock_recv", "sock_send", "sock_shutdown",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// importProblem says why imp is refused, or "" when it is allowed.
func importProblem(imp wasmImport) string {
	what := "imports " + imp.module + "." + imp.name
	switch imp.module {
	case kernelNamespace, wasiNamespace:
	case userNamespace:
		return what + ": palace provides no host functions (" + userNamespace + "); " + allowedNamespaces
	default:
		return what + ": " + allowedNamespaces
	}
	if imp.kind != kindFunc {
		return what + ": a " + imp.kind.String() + " import; only functions may be imported from " + imp.module
	}
	if imp.module == kernelNamespace && !kernelFuncs[imp.name] {
		return what + ": no such function in the Extism kernel"
	}
	if imp.module == wasiNamespace && !wasiFuncs[imp.name] {
		return what + ": no such function in WASI preview 1"
	}
	return ""
}

// pointsAndProblems returns the decision points m serves, in DecisionPoints
// order, and every reason it cannot be loaded (Load reports the first).
func pointsAndProblems(m *wasmModule) (points, problems []string) {
	for _, imp := range m.imports {
		if p := importProblem(imp); p != "" {
			problems = append(problems, p)
		}
	}
	exports := make(map[string]wasmExport, len(m.exports))
	for _, e := range m.exports {
		exports[e.name] = e
	}
	for _, point := range decisionPoints {
		e, ok := exports[point]
		if !ok {
			continue
		}
		if e.kind != kindFunc {
			problems = append(problems, fmt.Sprintf("exports %s as a %s; a decision point must be a function", point, e.kind))
			continue
		}
		if sig, known := m.signature(e.index); known && !extismSignature(sig) {
			problems = append(problems, fmt.Sprintf("exports %s with signature %s; a decision point takes no parameters and returns an i32 status (0 = ok)", point, sig))
			continue
		}
		points = append(points, point)
	}
	if len(points) == 0 && !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, "exports ") }) {
		problems = append(problems, "exports none of the decision points "+strings.Join(decisionPoints[:], ", "))
	}
	return points, problems
}

// extismSignature reports whether t is an Extism export: () -> i32, or
// () -> () which the SDK treats as success unless the guest traps.
func extismSignature(t funcType) bool {
	if len(t.params) != 0 {
		return false
	}
	return len(t.results) == 0 || (len(t.results) == 1 && t.results[0] == 0x7f)
}

// refusal is a load error that matches ErrRefused and reads as msg.
type refusal struct{ msg string }

func (e refusal) Error() string        { return e.msg }
func (e refusal) Is(target error) bool { return target == ErrRefused }

func refuse(problems []string) error {
	msg := problems[0]
	if n := len(problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more; see palace plugin inspect)", n)
	}
	return refusal{msg}
}
