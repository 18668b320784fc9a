// Command gen writes palace's community secret rules (../gitleaks_rules.go)
// from gitleaks' default configuration at a pinned version.
//
//	go generate ./secrets   (runs: go run -C gen . -out ../gitleaks_rules.go)
//
// It fetches the gitleaks module through the Go module proxy (`go mod
// download`), reads config/gitleaks.toml and writes every rule palace can run:
// id, description, regex, keywords, entropy, secret group and the allowlists
// that apply without file paths or commits. Rules are left out, each with a
// reason printed and written into the generated file, when palace has its own
// rule for the same thing, when they match file paths only, or when their
// regex does not compile in Go.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

const (
	module  = "github.com/zricethezav/gitleaks/v8"
	version = "v8.30.1"
)

// skip lists gitleaks rules palace does not take, and why. Rules whose id
// palace already uses would collide; the generic rule is replaced by palace's
// generic-secret, which reads the assigned name word by word and is tuned
// against hashes, UUIDs, data URIs and placeholders.
var skip = map[string]string{
	"generic-api-key":         "palace's generic-secret covers assignments with fewer false positives",
	"jwt":                     "palace's jwt rule decodes the header",
	"private-key":             "palace's private-key rule also reads JSON-escaped PEM blocks",
	"slack-webhook-url":       "palace's slack-webhook-url rule",
	"github-fine-grained-pat": "palace's github-fine-grained-pat rule",
	// Same tokens as one of palace's provider rules, which also require a
	// word boundary before the prefix.
	"aws-access-token":                   "palace's aws-access-key-id rule",
	"github-pat":                         "palace's github-token rule",
	"github-oauth":                       "palace's github-token rule",
	"github-app-token":                   "palace's github-token rule",
	"github-refresh-token":               "palace's github-token rule",
	"gitlab-pat":                         "palace's gitlab-token rule",
	"gitlab-deploy-token":                "palace's gitlab-token rule",
	"gitlab-runner-authentication-token": "palace's gitlab-token rule",
	"gitlab-cicd-job-token":              "palace's gitlab-token rule",
	"stripe-access-token":                "palace's stripe-secret-key rule",
	"gcp-api-key":                        "palace's google-api-key rule",
}

type config struct {
	Allowlist allowlist `toml:"allowlist"`
	Rules     []rule    `toml:"rules"`
}

type rule struct {
	ID          string      `toml:"id"`
	Description string      `toml:"description"`
	Regex       string      `toml:"regex"`
	Path        string      `toml:"path"`
	SecretGroup int         `toml:"secretGroup"`
	Entropy     float64     `toml:"entropy"`
	Keywords    []string    `toml:"keywords"`
	Allowlists  []allowlist `toml:"allowlists"`
}

type allowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

func main() {
	out := flag.String("out", "../gitleaks_rules.go", "generated Go file")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := moduleDir()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "config", "gitleaks.toml")
	var cfg config
	if _, err := toml.DecodeFile(path, &cfg); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, header, module, version)
	b.WriteString("var gitleaksAllow = ")
	writeAllow(&b, cfg.Allowlist)
	b.WriteString("\n\nvar gitleaksRules = []glRule{\n")
	var skipped []string
	kept := 0
	for _, r := range cfg.Rules {
		reason := check(&r)
		if reason != "" {
			skipped = append(skipped, r.ID+": "+reason)
			continue
		}
		kept++
		fmt.Fprintf(&b, "{id: %q, desc: %q, regex: %s, keywords: %#v, entropy: %v, secretGroup: %d",
			r.ID, r.Description, rawString(r.Regex), r.Keywords, r.Entropy, r.SecretGroup)
		var als []allowlist
		for _, a := range r.Allowlists {
			if usable(a) {
				als = append(als, a)
			}
		}
		if len(als) > 0 {
			b.WriteString(", allow: []glAllow{")
			for _, a := range als {
				writeAllow(&b, a)
				b.WriteString(", ")
			}
			b.WriteString("}")
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// Rules of the configuration palace does not run:\n")
	sort.Strings(skipped)
	for _, s := range skipped {
		fmt.Fprintf(&b, "//   - %s\n", s)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format generated code: %w", err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %d rules written to %s, %d left out:\n  %s\n", kept, out, len(skipped), strings.Join(skipped, "\n  "))
	return nil
}

// moduleDir asks the go command for the pinned gitleaks module's directory,
// downloading it through the module proxy when needed.
func moduleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(outb, &info); err != nil {
		return "", fmt.Errorf("go mod download output: %w", err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	return info.Dir, nil
}

// check returns why palace cannot take r, or "" and fills in keywords for a
// rule that has none (the keyword prefilter is what keeps scanning fast).
func check(r *rule) string {
	if why, ok := skip[r.ID]; ok {
		return why
	}
	if r.Regex == "" {
		return "matches file paths only"
	}
	if r.Path != "" {
		return "applies to some file paths only"
	}
	if _, err := regexp.Compile(r.Regex); err != nil {
		return "regex does not compile in Go: " + err.Error()
	}
	for i, k := range r.Keywords {
		r.Keywords[i] = strings.ToLower(k)
	}
	if len(r.Keywords) == 0 {
		lit := requiredLiteral(r.Regex)
		if len(lit) < 3 {
			return "no keywords and no literal of 3 or more bytes every match contains"
		}
		r.Keywords = []string{strings.ToLower(lit)}
	}
	return ""
}

// requiredLiteral returns the longest literal every match of re contains,
// found in the top-level concatenation of the parsed regex.
func requiredLiteral(re string) string {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return ""
	}
	t = t.Simplify()
	best := ""
	var walk func(*syntax.Regexp)
	walk = func(n *syntax.Regexp) {
		switch n.Op {
		case syntax.OpLiteral:
			if s := string(n.Rune); len(s) > len(best) {
				best = s
			}
		case syntax.OpConcat, syntax.OpCapture:
			for _, s := range n.Sub {
				walk(s)
			}
		}
	}
	walk(t)
	return best
}

// usable reports whether an allowlist can apply to text without a file
// path or commit: an OR list applies through its regexes and stopwords, an
// AND list only when it has no path or commit condition.
func usable(a allowlist) bool {
	if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return false
	}
	if strings.EqualFold(a.Condition, "AND") && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		return false
	}
	for _, re := range a.Regexes {
		if _, err := regexp.Compile(re); err != nil {
			return false
		}
	}
	return true
}

func writeAllow(b *bytes.Buffer, a allowlist) {
	b.WriteString("glAllow{")
	if strings.EqualFold(a.Condition, "AND") {
		b.WriteString("and: true, ")
	}
	if a.RegexTarget != "" {
		fmt.Fprintf(b, "target: %q, ", a.RegexTarget)
	}
	if len(a.Regexes) > 0 {
		b.WriteString("regexes: []string{")
		for _, re := range a.Regexes {
			b.WriteString(rawString(re) + ", ")
		}
		b.WriteString("}, ")
	}
	if len(a.StopWords) > 0 {
		sw := make([]string, len(a.StopWords))
		for i, w := range a.StopWords {
			sw[i] = strings.ToLower(w)
		}
		fmt.Fprintf(b, "stopwords: %#v, ", sw)
	}
	b.WriteString("}")
}

// rawString quotes s as a raw string literal when it can (regexes read
// better without doubled backslashes).
func rawString(s string) string {
	if !strings.Contains(s, "`") && !strings.Contains(s, "\r") {
		return "`" + s + "`"
	}
	return fmt.Sprintf("%q", s)
}

const header = `// Code generated by secrets/gen; DO NOT EDIT.

// The rules below are derived from the default configuration of gitleaks
// (%s %s, config/gitleaks.toml),
// Copyright (c) 2019 Zachary Rice, used under the MIT License; see
// secrets/NOTICE for the licence text. Regenerate with
// ` + "`go generate ./secrets`" + `.

package secrets

`
