package secrets

import (
	"bytes"
	"strings"
)

// The assignment rules find `NAME <op> VALUE` where NAME says it holds a
// secret and VALUE looks random, written by hand: the shapes to accept and
// the reasons to reject are clearer as code than as one regexp.

// assignKeywords trigger the matcher and must sit inside the NAME.
var assignKeywords = []string{"pass", "pwd", "secret", "token", "cred", "key"}

const (
	maxName  = 64
	maxValue = 256
	minValue = 8 // shorter is too weak a signal to refuse a letter on
	// minEntropy (bits per byte) separates random values from words and
	// versions; an 8-byte value reaches at most 3.
	minEntropy       = 3.0
	awsSecretEntropy = 4.0 // a real AWS secret scores above 4.5
)

// Set by build, which owns the order of initialisation.
var (
	awsSecretRule *rule
	genericRule   *rule
)

func matchAssignment(text []byte, start int, e *kwEntry) (hit, bool) {
	// NAME: the identifier around the keyword.
	s := start
	for s > 0 && start-s < maxName && isIdent(text[s-1]) {
		s--
	}
	// In JSON-in-a-string "\npassword=…" the n of \n is not part of the name.
	if s > 0 && s < start && text[s-1] == '\\' {
		s++
	}
	n := start + len(e.kw)
	for n < len(text) && n-start < maxName && isIdent(text[n]) {
		n++
	}
	i, ok := skipOperator(text, n)
	if !ok {
		return hit{}, false
	}
	j := i
	for j < len(text) && j-i <= maxValue && !isValueEnd(text[j]) {
		j++
	}
	if j-i > maxValue {
		return hit{}, false // a blob (data URI, bundle), not a credential
	}
	for j > i && text[j-1] == '.' {
		j-- // end of a sentence
	}
	value := text[i:j]
	if len(value) < minValue {
		return hit{}, false
	}
	words := nameWords(text[s:n])
	if !secretName(words) {
		return hit{}, false
	}
	if awsSecretName(words) && len(value) == 40 && allBytes(value, isAWSSecretChar) && entropy(value) >= awsSecretEntropy {
		return hit{rule: awsSecretRule, start: i, end: j}, true
	}
	if !plausibleSecret(value) {
		return hit{}, false
	}
	return hit{rule: genericRule, start: i, end: j}, true
}

// skipOperator skips, after a name, an optional quote (also \"), up to three
// blanks, one of := => == = :, blanks and a quote, returning where the value starts.
func skipOperator(text []byte, i int) (int, bool) {
	skipQuote := func() {
		if i+1 < len(text) && text[i] == '\\' && text[i+1] == '"' {
			i += 2
		} else if i < len(text) && (text[i] == '"' || text[i] == '\'' || text[i] == '`') {
			i++
		}
	}
	skipBlanks := func() {
		for k := 0; k < 3 && i < len(text) && (text[i] == ' ' || text[i] == '\t'); k++ {
			i++
		}
	}
	skipQuote()
	skipBlanks()
	switch {
	case i+1 < len(text) && (text[i] == ':' || text[i] == '=') && (text[i+1] == '=' || text[i+1] == '>'):
		i += 2
	case i < len(text) && text[i] == '=':
		i++
	case i < len(text) && text[i] == ':':
		if i+2 < len(text) && text[i+1] == '/' && text[i+2] == '/' {
			return 0, false // scheme://, not an assignment
		}
		i++
	default:
		return 0, false
	}
	skipBlanks()
	skipQuote()
	return i, true
}

// nameWords splits an identifier into lowercase words: "APIKey" → api key.
func nameWords(name []byte) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for k, c := range name {
		if !isAlnum(c) {
			flush()
			continue
		}
		if len(cur) > 0 && isUpper(c) {
			prev := cur[len(cur)-1]
			nextLower := k+1 < len(name) && isLower(name[k+1])
			if isLower(prev) || isDigit(prev) || (isUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return words
}

var (
	secretWords = set("password", "passwords", "passwd", "pwd", "pass", "passphrase",
		"secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "cred",
		"apikey", "apikeys", "privatekey", "secretkey", "accesskey", "authkey", "secretaccesskey")
	// keyQualifiers make "key" a secret: api_key, signing-key, masterKey.
	keyQualifiers = set("api", "access", "private", "secret", "signing", "encryption",
		"master", "auth", "client", "account", "service", "app", "shared", "hmac", "license")
	// notSecretWords describe something about a secret rather than the
	// secret: token_sha256, password_length, api_key_id, secret_name.
	notSecretWords = set("hash", "hashed", "sha", "sha1", "sha256", "sha512", "md5", "digest",
		"checksum", "fingerprint", "id", "ids", "uuid", "name", "names", "length", "len", "size",
		"type", "kind", "url", "uri", "endpoint", "host", "path", "file", "dir", "count", "limit",
		"ttl", "expiry", "expires", "expiration", "expire", "prefix", "suffix", "format",
		"version", "header", "field", "policy", "public", "pub", "csrf", "env", "var", "hint",
		"label", "timeout", "regex", "pattern", "index", "idx", "enabled", "required", "min", "max")
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func secretName(words []string) bool {
	found := false
	for k, w := range words {
		w = strings.TrimRight(w, "0123456789")
		if notSecretWords[w] {
			return false
		}
		if secretWords[w] {
			found = true
		}
		if (w == "key" || w == "keys") && k > 0 && keyQualifiers[words[k-1]] {
			found = true
		}
	}
	return found
}

func awsSecretName(words []string) bool {
	has := map[string]bool{}
	for _, w := range words {
		has[w] = true
	}
	return (has["aws"] && has["secret"]) || (has["secret"] && has["access"] && has["key"]) || has["secretaccesskey"]
}

var placeholders = []string{"redacted", "example", "placeholder", "changeme", "change_me",
	"your_", "your-", "xxxx", "****", "dummy", "sample", "<", "..."}

// plausibleSecret rejects values that are references, words, numbers, ids
// or placeholders, and keeps what looks random.
func plausibleSecret(v []byte) bool {
	switch v[0] {
	case '$', '%', '/', '~':
		return false // ${VAR}, %s, paths
	}
	if bytes.HasPrefix(v, []byte("./")) || bytes.Contains(v, []byte("://")) {
		return false
	}
	letters, other := 0, 0
	for _, c := range v {
		switch {
		case isAlpha(c):
			letters++
		case c == '_' || c == '.' || c == '-':
		default:
			other++
		}
	}
	if letters == 0 || other == 0 {
		return false // identifiers, ENV_VAR_NAMES, dotted.words; plain numbers
	}
	if isUUID(v) {
		return false
	}
	lower := strings.ToLower(string(v))
	for _, p := range placeholders {
		if strings.Contains(lower, p) {
			return false
		}
	}
	return entropy(v) >= minEntropy
}

func isUUID(v []byte) bool {
	if len(v) != 36 {
		return false
	}
	for k, c := range v {
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') }

func isIdent(c byte) bool { return isWord(c) || c == '-' || c == '.' }

func isAWSSecretChar(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', '\\', ',', ';', '&', '(', ')', '<', '>', '{', '}', '[', ']', '|':
		return true
	}
	return false
}

func allBytes(v []byte, f func(byte) bool) bool {
	for _, c := range v {
		if !f(c) {
			return false
		}
	}
	return true
}
