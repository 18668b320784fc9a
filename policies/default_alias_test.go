package policies

import (
	"maps"
	"slices"
	"testing"
)

// TestReferencedDefaults: a load compiles only the palace.default aliases
// the team's modules can reach; every form that could reach one it cannot
// name statically must keep them all.
func TestReferencedDefaults(t *testing.T) {
	const head = "package palace.gate\n\nimport rego.v1\n\n"
	for _, tt := range []struct {
		name, body string
		want       []string
		all        bool
	}{
		{"none", "decision := {\"allow\": true}\n", nil, false},
		{"import", "import data.palace.default.gate as base\n\ndecision := base.decision\n", []string{"palace.default.gate"}, false},
		{"full ref", "decision := data.palace.default.scope.decision\n", []string{"palace.default.scope"}, false},
		{"string key", "decision := data.palace.default[\"lanes\"].decision\n", []string{"palace.default.lanes"}, false},
		{"own packages", "decision := data.palace.research.decision\n", nil, false},
		{"dynamic point", "decision := data.palace.default[p].decision if p := \"gate\"\n", nil, true},
		{"dynamic palace", "decision := data.palace[k].gate.decision if k := \"default\"\n", nil, true},
		{"whole default", "import data.palace.default as d\n\ndecision := d.gate.decision\n", nil, true},
		{"whole data", "decision := data[\"palace\"][\"default\"].gate.decision\n", []string{"palace.default.gate"}, false},
		{"bare data", "decision := object.get(data, [\"palace\", \"default\", \"gate\", \"decision\"], {})\n", nil, true},
		{"inside input ref", "decision := input.x[data.palace.default.mailbox.y]\n", []string{"palace.default.mailbox"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseFile(SourceRepo, "gate.rego", []byte(head+tt.body))
			if err != nil {
				t.Fatal(err)
			}
			// An embedded module's references never count: only a team's
			// modules decide which aliases compile.
			runtime := append(slices.Clone(embeddedFiles()), f)
			pkgs, all := referencedDefaults(runtime)
			got := slices.Sorted(maps.Keys(pkgs))
			if all != tt.all || (!all && !slices.Equal(got, tt.want)) {
				t.Errorf("referencedDefaults = %v, all=%v; want %v, all=%v", got, all, tt.want, tt.all)
			}
		})
	}
}
