package teamsync

import (
	"context"
	"fmt"
	"time"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// checker checks and decides the files of an import in file order, keeping
// what earlier files added (their evidence, its content hashes).
type checker struct {
	p  *plan
	pv provenance
	// seen holds the evidence this import adds or found, by id; originals
	// the first evidence of each content hash at the anchor.
	seen      map[string]domain.Evidence
	originals map[string]string
	now       string
}

func newChecker(p *plan, pv provenance) *checker {
	return &checker{p: p, pv: pv, seen: map[string]domain.Evidence{}, originals: map[string]string{}, now: p.h.gate.Stamp()}
}

// prepare reads, decodes, checks and decides one chunk of files.
func (ck *checker) prepare(ctx context.Context, br *blobReader, part []committedFile) ([]*incoming, error) {
	p := ck.p
	names := make([]string, len(part))
	for i, f := range part {
		names[i] = f.blob
	}
	data, err := br.read(names)
	if err != nil {
		return nil, internal(err, "read card files")
	}
	in := make([]*incoming, len(part))
	for i, f := range part {
		in[i] = &incoming{f: f, data: data[i]}
		in[i].at, in[i].reviewed = ck.pv.reviewed(f)
		// A commit's date is its author's word too: no later than now.
		if in[i].at.time == "" || in[i].at.time > ck.now {
			in[i].at.time = ck.now
		}
	}
	// Decoding is most of an import's CPU outside SQLite.
	eachParallel(len(in), func(i int) { in[i].decode() })
	if err := ck.lookUp(ctx, in); err != nil {
		return nil, err
	}
	for _, x := range in {
		if !x.skipped {
			ck.check(x)
		}
	}
	door := p.h.door
	eachParallel(len(in), func(i int) {
		x := in[i]
		if x.skipped {
			return
		}
		x.im, x.decided = door.DecideImport(ctx, ck.claim(x)), true
	})
	return in, nil
}

// decode parses the file and applies the limits every other way in
// applies, and the secret scan.
func (x *incoming) decode() {
	parsed, fs := cardfile.Decode(x.f.path, x.data)
	if !cardfile.HasErrors(fs) {
		fs = append(fs, limitFindings(x.f.path, parsed)...)
		fs = append(fs, secretFindings(x.f.path, parsed)...)
	}
	x.findings = fs
	if cardfile.HasErrors(fs) {
		x.skipped = true
		return
	}
	x.parsed = &parsed
}

// lookUp reads what a chunk's checks need: named evidence, originals of
// contents, updated cards with their contests, and named origin cards.
func (ck *checker) lookUp(ctx context.Context, in []*incoming) error {
	p := ck.p
	var evIDs, shas, current, origins []string
	for _, x := range in {
		if x.skipped {
			continue
		}
		fc := x.parsed.Card
		for _, e := range fc.Evidence {
			if _, ok := ck.seen[e.ID]; !ok {
				evIDs = append(evIDs, e.ID)
			}
			shas = append(shas, e.SHA256)
		}
		if p.rows[x.f.id] != nil {
			current = append(current, x.f.id)
		}
		if o := fc.OriginCard; o != "" && !p.known[o] {
			origins = append(origins, o)
		}
	}
	have, err := p.h.store.EvidenceByIDs(ctx, evIDs)
	if err != nil {
		return internal(err, "read evidence")
	}
	for id, e := range have {
		ck.seen[id] = e
	}
	originals, err := p.h.store.OriginalsByHash(ctx, shas)
	if err != nil {
		return internal(err, "read evidence")
	}
	for k, id := range originals {
		if _, ok := ck.originals[k]; !ok {
			ck.originals[k] = id
		}
	}
	if len(origins) > 0 {
		found, err := p.h.store.CardAnchors(ctx, origins)
		if err != nil {
			return internal(err, "read cards")
		}
		for id := range found {
			p.known[id] = true
		}
	}
	if len(current) == 0 {
		return nil
	}
	cards, err := p.h.cardsByIDs(ctx, current)
	if err != nil {
		return err
	}
	byID := make(map[string]*domain.Card, len(cards))
	for i := range cards {
		byID[cards[i].ID] = &cards[i]
	}
	open, err := p.h.store.OpenContests(ctx, current)
	if err != nil {
		return internal(err, "read contests")
	}
	links, err := p.h.store.LinksFor(ctx, current)
	if err != nil {
		return internal(err, "read card links")
	}
	for _, x := range in {
		x.current, x.contests, x.have = byID[x.f.id], open[x.f.id], links[x.f.id]
	}
	return nil
}

// check verifies a decoded file's references: foreign or mismatched evidence
// and a dangling origin_card skip the file, redacted evidence is left out.
// Evidence dates are capped at the commit's; a human author becomes an agent
// unless the commit is reviewed.
func (ck *checker) check(x *incoming) {
	p, fc := ck.p, x.parsed.Card
	bad := func(line int, code, format string, args ...any) {
		x.findings = append(x.findings, cardfile.Finding{Finding: finding.Finding{Path: x.f.path, Line: line, Col: 1, Code: code,
			Severity: cardfile.SeverityError, Message: fmt.Sprintf(format, args...)}, CardID: fc.ID})
		x.skipped = true
	}
	if o := fc.OriginCard; o != "" && !p.known[o] {
		bad(x.parsed.Line("origin_card"), cardfile.CodeReference, "origin_card %s names no card in this palace or this checkout: remove the line (a card published from a worktree keeps its origin on that machine)", o)
	}
	for i, e := range fc.Evidence {
		line := x.parsed.EvidenceLines[i]
		if e.Redacted {
			continue
		}
		old, ok := ck.seen[e.ID]
		switch {
		case !ok:
		case old.AnchorID != p.repoID:
			bad(line, cardfile.CodeReference, "evidence %s is held at another anchor of this palace (%s), not this repository's: a card file cites only its repository's evidence; give the evidence a new id", e.ID, p.h.anchorRef(context.Background(), old.AnchorID).Kind)
		case old.ContentSHA256 != e.SHA256:
			bad(line, cardfile.CodeEvidenceSame, "evidence %s differs from the evidence of that id in this palace (sha256 %s, not %s): evidence is never edited", e.ID, short(old.ContentSHA256), short(e.SHA256))
		}
	}
	if x.skipped {
		return
	}
	for i, e := range fc.Evidence {
		if e.Redacted {
			x.findings = append(x.findings, cardfile.Finding{Finding: finding.Finding{Path: x.f.path, Line: x.parsed.EvidenceLines[i], Col: 1, Code: cardfile.CodeRedacted,
				Severity: cardfile.SeverityWarning,
				Message:  fmt.Sprintf("evidence %s is redacted: its content cannot be checked against its sha256, so it is not imported and its citations do not count", e.ID)}, CardID: fc.ID})
			continue
		}
		if _, ok := ck.seen[e.ID]; ok {
			continue
		}
		ev := domain.Evidence{ID: e.ID, Content: e.Content, Domain: domain.Domain(e.Domain), Field: e.Field, Provenance: domain.Provenance(e.Provenance),
			SourceRef: e.SourceRef, Tags: e.Tags, AnchorID: p.repoID, ContentSHA256: e.SHA256, Actor: e.Actor,
			ActorType: domain.ActorType(e.ActorType), CreatedAt: capTime(e.CreatedAt, x.at.time)}
		if !x.reviewed {
			ev.ActorType = domain.ActorAgent
		}
		key := p.repoID + "|" + e.SHA256
		if orig, dup := ck.originals[key]; dup {
			x.dups = append(x.dups, store.Duplicate{EvidenceID: e.ID, Original: orig, Cause: store.DuplicateAllowed, CreatedAt: ck.now})
		} else {
			ck.originals[key] = e.ID
		}
		x.evidence = append(x.evidence, ev)
		ck.seen[e.ID] = ev
	}
}

// capTime is t, or limit when t is later (or unreadable): a file cannot
// date its evidence after the commit that brought it.
func capTime(t, limit string) string {
	if limit == "" {
		return gatekeep.NormDate(t)
	}
	tt, err := time.Parse(time.RFC3339Nano, t)
	lt, lerr := time.Parse(time.RFC3339Nano, limit)
	if lerr != nil {
		return gatekeep.NormDate(t)
	}
	if err != nil || tt.After(lt) {
		return limit
	}
	return store.FormatTime(tt)
}

// claim is what the file proposes, as the door reads it.
func (ck *checker) claim(x *incoming) authority.FileClaim {
	p, fc := ck.p, x.parsed.Card
	c := fromCardFile(fc, p.repoID, ck.now)
	c.ReviewAfter, c.ExpiresAt = gatekeep.NormDate(c.ReviewAfter), gatekeep.NormDate(c.ExpiresAt)
	c.CreatedAt = capTime(c.CreatedAt, x.at.time)
	claimed := make(map[string]domain.ActorType, len(fc.Evidence))
	for _, e := range fc.Evidence {
		if !e.Redacted {
			claimed[e.ID] = domain.ActorType(e.ActorType)
		}
	}
	links := make([]domain.Link, 0, len(fc.Citations))
	for _, ci := range fc.Citations {
		e, ok := ck.seen[ci.Evidence]
		if !ok || claimed[ci.Evidence] == "" {
			continue // redacted: neither imported nor cited
		}
		// The author is the file's word from reviewed history only; content
		// and date are the row's.
		author := domain.ActorAgent
		if x.reviewed {
			author = claimed[ci.Evidence]
		}
		l := domain.Link{CardID: fc.ID, EvidenceID: ci.Evidence, Role: domain.Role(ci.Role), Note: ci.Note, CreatedAt: ck.now,
			SourceRef: e.SourceRef, Provenance: e.Provenance, ActorType: author, EvidenceAt: e.CreatedAt, Original: e.ID}
		if orig, ok := ck.originals[p.repoID+"|"+e.ContentSHA256]; ok {
			l.Original = orig
		}
		links = append(links, l)
	}
	reviewer := fileReviewer(fc)
	if !x.reviewed {
		reviewer.Type = string(domain.ActorAgent)
	}
	return authority.FileClaim{Card: c, Links: links, Current: x.current, Have: x.have, Contests: x.contests, Reviewer: reviewer,
		Source: policies.GateSource{Channel: policies.SourceCardFile, Path: x.f.path, Commit: x.at.hash, Upstream: ck.pv.upstream, Reviewed: x.reviewed},
		Reason: "imported from " + x.f.path + atCommit(x.at.hash),
		Data: map[string]any{"path": x.f.path, "commit": x.at.hash, "blob": x.f.blob, "on_default_branch": x.reviewed,
			"claimed_status": fc.Status, "last_event": fc.LastEvent}}
}
