package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/pack"
)

func TestQueue(t *testing.T) {
	d := newDesk(t, host.Human)
	body := d.get("/")
	for _, want := range []string{
		"3 candidates",
		// The gate's answer with what is missing and which policy decided.
		"Gate for promoted: ✓ allows", "Gate for promoted: ✗ denies", "Missing: verification 1",
		"policy " + "", "embedded",
		// Evidence with citations, a web source as a link.
		`<a href="https://example.com/wal" rel="noreferrer noopener" target="_blank">`, "store/store.go#L10",
		// Scope and triggers.
		"paths store/**", "intents debug",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("queue lacks %q", want)
		}
	}
	if strings.Contains(body, d.contested) {
		t.Error("the queue lists a promoted card")
	}
	if i, j := strings.Index(body, `id="c-`+d.evil), strings.Index(body, `id="c-`+d.ready); i < 0 || j < 0 || i > j {
		t.Errorf("newest first: the last distilled candidate should lead (evil at %d, ready at %d)", i, j)
	}
	byValue := d.get("/queue?order=value")
	if i, j := strings.Index(byValue, `id="c-`+d.ready), strings.Index(byValue, `id="c-`+d.thin); i < 0 || j < 0 || i > j {
		t.Errorf("by value: the candidate with verification should lead (ready at %d, thin at %d)", i, j)
	}
	if code, _ := d.do(http.MethodGet, "/queue?order=loudest", nil, nil, false); code != http.StatusUnprocessableEntity {
		t.Errorf("an unknown order = %d, want 422", code)
	}
}

func TestNearDuplicates(t *testing.T) {
	d := newDesk(t, host.Human)
	ctx := context.Background()
	w, err := host.Open(ctx, host.Options{Home: d.home, Cwd: d.repo, Actor: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ev, err := w.Intake().Record(ctx, intake.RecordRequest{Content: "twice seen: busy timeout before WAL", SourceRef: "notes.md#L1"})
	if err != nil {
		t.Fatal(err)
	}
	twin, err := w.Distill(ctx, intake.DistillRequest{Statement: "Set busy_timeout before enabling WAL journaling!", Tier: "shu", Supporting: []string{ev.ID}, Anchor: "repo"})
	if err != nil {
		t.Fatal(err)
	}
	near, err := w.Distill(ctx, intake.DistillRequest{Statement: "Always set busy_timeout before enabling WAL journaling", Tier: "shu", Supporting: []string{ev.ID}})
	if err != nil {
		t.Fatal(err)
	}
	body := d.get("/card/" + d.ready)
	for _, want := range []string{`duplicate</span>` + "\n  " + `<a href="/card/` + twin.ID, `% alike</span>` + "\n  " + `<a href="/card/` + near.ID} {
		if !strings.Contains(body, want) {
			t.Errorf("card page lacks %q", want)
		}
	}
	if strings.Contains(body, `<a href="/card/`+d.thin+`">Prefer`) {
		t.Error("an unrelated card is listed as a near-duplicate")
	}
}

func TestAttention(t *testing.T) {
	d := newDesk(t, host.Human)
	body := d.get("/attention")
	for _, want := range []string{`id="contested"`, `id="c-` + d.contested, "vacuum blocks writers", d.counter,
		`id="expiring"`, `id="findings"`, `id="held"`, `id="conflicts"`, "No sync conflicts."} {
		if !strings.Contains(body, want) {
			t.Errorf("needs attention lacks %q", want)
		}
	}
}

func TestCardPage(t *testing.T) {
	d := newDesk(t, host.Human)
	ctx := context.Background()
	if _, err := d.h.Adoption().Adopt(ctx, adoption.Request{Signal: "used", CardID: d.contested, Note: "helped with the vacuum"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.h.Pack().Context(ctx, pack.ContextRequest{Query: "vacuum palace weekly speed"}); err != nil {
		t.Fatal(err)
	}
	body := d.get("/card/" + d.contested)
	for _, want := range []string{
		"Contested", "vacuum blocks writers", // the contest and its reason
		"direct_write", "linked", "updated", // the events
		`<svg class="chart"`, "used 1", // the adoption chart and its table
		"Packs it was in", "ref_only", // the packs it was in
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card page lacks %q", want)
		}
	}
	if code, _ := d.do(http.MethodGet, "/card/kc_nosuchcard", nil, nil, false); code != http.StatusNotFound {
		t.Errorf("an unknown card = %d, want 404", code)
	}
}

func TestInspector(t *testing.T) {
	d := newDesk(t, host.Human)
	body := d.get("/inspect?q=vacuum+palace+weekly&file=store/db.go")
	for _, want := range []string{`id="i-` + d.contested, "contested", "Left out", "Budget", "salience:"} {
		if !strings.Contains(body, want) {
			t.Errorf("inspector lacks %q", want)
		}
	}
	if strings.Contains(body, `id="i-`+d.ready) {
		t.Error("a candidate is in the pack without include candidates")
	}
	if body := d.get("/inspect?q=busy_timeout+WAL&candidates=1"); !strings.Contains(body, `id="i-`+d.ready) {
		t.Error("include candidates does not bring the candidate in")
	}
}

func TestCompletePath(t *testing.T) {
	d := newDesk(t, host.Human)
	for _, dir := range []string{"store", "store/sub", "docs"} {
		if err := os.MkdirAll(filepath.Join(d.repo, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.repo, "store", "db.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prefix string
		want   string
	}{
		{"st", `["store/"]`},
		{"store/", `["store/db.go","store/sub/"]`},
		{"../", `[]`},
		{"/etc/", `[]`},
		{".g", `[]`},
	} {
		body := d.get("/api/complete?path=" + tc.prefix)
		var got []string
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("complete %q: %v: %s", tc.prefix, err, body)
		}
		if b, _ := json.Marshal(got); string(b) != tc.want {
			t.Errorf("complete %q = %s, want %s", tc.prefix, b, tc.want)
		}
	}
}

func TestMailbox(t *testing.T) {
	d := newDesk(t, host.Human)
	body := d.get("/mailbox")
	for _, want := range []string{"Boxes", "Hygiene check", "Pending letters"} {
		if !strings.Contains(body, want) {
			t.Errorf("mailbox lacks %q", want)
		}
	}
}

// TestLiveChange: a change another connection commits reaches an open
// page's event stream within a second.
func TestLiveChange(t *testing.T) {
	d := newDesk(t, host.Human)
	req, _ := http.NewRequest(http.MethodGet, d.base+"/events", nil)
	req.AddCookie(&http.Cookie{Name: "palace_ui", Value: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	got := make(chan time.Time, 1)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if sc.Text() == "event: change" {
				got <- time.Now()
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // the stream is subscribed
	other, err := host.Open(context.Background(), host.Options{Home: d.home, Cwd: d.repo, Actor: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	start := time.Now()
	if _, err := other.Retire(context.Background(), d.thin, "not worth keeping"); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		if lag := at.Sub(start); lag > time.Second {
			t.Errorf("the change reached the page after %s, want within a second", lag)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no change event within 3 s")
	}
}
