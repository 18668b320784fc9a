package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/mcp"
)

// TestToolSchemasSuitFormClients checks what clients that build arguments
// from the schema rely on: plain types (no ["null", T]), patterns on ids,
// the statement's length, date formats, non-empty required lists, and an
// output schema for the structured result every tool returns.
func TestToolSchemasSuitFormClients(t *testing.T) {
	s := connect(t, newPalaceEnv(t).open(t, host.Human))
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]map[string]any{}
	for _, tl := range res.Tools {
		schema := tl.InputSchema.(map[string]any)
		ps, _ := schema["properties"].(map[string]any)
		for name, p := range ps {
			pm := p.(map[string]any)
			props[tl.Name+"."+name] = pm
			if _, ok := pm["type"].(string); !ok {
				t.Errorf("%s.%s: type %v is not one plain type", tl.Name, name, pm["type"])
			}
			if items, ok := pm["items"].(map[string]any); ok {
				if _, ok := items["type"].(string); !ok {
					t.Errorf("%s.%s items: type %v", tl.Name, name, items["type"])
				}
			}
		}
		out, ok := tl.OutputSchema.(map[string]any)
		if !ok || out["type"] != "object" {
			t.Errorf("%s: output schema %v, want an object schema", tl.Name, tl.OutputSchema)
		}
	}
	want := map[string]string{
		"palace_cards.limit":           `"type":"integer"`,
		"palace_record.tags":           `"type":"array"`,
		"palace_gate.id":               `"pattern":"^kc_`,
		"palace_link.evidence_id":      `"pattern":"^ev_`,
		"palace_distill.supporting":    `"minItems":1`,
		"palace_demote.counterexample": `"minItems":1`,
		"palace_distill.statement":     `"maxLength":280`,
		"palace_distill.review_after":  `"format":"date"`,
		"palace_mailbox_file.answers":  `"pattern":"^[0-9a-f]{12}$"`,
	}
	for prop, frag := range want {
		b, _ := json.Marshal(props[prop])
		if !strings.Contains(string(b), frag) {
			t.Errorf("%s schema %s lacks %s", prop, b, frag)
		}
	}
	// The patterns accept the ids palace makes.
	id := s.record("an evidence row")
	if !regexp.MustCompile(props["palace_link.evidence_id"]["pattern"].(string)).MatchString(id) {
		t.Errorf("evidence pattern rejects %s", id)
	}
}

func TestResourcesAndPrompts(t *testing.T) {
	e := newPalaceEnv(t)
	h := e.open(t, host.Human)
	changed := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := mcp.New(h, mcp.Options{Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "palace-test", Version: "1"}, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	s := &session{t: t, cs: cs}

	tpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "palace://card/{id}" {
		t.Fatalf("resources/templates/list: %+v %v", tpl, err)
	}
	uris := func() []string {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		return out
	}
	if got := uris(); strings.Join(got, " ") != mcp.AuthoritativeURI {
		t.Fatalf("fresh palace lists %v", got)
	}

	seen, fixed := s.record("without WAL: database is locked"), s.record("with WAL: 50 of 50 runs pass")
	id := s.ok(mcp.ToolDistill, map[string]any{"statement": "Open SQLite in WAL mode", "tier": "qi", "supporting": []string{seen}})["id"].(string)
	for len(changed) > 0 {
		<-changed
	}
	s.ok(mcp.ToolPromote, map[string]any{"id": id, "reason": "verified", "verification": []string{fixed}})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/resources/list_changed after a promote")
	}
	if got := uris(); !strings.Contains(strings.Join(got, " "), "palace://card/"+id) {
		t.Fatalf("after promote resources/list is %v", got)
	}

	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "palace://card/" + id})
	if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, `"statement":"Open SQLite in WAL mode"`) {
		t.Fatalf("resources/read card: %+v %v", read, err)
	}
	all, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: mcp.AuthoritativeURI})
	if err != nil || !strings.Contains(all.Contents[0].Text, id) {
		t.Fatalf("resources/read authoritative: %+v %v", all, err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "palace://card/kc_nope"}); err == nil {
		t.Error("reading an unknown card succeeded")
	}

	p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.PromptContextPack, Arguments: map[string]string{"task": "sqlite locking"}})
	if err != nil || len(p.Messages) != 1 || !strings.Contains(p.Messages[0].Content.(*sdk.TextContent).Text, id) {
		t.Fatalf("prompts/get context-pack: %+v %v", p, err)
	}
	p, err = cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.PromptDistill, Arguments: map[string]string{"evidence": seen + ", " + fixed}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*sdk.TextContent).Text, "with WAL: 50 of 50 runs pass") {
		t.Fatalf("prompts/get distill-from-evidence: %+v %v", p, err)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: mcp.PromptDistill, Arguments: map[string]string{"evidence": "ev_nope"}}); err == nil ||
		strings.Contains(err.Error(), "palace evidence list") {
		t.Errorf("distill prompt of unknown evidence: %v", err)
	}
}
