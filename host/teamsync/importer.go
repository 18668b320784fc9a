package teamsync

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/gatekeep"
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
