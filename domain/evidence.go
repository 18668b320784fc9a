package domain

import "encoding/json"

// Evidence is one row of evidence. It is never deleted, and never updated
// but for one change: RedactEvidence may replace its content, once.
type Evidence struct {
	ID            string   `json:"id"`
	Content       string   `json:"content"`
	Domain        string   `json:"domain"`
	Field         string   `json:"field"`
	Provenance    string   `json:"provenance"`
	SourceRef     string   `json:"source_ref"`
	Tags          []string `json:"tags"`
	AnchorID      string   `json:"anchor_id"`
	ContentSHA256 string   `json:"content_sha256"`
	Actor         string   `json:"actor"`
	ActorType     string   `json:"actor_type"`
	CreatedAt     string   `json:"created_at"`
}

// Link ties a card to one piece of evidence in a role. SourceRef is the
// evidence's source_ref, joined in on reads for citations.
type Link struct {
	CardID     string `json:"card_id"`
	EvidenceID string `json:"evidence_id"`
	Role       string `json:"role"`
	Note       string `json:"note,omitempty"`
	CreatedAt  string `json:"created_at"`
	SourceRef  string `json:"source_ref"`

	// Original is the evidence this link counts as: the evidence itself, or
	// the original it duplicates. Joined in on reads.
	Original string `json:"-"`
	// Provenance, ActorType and EvidenceAt are the evidence's, joined in on
	// reads for the gate.
	Provenance string `json:"-"`
	ActorType  string `json:"-"`
	EvidenceAt string `json:"-"`
}

// Event is one append-only row of card_events.
type Event struct {
	ID         string          `json:"id"`
	CardID     string          `json:"card_id"`
	Seq        int             `json:"seq"`
	Type       string          `json:"type"`
	FromStatus string          `json:"from_status,omitempty"`
	ToStatus   string          `json:"to_status,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Actor      string          `json:"actor"`
	ActorType  string          `json:"actor_type"`
	Policy     string          `json:"policy,omitempty"`
	PolicyHash string          `json:"policy_hash,omitempty"`
	Decision   json.RawMessage `json:"decision,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	CreatedAt  string          `json:"created_at"`
}

// CountRoles counts a card's distinct evidence per role: a duplicate counts
// as its original, and a piece of evidence linked in more than one role
// (possible only in palaces from before one role per link was enforced)
// counts in the role it was linked in first.
func CountRoles(links []Link) map[string]int {
	out := map[string]int{"supporting": 0, "verification": 0, "teaching": 0, "counterexample": 0}
	for _, l := range DistinctLinks(links) {
		out[l.Role]++
	}
	return out
}

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
