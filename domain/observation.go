package domain

// ObservationKind says what evidence saw of a file it cites.
type ObservationKind string

const (
	// ObservedLines: a range of lines (source_ref path#L10-L24, path#L10 or
	// path:10-24), kept as the hash of their text.
	ObservedLines ObservationKind = "lines"
	// ObservedFile: a whole file (source_ref path): only that it exists.
	ObservedFile ObservationKind = "file"
	// ObservedSymbol: a symbol's definition in a file (source_ref
	// path#Name): only that the file still defines it.
	ObservedSymbol ObservationKind = "symbol"
)

// Observation is what one piece of evidence saw of code it cites in its
// repository, when it was recorded. It is append-only like the evidence it
// belongs to: a later look at the code is a new observation of new
// evidence (a verification), never an edit.
type Observation struct {
	EvidenceID string `json:"evidence_id"`
	// N numbers the observations of one evidence row from 0 (a
	// verification may cite several places).
	N    int             `json:"n"`
	Kind ObservationKind `json:"kind"`
	// Path is the file, slash-separated and relative to the repository's
	// top level.
	Path string `json:"path"`
	// LineStart and LineEnd are the cited lines, 1-based and inclusive
	// (ObservedLines only).
	LineStart int `json:"line_start,omitempty"`
	LineEnd   int `json:"line_end,omitempty"`
	// Symbol is the cited name (ObservedSymbol only).
	Symbol string `json:"symbol,omitempty"`
	// LinesSHA256 is the hash of the cited lines' text as it was, each
	// line trimmed of surrounding white space and joined by "\n"
	// (ObservedLines only).
	LinesSHA256 string `json:"lines_sha256,omitempty"`
	// Commit is the repository's HEAD when the evidence was recorded, ""
	// in a repository without commits; renames are followed from it.
	Commit     string `json:"commit,omitempty"`
	ObservedAt string `json:"observed_at"`
}
