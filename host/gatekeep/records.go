package gatekeep

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/store"
)

// What every lifecycle change writes or reads the same way: event data,
// dates, and the error a missing card or evidence is.

// EventData is v as an event's JSON data; v is always a value palace built,
// so a failure to marshal it is a bug.
func EventData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal event data: %v", err))
	}
	return b
}

// ParseDate reads a date as YYYY-MM-DD or RFC 3339.
func ParseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

// NormDate stores dates in the palace's one time format; an unreadable
// date is kept as given (the callers validate first).
func NormDate(s string) string {
	if s == "" {
		return ""
	}
	t, err := ParseDate(s)
	if err != nil {
		return s
	}
	return store.FormatTime(t)
}

// NotFound classifies a failed read of a card or evidence (what) by id: a
// missing one is KindInvalid with where to look, anything else internal.
func NotFound(err error, what, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		hint := "list them with `palace card list --all-repos`"
		if what == "evidence" {
			hint = "list it with `palace evidence list --all-repos`"
		}
		if what == "card" && strings.HasPrefix(id, store.EvidencePrefix) {
			hint = id + " is an evidence id: use `palace evidence show " + id + "`"
		}
		return &hosterr.Error{Kind: hosterr.KindInvalid, Field: "id", Msg: "no " + what + " " + id + ": " + hint}
	}
	return hosterr.Internal(err, "read %s %s", what, id)
}

// LinkSummary is how an event's data lists the links a change added.
func LinkSummary(links []domain.Link) []map[string]string {
	out := make([]map[string]string, len(links))
	for i, l := range links {
		out[i] = map[string]string{"evidence_id": l.EvidenceID, "role": string(l.Role)}
	}
	return out
}
