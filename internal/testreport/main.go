// Command testreport turns `go test -json` into what `make test` prints: a
// line per package, the output of every failing test, and the tests that
// were skipped and why (a real-client test skips when its client is
// missing). It appends its summary to a file for make's closing summary.
//
//	go test -json ./... 2>&1 | go run ./internal/testreport -summary FILE
//	go run ./internal/testreport -print FILE
//
// It exits 1 when a test or a package failed, 2 on its own errors. It
// touches nothing but stdout and the summary file.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout)) }

func run(args []string, stdin io.Reader, stdout io.Writer) int {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	summary := fs.String("summary", "", "append the summary of the go test run to this file")
	print := fs.String("print", "", "print the summary file made by the steps of make test, then its closing line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *print != "" {
		return printSummary(*print, stdout)
	}
	r := newReport()
	if err := r.read(stdin, stdout); err != nil {
		fmt.Fprintf(stdout, "testreport: read go test output: %v\n", err)
		return 2
	}
	lines := r.summaryLines()
	if *summary != "" {
		f, err := os.OpenFile(*summary, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(stdout, "testreport: %v\n", err)
			return 2
		}
		_, err = io.WriteString(f, strings.Join(lines, "\n")+"\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stdout, "testreport: write summary: %v\n", err)
			return 2
		}
	} else {
		fmt.Fprintln(stdout)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
	}
	if r.failed > 0 || len(r.failedPkgs) > 0 || r.packages == 0 {
		return 1
	}
	return 0
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

type report struct {
	// output holds each running test's lines until it ends: printed when
	// it fails, searched for the reason when it skips.
	output     map[string][]string
	pkgOutput  map[string][]string
	passed     int
	failed     int
	skips      []skip
	failedPkgs []string
	packages   int
	// clients are the passed tests that drive a real client (by name).
	clients     []string
	buildOutput map[string][]string
}

type skip struct {
	pkg, test, reason string
}

func newReport() *report {
	return &report{output: map[string][]string{}, pkgOutput: map[string][]string{}, buildOutput: map[string][]string{}}
}

func (r *report) read(in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			// Not test2json: go's own messages (a vet or setup failure).
			fmt.Fprintln(out, line)
			continue
		}
		r.handle(e, out)
	}
	return sc.Err()
}

func (r *report) handle(e event, out io.Writer) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "build-output":
		r.buildOutput[e.ImportPath] = append(r.buildOutput[e.ImportPath], e.Output)
	case "build-fail":
		fmt.Fprint(out, strings.Join(r.buildOutput[e.ImportPath], ""))
	case "output":
		if e.Test == "" {
			r.pkgOutput[e.Package] = append(r.pkgOutput[e.Package], e.Output)
			return
		}
		r.output[key] = append(r.output[key], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.endPackage(e, out)
			return
		}
		lines := r.output[key]
		delete(r.output, key)
		switch e.Action {
		case "pass":
			r.passed++
			if !strings.Contains(e.Test, "/") && realClient.MatchString(e.Test) {
				r.clients = append(r.clients, e.Test)
			}
		case "fail":
			r.failed++
			fmt.Fprint(out, strings.Join(lines, ""))
		case "skip":
			r.skips = append(r.skips, skip{e.Package, e.Test, reason(lines)})
		}
	}
}

func (r *report) endPackage(e event, out io.Writer) {
	r.packages++
	lines := r.pkgOutput[e.Package]
	delete(r.pkgOutput, e.Package)
	switch e.Action {
	case "fail":
		r.failedPkgs = append(r.failedPkgs, e.Package)
		// What a test did not own: a panic, a timeout, a TestMain failure.
		for _, l := range lines {
			if !strings.HasPrefix(l, "FAIL") && !strings.HasPrefix(l, "ok ") {
				fmt.Fprint(out, l)
			}
		}
		fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(out, "?   \t%s\t[no test files]\n", e.Package)
	default:
		fmt.Fprintf(out, "ok  \t%s\t%s\n", e.Package, (time.Duration(e.Elapsed * float64(time.Second))).Round(10*time.Millisecond))
	}
}

// realClient names the tests that drive a real outside client (an editor,
// a browser, an MCP client, opa, pre-commit): the summary lists those that
// ran, since their skips are what a missing tool causes.
var realClient = regexp.MustCompile(`EndToEnd|Inspector|StockOPA|ClaudeCode|Browser|PreCommit|SchemasStrict`)

// reason is the message a skipped test gave: its log lines without the
// === and --- framing, joined on one line.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: message": the location says nothing to a reader
		// of the summary.
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], "_test.go:") {
			t = t[i+2:]
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	s := strings.Join(parts, " ")
	if len(s) > 220 {
		s = s[:217] + "..."
	}
	return s
}

// summaryLines are the go test part of make test's summary: a "ran" line
// with the counts, then one "skip" line per reason with the tests it
// skipped, so that one missing tool is one line.
func (r *report) summaryLines() []string {
	if r.packages == 0 {
		return []string{"fail: go test ./... reported no package (see its output above)"}
	}
	lines := []string{fmt.Sprintf("ran: go test ./...: %d passed, %d failed, %d skipped, in %d packages", r.passed, r.failed, len(r.skips), r.packages)}
	if len(r.clients) > 0 {
		sort.Strings(r.clients)
		lines = append(lines, "ran: real clients: "+strings.Join(r.clients, ", "))
	}
	for _, p := range r.failedPkgs {
		lines = append(lines, "fail: "+p)
	}
	byReason := map[string][]string{}
	for _, s := range r.skips {
		pkg := strings.TrimPrefix(s.pkg, "github.com/palacehq/palace/")
		byReason[s.reason] = append(byReason[s.reason], pkg+"."+s.test)
	}
	for _, k := range slices.Sorted(maps.Keys(byReason)) {
		tests := byReason[k]
		sort.Strings(tests)
		shown := tests
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(tests)-3))
		}
		lines = append(lines, fmt.Sprintf("skip: %s (%s)", k, strings.Join(shown, ", ")))
	}
	return lines
}

// printSummary prints the summary file the steps of make test wrote, the
// lines that ran first, then the skips, then the closing count.
func printSummary(path string, out io.Writer) int {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(out, "testreport: %v\n", err)
		return 2
	}
	var ran, skipped, failed []string
	passedN, failedN, skippedN := 0, 0, 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.HasPrefix(l, "ran: "):
			ran = append(ran, strings.TrimPrefix(l, "ran: "))
			var p, f, s int
			if i := strings.LastIndex(l, ": "); i > 0 {
				if n, _ := fmt.Sscanf(l[i+2:], "%d passed, %d failed, %d skipped", &p, &f, &s); n == 3 {
					passedN, failedN, skippedN = passedN+p, failedN+f, skippedN+s
				}
			}
		case strings.HasPrefix(l, "skip: "):
			skipped = append(skipped, strings.TrimPrefix(l, "skip: "))
		case strings.HasPrefix(l, "fail: "):
			failed = append(failed, strings.TrimPrefix(l, "fail: "))
		}
	}
	fmt.Fprintln(out, "\n== make test: summary ==")
	fmt.Fprintln(out, "ran:")
	for _, l := range ran {
		fmt.Fprintln(out, "  "+l)
	}
	if len(failed) > 0 {
		fmt.Fprintln(out, "failed:")
		for _, l := range failed {
			fmt.Fprintln(out, "  "+l)
		}
	}
	if len(skipped) == 0 {
		fmt.Fprintln(out, "skipped: nothing")
	} else {
		fmt.Fprintln(out, "skipped (install what is missing to run them; .ci/run installs everything):")
		for _, l := range skipped {
			fmt.Fprintln(out, "  - "+l)
		}
	}
	fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", passedN, failedN, skippedN)
	if failedN > 0 || len(failed) > 0 {
		return 1
	}
	return 0
}
