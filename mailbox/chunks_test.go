package mailbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// chunkedBox is a box of several chunks with findings of many kinds spread
// over it: secrets, broken JSON, duplicates, unknown answers, blank lines,
// conflict markers, CRLF, a BOM, an over-long line bigger than the reader's
// buffers, and no final newline.
func chunkedBox(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.Write(bom)
	var ids []string
	for i := range 9000 {
		var line string
		switch {
		case i%97 == 5:
			line = fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"deploy %d","snippet":"AWS_ACCESS_KEY_ID=AKIA%s"}`, i, fakeKey(i))
		case i%89 == 7:
			line = fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"broken %d"`, i)
		case i%101 == 9 && len(ids) > 0:
			line = ids[len(ids)/2] // a duplicate
		case i%103 == 11:
			line = fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"reply %d","answers":["%012x"]}`, i, i)
		case i%211 == 13:
			line = "   "
		case i%307 == 17:
			line = "<<<<<<< HEAD"
		case i%53 == 19:
			line = fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"a","class":"c","what":"crlf %d"}`+"\r", i)
		case i == 4500:
			// Longer than a reader buffer, so the buffer must grow; the
			// secret inside is still reported.
			line = `{"what":"` + strings.Repeat("x", 600<<10) + ` ghp_` + strings.Repeat("A", 36) + `"}`
		default:
			line = fmt.Sprintf(`{"ts":"2025-06-01T12:00:00Z","agent":"agent-%d","class":"tool_error","what":"%s","repo":"github.com/acme/widgets"}`,
				i, strings.Repeat("w", i%300))
			if i%2 == 0 {
				ids = append(ids, line)
			}
		}
		b.WriteString(line)
		if i < 8999 {
			b.WriteByte('\n')
		}
	}
	if b.Len() < 4*chunkBytes {
		t.Fatalf("box is %d bytes, want several chunks", b.Len())
	}
	return b.Bytes()
}

// fakeKey is 16 characters of AWS's key alphabet, different for each i.
func fakeKey(i int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b [16]byte
	x := uint64(i)*0x9E3779B97F4A7C15 + 12345
	for k := range b {
		b[k] = alphabet[x%32]
		x = x/32 + uint64(k+i)*2654435761
	}
	return string(b[:])
}

// oneChunk is the sequential reference: the whole box analysed as one
// chunk on the calling goroutine.
func oneChunk(ctx context.Context, path string, content []byte, opts CheckOptions) []Finding {
	c := newChecker(path, opts)
	c.compareBase(content)
	if bytes.HasPrefix(content, bom) {
		c.bom = len(bom)
	}
	cr, _ := c.analyzeChunk(content, true, nil)
	c.place([]chunkResult{cr})
	c.size = len(content)
	c.noFinalNewline = len(content) > 0 && content[len(content)-1] != '\n'
	return c.finish(ctx)
}

// oddReader returns reads of varying, small prime sizes, so lines and
// chunks are split across reads anywhere.
type oddReader struct {
	b []byte
	k int
}

func (r *oddReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	sizes := []int{1, 7, 4093, 65521, 131071, 3}
	n := min(len(p), len(r.b), sizes[r.k%len(sizes)])
	r.k++
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func TestChunkedCheckMatchesSequential(t *testing.T) {
	ctx := context.Background()
	box := chunkedBox(t)
	for _, opts := range []CheckOptions{{}, {Global: true}, {Base: box[:len(box)/3]}, {Base: append([]byte("{}\n"), box[:1000]...)}} {
		want := oneChunk(ctx, "box", box, opts)
		codes := map[string]int{}
		for _, f := range want {
			codes[f.Code]++
		}
		for _, code := range []string{CodeSecret, CodeInvalidJSON, CodeDuplicate, CodeUnknownAnswer, CodeBlankLine, CodeConflict, CodeCRLF, CodeBOM, CodeLongLine, CodeNoFinalNewline} {
			if codes[code] == 0 {
				t.Fatalf("reference has no %s finding: %v", code, codes)
			}
		}
		if codes[CodeSecret] < 90 || len(want) < 400 {
			t.Fatalf("reference has %d findings, %d secrets: too few to test order", len(want), codes[CodeSecret])
		}
		for _, procs := range []int{1, 2, 5} {
			prev := runtime.GOMAXPROCS(procs)
			got := Check(ctx, "box", box, opts)
			gotR, err := CheckReader(ctx, "box", &oddReader{b: box}, opts)
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatal(err)
			}
			for name, g := range map[string][]Finding{"Check": got, "CheckReader": gotR} {
				if !reflect.DeepEqual(g, want) {
					t.Errorf("%s with GOMAXPROCS=%d, Base %d bytes: %d findings, reference %d; first difference: %s",
						name, procs, len(opts.Base), len(g), len(want), firstDiff(g, want))
				}
			}
		}
	}
}

func firstDiff(got, want []Finding) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("got %+v, want %+v", got[i], want[i])
		}
	}
	return "one list is a prefix of the other"
}

// A box smaller than a chunk, an empty box and a box of one line without a
// newline read the same through both entry points.
func TestCheckReaderSmallBoxes(t *testing.T) {
	ctx := context.Background()
	for _, box := range []string{"", "\n", `{"ts":"x"}`, "\xEF\xBB\xBF", "\xEF\xBB\xBF{}\r\n\n"} {
		want := Check(ctx, "box", []byte(box), CheckOptions{})
		got, err := CheckReader(ctx, "box", strings.NewReader(box), CheckOptions{})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: CheckReader = %v, %v; Check = %v", box, got, err, want)
		}
	}
}

// A read error ends the check with that error.
func TestCheckReaderError(t *testing.T) {
	boom := fmt.Errorf("disk on fire")
	r := io.MultiReader(strings.NewReader(strings.Repeat(`{"what":"x"}`+"\n", 40_000)), errReader{boom})
	if _, err := CheckReader(context.Background(), "box", r, CheckOptions{}); err != boom {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
