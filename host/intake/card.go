package intake

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/store"
)

// MaxStatementRunes is the longest statement: the short wake-up form.
const MaxStatementRunes = 280

// DistillRequest creates a candidate card from evidence.
type DistillRequest struct {
	Statement string `json:"statement"`
	Content   string `json:"content,omitempty"`
	Tier      string `json:"tier"`
	// Domain defaults to "project" (or "global" at the global anchor).
	Domain string `json:"domain,omitempty"`
	// Field defaults to "general".
	Field string `json:"field,omitempty"`
	// Anchor is worktree, repo or global; defaults to the innermost.
	Anchor string `json:"anchor,omitempty"`

	Supporting     []string `json:"supporting"`
	Verification   []string `json:"verification,omitempty"`
	Teaching       []string `json:"teaching,omitempty"`
	Counterexample []string `json:"counterexample,omitempty"`

	Scope       domain.Scope   `json:"scope"`
	Trigger     domain.Trigger `json:"trigger"`
	Persistence string         `json:"persistence,omitempty"`
	RenderPref  string         `json:"render_pref,omitempty"`
	ReviewAfter string         `json:"review_after,omitempty"`
	ExpiresAt   string         `json:"expires_at,omitempty"`

	// From names a card of this checkout the new card supersedes (to
	// raise its tier, or restate it): the new card takes every field the
	// request leaves empty from it — statement, content, field, scope,
	// triggers, persistence, render preference, and its anchor unless the
	// tier is dao_tian — and cites its evidence in the same roles beside
	// the refs given. It starts a candidate like any card; once it is
	// authoritative the old card is retired. The tier or the statement
	// must differ from the old card's.
	From string `json:"from,omitempty"`

	// Direct writes the card straight to Status (promoted or canonical),
	// bypassing the gate; human mode only, audited as direct_write.
	Direct bool   `json:"direct,omitempty"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// PrepareCard validates req and builds its card, unstored, with its anchor
// kind. Statement and content are kept in NFC, so one text typed on two
// systems is one card.
func (h *Intake) PrepareCard(req DistillRequest) (domain.Card, domain.AnchorKind, error) {
	stmt := strings.TrimSpace(req.Statement)
	if !utf8.ValidString(stmt) || !utf8.ValidString(req.Content) {
		return domain.Card{}, "", invalid("statement", "statement and content must be valid UTF-8")
	}
	stmt, req.Content = domain.NFC(stmt), domain.NFC(req.Content)
	switch {
	case stmt == "":
		return domain.Card{}, "", invalid("statement", "statement is empty: pass --statement with the short wake-up form of the knowledge")
	case utf8.RuneCountInString(stmt) > MaxStatementRunes:
		return domain.Card{}, "", invalid("statement", "statement is %d characters, over %d: keep the wake-up form short and move detail to --content", utf8.RuneCountInString(stmt), MaxStatementRunes)
	case len(req.Content) > MaxContentBytes:
		return domain.Card{}, "", invalid("content", "content is %d bytes, over the 1 MiB limit", len(req.Content))
	}
	for _, c := range []struct{ field, value, fix string }{
		{"statement", stmt, "pass text"},
		{"content", req.Content, "pass text; base64-encode binary data"},
	} {
		if err := limits.Text(c.field, c.value, 0, c.fix); err != nil {
			return domain.Card{}, "", err
		}
	}
	if err := limits.Text("field", req.Field, MaxFieldBytes, "use a short name such as go or release-process"); err != nil {
		return domain.Card{}, "", err
	}
	if err := limits.Scope(req.Scope); err != nil {
		return domain.Card{}, "", err
	}
	if req.Tier == "" {
		return domain.Card{}, "", invalid("tier", "tier is required: use one of %s", strings.Join(domain.Strings(domain.Tiers), ", "))
	}
	if err := hosterr.OneOf("tier", domain.Tier(req.Tier), domain.Tiers); err != nil {
		return domain.Card{}, "", err
	}
	if len(req.Supporting) == 0 {
		return domain.Card{}, "", invalid("supporting", "at least one --supporting evidence ref is required: record the evidence first with `palace record`")
	}
	// dao_tian is universal law: it lives at the global anchor. Other tiers
	// start where they were learned and reach global only by publish, one
	// gated step at a time.
	def := h.loc.Innermost()
	if req.Tier == string(domain.TierDaoTian) {
		def = domain.AnchorGlobal
	}
	kind, err := h.writeAnchorKind("anchor", req.Anchor, def)
	if err != nil {
		return domain.Card{}, "", err
	}
	if kind == domain.AnchorGlobal && req.Tier != string(domain.TierDaoTian) && req.Anchor != "" && h.loc.InGit {
		return domain.Card{}, "", invalid("anchor", "--anchor global for a %s card: only dao_tian starts at the global anchor; distill it here and publish it outward (`palace publish ID --to repo`, then `--to global`) through the gate", req.Tier)
	}
	status := domain.StatusCandidate
	if req.Direct {
		if req.Status != string(domain.StatusPromoted) && req.Status != string(domain.StatusCanonical) {
			return domain.Card{}, "", invalid("status", "--direct needs --status promoted or --status canonical, got %q", req.Status)
		}
		status = domain.Status(req.Status)
		if req.Tier == string(domain.TierDaoTian) && status == domain.StatusCanonical && h.mode != Human {
			return domain.Card{}, "", h.gate.RequireHuman("distill --direct")
		}
	} else if req.Status != "" && req.Status != string(domain.StatusCandidate) {
		return domain.Card{}, "", invalid("status", "--status %s needs --direct (human mode); distilled cards start as candidates", req.Status)
	}
	dom, err := anchorDomain(kind, req.Domain)
	if err != nil {
		return domain.Card{}, "", err
	}
	persistence := domain.Persistence(cmp.Or(req.Persistence, string(domain.PersistenceStandard)))
	if err := hosterr.OneOf("persistence", persistence, domain.Persistences); err != nil {
		return domain.Card{}, "", err
	}
	renderPref := domain.RenderPref(cmp.Or(req.RenderPref, string(domain.RenderAuto)))
	if err := hosterr.OneOf("render_pref", renderPref, domain.RenderPrefs); err != nil {
		return domain.Card{}, "", err
	}
	if err := limits.Triggers(req.Trigger); err != nil {
		return domain.Card{}, "", err
	}
	now := h.now()
	for _, d := range []struct{ field, v string }{{"review_after", req.ReviewAfter}, {"expires_at", req.ExpiresAt}} {
		if d.v != "" {
			t, err := gatekeep.ParseDate(d.v)
			if err != nil {
				return domain.Card{}, "", invalid(d.field, "%s %q is not a date: use YYYY-MM-DD or RFC3339", d.field, d.v)
			}
			if d.field == "expires_at" && !t.After(now) {
				return domain.Card{}, "", invalid(d.field, "expires_at %s is not in the future: a card that expired already could never be used; pass a later date or none", d.v)
			}
		}
	}
	return domain.Card{
		ID:            store.NewID(store.CardPrefix, now),
		Statement:     stmt,
		StatementNorm: domain.NormalizeStatement(stmt),
		Content:       req.Content,
		Tier:          domain.Tier(req.Tier),
		Status:        status,
		Domain:        dom,
		Field:         cmp.Or(req.Field, "general"),
		Scope:         req.Scope,
		Trigger:       req.Trigger,
		Persistence:   persistence,
		RenderPref:    renderPref,
		ReviewAfter:   gatekeep.NormDate(req.ReviewAfter),
		ExpiresAt:     gatekeep.NormDate(req.ExpiresAt),
		CreatedBy:     h.actor,
		CreatedAt:     store.FormatTime(now),
		UpdatedAt:     store.FormatTime(now),
	}, kind, nil
}

// writeAnchorKind resolves the anchor a write goes to: requested, else def.
// Outside a git checkout a write must name the global anchor itself: a
// default there would share it with every repository's context.
func (h *Intake) writeAnchorKind(field, requested string, def domain.AnchorKind) (domain.AnchorKind, error) {
	if requested == "" {
		if !h.loc.InGit {
			return "", invalid(field, "%s is not inside a git checkout, so this would be written to the global anchor and reach every repository's context: pass --anchor global if that is meant, or run it inside a repository (--cwd)", h.loc.Dir)
		}
		return def, nil
	}
	return h.resolveAnchorKind(field, requested)
}

// anchorDomain is the domain of a write at kind: the global anchor holds
// domain global only; elsewhere the default is project.
func anchorDomain(kind domain.AnchorKind, dom string) (domain.Domain, error) {
	if kind == domain.AnchorGlobal {
		if dom != "" && dom != string(domain.DomainGlobal) {
			return "", invalid("domain", "--domain %s at the global anchor: the global anchor holds domain global only; drop --domain, or write at --anchor repo", dom)
		}
		return domain.DomainGlobal, nil
	}
	if dom == "" {
		return domain.DomainProject, nil
	}
	d := domain.Domain(dom)
	if err := hosterr.OneOf("domain", d, domain.Domains); err != nil {
		return "", err
	}
	return d, nil
}
