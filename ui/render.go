package ui

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/cardview"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// assetServer serves the embedded stylesheet and script.
func assetServer() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	return http.FileServerFS(sub)
}

// pageNames are the templates under templates/ besides the layout.
var pageNames = []string{"queue", "attention", "inspect", "card", "mailbox", "error"}

// loadPages parses the templates, one set per page, each with the layout.
func loadPages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("parse the desk's layout: %w", err)
	}
	p := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(templateFS, "templates/"+name+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("parse the desk's %s page: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

// view is what every page's template gets: the page's own data in Data,
// and what the layout shows.
type view struct {
	Title, Nav, CSRF, Actor, Where, Version string

	Human bool
	Flash string
	// Return is the page's own address, where a form's change comes back.
	Return string
	// DataVersion is the database's data version the page was rendered at:
	// the live view refreshes only for a newer one.
	DataVersion int64
	Data        any
}

// render writes page name with data, or an error page when the template
// fails (before anything is sent).
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name, title, nav string, data any) {
	v := view{Title: title, Nav: nav, Human: s.human, CSRF: s.csrf, Actor: s.h.Actor(), Version: s.opts.Version,
		Return: r.URL.RequestURI(), Data: data}
	// Read before the page's data would be better still; read after, a
	// change committed meanwhile refreshes the page once more, harmlessly.
	if n, err := s.live.probe.Version(r.Context()); err == nil {
		v.DataVersion = n
	}
	loc := s.h.Location()
	v.Where = loc.Worktree
	if v.Where == "" {
		v.Where = loc.Dir + " (outside git: global anchor only)"
	}
	if key := r.URL.Query().Get("flash"); key != "" {
		v.Flash = s.takeFlash(key)
	}
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		s.log.Error("render", "page", name, "err", err)
		plainError(w, http.StatusInternalServerError, "the page could not be rendered")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = buf.WriteTo(w)
}

// fail shows err as an error page with the status its kind maps to.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	if code == http.StatusInternalServerError {
		s.log.Error("request", "path", r.URL.Path, "err", err)
	}
	var reasons []string
	var he *host.Error
	if errors.As(err, &he) {
		reasons = he.Reasons
	}
	s.render(w, r, code, "error", http.StatusText(code), "", struct {
		Code    int
		Message string
		Reasons []string
	}{code, err.Error(), reasons})
}

// statusOf maps a host error kind to an HTTP status.
func statusOf(err error) int {
	var he *host.Error
	if errors.As(err, &he) && he.Field == "id" && strings.HasPrefix(he.Msg, "no ") {
		return http.StatusNotFound
	}
	switch host.KindOf(err) {
	case host.KindInvalid:
		return http.StatusUnprocessableEntity
	case host.KindDenied:
		return http.StatusConflict
	case host.KindMode:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// funcs are the templates' helpers. They format; none decides anything.
var funcs = template.FuncMap{
	"clean":     clean,
	"excerpt":   excerpt,
	"short":     shortHash,
	"scope":     scopeText,
	"join":      strings.Join,
	"pct":       func(f float64) int { return int(f*100 + 0.5) },
	"day":       func(s string) string { return s[:min(10, len(s))] },
	"when":      func(s string) string { return strings.Replace(s[:min(19, len(s))], "T", " ", 1) },
	"weblink":   weblink,
	"anchor":    anchorText,
	"add":       func(a, b int) int { return a + b },
	"hasRole":   func(r domain.Role, s string) bool { return string(r) == s },
	"breakdown": breakdownText,
	"sorted":    sortedKeys,
	"json":      jsonText,
	"dict":      dict,
}

// clean makes stored text safe to read: control characters other than a
// newline or tab — terminal escapes among them — are shown as \xNN
// escapes, and invalid UTF-8 as U+FFFD. html/template escapes the rest.
func clean(s string) string {
	control := func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 }
	if utf8.ValidString(s) && strings.IndexFunc(s, control) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if control(r) {
			fmt.Fprintf(&b, `\x%02x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// excerpt is clean(s) cut to about n characters at a word.
func excerpt(n int, s string) string {
	s = clean(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := string([]rune(s)[:n])
	if i := strings.LastIndexAny(cut, " \n\t"); i > n/2 {
		cut = cut[:i]
	}
	return cut + " …"
}

func shortHash(h string) string { return cmp.Or(h[:min(12, len(h))], "–") }

func scopeText(s domain.Scope) string {
	if d := s.String(); d != "" {
		return clean(d)
	}
	return "anywhere at its anchor"
}

func anchorText(a cardview.AnchorRef) string {
	if a.Identity == "" {
		return a.Kind
	}
	return a.Kind + " " + clean(a.Identity)
}

// weblink returns s as a URL when it is an http or https address, for a
// source link; nil otherwise (a file reference, a CI id, or a hostile
// javascript: URL, which is shown as text).
func weblink(s string) *url.URL {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	return u
}

func breakdownText(b map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(b) {
		if b[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %+d", k, b[k]))
		}
	}
	if len(parts) == 0 {
		return "all terms 0"
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// jsonText shows a stored JSON value compactly ("" for empty ones).
func jsonText(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "{}" {
		return ""
	}
	return clean(s)
}

// pageNumber reads a 1-based page number from the query.
func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// dict builds a map from key, value pairs, to hand a partial template
// more than one value.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, errors.New("dict needs key, value pairs")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}
