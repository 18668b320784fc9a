package domain

// ObservationKind says what evidence saw of a file it cites.
type ObservationKind string

const (
	// ObservedLines: path#L10-L24, path#L10 or path:10-24, kept as the hash of their text.
	ObservedLines  ObservationKind = "lines"
	ObservedFile   ObservationKind = "file"   // path: only that it exists
	ObservedSymbol ObservationKind = "symbol" // path#Name: only that it is still defined
)

// Observation is what one piece of evidence saw of code it cites when it was
// recorded. It is append-only: a later look is new evidence, never an edit.
type Observation struct {
	EvidenceID string          `json:"evidence_id"`
	N          int             `json:"n"` // from 0 within one evidence row
	Kind       ObservationKind `json:"kind"`
	Path       string          `json:"path"` // slash-separated, from the repository's top level
	// LineStart and LineEnd are 1-based and inclusive (ObservedLines only).
	LineStart int    `json:"line_start,omitempty"`
	LineEnd   int    `json:"line_end,omitempty"`
	Symbol    string `json:"symbol,omitempty"` // ObservedSymbol only
	// LinesSHA256 hashes the cited lines, each trimmed, joined by "\n".
	LinesSHA256 string `json:"lines_sha256,omitempty"`
	// Commit is HEAD at recording ("" without commits); renames are followed from it.
	Commit     string `json:"commit,omitempty"`
	ObservedAt string `json:"observed_at"`
}
