package policies

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// LanesConfigFile is the file of a policy folder that changes the lanes
// configuration: cooling thresholds, the per-lane count limits and the
// render caps. A team commits <repo>/.palace/policies/lanes.json; a person
// keeps $PALACE_HOME/policies/lanes.json. Numbers, not code, so a team
// tunes its packs without writing Rego; every engine (Rego, Go, WASM) and
// the host read the same values.
const LanesConfigFile = "lanes.json"

// KindConfig is the kind of a lanes configuration file (File.Kind).
const KindConfig = "config"

// lanesSetting is one key of a lanes configuration file.
type lanesSetting struct {
	name     string
	def      int // the default; 0 means none (the setting is off)
	min, max int
	field    func(*LanesConfig) *int
	doc      string
}

// lanesSettings are the keys a lanes configuration may set, with the range
// each accepts. A key outside this list is an error, not ignored: a typo
// would otherwise silently keep the default.
var lanesSettings = []lanesSetting{
	{"inactivity_grace_days", 30, 1, 3650, func(c *LanesConfig) *int { return &c.InactivityGraceDays }, "days without use before inactivity costs salience"},
	{"inactivity_step_days", 7, 1, 3650, func(c *LanesConfig) *int { return &c.InactivityStepDays }, "days per point of inactivity"},
	{"inactivity_max", 10, 1, 100, func(c *LanesConfig) *int { return &c.InactivityMax }, "the most inactivity can cost"},
	{"skip_cooling_threshold_30d", 6, 1, 1000, func(c *LanesConfig) *int { return &c.SkipCoolingThreshold30d }, "30-day skips, net of applications, before cooling"},
	{"trim_cooling_threshold_30d", 4, 1, 1000, func(c *LanesConfig) *int { return &c.TrimCoolingThreshold30d }, "30-day trims, net of applications, before cooling"},
	{"core_inline_limit", 6, 1, 100, func(c *LanesConfig) *int { return &c.CoreInlineLimit }, "items of the core lane"},
	{"scoped_inline_limit", 8, 1, 100, func(c *LanesConfig) *int { return &c.ScopedInlineLimit }, "items of the scoped lane"},
	{"ref_only_limit", 24, 1, 200, func(c *LanesConfig) *int { return &c.RefOnlyLimit }, "reference lines"},
	{"compact_char_limit", 0, 40, 10000, func(c *LanesConfig) *int { return &c.CompactCharLimit }, "characters of a compact line's statement"},
	{"foundational_inline_char_limit", 180, 40, 100000, func(c *LanesConfig) *int { return &c.FoundationalInlineCharLimit }, "characters of a foundational card's full text before it renders compact"},
}

// lanesOverlay is the settings one lanes configuration file sets.
type lanesOverlay map[string]int

// parseLanesConfig reads a lanes configuration file: one JSON object of
// known keys to positive integers within range. Errors are located at the
// file's line and column.
func parseLanesConfig(source, path string, content []byte) (File, error) {
	fail := func(off int64, format string, args ...any) (File, error) {
		line, col := lineCol(content, off)
		return File{}, Errors{newError("lanes_config_error", path, line, col, fmt.Sprintf(format, args...))}
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fail(dec.InputOffset(), "not JSON (%v): %s holds one object such as {\"core_inline_limit\": 4}", err, LanesConfigFile)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(0, "%s holds one JSON object such as {\"core_inline_limit\": 4}", LanesConfigFile)
	}
	overlay := lanesOverlay{}
	for dec.More() {
		off := skipSeparators(content, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return fail(dec.InputOffset(), "not JSON: %v", err)
		}
		key, _ := tok.(string)
		s, ok := findLanesSetting(key)
		if !ok {
			return fail(off, "unknown setting %q: the settings are %s", key, strings.Join(lanesSettingNames(), ", "))
		}
		if _, dup := overlay[key]; dup {
			return fail(off, "setting %q appears twice", key)
		}
		voff := skipSeparators(content, dec.InputOffset())
		tok, err = dec.Token()
		if err != nil {
			return fail(dec.InputOffset(), "not JSON: %v", err)
		}
		n, isNum := tok.(json.Number)
		v, perr := n.Int64()
		if !isNum || perr != nil || v < int64(s.min) || v > int64(s.max) {
			return fail(voff, "%s must be a whole number from %d to %d (%s), not %v", key, s.min, s.max, s.doc, tok)
		}
		overlay[key] = int(v)
	}
	if _, err := dec.Token(); err != nil {
		return fail(dec.InputOffset(), "not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(dec.InputOffset(), "%s holds one JSON object and nothing after it", LanesConfigFile)
	}
	sum := sha256.Sum256(content)
	return File{Source: source, Path: path, Kind: KindConfig, Points: []Point{Lanes}, SHA256: hex.EncodeToString(sum[:]), content: content, lanes: overlay}, nil
}

func findLanesSetting(name string) (lanesSetting, bool) {
	for _, s := range lanesSettings {
		if s.name == name {
			return s, true
		}
	}
	return lanesSetting{}, false
}

func lanesSettingNames() []string {
	out := make([]string, len(lanesSettings))
	for i, s := range lanesSettings {
		out[i] = s.name
	}
	sort.Strings(out)
	return out
}

// skipSeparators moves off past JSON whitespace, ':' and ',' to the start
// of the next token.
func skipSeparators(b []byte, off int64) int64 {
	for off < int64(len(b)) && strings.IndexByte(" \t\r\n:,", b[off]) >= 0 {
		off++
	}
	return off
}

// lineCol is the 1-based line and column of byte offset off in b.
func lineCol(b []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// lanesConfigOf is the configuration the files set, applied over the
// defaults in load order (home before repo): a later file's key wins.
func lanesConfigOf(files []File) LanesConfig {
	c := DefaultLanesConfig()
	for _, f := range files {
		if f.Kind != KindConfig {
			continue
		}
		for k, v := range f.lanes {
			if s, ok := findLanesSetting(k); ok {
				*s.field(&c) = v
			}
		}
	}
	return c
}

// LanesConfig is the lanes configuration of the set: the defaults with the
// lanes.json files of its sources applied.
func (s *Set) LanesConfig() LanesConfig { return s.lanes }
