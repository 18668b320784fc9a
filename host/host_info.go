package host

import (
	"path/filepath"
	"time"
)

// Now is the host's clock: the time its writes are stamped with (a fixed
// Options.Now makes them reproducible).
func (h *Host) Now() time.Time { return h.now() }

// TelemetryDays is how many days of raw context-request records this host
// keeps (Options.TelemetryDays, $PALACE_TELEMETRY_DAYS or the default).
func (h *Host) TelemetryDays() int { return h.telemetryDays }

// DatabasePath is the palace's SQLite file.
func (h *Host) DatabasePath() string { return filepath.Join(h.home, dbFile) }
