package store

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// ID prefixes: ev_ evidence, kc_ cards, ke_ events.
const (
	EvidencePrefix = "ev_"
	CardPrefix     = "kc_"
	EventPrefix    = "ke_"
)

// crockford is Crockford's base32 in lower case: sortable and unambiguous.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

var idGen struct {
	sync.Mutex
	lastMS uint64
	hi     uint16
	lo     uint64
}

// NewID returns prefix + a 26-character sortable unique suffix: 48 bits of
// milliseconds and 80 random bits, incremented within one millisecond so ids
// made by one process sort in creation order.
func NewID(prefix string, now time.Time) string {
	ms := uint64(now.UnixMilli())
	idGen.Lock()
	if ms <= idGen.lastMS {
		ms = idGen.lastMS
		idGen.lo++
		if idGen.lo == 0 {
			idGen.hi++
		}
	} else {
		var b [10]byte
		rand.Read(b[:])
		idGen.lastMS = ms
		idGen.hi = binary.BigEndian.Uint16(b[:2])
		idGen.lo = binary.BigEndian.Uint64(b[2:])
	}
	hi, lo := idGen.hi, idGen.lo
	idGen.Unlock()

	// 128 bits: 48 time, 16 hi, 64 lo → 26 base32 digits (130 bits, top 2 zero).
	var out [26]byte
	bits := [2]uint64{ms<<16 | uint64(hi), lo}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[bits[1]&31]
		bits[1] = bits[1]>>5 | bits[0]<<59
		bits[0] >>= 5
	}
	return prefix + string(out[:])
}
