package mailbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/palacehq/palace/secrets"
)

// chunkBytes is the least size of a chunk, the lines one goroutine analyses
// together. A chunk ends at the first line end at or past it, so its bounds,
// and the findings, depend only on the content, never on the cores.
const chunkBytes = 256 << 10

// sequentialBytes: a smaller box is analysed on the calling goroutine.
const sequentialBytes = 2 * chunkBytes

// chunkEnd returns the end of the chunk that starts at b[0]: just past the
// first '\n' at or after offset chunkBytes-1. ok is false when b holds no
// such '\n' yet (at the end of the box the rest is the last chunk).
func chunkEnd(b []byte) (end int, ok bool) {
	if len(b) < chunkBytes {
		return 0, false
	}
	i := bytes.IndexByte(b[chunkBytes-1:], '\n')
	if i < 0 {
		return 0, false
	}
	return chunkBytes + i, true
}

// chunkResult is one chunk's analysis; findings count lines from 0 until place.
type chunkResult struct {
	first    int // index in the box of the chunk's first line
	res      []lineResult
	findings []Finding
}

// analyzeChunk runs the per-line checks and one secret scan over a chunk of
// whole lines (the box's last may lack its '\n'). spans is scratch space,
// returned for reuse.
func (c *checker) analyzeChunk(text []byte, firstOfBox bool, spans []span) (chunkResult, []span) {
	spans = lineSpans(spans[:0], text)
	cr := chunkResult{res: make([]lineResult, len(spans))}
	for j, sp := range spans {
		c.analyzeLine(&cr.res[j], &cr.findings, text[sp.start:sp.end], j, firstOfBox && j == 0)
	}
	scan := text
	if n := len(scan); n > 0 && scan[n-1] == '\n' {
		scan = scan[:n-1]
	}
	for _, s := range secrets.Scan(scan) {
		j := s.Line - 1
		f := newFinding(c.path, j, s.Column, CodeSecret, SeverityError,
			fmt.Sprintf("secret (%s): %s; remove it, or mark a deliberate fixture with %s", s.Rule, s.Redacted, secrets.AllowPragma))
		f.LetterID = cr.res[j].id.String()
		f.Rule = s.Rule
		if s.Offset+s.Length <= spans[j].end {
			f.EndCol = s.Column + s.Length
		}
		cr.findings = append(cr.findings, f)
	}
	return cr, spans
}

type span struct{ start, end int } // text[start:end], without the '\n'

// lineSpans appends the spans of text's lines to spans.
func lineSpans(spans []span, text []byte) []span {
	for start := 0; start < len(text); {
		i := bytes.IndexByte(text[start:], '\n')
		if i < 0 {
			return append(spans, span{start, len(text)})
		}
		spans = append(spans, span{start, start + i})
		start += i + 1
	}
	return spans
}

// place numbers the chunks' lines, and their findings, in box order.
func (c *checker) place(chunks []chunkResult) {
	c.chunks = chunks[:0]
	first := 0
	for _, cr := range chunks {
		if len(cr.res) == 0 {
			continue
		}
		cr.first = first
		for k := range cr.findings {
			cr.findings[k].Line += first
		}
		c.chunks = append(c.chunks, cr)
		first += len(cr.res)
	}
	c.nlines = first
}

// analyzeBytes analyses a box held in memory.
func (c *checker) analyzeBytes(content []byte) {
	if bytes.HasPrefix(content, bom) {
		c.bom = len(bom)
	}
	var chunks [][]byte
	for rest := content; len(rest) > 0; {
		end, ok := chunkEnd(rest)
		if !ok {
			end = len(rest)
		}
		chunks = append(chunks, rest[:end])
		rest = rest[end:]
	}
	results := make([]chunkResult, len(chunks))
	if len(content) < sequentialBytes {
		var spans []span
		for k, ch := range chunks {
			results[k], spans = c.analyzeChunk(ch, k == 0, spans)
		}
		c.place(results)
		return
	}
	p := c.startPool(nil)
	for k, ch := range chunks {
		p.jobs <- chunkJob{k: k, text: ch}
	}
	c.place(p.wait())
}

// chunkJob is one chunk for the pool; buf, when set, returns to the free list.
type chunkJob struct {
	k    int
	text []byte
	buf  []byte
}

// pool analyses chunks on GOMAXPROCS goroutines, collecting results by chunk number.
type pool struct {
	jobs chan chunkJob
	wg   sync.WaitGroup

	mu      sync.Mutex
	results []chunkResult
}

// startPool starts the workers; release, when set, takes back each job's buffer.
func (c *checker) startPool(release func([]byte)) *pool {
	p := &pool{jobs: make(chan chunkJob)}
	for range runtime.GOMAXPROCS(0) {
		p.wg.Go(func() {
			var spans []span
			for j := range p.jobs {
				var res chunkResult
				res, spans = c.analyzeChunk(j.text, j.k == 0, spans)
				if release != nil && j.buf != nil {
					release(j.buf)
				}
				p.mu.Lock()
				for len(p.results) <= j.k {
					p.results = append(p.results, chunkResult{})
				}
				p.results[j.k] = res
				p.mu.Unlock()
			}
		})
	}
	return p
}

// wait ends the pool once every job sent is done, and returns the results.
func (p *pool) wait() []chunkResult {
	close(p.jobs)
	p.wg.Wait()
	return p.results
}

// CheckReader is Check over a box read from r, never held whole: a few
// reused chunk buffers, analysed while the next are read, and a small result
// per line. A longer line grows its buffer, so r must be bounded. The error
// is r's; no findings then.
func CheckReader(ctx context.Context, path string, r io.Reader, opts CheckOptions) ([]Finding, error) {
	c := newChecker(path, opts)
	fl := newFreeList(runtime.GOMAXPROCS(0)+2, chunkBytes+2*MaxLineBytes)
	p := c.startPool(fl.put)
	err := c.readChunks(ctx, r, p, fl)
	results := p.wait()
	if err != nil {
		return nil, err
	}
	c.place(results)
	return c.finish(ctx), nil
}

// readChunks reads r into chunks of whole lines and hands them to p.
func (c *checker) readChunks(ctx context.Context, r io.Reader, p *pool, fl *freeList) error {
	buf := fl.get(0)
	n, k := 0, 0 // bytes held in buf; chunks sent
	eof, empty := false, 0
	for {
		if err := ctx.Err(); err != nil {
			fl.put(buf)
			return err
		}
		end, ok := chunkEnd(buf[:n])
		for !ok && !eof {
			if n == len(buf) {
				// A line longer than the buffer: grow it to hold the line.
				grown := make([]byte, 2*len(buf))
				copy(grown, buf[:n])
				buf = grown
			}
			m, err := r.Read(buf[n:])
			n += m
			if m == 0 && err == nil {
				if empty++; empty > 100 {
					err = io.ErrNoProgress
				}
			}
			switch {
			case errors.Is(err, io.EOF):
				eof = true
			case err != nil:
				fl.put(buf)
				return err
			}
			end, ok = chunkEnd(buf[:n])
		}
		if !ok {
			end = n // the end of the box: the rest is the last chunk
		}
		if end == 0 {
			fl.put(buf)
			return nil
		}
		if k == 0 && bytes.HasPrefix(buf[:n], bom) {
			c.bom = len(bom) // set before the first chunk is sent
		}
		c.compareBase(buf[:end])
		c.size += end
		if eof && end == n && buf[n-1] != '\n' {
			c.noFinalNewline = true
		}
		next := fl.get(n - end)
		copy(next, buf[end:n])
		p.jobs <- chunkJob{k: k, text: buf[:end], buf: buf}
		buf, n, k = next, n-end, k+1
	}
}

// freeList hands out the reader's buffers, at most max at once, so memory
// stays a few chunks whatever the size of the box.
type freeList struct {
	size int
	free chan []byte
	made chan struct{} // one token per buffer that may still be made
}

func newFreeList(max, size int) *freeList {
	fl := &freeList{size: size, free: make(chan []byte, max), made: make(chan struct{}, max)}
	for range max {
		fl.made <- struct{}{}
	}
	return fl
}

// get returns a buffer of at least atLeast bytes, waiting while max are out.
func (fl *freeList) get(atLeast int) []byte {
	var b []byte
	select {
	case b = <-fl.free:
	default:
		select {
		case b = <-fl.free:
		case <-fl.made:
			b = make([]byte, fl.size)
		}
	}
	if len(b) < atLeast {
		b = make([]byte, max(atLeast, 2*len(b)))
	}
	return b
}

func (fl *freeList) put(b []byte) { fl.free <- b[:cap(b)] }

// compareBase follows, chunk by chunk, whether the box starts with
// opts.Base: the usual commit only appends, leaving history nothing to do.
func (c *checker) compareBase(chunk []byte) {
	base, off := c.opts.Base, c.size
	if base == nil || c.baseDiffers || off >= len(base) {
		return
	}
	m := min(len(chunk), len(base)-off)
	if !bytes.Equal(chunk[:m], base[off:off+m]) {
		c.baseDiffers = true
		return
	}
	c.baseMatched = off + m
}
