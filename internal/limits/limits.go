// Package limits holds the input limits of evidence and cards, and the
// checks of text, evidence fields and scopes against them, that host and
// the packages beside it (research, team memory's import of card files)
// apply the same way. host exports the limits under its own names. It
// owns no other rule: what a value means is checked by the code that
// uses it. It must not import host or its job packages.
package limits

// Each is far above what honest use needs and small enough that a crafted
// value cannot bloat the database, the indexes or a context pack.
const (
	// FieldBytes bounds field: an identifier used in filters, lanes and
	// distill suggestions ("go", "release-process"), never prose.
	FieldBytes = 128
	// DomainBytes bounds domain (one of four words) before it is matched,
	// so an error never echoes a huge value.
	DomainBytes = 128
	// SourceRefBytes bounds source_ref: a file:line, a URL or a command.
	SourceRefBytes = 2 << 10
	// Tags bounds how many tags one piece of evidence carries.
	Tags = 64
	// TagBytes bounds one tag: a label, like field.
	TagBytes = 128
	// ContentBytes is the largest evidence content accepted (1 MiB).
	ContentBytes = 1 << 20
)
