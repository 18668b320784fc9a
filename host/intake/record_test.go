package intake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/intake"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/internal/hosterr"
)

func TestRecordReturnsTheExistingRowForTheSameContent(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	first, err := in.Record(ctx, intake.RecordRequest{Content: "the import took 4 s", Field: "perf"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Anchor.Kind != string(domain.AnchorWorktree) || first.Domain != domain.DomainProject || first.Provenance != domain.ProvenanceHuman || first.Actor != "ana" {
		t.Errorf("first row %+v: want human project evidence by ana at the worktree", first)
	}
	again, err := in.Record(ctx, intake.RecordRequest{Content: "the import took 4 s", Field: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || !again.Existing || again.Field != "perf" {
		t.Fatalf("re-record = %s existing=%v field %s, want %s existing, the first row", again.ID, again.Existing, again.Field, first.ID)
	}
	dup, err := in.Record(ctx, intake.RecordRequest{Content: "the import took 4 s", AllowDuplicate: true})
	if err != nil {
		t.Fatal(err)
	}
	if dup.ID == first.ID || dup.Existing || dup.DuplicateOf != first.ID {
		t.Fatalf("allow-duplicate = %+v, want a new row marked a duplicate of %s", dup, first.ID)
	}
	// The same content at another anchor is another piece of evidence.
	repo, err := in.Record(ctx, intake.RecordRequest{Content: "the import took 4 s", Anchor: "repo"})
	if err != nil || repo.ID == first.ID || repo.Existing || repo.DuplicateOf != "" {
		t.Fatalf("same content at the repo anchor = %+v, %v; want a new original", repo, err)
	}
	// The palace keeps the mark.
	if orig, err := f.Store.DuplicateOf(ctx, dup.ID); err != nil || orig != first.ID {
		t.Fatalf("stored duplicate mark of %s = %q, %v; want %s", dup.ID, orig, err, first.ID)
	}
	if n := evidenceCount(t, f); n != 3 {
		t.Errorf("%d evidence rows, want 3 (the first, its allowed duplicate, the repo's)", n)
	}
}

// TestRecordRefusesSecrets: content holding a credential is refused as a
// denial naming the rule with the secret redacted, and nothing is stored;
// the fixture marker lets a deliberate one through.
func TestRecordRefusesSecrets(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	_, err := in.Record(ctx, intake.RecordRequest{Content: "deploy with " + token})
	wantKind(t, "a token", err, hosterr.KindDenied, "content holds a secret", "nothing was stored", "line 1")
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the refusal repeats the secret: %v", err)
	}
	_, err = in.Record(ctx, intake.RecordRequest{Content: "deploy with " + token + "\nand " + strings.Replace(token, "k9", "z7", 1)})
	wantKind(t, "two tokens", err, hosterr.KindDenied, "2 secrets")
	if n := evidenceCount(t, f); n != 0 {
		t.Fatalf("refused secrets stored %d rows", n)
	}
	if _, err := in.Record(ctx, intake.RecordRequest{Content: "a fixture: " + token + " palace:allow-secret"}); err != nil {
		t.Errorf("a marked fixture was refused: %v", err)
	}
	if err := intake.RefuseSecrets("statement", "nothing to hide"); err != nil {
		t.Errorf("plain text refused: %v", err)
	}
}

// TestRecordValidates: bad input is refused before anything is written,
// naming the field; an agent cannot claim a person taught it; outside git a
// write must name the global anchor.
func TestRecordValidates(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	for _, c := range []struct {
		name string
		req  intake.RecordRequest
		want string
	}{
		{"empty", intake.RecordRequest{Content: "  \n"}, "content is empty"},
		{"not UTF-8", intake.RecordRequest{Content: "caf\xe9"}, "not valid UTF-8"},
		{"over 1 MiB", intake.RecordRequest{Content: strings.Repeat("x", intake.MaxContentBytes+1)}, "over the 1 MiB limit"},
		{"provenance", intake.RecordRequest{Content: "x", Provenance: "rumour"}, "provenance"},
		{"anchor", intake.RecordRequest{Content: "x", Anchor: "planet"}, `anchor "planet" is not valid`},
		{"domain at global", intake.RecordRequest{Content: "x", Anchor: "global", Domain: "project"}, "holds domain global only"},
		{"domain", intake.RecordRequest{Content: "x", Domain: "galaxy"}, "domain"},
		{"field bytes", intake.RecordRequest{Content: "x", Field: "f\xff"}, "UTF-8"},
	} {
		_, err := in.Record(ctx, c.req)
		wantKind(t, c.name, err, hosterr.KindInvalid, c.want)
	}
	if n := evidenceCount(t, f); n != 0 {
		t.Fatalf("refused records stored %d rows", n)
	}
	research, err := in.Record(ctx, intake.RecordRequest{Content: "the docs say WAL needs shared memory", Provenance: "research"})
	if err != nil || research.Anchor.Kind != string(domain.AnchorRepo) {
		t.Errorf("research evidence at %q (%v), want the repo anchor", research.Anchor.Kind, err)
	}

	agent := jobtest.New(t, jobtest.Options{Git: true, Agent: true})
	ai := newIntake(agent)
	_, err = ai.Record(ctx, intake.RecordRequest{Content: "I was told so", Provenance: "human"})
	wantKind(t, "agent claiming human provenance", err, hosterr.KindMode, "provenance human is refused in agent mode")
	ev, err := ai.Record(ctx, intake.RecordRequest{Content: "go test passed"})
	if err != nil || ev.Provenance != domain.ProvenanceRuntime || ev.ActorType != domain.ActorAgent || ev.Actor != "bot" {
		t.Errorf("agent record %+v, %v; want runtime evidence by the agent bot", ev, err)
	}

	outside := jobtest.New(t, jobtest.Options{})
	oi := newIntake(outside)
	_, err = oi.Record(ctx, intake.RecordRequest{Content: "a habit"})
	wantKind(t, "no anchor outside git", err, hosterr.KindInvalid, "not inside a git checkout", "--anchor global")
	_, err = oi.Record(ctx, intake.RecordRequest{Content: "a habit", Anchor: "repo"})
	wantKind(t, "repo anchor outside git", err, hosterr.KindInvalid, "needs a git checkout")
	g, err := oi.Record(ctx, intake.RecordRequest{Content: "a habit", Anchor: "global"})
	if err != nil || g.Anchor.Kind != string(domain.AnchorGlobal) || g.Domain != domain.DomainGlobal {
		t.Errorf("global record %+v, %v; want domain global at the global anchor", g, err)
	}
}

// TestRecordObservesTheCitedCode: evidence citing a file of the checkout
// keeps what it saw of it (the lines' file, at HEAD); a note or a global
// row observes nothing.
func TestRecordObservesTheCitedCode(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	head := strings.TrimSpace(jobtest.Git(t, f.Dir, "rev-parse", "HEAD"))
	ev, err := in.Record(ctx, intake.RecordRequest{Content: "the README names the project", SourceRef: "README.md#L1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Observed) != 1 || ev.Observed[0].Path != "README.md" || ev.Observed[0].Commit != head || ev.Observed[0].EvidenceID != ev.ID {
		t.Fatalf("observed %+v, want README.md at %s", ev.Observed, head)
	}
	stored, err := f.Store.Observations(ctx, []string{ev.ID})
	if err != nil || len(stored[ev.ID]) != 1 {
		t.Errorf("stored observations %+v, %v; want the one", stored, err)
	}
	for _, req := range []intake.RecordRequest{
		{Content: "a note", SourceRef: "notes/nowhere.md"},
		{Content: "a global note", SourceRef: "README.md#L1", Anchor: "global"},
	} {
		if ev, err := in.Record(ctx, req); err != nil || len(ev.Observed) != 0 {
			t.Errorf("%q observed %+v (%v), want nothing", req.Content, ev.Observed, err)
		}
	}
}

// TestRecordBatchValidatesEveryLineFirst: a batch with one bad line (bad
// JSON, an unknown key, a secret, an echo) writes nothing and names the
// line; a good batch commits with the defaults filled, the same content
// kept once, and a re-run writes nothing twice.
func TestRecordBatchValidatesEveryLineFirst(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	good := `{"content": "the build took 4 minutes"}` + "\n\n" + `{"content": "the cache was cold", "field": "ci", "tags": ["slow"]}` + "\n"
	for _, c := range []struct {
		name, bad string
		kind      hosterr.Kind
		want      string
	}{
		{"bad JSON", `{"content": "x"`, hosterr.KindInvalid, "batch.jsonl:4: invalid JSON"},
		{"unknown key", `{"content": "x", "colour": "red"}`, hosterr.KindInvalid, "batch.jsonl:4:"},
		{"two values", `{"content": "x"} {"content": "y"}`, hosterr.KindInvalid, "more than one JSON value"},
		{"not UTF-8", "{\"content\": \"caf\xe9\"}", hosterr.KindInvalid, "batch.jsonl:4: line is not valid UTF-8"},
		{"empty content", `{"content": ""}`, hosterr.KindInvalid, "batch.jsonl:4: content is empty"},
		{"secret", `{"content": "token ` + token + `"}`, hosterr.KindDenied, "holds a secret"},
		{"echo", `{"content": "— ` + "`kc_01abcdefabcdef`" + ` · repo · cites 2"}`, hosterr.KindInvalid, "own echo"},
	} {
		_, err := in.RecordBatch(ctx, strings.NewReader(good+c.bad+"\n"), "batch.jsonl", intake.RecordRequest{}, nil)
		wantKind(t, c.name, err, c.kind, c.want)
	}
	if n := evidenceCount(t, f); n != 0 {
		t.Fatalf("refused batches stored %d rows", n)
	}

	batch := "\xef\xbb\xbf" + good + `{"content": "the build took 4 minutes", "field": "again"}` + "\n" + `{"content": "a third fact", "anchor": "repo"}`
	var progress []string
	res, err := in.RecordBatch(ctx, strings.NewReader(batch), "batch.jsonl", intake.RecordRequest{Field: "build", Tags: []string{"ci-log"}},
		func(done, total int) { progress = append(progress, fmt.Sprintf("%d/%d", done, total)) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 3 || res.Existing != 1 || res.Batches != 1 || len(res.IDs) != 4 || res.FirstID != res.IDs[0] || res.LastID != res.IDs[3] || res.IDs[2] != res.IDs[0] {
		t.Fatalf("batch result %+v, want 3 imported and the repeated line returning the first row", res)
	}
	if strings.Join(progress, ",") != "4/4" {
		t.Errorf("progress %v, want one report of 4/4", progress)
	}
	rows, err := f.Store.EvidenceByIDs(ctx, res.IDs)
	if err != nil {
		t.Fatal(err)
	}
	first, second, third := rows[res.IDs[0]], rows[res.IDs[1]], rows[res.IDs[3]]
	if first.Field != "build" || strings.Join(first.Tags, ",") != "ci-log" || second.Field != "ci" || strings.Join(second.Tags, ",") != "slow" {
		t.Errorf("defaults: first %s %v, second %s %v; want build [ci-log] and ci [slow]", first.Field, first.Tags, second.Field, second.Tags)
	}
	if first.AnchorID == third.AnchorID {
		t.Errorf("the line naming the repo anchor was written at the default one")
	}
	again, err := in.RecordBatch(ctx, strings.NewReader(batch), "batch.jsonl", intake.RecordRequest{Field: "build"}, nil)
	if err != nil || again.Imported != 0 || again.Existing != 4 {
		t.Fatalf("re-run %+v, %v; want every line existing", again, err)
	}
	if n := evidenceCount(t, f); n != 3 {
		t.Errorf("%d rows after the re-run, want 3", n)
	}
	dup, err := in.RecordBatch(ctx, strings.NewReader(`{"content": "a third fact", "anchor": "repo", "allow_duplicate": true}`), "dup.jsonl", intake.RecordRequest{}, nil)
	if err != nil || dup.Imported != 1 {
		t.Fatalf("allowed duplicate: %+v, %v", dup, err)
	}
	if orig, err := f.Store.DuplicateOf(ctx, dup.FirstID); err != nil || orig != res.IDs[3] {
		t.Errorf("the allowed duplicate is marked of %q (%v), want %s", orig, err, res.IDs[3])
	}
}

// TestRecordBatchCommitsInBatches: more rows than a batch commit in two
// transactions, each reported.
func TestRecordBatchCommitsInBatches(t *testing.T) {
	ctx := context.Background()
	f := jobtest.New(t, jobtest.Options{Git: true})
	in := newIntake(f)
	var b strings.Builder
	n := intake.BatchSize + 5
	for i := range n {
		fmt.Fprintf(&b, "{\"content\": \"fact number %d\"}\n", i)
	}
	var progress []int
	res, err := in.RecordBatch(ctx, strings.NewReader(b.String()), "big.jsonl", intake.RecordRequest{}, func(done, total int) {
		if total != n {
			t.Errorf("progress total %d, want %d", total, n)
		}
		progress = append(progress, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != n || res.Batches != 2 || len(progress) != 2 || progress[0] != intake.BatchSize || progress[1] != n {
		t.Fatalf("result %d imported in %d batches, progress %v", res.Imported, res.Batches, progress)
	}
	if got := evidenceCount(t, f); got != n {
		t.Errorf("%d rows, want %d", got, n)
	}
	_, err = in.RecordBatch(ctx, strings.NewReader(strings.Repeat("x", intake.MaxJSONLLineBytes+1)), "long.jsonl", intake.RecordRequest{}, nil)
	wantKind(t, "an overlong line", err, hosterr.KindInvalid, "long.jsonl:1: line is over 8 MiB")
}
