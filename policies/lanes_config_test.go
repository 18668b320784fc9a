package policies_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palacehq/palace/policies"
)

func TestLanesConfigLayers(t *testing.T) {
	ctx := context.Background()
	home, repo := t.TempDir(), t.TempDir()
	def, err := policies.LoadDefaults(ctx, policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := def.LanesConfig(); got != policies.DefaultLanesConfig() || got.CoreInlineLimit != 6 || got.FoundationalInlineCharLimit != 180 {
		t.Fatalf("defaults = %+v", got)
	}
	writePolicy(t, home, "lanes.json", `{"core_inline_limit": 3, "ref_only_limit": 10}`)
	writePolicy(t, repo, "lanes.json", "{\n  \"core_inline_limit\": 2,\n  \"compact_char_limit\": 120\n}\n")
	set, err := policies.Load(ctx, policies.Sources{HomeDir: home, RepoDir: repo}, policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := set.LanesConfig()
	// The repo's key wins, the home's others stay, the rest are defaults.
	want := policies.DefaultLanesConfig()
	want.CoreInlineLimit, want.RefOnlyLimit, want.CompactCharLimit = 2, 10, 120
	if got != want {
		t.Errorf("config = %+v, want %+v", got, want)
	}
	if set.Hash() == def.Hash() {
		t.Error("a lanes configuration does not change the set's hash")
	}
	var kinds []string
	for _, f := range set.Files() {
		if f.Kind == policies.KindConfig {
			kinds = append(kinds, f.Source)
		}
	}
	if strings.Join(kinds, ",") != "home,repo" {
		t.Errorf("configuration files listed = %v", kinds)
	}
	// The lanes point sees the numbers: with a skip threshold of 1, two
	// skips cool a card that the default threshold (6) leaves alone.
	in := policies.LanesInput{Cards: []policies.LanesCard{{Card: policies.LanesCardInfo{ID: "kc_1"}, ScopeFit: 20, OperationFit: 20, Counts30d: policies.Counts30d{Skipped: 2}}}}
	out, _ := def.Lanes(ctx, in)
	writePolicy(t, repo, "lanes.json", `{"skip_cooling_threshold_30d": 1}`)
	cooler, err := policies.Load(ctx, policies.Sources{RepoDir: repo}, policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in.Config = cooler.LanesConfig()
	cooled, _ := cooler.Lanes(ctx, in)
	if out["kc_1"].Breakdown["skipped"] != 0 || cooled["kc_1"].Breakdown["skipped"] != -4 {
		t.Errorf("skip cooling: default %v, threshold 1 %v", out["kc_1"].Breakdown, cooled["kc_1"].Breakdown)
	}
}

func TestLanesConfigErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "{\n  \"core_limit\": 3\n}", `lanes.json:2:3: lanes_config_error: unknown setting "core_limit": the settings are compact_char_limit, core_inline_limit`},
		{"out of range", `{"core_inline_limit": 0}`, "lanes.json:1:23: lanes_config_error: core_inline_limit must be a whole number from 1 to 100"},
		{"not a number", `{"ref_only_limit": "ten"}`, "ref_only_limit must be a whole number from 1 to 200 (reference lines), not ten"},
		{"fraction", `{"inactivity_max": 2.5}`, "inactivity_max must be a whole number"},
		{"duplicate", `{"inactivity_max": 2, "inactivity_max": 3}`, `setting "inactivity_max" appears twice`},
		{"array", `[1]`, "holds one JSON object"},
		{"trailing", `{} {}`, "nothing after it"},
		{"broken", `{"inactivity_max": 2`, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			writePolicy(t, repo, "lanes.json", tc.body)
			_, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{})
			var errs policies.Errors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Code != "lanes_config_error" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one located error holding %q", err, tc.want)
			}
		})
	}
}

func TestLanesConfigOnlyAtTheTopOfAFolder(t *testing.T) {
	repo := t.TempDir()
	writePolicy(t, filepath.Join(repo, "team"), "lanes.json", `{"core_inline_limit": 1}`)
	set, err := policies.Load(context.Background(), policies.Sources{RepoDir: repo}, policies.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.LanesConfig().CoreInlineLimit != 6 {
		t.Errorf("a nested lanes.json was read: %+v", set.LanesConfig())
	}
}
