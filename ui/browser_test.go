package ui_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

// chromium finds a Chromium to drive: Debian's chromium-headless-shell
// (what .ci/run installs) or a full chromium.
func chromium() string {
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	for _, p := range []string{"/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// screenshotDir is where the browser test saves its screenshots:
// $PALACE_SCREENSHOTS, else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("PALACE_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestBrowserReview drives a real headless Chromium through the desk: the
// queue renders with hostile text inert, the Promote button moves a
// candidate out of the queue and into the pack inspector's result, a
// contested card's page shows its contest, and a change another process
// makes shows on the open page without a reload. Screenshots go to
// screenshotDir (review-queue.png is the README's).
func TestBrowserReview(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary found (apt-get install chromium-headless-shell): skipping the browser test")
	}
	d := newDesk(t, host.Human)
	shots := screenshotDir(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // as root on CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	// Any dialog means hostile text ran as script. The first Do starts the
	// browser; the dialog watch needs it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	dialogs := make(chan string, 4)
	go func() {
		for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			select {
			case dialogs <- ev.Message:
			default:
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	// shot saves a full-page screenshot: PNG, lossless (quality 100).
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	card := "#c-" + d.ready
	if err := chromedp.Do(ctx, chromedp.Navigate(d.srv.URL("/")), chromedp.WaitVisible(card+" button[data-action=promote]")); err != nil {
		t.Fatalf("open the queue: %v", err)
	}
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__pwned)`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" {
		t.Fatalf("hostile card text ran: window.__pwned = %s", pwned)
	}
	before := count("main article.candidate")
	if before != 3 {
		t.Fatalf("the queue shows %d candidates, want 3", before)
	}
	shot("review-queue.png")

	// Promote with the button: the candidate leaves the queue.
	if err := chromedp.Do(ctx, chromedp.Click(card+" button[data-action=promote]", chromedp.NodeVisible), chromedp.WaitVisible(`p.flash`)); err != nil {
		t.Fatalf("promote: %v", err)
	}
	if flash := text(`p.flash`); !strings.Contains(flash, "Promoted "+d.ready) {
		t.Errorf("flash = %q, want the promotion", flash)
	}
	if after, still := count("main article.candidate"), count(card); still != 0 || after != before-1 {
		t.Fatalf("after promote the queue shows %d candidates (the card %d times), want %d without it", after, still, before-1)
	}
	shot("after-promote.png")
	if got := d.status(d.ready); got != domain.StatusPromoted {
		t.Fatalf("the palace has the card %s, want promoted", got)
	}

	// The pack inspector: type the task, pick the file, see the card in.
	err = chromedp.Do(ctx,
		chromedp.Navigate(d.base+"/inspect"),
		chromedp.WaitVisible(`#q`),
		chromedp.SendKeys(`#q`, "busy_timeout before enabling WAL"),
		chromedp.SendKeys(`#file`, "store/db.go"),
		chromedp.Click(`form.inspect button[type=submit]`),
		chromedp.WaitVisible(`#i-`+d.ready),
	)
	if err != nil {
		t.Fatalf("pack inspector: %v", err)
	}
	if line := text(`#i-` + d.ready + ` p`); !strings.Contains(line, "lane") || !strings.Contains(line, "promoted") {
		t.Errorf("the inspector's line for the card = %q, want its lane and status", line)
	}
	shot("pack-inspector.png")

	// A contested card's page.
	if err := chromedp.Do(ctx, chromedp.Navigate(d.base+"/card/"+d.contested), chromedp.WaitVisible(`section.contest`)); err != nil {
		t.Fatalf("contested card: %v", err)
	}
	if contest := text(`section.contest`); !strings.Contains(contest, "vacuum blocks writers") || !strings.Contains(contest, d.counter) {
		t.Errorf("the contest section = %q, want its reason and counterexample", contest)
	}
	shot("contested-card.png")

	// Live: another process retires a candidate; the open queue drops it.
	if err := chromedp.Do(ctx, chromedp.Navigate(d.base+"/"), chromedp.WaitVisible("#c-"+d.thin)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the page's event stream is open
	other, err := host.Open(context.Background(), host.Options{Home: d.home, Cwd: d.repo, Actor: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Retire(context.Background(), d.thin, "retired from another terminal"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.WaitNotPresent("#c-"+d.thin)); err != nil {
		t.Fatalf("the open queue did not drop the retired card: %v", err)
	}
	if lag := time.Since(start); lag > 2*time.Second {
		t.Errorf("the change showed after %s", lag)
	}
	select {
	case msg := <-dialogs:
		t.Fatalf("a dialog opened (%q): page script ran hostile text", msg)
	default:
	}
}
