// Package lazyregexp is a regular expression compiled on first use, for
// package-level patterns, so processes that never use one do not pay for
// compiling it at start. It knows nothing of palace.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled on first use. Its methods are those of
// regexp.Regexp that palace calls; an invalid pattern panics on first use,
// as regexp.MustCompile would at start.
type Regexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// New returns the pattern, not yet compiled.
func New(src string) *Regexp { return &Regexp{src: src} }

// Regexp returns the compiled pattern.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.src) })
	return r.re
}

// String returns the source text of the pattern.
func (r *Regexp) String() string { return r.src }

func (r *Regexp) Match(b []byte) bool                    { return r.Regexp().Match(b) }
func (r *Regexp) MatchString(s string) bool              { return r.Regexp().MatchString(s) }
func (r *Regexp) FindString(s string) string             { return r.Regexp().FindString(s) }
func (r *Regexp) FindStringSubmatch(s string) []string   { return r.Regexp().FindStringSubmatch(s) }
func (r *Regexp) FindAllString(s string, n int) []string { return r.Regexp().FindAllString(s, n) }
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.Regexp().ReplaceAll(src, repl) }
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}
