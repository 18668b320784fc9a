// Package adoption records and reports adoption signals: what happened after
// a context pack. Signals are evidence about use, never authority: they
// change no status and count toward no gate. A signal counts once per actor,
// card and request, at most cardview.SignalsPerCardDay per card, day and
// actor type; a contradiction citing visible evidence contests its card
// through Config.Contest. host imports adoption.
package adoption

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// Signals are the adoption signals, in the order reports list them.
var Signals = []string{"used", "accepted", "rejected", "miss", "rollback", "contradiction", "neutral"}

// outcomeSignals are the signals that say how a card fared: without a note
// or a request they carry little.
var outcomeSignals = []string{"used", "accepted", "rejected", "rollback", "contradiction"}

// MaxSignalNoteRunes bounds a signal's note and query.
const MaxSignalNoteRunes = 2000

// Config is what adoption needs of the palace it records into. Every field
// is required.
type Config struct {
	jobenv.Env
	ActorType domain.ActorType
	// TelemetryDays is the retention of request records, for a warning.
	TelemetryDays int
	// RefuseSecrets is the intake check for stored text (a KindDenied
	// error naming each secret found).
	RefuseSecrets func(field, text string) error
	// Contest contests an authoritative card that a contradiction names
	// with its evidence; it reports whether the card is contested now.
	Contest func(ctx context.Context, cardID, reason, evidenceID, source string) (bool, error)
	// ChainIDs are the anchors visible from the caller: a signal's card and
	// evidence must be anchored to one of them.
	ChainIDs []string
}

// Adoption records and reports the signals of one palace.
type Adoption struct{ cfg Config }

func New(cfg Config) *Adoption { return &Adoption{cfg: cfg} }

// Request is one adoption signal to record.
type Request struct {
	// Signal is one of Signals.
	Signal string `json:"signal"`
	// CardID is the card the signal is about; required but for a miss.
	CardID string `json:"card_id,omitempty"`
	// RequestID is the context pack's request_id; the signal then counts
	// for requests like that one.
	RequestID string `json:"request_id,omitempty"`
	// Query says what was asked or needed (a miss's usual form), when no
	// request id names it.
	Query string `json:"query,omitempty"`
	// Field is the topic; defaults to the card's field.
	Field string `json:"field,omitempty"`
	// EvidenceID links the evidence a contradiction rests on.
	EvidenceID string `json:"evidence_id,omitempty"`
	Note       string `json:"note,omitempty"`
	// AllowWarnings records a signal whose check found only warnings.
	AllowWarnings bool `json:"allow_warnings,omitempty"`
	// CheckOnly checks the record and writes nothing.
	CheckOnly bool `json:"check_only,omitempty"`
}

// Result is the check of a signal and, when written, the event.
type Result struct {
	// Quality is ready, warning or invalid.
	Quality  string   `json:"quality"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
	Written  bool     `json:"written"`
	// Event is the recorded row (or, for a check, the row it would be).
	Event store.AdoptionEvent `json:"event"`
	// Effect says what the signal does, in a sentence.
	Effect string `json:"effect"`
	// Contested is true when a contradiction contested its card.
	Contested bool `json:"contested,omitempty"`
	// Counts is whether the signal counts toward the lanes input: not when
	// neutral, a miss naming no card, a repeat or over the daily limit
	// (NotCounted says which).
	Counts bool `json:"counts"`
	// NotCounted says why a signal about a card does not count, "" when
	// it counts.
	NotCounted string `json:"not_counted,omitempty"`
}

// Adopt checks an adoption signal and records it. One without information
// or reaching outside the caller's chain is KindInvalid and writes nothing;
// warnings refuse too unless AllowWarnings; CheckOnly writes nothing. A
// repeat or one over the daily limit is recorded and counts nowhere.
func (a *Adoption) Adopt(ctx context.Context, req Request) (Result, error) {
	res, ev, err := a.checkAdoption(ctx, req)
	if err != nil {
		return res, err
	}
	if req.CheckOnly {
		if res.Quality != "invalid" {
			err = a.countVerdict(ctx, &res, false)
		}
		return res, err
	}
	switch {
	case res.Quality == "invalid":
		return res, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "signal", Msg: "the signal was not recorded: " + strings.Join(res.Errors, "; ")}
	case res.Quality == "warning" && !req.AllowWarnings:
		return res, &hosterr.Error{Kind: hosterr.KindInvalid, Field: "signal", Msg: "the signal was not recorded, it carries little information: " +
			strings.Join(res.Warnings, "; ") + " (fix that, or pass --allow-warnings to record it anyway)"}
	}
	if err := a.cfg.Store.InsertAdoption(ctx, ev); err != nil {
		return res, hosterr.Internal(err, "record adoption signal")
	}
	res.Written = true
	if err := a.countVerdict(ctx, &res, true); err != nil {
		return res, err
	}
	if ev.Signal == "contradiction" && ev.CardID != "" && ev.EvidenceID != "" {
		// A contradiction with its evidence contests an authoritative card
		// (status unchanged), in palace's own words, never the note.
		reason := fmt.Sprintf("contradiction signal %s cites evidence %s", ev.ID, ev.EvidenceID)
		contested, err := a.cfg.Contest(ctx, ev.CardID, reason, ev.EvidenceID, "adoption:"+ev.ID)
		if err != nil {
			return res, err
		}
		res.Contested = contested
	}
	return res, nil
}

// countVerdict sets whether the signal counts (or would), by
// cardview.SignalVerdicts over the card's signals of the cooling window.
func (a *Adoption) countVerdict(ctx context.Context, res *Result, written bool) error {
	ev := res.Event
	if ev.CardID == "" || ev.Signal == "neutral" {
		return nil
	}
	sigs, err := a.cfg.Store.CardSignals(ctx, []string{ev.CardID}, store.FormatTime(a.cfg.Now().Add(-cardview.CoolingWindow)))
	if err != nil {
		if written {
			return hosterr.Internal(err, "read adoption signals of %s (signal %s is recorded)", ev.CardID, ev.ID)
		}
		return hosterr.Internal(err, "check adoption signal")
	}
	if !written {
		sigs = append(sigs, ev.CardSignal())
	}
	verdicts := cardview.SignalVerdicts(sigs)
	for i, s := range sigs {
		if s.ID == ev.ID {
			res.Counts = verdicts[i] == ""
			res.NotCounted = cardview.NotCountedReason(verdicts[i], ev.CardID, ev.ActorType)
		}
	}
	if !res.Counts {
		res.Effect = "recorded and counts nowhere: " + res.NotCounted
	}
	return nil
}

// checkAdoption applies the record-quality rules and builds the row. Only
// storage failures are returned as errors.
func (a *Adoption) checkAdoption(ctx context.Context, req Request) (Result, store.AdoptionEvent, error) {
	res := Result{Errors: []string{}, Warnings: []string{}}
	bad := func(format string, args ...any) { res.Errors = append(res.Errors, fmt.Sprintf(format, args...)) }
	warn := func(format string, args ...any) { res.Warnings = append(res.Warnings, fmt.Sprintf(format, args...)) }
	sig := strings.TrimSpace(req.Signal)
	req.Note, req.Query = strings.TrimSpace(req.Note), strings.TrimSpace(req.Query)
	now := a.cfg.Now()
	ev := store.AdoptionEvent{
		ID: store.NewID(store.AdoptionPrefix, now), Signal: sig, CardID: strings.TrimSpace(req.CardID),
		RequestID: strings.TrimSpace(req.RequestID), Query: req.Query, Field: strings.TrimSpace(req.Field),
		EvidenceID: strings.TrimSpace(req.EvidenceID), Note: req.Note,
		Actor: a.cfg.Actor, ActorType: a.cfg.ActorType, CreatedAt: store.FormatTime(now),
	}
	if set, err := a.cfg.Policies(ctx); err == nil {
		ev.PolicyHash = set.Hash()
	}
	if !slices.Contains(Signals, sig) {
		bad("signal %q is not valid: use one of %s", sig, strings.Join(Signals, ", "))
	}
	for _, f := range []struct{ name, v string }{{"note", req.Note}, {"query", req.Query}, {"field", ev.Field}} {
		switch {
		case !utf8.ValidString(f.v):
			bad("--%s is not valid UTF-8", f.name)
		case utf8.RuneCountInString(f.v) > MaxSignalNoteRunes:
			bad("--%s is %d characters, over %d: keep it to what happened", f.name, utf8.RuneCountInString(f.v), MaxSignalNoteRunes)
		default:
			if err := a.cfg.RefuseSecrets(f.name, f.v); err != nil {
				bad("%v", err)
			}
		}
	}
	if ev.CardID == "" && sig != "miss" && slices.Contains(Signals, sig) {
		bad("signal %s needs --card ID: the card it is about (only a miss may name none)", sig)
	}
	if sig == "miss" && ev.CardID == "" && req.Note == "" && req.Query == "" && ev.RequestID == "" {
		bad("a miss needs --note (what you needed and did not get), --query or --request")
	}
	if ev.CardID != "" {
		c, err := a.cfg.Store.Card(ctx, ev.CardID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			bad("card %s does not exist: pass the id of a card from the pack (kc_…)", ev.CardID)
		case err != nil:
			return res, ev, hosterr.Internal(err, "check adoption signal")
		case !slices.Contains(a.cfg.ChainIDs, c.AnchorID):
			bad("card %s is not in this checkout's memory (its worktree, repository or global anchors): a signal names a card of the memory it was given from; signal it from a checkout of the card's repository", ev.CardID)
		case ev.Field == "":
			ev.Field = c.Field
		}
	}
	if ev.EvidenceID != "" {
		e, err := a.cfg.Store.Evidence(ctx, ev.EvidenceID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			bad("evidence %s does not exist: record the evidence first (palace record) and pass its id", ev.EvidenceID)
		case err != nil:
			return res, ev, hosterr.Internal(err, "check adoption signal")
		case !slices.Contains(a.cfg.ChainIDs, e.AnchorID):
			bad("evidence %s is not in this checkout's memory (its worktree, repository or global anchors): record what you saw here (palace record) and pass that id", ev.EvidenceID)
		}
	}
	switch {
	case ev.RequestID != "":
		rt, err := a.cfg.Store.RequestTermsOf(ctx, ev.RequestID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			warn("request %s is not on record (a dry run, a request that was about nothing, or older than the %d-day telemetry window): the signal will count for every request", ev.RequestID, a.cfg.TelemetryDays)
			ev.RequestTerms = pack.Signature(req.Query, "", "", nil)
		case err != nil:
			return res, ev, hosterr.Internal(err, "check adoption signal")
		default:
			ev.RequestTerms = rt.Terms
			ev.Query = cmp.Or(ev.Query, rt.Query)
			ev.Field = cmp.Or(ev.Field, fieldOfSignature(rt.Terms))
		}
	case req.Query != "":
		ev.RequestTerms = pack.Signature(req.Query, "", "", nil)
	}
	if slices.Contains(outcomeSignals, sig) && req.Note == "" && ev.RequestID == "" && req.Query == "" {
		warn("a %s signal with neither --note nor --request says nothing of what happened: name the pack's request id or add a note", sig)
	}
	if sig == "contradiction" && ev.EvidenceID == "" {
		warn("a contradiction without --evidence does not contest the card, it is only a suggestion to review: record what contradicts the card (palace record) and pass its id")
	}
	res.Quality = "ready"
	if len(res.Warnings) > 0 {
		res.Quality = "warning"
	}
	if len(res.Errors) > 0 {
		res.Quality = "invalid"
	}
	res.Event = ev
	res.Effect = signalEffect(ev)
	return res, ev, nil
}

// signalEffect says in a sentence what a signal does.
func signalEffect(ev store.AdoptionEvent) string {
	where := "for requests like " + cmp.Or(ev.RequestID, "this query")
	if ev.RequestTerms == "" {
		where = "for every request (it names no request)"
	}
	switch ev.Signal {
	case "used", "accepted":
		return fmt.Sprintf("warms %s %s; its status is unchanged", ev.CardID, where)
	case "rejected", "rollback":
		return fmt.Sprintf("cools %s %s; its status is unchanged", ev.CardID, where)
	case "miss":
		if ev.CardID != "" {
			return fmt.Sprintf("warms %s %s and lists the miss in `palace adoption review`", ev.CardID, where)
		}
		return "lists the miss in `palace adoption review`, the queue of knowledge to distill next"
	case "contradiction":
		if ev.EvidenceID == "" {
			return fmt.Sprintf("flags %s in `palace audit` as a suggestion to review; without evidence it does not contest the card, and its status is unchanged", ev.CardID)
		}
		return fmt.Sprintf("contests %s with evidence %s when it is authoritative (context shows it as a reference with a warning and that citation) and flags it in `palace audit` with a suggested demotion; its status is unchanged until a person demotes or resolves it", ev.CardID, ev.EvidenceID)
	}
	return "recorded for review; it changes no lane"
}

// fieldOfSignature is the field a request signature names, "" for none.
func fieldOfSignature(sig string) string {
	for _, t := range strings.Fields(sig) {
		if f, ok := strings.CutPrefix(t, "field:"); ok {
			return f
		}
	}
	return ""
}
