package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/internal/strlist"
	"github.com/palacehq/palace/repofs"
	"github.com/palacehq/palace/rulefiles"
	"github.com/palacehq/palace/store"
)

// ImportRequest names rule files to import.
type ImportRequest struct {
	// Files are paths, relative to the host's directory or absolute.
	Files []string `json:"files"`
	// Tier of the candidates of hand-written rules. Defaults to shu (a
	// method); a generated rule keeps the tier it cites.
	Tier string `json:"tier,omitempty"`
	// Field of hand-written rules. Defaults to general; a generated rule
	// keeps its field.
	Field string `json:"field,omitempty"`
	// Anchor is worktree, repo or global. Defaults to repo in a git
	// checkout (rule files are the repository's), global outside one.
	Anchor string `json:"anchor,omitempty"`
	// IncludeGenerated imports the rules of palace blocks too, e.g. into a
	// palace that does not have those cards; by default they are skipped.
	IncludeGenerated bool `json:"include_generated,omitempty"`
}

// ImportedRule is one rule of an import and what it became.
type ImportedRule struct {
	SourceRef   string       `json:"source_ref"`
	Statement   string       `json:"statement"`
	Scope       domain.Scope `json:"scope"`
	EvidenceID  string       `json:"evidence_id"`
	EvidenceNew bool         `json:"evidence_new"`
	CardID      string       `json:"card_id"`
	CardStatus  string       `json:"card_status"`
	CardNew     bool         `json:"card_new"`
	// NearDuplicates are the live cards at a new card's anchor it nearly
	// repeats (filled by the host).
	NearDuplicates []neardup.Card `json:"near_duplicates,omitempty"`
}

// ImportFile reports one file.
type ImportFile struct {
	Path  string         `json:"path"`
	Kind  string         `json:"kind"`
	Scope []string       `json:"scope,omitempty"`
	Rules []ImportedRule `json:"rules"`
	// GeneratedSkipped are the palace blocks left out (see IncludeGenerated).
	GeneratedSkipped []rulefiles.Block `json:"generated_skipped,omitempty"`
	// RefsSkipped counts generated reference lines, which state no rule.
	RefsSkipped int `json:"refs_skipped,omitempty"`
}

// ImportResult reports an import.
type ImportResult struct {
	Files            []ImportFile `json:"files"`
	EvidenceNew      int          `json:"evidence_new"`
	EvidenceExisting int          `json:"evidence_existing"`
	CardsNew         int          `json:"cards_new"`
	CardsExisting    int          `json:"cards_existing"`
}

// importRow is one rule, validated, waiting for the transaction.
type importRow struct {
	file int
	ev   domain.Evidence
	card domain.Card
	// refPrefix finds the rule's earlier imports: "path#L".
	refPrefix string
}

// ImportRules turns each rule of rule files into evidence and a candidate
// card with the file's scope; nothing is promoted. Re-importing is
// idempotent. Generated blocks are skipped unless IncludeGenerated.
// Everything is validated before one transaction: a bad file, block or
// secret, or a link out of the checkout, is KindInvalid naming file and line
// and nothing is imported.
func (h *Intake) ImportRules(ctx context.Context, req ImportRequest) (ImportResult, error) {
	if len(req.Files) == 0 {
		return ImportResult{}, invalid("file", "no files to import: name AGENTS.md, CLAUDE.md, .cursor/rules/*.mdc, .github/instructions/*.instructions.md or a Markdown list")
	}
	tier := cmp.Or(req.Tier, "shu")
	if err := hosterr.OneOf("tier", domain.Tier(tier), domain.Tiers); err != nil {
		return ImportResult{}, err
	}
	anchorName := req.Anchor
	if anchorName == "" && h.loc.InGit {
		anchorName = string(domain.AnchorRepo)
	}
	kind, err := h.resolveAnchorKind("anchor", anchorName)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	var rows []importRow
	for i, name := range req.Files {
		f, fileRows, err := h.readRuleFile(name, req, tier, string(kind))
		if err != nil {
			return ImportResult{}, err
		}
		for j := range fileRows {
			fileRows[j].file = i
		}
		res.Files = append(res.Files, f)
		rows = append(rows, fileRows...)
	}
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		a, err := h.ensureAnchor(ctx, tx, kind)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out, err := h.importRow(ctx, tx, a.ID, r)
			if err != nil {
				return err
			}
			res.Files[r.file].Rules = append(res.Files[r.file].Rules, out)
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, hosterr.Classify(err, "import rule files")
	}
	for _, f := range res.Files {
		for _, r := range f.Rules {
			res.EvidenceNew += b2i(r.EvidenceNew)
			res.EvidenceExisting += b2i(!r.EvidenceNew)
			res.CardsNew += b2i(r.CardNew)
			res.CardsExisting += b2i(!r.CardNew)
		}
	}
	return res, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readRuleFile reads and parses one file and validates its rules.
func (h *Intake) readRuleFile(name string, req ImportRequest, tier, anchorName string) (ImportFile, []importRow, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(h.loc.Dir, name)
	}
	abs = filepath.Clean(abs)
	// The source_ref and the scope of a nested AGENTS.md are relative to
	// the checkout, so they mean the same in every clone.
	display := filepath.ToSlash(abs)
	if h.loc.InGit {
		if rel, err := filepath.Rel(h.loc.Worktree, abs); err == nil && !strings.HasPrefix(rel, "..") {
			display = filepath.ToSlash(rel)
		}
	}
	// Inside a checkout a link may lead only to another file of it; a file
	// outside any checkout is the caller's.
	var data []byte
	var err error
	if root, ok := repofs.CheckoutRoot(filepath.Dir(abs)); ok {
		data, err = limits.ReadInputFileWithin("FILE", root, abs, rulefiles.MaxFileBytes)
	} else {
		data, err = limits.ReadInputFile("FILE", abs, rulefiles.MaxFileBytes)
	}
	if err != nil {
		return ImportFile{}, nil, err
	}
	doc, err := rulefiles.Parse(display, data, rulefiles.ParseOptions{IncludeGenerated: req.IncludeGenerated})
	if err != nil {
		return ImportFile{}, nil, invalid("file", "%v", err)
	}
	f := ImportFile{Path: display, Kind: string(doc.Kind), Scope: doc.Paths, Rules: []ImportedRule{}, RefsSkipped: doc.Refs}
	if !req.IncludeGenerated {
		f.GeneratedSkipped = doc.Generated
	}
	var rows []importRow
	for _, r := range doc.Rules {
		ref := fmt.Sprintf("%s#L%d", display, r.Line)
		prefix := fmt.Sprintf("%s:%d: ", display, r.Line)
		ruleTier := tier
		if r.Generated && r.Tier != "" && hosterr.OneOf("tier", domain.Tier(r.Tier), domain.Tiers) == nil {
			ruleTier = r.Tier
		}
		field := cmp.Or(r.Field, req.Field)
		ev, _, err := h.PrepareEvidence(RecordRequest{
			Content:   r.Text,
			Field:     field,
			SourceRef: ref,
			Tags:      []string{"imported", "rulefile:" + string(doc.Kind)},
			Anchor:    anchorName,
		}, prefix)
		if err != nil {
			return ImportFile{}, nil, err
		}
		card, _, err := h.PrepareCard(DistillRequest{
			Statement:  r.Statement,
			Content:    r.Content,
			Tier:       ruleTier,
			Field:      field,
			Anchor:     anchorName,
			Supporting: []string{ev.ID},
			Scope:      domain.Scope{Paths: strlist.NonNil(r.Paths), Languages: strlist.NonNil(r.Languages), Fields: strlist.NonNil(r.Fields)},
		})
		if err != nil {
			var he *Error
			if errors.As(err, &he) {
				he.Msg = prefix + he.Msg
			}
			return ImportFile{}, nil, err
		}
		rows = append(rows, importRow{ev: ev, card: card, refPrefix: display + "#L"})
	}
	return f, rows, nil
}

// importRow writes one rule's evidence unless recorded from the file, and
// its candidate unless the statement exists at the anchor (then links).

func (h *Intake) importRow(ctx context.Context, tx *store.Tx, anchorID string, r importRow) (ImportedRule, error) {
	out := ImportedRule{SourceRef: r.ev.SourceRef, Statement: r.card.Statement, Scope: r.card.Scope}
	found, err := tx.EvidenceBySource(ctx, anchorID, r.ev.ContentSHA256, r.refPrefix)
	if err != nil {
		return out, err
	}
	if len(found) > 0 {
		out.EvidenceID, out.SourceRef = found[0].ID, found[0].SourceRef
	} else {
		// The same content from another source stays its own row, marked a
		// duplicate of the first so it never counts twice.
		r.ev.AnchorID = anchorID
		if _, err := h.InsertDistinct(ctx, tx, r.ev, true); err != nil {
			return out, err
		}
		out.EvidenceID, out.EvidenceNew = r.ev.ID, true
	}
	refs := []authority.Refs{{Role: domain.RoleSupporting, IDs: []string{out.EvidenceID}}}
	existing, dup, err := tx.CardByStatement(ctx, anchorID, r.card.StatementNorm, domain.Statuses)
	if err != nil {
		return out, err
	}
	if dup {
		out.CardID, out.CardStatus, out.Statement, out.Scope = existing.ID, string(existing.Status), existing.Statement, existing.Scope
		_, err = h.door.Apply(ctx, tx, authority.Change{Op: authority.OpLink, CardID: existing.ID, Refs: refs, Reason: "imported from " + out.SourceRef})
		return out, err
	}
	r.card.AnchorID = anchorID
	if _, err := h.door.Apply(ctx, tx, authority.Change{Op: authority.OpCreate, CardID: r.card.ID, Card: &r.card, Refs: refs,
		Reason: "imported from " + out.SourceRef + ": a candidate for review; promote it through the gate",
		Data:   map[string]any{"source_ref": out.SourceRef}}); err != nil {
		return out, err
	}
	out.CardID, out.CardStatus, out.CardNew = r.card.ID, string(r.card.Status), true
	return out, nil
}
