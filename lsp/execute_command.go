package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/ui"
)

const (
	cmdContext  = "palace.context"
	cmdOpenCard = "palace.openCard"
)

// commands are the commands of workspace/executeCommand, in the order they
// are advertised. Each takes one argument object with the JSON names of the
// CLI flags, plus "uri" for the document it is about. Those marked human
// are the lifecycle changes only a person decides: agent mode neither
// advertises nor runs them, as on the command line and over MCP.
// palace.openCard answers {"url": …}, the card's page on the `palace ui`
// running for this palace home.
var commands = []cmdEntry{
	{cmdContext, false, decoded((*Server).palaceContext)},
	{"palace.brief", false, decoded((*Server).palaceBrief)},
	{"palace.record", false, decoded((*Server).record)},
	{"palace.distill", false, onHost(func(ctx context.Context, h *host.Host, a struct {
		docArg
		intake.DistillRequest
	}) (any, error) {
		return h.Distill(ctx, a.DistillRequest)
	})},
	{"palace.gate", false, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.GateRequest
	}) (any, error) {
		return h.Gate(ctx, a.ID, a.GateRequest)
	})},
	{"palace.link", false, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.LinkRequest
	}) (any, error) {
		return h.Link(ctx, a.ID, a.LinkRequest)
	})},
	{"palace.verify", false, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.VerifyRequest
	}) (any, error) {
		return h.Verify(ctx, a.ID, a.VerifyRequest)
	})},
	{cmdOpenCard, false, decoded((*Server).openCard)},
	{"palace.promote", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.PromoteRequest
	}) (any, error) {
		return h.Promote(ctx, a.ID, a.PromoteRequest)
	})},
	{"palace.demote", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.DemoteRequest
	}) (any, error) {
		return h.Demote(ctx, a.ID, a.DemoteRequest)
	})},
	{"palace.retire", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		Reason string `json:"reason"`
	}) (any, error) {
		return h.Retire(ctx, a.ID, a.Reason)
	})},
	{"palace.publish", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.PublishRequest
	}) (any, error) {
		return h.Publish(ctx, a.ID, a.PublishRequest)
	})},
	{"palace.resolve", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.ResolveRequest
	}) (any, error) {
		return h.Resolve(ctx, a.ID, a.ResolveRequest)
	})},
	{"palace.auditAction", true, onHost(func(ctx context.Context, h *host.Host, a struct {
		cardArg
		host.AuditActionRequest
	}) (any, error) {
		return h.AuditAction(ctx, a.ID, a.AuditActionRequest)
	})},
}

type cmdEntry struct {
	name  string
	human bool
	run   command
}

type docArg struct {
	URI uri.URI `json:"uri,omitempty"`
}

type cardArg struct {
	docArg
	ID string `json:"id"`
}

func (a docArg) doc() uri.URI { return a.URI }

// command runs one command on its argument (nil when none was sent).
type command func(s *Server, ctx context.Context, name string, arg json.RawMessage) (any, error)

// decoded adapts fn to a strictly decoded argument.
func decoded[A, R any](fn func(*Server, context.Context, *A) (R, error)) command {
	return func(s *Server, ctx context.Context, name string, arg json.RawMessage) (any, error) {
		var a A
		if err := decodeArg(arg, &a); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s: invalid argument: %v", name, err)
		}
		return fn(s, ctx, &a)
	}
}

// onHost adapts a command that is one host call, made on the host of the
// argument's document (see withHost).
func onHost[A interface{ doc() uri.URI }](fn func(context.Context, *host.Host, A) (any, error)) command {
	return decoded(func(s *Server, ctx context.Context, a *A) (any, error) {
		return s.withHost(ctx, (*a).doc(), func(h *host.Host) (any, error) { return fn(ctx, h, *a) })
	})
}

// commandNames lists the commands advertised in mode m.
func commandNames(m host.Mode) []string {
	var out []string
	for _, c := range commands {
		if !c.human || m == host.Human {
			out = append(out, c.name)
		}
	}
	return out
}

func (s *Server) executeCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (any, error) {
	i := slices.IndexFunc(commands, func(c cmdEntry) bool { return c.name == p.Command })
	if i >= 0 && commands[i].human && s.opts.Mode != host.Human {
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
	if i < 0 {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q: use one of %s", p.Command, strings.Join(commandNames(s.opts.Mode), ", "))
	}
	return commands[i].run(s, ctx, p.Command, arg)
}

// withHost runs fn on the host of the document u (or of the first
// workspace folder) and returns its result as the CLI's JSON.
func (s *Server) withHost(ctx context.Context, u uri.URI, fn func(*host.Host) (any, error)) (any, error) {
	ws, err := s.commandWorkspace(ctx, u)
	if err != nil {
		return nil, err
	}
	res, err := fn(ws.h)
	if err != nil {
		return nil, err
	}
	// The change is ours: move the caches on now rather than at the next poll.
	if err := ws.sync(ctx); err != nil {
		s.log.Printf("sync after command: %v", err)
	}
	return jsonResult(res, nil)
}

// commandWorkspace picks the workspace of u, else of the first folder, else
// of the current directory.
func (s *Server) commandWorkspace(ctx context.Context, u uri.URI) (*workspace, error) {
	path := fsPath(u)
	s.mu.Lock()
	if path == "" && len(s.folders) > 0 {
		path = s.folders[0]
	}
	s.mu.Unlock()
	return s.workspaceFor(ctx, path)
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

// openCard finds the card (visible from the document's workspace) and the
// desk running for that workspace's palace home, and returns the card
// page's address.
func (s *Server) openCard(ctx context.Context, a *cardArg) (any, error) {
	ws, err := s.commandWorkspace(ctx, a.URI)
	if err != nil {
		return nil, err
	}
	if _, err := ws.h.ReadCard(ctx, a.ID, false); err != nil {
		return nil, err
	}
	link, err := ui.CardURL(ws.h.Home(), a.ID)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "%s: %v", cmdOpenCard, err)
	}
	return map[string]string{"url": link}, nil
}
