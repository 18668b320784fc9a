package finding

import (
	"encoding/json"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		sev  Severity
		want string
	}{
		{Error, "a/b.md:3:7: PC001 bad yaml"},
		{Warning, "a/b.md:3:7: PC001 warning: bad yaml"},
	} {
		f := Finding{Path: "a/b.md", Line: 3, Col: 7, Code: "PC001", Severity: tc.sev, Message: "bad yaml"}
		if got := f.String(); got != tc.want {
			t.Errorf("String(%s) = %q, want %q", tc.sev, got, tc.want)
		}
	}
}

// An embedding type keeps the flat JSON of its fields and its own.
func TestEmbeddedJSON(t *testing.T) {
	type card struct {
		Finding
		CardID string `json:"card_id,omitempty"`
	}
	b, err := json.Marshal(card{Finding{Path: "p", Line: 2, Col: 1, Code: "C", Severity: Warning, Message: "m"}, "kc_1"})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"path":"p","line":2,"col":1,"code":"C","severity":"warning","message":"m","card_id":"kc_1"}`
	if string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}

func TestHasErrors(t *testing.T) {
	w, e := Finding{Severity: Warning}, Finding{Severity: Error}
	if HasErrors([]Finding{w}) || !HasErrors([]Finding{w, e}) {
		t.Error("HasErrors counts only errors")
	}
}
