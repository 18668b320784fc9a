package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/palacehq/palace/benchgen"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/ui"
)

// The desk's pages on the benchmark palaces (benchgen, cached
// under <module>/.bench/palace-<spec key>/, the directory the host
// benchmarks share): the review queue, a card page and the pack
// inspector, server time per page (the handler, through the security
// guard, into a recorder: no network). Target: ≤ 100 ms per page at 100k
// cards. The 100k palace runs with BENCH_LARGE=1 (generating it takes
// minutes).

func benchSpecs() []struct {
	name string
	spec benchgen.Spec
} {
	out := []struct {
		name string
		spec benchgen.Spec
	}{{"10k", benchgen.Spec10k}}
	if os.Getenv("BENCH_LARGE") == "1" {
		out = append(out, struct {
			name string
			spec benchgen.Spec
		}{"100k", benchgen.Spec100k})
	}
	return out
}

func moduleRoot(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = filepath.Dir(dir)
	}
}

// benchDesk opens the cached palace of spec (generating it on first use)
// and a desk over it, with the handler and the session to call it.
func benchDesk(b *testing.B, spec benchgen.Spec) (*host.Host, http.Handler, func(path string) *http.Request) {
	b.Helper()
	h, srv, req := benchServer(b, spec)
	return h, srv.Handler(), req
}

// benchServer is benchDesk with the desk itself.
func benchServer(b *testing.B, spec benchgen.Spec) (*host.Host, *ui.Server, func(path string) *http.Request) {
	b.Helper()
	ctx := context.Background()
	home, repo, err := benchgen.Palace(ctx, filepath.Join(moduleRoot(b), ".bench", "palace-"+spec.Key()), spec, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	h, err := host.Open(ctx, host.Options{Home: home, Cwd: repo, Now: func() time.Time { return benchgen.Epoch }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7070}
	srv, err := ui.New(ctx, h, addr, ui.Options{Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	req := func(path string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://"+addr.String()+path, nil)
		r.AddCookie(&http.Cookie{Name: "palace_ui", Value: testToken})
		return r
	}
	return h, srv, req
}

// runPages serves paths round-robin and reports p50/p99 server time.
func runPages(b *testing.B, hd http.Handler, req func(string) *http.Request, paths []string) {
	b.Helper()
	for _, p := range paths { // warm the caches and the policies
		if rec := serve(hd, req(p)); rec.Code != http.StatusOK {
			b.Fatalf("GET %s = %d: %s", p, rec.Code, rec.Body.String())
		}
	}
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		rec := serve(hd, req(paths[i%len(paths)]))
		lat = append(lat, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s = %d", paths[i%len(paths)], rec.Code)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

func serve(hd http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	hd.ServeHTTP(rec, r)
	return rec
}

// BenchmarkQueue: the review queue's first pages, newest and by value.
func BenchmarkQueue(b *testing.B) {
	for _, s := range benchSpecs() {
		b.Run(s.name, func(b *testing.B) {
			_, hd, req := benchDesk(b, s.spec)
			runPages(b, hd, req, []string{"/", "/queue?order=value", "/queue?page=3", "/queue?order=value&page=2"})
		})
	}
}

// BenchmarkCardPage: card pages of cards visible from the checkout, of
// every status.
func BenchmarkCardPage(b *testing.B) {
	for _, s := range benchSpecs() {
		b.Run(s.name, func(b *testing.B) {
			h, hd, req := benchDesk(b, s.spec)
			cards, err := h.ListCards(context.Background(), host.CardFilter{Limit: 400})
			if err != nil || len(cards) == 0 {
				b.Fatalf("list cards: %v (%d)", err, len(cards))
			}
			var paths []string
			for i := 0; i < len(cards); i += max(1, len(cards)/20) {
				paths = append(paths, "/card/"+cards[i].ID)
			}
			runPages(b, hd, req, paths)
		})
	}
}

// BenchmarkInspector: the pack inspector's answer for rotating tasks and
// files (a dry run with the why-trace).
func BenchmarkInspector(b *testing.B) {
	tasks := []struct{ q, file, intents string }{
		{"sqlite lock timeout", "store/db.go", "debug"},
		{"", "api/handler.go", "review"},
		{"retry deadline context cancel", "", ""},
		{"flaky ci pipeline runner", "", "test,investigate"},
	}
	var paths []string
	for _, t := range tasks {
		paths = append(paths, fmt.Sprintf("/inspect?q=%s&file=%s&intents=%s", url.QueryEscape(t.q), url.QueryEscape(t.file), url.QueryEscape(t.intents)))
	}
	for _, s := range benchSpecs() {
		b.Run(s.name, func(b *testing.B) {
			_, hd, req := benchDesk(b, s.spec)
			runPages(b, hd, req, paths)
		})
	}
}

// BenchmarkAttention: the Needs-attention page (the authority audit of
// the visible cards, kept while the database and the minute stay the
// same; candidates due for archiving, held cards, a sync dry run).
func BenchmarkAttention(b *testing.B) {
	for _, s := range benchSpecs() {
		b.Run(s.name, func(b *testing.B) {
			_, hd, req := benchDesk(b, s.spec)
			runPages(b, hd, req, []string{"/attention"})
		})
	}
}

// BenchmarkAttentionAfterChange: the Needs-attention page's first load
// after another connection committed, which reads the whole audit again.
func BenchmarkAttentionAfterChange(b *testing.B) {
	for _, s := range benchSpecs() {
		b.Run(s.name, func(b *testing.B) {
			_, srv, req := benchServer(b, s.spec)
			hd := srv.Handler()
			runPages(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				srv.ForgetAudit()
				hd.ServeHTTP(w, r)
			}), req, []string{"/attention"})
		})
	}
}
