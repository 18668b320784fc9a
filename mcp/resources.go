package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/pack"
)

// Resource URIs. A card is palace://card/{id}; the authoritative cards
// visible from the served directory are one listable document and, each,
// a resource of their own, so clients that surface resources (Claude
// Desktop, VS Code, the Inspector) show palace's memory without a tool call.
const (
	CardURITemplate     = "palace://card/{id}"
	cardURIPrefix       = "palace://card/"
	AuthoritativeURI    = "palace://cards/authoritative"
	PromptContextPack   = "context-pack"
	PromptDistill       = "distill-from-evidence"
	resourceMIME        = "application/json"
	authoritativeLimit  = 200
	defaultResyncPeriod = 2 * time.Second
)

// cardResources tracks which card resources the server lists, so a resync
// adds and removes only the difference; the SDK then sends
// notifications/resources/list_changed.
type cardResources struct {
	mu     sync.Mutex
	listed map[string]bool
}

func (s *Server) addResources() {
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: CardURITemplate,
		Name:        "card",
		Title:       "Knowledge card",
		Description: "One knowledge card by id (kc_…): statement, content, tier, status, anchor, scope and evidence counts, as JSON. Reading it records nothing.",
		MIMEType:    resourceMIME,
	}, s.readCard)
	s.srv.AddResource(&sdk.Resource{
		URI:         AuthoritativeURI,
		Name:        "authoritative-cards",
		Title:       "Authoritative cards here",
		Description: "The promoted and canonical cards visible from this workspace (worktree, repository and global anchors), dao_tian first, as JSON.",
		MIMEType:    resourceMIME,
	}, s.readAuthoritative)
}

// readCard answers resources/read for palace://card/{id}.
func (s *Server) readCard(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, cardURIPrefix)
	if !ok || id == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	c, err := s.h.ReadCard(ctx, id, false)
	if err != nil {
		if host.KindOf(err) == host.KindInvalid {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return jsonResource(uri, c)
}

// jsonResource is the contents of resource uri: v as JSON.
func jsonResource(uri string, v any) (*sdk.ReadResourceResult, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: resourceMIME, Text: string(b)}}}, nil
}

func (s *Server) authoritativeCards(ctx context.Context) ([]host.Card, error) {
	var out []host.Card
	for _, st := range domain.AuthoritativeStatuses() {
		cards, err := s.h.ListCards(ctx, host.CardFilter{Status: string(st), Limit: authoritativeLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, cards...)
	}
	slices.SortStableFunc(out, func(a, b host.Card) int { return a.Tier.Rank() - b.Tier.Rank() })
	return out[:min(len(out), authoritativeLimit)], nil
}

// readAuthoritative answers resources/read for the authoritative list.
func (s *Server) readAuthoritative(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	cards, err := s.authoritativeCards(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", AuthoritativeURI, err)
	}
	return jsonResource(AuthoritativeURI, map[string]any{"cards": nonNil(cards)})
}

// SyncResources lists each authoritative card visible from here as a
// resource and drops the ones that no longer are; any change makes the SDK
// send notifications/resources/list_changed to connected clients. Run
// calls it at start, after every tool call and every few seconds, so
// changes made by other processes (a human's `palace promote`) show too.
func (s *Server) SyncResources(ctx context.Context) error {
	cards, err := s.authoritativeCards(ctx)
	if err != nil {
		return err
	}
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	want := make(map[string]bool, len(cards))
	for _, c := range cards {
		uri := cardURIPrefix + c.ID
		want[uri] = true
		if s.res.listed[uri] {
			continue
		}
		s.srv.AddResource(&sdk.Resource{
			URI:         uri,
			Name:        c.ID,
			Title:       fmt.Sprintf("%s · %s", c.Tier, c.Statement),
			Description: fmt.Sprintf("%s %s card at the %s anchor", c.Status, c.Tier, c.Anchor.Kind),
			MIMEType:    resourceMIME,
		}, s.readCard)
	}
	var gone []string
	for uri := range s.res.listed {
		if !want[uri] {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	s.res.listed = want
	return nil
}

// resync keeps the card resources current until ctx ends.
func (s *Server) resync(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.SyncResources(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("card resources not refreshed", "error", err)
			}
		}
	}
}

func (s *Server) addPrompts() {
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        PromptContextPack,
		Title:       "Context pack for a task",
		Description: "palace's context pack for a task: the authoritative cards that apply, with citations, to put in front of the model before it starts.",
		Arguments: []*sdk.PromptArgument{
			{Name: "task", Title: "Task", Description: "What you are about to do, in a few words.", Required: true},
			{Name: "file", Title: "File", Description: "The file you work on, relative to the workspace (optional)."},
		},
	}, s.contextPrompt)
	s.srv.AddPrompt(&sdk.Prompt{
		Name:        PromptDistill,
		Title:       "Distill a card from evidence",
		Description: "Guides the model to propose one candidate card from recorded evidence with palace_distill, citing the evidence ids, then to ask palace_gate what a promotion needs.",
		Arguments: []*sdk.PromptArgument{
			{Name: "evidence", Title: "Evidence ids", Description: "Comma-separated evidence ids (ev_…) the card should cite.", Required: true},
			{Name: "field", Title: "Field", Description: "The knowledge field of the card (optional)."},
		},
	}, s.distillPrompt)
}

func (s *Server) contextPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	task := strings.TrimSpace(req.Params.Arguments["task"])
	if task == "" {
		return nil, fmt.Errorf("prompt %s: argument \"task\" is required: say what you are about to do", PromptContextPack)
	}
	// A prompt is a preview the user picks: it must not count as an
	// injection in lane telemetry, so it is a dry run.
	pack, err := s.h.Pack().Context(ctx, pack.ContextRequest{Query: task, File: req.Params.Arguments["file"], DryRun: true, Fetch: pack.FetchByMCPTool})
	if err != nil {
		return nil, fmt.Errorf("prompt %s: %s", PromptContextPack, Reword(ErrorText(err)))
	}
	text := fmt.Sprintf("Task: %s\n\nFollow this project memory from palace while you work (call palace_context again when you move to another file):\n\n%s", task, pack.Rendered)
	return &sdk.GetPromptResult{
		Description: "palace context pack for: " + task,
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}},
	}, nil
}

func (s *Server) distillPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	var ids []string
	for _, id := range strings.Split(req.Params.Arguments["evidence"], ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("prompt %s: argument \"evidence\" is required: comma-separated evidence ids (ev_…)", PromptDistill)
	}
	var b strings.Builder
	b.WriteString("Propose one knowledge card from this evidence recorded in palace.\n\n")
	for _, id := range ids {
		e, err := s.h.ShowEvidence(ctx, id, false)
		if err != nil {
			return nil, fmt.Errorf("prompt %s: argument \"evidence\": %s", PromptDistill, Reword(ErrorText(err)))
		}
		fmt.Fprintf(&b, "<evidence id=%q field=%q provenance=%q source=%q>\n%s\n</evidence>\n\n", e.ID, e.Field, e.Provenance, e.SourceRef, strings.TrimSpace(e.Content))
	}
	field := req.Params.Arguments["field"]
	if field == "" {
		field = "the evidence's field"
	}
	fmt.Fprintf(&b, `Then:
1. Write one short, checkable statement (at most 280 characters) that the evidence supports; pick the narrowest tier that fits (qi: one tool, shu: a method, dao_ren: a law of this domain).
2. Call palace_distill with that statement, the tier, field %s, and supporting set to the evidence ids above that back it (counterexample for any that contradict it).
3. Call palace_gate with the new card's id and tell the user what a promotion still needs. Do not promote it yourself.`, field)
	return &sdk.GetPromptResult{
		Description: "distill a candidate card from " + strings.Join(ids, ", "),
		Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: b.String()}}},
	}, nil
}
