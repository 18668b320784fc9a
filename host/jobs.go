package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/adoption"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/research"
	"github.com/palacehq/palace/host/ruleexport"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/mailbox"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// The jobs below host never import host; host lends each its environment.

// env is what every job is lent.
func (h *Host) env() jobenv.Env {
	return jobenv.Env{Store: h.store, Loc: h.loc, Mode: string(h.mode), Actor: h.actor, Now: h.now, Policies: h.Policies}
}

// Pack returns the pipeline of context packs, briefs and trigger hints.
func (h *Host) Pack() *pack.Pipeline { return h.pack }

func (h *Host) newPipeline() *pack.Pipeline {
	return pack.New(pack.Config{
		Env:            h.env(),
		StampFileState: h.stampFileStateCached,
		Remember:       h.echo.Remember,
		PromoteGate: func(ctx context.Context, c domain.Card, links []domain.Link) (bool, map[string]int) {
			target, _ := gatekeep.PromoteTarget(c, "")
			g := h.evaluateGate(ctx, c, links, nil, string(domain.ActionPromote), string(target), "", false)
			return g.Allow, g.Missing
		},
		TelemetryCutoff: h.telemetryCutoff,
		Freshness:       h.freshness,
		CrossRepoRead:   h.crossRepoRead,
	})
}

// Team returns team memory in git: card files, palace sync's parts and the
// pre-commit check. Every change to a card goes through the host's door.
func (h *Host) Team() *teamsync.Team {
	return teamsync.New(teamsync.Config{Env: h.env(), Gate: h.gatekeeper(), EnsureAnchor: h.ensureAnchor, Door: h.door()})
}

// Intake returns the evidence intake: records, JSON Lines batches and
// rule-file imports.
func (h *Host) Intake() *intake.Intake {
	return intake.New(intake.Config{Env: h.env(), Gate: h.gatekeeper(), Echo: &h.echo, EnsureAnchor: h.ensureAnchor, Door: h.door()})
}

// Adoption returns the adoption signals' face: a signal is evidence, never
// authority; a contradiction with evidence contests through the door.
func (h *Host) Adoption() *adoption.Adoption {
	return adoption.New(adoption.Config{
		Env: h.env(), ActorType: h.actorType(),
		TelemetryDays: h.telemetryDays, RefuseSecrets: intake.RefuseSecrets, ChainIDs: h.loc.ChainIDs(),
		Contest: func(ctx context.Context, cardID, reason, evidenceID, source string) (bool, error) {
			c, err := h.MarkContested(ctx, cardID, ContestRequest{Kind: authority.ContestContradiction, Reason: reason, EvidenceID: evidenceID, Source: source})
			return c.Contested, err
		},
	})
}

// RuleExport returns the writer of agents' rule files from the
// repository's authoritative cards.
func (h *Host) RuleExport() *ruleexport.Exporter {
	return ruleexport.New(ruleexport.Config{Env: h.env(), OpenContests: h.openContests})
}

// Mail returns the host's mailbox face. It shares the host's policy set, so
// a watcher's swaps apply to mailbox checks too.
func (h *Host) Mail() *mail.Mail {
	return mail.New(mail.Config{Env: h.env(), Home: h.home, PolicySources: h.PolicySources, Checkouts: h.knownCheckouts})
}

// Mailbox returns the mailbox under the host's home, stamping letters with
// the host's clock.
func (h *Host) Mailbox() *mailbox.Mailbox {
	return &mailbox.Mailbox{Home: h.home, Now: h.now}
}

func (h *Host) gatekeeper() *gatekeep.Keeper {
	return &gatekeep.Keeper{Env: h.env()}
}

// evaluateGate runs the policy and then the Go floors, with the reviewer
// named by the request (see gatekeep.Keeper.Reviewer).
func (h *Host) evaluateGate(ctx context.Context, c domain.Card, links []domain.Link, contests []store.Contest, action, target, reviewerName string, allowLocal bool) gatekeep.Result {
	k := h.gatekeeper()
	return k.Evaluate(ctx, c, links, contests, action, target, k.Reviewer(reviewerName), allowLocal)
}

func (h *Host) research() *research.Ingester {
	return research.New(research.Config{
		Env: h.env(),
		PrepareEvidence: func(f research.Finding, k domain.AnchorKind) (domain.Evidence, error) {
			ev, _, err := h.Intake().PrepareEvidence(intake.RecordRequest{Content: f.Content, Field: f.Field, Domain: f.Domain, Provenance: "research",
				SourceRef: f.SourceRef, Tags: f.Tags, Anchor: string(k)}, "")
			return ev, err
		},
		ResolveAnchorKind: h.resolveAnchorKind,
		EnsureAnchor:      h.ensureAnchor,
		BatchSize:         intake.BatchSize,
	})
}

// stampFileStateCached sets d.FileState through the host's cache (the
// context path and the audit).
func (h *Host) stampFileStateCached(ctx context.Context, d *policies.Decision) {
	h.fileStates.StampCached(ctx, d)
}

// knownCheckouts are the checkouts of repositories this palace holds
// memory of, for routing letters; the database is opened only when it
// exists, and a palace that cannot be read knows none.
func (h *Host) knownCheckouts(ctx context.Context) []mailbox.RegisteredBox {
	st := h.store
	if st == nil {
		path := filepath.Join(h.home, dbFile)
		if _, err := os.Stat(path); err != nil {
			return nil
		}
		var err error
		if st, err = store.Open(ctx, path); err != nil {
			return nil
		}
		defer st.Close()
	}
	anchors, err := st.Anchors(ctx)
	if err != nil {
		return nil
	}
	var out []mailbox.RegisteredBox
	for _, a := range anchors {
		identity := strings.TrimPrefix(a.Identity, "repo:")
		if a.Kind != string(domain.AnchorRepo) || a.Path == "" || identity == a.Path {
			continue
		}
		out = append(out, mailbox.RegisteredBox{Path: mailbox.BoxPath(a.Path), RepoRoot: a.Path, RepoIdentity: identity})
	}
	return out
}

// OpenMail resolves home and workspace like Open, but opens no database
// (only routing reads one, see knownCheckouts) and creates nothing.
func OpenMail(ctx context.Context, opts Options) (*mail.Mail, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return nil, err
	}
	return h.Mail(), nil
}

// CheckCards is the pre-commit check of card files; it opens no database
// and creates no home.
func CheckCards(ctx context.Context, opts Options, req teamsync.CardsCheckRequest) (teamsync.CardsCheckReport, error) {
	h, err := newHost(ctx, opts)
	if err != nil {
		return teamsync.CardsCheckReport{Checked: []string{}, Findings: []cardfile.Finding{}, Staged: req.Staged}, err
	}
	return h.Team().CheckCards(ctx, req)
}

// Sync runs teamsync.Team.Sync and names the cards each imported card
// nearly repeats. Human mode only.
func (h *Host) Sync(ctx context.Context, req teamsync.SyncRequest) (teamsync.SyncReport, error) {
	rep, err := h.Team().Sync(ctx, req)
	// Imported cards are compared with the cards that were here: a first
	// sync of a directory would cost the square of its size.
	if err != nil || len(rep.Imported) == 0 {
		return rep, err
	}
	near, err := h.nearNew(ctx, rep.Imported, false)
	if err != nil {
		return rep, err
	}
	for _, id := range rep.Imported {
		if n := near[id]; len(n) > 0 {
			rep.NearDuplicates = append(rep.NearDuplicates, teamsync.SyncNear{CardID: id, NearDuplicates: n})
		}
	}
	return rep, nil
}

// autoExport writes card id's file after a change when the checkout asks
// for it; nil when nothing applies.
func (h *Host) autoExport(ctx context.Context, id string) *teamsync.ExportNote {
	return h.Team().AutoExport(ctx, id)
}

// ImportRules runs intake.Intake.ImportRules and names the cards each new
// candidate nearly repeats. Both modes.
func (h *Host) ImportRules(ctx context.Context, req intake.ImportRequest) (intake.ImportResult, error) {
	res, err := h.Intake().ImportRules(ctx, req)
	if err != nil {
		return res, err
	}
	var ids []string
	for _, f := range res.Files {
		for _, r := range f.Rules {
			if r.CardNew {
				ids = append(ids, r.CardID)
			}
		}
	}
	near, err := h.nearNew(ctx, ids, true)
	if err != nil {
		return res, err
	}
	for i := range res.Files {
		for j := range res.Files[i].Rules {
			r := &res.Files[i].Rules[j]
			if r.CardNew {
				r.NearDuplicates = near[r.CardID]
			}
		}
	}
	return res, nil
}

// Research runs research.Ingester.Research, naming the cards each
// suggestion would nearly repeat.
func (h *Host) Research(ctx context.Context, req research.Request) (research.Plan, error) {
	plan, err := h.research().Research(ctx, req)
	if err != nil || len(plan.Suggestions) == 0 || !h.loc.InGit && plan.Anchor != string(domain.AnchorGlobal) {
		return plan, err
	}
	x, err := h.nearIndexAt(ctx, AnchorID(h.loc.Identity(domain.AnchorKind(plan.Anchor))), nil)
	if err != nil {
		return plan, err
	}
	for i := range plan.Suggestions {
		s := &plan.Suggestions[i]
		s.NearDuplicates = x.near(s.Statement, func(string) bool { return false })
	}
	return plan, nil
}

// AuditReport is the authority audit: every authoritative card with where
// it would land and why (see audit.Report).
type AuditReport struct {
	audit.Report
	// Held are cards whose card file claimed authority the gate refused at
	// import: candidates here, with the gate's reasons.
	Held []teamsync.HeldCard `json:"held,omitempty"`
}

// Audit runs audit.Auditor.Audit with the card files held at import. It
// reads only; unknown filter values are KindInvalid.
func (h *Host) Audit(ctx context.Context, f audit.Filter) (AuditReport, error) {
	var held []teamsync.HeldCard
	rep, err := audit.New(audit.Config{
		Env:       h.env(),
		AnchorIDs: func(kind string, allRepos bool) ([]string, error) { return h.crossRepoIDs(ctx, kind, allRepos) },
		Held: func(ctx context.Context, anchorIDs []string) error {
			var err error
			held, err = h.Team().HeldCards(ctx, anchorIDs)
			return err
		},
		OpenContests:   h.openContests,
		PolicySet:      h.pack.PolicySet,
		AnchorRef:      h.anchorRef,
		StampFileState: h.stampFileStateCached,
		Stale:          h.staleCards,
	}).Audit(ctx, f)
	if err != nil {
		return AuditReport{}, err
	}
	return AuditReport{Report: rep, Held: held}, nil
}
