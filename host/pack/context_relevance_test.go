package pack

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenTermsCodeAware(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// camelCase humps, whole identifier kept.
		{"useEffect", []string{"effect", "useeffect"}},
		{"HTTPServer handlers", []string{"http", "server", "httpserver", "handler"}},
		// snake_case and dotted names.
		{"zz_generated.deepcopy.go", []string{"zz", "generat", "deepcopi", "go", "zz_generated.deepcopy.go"}},
		// paths: every segment, the whole path once.
		{"pkg/kubelet/eviction_manager_test.go", []string{"pkg", "kubelet", "evict", "manag", "test", "go", "pkg/kubelet/eviction_manager_test.go"}},
		// stems meet: listeners/listener, pinned/pins.
		{"Listeners pinned", []string{"listen", "pin"}},
		// stopwords (English and generic request words) and one-letter parts drop; a
		// sentence's final dot is punctuation.
		{"Only run the tests, then I need a fix.", []string{"test", "fix"}},
		{"k8s.io/client-go", []string{"k8s", "io", "client", "go", "k8s.io/client-go"}},
	} {
		got := tokenTerms(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("tokenTerms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPatternWords(t *testing.T) {
	for in, want := range map[string]string{
		`generated\.pb\.go`: "generated.pb.go",
		`\bfmt\.Println\(`:  " fmt.Println(",
		`a{1,3}|b[cd]+`:     "a 1,3  b cd  ",
	} {
		if got := patternWords(in); got != want {
			t.Errorf("patternWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRankStemsAndFields: the card that says the query in other inflections
// ranks first, a trigger word counts, and a card sharing only stopwords is
// absent.
func TestRankStemsAndFields(t *testing.T) {
	q := newRelQuery("remove the event listeners when the component unmounts", "")
	docs := []relevanceDoc{
		{id: "stem", statement: "Unregister every listener you registered in a component before it is unmounted."},
		{id: "trigger", statement: "Keep effects small.", trigger: "listener cleanup"},
		{id: "stop", statement: "Run only what you need when it is done."},
		{id: "other", statement: "Format SQL migrations with the project's formatter."},
	}
	r := q.rank(docs)
	if _, ok := r["stop"]; ok {
		t.Errorf("a card sharing only stopwords ranked: %+v", r["stop"])
	}
	if _, ok := r["other"]; ok {
		t.Errorf("an unrelated card ranked: %+v", r["other"])
	}
	if r["stem"].relative != 1 || r["trigger"].relevance <= 0 || r["trigger"].relevance >= r["stem"].relevance {
		t.Errorf("rank = %+v, want stem best, above trigger, above 0", r)
	}
	// Matched by stem, named by the request's own words (the why-lines a
	// person reads): "listeners" matches "listener", shown as written.
	if !slices.Contains(r["stem"].matched, "listeners") || !slices.Contains(r["stem"].matched, "unmounts") {
		t.Errorf("matched = %q, want the request's words listeners and unmounts", r["stem"].matched)
	}
}

// TestRankFileSignals: the file under edit ranks a card about its area
// even when the query says nothing of it, below what the query says.
func TestRankFileSignals(t *testing.T) {
	docs := []relevanceDoc{
		{id: "area", statement: "Eviction thresholds are read from the kubelet config."},
		{id: "none", statement: "Release notes go in the changelog."},
	}
	r := newRelQuery("why is this value wrong", "pkg/kubelet/eviction/helpers.go").rank(docs)
	if r["area"].relevance <= 0 {
		t.Fatalf("the file's area ranked nothing: %+v", r)
	}
	if _, ok := r["none"]; ok {
		t.Errorf("a card outside the file's area ranked: %+v", r["none"])
	}
}

// FuzzScanWords: any input scans without panic; every token is non-empty,
// valid UTF-8 whenever the input is, and lower-case.
func FuzzScanWords(f *testing.F) {
	for _, s := range []string{"", "SQLite WAL-mode, busy_timeout=30000!", "Ünïcode ÉCOLE straße ſ K", "\xff\xfeabc\x80",
		strings.Repeat("a", 200) + "é", "a/b/.c-d:e_", "HTTPServerURL2x", "__init__.py", "日本語のテキスト wal2 WAL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scanWords(s, func(tok []byte, whole bool) {
			if len(tok) == 0 {
				t.Fatalf("%q: empty token", s)
			}
			if utf8.ValidString(s) && !utf8.Valid(tok) {
				t.Fatalf("%q: token %q is not UTF-8", s, tok)
			}
			if strings.ToLower(string(tok)) != string(tok) && utf8.Valid(tok) {
				t.Fatalf("%q: token %q is not lower-case", s, tok)
			}
		})
		_ = tokenTerms(s)
	})
}
