package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"sync"
)

// rule is one detector. match runs at each occurrence of its keywords and
// reads only a bounded window around it.
type rule struct {
	id, desc string
	generic  bool // an assignment rule: yields to a specific one on the same text
	keywords []string
	tokens   []tokenSpec // one per prefix
	match    func(text []byte, start int, e *kwEntry) (hit, bool)
	gl       *glRule // a community rule, run by matchGitleaks; match is nil
	glIx     int
	// order is the place in ruleTable: palace's own rules come first and
	// win a tie with a community rule.
	order int
}

// kwEntry ties one automaton word to its rule (and token spec, if any).
type kwEntry struct {
	rule *rule
	kw   string
	spec *tokenSpec
}

// tokenSpec is a provider token: a case-sensitive prefix and a body of
// [min, max] characters between word boundaries, with an entropy floor so
// placeholders such as ghp_XXXX… do not trip it.
type tokenSpec struct {
	prefix     string
	body       func(byte) bool
	min, max   int
	minEntropy float64
	valid      func(body []byte) bool // an optional final check
}

var (
	ruleTable    []*rule
	keywordRules []kwEntry // indexed like keywords.words
	keywords     *keywordSet
)

// build makes the rule table and the keyword automaton on first use, so a
// command that scans nothing does not pay for them.
var build = sync.OnceFunc(func() {
	ruleTable = []*rule{
		tokenRule("aws-access-key-id", "AWS access key ID",
			tokenSpec{prefix: "AKIA", body: isBase32Upper, min: 16, max: 16, minEntropy: 3},
			tokenSpec{prefix: "ASIA", body: isBase32Upper, min: 16, max: 16, minEntropy: 3},
			tokenSpec{prefix: "ABIA", body: isBase32Upper, min: 16, max: 16, minEntropy: 3},
			tokenSpec{prefix: "ACCA", body: isBase32Upper, min: 16, max: 16, minEntropy: 3},
			tokenSpec{prefix: "A3T", body: isUpperDigit, min: 17, max: 17, minEntropy: 3},
		),
		{
			id:       "aws-secret-access-key",
			desc:     "AWS secret access key",
			generic:  true, // found by the assignment matcher below
			keywords: nil,
		},
		tokenRule("github-token", "GitHub token (personal, OAuth, user-to-server, server-to-server or refresh)",
			ghSpec("ghp_"), ghSpec("gho_"), ghSpec("ghu_"), ghSpec("ghs_"), ghSpec("ghr_"),
		),
		tokenRule("github-fine-grained-pat", "GitHub fine-grained personal access token",
			tokenSpec{prefix: "github_pat_", body: isWord, min: 82, max: 255, minEntropy: 3},
		),
		tokenRule("gitlab-token", "GitLab token (personal, deploy, runner, CI/CD job, trigger, …)",
			glSpec("glpat-"), glSpec("gldt-"), glSpec("glrt-"), glSpec("glcbt-"), glSpec("glft-"),
			glSpec("glimt-"), glSpec("glagent-"), glSpec("gloas-"), glSpec("glffct-"), glSpec("glsoat-"),
			glSpec("glptt-"), glSpec("GR1348941"),
		),
		tokenRule("slack-token", "Slack bot, user, app or legacy token",
			slackSpec("xoxb-"), slackSpec("xoxp-"), slackSpec("xoxa-"), slackSpec("xoxr-"),
			slackSpec("xoxs-"), slackSpec("xoxo-"), slackSpec("xoxe-"), slackSpec("xapp-"),
		),
		{
			id:       "slack-webhook-url",
			desc:     "Slack incoming webhook URL",
			keywords: []string{"hooks.slack.com/"},
			match:    matchSlackWebhook,
		},
		tokenRule("stripe-secret-key", "Stripe secret or restricted API key",
			stripeSpec("sk_live_"), stripeSpec("sk_test_"), stripeSpec("sk_prod_"),
			stripeSpec("rk_live_"), stripeSpec("rk_test_"), stripeSpec("rk_prod_"),
		),
		tokenRule("google-api-key", "Google API key",
			tokenSpec{prefix: "AIza", body: isBase64URL, min: 35, max: 35, minEntropy: 3.5},
		),
		{
			id:       "private-key",
			desc:     "private key block (PEM)",
			keywords: []string{"-----BEGIN"},
			match:    matchPrivateKey,
		},
		{
			id:       "jwt",
			desc:     "JSON Web Token",
			keywords: []string{"eyJ"},
			match:    matchJWT,
		},
		{
			id:       "generic-secret",
			desc:     "high-entropy value assigned to a secret name (password, secret, token, api_key, …)",
			generic:  true,
			keywords: assignKeywords,
			match:    matchAssignment,
		},
	}
	for i := range gitleaksRules {
		g := &gitleaksRules[i]
		g.rule = &rule{id: g.id, desc: g.desc, keywords: g.keywords, gl: g, glIx: i}
		ruleTable = append(ruleTable, g.rule)
	}
	var words []string
	for i, r := range ruleTable {
		r.order = i
		for i := range r.tokens {
			s := &r.tokens[i]
			keywordRules = append(keywordRules, kwEntry{rule: r, kw: s.prefix, spec: s})
			words = append(words, s.prefix)
		}
		for _, kw := range r.keywords {
			keywordRules = append(keywordRules, kwEntry{rule: r, kw: kw})
			words = append(words, kw)
		}
	}
	keywords = newKeywordSet(words)
	awsSecretRule = ruleByID("aws-secret-access-key")
	genericRule = ruleByID("generic-secret")
})

func ruleByID(id string) *rule {
	for _, r := range ruleTable {
		if r.id == id {
			return r
		}
	}
	panic("secrets: no rule " + id)
}

func tokenRule(id, desc string, specs ...tokenSpec) *rule {
	r := &rule{id: id, desc: desc, tokens: specs}
	r.match = func(text []byte, start int, e *kwEntry) (hit, bool) {
		return matchToken(r, text, start, e.spec)
	}
	return r
}

func ghSpec(p string) tokenSpec {
	return tokenSpec{prefix: p, body: isAlnum, min: 36, max: 251, minEntropy: 3}
}

func glSpec(p string) tokenSpec {
	return tokenSpec{prefix: p, body: isTokenChar, min: 20, max: 300, minEntropy: 3}
}

func stripeSpec(p string) tokenSpec {
	return tokenSpec{prefix: p, body: isAlnum, min: 10, max: 247, minEntropy: 3}
}

// slackSpec: a Slack token continues with a numeric team/app id, so
// "xoxb-your-token-here" in documentation does not trip it.
func slackSpec(p string) tokenSpec {
	return tokenSpec{prefix: p, body: isTokenChar, min: 10, max: 255, minEntropy: 2.5,
		valid: func(body []byte) bool {
			return isDigit(body[0]) && bytes.IndexByte(body, '-') > 0
		}}
}

func matchToken(r *rule, text []byte, start int, s *tokenSpec) (hit, bool) {
	if !bytes.HasPrefix(text[start:], []byte(s.prefix)) {
		return hit{}, false // the automaton matched case-insensitively
	}
	if start > 0 && isWord(text[start-1]) {
		return hit{}, false
	}
	i := start + len(s.prefix)
	j := i
	for j < len(text) && j-i <= s.max && s.body(text[j]) {
		j++
	}
	n := j - i
	if n < s.min || n > s.max {
		return hit{}, false
	}
	if j < len(text) && isAlnum(text[j]) {
		return hit{}, false
	}
	body := text[i:j]
	if entropy(body) < s.minEntropy || (s.valid != nil && !s.valid(body)) {
		return hit{}, false
	}
	return hit{rule: r, start: start, end: j}, true
}

// matchPrivateKey finds "-----BEGIN … PRIVATE KEY-----" followed closely by
// key material (40+ base64 characters), so a documentation "..." does not trip it.
func matchPrivateKey(text []byte, start int, e *kwEntry) (hit, bool) {
	const lead = "-----BEGIN"
	if !bytes.HasPrefix(text[start:], []byte(lead)) {
		return hit{}, false
	}
	rest := text[start+len(lead):]
	rest = rest[:min(len(rest), 100)]
	end := bytes.Index(rest, []byte("-----"))
	if end < 0 {
		return hit{}, false
	}
	label := bytes.TrimSpace(rest[:end])
	for _, c := range label {
		if !(isUpper(c) || isDigit(c) || c == ' ' || c == '_' || c == '-') {
			return hit{}, false
		}
	}
	if !bytes.HasSuffix(label, []byte("PRIVATE KEY")) && !bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK")) {
		return hit{}, false
	}
	hdrEnd := start + len(lead) + end + len("-----")
	body := text[hdrEnd:min(len(text), hdrEnd+600)]
	run := 0
	for i, c := range body {
		if isAlnum(c) || c == '+' || c == '/' || c == '=' {
			run++
			if run >= 40 && (i+1 == len(body) || !(isAlnum(body[i+1]) || body[i+1] == '+' || body[i+1] == '/' || body[i+1] == '=')) {
				material := body[i+1-run : i+1]
				return hit{rule: e.rule, start: start, end: hdrEnd + i + 1,
					show: "-----BEGIN " + string(label) + "----- " + Redact(string(material))}, true
			}
			continue
		}
		run = 0
	}
	return hit{}, false
}

// matchJWT finds header.payload[.signature] whose decoded header is JSON
// naming an algorithm or a type, so other "eyJ" base64 does not trip it.
func matchJWT(text []byte, start int, e *kwEntry) (hit, bool) {
	if !bytes.HasPrefix(text[start:], []byte("eyJ")) || (start > 0 && (isWord(text[start-1]) || text[start-1] == '-' || text[start-1] == '.')) {
		return hit{}, false
	}
	seg := func(i, max int) int {
		j := i
		for j < len(text) && j-i < max && isBase64URL(text[j]) {
			j++
		}
		return j
	}
	h := seg(start, 4096)
	if h-start < 10 || h >= len(text) || text[h] != '.' {
		return hit{}, false
	}
	p := seg(h+1, 16384)
	if p-(h+1) < 10 || !bytes.HasPrefix(text[h+1:], []byte("eyJ")) {
		return hit{}, false
	}
	end := p
	if p < len(text) && text[p] == '.' {
		end = seg(p+1, 4096)
	}
	if end < len(text) && (isBase64URL(text[end]) || text[end] == '.') {
		return hit{}, false
	}
	hdr, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimRight(text[start:h], "=")))
	if err != nil || !json.Valid(hdr) || !(bytes.Contains(hdr, []byte(`"alg"`)) || bytes.Contains(hdr, []byte(`"typ"`))) {
		return hit{}, false
	}
	return hit{rule: e.rule, start: start, end: end}, true
}

// matchSlackWebhook finds hooks.slack.com/services|workflows|triggers/<path>.
func matchSlackWebhook(text []byte, start int, e *kwEntry) (hit, bool) {
	const host = "hooks.slack.com/"
	rest := text[start+len(host):]
	var kind string
	for _, k := range []string{"services/", "workflows/", "triggers/"} {
		if bytes.HasPrefix(rest, []byte(k)) {
			kind = k
			break
		}
	}
	if kind == "" {
		return hit{}, false
	}
	i := start + len(host) + len(kind)
	j := i
	for j < len(text) && j-i <= 200 && (isTokenChar(text[j]) || text[j] == '/' || text[j] == '+') {
		j++
	}
	if j-i < 20 || j-i > 200 || entropy(text[i:j]) < 3 {
		return hit{}, false
	}
	return hit{rule: e.rule, start: start, end: j,
		show: host + kind + Redact(string(text[i:j]))}, true
}

func isDigit(c byte) bool       { return '0' <= c && c <= '9' }
func isUpper(c byte) bool       { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool       { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool       { return isUpper(c) || isLower(c) }
func isAlnum(c byte) bool       { return isAlpha(c) || isDigit(c) }
func isWord(c byte) bool        { return isAlnum(c) || c == '_' }
func isTokenChar(c byte) bool   { return isWord(c) || c == '-' }
func isBase64URL(c byte) bool   { return isTokenChar(c) }
func isUpperDigit(c byte) bool  { return isUpper(c) || isDigit(c) }
func isBase32Upper(c byte) bool { return isUpper(c) || ('2' <= c && c <= '7') }
