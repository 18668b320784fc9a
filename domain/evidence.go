package domain

import "encoding/json"

// Evidence is what was seen, taught, verified or contradicted, as the store
// keeps it (one row of its evidence table). It is never deleted, and never
// updated but for one change: a redaction may replace its content, once.
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

	// Original is the evidence this link counts as: the evidence itself, or
	// the original it duplicates. Joined in on reads.
	Original string `json:"-"`
	// Provenance, ActorType and EvidenceAt are the evidence's, joined in on
	// reads for the gate.
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
	// DecidedBy says who allowed the change: the gate, a person, or a
	// lifecycle rule. Empty only on events written before it was kept.
	DecidedBy DecidedBy       `json:"decided_by,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt string          `json:"created_at"`
}

// RoleCounts counts a card's evidence by role. It is the one shape for
// role counts: the store fills it, the gate reads it, a brief, a card and a
// hover show it.
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
// as its original, and a piece of evidence linked in more than one role
// (possible only in palaces from before one role per link was enforced)
// counts in the role it was linked in first.
func CountRoles(links []Link) RoleCounts { return CountLinks(DistinctLinks(links)) }

// DistinctLinks keeps the first link of each piece of evidence (by
// Original, the evidence itself when Original is unset), in order.
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
