package secrets_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/palacehq/palace/secrets"
	"github.com/palacehq/palace/secrets/secretstest"
)

// Test secrets are assembled at run time from a seeded generator so this
// file holds no literal credential for other scanners (or push protection)
// to trip on.

const mixedPW = secretstest.Alnum + "!#%*+"

func jwt(header, payload string, sig bool) string {
	enc := base64.RawURLEncoding
	s := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload))
	if sig {
		s += "." + secretstest.Gen(9, secretstest.Base64URL, 43)
	}
	return s
}

func pemBlock(label, sep string) string {
	lines := []string{"-----BEGIN " + label + "-----"}
	for i := range 4 {
		lines = append(lines, secretstest.Gen(uint64(100+i), secretstest.Base64, 64))
	}
	lines = append(lines, "-----END "+label+"-----")
	return strings.Join(lines, sep)
}

var (
	awsKeyID   = "AKIA" + secretstest.Gen(1, secretstest.Base32, 16)
	awsSecret  = secretstest.Gen(2, secretstest.Base64, 40)
	ghPAT      = "ghp_" + secretstest.Gen(3, secretstest.Alnum, 36)
	ghFine     = "github_pat_" + secretstest.Gen(4, secretstest.Alnum, 22) + "_" + secretstest.Gen(5, secretstest.Alnum, 59)
	glPAT      = "glpat-" + secretstest.Gen(6, secretstest.Alnum+"-_", 20)
	slackBot   = "xoxb-" + secretstest.Gen(7, secretstest.Digits, 12) + "-" + secretstest.Gen(8, secretstest.Digits, 13) + "-" + secretstest.Gen(10, secretstest.Alnum, 24)
	slackHook  = "https://hooks.slack.com/services/T" + secretstest.Gen(11, secretstest.Upper+secretstest.Digits, 8) + "/B" + secretstest.Gen(12, secretstest.Upper+secretstest.Digits, 10) + "/" + secretstest.Gen(13, secretstest.Alnum, 24)
	stripeKey  = "sk_live_" + secretstest.Gen(14, secretstest.Alnum, 24)
	googleKey  = "AIza" + secretstest.Gen(15, secretstest.Base64URL, 35)
	jwtToken   = jwt(`{"alg":"HS256","typ":"JWT"}`, `{"sub":"1234567890","name":"agent"}`, true)
	genericPW  = secretstest.Gen(16, mixedPW, 18)
	genericKey = secretstest.Gen(17, secretstest.Alnum, 32)
)

func TestScanTruePositives(t *testing.T) {
	tests := []struct {
		name, text, rule string
		// secret is the exact text the finding must span.
		secret string
	}{
		{"aws key id in env", "AWS_ACCESS_KEY_ID=" + awsKeyID, "aws-access-key-id", awsKeyID},
		{"aws docs example key id", `"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE"`, "aws-access-key-id", "AKIAIOSFODNN7EXAMPLE"},
		{"aws session key id", "key ASIA" + secretstest.Gen(18, secretstest.Base32, 16) + " expired", "aws-access-key-id", "ASIA" + secretstest.Gen(18, secretstest.Base32, 16)},
		{"aws secret in env", "AWS_SECRET_ACCESS_KEY=" + awsSecret, "aws-secret-access-key", awsSecret},
		{"aws secret in json", `{"SecretAccessKey": "` + awsSecret + `"}`, "aws-secret-access-key", awsSecret},
		{"aws secret in ini", "aws_secret_access_key = " + awsSecret, "aws-secret-access-key", awsSecret},
		{"github pat", "token " + ghPAT + " leaked", "github-token", ghPAT},
		{"github oauth", "gho_" + secretstest.Gen(19, secretstest.Alnum, 36), "github-token", "gho_" + secretstest.Gen(19, secretstest.Alnum, 36)},
		{"github app", "Authorization: Bearer ghs_" + secretstest.Gen(20, secretstest.Alnum, 36), "github-token", "ghs_" + secretstest.Gen(20, secretstest.Alnum, 36)},
		{"github fine-grained", "GH=" + ghFine, "github-fine-grained-pat", ghFine},
		{"gitlab pat", "remote https://oauth2:" + glPAT + "@gitlab.com/x.git", "gitlab-token", glPAT},
		{"gitlab runner", "glrt-" + secretstest.Gen(21, secretstest.Alnum, 20), "gitlab-token", "glrt-" + secretstest.Gen(21, secretstest.Alnum, 20)},
		{"slack bot token", "SLACK=" + slackBot, "slack-token", slackBot},
		{"slack app token", "xapp-1-A" + secretstest.Gen(22, secretstest.Upper+secretstest.Digits, 10) + "-" + secretstest.Gen(23, secretstest.Digits, 13) + "-" + secretstest.Gen(24, secretstest.Hex, 64), "slack-token", "xapp-1-A" + secretstest.Gen(22, secretstest.Upper+secretstest.Digits, 10) + "-" + secretstest.Gen(23, secretstest.Digits, 13) + "-" + secretstest.Gen(24, secretstest.Hex, 64)},
		{"slack webhook", "post to " + slackHook, "slack-webhook-url", strings.TrimPrefix(slackHook, "https://")},
		{"stripe live", "stripe.api_key = '" + stripeKey + "'", "stripe-secret-key", stripeKey},
		{"stripe restricted test", "rk_test_" + secretstest.Gen(25, secretstest.Alnum, 30), "stripe-secret-key", "rk_test_" + secretstest.Gen(25, secretstest.Alnum, 30)},
		{"google api key", "https://maps.googleapis.com/maps/api/js?key=" + googleKey, "google-api-key", googleKey},
		{"private key, real newlines", "cfg:\n" + pemBlock("RSA PRIVATE KEY", "\n"), "private-key", pemBlock("RSA PRIVATE KEY", "\n")[:len("-----BEGIN RSA PRIVATE KEY-----\n")+64]},
		{"private key, json escaped", `{"snippet":"` + pemBlock("OPENSSH PRIVATE KEY", `\n`) + `"}`, "private-key", pemBlock("OPENSSH PRIVATE KEY", `\n`)[:len(`-----BEGIN OPENSSH PRIVATE KEY-----\n`)+64]},
		{"pgp private key block", pemBlock("PGP PRIVATE KEY BLOCK", "\n"), "private-key", pemBlock("PGP PRIVATE KEY BLOCK", "\n")[:len("-----BEGIN PGP PRIVATE KEY BLOCK-----\n")+64]},
		{"jwt", "Cookie: session=" + jwtToken, "jwt", jwtToken},
		{"jwt assigned to token prefers jwt", "token = " + jwtToken, "jwt", jwtToken},
		{"generic password", `password = "` + genericPW + `"`, "generic-secret", genericPW},
		{"generic env", "DB_PASSWORD=" + genericPW, "generic-secret", genericPW},
		{"generic yaml api_key", "api_key: " + genericKey, "generic-secret", genericKey},
		{"generic camel", `const clientSecret = "` + genericKey + `";`, "generic-secret", genericKey},
		{"generic json", `{"client_secret":"` + genericKey + `"}`, "generic-secret", genericKey},
		{"generic json in json string", `{"snippet":"{\"token\": \"` + genericKey + `\"}"}`, "generic-secret", genericKey},
		{"generic after escaped newline", `{"what":"line1\npassword=` + genericPW + `"}`, "generic-secret", genericPW},
		{"generic query string", "GET /hook?token=" + genericKey + "&x=1", "generic-secret", genericKey},
		{"generic go assign", "apiKey := \"" + genericKey + "\"", "generic-secret", genericKey},
		{"generic x-api-key header", "x-api-key: " + genericKey, "generic-secret", genericKey},
		{"generic hex secret", `"secret": "` + secretstest.Gen(26, secretstest.Hex, 40) + `"`, "generic-secret", secretstest.Gen(26, secretstest.Hex, 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := secrets.ScanString(tt.text)
			if len(got) != 1 {
				t.Fatalf("Scan(%q) = %d findings %+v, want 1 (%s)", tt.text, len(got), got, tt.rule)
			}
			f := got[0]
			if f.Rule != tt.rule {
				t.Errorf("rule = %q, want %q", f.Rule, tt.rule)
			}
			if span := tt.text[f.Offset : f.Offset+f.Length]; span != tt.secret {
				t.Errorf("span = %q, want %q", span, tt.secret)
			}
			if strings.Contains(f.Redacted, tt.secret) || (len(tt.secret) > 12 && strings.Contains(f.Redacted, tt.secret[4:len(tt.secret)-4])) {
				t.Errorf("redacted %q leaks the secret", f.Redacted)
			}
			if f.Description == "" {
				t.Error("empty description")
			}
		})
	}
}

func TestScanFalsePositives(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), []byte(secretstest.Gen(30, secretstest.Alnum+"\x00\x01\xff\xfe", 6000))...)
	dataURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	sha1 := secretstest.Gen(31, secretstest.Hex, 40)
	sha256 := secretstest.Gen(32, secretstest.Hex, 64)
	uuid := "123e4567-e89b-12d3-a456-426614174000"
	tests := []struct{ name, text string }{
		{"uuid", "request id " + uuid},
		{"uuid as api key", "api_key: " + uuid},
		{"uuid credentials id", "credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac'"},
		{"git sha in prose", "fixed in commit " + sha1 + " on main"},
		{"git sha field", `{"sha":"` + sha1 + `","ref":"refs/heads/main"}`},
		{"short sha", "see " + sha1[:7]},
		{"sha256 sum", sha256 + "  palace-linux-amd64.tar.gz"},
		{"sha256 field", "sha256: " + sha256},
		{"token sha256", "token_sha256 = " + sha256},
		{"key fingerprint", "key_fingerprint: SHA256:" + secretstest.Gen(33, secretstest.Base64, 43)},
		{"png data uri", `{"what":"screenshot","snippet":"` + dataURI + `"}`},
		{"png data uri as image", "avatar = " + dataURI},
		{"prose", "Rotate the token before the secret key expires; the password policy requires 12 characters."},
		{"prose with colon", "secret: the build broke because the token cache was stale"},
		{"empty password", `password = ""`},
		{"redacted token", "token: <redacted>"},
		{"stars", "password: ********"},
		{"env var names", "export GITHUB_TOKEN=\nexport API_KEY="},
		{"env reference", "API_KEY=${API_KEY} TOKEN=$GITHUB_TOKEN"},
		{"env lookup", "password: process.env.DB_PASSWORD"},
		{"function call", "token = getToken(ctx)"},
		{"placeholder", "api_key = 'your-api-key-here-1234'"},
		{"changeme", "POSTGRES_PASSWORD=changeme123"},
		{"github placeholder", "ghp_" + strings.Repeat("X", 36)},
		{"github too short", "ghp_" + secretstest.Gen(34, secretstest.Alnum, 20)},
		{"github inside word", "xghp_" + secretstest.Gen(35, secretstest.Alnum, 36)},
		{"slack docs placeholder", "xoxb-your-token-here-please"},
		{"stripe publishable", "pk_live_" + secretstest.Gen(36, secretstest.Alnum, 24)},
		{"aws low entropy", "AKIA" + strings.Repeat("A", 16)},
		{"aws key too long", "AKIA" + secretstest.Gen(37, secretstest.Base32, 20)},
		{"google key wrong length", "AIza" + secretstest.Gen(38, secretstest.Base64URL, 20)},
		{"public key", "-----BEGIN PUBLIC KEY-----\n" + secretstest.Gen(39, secretstest.Base64, 64) + "\n-----END PUBLIC KEY-----"},
		{"private key placeholder", "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----"},
		{"jwt-like without json header", "ey" + "J" + secretstest.Gen(40, secretstest.Alnum, 20) + ".eyJ" + secretstest.Gen(41, secretstest.Alnum, 20) + "." + secretstest.Gen(42, secretstest.Alnum, 20)},
		{"version", "token_version: 1.2.3-beta.4"},
		{"length", "password_length = 12345678"},
		{"tokenizer", "tokenizer: bpe-v2-2024-large"},
		{"url", "token_url: https://gitlab.example.com/oauth/token"},
		{"token endpoint value url", "token: https://auth.example.com/o/oauth2/v2/token"},
		{"word value", "secret: supercalifragilistic"},
		{"number", "pwd = 1234567890123"},
		{"keyboard", "keyboard = us-intl-2"},
		{"pragma exempts its line", "api_key = " + genericKey + " # palace:allow-secret"},
		{"pragma exempts token", awsKeyID + " palace:allow-secret (test fixture)"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := secrets.ScanString(tt.text); len(got) != 0 {
				t.Errorf("Scan(%.80q) = %+v, want none", tt.text, got)
			}
		})
	}
}

func TestScanLocation(t *testing.T) {
	text := "line one\n" +
		"two: " + awsKeyID + " palace:allow-secret\n" +
		"\t\tkey=" + awsKeyID + "\r\n" +
		"héllo " + ghPAT + "\n"
	got := secrets.ScanString(text)
	type loc struct {
		rule         string
		line, column int
	}
	want := []loc{{"aws-access-key-id", 3, 7}, {"github-token", 4, 8}}
	if len(got) != len(want) {
		t.Fatalf("got %d findings %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if (loc{g.Rule, g.Line, g.Column}) != w {
			t.Errorf("finding %d = %s %d:%d, want %s %d:%d", i, g.Rule, g.Line, g.Column, w.rule, w.line, w.column)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"AKIAIOSFODNN7EXAMPLE", "AKIA************MPLE"},
		{"abcd", "****"},
		{"abcdefgh", "a******h"},
		{"0123456789", "01******89"},
		{strings.Repeat("z", 200), "zzzz****************zzzz"},
		{"", ""},
		{"pässwörd-1234", "pä*********34"},
	}
	for _, tt := range tests {
		if got := secrets.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRulesHaveStableUniqueIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range secrets.Rules() {
		if r.ID == "" || r.Description == "" || seen[r.ID] {
			t.Errorf("bad rule %+v", r)
		}
		seen[r.ID] = true
	}
	for _, id := range []string{"aws-access-key-id", "aws-secret-access-key", "github-token",
		"github-fine-grained-pat", "gitlab-token", "slack-token", "slack-webhook-url",
		"stripe-secret-key", "google-api-key", "private-key", "jwt", "generic-secret"} {
		if !seen[id] {
			t.Errorf("rule %q missing", id)
		}
	}
}

// Adversarial inputs: every byte a keyword start. They must finish (the
// windows are bounded) — a quadratic scan would time the test out.
func TestScanPathological(t *testing.T) {
	for _, unit := range []string{"AKIA", "eyJ", "key=", "password:", "-----BEGIN ", "ghp_", "xoxb-1", "hooks.slack.com/services/"} {
		text := bytes.Repeat([]byte(unit), (2<<20)/len(unit))
		secrets.Scan(text)
	}
	// One 10 MB line full of keys: findings must still locate linearly.
	line := bytes.Repeat([]byte(" "+awsKeyID), (10<<20)/(len(awsKeyID)+1))
	got := secrets.Scan(line)
	if len(got) != (10<<20)/(len(awsKeyID)+1) || got[len(got)-1].Line != 1 {
		t.Fatalf("got %d findings, last on line %d", len(got), got[len(got)-1].Line)
	}
}

func FuzzScan(f *testing.F) {
	f.Add([]byte("AWS_SECRET_ACCESS_KEY=" + awsSecret + "\n" + jwtToken))
	f.Add([]byte(pemBlock("EC PRIVATE KEY", "\r\n")))
	f.Add([]byte(`{"what":"x","snippet":"password=\"` + genericPW + `\""}`))
	f.Add([]byte("\xff\xfe" + ghPAT + "\x00" + slackHook))
	f.Add([]byte(`{"what":"\u0041` + awsKeyID[1:] + `\u200b\ud83d\ude00\n","x":"\u00e9` + ghPAT + `"}` + "\n\u200d" + googleKey))
	f.Fuzz(func(t *testing.T, text []byte) {
		prev := -1
		for _, f := range secrets.Scan(text) {
			if f.Offset < 0 || f.Length <= 0 || f.Offset+f.Length > len(text) || f.Offset < prev {
				t.Fatalf("bad span %+v for len %d", f, len(text))
			}
			prev = f.Offset
			wantLine := bytes.Count(text[:f.Offset], []byte{'\n'}) + 1
			wantCol := f.Offset - (bytes.LastIndexByte(text[:f.Offset], '\n') + 1) + 1
			if f.Line != wantLine || f.Column != wantCol {
				t.Fatalf("finding at %d: %d:%d, want %d:%d", f.Offset, f.Line, f.Column, wantLine, wantCol)
			}
		}
	})
}
