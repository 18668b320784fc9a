package mailbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

func TestSweep(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if _, err := w.mb.Register(ctx, w.repoB); err != nil {
		t.Fatal(err)
	}
	if _, err := w.mb.Distribute(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := w.mb.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 8 filed (one twice) + 1 committed by a teammate; each exactly once.
	ids := map[string]int{}
	for _, e := range res.Letters {
		ids[e.ID]++
	}
	if len(res.Letters) != 9 || len(ids) != 9 {
		t.Fatalf("%d letters, %d distinct; want 9", len(res.Letters), len(ids))
	}
	byWhat := map[string]mailbox.Entry{}
	for _, e := range res.Letters {
		byWhat[e.Letter.What] = e
	}
	boxA := mailbox.BoxPath(w.repoA)
	if got, want := byWhat["tilde"].Sources, []mailbox.Source{{w.mb.SpoolPath(), 1}, {w.mb.SpoolPath(), 9}, {boxA, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("sources of tilde = %+v, want %+v", got, want)
	}
	if got := byWhat["from a teammate, via git"].Sources; len(got) != 1 || got[0].Path != boxA {
		t.Errorf("teammate letter sources = %+v", got)
	}
	if res.Counts != (mailbox.Counts{Total: 9, WetInk: 9, Open: 9}) {
		t.Errorf("counts = %+v", res.Counts)
	}
	if len(res.Unreachable) != 0 {
		t.Errorf("unreachable = %+v", res.Unreachable)
	}

	// A registered repository that disappears is named, not fatal.
	if err := os.RemoveAll(w.repoB); err != nil {
		t.Fatal(err)
	}
	res, err = w.mb.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []mailbox.Unreachable{{Path: mailbox.BoxPath(w.repoB), Reason: "repository " + w.repoB + " is not on this machine (moved or removed?)"}}
	if !reflect.DeepEqual(res.Unreachable, want) {
		t.Errorf("unreachable = %+v\nwant %+v", res.Unreachable, want)
	}
	if len(res.Letters) != 9 { // the spool still has B's letter
		t.Errorf("%d letters after losing box B", len(res.Letters))
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	box := filepath.Join(dir, "inbox.jsonl")
	a := `{"ts":"2025-06-03T00:00:00Z","agent":"x","class":"c","what":"late report"}`
	b := `{"ts":"2025-06-01T00:00:00Z","agent":"x","class":"c","what":"early report"}`
	c := `{"ts":"2025-06-02T00:00:00Z","agent":"x","class":"c","what":"answered"}`
	idA, idB, idC := mailbox.ID([]byte(a)), mailbox.ID([]byte(b)), mailbox.ID([]byte(c))
	note := `{"ts":"2025-06-04T00:00:00Z","agent":"y","class":"reply","what":"looking","answers":["` + idC + `"]}`
	triage := `{"ts":"2025-06-05T00:00:00Z","agent":"y","class":"reply","what":"fixed","kind":"triage","answers":["` + idB + `"]}`
	writeFile(t, box, a+"\n"+b+"\n"+c+"\n"+note+"\n"+triage+"\n{broken\n")
	mb := &mailbox.Mailbox{Home: filepath.Join(dir, "home")}

	res, err := mb.List(context.Background(), mailbox.ListOptions{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Letters {
		got = append(got, e.Letter.What+"="+string(e.Fate))
	}
	want := []string{"early report=fired_clay", "answered=in_flight", "late report=wet_ink", "looking=wet_ink", "fixed=fired_clay"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list = %v\nwant %v", got, want)
	}
	if res.Counts != (mailbox.Counts{Total: 5, WetInk: 2, InFlight: 1, FiredClay: 2, Open: 3}) {
		t.Errorf("counts = %+v", res.Counts)
	}
	if len(res.Invalid) != 1 || res.Invalid[0].Line != 6 {
		t.Errorf("invalid = %+v", res.Invalid)
	}

	open, err := mb.List(context.Background(), mailbox.ListOptions{Box: box, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(open.Letters) != 3 || open.Counts != res.Counts || open.Letters[0].ID != idC || open.Letters[1].ID != idA {
		t.Errorf("open list = %+v", open.Letters)
	}
	if _, err := mb.List(context.Background(), mailbox.ListOptions{Box: filepath.Join(dir, "nope.jsonl")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing box: %v", err)
	}
}

// A 10 MB line in a box is skipped with bounded memory, and the letters
// after it are still read.
func TestListSkipsHugeLine(t *testing.T) {
	dir := t.TempDir()
	box := filepath.Join(dir, "inbox.jsonl")
	after := letter("after the log", "")
	writeFile(t, box, "\ufeff"+letter("before", "")+"\r\n"+`{"what":"`+strings.Repeat("x", 10<<20)+`"}`+"\n"+after+"\n")
	res, err := (&mailbox.Mailbox{Home: dir}).List(context.Background(), mailbox.ListOptions{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range res.Letters {
		ids[e.ID] = true
	}
	if len(res.Letters) != 2 || !ids[mailbox.ID([]byte(after))] || !ids[mailbox.ID([]byte(letter("before", "")))] {
		t.Errorf("letters = %+v", res.Letters)
	}
	if len(res.Invalid) != 1 || res.Invalid[0].Line != 2 || res.Invalid[0].Code != mailbox.CodeLongLine {
		t.Errorf("invalid = %+v", res.Invalid)
	}
}
