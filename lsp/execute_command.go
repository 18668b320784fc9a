package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/ui"
)

// The commands of workspace/executeCommand. Each takes one argument, an
// object with the JSON names of the CLI flags (host's request types), plus
// "uri" for the document it is about.
const (
	cmdContext = "palace.context"
	cmdBrief   = "palace.brief"
	cmdRecord  = "palace.record"
	cmdDistill = "palace.distill"
	cmdGate    = "palace.gate"
	cmdPromote = "palace.promote"
	cmdDemote  = "palace.demote"
	cmdRetire  = "palace.retire"
	cmdPublish = "palace.publish"
	cmdResolve = "palace.resolve"
	cmdLink    = "palace.link"
	cmdVerify  = "palace.verify"
	// cmdAuditAction is `palace audit action`: argument id, action and
	// the action's fields (value, scope, anchor, reason).
	cmdAuditAction = "palace.auditAction"
	// cmdOpenCard answers {"url": …}, the card's page on the `palace ui`
	// running for this palace home, for the editor to open in a browser.
	cmdOpenCard = "palace.openCard"
)

// humanOnly are the commands agent mode neither advertises nor runs: the
// lifecycle changes only a person decides, as on the command line and
// over MCP. Linking evidence and verifying a card are evidence, open to
// both modes there too.
var humanOnly = map[string]bool{cmdPromote: true, cmdDemote: true, cmdRetire: true, cmdPublish: true, cmdResolve: true, cmdAuditAction: true}

// commandNames lists the commands advertised in mode m.
func commandNames(m host.Mode) []string {
	out := []string{cmdContext, cmdBrief, cmdRecord, cmdDistill, cmdGate, cmdLink, cmdVerify, cmdOpenCard}
	if m == host.Human {
		out = append(out, cmdPromote, cmdDemote, cmdRetire, cmdPublish, cmdResolve, cmdAuditAction)
	}
	return out
}

func (s *Server) executeCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (any, error) {
	if humanOnly[p.Command] && s.mode() != host.Human {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s is refused in agent mode: only a human may %s (the mode is fixed by --mode/%s=agent)",
			p.Command, strings.TrimPrefix(p.Command, "palace."), host.ModeEnv)
	}
	var arg json.RawMessage
	switch len(p.Arguments) {
	case 0:
	case 1:
		arg = json.RawMessage(p.Arguments[0])
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument object, got %d arguments", p.Command, len(p.Arguments))
	}
	decode := func(v any) error {
		if len(arg) == 0 || string(arg) == "null" {
			return nil
		}
		if err := strictDecode(arg, v); err != nil {
			return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid argument: %v", p.Command, err)
		}
		return nil
	}
	switch p.Command {
	case cmdContext:
		var a contextParams
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.palaceContext(ctx, &a)
	case cmdBrief:
		var a briefParams
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.palaceBrief(ctx, &a)
	case cmdRecord:
		var a recordParams
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.record(ctx, &a)
	case cmdDistill:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			intake.DistillRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Distill(ctx, a.DistillRequest) })
	case cmdGate:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.GateRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Gate(ctx, a.ID, a.GateRequest) })
	case cmdPromote:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.PromoteRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Promote(ctx, a.ID, a.PromoteRequest) })
	case cmdDemote:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.DemoteRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Demote(ctx, a.ID, a.DemoteRequest) })
	case cmdRetire:
		var a struct {
			URI    uri.URI `json:"uri,omitempty"`
			ID     string  `json:"id"`
			Reason string  `json:"reason"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Retire(ctx, a.ID, a.Reason) })
	case cmdPublish:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.PublishRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Publish(ctx, a.ID, a.PublishRequest) })
	case cmdResolve:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.ResolveRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Resolve(ctx, a.ID, a.ResolveRequest) })
	case cmdLink:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.LinkRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Link(ctx, a.ID, a.LinkRequest) })
	case cmdVerify:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.VerifyRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Verify(ctx, a.ID, a.VerifyRequest) })
	case cmdAuditAction:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
			host.AuditActionRequest
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.AuditAction(ctx, a.ID, a.AuditActionRequest) })
	case cmdOpenCard:
		var a struct {
			URI uri.URI `json:"uri,omitempty"`
			ID  string  `json:"id"`
		}
		if err := decode(&a); err != nil {
			return nil, err
		}
		return s.openCard(ctx, a.URI, a.ID)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q: use one of %s", p.Command, strings.Join(commandNames(s.mode()), ", "))
}

// withHost runs fn on the host of the document u (or of the first
// workspace folder) and returns its result as the CLI's JSON.
func (s *Server) withHost(ctx context.Context, u uri.URI, fn func(*host.Host) (any, error)) (any, error) {
	ws, err := s.commandWorkspace(ctx, u)
	if err != nil {
		return nil, rpcError(err)
	}
	res, err := fn(ws.h)
	if err != nil {
		// A gate denial still has an answer worth showing: send it as data.
		return nil, rpcError(err)
	}
	// The change is ours: move the caches on now rather than at the next poll.
	if _, err := ws.sync(ctx); err != nil {
		s.log.Printf("sync after command: %v", err)
	}
	return jsonResult(res)
}

// commandWorkspace picks the workspace of u, else of the first folder, else
// of the current directory.
func (s *Server) commandWorkspace(ctx context.Context, u uri.URI) (*workspace, error) {
	if path := fsPath(u); path != "" {
		return s.workspaceFor(ctx, path)
	}
	s.mu.Lock()
	var dir string
	if len(s.folders) > 0 {
		dir = s.folders[0]
	}
	s.mu.Unlock()
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("find a workspace: %w", err)
		}
	}
	return s.workspaceAt(ctx, dir)
}

// recordParams is palace.record's argument: host.RecordRequest plus the
// document and the selection to record as evidence.
type recordParams struct {
	URI   uri.URI         `json:"uri,omitempty"`
	Range *protocol.Range `json:"range,omitempty"`
	intake.RecordRequest
}

// record records evidence: the given content, else the selection of the
// open document (else its whole text), with a source_ref naming the file
// and lines unless one is given.
func (s *Server) record(ctx context.Context, a *recordParams) (any, error) {
	req := a.RecordRequest
	if req.Content == "" && a.URI != "" {
		d, err := s.document(a.URI)
		if err != nil {
			return nil, err
		}
		first, last := 0, len(d.lines)-1
		text := d.text
		if a.Range != nil {
			start, end := d.offset(a.Range.Start), d.offset(a.Range.End)
			if end < start {
				return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "palace.record: the range ends before it starts")
			}
			text = d.text[start:end]
			first, last = int(a.Range.Start.Line), int(a.Range.End.Line)
			if a.Range.End.Character == 0 && last > first {
				last--
			}
		}
		req.Content = text
		if req.SourceRef == "" {
			req.SourceRef = fmt.Sprintf("%s:%d-%d", s.relPath(ctx, d.path), first+1, last+1)
		}
	}
	return s.withHost(ctx, a.URI, func(h *host.Host) (any, error) { return h.Intake().Record(ctx, req) })
}

// relPath is path relative to its workspace's worktree, for source refs.
func (s *Server) relPath(ctx context.Context, path string) string {
	ws, err := s.workspaceFor(ctx, path)
	if err != nil {
		return path
	}
	root := ws.root
	if loc := ws.h.Location(); loc.InGit {
		root = loc.Worktree
	}
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}

// openCard finds card id (visible from the document's workspace) and the
// desk running for that workspace's palace home, and returns the card
// page's address.
func (s *Server) openCard(ctx context.Context, u uri.URI, id string) (any, error) {
	ws, err := s.commandWorkspace(ctx, u)
	if err != nil {
		return nil, rpcError(err)
	}
	if _, err := ws.h.ReadCard(ctx, id, false); err != nil {
		return nil, rpcError(err)
	}
	link, err := ui.CardURL(ws.h.Home(), id)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: %v", cmdOpenCard, err)
	}
	return map[string]string{"url": link}, nil
}
