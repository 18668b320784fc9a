// Package cardfile owns the text form of a card that travels with git: one
// Markdown file per card under <repo>/.palace/cards/, its governed fields,
// citations and cited evidence in YAML front matter, its content the body.
//
// Encode is deterministic (an unchanged card gives the same bytes); Decode
// reports every problem as a Finding with a line. It knows nothing of the
// database, policies or git: whether a card may hold its status is the
// gate's question, asked by the host.
package cardfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/palacehq/palace/domain"
	"go.yaml.in/yaml/v3"
)

// Dir is where card files live, relative to a repository's top level.
const Dir = ".palace/cards"

// Ext is a card file's extension; the file name is the card id plus Ext.
const Ext = ".md"

// MaxFileBytes bounds one card file: a larger one is a pasted log or a
// binary, not a card.
const MaxFileBytes = 4 << 20

// MaxStatementChars bounds a statement, as the palace does.
const MaxStatementChars = 280

// The vocabularies a card file may use: the domain's, as plain strings.
var (
	Tiers        = domain.Strings(domain.Tiers)
	Statuses     = domain.Strings(domain.Statuses)
	Domains      = domain.Strings(domain.Domains)
	Provenances  = domain.Strings(domain.Provenances)
	Roles        = domain.Strings(domain.Roles)
	Persistences = domain.Strings(domain.Persistences)
	RenderPrefs  = domain.Strings(domain.RenderPrefs)
	ActorTypes   = domain.Strings(domain.ActorTypes)
)

// Card is one card file. Field order is the file's key order.
type Card struct {
	ID          string   `yaml:"id"`
	Statement   string   `yaml:"statement"`
	Tier        string   `yaml:"tier"`
	Status      string   `yaml:"status"`
	Domain      string   `yaml:"domain"`
	Field       string   `yaml:"field"`
	Scope       Scope    `yaml:"scope"`
	Triggers    Triggers `yaml:"triggers"`
	Persistence string   `yaml:"persistence"`
	RenderPref  string   `yaml:"render_pref"`
	ReviewAfter string   `yaml:"review_after,omitempty"`
	ExpiresAt   string   `yaml:"expires_at,omitempty"`
	OriginCard  string   `yaml:"origin_card,omitempty"`
	CreatedBy   string   `yaml:"created_by"`
	CreatedAt   string   `yaml:"created_at"`
	// LastEvent says who let the card have its status, under which policy.
	LastEvent *Event     `yaml:"last_event,omitempty"`
	Citations []Citation `yaml:"citations"`
	// Evidence holds everything a citation names, so a clone has what the gate needs.
	Evidence []Evidence `yaml:"evidence"`
	// Content is the body, or front matter when the body cannot hold it
	// exactly (a carriage return, a trailing newline).
	Content string `yaml:"content,omitempty"`
}

// Scope limits where a card applies; empty lists mean anywhere.
type Scope struct {
	Paths     []string `yaml:"paths,flow"`
	Languages []string `yaml:"languages,flow"`
	Fields    []string `yaml:"fields,flow"`
}

// Triggers say what wakes a card up.
type Triggers struct {
	Patterns  []string `yaml:"patterns,flow"`
	Intents   []string `yaml:"intents,flow"`
	ToolNeeds []string `yaml:"tool_needs,flow"`
}

// Event is the last lifecycle event of a card.
type Event struct {
	Type       string   `yaml:"type" json:"type"`
	At         string   `yaml:"at" json:"at"`
	Actor      string   `yaml:"actor" json:"actor"`
	Reviewer   Reviewer `yaml:"reviewer" json:"reviewer"`
	PolicyHash string   `yaml:"policy_hash,omitempty" json:"policy_hash,omitempty"`
}

// Reviewer is who reviewed a lifecycle change.
type Reviewer struct {
	Name string `yaml:"name" json:"name"`
	Type string `yaml:"type" json:"type"`
}

// Citation links the card to one piece of evidence in a role.
type Citation struct {
	Evidence  string `yaml:"evidence"`
	Role      string `yaml:"role"`
	SourceRef string `yaml:"source_ref"`
	SHA256    string `yaml:"sha256"`
	Note      string `yaml:"note,omitempty"`
}

// Evidence is one cited piece of evidence, content included.
type Evidence struct {
	ID         string   `yaml:"id"`
	SHA256     string   `yaml:"sha256"`
	Domain     string   `yaml:"domain"`
	Field      string   `yaml:"field"`
	Provenance string   `yaml:"provenance"`
	SourceRef  string   `yaml:"source_ref"`
	Tags       []string `yaml:"tags,flow"`
	Actor      string   `yaml:"actor"`
	ActorType  string   `yaml:"actor_type"`
	CreatedAt  string   `yaml:"created_at"`
	// Redacted: Content is the notice that replaced leaked text; SHA256 is the original's.
	Redacted bool   `yaml:"redacted,omitempty"`
	Content  string `yaml:"content"`
}

// FileName is the name of card id's file inside Dir.
func FileName(id string) string { return id + Ext }

// ContentSHA256 is the hex sha256 a citation and an evidence entry carry.
func ContentSHA256(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

func roleRank(r string) int {
	if i := slices.Index(Roles, r); i >= 0 {
		return i
	}
	return len(Roles)
}

// Normalize puts c's lists in file order (citations by role then evidence,
// evidence by id) and turns nil lists into empty ones, so two equal cards
// encode the same.
func Normalize(c Card) Card {
	c.Citations = slices.Clone(c.Citations)
	slices.SortStableFunc(c.Citations, func(a, b Citation) int {
		if d := roleRank(a.Role) - roleRank(b.Role); d != 0 {
			return d
		}
		return strings.Compare(a.Evidence, b.Evidence)
	})
	c.Evidence = slices.Clone(c.Evidence)
	slices.SortStableFunc(c.Evidence, func(a, b Evidence) int { return strings.Compare(a.ID, b.ID) })
	for i := range c.Evidence {
		c.Evidence[i].Tags = nonNil(c.Evidence[i].Tags)
	}
	if c.Citations == nil {
		c.Citations = []Citation{}
	}
	if c.Evidence == nil {
		c.Evidence = []Evidence{}
	}
	c.Scope = Scope{nonNil(c.Scope.Paths), nonNil(c.Scope.Languages), nonNil(c.Scope.Fields)}
	c.Triggers = Triggers{nonNil(c.Triggers.Patterns), nonNil(c.Triggers.Intents), nonNil(c.Triggers.ToolNeeds)}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// bodySafe reports whether content survives the round trip as the body.
func bodySafe(content string) bool {
	return !strings.ContainsRune(content, '\r') && !strings.HasSuffix(content, "\n")
}

// Encode renders c as "---", the front matter, "---" and the body; equal
// cards give equal bytes. It fails only where the YAML encoder does (never
// for valid UTF-8).
func Encode(c Card) ([]byte, error) { return encode(c, true) }

// encode is Encode, through encodeFast when fast is set and it handles c.
func encode(c Card, fast bool) ([]byte, error) {
	c = Normalize(c)
	body := ""
	if bodySafe(c.Content) {
		body, c.Content = c.Content, ""
	}
	size := 1024 + len(body) + len(c.Content)
	for _, e := range c.Evidence {
		size += 320 + len(e.Content)
	}
	out := make([]byte, 0, size)
	out = append(out, "---\n"...)
	var ok bool
	if fast {
		out, ok = encodeFast(out, &c)
	}
	if !ok {
		var buf bytes.Buffer
		buf.Grow(size)
		buf.WriteString("---\n")
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(&c); err != nil {
			return nil, fmt.Errorf("encode card %s: %w", c.ID, err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("encode card %s: %w", c.ID, err)
		}
		out = buf.Bytes()
	}
	out = append(out, "---\n"...)
	if body != "" {
		out = append(out, body...)
		out = append(out, '\n')
	}
	return out, nil
}
