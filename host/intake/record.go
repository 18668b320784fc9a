package intake

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/staleness"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/store"
)

// MaxContentBytes is the largest evidence content accepted (1 MiB).
const MaxContentBytes = limits.ContentBytes

// RecordRequest is one piece of evidence to record.
type RecordRequest struct {
	Content string `json:"content"`
	// Field defaults to "general".
	Field string `json:"field,omitempty"`
	// Domain defaults to "project" at a repo or worktree anchor, "global" at the global one.
	Domain string `json:"domain,omitempty"`
	// Provenance defaults to "human" in human mode and "runtime" in agent mode.
	Provenance string   `json:"provenance,omitempty"`
	SourceRef  string   `json:"source_ref,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	// Anchor is worktree, repo or global; defaults to the worktree (the repo
	// for research evidence). Outside git it must be global.
	Anchor string `json:"anchor,omitempty"`
	// AllowDuplicate writes a row marked a duplicate of the first when the
	// content is on record at this anchor; else the existing row returns.
	AllowDuplicate bool `json:"allow_duplicate,omitempty"`
}

// Evidence is recorded evidence as the host shows it.
type Evidence struct {
	domain.Evidence
	Anchor AnchorRef `json:"anchor"`
	// Redaction is set by ShowEvidence when the content was redacted.
	Redaction *store.Redaction `json:"redaction,omitempty"`
	// Existing is set by Record when the same content was on record at the
	// anchor already: nothing was written and this is that row.
	Existing bool `json:"existing,omitempty"`
	// DuplicateOf names the original when this row repeats its content
	// (recorded with AllowDuplicate, or marked when the palace migrated).
	DuplicateOf string `json:"duplicate_of,omitempty"`
	// Observed is what the evidence saw of the code its source_ref cites.
	Observed []domain.Observation `json:"observed,omitempty"`
}

// Record validates req and appends one evidence row. The same content at
// the same anchor is recorded once: without AllowDuplicate the existing row
// comes back with Existing set and nothing is written.
func (h *Intake) Record(ctx context.Context, req RecordRequest) (Evidence, error) {
	ev, kind, err := h.PrepareEvidence(req, "")
	if err != nil {
		return Evidence{}, err
	}
	var heads headCache
	obs := h.observe(ctx, &heads, ev, kind)
	var a store.Anchor
	var out Evidence
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = h.ensureAnchor(ctx, tx, kind); err != nil {
			return err
		}
		ev.AnchorID = a.ID
		if out, err = h.InsertDistinct(ctx, tx, ev, req.AllowDuplicate); err != nil || out.Existing || len(obs) == 0 {
			return err
		}
		out.Observed = obs
		return tx.InsertObservations(ctx, obs)
	})
	if err != nil {
		return Evidence{}, internal(err, "record evidence")
	}
	out.Anchor = AnchorRef{Kind: a.Kind, ID: a.ID, Identity: a.Identity}
	return out, nil
}

// InsertDistinct inserts ev unless its content is on record at its anchor:
// then it returns that row (Existing), or with allowDup inserts ev marked
// as its duplicate.
func (h *Intake) InsertDistinct(ctx context.Context, tx *store.Tx, ev domain.Evidence, allowDup bool) (Evidence, error) {
	orig, found, err := tx.OriginalEvidence(ctx, ev.AnchorID, ev.ContentSHA256)
	if err != nil {
		return Evidence{}, err
	}
	if found && !allowDup {
		rows, err := tx.EvidenceByIDs(ctx, []string{orig})
		if err != nil {
			return Evidence{}, err
		}
		return Evidence{Evidence: rows[orig], Existing: true}, nil
	}
	if err := tx.InsertEvidence(ctx, ev); err != nil {
		return Evidence{}, err
	}
	if found {
		if err := tx.MarkDuplicate(ctx, ev.ID, orig, store.DuplicateAllowed, ev.CreatedAt); err != nil {
			return Evidence{}, err
		}
		return Evidence{Evidence: ev, DuplicateOf: orig}, nil
	}
	return Evidence{Evidence: ev}, nil
}

// headCache asks git for HEAD once per record or batch, and only when
// some evidence cites a file.
type headCache struct {
	done bool
	head string
}

// observe is what ev saw of the code its source_ref cites, for rows of the
// checkout or its repository.
func (h *Intake) observe(ctx context.Context, heads *headCache, ev domain.Evidence, kind domain.AnchorKind) []domain.Observation {
	if !h.loc.InGit || kind == domain.AnchorGlobal || ev.SourceRef == "" {
		return nil
	}
	o, ok := staleness.Observe(h.loc.Worktree, "", ev.ID, ev.SourceRef, ev.CreatedAt)
	if !ok {
		return nil
	}
	// git is asked only once a cited file was found: most source refs
	// name notes, URLs or files elsewhere.
	if !heads.done {
		heads.head, heads.done = staleness.Head(ctx, h.loc.Worktree), true
	}
	o.Commit = heads.head
	return []domain.Observation{o}
}

// PrepareEvidence validates req (fields named with prefix, e.g. "line 7: ")
// and builds the row, anchor id still unset.
func (h *Intake) PrepareEvidence(req RecordRequest, prefix string) (domain.Evidence, domain.AnchorKind, error) {
	fail := func(err error) (domain.Evidence, domain.AnchorKind, error) {
		if prefix != "" {
			var he *Error
			if errors.As(err, &he) {
				he.Msg = prefix + he.Msg
			}
		}
		return domain.Evidence{}, "", err
	}
	switch {
	case !utf8.ValidString(req.Content):
		return fail(invalid("content", "content is not valid UTF-8: record text, or base64-encode binary data"))
	case strings.TrimSpace(req.Content) == "":
		return fail(invalid("content", "content is empty: pass --content TEXT, --file PATH or text on stdin"))
	case len(req.Content) > MaxContentBytes:
		return fail(invalid("content", "content is %d bytes, over the 1 MiB limit: record a summary and put the full text in --source-ref", len(req.Content)))
	}
	if err := checkEvidenceInput(req); err != nil {
		return fail(err)
	}
	if err := h.echo.check(req.Content); err != nil {
		return fail(err)
	}
	if err := RefuseSecrets("content", req.Content); err != nil {
		return fail(err)
	}
	prov := req.Provenance
	if prov == "" {
		prov = "human"
		if h.mode == Agent {
			prov = "runtime"
		}
	}
	if err := hosterr.OneOf("provenance", domain.Provenance(prov), domain.Provenances); err != nil {
		return fail(err)
	}
	if prov == "human" && h.mode == Agent {
		return fail(&Error{Kind: KindMode, Field: "provenance", Msg: "provenance human is refused in agent mode: an agent records runtime or research evidence; a human records what people taught (mode is fixed by --mode/" + ModeEnv + "=agent)"})
	}
	def := h.loc.Innermost()
	if prov == "research" {
		def = domain.AnchorRepo
	}
	kind, err := h.writeAnchorKind("anchor", req.Anchor, def)
	if err != nil {
		return fail(err)
	}
	field := cmp.Or(req.Field, "general")
	dom, err := anchorDomain(kind, req.Domain)
	if err != nil {
		return fail(err)
	}
	for _, s := range append([]string{field, req.SourceRef}, req.Tags...) {
		if !utf8.ValidString(s) {
			return fail(invalid("field", "field, source_ref and tags must be valid UTF-8"))
		}
	}
	now := h.now()
	sum := sha256.Sum256([]byte(req.Content))
	tags := req.Tags
	if tags == nil {
		tags = []string{}
	}
	return domain.Evidence{
		ID:            store.NewID(store.EvidencePrefix, now),
		Content:       req.Content,
		Domain:        dom,
		Field:         field,
		Provenance:    domain.Provenance(prov),
		SourceRef:     req.SourceRef,
		Tags:          tags,
		ContentSHA256: hex.EncodeToString(sum[:]),
		Actor:         h.actor,
		ActorType:     h.gate.ActorType(),
		CreatedAt:     store.FormatTime(now),
	}, kind, nil
}

// BatchSize is how many rows one import transaction commits. An interrupted
// import leaves whole batches only.
const BatchSize = 1000

// BatchResult reports an import.
type BatchResult struct {
	// Imported counts the rows written; Existing the lines on record already.
	Imported int      `json:"imported"`
	Existing int      `json:"existing"`
	Batches  int      `json:"batches"`
	FirstID  string   `json:"first_id,omitempty"`
	LastID   string   `json:"last_id,omitempty"`
	IDs      []string `json:"-"`
}

// Progress is told how many rows of total are done after each batch.
type Progress func(done, total int)

// RecordBatch imports JSON Lines of RecordRequests from r, defaults filling
// omitted fields. Every line is validated first (a malformed one writes
// nothing); rows commit in batches of BatchSize.
func (h *Intake) RecordBatch(ctx context.Context, r io.Reader, name string, defaults RecordRequest, progress Progress) (BatchResult, error) {
	type row struct {
		ev       domain.Evidence
		kind     domain.AnchorKind
		allowDup bool
		obs      []domain.Observation
	}
	var rows []row
	var heads headCache
	err := readRecordLines(r, name, defaults, func(lineNo int, req RecordRequest) error {
		ev, kind, err := h.PrepareEvidence(req, fmt.Sprintf("%s:%d: ", name, lineNo))
		if err != nil {
			return err
		}
		rows = append(rows, row{ev, kind, req.AllowDuplicate, h.observe(ctx, &heads, ev, kind)})
		return nil
	})
	if err != nil {
		return BatchResult{}, err
	}
	res := BatchResult{IDs: make([]string, 0, len(rows))}
	for start := 0; start < len(rows); start += BatchSize {
		batch := rows[start:min(start+BatchSize, len(rows))]
		var ids []string
		existing := 0
		err := h.store.Tx(ctx, func(tx *store.Tx) error {
			// The originals of the batch's hashes, read in one query, then
			// kept current as the batch inserts.
			shas := make([]string, len(batch))
			for i, r := range batch {
				shas[i] = r.ev.ContentSHA256
			}
			originals, err := tx.OriginalsByHash(ctx, shas)
			if err != nil {
				return err
			}
			// The batch's new rows are written together, in line order,
			// then the duplicates they include are marked.
			anchors := map[domain.AnchorKind]string{}
			fresh := make([]domain.Evidence, 0, len(batch))
			var obs []domain.Observation
			var dups []store.Duplicate
			for _, r := range batch {
				id, ok := anchors[r.kind]
				if !ok {
					a, err := h.ensureAnchor(ctx, tx, r.kind)
					if err != nil {
						return err
					}
					id, anchors[r.kind] = a.ID, a.ID
				}
				r.ev.AnchorID = id
				key := id + "|" + r.ev.ContentSHA256
				orig, found := originals[key]
				switch {
				case found && !r.allowDup:
					ids = append(ids, orig)
					existing++
					continue
				case found:
					dups = append(dups, store.Duplicate{EvidenceID: r.ev.ID, Original: orig, Cause: store.DuplicateAllowed, CreatedAt: r.ev.CreatedAt})
				default:
					originals[key] = r.ev.ID
				}
				fresh = append(fresh, r.ev)
				obs = append(obs, r.obs...)
				ids = append(ids, r.ev.ID)
			}
			if err := tx.InsertEvidenceRows(ctx, fresh); err != nil {
				return err
			}
			if err := tx.InsertObservations(ctx, obs); err != nil {
				return err
			}
			return tx.MarkDuplicates(ctx, dups)
		})
		if err != nil {
			return res, internal(err, "import %s: batch %d (rows %d–%d) rolled back, %d rows committed before it (re-running the import writes each row once)", name, res.Batches+1, start+1, start+len(batch), res.Imported)
		}
		res.IDs = append(res.IDs, ids...)
		res.Imported += len(batch) - existing
		res.Existing += existing
		res.Batches++
		if progress != nil {
			progress(res.Imported+res.Existing, len(rows))
		}
	}
	if n := len(res.IDs); n > 0 {
		res.FirstID, res.LastID = res.IDs[0], res.IDs[n-1]
	}
	return res, nil
}
