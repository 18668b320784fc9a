package teamsync

import (
	"context"
	"encoding/json"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/policies"
)

// citations reads the links of cards and the evidence they cite, in two
// batched queries.
func (h *Team) citations(ctx context.Context, ids []string) (map[string][]domain.Link, map[string]domain.Evidence, error) {
	links, err := h.store.LinksFor(ctx, ids)
	if err != nil {
		return nil, nil, internal(err, "read card links")
	}
	var evIDs []string
	seen := map[string]bool{}
	for _, id := range ids {
		for _, l := range links[id] {
			if !seen[l.EvidenceID] {
				seen[l.EvidenceID] = true
				evIDs = append(evIDs, l.EvidenceID)
			}
		}
	}
	evidence, err := h.store.EvidenceByIDs(ctx, evIDs)
	if err != nil {
		return nil, nil, internal(err, "read cited evidence")
	}
	return links, evidence, nil
}

// toCardFile is the file of card c, naming origin as its origin_card.
func toCardFile(c domain.Card, origin string, links []domain.Link, evidence map[string]domain.Evidence, last domain.Event) cardfile.Card {
	f := cardfile.Card{
		ID: c.ID, Statement: c.Statement, Tier: string(c.Tier), Status: string(c.Status), Domain: string(c.Domain), Field: c.Field,
		Scope:       cardfile.Scope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields},
		Triggers:    cardfile.Triggers{Patterns: c.Trigger.Patterns, Intents: c.Trigger.Intents, ToolNeeds: c.Trigger.ToolNeeds},
		Persistence: string(c.Persistence), RenderPref: string(c.RenderPref), ReviewAfter: c.ReviewAfter, ExpiresAt: c.ExpiresAt,
		OriginCard: origin, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt, Content: c.Content,
		LastEvent: fileEvent(last),
	}
	done := map[string]bool{}
	for _, l := range links {
		e := evidence[l.EvidenceID]
		f.Citations = append(f.Citations, cardfile.Citation{Evidence: l.EvidenceID, Role: string(l.Role),
			SourceRef: e.SourceRef, SHA256: e.ContentSHA256, Note: l.Note})
		if done[e.ID] {
			continue
		}
		done[e.ID] = true
		f.Evidence = append(f.Evidence, cardfile.Evidence{ID: e.ID, SHA256: e.ContentSHA256, Domain: string(e.Domain),
			Field: e.Field, Provenance: string(e.Provenance), SourceRef: e.SourceRef, Tags: e.Tags, Actor: e.Actor,
			ActorType: string(e.ActorType), CreatedAt: e.CreatedAt, Content: e.Content,
			// Redaction replaces the content and keeps the original's hash.
			Redacted: cardfile.ContentSHA256(e.Content) != e.ContentSHA256})
	}
	return cardfile.Normalize(f)
}

// fileEvent is the last_event a card file shows for event e: an imported
// card shows the event its file showed, so a card re-exported after an
// import gives the same bytes.
func fileEvent(e domain.Event) *cardfile.Event {
	if e.ID == "" {
		return nil
	}
	if e.Type == "imported" {
		var d importData
		if json.Unmarshal(e.Data, &d) == nil {
			return d.LastEvent
		}
		return nil
	}
	out := &cardfile.Event{Type: string(e.Type), At: e.CreatedAt, Actor: e.Actor, PolicyHash: e.PolicyHash,
		Reviewer: cardfile.Reviewer{Name: e.Actor, Type: string(e.ActorType)}}
	var d struct {
		Reviewer *policies.Reviewer `json:"reviewer"`
	}
	if json.Unmarshal(e.Decision, &d) == nil && d.Reviewer != nil && d.Reviewer.Type != "" {
		out.Reviewer = cardfile.Reviewer{Name: d.Reviewer.Name, Type: d.Reviewer.Type}
	}
	return out
}

// importData is the data of an imported event.
type importData struct {
	Path       string          `json:"path"`
	Commit     string          `json:"commit,omitempty"`
	FileSHA256 string          `json:"file_sha256"`
	Claimed    string          `json:"claimed_status"`
	Held       []string        `json:"held,omitempty"`
	LastEvent  *cardfile.Event `json:"last_event,omitempty"`
}

// fromCardFile is the store row a card file describes, at anchorID.
func fromCardFile(f cardfile.Card, anchorID, now string) domain.Card {
	return domain.Card{
		ID: f.ID, Statement: f.Statement, StatementNorm: domain.NormalizeStatement(f.Statement), Content: f.Content,
		Tier: domain.Tier(f.Tier), Status: domain.Status(f.Status), Domain: domain.Domain(f.Domain), Field: f.Field, AnchorID: anchorID,
		Scope:       domain.Scope{Paths: f.Scope.Paths, Languages: f.Scope.Languages, Fields: f.Scope.Fields},
		Trigger:     domain.Trigger{Patterns: f.Triggers.Patterns, Intents: f.Triggers.Intents, ToolNeeds: f.Triggers.ToolNeeds},
		Persistence: domain.Persistence(f.Persistence), RenderPref: domain.RenderPref(f.RenderPref), ReviewAfter: f.ReviewAfter, ExpiresAt: f.ExpiresAt,
		OriginCard: f.OriginCard, CreatedBy: f.CreatedBy, CreatedAt: f.CreatedAt, UpdatedAt: now,
	}
}

// fileLinks are the links a card file's citations describe, each with what
// the gate reads of its evidence; content held twice under two ids counts
// once (the later id's Original is the first).
func fileLinks(f cardfile.Card, now string) []domain.Link {
	evs := make(map[string]cardfile.Evidence, len(f.Evidence))
	firstOf := map[string]string{}
	for _, e := range f.Evidence {
		evs[e.ID] = e
		if _, ok := firstOf[e.SHA256]; !ok {
			firstOf[e.SHA256] = e.ID
		}
	}
	out := make([]domain.Link, len(f.Citations))
	for i, ci := range f.Citations {
		l := domain.Link{CardID: f.ID, EvidenceID: ci.Evidence, Role: domain.Role(ci.Role), Note: ci.Note, CreatedAt: now, SourceRef: ci.SourceRef}
		if e, ok := evs[ci.Evidence]; ok {
			l.Provenance, l.ActorType, l.EvidenceAt = domain.Provenance(e.Provenance), domain.ActorType(e.ActorType), e.CreatedAt
			if first := firstOf[e.SHA256]; first != e.ID {
				l.Original = first
			}
		}
		out[i] = l
	}
	return out
}
