package host

import (
	"context"
	"io"

	"github.com/palacehq/palace/host/intake"
)

// Evidence and the candidates built from it come in through package
// intake; host names its types under their old names and lends it the
// store, the workspace, the gate's stamps and the echo guard.

func (h *Host) intake() *intake.Intake {
	return intake.New(intake.Config{Store: h.store, Loc: h.loc, Gate: h.gatekeeper(), Echo: &h.echo, EnsureAnchor: h.ensureAnchor, Door: h.door()})
}

// Record validates req and appends one evidence row (see
// intake.Intake.Record). Both modes.
func (h *Host) Record(ctx context.Context, req intake.RecordRequest) (intake.Evidence, error) {
	return h.intake().Record(ctx, req)
}

// RecordBatch imports JSON Lines evidence from r, every line validated
// before anything is written (see intake.Intake.RecordBatch).
func (h *Host) RecordBatch(ctx context.Context, r io.Reader, name string, defaults intake.RecordRequest, progress intake.Progress) (intake.BatchResult, error) {
	return h.intake().RecordBatch(ctx, r, name, defaults, progress)
}

// ImportRules imports the rules of agent rule files as evidence with
// candidate cards (see intake.Intake.ImportRules), and names the cards
// each new candidate nearly repeats (ImportedRule.NearDuplicates). Both
// modes.
func (h *Host) ImportRules(ctx context.Context, req intake.ImportRequest) (intake.ImportResult, error) {
	res, err := h.intake().ImportRules(ctx, req)
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

// refuseSecrets is the intake check for text that would be stored (see
// intake.RefuseSecrets).
func refuseSecrets(field, text string) error { return intake.RefuseSecrets(field, text) }
