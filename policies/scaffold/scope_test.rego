package palace.scope_test

import rego.v1

import data.palace.scope

test_double_star_glob_matches_a_root_file if {
	d := scope.decision with input as {"context": {"file": "main.go"}, "cards": [{"id": "kc_1", "scope": {"paths": ["**/*.go"]}}]}
	d.kc_1.applies
}

test_other_language_does_not_apply if {
	d := scope.decision with input as {"context": {"language": "python"}, "cards": [{"id": "kc_1", "scope": {"languages": ["go"]}}]}
	not d.kc_1.applies
}
