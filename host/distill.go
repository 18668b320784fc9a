package host

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/internal/hosterr"
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

	// Direct writes the card straight to Status (promoted or canonical),
	// bypassing the gate; human mode only, audited as direct_write.
	Direct bool   `json:"direct,omitempty"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type roleRefs struct {
	role domain.Role
	ids  []string
}

func (r DistillRequest) refs() []roleRefs {
	return []roleRefs{
		{domain.RoleSupporting, r.Supporting},
		{domain.RoleVerification, r.Verification},
		{domain.RoleTeaching, r.Teaching},
		{domain.RoleCounterexample, r.Counterexample},
	}
}

// Distill creates a card from evidence refs: a candidate, or with Direct an
// authoritative card written without the gate. The card, its links and its
// event commit in one transaction.
func (h *Host) Distill(ctx context.Context, req DistillRequest) (Card, error) {
	if req.Direct {
		if err := h.requireHuman("distill --direct"); err != nil {
			return Card{}, err
		}
	}
	c, kind, err := h.prepareCard(req)
	if err != nil {
		return Card{}, err
	}
	if req.Direct {
		if err := gatekeep.SecretFloor(c.Statement + "\n" + c.Content); err != nil {
			return Card{}, err
		}
	} else if err := refuseSecrets("statement and content", c.Statement+"\n"+c.Content); err != nil {
		return Card{}, err
	}
	var links []domain.Link
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, kind)
		if err != nil {
			return err
		}
		c.AnchorID = a.ID
		if first, dup, err := tx.CardByStatement(ctx, a.ID, c.StatementNorm, domain.LiveStatuses()); err != nil {
			return err
		} else if dup {
			return invalid("statement", "a %s card with the same statement exists at this anchor: %s (%q); link more evidence to it instead", first.Status, first.ID, first.Statement)
		}
		if links, err = h.checkRefs(ctx, tx, c.ID, req.refs()); err != nil {
			return err
		}
		if err := h.checkOneRole(ctx, tx, c.ID, links); err != nil {
			return err
		}
		if err := tx.InsertCard(ctx, c); err != nil {
			return err
		}
		for _, l := range links {
			if _, err := tx.InsertLink(ctx, l); err != nil {
				return err
			}
		}
		ev := domain.Event{Type: domain.EventCreated, ToStatus: c.Status, Reason: req.Reason}
		if req.Direct {
			ev.Type = "direct_write"
			ev.Reason = firstNonEmpty(req.Reason, "direct write by "+h.actor+", gate bypassed")
		}
		ev.Data = mustJSON(map[string]any{"links": linkSummary(links)})
		if _, err = h.appendEvent(ctx, tx, c.ID, ev); err != nil {
			return err
		}
		// A card written authoritative over a counterexample starts contested.
		for _, l := range links {
			if l.Role == domain.RoleCounterexample {
				if _, err := h.contest(ctx, tx, c, ContestRequest{Kind: ContestCounterexample,
					Reason: "written authoritative over counterexample " + l.EvidenceID, EvidenceID: l.EvidenceID}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Card{}, classify(err, "distill")
	}
	return h.ShowCard(ctx, c.ID)
}

func (h *Host) prepareCard(req DistillRequest) (domain.Card, domain.AnchorKind, error) {
	stmt := strings.TrimSpace(req.Statement)
	switch {
	case stmt == "":
		return domain.Card{}, "", invalid("statement", "statement is empty: pass --statement with the short wake-up form of the knowledge")
	case !utf8.ValidString(stmt) || !utf8.ValidString(req.Content):
		return domain.Card{}, "", invalid("statement", "statement and content must be valid UTF-8")
	case utf8.RuneCountInString(stmt) > MaxStatementRunes:
		return domain.Card{}, "", invalid("statement", "statement is %d characters, over %d: keep the wake-up form short and move detail to --content", utf8.RuneCountInString(stmt), MaxStatementRunes)
	case len(req.Content) > MaxContentBytes:
		return domain.Card{}, "", invalid("content", "content is %d bytes, over the 1 MiB limit", len(req.Content))
	}
	for _, c := range []struct{ field, value, fix string }{
		{"statement", stmt, "pass text"},
		{"content", req.Content, "pass text; base64-encode binary data"},
	} {
		if err := checkText(c.field, c.value, 0, c.fix); err != nil {
			return domain.Card{}, "", err
		}
	}
	if err := checkText("field", req.Field, MaxFieldBytes, "use a short name such as go or release-process"); err != nil {
		return domain.Card{}, "", err
	}
	if err := checkScope(req.Scope); err != nil {
		return domain.Card{}, "", err
	}
	if req.Tier == "" {
		return domain.Card{}, "", invalid("tier", "tier is required: use one of %s", strings.Join(domain.Strings(domain.Tiers), ", "))
	}
	if err := oneOf("tier", domain.Tier(req.Tier), domain.Tiers); err != nil {
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
			return domain.Card{}, "", h.requireHuman("distill --direct")
		}
	} else if req.Status != "" && req.Status != string(domain.StatusCandidate) {
		return domain.Card{}, "", invalid("status", "--status %s needs --direct (human mode); distilled cards start as candidates", req.Status)
	}
	dom, err := anchorDomain(kind, req.Domain)
	if err != nil {
		return domain.Card{}, "", err
	}
	persistence := domain.Persistence(firstNonEmpty(req.Persistence, string(domain.PersistenceStandard)))
	if err := oneOf("persistence", persistence, domain.Persistences); err != nil {
		return domain.Card{}, "", err
	}
	renderPref := domain.RenderPref(firstNonEmpty(req.RenderPref, string(domain.RenderAuto)))
	if err := oneOf("render_pref", renderPref, domain.RenderPrefs); err != nil {
		return domain.Card{}, "", err
	}
	for _, p := range req.Trigger.Patterns {
		if _, err := regexp.Compile(p); err != nil {
			return domain.Card{}, "", invalid("trigger_pattern", "trigger pattern %q is not a valid regular expression: %v", p, err)
		}
	}
	now := h.now()
	for _, d := range []struct{ field, v string }{{"review_after", req.ReviewAfter}, {"expires_at", req.ExpiresAt}} {
		if d.v != "" {
			t, err := parseDate(d.v)
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
		StatementNorm: normalizeStatement(stmt),
		Content:       req.Content,
		Tier:          domain.Tier(req.Tier),
		Status:        status,
		Domain:        dom,
		Field:         firstNonEmpty(req.Field, "general"),
		Scope:         req.Scope,
		Trigger:       req.Trigger,
		Persistence:   persistence,
		RenderPref:    renderPref,
		ReviewAfter:   normDate(req.ReviewAfter),
		ExpiresAt:     normDate(req.ExpiresAt),
		CreatedBy:     h.actor,
		CreatedAt:     store.FormatTime(now),
		UpdatedAt:     store.FormatTime(now),
	}, kind, nil
}

// checkRefs validates evidence refs: each must exist, be evidence (not a
// card), and be visible from here (no citing another repository's evidence).
func (h *Host) checkRefs(ctx context.Context, tx *store.Tx, cardID string, refs []roleRefs) ([]domain.Link, error) {
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ids...)
	}
	found, err := tx.EvidenceByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := h.stamp()
	var links []domain.Link
	for _, r := range refs {
		for _, id := range r.ids {
			e, ok := found[id]
			if !ok {
				isCard, err := tx.CardIDExists(ctx, id)
				if err != nil {
					return nil, err
				}
				if isCard {
					return nil, invalid(string(r.role), "--%s %s is a card: links point at evidence only; cite the evidence behind that card", r.role, id)
				}
				return nil, invalid(string(r.role), "--%s %s: no such evidence; record it first with `palace record`", r.role, id)
			}
			if h.visibleKind(e.AnchorID) == "" {
				return nil, invalid(string(r.role), "--%s %s belongs to another repository or worktree: evidence is cited only where it was recorded (or from an outer anchor)", r.role, id)
			}
			links = append(links, domain.Link{CardID: cardID, EvidenceID: id, Role: r.role, CreatedAt: now, SourceRef: e.SourceRef})
		}
	}
	return links, nil
}

func (h *Host) appendEvent(ctx context.Context, tx *store.Tx, cardID string, e domain.Event) (domain.Event, error) {
	return tx.AppendEvent(ctx, h.gatekeeper().NewEvent(cardID, e))
}

func linkSummary(links []domain.Link) []map[string]string {
	out := make([]map[string]string, len(links))
	for i, l := range links {
		out[i] = map[string]string{"evidence_id": l.EvidenceID, "role": string(l.Role)}
	}
	return out
}

func mustJSON(v any) json.RawMessage { return gatekeep.EventData(v) }

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// classify passes host errors through and wraps anything else as internal.
func classify(err error, op string) error { return hosterr.Classify(err, op) }
