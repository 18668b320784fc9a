package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/palacehq/palace/host/anchor"
	"github.com/palacehq/palace/store"
)

// MaxContentBytes is the largest evidence content accepted (1 MiB).
const MaxContentBytes = 1 << 20

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
	// Anchor is worktree, repo or global; defaults to the innermost (worktree in git).
	Anchor string `json:"anchor,omitempty"`
}

// Evidence is recorded evidence as the host shows it.
type Evidence struct {
	store.Evidence
	Anchor AnchorRef `json:"anchor"`
	// Redaction is set by ShowEvidence when the content was redacted.
	Redaction *store.Redaction `json:"redaction,omitempty"`
}

// AnchorRef names an anchor in output.
type AnchorRef struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Identity string `json:"identity,omitempty"`
}

// Record validates req and appends one evidence row.
func (h *Host) Record(ctx context.Context, req RecordRequest) (Evidence, error) {
	ev, kind, err := h.prepareEvidence(req, "")
	if err != nil {
		return Evidence{}, err
	}
	var a store.Anchor
	err = h.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = h.ensureAnchor(ctx, tx, kind); err != nil {
			return err
		}
		ev.AnchorID = a.ID
		return tx.InsertEvidence(ctx, ev)
	})
	if err != nil {
		return Evidence{}, internal(err, "record evidence")
	}
	return Evidence{Evidence: ev, Anchor: AnchorRef{Kind: a.Kind, ID: a.ID, Identity: a.Identity}}, nil
}

// prepareEvidence validates req (fields named with prefix, e.g. "line 7: ")
// and builds the row, anchor id still unset.
func (h *Host) prepareEvidence(req RecordRequest, prefix string) (store.Evidence, anchor.Kind, error) {
	fail := func(err error) (store.Evidence, anchor.Kind, error) {
		if prefix != "" {
			var he *Error
			if errors.As(err, &he) {
				he.Msg = prefix + he.Msg
			}
		}
		return store.Evidence{}, "", err
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
	if err := refuseSecrets("content", req.Content); err != nil {
		return fail(err)
	}
	kind, err := h.resolveAnchorKind("anchor", req.Anchor)
	if err != nil {
		return fail(err)
	}
	field := req.Field
	if field == "" {
		field = "general"
	}
	domain := req.Domain
	if domain == "" {
		domain = "project"
		if kind == anchor.Global {
			domain = "global"
		}
	}
	if err := oneOf("domain", domain, Domains); err != nil {
		return fail(err)
	}
	prov := req.Provenance
	if prov == "" {
		prov = "human"
		if h.mode == Agent {
			prov = "runtime"
		}
	}
	if err := oneOf("provenance", prov, Provenances); err != nil {
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
	return store.Evidence{
		ID:            store.NewID(store.EvidencePrefix, now),
		Content:       req.Content,
		Domain:        domain,
		Field:         field,
		Provenance:    prov,
		SourceRef:     req.SourceRef,
		Tags:          tags,
		ContentSHA256: hex.EncodeToString(sum[:]),
		Actor:         h.actor,
		ActorType:     h.actorType(),
		CreatedAt:     store.FormatTime(now),
	}, kind, nil
}

// BatchSize is how many rows one import transaction commits. An interrupted
// import leaves whole batches only.
const BatchSize = 1000

// BatchResult reports an import.
type BatchResult struct {
	Imported int      `json:"imported"`
	Batches  int      `json:"batches"`
	FirstID  string   `json:"first_id,omitempty"`
	LastID   string   `json:"last_id,omitempty"`
	IDs      []string `json:"-"`
}

// Progress is told how many rows of total are done after each batch.
type Progress func(done, total int)

// RecordBatch imports JSON Lines from r: one RecordRequest object per line
// (blank lines skipped); defaults fill fields a line omits. Every line is
// validated before anything is written, so a malformed line (reported with
// its line number) writes nothing; then rows commit in batches of BatchSize.
func (h *Host) RecordBatch(ctx context.Context, r io.Reader, name string, defaults RecordRequest, progress Progress) (BatchResult, error) {
	type row struct {
		ev   store.Evidence
		kind anchor.Kind
	}
	var rows []row
	err := readRecordLines(r, name, defaults, func(lineNo int, req RecordRequest) error {
		ev, kind, err := h.prepareEvidence(req, fmt.Sprintf("%s:%d: ", name, lineNo))
		if err != nil {
			return err
		}
		rows = append(rows, row{ev, kind})
		return nil
	})
	if err != nil {
		return BatchResult{}, err
	}
	res := BatchResult{IDs: make([]string, 0, len(rows))}
	for start := 0; start < len(rows); start += BatchSize {
		batch := rows[start:min(start+BatchSize, len(rows))]
		err := h.store.Tx(ctx, func(tx *store.Tx) error {
			anchors := map[anchor.Kind]string{}
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
				if err := tx.InsertEvidence(ctx, r.ev); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return res, internal(err, "import %s: batch %d (rows %d–%d) rolled back, %d rows committed before it", name, res.Batches+1, start+1, start+len(batch), res.Imported)
		}
		for _, r := range batch {
			res.IDs = append(res.IDs, r.ev.ID)
		}
		res.Imported += len(batch)
		res.Batches++
		if progress != nil {
			progress(res.Imported, len(rows))
		}
	}
	if n := len(res.IDs); n > 0 {
		res.FirstID, res.LastID = res.IDs[0], res.IDs[n-1]
	}
	return res, nil
}
