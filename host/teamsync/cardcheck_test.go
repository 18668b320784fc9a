package teamsync_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palacehq/palace/cardfile"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/authority"
	"github.com/palacehq/palace/host/internal/jobtest"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/internal/hosterr"
)

// candidateFile is a well-formed candidate's card file.
func candidateFile(t *testing.T, id string, mutate func(*cardfile.Card)) []byte {
	t.Helper()
	_, b := forged(t)
	b = bytes.Replace(b, []byte("status: promoted"), []byte("status: candidate"), 1)
	b = bytes.ReplaceAll(b, []byte("kc_01forgedforgedforgedforge"), []byte(id))
	if mutate == nil {
		return b
	}
	p, fs := cardfile.Decode(cardfile.Dir+"/"+id+".md", b)
	if cardfile.HasErrors(fs) {
		t.Fatalf("candidate file: %v", fs)
	}
	mutate(&p.Card)
	out, err := cardfile.Encode(p.Card)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckCardsStaged: --staged checks what git is about to commit — the
// index version of the staged card files — and nothing else.
func TestCheckCardsStaged(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	ck := checker(m)
	forgedID, forgedBody := forged(t)
	good := "kc_01goodgoodgoodgoodgoodgood"
	writeCard(t, m.Dir, good+".md", candidateFile(t, good, nil))
	writeCard(t, m.Dir, forgedID+".md", forgedBody)
	jobtest.Git(t, m.Dir, "add", filepath.Join(cardfile.Dir, forgedID+".md"))
	// The working tree moves on after staging: the index is what counts.
	writeCard(t, m.Dir, forgedID+".md", []byte("---\nid: [broken\n"))

	rep, err := ck.CheckCards(ctx, teamsync.CardsCheckRequest{Staged: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Staged || !slices.Equal(rep.Checked, []string{cardfile.Dir + "/" + forgedID + ".md"}) || rep.Errors != 1 || rep.Findings[0].Code != cardfile.CodeGate {
		t.Fatalf("staged check %+v: want the staged forged file alone, refused by the gate", rep)
	}
	rep, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Staged: true, Paths: []string{filepath.Join(cardfile.Dir, forgedID+".md")}})
	if err != nil || rep.Errors != 1 {
		t.Errorf("staged check of a named file: %+v, %v", rep, err)
	}
	_, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Staged: true, Paths: []string{filepath.Join(cardfile.Dir, good+".md")}})
	wantKind(t, "an unstaged file with --staged", err, hosterr.KindInvalid, "is not staged")
	_, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Staged: true, Paths: []string{filepath.Join(t.TempDir(), "x.md")}})
	wantKind(t, "a file outside the checkout with --staged", err, hosterr.KindInvalid, "outside the checkout")

	outside := withTeam(jobtest.New(t, jobtest.Options{}))
	_, err = checker(outside).CheckCards(ctx, teamsync.CardsCheckRequest{Staged: true})
	wantKind(t, "--staged outside git", err, hosterr.KindInvalid, "not inside a git checkout")
	if rep, err := checker(outside).CheckCards(ctx, teamsync.CardsCheckRequest{}); err != nil || len(rep.Checked) != 0 {
		t.Errorf("check outside git: %+v, %v; want nothing checked", rep, err)
	}
}

// TestCheckCardsFindings: ids declared twice, an origin naming no card
// file, and files named on the command line.
func TestCheckCardsFindings(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	ck := checker(m)
	a, b, c := "kc_01aaaaaaaaaaaaaaaaaaaaaaaa", "kc_01bbbbbbbbbbbbbbbbbbbbbbbb", "kc_01cccccccccccccccccccccccc"
	writeCard(t, m.Dir, a+".md", candidateFile(t, a, nil))
	writeCard(t, m.Dir, b+".md", candidateFile(t, b, func(c *cardfile.Card) { c.OriginCard = a }))
	writeCard(t, m.Dir, c+".md", candidateFile(t, c, func(c *cardfile.Card) { c.OriginCard = "kc_01nowherenowherenowhere" }))
	writeCard(t, m.Dir, "kc_01copycopycopycopycopycopy.md", candidateFile(t, a, nil))
	copyElsewhere := filepath.Join(m.Dir, "elsewhere", a+".md")
	if err := os.MkdirAll(filepath.Dir(copyElsewhere), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyElsewhere, candidateFile(t, a, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	m.commitReviewed(t, "cards")
	rep, err := ck.CheckCards(ctx, teamsync.CardsCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checked) != 4 || !hasFinding(rep.Findings, cardfile.CodeReference, cardfile.Dir+"/"+c+".md") ||
		hasFinding(rep.Findings, cardfile.CodeReference, cardfile.Dir+"/"+b+".md") {
		t.Errorf("findings %v: want the dangling origin of %s only", rep.Findings, c)
	}
	if !hasFinding(rep.Findings, cardfile.CodeFileName, cardfile.Dir+"/kc_01copycopycopycopycopycopy.md") {
		t.Errorf("findings %v: want the copy's name refused", rep.Findings)
	}
	for i := 1; i < len(rep.Findings); i++ {
		p, q := rep.Findings[i-1], rep.Findings[i]
		if p.Path > q.Path || p.Path == q.Path && p.Line > q.Line {
			t.Errorf("findings not sorted by path and line: %v before %v", p, q)
		}
	}
	// Named files, relative to the directory: only they are read.
	rep, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Paths: []string{filepath.Join(cardfile.Dir, a+".md")}})
	if err != nil || !slices.Equal(rep.Checked, []string{filepath.Join(cardfile.Dir, a+".md")}) || rep.Errors+rep.Warnings != 0 {
		t.Errorf("check of one named file: %+v, %v", rep, err)
	}
	// The same id declared by two files is an error.
	rep, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Paths: []string{filepath.Join(cardfile.Dir, a+".md"), copyElsewhere}})
	if err != nil || rep.Errors != 1 || !hasFinding(rep.Findings, cardfile.CodeDuplicateID, copyElsewhere) {
		t.Errorf("an id declared twice: %+v, %v; want PC on the second file", rep, err)
	}
	_, err = ck.CheckCards(ctx, teamsync.CardsCheckRequest{Paths: []string{"nope.md"}})
	wantKind(t, "a missing file", err, hosterr.KindInvalid, "card file nope.md does not exist")
	// A card directory that is a link is refused.
	linked := newMate(t)
	if err := os.Symlink(t.TempDir(), filepath.Join(linked.Dir, ".palace")); err != nil {
		t.Fatal(err)
	}
	_, err = checker(linked).CheckCards(ctx, teamsync.CardsCheckRequest{})
	wantKind(t, "a linked .palace", err, hosterr.KindInvalid, "use .palace/cards")
}

// TestCheckCardBuffer: an editor's buffer is checked as a file is.
func TestCheckCardBuffer(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	ck := checker(m)
	id, body := forged(t)
	fs := ck.CheckCardBuffer(ctx, filepath.Join(m.Dir, cardfile.Dir, id+".md"), body)
	if len(fs) != 1 || fs[0].Code != cardfile.CodeGate || !strings.Contains(fs[0].Message, "status promoted is not allowed") {
		t.Errorf("forged buffer: %v, want the gate's refusal", fs)
	}
	good := "kc_01goodgoodgoodgoodgoodgood"
	if fs := ck.CheckCardBuffer(ctx, good+".md", candidateFile(t, good, nil)); len(fs) != 0 {
		t.Errorf("a good buffer: %v", fs)
	}
	if fs := ck.CheckCardBuffer(ctx, good+".md", candidateFile(t, good, func(c *cardfile.Card) { c.Statement = "use " + token })); !hasFinding(fs, cardfile.CodeSecret, "") {
		t.Errorf("a buffer holding a secret: %v", fs)
	}
}

// TestAutoExport: with palace.autoExport set, a lifecycle change writes the
// card's file when sync would write it; someone else's uncommitted edit is
// left alone; without the setting nothing is written.
func TestAutoExport(t *testing.T) {
	ctx := context.Background()
	m := newMate(t)
	id := m.promoted(t, "Quote paths in shell scripts")
	if note := m.team.AutoExport(ctx, id); note != nil {
		t.Fatalf("without %s: %+v", teamsync.AutoExportConfig, note)
	}
	jobtest.Git(t, m.Dir, "config", teamsync.AutoExportConfig, "true")
	want := cardfile.Dir + "/" + id + ".md"
	if note := m.team.AutoExport(ctx, id); note == nil || note.Path != want || note.Skipped != "" {
		t.Fatalf("promoted card: %+v, want %s written", note, want)
	}
	if b := m.cardFile(t, id); !bytes.Contains(b, []byte("status: promoted")) {
		t.Errorf("file %q", b)
	}
	m.Apply(t, authority.Change{Op: authority.OpRetire, CardID: id, Reason: "obsolete"})
	if note := m.team.AutoExport(ctx, id); note == nil || note.Path != want {
		t.Fatalf("retired card: %+v", note)
	}
	if b := m.cardFile(t, id); !bytes.Contains(b, []byte("status: retired")) {
		t.Errorf("file after retire %q", b)
	}
	if rep := m.sync(t, teamsync.SyncRequest{}); len(rep.Exported)+len(rep.Imported) != 0 {
		t.Errorf("sync after the automatic export: %+v", rep)
	}
	cand := m.seed(t, jobtest.Card{Statement: "An idea", Tier: domain.TierQi, Anchor: domain.AnchorRepo}).ID
	wt := m.promotedAt(t, domain.AnchorWorktree, "Mine alone")
	for _, other := range []string{cand, wt, "kc_01nosuchcard"} {
		if note := m.team.AutoExport(ctx, other); note != nil {
			t.Errorf("AutoExport(%s) = %+v, want nothing", other, note)
		}
	}
	// Someone edits the file by hand; the next change does not overwrite it.
	m.commit(t, "retired")
	path := filepath.Join(m.Dir, cardfile.Dir, id+".md")
	if err := os.WriteFile(path, append(m.cardFile(t, id), "\n# my edit\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	m.link(t, id, domain.RoleTeaching, m.evidence(t, "quote \"$f\""))
	note := m.team.AutoExport(ctx, id)
	if note == nil || note.Path != "" || !strings.Contains(note.Skipped, "modified in the working tree") {
		t.Fatalf("a hand-edited file: %+v, want it skipped", note)
	}
	if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, []byte("# my edit\n")) {
		t.Errorf("the edit was overwritten")
	}
	fs, err := m.team.Uncommitted(ctx)
	if err != nil || len(fs) != 1 || fs[0].Code != cardfile.CodeUncommitted || !strings.Contains(fs[0].Message, "modified in the working tree") {
		t.Errorf("uncommitted: %+v, %v", fs, err)
	}
}
