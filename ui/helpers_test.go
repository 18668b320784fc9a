package ui_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/ui"
)

// testToken is the session token of every test desk.
const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// hostile is card text an attacker controls: markup, a script, an event
// handler, a javascript: link and a terminal escape.
const hostile = `Quote <script>window.__pwned=1;alert(1)</script> and <img src=x onerror="window.__pwned=2"> then ` + "\x1b[31mred\x1b[0m"

// desk is a palace with a few cards and a desk serving it on a real
// loopback listener.
type desk struct {
	t    *testing.T
	h    *host.Host
	home string
	repo string
	base string
	srv  *ui.Server
	// ready is a candidate the gate lets through; thin one it refuses
	// (no verification); evil has hostile text; contested is a promoted
	// card with an open contest.
	ready, thin, evil, contested string
	// counter is the evidence contesting contested.
	counter string
}

// newDesk builds the palace in a fresh git checkout and serves it in mode.
func newDesk(t *testing.T, mode host.Mode) *desk {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	d := &desk{t: t, home: filepath.Join(dir, "home"), repo: filepath.Join(dir, "repo")}
	for _, args := range [][]string{{"init", "-q", d.repo}, {"-C", d.repo, "remote", "add", "origin", "https://github.com/acme/desk"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	// The fixture is written in human mode; the desk's host is opened in
	// the mode under test.
	w, err := host.Open(ctx, host.Options{Home: d.home, Cwd: d.repo, Mode: host.Human, Actor: "rita"})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(content, ref string) string {
		ev, err := w.Intake().Record(ctx, intake.RecordRequest{Content: content, SourceRef: ref, Field: "storage"})
		if err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	distill := func(req intake.DistillRequest) string {
		c, err := w.Distill(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	sup := rec("WAL without busy_timeout fails under concurrent writers", "store/store.go#L10")
	ver := rec("verified: setting busy_timeout before WAL keeps writers queued", "https://example.com/wal")
	d.ready = distill(intake.DistillRequest{Statement: "Set busy_timeout before enabling WAL journaling", Tier: "shu", Field: "storage",
		Supporting: []string{sup}, Verification: []string{ver}, Scope: domain.Scope{Paths: []string{"store/**"}}, Trigger: domain.Trigger{Intents: []string{"debug"}}})
	d.thin = distill(intake.DistillRequest{Statement: "Prefer table-driven tests for parsers", Tier: "qi", Supporting: []string{rec("a table test caught a parser bug", "ci://build/7")}})
	evilEv, err := w.Intake().Record(ctx, intake.RecordRequest{Content: "evidence " + hostile, SourceRef: "javascript:window.__pwned=3", Field: "storage"})
	if err != nil {
		t.Fatal(err)
	}
	d.evil = distill(intake.DistillRequest{Statement: hostile, Content: hostile, Tier: "qi", Supporting: []string{evilEv.ID}})
	d.contested = distill(intake.DistillRequest{Statement: "Vacuum the palace weekly for speed", Tier: "shu", Supporting: []string{rec("vacuum freed space", "docs/ops.md#L3")},
		Direct: true, Status: "promoted", Reason: "seeded"})
	d.counter = rec("vacuum on a busy palace blocked writers for minutes", "ci://build/9")
	if _, err := w.Link(ctx, d.contested, host.LinkRequest{Role: "counterexample", EvidenceID: d.counter, Note: "vacuum blocks writers"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d.h, err = host.Open(ctx, host.Options{Home: d.home, Cwd: d.repo, Mode: mode, Actor: "rita"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.h.Close() })
	d.serve()
	return d
}

// serve starts the desk on a loopback listener until the test ends.
func (d *desk) serve() {
	t := d.t
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.srv, err = ui.New(ctx, d.h, ln.Addr(), ui.Options{Token: testToken, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.srv.Close()
	})
	d.base = "http://" + ln.Addr().String()
}

// client is an HTTP client that does not follow redirects, so tests see
// each answer.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request with the session cookie (unless noCookie) and the
// given headers, and returns the status and body.
func (d *desk) do(method, path string, form url.Values, hdr map[string]string, noCookie bool) (int, string) {
	d.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, d.base+path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if !noCookie {
		req.AddCookie(&http.Cookie{Name: "palace_ui", Value: testToken})
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// get fetches a page with the session and fails unless it is 200.
func (d *desk) get(path string) string {
	d.t.Helper()
	code, body := d.do(http.MethodGet, path, nil, nil, false)
	if code != http.StatusOK {
		d.t.Fatalf("GET %s = %d, want 200: %s", path, code, body)
	}
	return body
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token a page embeds in its forms.
func (d *desk) csrf() string {
	d.t.Helper()
	m := csrfRe.FindStringSubmatch(d.get("/"))
	if m == nil {
		d.t.Fatal("the queue has no form with a CSRF token")
	}
	return m[1]
}

// status is a card's status as the palace has it now.
func (d *desk) status(id string) domain.Status {
	d.t.Helper()
	c, err := d.h.ShowCard(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return c.Status
}
