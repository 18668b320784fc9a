package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/mailbox"
	"github.com/palacehq/palace/internal/bounded"
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
	// nonEmpty are the URIs whose last publish had diagnostics, so a pass
	// that finds none clears them (and skips URIs that never had any).
	nonEmpty map[uri.URI]bool
	// passes counts finished passes (tests and benchmarks wait on it).
	passes uint64
	cond   *sync.Cond
}

func (q *diagnosticsQueue) init(s *Server) {
	q.s = s
	q.pending = map[uri.URI]bool{}
	q.nonEmpty = map[uri.URI]bool{}
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

// scheduleBox marks a box file, open or not.
func (q *diagnosticsQueue) scheduleBox(path string) { q.schedule(uri.File(path)) }

func (q *diagnosticsQueue) flush(ctx context.Context) {
	q.mu.Lock()
	batch := q.pending
	q.pending = map[uri.URI]bool{}
	q.armed = false
	q.mu.Unlock()

	q.runMu.Lock()
	defer q.runMu.Unlock()
	us := make([]uri.URI, 0, len(batch))
	for u := range batch {
		us = append(us, u)
	}
	sort.Slice(us, func(i, j int) bool { return us[i] < us[j] })
	for _, u := range us {
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
	d, open := s.docs.get(u)
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
		if err != nil || kindOfPath(path, ws.h.Home()) != kindBox {
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

// publish sends the diagnostics of u, skipping an empty list for a URI that
// has none published.
func (q *diagnosticsQueue) publish(u uri.URI, version int32, versioned bool, diags []protocol.Diagnostic) {
	q.mu.Lock()
	had := q.nonEmpty[u]
	q.nonEmpty[u] = len(diags) > 0
	q.mu.Unlock()
	if !had && len(diags) == 0 {
		return
	}
	p := &protocol.PublishDiagnosticsParams{URI: u, Diagnostics: diags}
	if diags == nil {
		p.Diagnostics = []protocol.Diagnostic{}
	}
	if versioned {
		p.Version = protocol.NewOptional(version)
	}
	q.s.notify(protocol.MethodTextDocumentPublishDiagnostics, p)
}

// clear drops the diagnostics of a closed document.
func (q *diagnosticsQueue) clear(u uri.URI) { q.publish(u, 0, false, nil) }

// waitPasses blocks until n passes have finished (tests).
func (q *diagnosticsQueue) waitPasses(n uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.passes < n {
		q.cond.Wait()
	}
}

// diagnose computes one open document's diagnostics by its kind.
func (s *Server) diagnose(ctx context.Context, d *document) ([]protocol.Diagnostic, error) {
	ws, err := s.workspaceFor(ctx, d.path)
	if err != nil {
		return nil, err
	}
	switch d.kind(ws.h.Home()) {
	case kindBox:
		return s.boxDiagnostics(ctx, ws, d), nil
	case kindPolicy:
		return s.policyDiagnostics(ws, d), nil
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
	if _, err := ws.sync(ctx); err != nil {
		return nil, err
	}
	hints, err := ws.hints(ctx, d)
	if err != nil {
		return nil, err
	}
	out := make([]protocol.Diagnostic, 0, len(hints.Matches))
	for _, m := range hints.Matches {
		sev := protocol.DiagnosticSeverityHint
		if m.Card.Tier == domain.TierDaoTian || m.Card.Tier == domain.TierDaoRen {
			sev = protocol.DiagnosticSeverityInformation
		}
		data, _ := json.Marshal(map[string]string{"card": m.Card.ID, "pattern": m.Pattern})
		msg := fmt.Sprintf("%s (%s, %s, trigger %s)", m.Card.Label(), m.Card.Status, m.Card.Anchor.Kind, m.Pattern)
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
	return out, nil
}

// boxDiagnostics runs the mailbox check — the engine of `palace mailbox
// check`, with the team's deny rules and history against HEAD — on a box's
// bytes.
func (s *Server) boxDiagnostics(ctx context.Context, ws *workspace, d *document) []protocol.Diagnostic {
	base := ws.committedBox(ctx, d.path)
	findings := ws.h.CheckBox(ctx, host.BoxCheckRequest{Path: d.path, Content: []byte(d.text), Base: base})
	out := make([]protocol.Diagnostic, 0, len(findings))
	for _, f := range findings {
		sev := protocol.DiagnosticSeverityError
		if f.Severity == mailbox.SeverityWarning {
			sev = protocol.DiagnosticSeverityWarning
		}
		end := f.EndCol
		if end <= f.Col {
			end = len(d.line(f.Line-1)) + 1
		}
		out = append(out, protocol.Diagnostic{
			Range:    protocol.Range{Start: d.position(f.Line-1, f.Col-1), End: d.position(f.Line-1, end-1)},
			Severity: sev,
			Code:     protocol.String(f.Code),
			Source:   protocol.NewOptional("palace"),
			Message:  protocol.String(f.Message),
		})
	}
	return out
}

// policyDiagnostics shows the located errors of the last failed policy
// reload that fall in d.
func (s *Server) policyDiagnostics(ws *workspace, d *document) []protocol.Diagnostic {
	ws.mu.Lock()
	errs := ws.policyErrs[d.path]
	ws.mu.Unlock()
	return policyDiags(d, errs)
}

func policyDiags(d *document, errs []policyError) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(errs))
	for _, e := range errs {
		line, col := max(e.Line, 1)-1, max(e.Col, 1)-1
		end := d.lineEnd(line)
		start := d.position(line, col)
		if end.Character <= start.Character {
			end.Character = start.Character + 1
		}
		out = append(out, protocol.Diagnostic{
			Range:    protocol.Range{Start: start, End: end},
			Severity: protocol.DiagnosticSeverityError,
			Code:     protocol.String(e.Code),
			Source:   protocol.NewOptional("palace"),
			Message:  protocol.String(e.Message + " (the last good policy set keeps serving)"),
		})
	}
	return out
}

// publishPolicyErrors publishes the policy errors of every file that had or
// has some, open in the editor or not.
func (s *Server) publishPolicyErrors(old, cur map[string][]policyError) {
	files := map[string]bool{}
	for f := range old {
		files[f] = true
	}
	for f := range cur {
		files[f] = true
	}
	open := map[string]*document{}
	for _, d := range s.docs.all() {
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
		s.diags.publish(d.uri, d.version, isOpen, policyDiags(d, cur[f]))
	}
	if errs := cur[""]; len(errs) > 0 {
		s.logMessage(protocol.MessageTypeError, "policy errors without a file: %v", errs)
	}
}
