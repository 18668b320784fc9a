package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// sessionCookie carries the session token after the first visit.
const sessionCookie = "palace_ui"

// csrfField is the form field every POST carries.
const csrfField = "csrf"

// contentSecurityPolicy lets a page load only the server's own script,
// style and images, connect only to the server, submit forms only to it,
// and be framed by nobody: injected markup can neither run nor load
// anything.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// newToken returns 32 random bytes in hex.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// csrfFor derives the CSRF token from the session token: pages embed it,
// and a forged form from another site cannot know it.
func csrfFor(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("palace ui csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

func sameSecret(a, b string) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// allowedHosts are the Host header values the server answers to when
// reached at addr: the address itself and, for a loopback address, the
// loopback names with its port. A DNS-rebinding page reaches the server
// under its own host name, which is not among them.
func allowedHosts(addr net.Addr) map[string]bool {
	out := map[string]bool{}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		out[addr.String()] = true
		return out
	}
	port := strconv.Itoa(tcp.Port)
	out[net.JoinHostPort(tcp.IP.String(), port)] = true
	if tcp.IP.IsUnspecified() {
		// Every interface: the machine's addresses and name name it.
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok {
					out[net.JoinHostPort(ipn.IP.String(), port)] = true
				}
			}
		}
		if name, err := os.Hostname(); err == nil {
			out[strings.ToLower(net.JoinHostPort(name, port))] = true
		}
	}
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			out[net.JoinHostPort(h, port)] = true
		}
	}
	return out
}

// IsLoopback reports whether a listen address (host:port) binds loopback
// only: "localhost", 127.0.0.0/8 or ::1. An empty host binds every
// interface and is not loopback.
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	return err == nil && (h == "localhost" || net.ParseIP(h).IsLoopback())
}

// guard is the security check every request passes before any handler:
// Host and Origin, the session, and for a POST the mode and the CSRF
// token. It also sets the headers every answer carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with a form POST, which the origin check refuses.
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hosts[strings.ToLower(r.Host)] {
			plainError(w, http.StatusForbidden, "this server answers only to its own address: open the URL `palace ui` printed")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.sameOrigin(o) {
			plainError(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			plainError(w, http.StatusForbidden, "cross-site request refused")
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet {
			if !sameSecret(q, s.token) {
				plainError(w, http.StatusUnauthorized, "the token in this URL is not this server's: open the URL `palace ui` printed")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			// Drop the token from the address bar and the history.
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(sessionCookie)
		if err != nil || !sameSecret(c.Value, s.token) {
			plainError(w, http.StatusUnauthorized, "no session: open the URL `palace ui` printed (it carries the token)")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Method != http.MethodPost {
				hd.Set("Allow", "GET, HEAD, POST")
				plainError(w, http.StatusMethodNotAllowed, "method not allowed")
				return
			}
			if !s.human {
				plainError(w, http.StatusForbidden, "refused in agent mode: this desk is read-only (the mode is fixed when `palace ui` starts)")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				plainError(w, http.StatusBadRequest, "the form could not be read: "+err.Error())
				return
			}
			if !sameSecret(r.PostForm.Get(csrfField), s.csrf) {
				plainError(w, http.StatusForbidden, "the form's CSRF token is missing or wrong: reload the page and submit again")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// maxFormBytes bounds a POST's body: every form of the desk is a few
// fields.
const maxFormBytes = 64 << 10

// sameOrigin reports whether an Origin header names this server.
func (s *Server) sameOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && u.Path == "" && s.hosts[strings.ToLower(u.Host)]
}

// plainError answers a refused request with a short text page: it is
// written before any session is known, so it shows nothing of the palace.
func plainError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(http.StatusText(code) + ": " + msg + "\n"))
}
