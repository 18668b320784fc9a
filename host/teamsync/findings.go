package teamsync

import (
	"fmt"
	"strings"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/secrets"
)

// limitFindings applies the limits every other way in applies (record,
// distill, MCP) to a card file's card and evidence: sizes, NUL bytes,
// globs and trigger patterns that compile.
func limitFindings(path string, p cardfile.Parsed) []cardfile.Finding {
	var out []cardfile.Finding
	add := func(line int, err error) {
		if err != nil {
			out = append(out, cardfile.Finding{Finding: finding.Finding{Path: path, Line: line, Col: 1, Code: cardfile.CodeValue,
				Severity: cardfile.SeverityError, Message: err.Error()}, CardID: p.Card.ID})
		}
	}
	c := p.Card
	add(p.Line("field"), limits.Text("field", c.Field, limits.FieldBytes, "use a short name such as go or release-process"))
	add(p.Line("statement"), limits.Text("statement", c.Statement, 0, "remove it"))
	add(p.Line("content"), limits.Text("content", c.Content, limits.ContentBytes, "keep the card short; the evidence carries the detail"))
	add(p.Line("scope"), limits.Scope(domain.Scope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields}))
	add(p.Line("triggers"), limits.Triggers(domain.Trigger{Patterns: c.Triggers.Patterns, Intents: c.Triggers.Intents, ToolNeeds: c.Triggers.ToolNeeds}))
	for i, e := range c.Evidence {
		line := p.EvidenceLines[i]
		if len(e.Content) > limits.ContentBytes {
			add(line, fmt.Errorf("evidence %s content is %d bytes, over the limit of 1 MiB", e.ID, len(e.Content)))
		}
		add(line, limits.CheckEvidence(limits.Evidence{Content: e.Content, Field: e.Field, Domain: e.Domain,
			SourceRef: e.SourceRef, Provenance: e.Provenance, Tags: e.Tags}))
	}
	return out
}

// secretFindings scans a card file's text and its evidence for secrets:
// they must not be stored, nor sit in a repository.
func secretFindings(path string, p cardfile.Parsed) []cardfile.Finding {
	var out []cardfile.Finding
	add := func(line int, what, text string) {
		if strings.Contains(text, secrets.AllowPragma) {
			return
		}
		for _, s := range secrets.ScanString(text) {
			out = append(out, cardfile.Finding{Finding: finding.Finding{Path: path, Line: line, Col: 1, Code: cardfile.CodeSecret,
				Severity: cardfile.SeverityError,
				Message:  fmt.Sprintf("%s holds a secret (%s %s at its line %d): remove it from the file and rotate it", what, s.Rule, s.Redacted, s.Line)}, CardID: p.Card.ID})
		}
	}
	add(p.Line("statement"), "the statement", p.Card.Statement)
	add(p.Line("content"), "the content", p.Card.Content)
	// A file's redacted flag is a claim like any other: the text is
	// scanned all the same.
	for i, e := range p.Card.Evidence {
		add(p.EvidenceLines[i], "evidence "+e.ID, e.Content)
	}
	return out
}

// checkFile is one card file a check reads: from the working tree, or
// the index with --staged.
type checkFile struct {
	id, path string
	data     []byte
	parsed   *cardfile.Parsed
}

// decodeChecked decodes files in parallel and reports their problems, and
// ids declared twice, in file order.
func decodeChecked(files []*checkFile) []cardfile.Finding {
	per := make([][]cardfile.Finding, len(files))
	eachParallel(len(files), func(i int) {
		f := files[i]
		p, fs := cardfile.Decode(f.path, f.data)
		if !cardfile.HasErrors(fs) {
			fs = append(fs, limitFindings(f.path, p)...)
			fs = append(fs, secretFindings(f.path, p)...)
		}
		per[i] = fs
		if !cardfile.HasErrors(fs) {
			f.parsed = &p
		}
	})
	var out []cardfile.Finding
	declared := map[string]string{}
	for i, f := range files {
		out = append(out, per[i]...)
		if f.parsed == nil {
			continue
		}
		id := f.parsed.Card.ID
		if first, dup := declared[id]; dup && first != f.path {
			out = append(out, cardfile.Finding{Finding: finding.Finding{Path: f.path, Line: f.parsed.Line("id"), Col: 1, Code: cardfile.CodeDuplicateID,
				Severity: cardfile.SeverityError,
				Message:  fmt.Sprintf("card id %s is declared by %s too: a card has one file; give the copy a new id or remove it", id, first)}, CardID: id})
		}
		declared[id] = f.path
	}
	return out
}
