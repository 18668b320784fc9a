package mailbox_test

import (
	"testing"

	"github.com/palacehq/palace/mailbox"
)

func TestFates(t *testing.T) {
	l := func(kind string, ext bool, answers ...string) mailbox.Letter {
		return mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w",
			Kind: kind, Answers: answers, External: mailbox.External{Set: ext}}
	}
	letters := map[string]mailbox.Letter{
		"aaaaaaaaaaa1": l("", false),                                                                     // nobody answers
		"aaaaaaaaaaa2": l("", false),                                                                     // answered by a note
		"aaaaaaaaaaa3": l("", false),                                                                     // closed by triage
		"aaaaaaaaaaa4": l("", true),                                                                      // external, answered by a note
		"aaaaaaaaaaa5": l("", true),                                                                      // external but receipt closes
		"aaaaaaaaaaa6": l("", false),                                                                     // note and receipt: closed
		"bbbbbbbbbbb1": l("note", false, "aaaaaaaaaaa2", "aaaaaaaaaaa4", "aaaaaaaaaaa6", "ffffffffffff"), // answers an unknown id too
		"bbbbbbbbbbb2": l("triage", false, "aaaaaaaaaaa3"),
		"bbbbbbbbbbb3": l("receipt", false, "aaaaaaaaaaa5", "aaaaaaaaaaa6"),
	}
	want := map[string]mailbox.Fate{
		"aaaaaaaaaaa1": mailbox.FateWetInk,
		"aaaaaaaaaaa2": mailbox.FateInFlight,
		"aaaaaaaaaaa3": mailbox.FateFiredClay,
		"aaaaaaaaaaa4": mailbox.FateExternal,
		"aaaaaaaaaaa5": mailbox.FateFiredClay,
		"aaaaaaaaaaa6": mailbox.FateFiredClay,
		"bbbbbbbbbbb1": mailbox.FateWetInk,
		"bbbbbbbbbbb2": mailbox.FateFiredClay,
		"bbbbbbbbbbb3": mailbox.FateFiredClay,
	}
	got := mailbox.Fates(letters)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("fate of %s = %s, want %s", id, got[id], w)
		}
	}
	if len(got) != len(letters) {
		t.Errorf("fates for %d letters, want %d (unknown answer ids must not appear)", len(got), len(letters))
	}
	c := mailbox.Count(got)
	if want := (mailbox.Counts{Total: 9, WetInk: 2, InFlight: 1, FiredClay: 5, External: 1, Open: 3}); c != want {
		t.Errorf("Count = %+v, want %+v", c, want)
	}
}
