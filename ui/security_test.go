package ui_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
)

func TestSession(t *testing.T) {
	d := newDesk(t, host.Human)
	for _, tc := range []struct {
		name     string
		path     string
		noCookie bool
		cookie   string
		want     int
	}{
		{"no token, no cookie", "/", true, "", http.StatusUnauthorized},
		{"no cookie on a card page", "/card/" + d.ready, true, "", http.StatusUnauthorized},
		{"no cookie on the event stream", "/events", true, "", http.StatusUnauthorized},
		{"no cookie on an asset", "/assets/app.js", true, "", http.StatusUnauthorized},
		{"wrong token in the URL", "/?token=" + strings.Repeat("0", 64), true, "", http.StatusUnauthorized},
		{"right token in the URL", "/?token=" + testToken, true, "", http.StatusSeeOther},
		{"session cookie", "/", false, "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := d.do(http.MethodGet, tc.path, nil, nil, tc.noCookie)
			if code != tc.want {
				t.Fatalf("GET %s = %d, want %d: %s", tc.path, code, tc.want, body)
			}
			if code == http.StatusUnauthorized && strings.Contains(body, "busy_timeout") {
				t.Errorf("a refused request shows palace content: %s", body)
			}
		})
	}
	t.Run("the token becomes an HttpOnly SameSite=Strict cookie and leaves the URL", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, d.base+"/queue?order=value&token="+testToken, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); loc != "/queue?order=value" {
			t.Errorf("Location = %q, want /queue?order=value", loc)
		}
		cs := res.Cookies()
		if len(cs) != 1 || cs[0].Name != "palace_ui" || cs[0].Value != testToken || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
			t.Errorf("cookies = %+v, want one HttpOnly SameSite=Strict session cookie", cs)
		}
	})
}

func TestHostAndOrigin(t *testing.T) {
	d := newDesk(t, host.Human)
	port := strings.TrimPrefix(d.base, "http://127.0.0.1")
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"a rebinding host name", map[string]string{"Host": "attacker.example" + port}, http.StatusForbidden},
		{"loopback on another port", map[string]string{"Host": "127.0.0.1:1"}, http.StatusForbidden},
		{"a foreign origin", map[string]string{"Origin": "http://attacker.example"}, http.StatusForbidden},
		{"the same host over https", map[string]string{"Origin": "https://127.0.0.1" + port}, http.StatusForbidden},
		{"a null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"a cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"localhost with the port", map[string]string{"Host": "localhost" + port}, http.StatusOK},
		{"its own origin", map[string]string{"Origin": d.base}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := d.do(http.MethodGet, "/", nil, tc.hdr, false); code != tc.want {
				t.Fatalf("GET / with %v = %d, want %d: %s", tc.hdr, code, tc.want, body)
			}
		})
	}
	t.Run("a foreign origin cannot change anything", func(t *testing.T) {
		form := url.Values{"csrf": {d.csrf()}, "reason": {"forged"}}
		code, _ := d.do(http.MethodPost, "/card/"+d.ready+"/promote", form, map[string]string{"Origin": "http://attacker.example"}, false)
		if code != http.StatusForbidden || d.status(d.ready) != domain.StatusCandidate {
			t.Fatalf("forged promote = %d, card %s, want 403 and a candidate", code, d.status(d.ready))
		}
	})
}

func TestHeaders(t *testing.T) {
	d := newDesk(t, host.Human)
	req, _ := http.NewRequest(http.MethodGet, d.base+"/card/"+d.evil, nil)
	req.AddCookie(&http.Cookie{Name: "palace_ui", Value: testToken})
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q allows inline or eval'd script", csp)
	}
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestCSRF(t *testing.T) {
	d := newDesk(t, host.Human)
	path := "/card/" + d.ready + "/promote"
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"no token", url.Values{"reason": {"ok"}}},
		{"a wrong token", url.Values{"reason": {"ok"}, "csrf": {strings.Repeat("a", 64)}}},
		{"the session token instead", url.Values{"reason": {"ok"}, "csrf": {testToken}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := d.do(http.MethodPost, path, tc.form, nil, false)
			if code != http.StatusForbidden {
				t.Fatalf("POST %s = %d, want 403: %s", path, code, body)
			}
			if got := d.status(d.ready); got != domain.StatusCandidate {
				t.Fatalf("card is %s after a refused POST, want candidate", got)
			}
		})
	}
	t.Run("without the session the token is not enough", func(t *testing.T) {
		code, _ := d.do(http.MethodPost, path, url.Values{"reason": {"ok"}, "csrf": {d.csrf()}}, nil, true)
		if code != http.StatusUnauthorized || d.status(d.ready) != domain.StatusCandidate {
			t.Fatalf("POST without cookie = %d, card %s; want 401 and a candidate", code, d.status(d.ready))
		}
	})
	t.Run("a GET changes nothing", func(t *testing.T) {
		if code, _ := d.do(http.MethodGet, path, nil, nil, false); code != http.StatusMethodNotAllowed {
			t.Fatalf("GET %s = %d, want 405", path, code)
		}
	})
	t.Run("with the token the promote goes through the gate", func(t *testing.T) {
		code, _ := d.do(http.MethodPost, path, url.Values{"reason": {"reviewed"}, "csrf": {d.csrf()}, "return": {"/"}}, nil, false)
		if code != http.StatusSeeOther || d.status(d.ready) != domain.StatusPromoted {
			t.Fatalf("POST with token = %d, card %s; want 303 and promoted", code, d.status(d.ready))
		}
		evs, err := d.h.CardEvents(context.Background(), d.ready, false)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if last.Type != domain.EventPromoted || last.Actor != "rita" || last.PolicyHash == "" || last.Reason != "reviewed" {
			t.Errorf("last event = %+v, want promoted by rita with a policy hash", last)
		}
	})
}

func TestAgentModeIsReadOnly(t *testing.T) {
	d := newDesk(t, host.Agent)
	for _, p := range []string{"/", "/card/" + d.ready, "/card/" + d.contested, "/attention", "/inspect?q=wal", "/mailbox"} {
		body := d.get(p)
		if strings.Contains(body, `method="post"`) || strings.Contains(body, "<button type=\"submit\" class=\"primary\" data-action") {
			t.Errorf("agent-mode page %s renders an action form", p)
		}
		if !strings.Contains(body, "agent mode · read-only") {
			t.Errorf("agent-mode page %s does not say it is read-only", p)
		}
	}
	csrf := csrfOf(t, d)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/card/" + d.ready + "/promote", url.Values{"reason": {"r"}}},
		{"/card/" + d.thin + "/retire", url.Values{"reason": {"r"}}},
		{"/card/" + d.thin + "/link", url.Values{"role": {"verification"}, "evidence": {d.counter}}},
		{"/card/" + d.contested + "/rescope", url.Values{"paths": {"docs/**"}}},
		{"/card/" + d.contested + "/action", url.Values{"action": {"mark_foundational"}}},
		{"/nowhere", url.Values{}},
	} {
		tc.form.Set("csrf", csrf)
		code, body := d.do(http.MethodPost, tc.path, tc.form, nil, false)
		if code != http.StatusForbidden {
			t.Errorf("agent-mode POST %s = %d, want 403: %s", tc.path, code, body)
		}
	}
	if d.status(d.ready) != domain.StatusCandidate || d.status(d.thin) != domain.StatusCandidate {
		t.Errorf("agent mode changed a card: ready %s, thin %s", d.status(d.ready), d.status(d.thin))
	}
}

// csrfOf is the CSRF token a human-mode page of d would embed (an
// HMAC of the session token): an agent-mode page embeds none, and its
// refusal must not rest on that absence.
func csrfOf(t *testing.T, d *desk) string {
	t.Helper()
	m := hmac.New(sha256.New, []byte(testToken))
	m.Write([]byte("palace ui csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

func TestHostileTextRendersInert(t *testing.T) {
	d := newDesk(t, host.Human)
	for _, p := range []string{"/", "/card/" + d.evil, "/inspect?q=quote+red&candidates=1"} {
		body := d.get(p)
		for _, bad := range []string{"<script>window", "<img src=x", `href="javascript:`, "\x1b"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q unescaped", p, bad)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the statement's markup as text", p)
		}
		if !strings.Contains(body, `\x1b[31mred\x1b[0m`) {
			t.Errorf("%s does not show the terminal escape as \\x1b", p)
		}
	}
	if body := d.get("/card/" + d.evil); !strings.Contains(body, `<code class="src">javascript:window.__pwned=3</code>`) {
		t.Error("a javascript: source is not shown as plain text")
	}
}

func TestChangesGoThroughTheGate(t *testing.T) {
	d := newDesk(t, host.Human)
	csrf := d.csrf()
	code, body := d.do(http.MethodPost, "/card/"+d.thin+"/promote", url.Values{"reason": {"looks fine"}, "csrf": {csrf}}, nil, false)
	if code != http.StatusConflict || !strings.Contains(body, "verification") {
		t.Fatalf("promote without verification = %d, want 409 naming what is missing: %s", code, body)
	}
	if d.status(d.thin) != domain.StatusCandidate {
		t.Fatalf("a denied promote moved the card to %s", d.status(d.thin))
	}
	code, body = d.do(http.MethodPost, "/card/"+d.thin+"/retire", url.Values{"csrf": {csrf}}, nil, false)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "reason") || d.status(d.thin) != domain.StatusCandidate {
		t.Fatalf("retire without a reason = %d (card %s), want 422 asking for one: %s", code, d.status(d.thin), body)
	}
	code, _ = d.do(http.MethodPost, "/card/"+d.thin+"/retire", url.Values{"csrf": {csrf}, "reason": {"duplicate"}, "return": {"//attacker.example/"}}, nil, false)
	if code != http.StatusSeeOther || d.status(d.thin) != domain.StatusRetired {
		t.Fatalf("retire = %d, card %s; want 303 and retired", code, d.status(d.thin))
	}
	code, _ = d.do(http.MethodPost, "/card/"+d.contested+"/rescope", url.Values{"csrf": {csrf}, "paths": {"ops/{db,cron}/**\nscripts/**"}, "languages": {"go, sql"}}, nil, false)
	c, err := d.h.ShowCard(context.Background(), d.contested)
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusSeeOther || strings.Join(c.Scope.Paths, " ") != "ops/{db,cron}/** scripts/**" || strings.Join(c.Scope.Languages, " ") != "go sql" {
		t.Fatalf("rescope = %d, scope %+v", code, c.Scope)
	}
	code, _ = d.do(http.MethodPost, "/card/"+d.contested+"/retrigger", url.Values{"csrf": {csrf}, "patterns": {`db\.Begin\(`}, "intents": {"debug, review"}}, nil, false)
	if c, _ = d.h.ShowCard(context.Background(), d.contested); code != http.StatusSeeOther || strings.Join(c.Trigger.Patterns, " ") != `db\.Begin\(` || strings.Join(c.Trigger.Intents, " ") != "debug review" {
		t.Fatalf("retrigger = %d, triggers %+v", code, c.Trigger)
	}
	if body := d.get("/card/" + d.contested); !strings.Contains(body, `action="/card/`+d.contested+`/resolve"`) || !strings.Contains(body, `action="/card/`+d.contested+`/demote"`) {
		t.Error("a contested card's page offers no resolve or demote")
	}
	code, body = d.do(http.MethodPost, "/card/"+d.contested+"/resolve", url.Values{"csrf": {csrf}, "verification": {d.counter}, "reason": {"checked again"}}, nil, false)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "counterexample") || d.status(d.contested) != domain.StatusPromoted {
		t.Errorf("resolve on the counterexample itself = %d (%s): want 422 naming its role, the card unchanged", code, body)
	}
	code, _ = d.do(http.MethodPost, "/card/"+d.contested+"/demote", url.Values{"csrf": {csrf}, "counterexample": {d.counter}, "reason": {"it fails"}}, nil, false)
	if code != http.StatusSeeOther || d.status(d.contested) != domain.StatusDemoted {
		t.Fatalf("demote = %d, card %s; want 303 and demoted", code, d.status(d.contested))
	}
	code, _ = d.do(http.MethodPost, "/card/"+d.ready+"/link", url.Values{"csrf": {csrf}, "role": {"teaching"}, "evidence": {d.counter}}, nil, false)
	if code != http.StatusSeeOther {
		t.Fatalf("link = %d, want 303", code)
	}
	if body := d.get("/card/" + d.ready); !strings.Contains(body, d.counter) {
		t.Error("the linked evidence is not on the card page")
	}
}

func TestRedirectStaysOnTheDesk(t *testing.T) {
	d := newDesk(t, host.Human)
	csrf := d.csrf()
	for _, ret := range []string{"//attacker.example/x", "https://attacker.example/", "/\\attacker.example", "javascript:alert(1)"} {
		req, _ := http.NewRequest(http.MethodPost, d.base+"/card/"+d.contested+"/action",
			strings.NewReader(url.Values{"csrf": {csrf}, "action": {"set_review_after"}, "value": {"2031-01-0" + string(rune('1'+len(ret)%8))}, "return": {ret}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "palace_ui", Value: testToken})
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/card/"+d.contested+"?flash=") {
			t.Errorf("return %q redirected to %q, want the card page", ret, loc)
		}
	}
}
