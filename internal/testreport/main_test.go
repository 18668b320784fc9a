package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportNamesSkipsAndFailures(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"p/lsp","Test":"TestNeovim"}`,
		`{"Action":"output","Package":"p/lsp","Test":"TestNeovim","Output":"=== RUN   TestNeovim\n"}`,
		`{"Action":"output","Package":"p/lsp","Test":"TestNeovim","Output":"    nvim_test.go:30: nvim is not installed\n"}`,
		`{"Action":"output","Package":"p/lsp","Test":"TestNeovim","Output":"--- SKIP: TestNeovim (0.00s)\n"}`,
		`{"Action":"skip","Package":"p/lsp","Test":"TestNeovim"}`,
		`{"Action":"run","Package":"p/lsp","Test":"TestHover"}`,
		`{"Action":"output","Package":"p/lsp","Test":"TestHover","Output":"    hover_test.go:9: got x, want y\n"}`,
		`{"Action":"fail","Package":"p/lsp","Test":"TestHover"}`,
		`{"Action":"pass","Package":"p/lsp","Test":"TestLens"}`,
		`{"Action":"pass","Package":"p/lsp","Test":"TestEmacsEndToEnd"}`,
		`{"Action":"fail","Package":"p/lsp","Elapsed":1.5}`,
		`not json: go vet says hello`,
	}, "\n")
	sum := filepath.Join(t.TempDir(), "summary")
	var out strings.Builder
	if code := run([]string{"-summary", sum}, strings.NewReader(stream), &out); code != 1 {
		t.Errorf("exit %d, want 1 (a test failed)", code)
	}
	for _, want := range []string{"got x, want y", "FAIL\tp/lsp", "not json: go vet says hello"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	want := "ran: go test ./...: 2 passed, 1 failed, 1 skipped, in 1 packages\nran: real clients: TestEmacsEndToEnd\nfail: p/lsp\nskip: nvim is not installed (p/lsp.TestNeovim)\n"
	if string(b) != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b, want)
	}
	out.Reset()
	if code := run([]string{"-print", sum}, nil, &out); code != 1 || !strings.HasSuffix(out.String(), "tests: 2 passed, 1 failed, 1 skipped\n") || !strings.Contains(out.String(), "  real clients: TestEmacsEndToEnd\n") || !strings.Contains(out.String(), "  - nvim is not installed (p/lsp.TestNeovim)") {
		t.Errorf("print: exit %d\n%s", code, out.String())
	}
}
