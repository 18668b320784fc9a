package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/internal/bounded"
	"github.com/palacehq/palace/internal/finding"
)

// diagnosticsQueue debounces diagnostics: a change marks its document, and
// at most Debounce later one pass recomputes and publishes every marked
// one. The delay is not pushed back by further changes, so a save is
// reflected within Debounce plus the compute time.
type diagnosticsQueue struct {
	s *Server
	// runMu serializes passes, so publishes for one document stay in order.
	runMu sync.Mutex

	// mu guards the fields below.
	mu      sync.Mutex
	pending map[uri.URI]bool
	armed   bool
	// last is what was last published for each URI, encoded: a pass that
	// finds the same sends nothing, so one change is published once however
	// many passes it schedules. A URI never published counts as empty.
	last map[uri.URI]string
	// passes counts finished passes (tests and benchmarks wait on it).
	passes uint64
	cond   *sync.Cond
}

func (q *diagnosticsQueue) init(s *Server) {
	q.s = s
	q.pending = map[uri.URI]bool{}
	q.last = map[uri.URI]string{}
	q.cond = sync.NewCond(&q.mu)
}

// schedule marks u for the next pass.
func (q *diagnosticsQueue) schedule(u uri.URI) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending[u] = true
	if q.armed {
		return
	}
	q.armed = true
	time.AfterFunc(q.s.opts.Debounce, func() { q.s.goBackground(q.flush) })
}

func (q *diagnosticsQueue) flush(ctx context.Context) {
	q.mu.Lock()
	batch := q.pending
	q.pending = map[uri.URI]bool{}
	q.armed = false
	q.mu.Unlock()

	q.runMu.Lock()
	defer q.runMu.Unlock()
	for _, u := range slices.Sorted(maps.Keys(batch)) {
		if ctx.Err() != nil {
			return
		}
		q.publishOne(ctx, u)
	}
	q.mu.Lock()
	q.passes++
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *diagnosticsQueue) publishOne(ctx context.Context, u uri.URI) {
	s := q.s
	d, open := s.openDoc(u)
	var version int32
	var diags []protocol.Diagnostic
	if open {
		version = d.version
		var err error
		if diags, err = s.diagnose(ctx, d); err != nil {
			s.log.Printf("diagnostics of %s: %v", u, err)
			return
		}
	} else {
		path := fsPath(u)
		ws, err := s.workspaceFor(ctx, path)
		if err != nil || kindOf(path, ws.h.Home()) != kindBox {
			return
		}
		content, err := bounded.ReadFile(path, host.MaxBoxBytes)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Printf("read %s: %v", path, err)
			return
		}
		if err == nil {
			diags = s.boxDiagnostics(ctx, ws, newDocument(u, "jsonl", 0, string(content)))
		}
	}
	q.publish(u, version, open, diags)
}

// publish sends the diagnostics of u unless they are what was last sent
// for it (an empty list for a URI never published counts as sent).
func (q *diagnosticsQueue) publish(u uri.URI, version int32, versioned bool, diags []protocol.Diagnostic) {
	p := &protocol.PublishDiagnosticsParams{URI: u, Diagnostics: append([]protocol.Diagnostic{}, diags...)}
	if versioned {
		p.Version = protocol.NewOptional(version)
	}
	key := ""
	if len(diags) > 0 {
		b, err := json.Marshal(p)
		if err != nil {
			q.s.log.Printf("encode diagnostics of %s: %v", u, err)
			return
		}
		key = string(b)
	}
	q.mu.Lock()
	same := q.last[u] == key
	if key == "" {
		delete(q.last, u)
	} else {
		q.last[u] = key
	}
	q.mu.Unlock()
	if same {
		return
	}
	q.s.notify(protocol.MethodTextDocumentPublishDiagnostics, p)
}

// diagnose computes one open document's diagnostics by its kind.
func (s *Server) diagnose(ctx context.Context, d *document) ([]protocol.Diagnostic, error) {
	ws, err := s.workspaceFor(ctx, d.path)
	if err != nil {
		return nil, err
	}
	switch kindOf(d.path, ws.h.Home()) {
	case kindBox:
		return s.boxDiagnostics(ctx, ws, d), nil
	case kindPolicy:
		// The located errors of the last failed policy reload that fall in d.
		ws.mu.Lock()
		errs := ws.policyErrs[d.path]
		ws.mu.Unlock()
		return policyDiagnostics(d, errs), nil
	case kindCard:
		// The check of `palace cards check` — format, limits, secrets, the
		// status the file claims against the gate — on the buffer.
		return findingDiagnostics(d, ws.h.Team().CheckCardBuffer(ctx, d.path, []byte(d.text)), ""), nil
	default:
		if !s.currentSettings().Hints.Diagnostics {
			return nil, nil
		}
		return s.triggerDiagnostics(ctx, ws, d)
	}
}

// triggerDiagnostics turns trigger matches into Information (dao tiers) and
// Hint (shu, qi) diagnostics whose code is the card id.
func (s *Server) triggerDiagnostics(ctx context.Context, ws *workspace, d *document) ([]protocol.Diagnostic, error) {
	matches, err := ws.matches(ctx, d)
	if err != nil {
		return nil, err
	}
	out := make([]protocol.Diagnostic, 0, len(matches))
	for _, m := range matches {
		sev := protocol.DiagnosticSeverityHint
		if m.Card.Tier == domain.TierDaoTian || m.Card.Tier == domain.TierDaoRen {
			sev = protocol.DiagnosticSeverityInformation
		}
		data, _ := json.Marshal(map[string]string{"card": m.Card.ID, "pattern": m.Pattern})
		msg := fmt.Sprintf("%s (%s, %s, trigger %s)", m.Card.Label(), m.Card.Status, m.Card.Anchor.Kind, m.Pattern)
		if m.Stale != nil {
			// Stale advice may no longer hold: say what changed.
			sev = protocol.DiagnosticSeverityWarning
			msg = fmt.Sprintf("stale (%s): %s — %s", m.Stale.Reason, msg, strings.ReplaceAll(staleRepair(m.Card.ID, m.Stale), "`", ""))
		}
		if m.Contest != nil {
			// A contested card is a warning, not advice: do not apply it
			// until a human demotes or resolves it.
			sev = protocol.DiagnosticSeverityWarning
			msg = fmt.Sprintf("contested (%s): %s — do not apply it until a human demotes or resolves it", m.Contest.Detail(), msg)
		}
		out = append(out, protocol.Diagnostic{
			Range:    protocol.Range{Start: d.position(m.Line-1, m.Col-1), End: d.position(m.Line-1, m.EndCol-1)},
			Severity: sev,
			Code:     protocol.String(m.Card.ID),
			Source:   protocol.NewOptional("palace"),
			Message:  protocol.String(msg),
			Data:     data,
		})
	}
	lines, err := ws.h.StaleLinesIn(ctx, d.path)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		out = append(out, staleLinesDiagnostic(d, l))
	}
	return out, nil
}

// staleLinesDiagnostic marks lines a card cites that changed since its
// evidence saw them (the first line for a symbol or a whole file): a
// warning whose code is the card id.
func staleLinesDiagnostic(d *document, l host.StaleLines) protocol.Diagnostic {
	first, last := max(l.Line, 1)-1, max(l.EndLine, l.Line, 1)-1
	if n := len(d.lines); last >= n {
		last = max(n-1, 0)
		first = min(first, last)
	}
	data, _ := json.Marshal(map[string]string{"card": l.CardID, "evidence": l.EvidenceID})
	return protocol.Diagnostic{
		Range:    protocol.Range{Start: d.position(first, 0), End: d.lineEnd(last)},
		Severity: protocol.DiagnosticSeverityWarning,
		Code:     protocol.String(l.CardID),
		Source:   protocol.NewOptional("palace"),
		Message: protocol.String(fmt.Sprintf("‹%s› %s cites %s: %s since %s saw it — re-verify the card (palace verify %s) or demote it",
			l.Tier, l.Statement, l.SourceRef, l.Detail, l.EvidenceID, l.CardID)),
		Data: data,
	}
}

// boxDiagnostics runs the mailbox check — the engine of `palace mailbox
// check`, with the team's deny rules and history against HEAD — on a box's
// bytes.
func (s *Server) boxDiagnostics(ctx context.Context, ws *workspace, d *document) []protocol.Diagnostic {
	base, err := ws.h.Mail().CommittedBox(ctx, d.path)
	if err != nil {
		s.log.Printf("%v; checking without history", err)
	}
	return findingDiagnostics(d, ws.h.Mail().CheckBox(ctx, mail.BoxCheckRequest{Path: d.path, Content: []byte(d.text), Base: base}), "")
}

func policyDiagnostics(d *document, errs []finding.Finding) []protocol.Diagnostic {
	return findingDiagnostics(d, errs, " (the last good policy set keeps serving)")
}

// findingDiagnostics is the one conversion of findings — a box's, a card
// file's, a policy file's — to diagnostics: the range runs from the column
// to EndCol or the line's end (at least one character); suffix ends every
// message.
func findingDiagnostics[F finding.Placed](d *document, fs []F, suffix string) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(fs))
	for _, p := range fs {
		f := p.Located()
		line, col := max(f.Line, 1)-1, max(f.Col, 1)-1
		start := d.position(line, col)
		end := d.lineEnd(line)
		if f.EndCol > f.Col {
			end = d.position(line, f.EndCol-1)
		}
		if end.Character <= start.Character {
			end.Character = start.Character + 1
		}
		sev := protocol.DiagnosticSeverityError
		if f.Severity == finding.Warning {
			sev = protocol.DiagnosticSeverityWarning
		}
		out = append(out, protocol.Diagnostic{
			Range:    protocol.Range{Start: start, End: end},
			Severity: sev,
			Code:     protocol.String(f.Code),
			Source:   protocol.NewOptional("palace"),
			Message:  protocol.String(f.Message + suffix),
		})
	}
	return out
}

// publishPolicyErrors publishes the policy errors of every file that had or
// has some, open in the editor or not.
func (s *Server) publishPolicyErrors(old, cur map[string][]finding.Finding) {
	files := map[string][]finding.Finding{}
	maps.Copy(files, old)
	maps.Copy(files, cur)
	open := map[string]*document{}
	for _, d := range s.openDocs() {
		open[d.path] = d
	}
	for f := range files {
		if f == "" {
			continue
		}
		d, isOpen := open[f]
		if !isOpen {
			content, _ := bounded.ReadFile(f, host.MaxModuleBytes)
			d = newDocument(uri.File(f), "rego", 0, string(content))
		}
		s.diags.publish(d.uri, d.version, isOpen, policyDiagnostics(d, cur[f]))
	}
	if errs := cur[""]; len(errs) > 0 {
		s.logMessage(protocol.MessageTypeError, "policy errors without a file: %v", errs)
	}
}
