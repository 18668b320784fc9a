package policies_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/palacehq/palace/policies"
)

// TestScopeGlobsGitignoreSemantics checks `**/` as .gitignore, Cursor's
// globs and Copilot's applyTo read it (zero or more directories) in both
// engines, over every pattern × file pair, and that they agree.
func TestScopeGlobsGitignoreSemantics(t *testing.T) {
	native, rego := sets(t)
	ctx := context.Background()
	patterns := []string{"**/*.go", "**/main.go", "store/**/query.go", "**/store/**/*.go", "a/**/**/b.go",
		"store/**", "**", "*.go", "{cmd,store}/**/*.go", "x**/*.go", "**/", "[", "src/**/*"}
	files := []string{"main.go", "cmd/palace/main.go", "store/query.go", "store/sql/v2/query.go", "storequery.go",
		"a/b.go", "a/x/b.go", "a/x/y/b.go", "xmain.go", "xy/main.go", "main.ts", "store", "src/a", "src/a/b"}
	want := map[[2]string]bool{
		{"**/*.go", "main.go"}:                         true,
		{"**/*.go", "cmd/palace/main.go"}:              true,
		{"**/*.go", "main.ts"}:                         false,
		{"**/main.go", "main.go"}:                      true,
		{"**/main.go", "xmain.go"}:                     false,
		{"store/**/query.go", "store/query.go"}:        true,
		{"store/**/query.go", "store/sql/v2/query.go"}: true,
		{"store/**/query.go", "storequery.go"}:         false,
		{"**/store/**/*.go", "store/query.go"}:         true,
		{"a/**/**/b.go", "a/x/y/b.go"}:                 true,
		{"{cmd,store}/**/*.go", "store/query.go"}:      true,
		{"*.go", "cmd/palace/main.go"}:                 false,
		{"src/**/*", "src/a/b"}:                        true,
		{"[", "main.go"}:                               false,
	}
	var in policies.ScopeInput
	for i, p := range patterns {
		in.Cards = append(in.Cards, policies.ScopeCard{ID: fmt.Sprint("c", i), Scope: policies.CardScope{Paths: []string{p}}})
	}
	for _, f := range files {
		in.Context = policies.ScopeContext{File: f}
		gotN, dn := native.Scope(ctx, in)
		gotR, dr := rego.Scope(ctx, in)
		if dn.Fallback != "" || dr.Fallback != "" {
			t.Fatalf("file %s: fallback %q / %q", f, dn.Fallback, dr.Fallback)
		}
		for i, p := range patterns {
			id := fmt.Sprint("c", i)
			if gotN[id].Applies != gotR[id].Applies {
				t.Errorf("pattern %q file %q: go says %v, rego %v", p, f, gotN[id].Applies, gotR[id].Applies)
			}
			if w, ok := want[[2]string{p, f}]; ok && gotR[id].Applies != w {
				t.Errorf("pattern %q file %q: applies %v, want %v", p, f, gotR[id].Applies, w)
			}
		}
	}
}
