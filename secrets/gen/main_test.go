package main

import "testing"

func TestRequiredLiteral(t *testing.T) {
	for re, want := range map[string]string{
		`\b(dop_v1_[a-f0-9]{64})\b`:      "dop_v1_",
		`(?:ab|cd)xyz[0-9]+tail-longer`:  "tail-longer",
		`(?i)secret[0-9]{4}`:             "SECRET", // keywords match case-insensitively
		`foo|barbaz`:                     "",
		`AGE-SECRET-KEY-1[QPZRY9X8]{58}`: "AGE-SECRET-KEY-1",
	} {
		if got := requiredLiteral(re); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", re, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	r := rule{ID: "x", Regex: `\b(abc_[0-9]{8})\b`}
	if why := check(&r); why != "" || len(r.Keywords) != 1 || r.Keywords[0] != "abc_" {
		t.Errorf("keyword-less rule: %q %v", why, r.Keywords)
	}
	for _, r := range []rule{
		{ID: "generic-api-key", Regex: `x`},
		{ID: "p", Path: `\.p12$`},
		{ID: "b", Regex: `(?<=x)y`, Keywords: []string{"y"}},
		{ID: "n", Regex: `[0-9]{8}`},
	} {
		if why := check(&r); why == "" {
			t.Errorf("rule %s taken", r.ID)
		}
	}
	if usable(allowlist{Condition: "AND", Paths: []string{`x`}, Regexes: []string{`y`}}) || !usable(allowlist{StopWords: []string{"a"}}) {
		t.Error("usable")
	}
}
