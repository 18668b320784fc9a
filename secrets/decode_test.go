package secrets_test

import (
	"strings"
	"testing"

	"github.com/palacehq/palace/secrets"
	"github.com/palacehq/palace/secrets/secretstest"
)

// Secrets written with JSON escapes or split by invisible characters are
// found, and the finding spans the secret as written.
func TestScanDecoded(t *testing.T) {
	key := "AKIA" + secretstest.Gen(50, secretstest.Base32, 16)
	esc := `\u0041` + key[1:]
	tests := []struct {
		name, text, rule, span string
	}{
		{"unicode escape", `{"what":"` + esc + `"}`, "aws-access-key-id", esc},
		{"every byte escaped", `{"what":"` + escapeAll(key) + `"}`, "aws-access-key-id", escapeAll(key)},
		{"escaped zero-width space", `{"what":"` + key[:6] + `\u200b` + key[6:] + `"}`, "aws-access-key-id", key[:6] + `\u200b` + key[6:]},
		{"raw zero-width joiner", "note " + key[:3] + "\u200d" + key[3:] + " end", "aws-access-key-id", key[:3] + "\u200d" + key[3:]},
		{"bom and word joiner", "x \ufeff" + key[:10] + "\u2060" + key[10:], "aws-access-key-id", key[:10] + "\u2060" + key[10:]},
		{"bidi controls", "k=\u202e" + ghPAT[:4] + "\u202c" + ghPAT[4:], "github-token", ghPAT[:4] + "\u202c" + ghPAT[4:]},
		{"broken json", `{"what":"` + esc + `, "oops`, "aws-access-key-id", esc},
		{"escaped letter in provider token", `{"k":"` + strings.Replace(googleKey, "A", `\u0041`, 1) + `"}`, "google-api-key", strings.Replace(googleKey, "A", `\u0041`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := secrets.ScanString(tt.text)
			if len(got) != 1 {
				t.Fatalf("Scan(%q) = %+v, want one %s", tt.text, got, tt.rule)
			}
			f := got[0]
			if f.Rule != tt.rule {
				t.Errorf("rule %q, want %q", f.Rule, tt.rule)
			}
			if span := tt.text[f.Offset : f.Offset+f.Length]; span != tt.span {
				t.Errorf("span %q, want %q", span, tt.span)
			}
			if f.Line != 1 || f.Column != f.Offset+1 {
				t.Errorf("location %d:%d for offset %d", f.Line, f.Column, f.Offset)
			}
			if strings.Contains(f.Redacted, key[4:16]) || strings.Contains(f.Redacted, `\u`) {
				t.Errorf("redacted %q leaks or shows the escape", f.Redacted)
			}
		})
	}
}

func TestScanDecodedCleanAndPragma(t *testing.T) {
	key := "AKIA" + secretstest.Gen(51, secretstest.Base32, 16)
	for _, text := range []string{
		`{"what":"\u0041` + key[1:] + `"} palace:allow-secret`,
		`{"what":"caf\u00e9 \n tab\t quote\" \\ \/ \ud83d\ude00 \ud800 \uZZZZ"}`,
		"zero\u200bwidth in prose and a UUID 123e4567-e89b-12d3-a456-426614174000",
		`C:\new\test\path \u`,
	} {
		if got := secrets.ScanString(text); len(got) != 0 {
			t.Errorf("Scan(%q) = %+v, want none", text, got)
		}
	}
}

// Each of the twenty fixture kinds is found by the rule named for it, on
// its own, inside a JSON letter, and with its first byte escaped.
func TestScanFixtures(t *testing.T) {
	fx := secretstest.Fixtures(1)
	if len(fx) != 20 {
		t.Fatalf("%d fixtures, want 20", len(fx))
	}
	for _, f := range fx {
		letter := `{"what":"leak","snippet":"` + f.Text + `"}`
		escaped := `{"what":"leak","snippet":"` + strings.Replace(f.Text, f.Secret[:1], escapeAll(f.Secret[:1]), 1) + `"}`
		for _, text := range []string{f.Text, letter, escaped} {
			got := secrets.ScanString(text)
			if len(got) != 1 || got[0].Rule != f.Rule {
				t.Errorf("%s: Scan(%.120q) = %+v, want one %s", f.Kind, text, got, f.Rule)
			}
		}
	}
}

func escapeAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteString(`\u00`)
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	}
	return b.String()
}
