package teamsync

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/internal/finding"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// importChunk is how many files an import reads, checks and writes at a
// time: the next chunk is read and decided while one is written.
const importChunk = 1024

// incoming is one committed file an import reads.
type incoming struct {
	f      committedFile
	data   []byte
	parsed *cardfile.Parsed
	// skipped is set when the file has an error: nothing of it is
	// imported, its findings say why.
	skipped  bool
	findings []cardfile.Finding
	at       commit
	reviewed bool
	current  *domain.Card
	// evidence are the rows the file adds, dups those of them whose content
	// this anchor holds already.
	evidence []domain.Evidence
	dups     []store.Duplicate
	contests []store.Contest
	have     []domain.Link
	im       authority.Import
	decided  bool
}

// provenance is what git says of the files an import reads: the commit
// that last changed each, and whether the upstream default branch holds it.
type provenance struct {
	upstream   string
	changes    map[string]commit
	unreviewed map[string]bool
	all        bool                 // no upstream: nothing is reviewed
	upTree     map[string]treeEntry // the upstream's card files, for a blob merged in unchanged
}

func (p *plan) provenance(ctx context.Context, files []committedFile) (provenance, error) {
	pv := provenance{upstream: p.git.upstream(ctx)}
	paths := make(map[string]bool, len(files))
	for _, f := range files {
		paths[f.path] = true
	}
	var err error
	if pv.changes, err = p.git.lastChanges(ctx, paths); err != nil {
		return pv, internal(err, "read the history of %s", cardfile.Dir)
	}
	if pv.unreviewed, pv.all, err = p.git.unreviewed(ctx, pv.upstream); err != nil {
		return pv, internal(err, "compare HEAD with %s", pv.upstream)
	}
	if len(pv.unreviewed) > 0 {
		if pv.upTree, err = p.git.tree(ctx, "refs/remotes/"+pv.upstream); err != nil {
			return pv, internal(err, "read %s at %s", cardfile.Dir, pv.upstream)
		}
	}
	return pv, nil
}

// reviewed says whether f's last commit is on the upstream default branch,
// or the upstream holds the same blob at the same path.
func (pv provenance) reviewed(f committedFile) (commit, bool) {
	c := pv.changes[f.path]
	if pv.all {
		return c, false
	}
	if c.hash != "" && !pv.unreviewed[c.hash] {
		return c, true
	}
	e, ok := pv.upTree[f.path]
	return c, ok && e.blob == f.blob
}

// importAll reads, checks and decides the committed files and, unless dry,
// writes them in one transaction, chunk by chunk; a file with an error is
// skipped with its findings.
func (p *plan) importAll(ctx context.Context) error {
	if len(p.imports)+len(p.conflicts) == 0 {
		return nil
	}
	br, err := p.git.blobs(ctx)
	if err != nil {
		return internal(err, "read card files")
	}
	defer br.close()
	if err := p.compare(ctx, br); err != nil {
		return err
	}
	if len(p.imports) == 0 {
		return nil
	}
	pv, err := p.provenance(ctx, p.imports)
	if err != nil {
		return err
	}
	p.rep.Upstream = pv.upstream
	ck := newChecker(p, pv)
	chunks := make(chan []*incoming, 1)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(chunks)
		for start := 0; start < len(p.imports); start += importChunk {
			part := p.imports[start:min(start+importChunk, len(p.imports))]
			in, err := ck.prepare(gctx, br, part)
			if err != nil {
				return err
			}
			select {
			case chunks <- in:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	g.Go(func() error {
		if p.req.DryRun {
			for in := range chunks {
				p.report(in, nil)
			}
			return nil
		}
		write := func(tx *store.Tx) error {
			if _, err := p.h.ensureAnchor(gctx, tx, domain.AnchorRepo); err != nil {
				return err
			}
			for in := range chunks {
				if err := p.write(gctx, tx, in); err != nil {
					return err
				}
			}
			// The reading side failed: commit nothing.
			return context.Cause(gctx)
		}
		err := p.h.store.Tx(gctx, write)
		if err != nil {
			p.rep.Imported, p.rep.Held = []string{}, []HeldCard{}
			for range chunks {
				// Let the reading side finish.
			}
			return hosterr.Classify(err, "import card files")
		}
		return nil
	})
	return g.Wait()
}

// compare reads the conflicted files: one whose bytes are what this palace
// would write is recorded as synced, the others are conflicts with a diff.
func (p *plan) compare(ctx context.Context, br *blobReader) error {
	if len(p.conflicts) == 0 {
		return nil
	}
	names := make([]string, len(p.conflicts))
	ids := make([]string, len(p.conflicts))
	for i, f := range p.conflicts {
		names[i], ids[i] = f.blob, f.id
	}
	data, err := br.read(names)
	if err != nil {
		return internal(err, "read card files")
	}
	rendered, err := p.h.renderIDs(ctx, ids)
	if err != nil {
		return err
	}
	for i, f := range p.conflicts {
		r := p.rows[f.id]
		palace := string(rendered[f.id])
		if palace == string(data[i]) {
			p.records = append(p.records, store.CardFile{CardID: f.id, AnchorID: p.repoID, Blob: f.blob, Base: f.blob,
				EventSeq: r.EventSeq, SyncedAt: p.h.gate.Stamp()})
			p.rep.Unchanged++
			continue
		}
		p.rep.Conflicts = append(p.rep.Conflicts, SyncConflict{CardID: f.id, Path: f.path, File: string(data[i]), Palace: palace,
			Diff: unifiedDiff("a/"+f.path, "b/"+f.path, string(data[i]), palace)})
		if p.req.DryRun {
			p.rep.Files = append(p.rep.Files, FilePlan{Path: f.path, CardID: f.id, State: "conflict", Status: string(r.Status)})
		}
	}
	return nil
}

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

// write writes one checked chunk: its evidence, then its cards through the
// door, then the file rows.
func (p *plan) write(ctx context.Context, tx *store.Tx, in []*incoming) error {
	var evs []domain.Evidence
	var dups []store.Duplicate
	var ims []authority.Import
	for _, x := range in {
		if x.decided {
			evs = append(evs, x.evidence...)
			dups = append(dups, x.dups...)
			ims = append(ims, x.im)
		}
	}
	if err := tx.InsertEvidenceRows(ctx, evs); err != nil {
		return err
	}
	if err := tx.MarkDuplicates(ctx, dups); err != nil {
		return err
	}
	events, err := p.h.door.WriteImports(ctx, tx, ims)
	if err != nil {
		return err
	}
	return tx.PutCardFiles(ctx, p.report(in, events))
}

// report puts a chunk's outcome in the report (what a dry run would do
// when events is nil) and returns the file rows to record.
func (p *plan) report(in []*incoming, events []domain.Event) []store.CardFile {
	var recs []store.CardFile
	j := 0
	for _, x := range in {
		p.rep.Findings = append(p.rep.Findings, x.findings...)
		fp := FilePlan{Path: x.f.path, CardID: x.f.id, Commit: x.at.hash, Reviewed: x.reviewed}
		if !x.decided {
			fp.State = "skipped"
			if p.req.DryRun {
				p.rep.Files = append(p.rep.Files, fp)
			}
			continue
		}
		im := x.im
		var ev domain.Event
		if events != nil {
			ev = events[j]
		}
		j++
		fp.Claimed, fp.Status = x.parsed.Card.Status, string(im.Status())
		if g := im.Gate(); g != nil {
			fp.Gate = &GateAnswer{Allow: g.Allow, Reasons: g.Reasons}
		}
		switch {
		case len(im.Held()) > 0:
			fp.State = "held"
		case x.current == nil:
			fp.State = "new"
		case im.Writes():
			fp.State = "changed"
		default:
			fp.State = "unchanged"
		}
		if im.Writes() {
			p.rep.Imported = append(p.rep.Imported, x.f.id)
		} else if len(im.Held()) == 0 {
			p.rep.Unchanged++
		}
		if held := im.Held(); len(held) > 0 {
			p.rep.Held = append(p.rep.Held, HeldCard{CardID: x.f.id, Path: x.f.path, Line: x.parsed.Line("status"), Claimed: fp.Claimed, Reasons: held})
		}
		if p.req.DryRun {
			p.rep.Files = append(p.rep.Files, fp)
			continue
		}
		seq := ev.Seq
		if seq == 0 {
			if r := p.rows[x.f.id]; r != nil {
				seq = r.EventSeq
			}
		}
		recs = append(recs, store.CardFile{CardID: x.f.id, AnchorID: p.repoID, Blob: x.f.blob, Base: x.f.blob, EventSeq: seq,
			Held: heldJSON(fp.Claimed, im.Held()), SyncedAt: p.h.gate.Stamp()})
	}
	return recs
}

// eachParallel runs fn(0..n-1) on every core and waits.
func eachParallel(n int, fn func(i int)) {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { fn(i); return nil })
	}
	g.Wait() //nolint:errcheck // fn returns nothing
}

func atCommit(commit string) string {
	if commit == "" {
		return ""
	}
	return " at " + commit
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// fileReviewer is the reviewer a card file names for its last change; one
// not saying human or agent is not taken as human.
func fileReviewer(c cardfile.Card) policies.Reviewer {
	if e := c.LastEvent; e != nil && e.Reviewer.Type != "" {
		return policies.Reviewer{Name: e.Reviewer.Name, Type: e.Reviewer.Type}
	}
	if e := c.LastEvent; e != nil {
		return policies.Reviewer{Name: e.Actor, Type: "agent"}
	}
	return policies.Reviewer{Name: c.CreatedBy, Type: "agent"}
}

// heldRecord is what card_files.held keeps: the status the file claimed and
// the gate's reasons for refusing it.
type heldRecord struct {
	Claimed string   `json:"claimed_status"`
	Reasons []string `json:"reasons"`
}

func heldJSON(claimed string, reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	return string(gatekeep.EventData(heldRecord{Claimed: claimed, Reasons: reasons}))
}
