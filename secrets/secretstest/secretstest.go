// Package secretstest builds fake credentials of twenty kinds for tests. They
// are generated at run time, so the repository holds no literal credential
// for scanners or push protection to trip on.
package secretstest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Fixture is one fake credential as it would appear in a text.
type Fixture struct {
	Kind   string // e.g. "openai"
	Rule   string // the rule expected to find it
	Text   string // one line of context containing Secret
	Secret string
}

// Character sets for Gen.
const (
	Upper     = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	Lower     = "abcdefghijklmnopqrstuvwxyz"
	Digits    = "0123456789"
	Alnum     = Upper + Lower + Digits
	Base32    = Upper + "234567"
	Hex       = Digits + "abcdef"
	Base64    = Alnum + "+/"
	Base64URL = Alnum + "-_"
)

// Gen returns n characters of charset, the same for the same seed.
func Gen(seed uint64, charset string, n int) string {
	r := rand.New(rand.NewPCG(seed, seed*31+7))
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[r.IntN(len(charset))]
	}
	return string(b)
}

// Fixtures returns the twenty kinds; each variant gives other values.
func Fixtures(variant uint64) []Fixture {
	s := variant * 1000
	g := func(k uint64, cs string, n int) string { return Gen(s+k, cs, n) }
	enc := base64.RawURLEncoding
	jwt := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+g(40, Digits, 10)+`","name":"svc"}`)) + "." + g(41, Base64URL, 43)
	pem := "-----BEGIN RSA PRIVATE KEY-----\\n" + g(42, Base64, 64) + "\\n" + g(43, Base64, 64) + "\\n-----END RSA PRIVATE KEY-----"
	openai := "sk-proj-" + g(1, Alnum+"_-", 74) + "T3BlbkFJ" + g(2, Alnum+"_-", 74)
	// Ends stay alphanumeric, inside the rule's word boundaries.
	openai = "sk-proj-" + g(3, Alnum, 1) + openai[9:len(openai)-1] + g(4, Alnum, 1)
	fx := []Fixture{
		{Kind: "openai", Rule: "openai-api-key", Secret: openai},
		{Kind: "anthropic", Rule: "anthropic-api-key", Secret: "sk-ant-api03-" + g(5, Alnum, 93) + "AA"},
		{Kind: "google", Rule: "google-api-key", Secret: "AIza" + g(6, Base64URL, 35)},
		{Kind: "huggingface", Rule: "huggingface-access-token", Secret: "hf_" + g(7, Upper+Lower, 34)},
		{Kind: "perplexity", Rule: "perplexity-api-key", Secret: "pplx-" + g(8, Alnum, 48)},
		{Kind: "npm", Rule: "npm-access-token", Secret: "npm_" + g(9, Lower+Digits, 36)},
		{Kind: "pypi", Rule: "pypi-upload-token", Secret: "pypi-AgEIcHlwaS5vcmc" + g(10, Alnum, 70)},
		{Kind: "twilio", Rule: "twilio-api-key", Secret: "SK" + g(11, Hex, 32)},
		{Kind: "sendgrid", Rule: "sendgrid-api-token", Secret: "SG." + g(12, Alnum, 22) + "." + g(13, Alnum, 43)},
		{Kind: "aws-key-id", Rule: "aws-access-key-id", Secret: "AKIA" + g(14, Base32, 16)},
		{Kind: "aws-secret", Rule: "aws-secret-access-key", Secret: g(15, Base64, 40)},
		{Kind: "github", Rule: "github-token", Secret: "ghp_" + g(16, Alnum, 36)},
		{Kind: "github-fine-grained", Rule: "github-fine-grained-pat", Secret: "github_pat_" + g(17, Alnum, 22) + "_" + g(18, Alnum, 59)},
		{Kind: "gitlab", Rule: "gitlab-token", Secret: "glpat-" + g(19, Alnum, 20)},
		{Kind: "slack", Rule: "slack-token", Secret: "xoxb-" + g(20, Digits, 12) + "-" + g(21, Digits, 13) + "-" + g(22, Alnum, 24)},
		{Kind: "stripe", Rule: "stripe-secret-key", Secret: "sk_live_" + g(23, Alnum, 24)},
		{Kind: "digitalocean", Rule: "digitalocean-pat", Secret: "dop_v1_" + g(24, Hex, 64)},
		{Kind: "private-key", Rule: "private-key", Secret: pem},
		{Kind: "jwt", Rule: "jwt", Secret: jwt},
		{Kind: "password", Rule: "generic-secret", Secret: g(25, Alnum, 12) + "!" + g(26, Alnum, 6)},
	}
	for i := range fx {
		f := &fx[i]
		switch f.Kind {
		case "aws-secret":
			f.Text = "aws_secret_access_key = " + f.Secret
		case "password":
			f.Text = "DB_PASSWORD=" + f.Secret
		case "private-key":
			f.Text = "key file: " + f.Secret
		default:
			f.Text = "export " + strings.ToUpper(strings.ReplaceAll(f.Kind, "-", "_")) + "_TOKEN=" + f.Secret
		}
	}
	return fx
}
