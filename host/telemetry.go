package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/palacehq/palace/store"
)

// TelemetryDaysEnv sets how many days raw context-request telemetry is
// kept (Options.TelemetryDays wins over it).
const TelemetryDaysEnv = "PALACE_TELEMETRY_DAYS"

// DefaultTelemetryDays keeps the raw records of the cooling window: a
// pack's 30-day counts come from the per-card rollups, and for as long as
// the raw records are kept the outcomes of each request can be read back.
const DefaultTelemetryDays = 30

func telemetryDays(n int) (int, error) {
	return daysSetting(n, "telemetry_days", "telemetry retention", TelemetryDaysEnv, DefaultTelemetryDays)
}

// daysSetting resolves a number of days: n when positive, else the
// environment variable env, else def. A negative n or a bad environment
// value is KindInvalid naming field.
func daysSetting(n int, field, what, env string, def int) (int, error) {
	if n > 0 {
		return n, nil
	}
	if n < 0 {
		return 0, invalid(field, "%s %d is negative: pass a number of days (default %d)", what, n, def)
	}
	v := os.Getenv(env)
	if v == "" {
		return def, nil
	}
	d, err := strconv.Atoi(v)
	if err != nil || d < 1 {
		return 0, invalid(field, "%s=%q is not a number of days ≥ 1: set it to e.g. %d, or unset it", env, v, def)
	}
	return d, nil
}

// telemetryCutoff is the oldest time whose raw records are kept: the start
// of the UTC day telemetryDays days ago.
func (h *Host) telemetryCutoff() string { return cutoffDays(h.now(), h.telemetryDays) }

// cutoffDays is the start of the UTC day days days before now's.
func cutoffDays(now time.Time, days int) string {
	return store.FormatTime(now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days))
}

// MaintenanceReport says what Maintenance did.
type MaintenanceReport struct {
	// KeepDays is the retention applied; Pruned the raw records dropped.
	KeepDays int `json:"keep_days"`
	Pruned   int `json:"pruned"`
	// Vacuumed is true when the file was rebuilt.
	Vacuumed bool                 `json:"vacuumed"`
	Before   store.TelemetryStats `json:"before"`
	After    store.TelemetryStats `json:"after"`
}

// vacuumFreeShare is the share of free pages above which Maintenance
// rebuilds the file without being asked.
const vacuumFreeShare = 0.25

// Maintenance drops raw request records past retention (keepDays when
// positive; negative is KindInvalid), truncates the write-ahead log and
// VACUUMs when asked or over a quarter of the file is free. Cards, evidence,
// links and events are never touched. Human mode only: VACUUM blocks every
// writer.
func (h *Host) Maintenance(ctx context.Context, keepDays int, vacuum bool) (MaintenanceReport, error) {
	if err := h.gatekeeper().RequireHuman("maintenance"); err != nil {
		return MaintenanceReport{}, err
	}
	days, err := telemetryDays(keepDays)
	if err != nil {
		return MaintenanceReport{}, err
	}
	if keepDays == 0 {
		days = h.telemetryDays
	}
	r := MaintenanceReport{KeepDays: days}
	if r.Before, err = h.store.Telemetry(ctx); err != nil {
		return r, internal(err, "maintenance")
	}
	if r.Pruned, err = h.store.PruneTelemetry(ctx, cutoffDays(h.now(), days), 0); err != nil {
		return r, internal(err, "maintenance")
	}
	st, err := h.store.Telemetry(ctx)
	if err != nil {
		return r, internal(err, "maintenance")
	}
	r.Vacuumed = vacuum || st.FileBytes > 0 && float64(st.FreeBytes) > vacuumFreeShare*float64(st.FileBytes)
	if err := h.store.Compact(ctx, r.Vacuumed); err != nil {
		if errors.Is(err, store.ErrBusyCheckpoint) {
			return r, &Error{Kind: KindInternal, Field: "database", Msg: err.Error() + ": run `palace maintenance` again when no agent is working", Err: err}
		}
		return r, internal(err, "maintenance")
	}
	if r.After, err = h.store.Telemetry(ctx); err != nil {
		return r, internal(err, "maintenance")
	}
	return r, nil
}

// telemetryCheck is doctor's line on the database size and telemetry.
func telemetryCheck(ctx context.Context, st *store.Store, days int) Check {
	t, err := st.Telemetry(ctx)
	if err != nil {
		return Check{Name: "telemetry", Status: "warn", Detail: err.Error()}
	}
	oldest := "none"
	if t.OldestDay != "" {
		oldest = "oldest " + t.OldestDay
	}
	c := Check{Name: "telemetry", Status: "ok", Detail: fmt.Sprintf("database %s (%s free, WAL %s); %d request records kept %d days (%s); %d daily rollup rows",
		mb(t.FileBytes), mb(t.FreeBytes), mb(t.WALBytes), t.Requests, days, oldest, t.DailyRows)}
	if t.FileBytes > 0 && float64(t.FreeBytes) > vacuumFreeShare*float64(t.FileBytes) {
		c.Status, c.Fix = "warn", "run `palace maintenance` to give the free space back"
	}
	return c
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// SettleTelemetry writes the request records still queued and waits for
// their fold, so that another process (or another handle on the file)
// reads them. Close does the same; requests never wait for it.
func (h *Host) SettleTelemetry() error {
	if err := h.store.FlushRecords(); err != nil {
		return internal(err, "write queued telemetry")
	}
	return nil
}
