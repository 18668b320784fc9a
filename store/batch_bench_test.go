package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/benchclock"
	"github.com/palacehq/palace/store"
)

// importRows are the rows a sync of n card files writes: per card two
// pieces of evidence, the card, two links, an imported event with its gate
// decision and a file row, shaped like those of the host's sync benchmark.
type importRows struct {
	evs    []domain.Evidence
	cards  []domain.Card
	links  []domain.Link
	events []domain.Event
	files  []store.CardFile
}

func makeImportRows(n int) importRows {
	var r importRows
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	const policyHash = "773cfab77ec1b8d2cafe52be57383e3269450c3a5ea76fd424c5a7787b297b42"
	for i := range n {
		id := fmt.Sprintf("kc_%026d", i)
		es, ev := fmt.Sprintf("ev_%026d", 2*i), fmt.Sprintf("ev_%026d", 2*i+1)
		sup := fmt.Sprintf("Seen in service %d: handlers that open a transaction must close it on every return path, or the pool drains under load.", i)
		ver := fmt.Sprintf("Verified for service %d: the leak test passes with deferred rollback.", i)
		ref := fmt.Sprintf("svc%d/db.go#L12", i%200)
		r.evs = append(r.evs,
			domain.Evidence{ID: es, Content: sup, Domain: "project", Field: "general", Provenance: "runtime", SourceRef: ref,
				AnchorID: "an_a", ContentSHA256: hash(sup), Actor: "alice", ActorType: "human", CreatedAt: "2026-11-01T09:00:00.000Z"},
			domain.Evidence{ID: ev, Content: ver, Domain: "project", Field: "general", Provenance: "runtime",
				AnchorID: "an_a", ContentSHA256: hash(ver), Actor: "alice", ActorType: "human", CreatedAt: "2026-11-01T09:30:00.000Z"})
		st := fmt.Sprintf("Service %d: defer tx.Rollback right after BeginTx", i)
		r.cards = append(r.cards, domain.Card{ID: id, Statement: st, StatementNorm: st,
			Content: "Without the deferred rollback, an early return leaks the transaction and its connection.\n\nSee the pool metrics.",
			Tier:    "shu", Status: "promoted", Domain: "project", Field: fmt.Sprintf("field%d", i%40), AnchorID: "an_a",
			Scope:       domain.Scope{Paths: []string{fmt.Sprintf("svc%d/**", i%200)}, Languages: []string{"go"}},
			Persistence: "standard", RenderPref: "auto", CreatedBy: "alice", CreatedAt: "2026-11-01T10:00:00.000Z", UpdatedAt: now})
		r.links = append(r.links,
			domain.Link{CardID: id, EvidenceID: es, Role: "supporting", CreatedAt: now},
			domain.Link{CardID: id, EvidenceID: ev, Role: "verification", CreatedAt: now})
		decision, _ := json.Marshal(map[string]any{"allow": true, "allow_local_policy": false,
			"counts":  map[string]int{"supporting": 1, "verification": 1, "teaching": 0, "counterexample": 0},
			"missing": map[string]int{}, "reasons": []string{"shu → promoted: all thresholds met"},
			"policy": map[string]string{"point": "gate", "source": "embedded", "hash": policyHash,
				"set_hash": "dc0d3949aebf5f6b744cd040a74c8e809d6ab8a49d1b0ae706e7cbdf28121ef4", "engine": "go"},
			"reviewer":    map[string]string{"name": "alice", "type": "human"},
			"source_refs": map[string][]string{"supporting": {ref}, "verification": {}, "teaching": {}, "counterexample": {}}})
		path := ".palace/cards/" + id + ".md"
		data, _ := json.Marshal(map[string]any{"path": path, "file_sha256": hash(path), "claimed_status": "promoted",
			"last_event": map[string]any{"type": "promoted", "at": "2026-11-02T10:00:00.000Z", "actor": "alice",
				"reviewer": map[string]string{"name": "alice", "type": "human"}, "policy_hash": hash("policy")}})
		r.events = append(r.events, domain.Event{ID: store.NewID(store.EventPrefix, time.Now()), CardID: id, Type: "imported",
			ToStatus: "promoted", Reason: "imported from " + path, Actor: "bench", ActorType: "human",
			Policy: "palace.gate", PolicyHash: policyHash, Decision: decision, Data: data, CreatedAt: now})
		r.files = append(r.files, store.CardFile{CardID: id, AnchorID: "an_a", Blob: hash(path), Base: hash(path), EventSeq: 1,
			SyncedAt: now})
	}
	return r
}

// BenchmarkImportRows10k writes the rows of a 10k-card sync in one
// transaction, in the import's chunks and order (what it reads first
// included): the SQLite part of the host's BenchmarkSyncImport10k,
// without decoding files or running the gate.
func BenchmarkImportRows10k(b *testing.B) {
	ctx := context.Background()
	r := makeImportRows(10_000)
	var cpu benchclock.CPU
	n := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		s, err := store.Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("palace%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		batchAnchors(b, s)
		b.StartTimer()
		cpu.Start()
		err = s.Tx(ctx, func(tx *store.Tx) error {
			size := 256
			for start := 0; start < len(r.cards); start += size {
				if start > 0 {
					size = 1024
				}
				end := min(start+size, len(r.cards))
				evs := r.evs[2*start : 2*end]
				ids, shas := make([]string, len(evs)), make([]string, len(evs))
				for j, e := range evs {
					ids[j], shas[j] = e.ID, e.ContentSHA256
				}
				if _, err := tx.EvidenceByIDs(ctx, ids); err != nil {
					return err
				}
				if _, err := tx.OriginalsByHash(ctx, shas); err != nil {
					return err
				}
				if err := tx.InsertEvidenceRows(ctx, evs); err != nil {
					return err
				}
				if err := tx.InsertCards(ctx, r.cards[start:end]); err != nil {
					return err
				}
				if err := tx.InsertLinks(ctx, r.links[2*start:2*end]); err != nil {
					return err
				}
				if _, err := tx.AppendEvents(ctx, r.events[start:end]); err != nil {
					return err
				}
				if err := tx.PutCardFiles(ctx, r.files[start:end]); err != nil {
					return err
				}
			}
			return nil
		})
		cpu.Stop()
		n++
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		b.StartTimer()
	}
	cpu.Report(b, n)
}
