package domain

import "strings"

// Scope limits where a card applies. Empty lists mean "anywhere".
type Scope struct {
	Paths     []string `json:"paths"`
	Languages []string `json:"languages"`
	Fields    []string `json:"fields"`
}

// String describes the scope for people: "paths store/**, api/** · languages
// go · fields storage"; "" for a card that applies anywhere.
func (s Scope) String() string {
	var parts []string
	for _, d := range []struct {
		name string
		vals []string
	}{{"paths", s.Paths}, {"languages", s.Languages}, {"fields", s.Fields}} {
		if len(d.vals) > 0 {
			parts = append(parts, d.name+" "+strings.Join(d.vals, ", "))
		}
	}
	return strings.Join(parts, " · ")
}

// Trigger says what wakes a card up: regexp patterns over text, intent tags,
// and tool needs. It biases selection; it never executes anything.
type Trigger struct {
	Patterns  []string `json:"patterns"`
	Intents   []string `json:"intents"`
	ToolNeeds []string `json:"tool_needs"`
}

// Card is a piece of governed knowledge distilled from evidence, as the
// store keeps it (one row of its cards table).
type Card struct {
	ID          string      `json:"id"`
	Statement   string      `json:"statement"`
	Content     string      `json:"content"`
	Tier        Tier        `json:"tier"`
	Status      Status      `json:"status"`
	Domain      Domain      `json:"domain"`
	Field       string      `json:"field"`
	AnchorID    string      `json:"anchor_id"`
	Scope       Scope       `json:"scope"`
	Trigger     Trigger     `json:"trigger"`
	Persistence Persistence `json:"persistence"`
	RenderPref  RenderPref  `json:"render_pref"`
	ReviewAfter string      `json:"review_after,omitempty"`
	ExpiresAt   string      `json:"expires_at,omitempty"`
	OriginCard  string      `json:"origin_card,omitempty"`
	PublishedTo string      `json:"published_to,omitempty"`
	CreatedBy   string      `json:"created_by"`
	CreatedAt   string      `json:"created_at"`
	UpdatedAt   string      `json:"updated_at"`

	StatementNorm string `json:"-"` // NormalizeStatement(Statement)
}
