//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxRSS bounds the memory of one command fed hostile input: a palace
// command needs a few tens of MiB; reading /dev/zero or a huge file would
// need far more than this before any limit could be checked.
const maxRSS = 200 << 20

// hostileRun runs the real binary with a deadline and reports its peak
// memory: a hostile input must be refused fast, not after reading it.
func (e *env) hostileRun(t *testing.T, stdin io.Reader, args ...string) (result, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, palaceBin, args...)
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester", "NO_COLOR=1")
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("palace %v did not finish within a minute", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run palace %v: %v", args, err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	return result{out.String(), errb.String(), code}, rss
}

// TestHostileInput: every bad input a crafted checkout or a careless
// caller can give is refused with its exit code and a message naming the
// field, fast and without reading more than the limit, and writes nothing.
func TestHostileInput(t *testing.T) {
	e := newEnv(t)
	ev := e.record("a fact")
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A 300 MB file that costs no disk: its size alone must refuse it.
	huge := write("huge.txt", nil)
	if err := os.Truncate(huge, 300<<20); err != nil {
		t.Fatal(err)
	}
	nulFile := write("nul.txt", []byte("\x00\x00\x00"))
	nulLead := write("nul-lead.txt", []byte("\x00hidden"))
	homeFile := write("home-file", []byte("not a directory"))
	bom := write("bom.jsonl", []byte("\xef\xbb\xbf{\"content\":\"written with a byte order mark\"}\n"))
	jsonlNUL := write("nul.jsonl", []byte(`{"content":"\u0000"}`+"\n"))
	jsonlField := write("field.jsonl", []byte(`{"content":"ok","field":"\u0000go"}`+"\n"))
	jsonlTags := write("tags.jsonl", []byte(`{"content":"ok","tags":[`+strings.Repeat(`"t",`, 100)+`"t"]}`+"\n"))
	input := write("input.json", []byte(`{}`))
	long := func(n int) string { return strings.Repeat("x", n) }
	zero := func() io.Reader {
		f, err := os.Open("/dev/zero")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}

	tests := []struct {
		name  string
		stdin func() io.Reader
		args  []string
		code  int
		want  []string
	}{
		// Unbounded reads.
		{"record --file /dev/zero", nil, []string{"record", "--file", "/dev/zero"}, 2, []string{"--file /dev/zero is a device"}},
		{"record --jsonl /dev/zero", nil, []string{"record", "--jsonl", "/dev/zero"}, 2, []string{"--jsonl /dev/zero is a device"}},
		{"record --jsonl - from /dev/zero", zero, []string{"record", "--jsonl", "-"}, 2, []string{"stdin:1: line is over 8 MiB"}},
		{"record - from /dev/zero", zero, []string{"record", "-"}, 2, []string{"over the 1 MiB limit"}},
		{"hints /dev/zero", nil, []string{"hints", "/dev/zero"}, 2, []string{"FILE /dev/zero is a device"}},
		{"policy eval --input /dev/zero", nil, []string{"policy", "eval", "gate", "--input", "/dev/zero"}, 2, []string{"--input /dev/zero is a device"}},
		{"policy eval --input - from /dev/zero", zero, []string{"policy", "eval", "gate", "--input", "-"}, 2, []string{"--input is over the limit of 16 MiB"}},
		{"plugin inspect /dev/zero", nil, []string{"plugin", "inspect", "/dev/zero"}, 2, []string{"FILE /dev/zero is a device"}},
		{"mailbox check /dev/zero", nil, []string{"mailbox", "check", "/dev/zero"}, 2, []string{"read box /dev/zero: is a device"}},
		{"record --file FIFO", nil, []string{"record", "--file", fifo}, 2, []string{"is a named pipe (FIFO)"}},
		{"hints directory", nil, []string{"hints", dir}, 2, []string{"is a directory"}},
		{"record --file 300 MB", nil, []string{"record", "--file", huge}, 2, []string{"314572800 bytes, over the size limit of 1 MiB"}},
		{"policy eval --input 300 MB", nil, []string{"policy", "eval", "gate", "--input", huge}, 2, []string{"over the size limit of 16 MiB"}},
		// Per-field limits, shared by every surface.
		{"field over 128 bytes", nil, []string{"record", "--content", "x", "--field", long(129)}, 2, []string{"field is 129 bytes, over the limit of 128 bytes"}},
		{"domain over 128 bytes", nil, []string{"record", "--content", "x", "--domain", long(200)}, 2, []string{"domain is 200 bytes, over the limit of 128 bytes"}},
		{"source_ref over 2 KiB", nil, []string{"record", "--content", "x", "--source-ref", long(2049)}, 2, []string{"source_ref is 2049 bytes, over the limit of 2 KiB"}},
		{"65 tags", nil, []string{"record", "--content", "x", "--tag", strings.TrimSuffix(strings.Repeat("t,", 65), ",")}, 2, []string{"65 tags, over the limit of 64"}},
		{"tag over 128 bytes", nil, []string{"record", "--content", "x", "--tag", "ok," + long(129)}, 2, []string{"tag 2 is 129 bytes, over the limit of 128 bytes"}},
		{"jsonl 101 tags", nil, []string{"record", "--jsonl", jsonlTags}, 2, []string{jsonlTags + ":1: 101 tags"}},
		{"distill field over 128 bytes", nil, []string{"distill", "--statement", "s", "--tier", "qi", "--supporting", ev, "--field", long(129)}, 2, []string{"field is 129 bytes"}},
		// NUL bytes, from the CLI, stdin and JSON Lines.
		{"NUL-only --file", nil, []string{"record", "--file", nulFile}, 2, []string{"content holds a NUL byte (at byte 0)"}},
		{"NUL-leading stdin", func() io.Reader { return strings.NewReader("\x00hidden") }, []string{"record", "-"}, 2, []string{"content holds a NUL byte"}},
		{"NUL-leading --file", nil, []string{"record", "--file", nulLead}, 2, []string{"content holds a NUL byte"}},
		{"NUL jsonl content", nil, []string{"record", "--jsonl", jsonlNUL}, 2, []string{jsonlNUL + ":1: content holds a NUL byte"}},
		{"NUL jsonl field", nil, []string{"record", "--jsonl", jsonlField}, 2, []string{jsonlField + ":1: field holds a NUL byte"}},
		// Wrong exit codes and silent acceptance.
		{"--home is a file", nil, []string{"--home", homeFile, "card", "list"}, 2, []string{"--home " + homeFile + " is not a directory: pass a directory"}},
		{"--scope-path unclosed", nil, []string{"distill", "--statement", "s", "--tier", "qi", "--supporting", ev, "--scope-path", "[unclosed"}, 2, []string{`scope path "[unclosed" is not a valid glob`}},
		{"card list --limit -1", nil, []string{"card", "list", "--limit", "-1"}, 2, []string{"--limit -1 is negative: pass 0 for no limit"}},
		{"evidence list --limit -5", nil, []string{"evidence", "list", "--limit", "-5"}, 2, []string{"--limit -5 is negative: pass 0 for no limit"}},
		{"jsonl with a byte order mark", nil, []string{"record", "--jsonl", bom}, 0, nil},
		{"policy eval on a regular file still works", nil, []string{"policy", "eval", "scope", "--input", input}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := countEvidence(t, e)
			var stdin io.Reader
			if tt.stdin != nil {
				stdin = tt.stdin()
			}
			r, rss := e.hostileRun(t, stdin, tt.args...)
			wantCode(t, r, tt.code, tt.want...)
			if rss > maxRSS {
				t.Errorf("peak memory %d MiB, over %d MiB", rss>>20, maxRSS>>20)
			}
			if strings.Contains(r.stderr, "CHECK constraint") {
				t.Errorf("a storage error reached the user: %s", r.stderr)
			}
			wantRows := before
			if tt.code == 0 && tt.args[0] == "record" {
				wantRows++
			}
			if after := countEvidence(t, e); after != wantRows {
				t.Errorf("evidence rows %d → %d", before, after)
			}
		})
	}
}

// TestTerminalEscapes: text from the store or a mailbox that carries
// terminal control sequences is printed escaped by every listing, never raw.
func TestTerminalEscapes(t *testing.T) {
	e := newEnv(t)
	evil := "title\x1b]0;pwned\x07 clear\x1b[2J hide\x1b[8m \u202eevil\u202c c1\u009b end"
	f := filepath.Join(t.TempDir(), "evil.txt")
	if err := os.WriteFile(f, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := e.jsonOf("record", "--file", f, "--tag", "t\x1b[31m", "--source-ref", "ref\x1b[1m")["id"].(string)
	card := e.jsonOf("distill", "--statement", "stmt\x1b[2J", "--content", evil, "--tier", "qi", "--supporting", ev)["id"].(string)
	e.ok("mailbox", "file", "--class", "tool_error", "--what", evil)
	for _, args := range [][]string{
		{"evidence", "list"},
		{"evidence", "show", ev},
		{"card", "list"},
		{"card", "show", card},
		{"mailbox", "list"},
	} {
		out := e.ok(args...)
		if strings.ContainsAny(out, "\x1b\x07\u202e\u202c\u009b") {
			t.Errorf("palace %v printed control characters raw:\n%q", args, out)
		}
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("palace %v does not show the escape visibly:\n%s", args, out)
		}
	}
	if out := e.ok("evidence", "show", ev); !strings.Contains(out, `\u202eevil\u202c`) || !strings.Contains(out, `c1\u009b`) {
		t.Errorf("bidi and C1 characters not shown as escapes:\n%s", out)
	}
	// JSON stays JSON: the value decodes back to the original text.
	var shown struct{ Content string }
	if err := json.Unmarshal([]byte(e.ok("evidence", "show", ev, "--format", "json")), &shown); err != nil || shown.Content != evil {
		t.Errorf("JSON content = %q (%v), want the original", shown.Content, err)
	}
}

// TestMCPHostileInput: the real binary's MCP server answers requests before
// initialize with -32002 and a NUL-leading content with a tool error
// naming the argument.
func TestMCPHostileInput(t *testing.T) {
	e := newEnv(t)
	cmd := exec.Command(palaceBin, "mcp")
	cmd.Dir = e.dir
	cmd.Env = append(filteredEnv(), "PALACE_HOME="+e.home, "USER=tester")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("palace mcp: %v", err)
		}
	}()
	out := bufio.NewScanner(outPipe)
	out.Buffer(nil, 1<<20)
	call := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !out.Scan() {
			t.Fatalf("no answer to %s: %v", line, out.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", out.Text(), err)
		}
		return m
	}
	m := call(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32002) {
		t.Errorf("tools/list before initialize: %v, want error -32002", m)
	}
	m = call(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"content":"\u0000evil"}`, `{"content":"x","field":"` + strings.Repeat("f", 129) + `"}`} {
		m = call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"palace_record","arguments":` + args + `}}`)
		res, _ := m["result"].(map[string]any)
		if res == nil || res["isError"] != true {
			t.Fatalf("palace_record %s: %v, want a tool error", args, m)
		}
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if !strings.Contains(text, "NUL byte") && !strings.Contains(text, "field is 129 bytes") {
			t.Errorf("palace_record %s: error %q does not name the argument and the problem", args, text)
		}
	}
}
