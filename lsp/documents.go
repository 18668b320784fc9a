package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host/pack"
)

// docKind says which palace feature a document gets.
type docKind int

const (
	// kindSource is any file palace's knowledge may apply to: hover, code
	// lens, inlay hints, trigger diagnostics.
	kindSource docKind = iota
	// kindBox is a mailbox box (.palace/inbox.jsonl or $PALACE_HOME/inbox.jsonl):
	// mailbox check diagnostics.
	kindBox
	// kindPolicy is a .rego file under a policy source: compile diagnostics.
	kindPolicy
	// kindCard is a card file (.palace/cards/<id>.md): the findings of
	// `palace cards check`.
	kindCard
)

// document is one immutable snapshot of an open buffer; a change makes a new
// one, so readers never lock.
type document struct {
	uri     uri.URI
	path    string
	lang    string
	version int32
	text    string
	// lines holds the byte offset of each line's start.
	lines []int
}

func newDocument(u uri.URI, lang string, version int32, text string) *document {
	d := &document{uri: u, path: fsPath(u), lang: lang, version: version, text: text}
	d.lines = append(make([]int, 0, 64), 0)
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		d.lines = append(d.lines, i)
	}
	return d
}

// kindOf classifies a document by its path (home is the palace home).
func kindOf(path, home string) docKind {
	if path == "" {
		return kindSource
	}
	base := filepath.Base(path)
	dir := filepath.Dir(path)
	switch {
	case base == "inbox.jsonl" && (filepath.Base(dir) == ".palace" || (home != "" && dir == filepath.Clean(home))):
		return kindBox
	case strings.HasSuffix(base, ".rego") && underPolicies(path, home):
		return kindPolicy
	case strings.HasSuffix(base, cardfile.Ext) && filepath.Base(dir) == "cards" && filepath.Base(filepath.Dir(dir)) == ".palace":
		return kindCard
	}
	return kindSource
}

// underPolicies reports whether path is inside a .palace/policies folder or
// $PALACE_HOME/policies.
func underPolicies(path, home string) bool {
	sep := string(filepath.Separator)
	if strings.Contains(path, sep+".palace"+sep+"policies"+sep) {
		return true
	}
	return home != "" && strings.HasPrefix(path, filepath.Join(home, "policies")+sep)
}

// line returns line i (0-based) without its line break.
func (d *document) line(i int) string {
	if i < 0 || i >= len(d.lines) {
		return ""
	}
	end := len(d.text)
	if i+1 < len(d.lines) {
		end = d.lines[i+1] - 1
	}
	return strings.TrimSuffix(d.text[d.lines[i]:end], "\r")
}

// offset converts an LSP position (UTF-16 code units) to a byte offset,
// clamped to the document as the LSP asks.
func (d *document) offset(p protocol.Position) int {
	if int(p.Line) >= len(d.lines) {
		return len(d.text)
	}
	line := d.line(int(p.Line))
	return d.lines[p.Line] + utf16ToByte(line, int(p.Character))
}

// position converts a 0-based line and byte column to an LSP position.
func (d *document) position(line, byteCol int) protocol.Position {
	return protocol.Position{Line: uint32(line), Character: uint32(byteToUTF16(d.line(line), byteCol))}
}

// lineEnd is the position at the end of line i.
func (d *document) lineEnd(i int) protocol.Position { return d.position(i, len(d.line(i))) }

// utf16ToByte returns the byte offset in s of UTF-16 offset u (clamped).
func utf16ToByte(s string, u int) int {
	n := 0
	for i, r := range s {
		if n >= u {
			return i
		}
		n += utf16.RuneLen(r)
	}
	return len(s)
}

// byteToUTF16 returns the UTF-16 length of s[:b] (b clamped).
func byteToUTF16(s string, b int) int {
	if b > len(s) {
		b = len(s)
	}
	n := 0
	for _, r := range s[:b] {
		n += utf16.RuneLen(r)
	}
	return n
}

// apply returns the document after one content change.
func (d *document) apply(c protocol.TextDocumentContentChangeEvent, version int32) (*document, error) {
	switch c := c.(type) {
	case *protocol.TextDocumentContentChangeWholeDocument:
		return newDocument(d.uri, d.lang, version, c.Text), nil
	case *protocol.TextDocumentContentChangePartial:
		start, end := d.offset(c.Range.Start), d.offset(c.Range.End)
		if end < start {
			return nil, fmt.Errorf("change range ends before it starts (%d:%d-%d:%d)",
				c.Range.Start.Line, c.Range.Start.Character, c.Range.End.Line, c.Range.End.Character)
		}
		return newDocument(d.uri, d.lang, version, d.text[:start]+c.Text+d.text[end:]), nil
	}
	return nil, fmt.Errorf("unknown content change %T", c)
}

// openDoc returns the open document of u.
func (s *Server) openDoc(u uri.URI) (*document, bool) {
	d, ok := s.docs.Load(u)
	if !ok {
		return nil, false
	}
	return d.(*document), true
}

// openDocs returns every open document.
func (s *Server) openDocs() []*document {
	var out []*document
	s.docs.Range(func(_, d any) bool {
		out = append(out, d.(*document))
		return true
	})
	return out
}

// document finds an open document for a request on it.
func (s *Server) document(u uri.URI) (*document, error) {
	d, ok := s.openDoc(u)
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s is not open: send textDocument/didOpen first", u)
	}
	return d, nil
}

// sourceDocument is the common start of the source-file features (hover,
// code lens, inlay hints): the open document, its workspace, synced, and
// its trigger matches. ok is false, with no error, when the feature is
// switched off in the settings or the document is not a source file (a box
// or a policy file).
func (s *Server) sourceDocument(ctx context.Context, u uri.URI, enabled bool) (d *document, ws *workspace, ms []pack.TriggerMatch, ok bool, err error) {
	if d, err = s.document(u); err != nil || !enabled {
		return nil, nil, nil, false, err
	}
	if ws, err = s.workspaceFor(ctx, d.path); err != nil || kindOf(d.path, ws.h.Home()) != kindSource {
		return nil, nil, nil, false, err
	}
	ms, err = ws.matches(ctx, d)
	return d, ws, ms, err == nil, err
}
