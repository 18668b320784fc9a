package staleness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/repofs"
)

// MaxFileBytes is the largest cited file palace reads (4 MiB): a citation
// of a bigger file records nothing and is never checked.
const MaxFileBytes = 4 << 20

// ErrTooLarge is matched by the error for a cited file over MaxFileBytes.
var ErrTooLarge = errors.New("over the cited file limit")

// Rel returns ref's path relative to the repository root, slash-separated,
// or false when it is not below root (an absolute path elsewhere).
func Rel(root, p string) (string, bool) {
	if root == "" {
		return "", false
	}
	if !filepath.IsAbs(filepath.FromSlash(p)) {
		return p, true
	}
	r, err := filepath.Rel(root, filepath.FromSlash(p))
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// readFile reads rel below root without following a link in any of its
// components, refusing a FIFO or device without blocking and a file over
// MaxFileBytes.
func readFile(root, rel string) ([]byte, error) {
	f, err := repofs.OpenFile(root, filepath.FromSlash(rel), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes: %w of %d bytes", rel, fi.Size(), ErrTooLarge, MaxFileBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %w of %d bytes", rel, ErrTooLarge, MaxFileBytes)
	}
	return b, nil
}

// splitLines splits text into its lines, each trimmed of surrounding white
// space (so a re-indent or a CRLF is not a change).
func splitLines(text []byte) []string {
	s := string(text)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// blockHash is the hash of lines as an observation keeps it.
func blockHash(lines []string) string {
	h := sha256.New()
	for i, l := range lines {
		if i > 0 {
			h.Write([]byte{'\n'})
		}
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// definition matches a line defining name in the common languages: a
// declaration keyword (func, def, class, type, fn, const, …) before the
// name on the line.
func definition(name string) *regexp.Regexp {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return regexp.MustCompile(`(?m)^\s*(?:(?:export|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|abstract|final|default|open|override)\s+)*` +
		`(?:func|def|class|type|interface|struct|enum|trait|fn|const|let|var|function|module|impl|object|record|macro)\b[^\n]*?\b` +
		regexp.QuoteMeta(name) + `\b`)
}

// Head returns the commit HEAD names in the repository at root, "" when
// there is none yet (or git fails: renames are then not followed).
func Head(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--verify", "-q", "HEAD^{commit}").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Observe records what the code sourceRef cites in the repository at root
// (HEAD head) holds now; false when it names no regular file below root
// within MaxFileBytes. A line range is cut to the file's end; one starting
// past it, or a symbol the file does not define, observes the file only.
func Observe(root, head, evidenceID, sourceRef, at string) (domain.Observation, bool) {
	ref, ok := ParseRef(sourceRef)
	if !ok {
		return domain.Observation{}, false
	}
	rel, ok := Rel(root, ref.Path)
	if !ok {
		return domain.Observation{}, false
	}
	ref.Path = rel
	text, err := readFile(root, rel)
	if err != nil {
		return domain.Observation{}, false
	}
	return observeText(ref, text, domain.Observation{EvidenceID: evidenceID, Commit: head, ObservedAt: at}), true
}

// observeText fills o with what ref sees in text.
func observeText(ref Ref, text []byte, o domain.Observation) domain.Observation {
	o.Path, o.Kind = ref.Path, domain.ObservedFile
	switch ref.Kind {
	case domain.ObservedLines:
		lines := splitLines(text)
		if ref.Start <= len(lines) {
			end := min(ref.End, len(lines))
			o.Kind, o.LineStart, o.LineEnd = domain.ObservedLines, ref.Start, end
			o.LinesSHA256 = blockHash(lines[ref.Start-1 : end])
		}
	case domain.ObservedSymbol:
		if definition(ref.Symbol).Match(text) {
			o.Kind, o.Symbol = domain.ObservedSymbol, ref.Symbol
		}
	}
	return o
}
