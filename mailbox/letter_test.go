package mailbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/palacehq/palace/mailbox"
)

const okLine = `{"ts":"2025-06-01T12:00:00Z","agent":"claude","class":"tool_error","what":"go test hung"}`

func TestParseLine(t *testing.T) {
	tests := []struct {
		name, line string
		want       mailbox.Letter
		wantErr    string
		wantCode   string
		wantCol    int
	}{
		{name: "minimal", line: okLine,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "claude", Class: "tool_error", What: "go test hung"}},
		{name: "all fields", line: `{"ts":"2025-06-01T12:00:00.123+02:00","agent":"a","class":"c","what":"w","repo":"~/src/x (worktree f)","tool":"bash","expected":"e","snippet":"s\n\"q\"","kind":"triage","answers":["0123456789ab"],"external":"https://tracker/1"}`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00.123+02:00", Agent: "a", Class: "c", What: "w", Repo: "~/src/x (worktree f)",
				Tool: "bash", Expected: "e", Snippet: "s\n\"q\"", Kind: "triage", Answers: []string{"0123456789ab"},
				External: mailbox.External{Set: true, Ref: "https://tracker/1"}}},
		{name: "external true, nulls for optional", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","repo":null,"answers":null,"external":true}`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w", External: mailbox.External{Set: true}}},
		{name: "trailing CRLF ignored", line: okLine + "\r\n",
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "claude", Class: "tool_error", What: "go test hung"}},
		{name: "unknown field accepted", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","mood":"fine"}`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w"}},

		{name: "missing agent", line: `{"ts":"2025-06-01T12:00:00Z","class":"c","what":"w"}`,
			wantErr: `letter: missing required field "agent"`, wantCode: "PM002"},
		{name: "wrong-case key is not the field", line: `{"ts":"2025-06-01T12:00:00Z","AGENT":"a","class":"c","what":"w"}`,
			wantErr: `letter: missing required field "agent"`, wantCode: "PM002"},
		{name: "empty what", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"  "}`,
			wantErr: `letter: "what" is empty`, wantCode: "PM002", wantCol: 54},
		{name: "bad ts", line: `{"ts":"yesterday","agent":"a","class":"c","what":"w"}`,
			wantErr: `letter: "ts" is not RFC3339: "yesterday" (want e.g. 2025-06-01T12:00:00Z)`, wantCode: "PM002", wantCol: 2},
		{name: "agent number", line: `{"ts":"2025-06-01T12:00:00Z","agent":7,"class":"c","what":"w"}`,
			wantErr: `letter: "agent" must be a string, got number`, wantCode: "PM002", wantCol: 30},
		{name: "agent null", line: `{"ts":"2025-06-01T12:00:00Z","agent":null,"class":"c","what":"w"}`,
			wantErr: `letter: "agent" must be a string, got null`, wantCode: "PM002"},
		{name: "duplicate field", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","agent":"b","class":"c","what":"w"}`,
			wantErr: `letter: duplicate field "agent"`, wantCode: "PM002", wantCol: 42},
		{name: "answers not array", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":"0123456789ab"}`,
			wantErr: `letter: "answers" must be an array of letter ids, got string`, wantCode: "PM002"},
		{name: "answers bad id", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":["0123456789ab","XYZ"]}`,
			wantErr: `letter: "answers[1]" is not a letter id (12 lowercase hex characters): "XYZ"`, wantCode: "PM002"},
		{name: "answers number element", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":[1]}`,
			wantErr: `letter: "answers[0]" must be a string, got number`, wantCode: "PM002"},
		{name: "answers with spaces", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers": [ "0123456789ab" , "00000000000f" ] }`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w", Answers: []string{"0123456789ab", "00000000000f"}}},
		{name: "answers empty", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":[ ]}`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w"}},
		{name: "answers nested element", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":["0123456789ab",["x"],{"a":"]"}]}`,
			wantErr: `letter: "answers[1]" must be a string, got array`, wantCode: "PM002"},
		{name: "answers escaped id", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","answers":["\u0030123456789ab"]}`,
			want: mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w", Answers: []string{"0123456789ab"}}},
		{name: "external number", line: `{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"w","external":3}`,
			wantErr: `letter: "external" must be true, false or a string, got number`, wantCode: "PM002"},
		{name: "not json", line: `{"ts":`, wantErr: "letter: invalid JSON: unexpected end of JSON input", wantCode: "PM001", wantCol: 7},
		{name: "bad char", line: `{"ts":x}`, wantErr: "letter: invalid JSON: invalid character 'x' looking for beginning of value", wantCode: "PM001", wantCol: 7},
		{name: "two objects", line: okLine + " {}", wantErr: "letter: invalid JSON: invalid character '{' after top-level value", wantCode: "PM001"},
		{name: "array", line: `[1,2]`, wantErr: "letter: not a JSON object (got array); a letter is one JSON object per line", wantCode: "PM001", wantCol: 1},
		{name: "invalid utf8", line: "{\"ts\":\"\xff\"}", wantErr: "letter: invalid UTF-8 at byte 8; letters are UTF-8 JSON", wantCode: "PM009", wantCol: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mailbox.ParseLine([]byte(tt.line))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseLine: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got  %+v\nwant %+v", got, tt.want)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("err = %v, want %s", err, tt.wantErr)
			}
			var le *mailbox.LetterError
			if !errors.As(err, &le) || le.Code != tt.wantCode {
				t.Fatalf("err %T %+v, want *LetterError code %s", err, err, tt.wantCode)
			}
			if tt.wantCol != 0 && le.Col != tt.wantCol {
				t.Errorf("col = %d, want %d", le.Col, tt.wantCol)
			}
		})
	}
}

func TestID(t *testing.T) {
	sum := sha256.Sum256([]byte(okLine))
	want := hex.EncodeToString(sum[:])[:12]
	for _, raw := range []string{okLine, okLine + "\n", okLine + "\r\n"} {
		if got := mailbox.ID([]byte(raw)); got != want {
			t.Errorf("ID(%q) = %s, want %s", raw[len(raw)-3:], got, want)
		}
	}
	if mailbox.ID([]byte(okLine+" ")) == want {
		t.Error("a changed byte kept the id")
	}
	if !mailbox.IsID(want) || mailbox.IsID("0123456789AB") || mailbox.IsID("0123") {
		t.Error("IsID wrong")
	}
}

func TestValidate(t *testing.T) {
	l := mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c"}
	if err := l.Validate(); err == nil || err.Error() != `letter: missing required field "what"` {
		t.Errorf("Validate = %v", err)
	}
	l.What, l.Answers = "w", []string{"nope"}
	if err := l.Validate(); err == nil || err.Error() != `letter: "answers[0]" is not a letter id (12 lowercase hex characters): "nope"` {
		t.Errorf("Validate = %v", err)
	}
}

func TestLetterMarshalRoundTrip(t *testing.T) {
	for _, ext := range []mailbox.External{{}, {Set: true}, {Set: true, Ref: "JIRA-1"}} {
		l := mailbox.Letter{TS: "2025-06-01T12:00:00Z", Agent: "a", Class: "c", What: "w", External: ext}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mailbox.ParseLine(b)
		if err != nil || !reflect.DeepEqual(got, l) {
			t.Errorf("round trip of %s = %+v, %v", b, got, err)
		}
	}
	b, _ := json.Marshal(mailbox.Letter{TS: "t", Agent: "a", Class: "c", What: "w"})
	if want := `{"ts":"t","agent":"a","class":"c","what":"w"}`; string(b) != want {
		t.Errorf("marshal = %s, want %s", b, want)
	}
}

func TestParseDraft(t *testing.T) {
	pretty := "{\n  \"agent\": \"claude\",\n  \"class\": \"c\",\n  \"what\": \"w\"\n}\n"
	l, err := mailbox.ParseDraft([]byte(pretty))
	if err != nil || l.TS != "" || l.Agent != "claude" {
		t.Fatalf("ParseDraft = %+v, %v", l, err)
	}
	if _, err := mailbox.ParseDraft([]byte(`{"ts":"soon","agent":"a","class":"c","what":"w"}`)); err == nil {
		t.Error("a present but invalid ts must still fail")
	}
	if _, err := mailbox.ParseDraft([]byte(`{"agent":"a","class":"c"}`)); err == nil || err.Error() != `letter: missing required field "what"` {
		t.Errorf("err = %v", err)
	}
}
