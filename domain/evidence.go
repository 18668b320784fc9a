package domain

import "encoding/json"

// Evidence is what was seen, taught, verified or contradicted. It is never
// deleted or updated, but a redaction may replace its content once.
type Evidence struct {
	ID            string     `json:"id"`
	Content       string     `json:"content"`
	Domain        Domain     `json:"domain"`
	Field         string     `json:"field"`
	Provenance    Provenance `json:"provenance"`
	SourceRef     string     `json:"source_ref"`
	Tags          []string   `json:"tags"`
	AnchorID      string     `json:"anchor_id"`
	ContentSHA256 string     `json:"content_sha256"`
	Actor         string     `json:"actor"`
	ActorType     ActorType  `json:"actor_type"`
	CreatedAt     string     `json:"created_at"`
}

// Link ties a card to one piece of evidence in a role. SourceRef is the
// evidence's source_ref, joined in on reads for citations.
type Link struct {
	CardID     string `json:"card_id"`
	EvidenceID string `json:"evidence_id"`
	Role       Role   `json:"role"`
	Note       string `json:"note,omitempty"`
	CreatedAt  string `json:"created_at"`
	SourceRef  string `json:"source_ref"`

	// Original (the evidence, or the original it duplicates), Provenance,
	// ActorType and EvidenceAt are joined in on reads.
	Original   string     `json:"-"`
	Provenance Provenance `json:"-"`
	ActorType  ActorType  `json:"-"`
	EvidenceAt string     `json:"-"`
}

// Event is one append-only change of a card (a row of the store's
// card_events table).
type Event struct {
	ID         string          `json:"id"`
	CardID     string          `json:"card_id"`
	Seq        int             `json:"seq"`
	Type       EventType       `json:"type"`
	FromStatus Status          `json:"from_status,omitempty"`
	ToStatus   Status          `json:"to_status,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Actor      string          `json:"actor"`
	ActorType  ActorType       `json:"actor_type"`
	Policy     string          `json:"policy,omitempty"`
	PolicyHash string          `json:"policy_hash,omitempty"`
	Decision   json.RawMessage `json:"decision,omitempty"`
	DecidedBy  DecidedBy       `json:"decided_by,omitempty"` // empty on the oldest events
	Data       json.RawMessage `json:"data,omitempty"`
	CreatedAt  string          `json:"created_at"`
}

// RoleCounts counts a card's evidence by role, the one shape for role counts.
type RoleCounts struct {
	Supporting     int `json:"supporting"`
	Verification   int `json:"verification"`
	Teaching       int `json:"teaching"`
	Counterexample int `json:"counterexample"`
}

// Add counts one more piece of evidence in role r; unknown roles are not
// counted.
func (c *RoleCounts) Add(r Role, n int) {
	switch r {
	case RoleSupporting:
		c.Supporting += n
	case RoleVerification:
		c.Verification += n
	case RoleTeaching:
		c.Teaching += n
	case RoleCounterexample:
		c.Counterexample += n
	}
}

// Of is the count of role r (0 for an unknown role).
func (c RoleCounts) Of(r Role) int {
	switch r {
	case RoleSupporting:
		return c.Supporting
	case RoleVerification:
		return c.Verification
	case RoleTeaching:
		return c.Teaching
	case RoleCounterexample:
		return c.Counterexample
	}
	return 0
}

// Total is the count over every role.
func (c RoleCounts) Total() int {
	return c.Supporting + c.Verification + c.Teaching + c.Counterexample
}

// CountLinks counts every link by role, duplicates and all.
func CountLinks(links []Link) RoleCounts {
	var c RoleCounts
	for _, l := range links {
		c.Add(l.Role, 1)
	}
	return c
}

// CountRoles counts a card's distinct evidence per role: a duplicate counts
// as its original, evidence linked in several roles in its first.
func CountRoles(links []Link) RoleCounts { return CountLinks(DistinctLinks(links)) }

// DistinctLinks keeps the first link of each Original (else EvidenceID), in order.
func DistinctLinks(links []Link) []Link {
	seen := make(map[string]bool, len(links))
	out := make([]Link, 0, len(links))
	for _, l := range links {
		k := l.Original
		if k == "" {
			k = l.EvidenceID
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, l)
	}
	return out
}
