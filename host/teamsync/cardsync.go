package teamsync

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/gatekeep"
	"github.com/palacehq/palace/host/repofs"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/host/internal/limits"
	"github.com/palacehq/palace/host/secrets"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// SyncRequest asks for one sync of this checkout's card files with the
// palace.
type SyncRequest struct {
	// Share lists candidate cards of this repository to write as files
	// although they are not authoritative (a candidate the team should
	// review). Authoritative repo cards are written without asking.
	Share []string `json:"share,omitempty"`
	// Resolve settles conflicts, card id → "file" (take the file) or
	// "palace" (overwrite the file with this palace's card).
	Resolve map[string]string `json:"resolve,omitempty"`
	// DryRun reports what a sync would do and writes nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Rewrite renders the file of every card sync covers again, changed
	// or not, files removed from the checkout included (to restore them,
	// or after an upgrade of palace), and writes each one whose bytes
	// differ from the file's as the last sync left it (an unchanged file
	// is not touched; it is reported exported all the same). Files changed
	// in the checkout are still imported, or reported as conflicts.
	Rewrite bool `json:"rewrite,omitempty"`
}

// SyncReport says what a sync did (or, dry, would do).
type SyncReport struct {
	// Dir is the checkout's card directory.
	Dir string `json:"dir"`
	// Commit is the checkout's HEAD, recorded in imported events.
	Commit   string   `json:"commit,omitempty"`
	DryRun   bool     `json:"dry_run,omitempty"`
	Exported []string `json:"exported"`
	Imported []string `json:"imported"`
	// Held are files whose claim of authority the gate refused: the card
	// was imported as a candidate.
	Held      []HeldCard     `json:"held"`
	Conflicts []SyncConflict `json:"conflicts"`
	// Removed are cards written before whose file is gone from this
	// checkout (deleted upstream, or a branch without it): they stay in the
	// palace and are not written again until they change here.
	Removed   []string           `json:"removed"`
	Findings  []cardfile.Finding `json:"findings"`
	Unchanged int                `json:"unchanged"`
}

// HeldCard is a card file whose promoted/canonical claim failed the gate.
type HeldCard struct {
	CardID  string   `json:"card_id"`
	Path    string   `json:"path"`
	Line    int      `json:"line"`
	Claimed string   `json:"claimed_status"`
	Reasons []string `json:"reasons"`
}

// SyncConflict is a card changed both in its file and in this palace since
// the last sync. Nothing is merged: both versions are shown, and `palace
// sync --resolve ID=file|palace` picks one.
type SyncConflict struct {
	CardID string `json:"card_id"`
	Path   string `json:"path"`
	// File is the file as it is in the checkout; Palace is the file this
	// palace would write.
	File   string `json:"file"`
	Palace string `json:"palace"`
}

// syncFile is one file of the card directory.
type syncFile struct {
	id    string // the file name without .md
	path  string // relative to the worktree, slash-separated
	abs   string
	size  int64
	mtime int64
	// data and parsed are nil when the file was not read (unchanged by
	// stat), and once an import has written the file's card.
	data   []byte
	sha    string
	parsed *cardfile.Parsed
	keep   bool // unchanged since the last sync
	// lazy is set for a new file: the decoding reads it (and sets sha,
	// size and mtime) just before decoding it, into a buffer it reuses, so
	// an import holds only the files near the chunk it writes.
	lazy bool
	// decoded closes when parsed is set, or known to stay nil (see
	// decodeFiles).
	decoded chan struct{}
	// seq is the file's place in the decoding order.
	seq int
	// declared and idLine are the card id the file declares and its line,
	// kept for the duplicate-id check after parsed is released.
	declared string
	idLine   int
}

// racyWindow: a file modified this close to when its stat was recorded may
// change again within the same mtime tick, so its stat is not trusted.
const racyWindow = 2 * time.Second

// Sync exports this repository's cards that changed in the palace to
// <worktree>/.palace/cards/ and imports the card files that changed there
// (a pull, a checkout, a merge): new cards keep their ids, and a file that
// claims promoted or canonical is re-checked against the gate; one that
// fails is imported as a candidate and reported as held. A card changed on
// both sides is a conflict, reported with both versions and left alone.
//
// Files with problems (malformed, unknown tier, duplicate id, oversized,
// conflict markers, a secret) make the sync refuse before writing anything:
// KindInvalid with the findings in the report. Only this repository's cards
// are written: worktree cards never leave the machine and global cards
// stay personal. Human mode only (an import can make a card
// authoritative).
func (h *Team) Sync(ctx context.Context, req SyncRequest) (SyncReport, error) {
	rep := SyncReport{Exported: []string{}, Imported: []string{}, Held: []HeldCard{}, Conflicts: []SyncConflict{},
		Removed: []string{}, Findings: []cardfile.Finding{}, DryRun: req.DryRun}
	if err := h.requireHuman("sync"); err != nil {
		return rep, err
	}
	if !h.loc.InGit {
		return rep, invalid("--cwd", "%s is not inside a git checkout: card files live in a repository's .palace/cards; run palace sync in a checkout", h.loc.Dir)
	}
	for id, side := range req.Resolve {
		if side != "file" && side != "palace" {
			return rep, invalid("resolve", "--resolve %s=%s: say file (take the file) or palace (keep this palace's card)", id, side)
		}
	}
	rep.Dir = filepath.Join(h.loc.Worktree, filepath.FromSlash(cardfile.Dir))
	if err := refuseLinkedCardDir(h.loc.Worktree); err != nil {
		return rep, err
	}
	repoID := AnchorID(h.loc.Identity(domain.AnchorRepo))
	mark, err := h.store.EventMark(ctx)
	if err != nil {
		return rep, internal(err, "read cards to sync")
	}
	rows, fast, err := h.syncRows(ctx, repoID, mark, req)
	if err != nil {
		return rep, err
	}
	byID := make(map[string]*store.SyncRow, len(rows))
	for i := range rows {
		byID[rows[i].CardID] = &rows[i]
	}
	if err := h.share(ctx, req.Share, repoID, byID, &rows); err != nil {
		return rep, err
	}
	files, ds, err := h.scanCardDir(rep.Dir, byID)
	if err != nil {
		return rep, err
	}
	if ds != nil {
		// Open until the decoding has read the new files: every return
		// below waits for it (plan.decoded).
		defer ds.Close()
	}
	if fast {
		if err := h.fillStatus(ctx, files, byID); err != nil {
			return rep, err
		}
	}
	// Files are decoded in the background while the sync plans and, chunk
	// by chunk, imports them; a file with problems (malformed, unknown
	// tier, a secret…) still refuses the sync before anything is written
	// or committed (plan.decoded, importAll).
	p := plan{h: h, rep: &rep, repoID: repoID, resolve: req.Resolve, rewrite: req.Rewrite, dec: decodeFiles(files, ds, writerWorkers())}
	inDir := map[string]bool{}
	for _, f := range files {
		inDir[f.id] = true
		p.file(ctx, f, byID[f.id])
	}
	for i := range rows {
		r := &rows[i]
		if inDir[r.CardID] {
			continue
		}
		switch {
		case r.File != nil && r.File.FileSHA256 != "" && !req.Rewrite:
			rep.Removed = append(rep.Removed, r.CardID)
		default:
			p.export = append(p.export, r)
		}
	}
	if err := p.checkIDs(ctx); err != nil {
		if derr := p.decoded(); derr != nil {
			return rep, derr
		}
		return rep, err
	}
	if len(p.imports) > 0 {
		rep.Commit = headCommit(ctx, h.loc.Worktree)
	}
	if req.DryRun || len(p.imports) == 0 {
		// Nothing to decode while writing.
		if err := p.decoded(); err != nil {
			return rep, err
		}
	}
	if req.DryRun {
		for _, r := range p.export {
			rep.Exported = append(rep.Exported, r.CardID)
		}
		for _, f := range p.imports {
			rep.Imported = append(rep.Imported, f.id)
		}
		return rep, nil
	}
	if err := p.run(ctx); err != nil {
		if derr := p.decoded(); derr != nil {
			return rep, derr
		}
		return rep, err
	}
	if err := p.decoded(); err != nil {
		return rep, err
	}
	// Nothing left pending: until the next card event, a sync need not look
	// at every card again.
	settled := len(p.imports) == 0 && len(rep.Conflicts) == 0 && len(rep.Findings) == 0
	if settled && (!fast || len(rep.Exported) > 0) {
		if err := h.store.SetSyncMark(ctx, repoID, mark); err != nil {
			return rep, internal(err, "record the sync")
		}
	} else if !settled {
		if err := h.store.SetSyncMark(ctx, repoID, -1); err != nil {
			return rep, internal(err, "record the sync")
		}
	}
	slices.Sort(rep.Exported)
	slices.Sort(rep.Imported)
	return rep, nil
}

// syncRows lists the cards a sync looks at. When the last sync of this
// repository left nothing pending and no card event happened since (mark),
// the cards are exactly those with a file row, unchanged: only card_files is
// read (fast). Otherwise every authoritative or tracked card of the
// repository is read with its last event.
func (h *Team) syncRows(ctx context.Context, repoID string, mark int64, req SyncRequest) ([]store.SyncRow, bool, error) {
	last, ok, err := h.store.SyncMark(ctx, repoID)
	if err != nil {
		return nil, false, internal(err, "read cards to sync")
	}
	if ok && last == mark && len(req.Share) == 0 && len(req.Resolve) == 0 && !req.Rewrite {
		files, err := h.store.CardFiles(ctx, repoID)
		if err != nil {
			return nil, false, internal(err, "read cards to sync")
		}
		rows := make([]store.SyncRow, len(files))
		for i := range files {
			rows[i] = store.SyncRow{CardID: files[i].CardID, EventSeq: files[i].EventSeq, File: &files[i]}
		}
		return rows, true, nil
	}
	rows, err := h.store.SyncRows(ctx, repoID, domain.AuthoritativeStatuses())
	if err != nil {
		return nil, false, internal(err, "read cards to sync")
	}
	return rows, false, nil
}

// fillStatus reads the status of the cards whose file changed, which the
// fast listing does not carry (an import starts from it).
func (h *Team) fillStatus(ctx context.Context, files []*syncFile, byID map[string]*store.SyncRow) error {
	var ids []string
	for _, f := range files {
		if r := byID[f.id]; r != nil && !f.keep {
			ids = append(ids, f.id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := h.store.CardAnchors(ctx, ids)
	if err != nil {
		return internal(err, "read cards")
	}
	for _, id := range ids {
		byID[id].Status = found[id].Status
	}
	return nil
}

func countErrors(fs []cardfile.Finding) int {
	n := 0
	for _, f := range fs {
		if f.Severity == cardfile.SeverityError {
			n++
		}
	}
	return n
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// share marks candidate cards to be written as files.
func (h *Team) share(ctx context.Context, ids []string, repoID string, byID map[string]*store.SyncRow, rows *[]store.SyncRow) error {
	for _, id := range ids {
		if _, ok := byID[id]; ok {
			continue
		}
		c, err := h.store.Card(ctx, id)
		if err != nil {
			return notFound(err, "card", id)
		}
		if c.AnchorID != repoID {
			switch h.anchorKindOf(c.AnchorID) {
			case domain.AnchorWorktree:
				return invalid("share", "card %s is anchored to this worktree, and worktree cards never leave the machine: publish it to the repository first (palace publish %s --to repo)", id, id)
			case domain.AnchorGlobal:
				return invalid("share", "card %s is global, and global cards are personal: only this repository's cards are shared", id)
			}
			return invalid("share", "card %s belongs to another repository: share it from a checkout of its own", id)
		}
		*rows = append(*rows, store.SyncRow{CardID: c.ID, Status: c.Status, EventSeq: 0})
		byID[id] = &(*rows)[len(*rows)-1]
	}
	// The appends may have moved the rows; point the map at the new ones.
	for i := range *rows {
		byID[(*rows)[i].CardID] = &(*rows)[i]
	}
	return nil
}

// refuseLinkedCardDir refuses a checkout whose .palace or .palace/cards is
// a symbolic link: a cloned repository must not make palace read card
// files from, or write them to, a directory outside it. Files in the
// directory are opened without following links (see syncFile.read and
// writeFileAtomic).
func refuseLinkedCardDir(worktree string) error {
	path := worktree
	for _, c := range strings.Split(cardfile.Dir, "/") {
		path = filepath.Join(path, c)
		fi, err := os.Lstat(path)
		if err != nil {
			return nil // missing: created as a directory, or nothing to read
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return &Error{Kind: KindInvalid, Field: "card files", Msg: "use " + cardfile.Dir, Err: &repofs.LinkError{Path: path, Target: target}}
		}
	}
	return nil
}

// scanCardDir reads the card directory: the stat of every *.md file this
// palace has a card of, and the bytes of each of those that may have
// changed since the last sync (in this checkout, a file with the size and
// mtime recorded then is not read). The other files are new: they are
// left to the decoding to read, with the returned directory handle, which
// the caller closes once the decoding is done.
func (h *Team) scanCardDir(dir string, byID map[string]*store.SyncRow) ([]*syncFile, *dirStater, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, internal(err, "read %s", dir)
	}
	var names []fs.DirEntry
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, cardfile.Ext) && !strings.HasPrefix(name, ".") {
			names = append(names, e)
		}
	}
	// A stat per file, and a read of those that may have changed, in
	// parallel: the system calls are most of a sync that changes nothing.
	ds, err := openDirStater(dir)
	if err != nil {
		return nil, nil, internal(err, "read %s", dir)
	}
	files := make([]*syncFile, len(names))
	errs := make([]error, len(names))
	parallel(len(names), func(i int) {
		files[i], errs[i] = h.scanFile(ds, dir, names[i], byID)
	})
	out := make([]*syncFile, 0, len(files))
	for i, f := range files {
		if errs[i] != nil {
			ds.Close()
			return nil, nil, internal(errs[i], "read %s", filepath.Join(dir, names[i].Name()))
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, ds, nil
}

// scanFile stats one directory entry and reads it unless the last sync in
// this checkout saw it with the same size and mtime. Nil for an entry that
// is gone or not a regular file. A file no card of this palace has is
// left for the decoding to read (lazy): there is no stat to compare.
func (h *Team) scanFile(ds *dirStater, dir string, e fs.DirEntry, byID map[string]*store.SyncRow) (*syncFile, error) {
	name := e.Name()
	f := &syncFile{id: strings.TrimSuffix(name, cardfile.Ext), path: cardfile.Dir + "/" + name, abs: filepath.Join(dir, name)}
	r := byID[f.id]
	if r == nil {
		// The entry's type comes with the directory listing; a file that
		// changes type before it is read is refused then (readFailed).
		if !e.Type().IsRegular() {
			return nil, nil
		}
		f.lazy = true
		return f, nil
	}
	size, mtime, regular, err := ds.stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !regular {
		return nil, nil
	}
	if r.File != nil && r.File.FileSHA256 != "" && r.File.Checkout == h.loc.Worktree &&
		r.File.Size == size && r.File.MtimeNS == mtime {
		f.size, f.mtime, f.keep, f.sha = size, mtime, true, r.File.FileSHA256
		return f, nil
	}
	data, st, err := ds.read(nil, name, cardfile.MaxFileBytes+1)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, repofs.ErrNotRegular):
		return nil, nil
	case err != nil:
		return nil, err
	}
	// The stat of what was read: a file changed since its stat above is
	// read again by the next sync, not taken as unchanged.
	f.size, f.mtime = st.size, st.mtime
	f.data, f.sha = data, sha256Hex(data)
	f.keep = r.File != nil && r.File.FileSHA256 == f.sha
	return f, nil
}

// fileStat is the size and mtime of a file as it was read.
type fileStat struct{ size, mtime int64 }

// read reads the file, at most one byte over the limit (Decode reports
// the size).
func (f *syncFile) read() error {
	// The directory is no link (refuseLinkedCardDir); the file must not be
	// one either.
	fh, err := repofs.OpenFile(filepath.Dir(f.abs), filepath.Base(f.abs), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer fh.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(fh, cardfile.MaxFileBytes+1)); err != nil {
		return err
	}
	f.data = buf.Bytes()
	f.sha = sha256Hex(f.data)
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkFiles decodes every file that changed and reports its problems, and
// ids declared twice. Files are decoded in parallel (YAML parsing is most of
// an import's CPU); findings come out in file order.
func checkFiles(files []*syncFile) []cardfile.Finding {
	return decodeFiles(files, nil, runtime.GOMAXPROCS(0)).findings()
}

// decoding is the decoding of a directory's changed files, under way in
// the background: each file's decoded channel closes when its parsed card
// (nil when it has errors) and findings are set.
type decoding struct {
	files []*syncFile
	per   [][]cardfile.Finding
	all   chan struct{}
	once  sync.Once
	out   []cardfile.Finding
	ds    *dirStater // reads the lazy files
	todo  []int      // the files to decode (by index), in order
	next  atomic.Int64
	wg    sync.WaitGroup
	// The decoders start a file only while its seq is below allowed: an
	// import lets them run decodeAhead files past the chunk it writes, so
	// the decoded cards waiting for the writer stay a few chunks' worth
	// (fresh memory is much of a large import's cost). unpace lets them
	// run to the end.
	mu      sync.Mutex
	ahead   sync.Cond
	allowed int
}

// decodeAhead is how many files the decoding may run past the chunk an
// import writes.
const decodeAhead = 2 * importChunk

// allow lets the decoders start every file whose seq is below n.
func (d *decoding) allow(n int) {
	d.mu.Lock()
	if n > d.allowed {
		d.allowed = n
		d.ahead.Broadcast()
	}
	d.mu.Unlock()
}

// unpace lets the decoders run to the end: for whoever waits for a file
// outside an import's chunks, or for all of them.
func (d *decoding) unpace() { d.allow(math.MaxInt) }

// wait holds a decoder until file seq may start.
func (d *decoding) wait(seq int) {
	d.mu.Lock()
	for seq >= d.allowed {
		d.ahead.Wait()
	}
	d.mu.Unlock()
}

// decodeFiles starts decoding files on workers-1 goroutines, in file
// order, and returns at once. A sync passes all cores but the import
// writer's; whoever waits for every file (findings) decodes too, and so
// does the writer while it waits for a file (waitFor).
func decodeFiles(files []*syncFile, ds *dirStater, workers int) *decoding {
	d := &decoding{files: files, per: make([][]cardfile.Finding, len(files)), all: make(chan struct{}), ds: ds, allowed: decodeAhead}
	d.ahead.L = &d.mu
	for i, f := range files {
		if f.keep {
			f.decoded = closedChan
			continue
		}
		f.decoded = make(chan struct{})
		f.seq = len(d.todo)
		d.todo = append(d.todo, i)
	}
	for range min(workers-1, len(d.todo)) {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.work()
		}()
	}
	go func() {
		defer close(d.all)
		d.work()
		d.wg.Wait()
	}()
	return d
}

// work decodes the files no one has started, in order, until none is left.
func (d *decoding) work() {
	for {
		j := int(d.next.Add(1) - 1)
		if j >= len(d.todo) {
			return
		}
		d.wait(j)
		d.decode(j)
	}
}

// waitFor waits until f is decoded, decoding the next files itself
// meanwhile, as far as the pace allows: the writer of an import has
// nothing else to do then.
func (d *decoding) waitFor(f *syncFile) {
	for {
		select {
		case <-f.decoded:
			return
		default:
		}
		d.mu.Lock()
		allowed := d.allowed
		d.mu.Unlock()
		j := d.next.Load()
		if j >= int64(len(d.todo)) || j >= int64(allowed) {
			<-f.decoded
			return
		}
		if d.next.CompareAndSwap(j, j+1) {
			d.decode(int(j))
		}
	}
}

// decode reads (when lazy) and decodes the j-th file to decode.
func (d *decoding) decode(j int) {
	i := d.todo[j]
	f := d.files[i]
	defer close(f.decoded)
	data := f.data
	if f.lazy {
		buf := readBufs.Get().(*[]byte)
		defer readBufs.Put(buf)
		b, st, err := d.ds.read(*buf, f.id+cardfile.Ext, cardfile.MaxFileBytes+1)
		if err != nil {
			d.per[i] = []cardfile.Finding{readFailed(f, err)}
			return
		}
		*buf = b[:0]
		data, f.sha, f.size, f.mtime = b, sha256Hex(b), st.size, st.mtime
	}
	p, fs := cardfile.Decode(f.path, data)
	if !cardfile.HasErrors(fs) {
		fs = append(fs, limitFindings(f.path, p)...)
		fs = append(fs, secretFindings(f.path, p)...)
		if !cardfile.HasErrors(fs) {
			f.parsed = &p
			f.declared, f.idLine = p.Card.ID, p.Line("id")
		}
	}
	d.per[i] = fs
}

// readBufs are the decoders' buffers for the files they read: Decode
// copies what it keeps.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// readFailed is the finding for a new file the decoding could not read.
func readFailed(f *syncFile, err error) cardfile.Finding {
	why := "it could not be read: " + err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "it was removed while palace read the directory"
	case errors.Is(err, repofs.ErrNotRegular):
		why = "it was replaced by something that is not a regular file while palace read the directory"
	}
	return cardfile.Finding{Path: f.path, Line: 1, Col: 1, Code: cardfile.CodeRead, Severity: cardfile.SeverityError,
		Message: why + "; check the card directory and sync again"}
}

// closedChan is the decoded channel of a file that is not decoded.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// findings waits for every file and returns their findings in file order,
// with ids declared twice.
func (d *decoding) findings() []cardfile.Finding {
	d.unpace()
	d.work()
	<-d.all
	d.once.Do(func() {
		var out []cardfile.Finding
		declared := map[string]string{}
		for i, f := range d.files {
			out = append(out, d.per[i]...)
			if f.keep {
				declared[f.id] = f.path
			}
		}
		for _, f := range d.files {
			if f.declared == "" {
				continue
			}
			id := f.declared
			if first, dup := declared[id]; dup && first != f.path {
				out = append(out, cardfile.Finding{Path: f.path, Line: f.idLine, Col: 1, Code: cardfile.CodeDuplicateID,
					Severity: cardfile.SeverityError, CardID: id,
					Message: fmt.Sprintf("card id %s is declared by %s too: a card has one file; give the copy a new id or remove it", id, first)})
			}
			declared[id] = f.path
		}
		d.out = out
	})
	return d.out
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines (the caller's among
// them) and waits.
func parallel(n int, fn func(i int)) { startParallel(runtime.GOMAXPROCS(0)-1, n, fn)() }

// writerWorkers is how many goroutines work beside an import's SQLite
// writer: one per core but the writer's. The import's time is the
// writer's, which runs on one core; with two decoders and the writer
// runnable on two cores, the writer had two thirds of one.
func writerWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// startParallel starts fn(0..n-1) on workers new goroutines and returns
// at once; finish runs the items no goroutine has taken yet on the
// caller's goroutine, then waits for all of them.
func startParallel(workers, n int, fn func(i int)) (finish func()) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	return func() {
		work()
		wg.Wait()
	}
}

// limitFindings applies the limits every other way in applies (record,
// distill, MCP) to a card file's card and evidence: sizes, NUL bytes,
// globs and trigger patterns that compile.
func limitFindings(path string, p cardfile.Parsed) []cardfile.Finding {
	var out []cardfile.Finding
	add := func(line int, err error) {
		if err != nil {
			out = append(out, cardfile.Finding{Path: path, Line: line, Col: 1, Code: cardfile.CodeValue,
				Severity: cardfile.SeverityError, CardID: p.Card.ID, Message: err.Error()})
		}
	}
	c := p.Card
	add(p.Line("field"), limits.Text("field", c.Field, limits.FieldBytes, "use a short name such as go or release-process"))
	add(p.Line("statement"), limits.Text("statement", c.Statement, 0, "remove it"))
	add(p.Line("content"), limits.Text("content", c.Content, limits.ContentBytes, "keep the card short; the evidence carries the detail"))
	add(p.Line("scope"), limits.Scope(domain.Scope{Paths: c.Scope.Paths, Languages: c.Scope.Languages, Fields: c.Scope.Fields}))
	for _, pat := range c.Triggers.Patterns {
		if _, err := regexp.Compile(pat); err != nil {
			add(p.Line("triggers"), fmt.Errorf("trigger pattern %q does not compile: %v", pat, err))
		}
	}
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
			out = append(out, cardfile.Finding{Path: path, Line: line, Col: 1, Code: cardfile.CodeSecret,
				Severity: cardfile.SeverityError, CardID: p.Card.ID,
				Message: fmt.Sprintf("%s holds a secret (%s %s at its line %d): remove it from the file and rotate it", what, s.Rule, s.Redacted, s.Line)})
		}
	}
	add(p.Line("statement"), "the statement", p.Card.Statement)
	add(p.Line("content"), "the content", p.Card.Content)
	for i, e := range p.Card.Evidence {
		if !e.Redacted {
			add(p.EvidenceLines[i], "evidence "+e.ID, e.Content)
		}
	}
	return out
}

// plan is what one sync does, decided before anything is written.
type plan struct {
	h       *Team
	rep     *SyncReport
	repoID  string
	resolve map[string]string
	rewrite bool
	export  []*store.SyncRow
	imports []*syncFile
	rows    map[string]*store.SyncRow // the rows of imports that update a card
	restat  []store.CardFile          // unchanged files whose stat is new
	// onDisk are the files of exported cards that are as the last sync
	// left them: one whose bytes are what the export renders is not
	// written again.
	onDisk map[string]*syncFile
	// dec is the decoding of the directory's changed files, still under
	// way while the sync plans and imports; waited is set once its
	// findings are in the report.
	dec    *decoding
	waited bool
}

// decoded waits for every file's decoding and puts its findings in the
// report, before those of the plan. A file with an error refuses the whole
// sync: the report then holds the findings alone, as if nothing had been
// planned.
func (p *plan) decoded() error {
	if p.waited {
		return nil
	}
	p.waited = true
	fs := p.dec.findings()
	if cardfile.HasErrors(fs) {
		*p.rep = SyncReport{Dir: p.rep.Dir, DryRun: p.rep.DryRun, Exported: []string{}, Imported: []string{}, Held: []HeldCard{},
			Conflicts: []SyncConflict{}, Removed: []string{}, Findings: fs}
		return &Error{Kind: KindInvalid, Field: "card files",
			Msg: fmt.Sprintf("%s in %s: nothing was imported or exported; fix them (palace cards check shows them) and sync again",
				plural(countErrors(fs), "card file problem"), cardfile.Dir)}
	}
	p.rep.Findings = append(append([]cardfile.Finding{}, fs...), p.rep.Findings...)
	return nil
}

// changedHere reports whether the card changed in this palace since its
// file was last written or read.
func changedHere(r *store.SyncRow) bool {
	return r.File == nil || r.File.FileSHA256 == "" || r.EventSeq > r.File.EventSeq
}

func (p *plan) file(ctx context.Context, f *syncFile, r *store.SyncRow) {
	if p.rows == nil {
		p.rows, p.onDisk = map[string]*store.SyncRow{}, map[string]*syncFile{}
	}
	if f.keep {
		p.onDisk[f.id] = f
	}
	switch {
	case r == nil:
		p.imports = append(p.imports, f)
	case f.keep && !changedHere(r) && p.rewrite && (r.File.Held == "" || r.Status.Authoritative()):
		p.export = append(p.export, r)
	case f.keep && !changedHere(r):
		p.rep.Unchanged++
		if f.data != nil {
			fr := *r.File
			p.restat = append(p.restat, p.stat(fr, f))
		}
	case f.keep:
		if r.File.Held != "" && !r.Status.Authoritative() {
			// The file claims more than the gate let this palace accept:
			// writing the candidate back would undo the team's claim.
			p.rep.Unchanged++
			return
		}
		p.export = append(p.export, r)
	case !changedHere(r) || p.resolve[f.id] == "file":
		p.rows[f.id] = r
		p.imports = append(p.imports, f)
	case p.resolve[f.id] == "palace":
		p.export = append(p.export, r)
	default:
		p.conflict(ctx, f, r)
	}
}

func (p *plan) conflict(ctx context.Context, f *syncFile, r *store.SyncRow) {
	c := SyncConflict{CardID: f.id, Path: f.path, File: string(f.data)}
	if b, err := p.h.renderIDs(ctx, []string{r.CardID}); err == nil {
		c.Palace = string(b[r.CardID])
		if c.Palace == c.File {
			// Both sides made the same change: nothing to merge.
			fr := store.CardFile{CardID: r.CardID, AnchorID: p.repoID, FileSHA256: f.sha, EventSeq: r.EventSeq}
			p.restat = append(p.restat, p.stat(fr, f))
			p.rep.Unchanged++
			return
		}
	}
	p.rep.Conflicts = append(p.rep.Conflicts, c)
}

// stat records f's stat in fr, unless the file changed too recently to
// trust its mtime.
func (p *plan) stat(fr store.CardFile, f *syncFile) store.CardFile {
	fr.Checkout, fr.Size, fr.MtimeNS = p.h.loc.Worktree, f.size, f.mtime
	if time.Since(time.Unix(0, f.mtime)) < racyWindow {
		fr.Size = -1
	}
	fr.SyncedAt = p.h.stamp()
	return fr
}

// checkIDs looks up the ids of new files in the palace. An id held at
// another anchor (a copy of some card, or a forged id) refuses the sync; an
// id this repository holds without a file (a candidate never shared, or a
// file record lost) is a conflict unless both sides are equal.
func (p *plan) checkIDs(ctx context.Context) error {
	var ids []string
	for _, f := range p.imports {
		if p.rows[f.id] == nil {
			ids = append(ids, f.id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := p.h.store.CardAnchors(ctx, ids)
	if err != nil {
		return internal(err, "read cards")
	}
	if len(found) == 0 {
		return nil
	}
	var bad []cardfile.Finding
	kept := p.imports[:0]
	for _, f := range p.imports {
		a, ok := found[f.id]
		switch {
		case !ok || p.rows[f.id] != nil:
			kept = append(kept, f)
		case a.AnchorID == p.repoID:
			if f.lazy {
				// The decoding reads a new file; the conflict shows it whole.
				p.dec.unpace()
				<-f.decoded
				if err := f.read(); err != nil {
					return internal(err, "read %s", f.path)
				}
			}
			p.conflict(ctx, f, &store.SyncRow{CardID: f.id, Status: a.Status})
		default:
			where := p.h.anchorRef(ctx, a.AnchorID).Kind
			line := 1
			p.dec.unpace()
			<-f.decoded // parsed stays nil for a file with errors, which refuse the sync first
			if f.parsed != nil {
				line = f.parsed.Line("id")
			}
			bad = append(bad, cardfile.Finding{Path: f.path, Line: line, Col: 1, Code: cardfile.CodeLocal,
				Severity: cardfile.SeverityError, CardID: f.id,
				Message: fmt.Sprintf("card %s exists in this palace at the %s anchor, not this repository's: give the file's card a new id, or remove the file", f.id, where)})
		}
	}
	p.imports = kept
	if len(bad) > 0 {
		p.rep.Findings = append(p.rep.Findings, bad...)
		return &Error{Kind: KindInvalid, Field: "card files", Msg: fmt.Sprintf("%s: nothing was imported or exported", plural(len(bad), "card id held elsewhere"))}
	}
	return nil
}

// run imports, then exports, then records the new file states, each
// import in the one transaction of all imports.
func (p *plan) run(ctx context.Context) error {
	if len(p.imports) > 0 || len(p.restat) > 0 {
		if err := p.h.store.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.PutCardFiles(ctx, p.restat); err != nil {
				return err
			}
			if len(p.imports) < importChunk {
				return p.importAll(ctx, tx) // too small for the cache to matter
			}
			return tx.WithBulkCache(ctx, func() error { return p.importAll(ctx, tx) })
		}); err != nil {
			p.rep.Imported, p.rep.Held = []string{}, []HeldCard{}
			return classify(err, "import card files")
		}
	}
	if len(p.export) == 0 {
		return nil
	}
	return p.exportAll(ctx)
}

// importChunk is how many files an import writes at a time (the first
// chunk is a quarter of it): the files after a chunk are decoded while it
// is written.
const importChunk = 1024

// errUndecodable aborts an import's transaction when a file turns out to
// have errors; Sync then refuses the whole sync with the findings.
var errUndecodable = errors.New("card files with errors")

// importAll writes every imported file's evidence, card, links and event,
// chunk by chunk in file order as the files' decoding (started by Sync)
// finishes, so SQLite writes on one core while the later files are decoded
// on the other; the decoding keeps at most decodeAhead files past the
// chunk being written. Nothing commits unless every file of the directory
// decoded without an error.
func (p *plan) importAll(ctx context.Context, tx *store.Tx) error {
	if _, err := p.h.ensureAnchor(ctx, tx, domain.AnchorRepo); err != nil {
		return err
	}
	n := importChunk / 4
	for start := 0; start < len(p.imports); start += n {
		if start > 0 {
			n = importChunk
		}
		part := p.imports[start:min(start+n, len(p.imports))]
		if p.dec != nil {
			p.dec.allow(part[len(part)-1].seq + 1 + decodeAhead)
		}
		for _, f := range part {
			if p.dec != nil {
				p.dec.waitFor(f)
			}
			<-f.decoded
			if f.parsed == nil {
				return errUndecodable
			}
		}
		if err := p.importFiles(ctx, tx, part); err != nil {
			return err
		}
		// Written: the file's bytes and decoded card are not needed again.
		for _, f := range part {
			f.data, f.parsed = nil, nil
		}
	}
	if p.dec != nil && cardfile.HasErrors(p.dec.findings()) {
		return errUndecodable
	}
	return nil
}

// importFiles writes the evidence, cards, links and events of imports.
// Everything it reads is read first, for all of them at once (the
// evidence of their ids, the originals of their contents, the open
// contests of the cards whose claim the gate checks; rows written by an
// earlier chunk included); then the rows are written table by table in
// multi-row statements, in file order, so the result is the one a write
// per file would give.
func (p *plan) importFiles(ctx context.Context, tx *store.Tx, imports []*syncFile) error {
	h := p.h
	now := h.stamp()
	n := 0
	for _, f := range imports {
		n += len(f.parsed.Card.Evidence)
	}
	evIDs, shas := make([]string, 0, n), make([]string, 0, n)
	var claims []string
	for _, f := range imports {
		fc := f.parsed.Card
		for _, e := range fc.Evidence {
			evIDs = append(evIDs, e.ID)
			shas = append(shas, e.SHA256)
		}
		// Only a card this palace holds can have a contest (a contest
		// references its card): a new card's claim needs no look-up.
		if r := p.rows[f.id]; r != nil {
			if claimed := domain.Status(fc.Status); claimed.Authoritative() && claimed != r.Status {
				claims = append(claims, f.id)
			}
		}
	}
	have, err := tx.EvidenceByIDs(ctx, evIDs)
	if err != nil {
		return err
	}
	originals, err := tx.OriginalsByHash(ctx, shas)
	if err != nil {
		return err
	}
	// A contest open here holds the claim back too. (No claims, no look-up:
	// OpenContests of nil ids reads every open contest.)
	var open map[string][]store.Contest
	if len(claims) > 0 {
		if open, err = tx.OpenContests(ctx, claims); err != nil {
			return err
		}
	}
	var (
		evs     = make([]domain.Evidence, 0, len(evIDs))
		dups    []store.Duplicate
		cards   = make([]domain.Card, 0, len(imports))
		updates []domain.Card
		links   = make([]domain.Link, 0, len(evIDs))
		events  = make([]domain.Event, 0, len(imports))
		held    = make([][]string, len(imports))
	)
	// Evidence in file order: an id or a content met in an earlier file is
	// not new in a later one.
	for _, f := range imports {
		fc := f.parsed.Card
		for i, e := range fc.Evidence {
			if old, ok := have[e.ID]; ok {
				if old.ContentSHA256 != e.SHA256 {
					return &Error{Kind: KindInvalid, Field: "card files", Msg: fmt.Sprintf(
						"%s:%d: %s evidence %s differs from the evidence of that id in this palace (sha256 %s, not %s): evidence is never edited; nothing was imported",
						f.path, f.parsed.EvidenceLines[i], cardfile.CodeEvidenceSame, e.ID, short(old.ContentSHA256), short(e.SHA256))}
				}
				continue
			}
			ev := domain.Evidence{ID: e.ID, Content: e.Content, Domain: domain.Domain(e.Domain), Field: e.Field, Provenance: domain.Provenance(e.Provenance),
				SourceRef: e.SourceRef, Tags: e.Tags, AnchorID: p.repoID, ContentSHA256: e.SHA256, Actor: e.Actor,
				ActorType: domain.ActorType(e.ActorType), CreatedAt: e.CreatedAt}
			// Ids travel with the card, so the row keeps its id; content this
			// anchor holds already under another id is marked a duplicate,
			// so it never counts twice at the gate.
			key := p.repoID + "|" + e.SHA256
			if orig, dup := originals[key]; dup {
				dups = append(dups, store.Duplicate{EvidenceID: e.ID, Original: orig, Cause: store.DuplicateAllowed, CreatedAt: now})
			} else {
				originals[key] = e.ID
			}
			evs = append(evs, ev)
			have[e.ID] = ev
		}
	}
	// The cards, their links, gate decisions and event records are built
	// on the other cores while the evidence is written (they are most of
	// an import's CPU outside SQLite, and SQLite keeps one core), and on
	// this one too once it is written.
	built := make([]importedCard, len(imports))
	finish := startParallel(writerWorkers(), len(imports), func(i int) { built[i] = p.build(ctx, imports[i], open[imports[i].id], now) })
	err = tx.InsertEvidenceRows(ctx, evs)
	if err == nil {
		err = tx.MarkDuplicates(ctx, dups)
	}
	finish()
	if err != nil {
		return err
	}
	for fi, b := range built {
		held[fi] = b.reasons
		if b.held != nil {
			p.rep.Held = append(p.rep.Held, *b.held)
		}
		if b.from == "" {
			cards = append(cards, b.card)
		} else {
			updates = append(updates, b.card)
		}
		links = append(links, b.links...)
		// Event ids are taken in file order.
		events = append(events, h.newEvent(imports[fi].id, b.event))
	}
	if err := tx.InsertCards(ctx, cards); err != nil {
		return err
	}
	for _, c := range updates {
		if err := tx.UpdateCardFromFile(ctx, c); err != nil {
			return err
		}
	}
	if err := tx.InsertLinks(ctx, links); err != nil {
		return err
	}
	stored, err := tx.AppendEvents(ctx, events)
	if err != nil {
		return err
	}
	recs := make([]store.CardFile, len(imports))
	for i, f := range imports {
		recs[i] = p.stat(store.CardFile{CardID: f.id, AnchorID: p.repoID, FileSHA256: f.sha, EventSeq: stored[i].Seq,
			Held: heldJSON(f.parsed.Card.Status, held[i])}, f)
		p.rep.Imported = append(p.rep.Imported, f.id)
	}
	return tx.PutCardFiles(ctx, recs)
}

// importedCard is what one imported file writes besides its evidence.
type importedCard struct {
	card  domain.Card
	from  domain.Status // the card's status in this palace, "" for a new card
	links []domain.Link
	event domain.Event // stamped (id, actor, time) by newEvent
	// held and reasons say why the gate refused the file's claim; nil
	// when it did not.
	held    *HeldCard
	reasons []string
}

// build makes f's card, links and imported event, re-checking a claim of
// authority against the gate (contests are the card's open contests here).
// It reads p and writes nothing: files are built concurrently.
func (p *plan) build(ctx context.Context, f *syncFile, contests []store.Contest, now string) importedCard {
	h := p.h
	fc := f.parsed.Card
	c := fromCardFile(fc, p.repoID, now)
	c.ReviewAfter, c.ExpiresAt = normDate(c.ReviewAfter), normDate(c.ExpiresAt)
	out := importedCard{links: fileLinks(fc, now)}
	if r := p.rows[f.id]; r != nil {
		out.from = r.Status
	}
	var gate *GateResult
	if claimed := domain.Status(fc.Status); claimed.Authoritative() && claimed != out.from {
		// An import is never decided by a local, uncommitted policy.
		g := h.gateAs(ctx, c, out.links, contests, "promote", fc.Status, fileReviewer(fc), false)
		gate = &g
		if !g.Allow {
			out.reasons = g.Reasons
			// A card this palace holds keeps its status; a new one is a
			// candidate.
			c.Status = cmp.Or(out.from, domain.StatusCandidate)
			out.held = &HeldCard{CardID: f.id, Path: f.path, Line: f.parsed.Line("status"), Claimed: fc.Status, Reasons: g.Reasons}
		}
	}
	out.card = c
	out.event = domain.Event{Type: "imported", FromStatus: out.from, ToStatus: c.Status,
		Reason: "imported from " + f.path + atCommit(p.rep.Commit),
		Data: mustJSON(importData{Path: f.path, Commit: p.rep.Commit, FileSHA256: f.sha, Claimed: fc.Status,
			Held: out.reasons, LastEvent: fc.LastEvent})}
	if gate != nil {
		out.event.Policy, out.event.PolicyHash, out.event.Decision = policies.Gate.Package(), gate.Policy.Hash, mustJSON(gatekeep.Record(*gate))
	}
	return out
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

// fileReviewer is the reviewer a card file names for its last lifecycle
// change. A file that names none, or names one without saying human or
// agent, is not taken as reviewed by a human.
func fileReviewer(c cardfile.Card) policies.Reviewer {
	if e := c.LastEvent; e != nil && e.Reviewer.Type != "" {
		return policies.Reviewer{Name: e.Reviewer.Name, Type: e.Reviewer.Type}
	}
	if e := c.LastEvent; e != nil {
		return policies.Reviewer{Name: e.Actor, Type: "agent"}
	}
	return policies.Reviewer{Name: c.CreatedBy, Type: "agent"}
}

// renderIDs renders the card files of ids. The cards, their citations
// with the evidence they cite, and their last events are read at the same
// time on connections of their own, and the files are built and encoded on
// every core: rendering all of a repository's cards is an export's work.
func (h *Team) renderIDs(ctx context.Context, ids []string) (map[string][]byte, error) {
	var (
		wg                sync.WaitGroup
		links             map[string][]domain.Link
		evidence          map[string]domain.Evidence
		events            map[string]domain.Event
		linkErr, eventErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		links, evidence, linkErr = h.citations(ctx, ids)
	}()
	go func() {
		defer wg.Done()
		events, eventErr = h.store.LastLifecycleEvents(ctx, ids)
	}()
	cards, err := h.cardsByIDs(ctx, ids)
	wg.Wait()
	switch {
	case err != nil:
		return nil, err
	case linkErr != nil:
		return nil, linkErr
	case eventErr != nil:
		return nil, internal(eventErr, "read card events")
	}
	enc := make([][]byte, len(cards))
	errs := make([]error, len(cards))
	parallel(len(cards), func(i int) {
		c := &cards[i]
		enc[i], errs[i] = cardfile.Encode(toCardFile(*c, links[c.ID], evidence, events[c.ID]))
	})
	out := make(map[string][]byte, len(cards))
	for i, c := range cards {
		if errs[i] != nil {
			return nil, internal(errs[i], "render card %s", c.ID)
		}
		out[c.ID] = enc[i]
	}
	return out, nil
}

// cardsByIDs reads the cards of ids: one by one for a few (an unknown id
// is KindInvalid), else every card of this repository, keeping those
// asked for.
func (h *Team) cardsByIDs(ctx context.Context, ids []string) ([]domain.Card, error) {
	var cards []domain.Card
	if len(ids) <= 64 {
		for _, id := range ids {
			c, err := h.store.Card(ctx, id)
			if err != nil {
				return nil, notFound(err, "card", id)
			}
			cards = append(cards, c)
		}
		return cards, nil
	}
	all, err := h.store.ListCards(ctx, store.CardFilter{AnchorIDs: []string{AnchorID(h.loc.Identity(domain.AnchorRepo))}})
	if err != nil {
		return nil, internal(err, "read cards")
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	cards = make([]domain.Card, 0, len(ids))
	for _, c := range all {
		if want[c.ID] {
			cards = append(cards, c)
		}
	}
	return cards, nil
}

// exportAll writes the planned cards' files, then records them.
func (p *plan) exportAll(ctx context.Context) error {
	ids := make([]string, len(p.export))
	for i, r := range p.export {
		ids[i] = r.CardID
	}
	files, err := p.h.renderIDs(ctx, ids)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.rep.Dir, 0o755); err != nil {
		return internal(err, "create %s", p.rep.Dir)
	}
	written := make([]*syncFile, len(p.export))
	errs := make([]error, len(p.export))
	parallel(len(p.export), func(i int) {
		r := p.export[i]
		b := files[r.CardID]
		if len(b) > cardfile.MaxFileBytes {
			return
		}
		f := &syncFile{id: r.CardID, abs: filepath.Join(p.rep.Dir, cardfile.FileName(r.CardID)), sha: sha256Hex(b)}
		if old := p.onDisk[r.CardID]; old != nil && old.sha == f.sha {
			// The file holds these bytes already (a rewrite of an
			// unchanged card, or a change that does not show in its file).
			f.size, f.mtime = old.size, old.mtime
		} else {
			f.size, f.mtime, errs[i] = writeFileAtomic(f.abs, b)
		}
		written[i] = f
	})
	recs := make([]store.CardFile, 0, len(p.export))
	for i, r := range p.export {
		if errs[i] != nil {
			return internal(errs[i], "write %s", written[i].abs)
		}
		f := written[i]
		if f == nil {
			p.rep.Findings = append(p.rep.Findings, cardfile.Finding{Path: cardfile.Dir + "/" + cardfile.FileName(r.CardID), Line: 1, Col: 1,
				Code: cardfile.CodeTooLarge, Severity: cardfile.SeverityWarning, CardID: r.CardID,
				Message: fmt.Sprintf("card %s with its evidence is %d bytes, over the %d-byte limit: not written", r.CardID, len(files[r.CardID]), cardfile.MaxFileBytes)})
			continue
		}
		held := ""
		if r.File != nil && !r.Status.Authoritative() {
			held = r.File.Held
		}
		recs = append(recs, p.stat(store.CardFile{CardID: r.CardID, AnchorID: p.repoID, FileSHA256: f.sha,
			EventSeq: r.EventSeq, Held: held}, f))
		p.rep.Exported = append(p.rep.Exported, r.CardID)
	}
	err = p.h.store.Tx(ctx, func(tx *store.Tx) error { return tx.PutCardFiles(ctx, recs) })
	if err != nil {
		return classify(err, "record exported card files")
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory, so a reader (git, an editor) never sees half a card, without
// following a link at path, and returns the file's size and mtime.
func writeFileAtomic(path string, b []byte) (size, mtime int64, err error) {
	if err := repofs.WriteFileAtomic(filepath.Dir(path), filepath.Base(path), b, 0o644); err != nil {
		return 0, 0, err
	}
	info, err := os.Lstat(path)
	if err != nil {
		return 0, 0, err
	}
	return info.Size(), info.ModTime().UnixNano(), nil
}

// headCommit is the checkout's HEAD commit, "" when there is none yet.
func headCommit(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "-q", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
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
	return string(mustJSON(heldRecord{Claimed: claimed, Reasons: reasons}))
}

// HeldCards lists the cards of anchorIDs (every anchor when empty) whose
// file claimed promoted or canonical and was held back as a candidate by
// the gate at import, with the gate's reasons. doctor and audit show them.
func (h *Team) HeldCards(ctx context.Context, anchorIDs []string) ([]HeldCard, error) {
	rows, err := h.store.HeldCardFiles(ctx)
	if err != nil {
		return nil, internal(err, "read held card files")
	}
	out := []HeldCard{}
	for _, r := range rows {
		if len(anchorIDs) > 0 && !slices.Contains(anchorIDs, r.AnchorID) {
			continue
		}
		var rec heldRecord
		if err := json.Unmarshal([]byte(r.Held), &rec); err != nil {
			rec.Reasons = []string{r.Held}
		}
		out = append(out, HeldCard{CardID: r.CardID, Path: cardfile.Dir + "/" + cardfile.FileName(r.CardID),
			Claimed: rec.Claimed, Reasons: rec.Reasons})
	}
	return out, nil
}

// CardFile renders card id as the file palace sync writes for it: the
// same bytes for an unchanged card. Any card of the palace may be rendered
// (sync writes only this repository's); an unknown id is KindInvalid.
func (h *Team) CardFile(ctx context.Context, id string) ([]byte, error) {
	files, err := h.renderIDs(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return files[id], nil
}
