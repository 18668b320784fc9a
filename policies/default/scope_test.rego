package palace.scope_test

import rego.v1

import data.palace.scope

card(id, sc) := {"id": id, "tier": "qi", "field": "general", "scope": sc, "trigger": {"patterns": [], "intents": [], "tool_needs": []}}

ask(ctx, cards) := d if {
	d := scope.decision with input as {"context": ctx, "cards": cards}
}

one(ctx, c) := r if {
	d := ask(ctx, [c])
	r := d[c.id]
}

# unscoped

test_unscoped_card_applies_with_base_fit if {
	r := one({"file": "store/db.go"}, card("a", {}))
	r == {"applies": true, "scope_fit": 10, "operation_fit": 0, "why": ["unscoped: applies everywhere"]}
}

test_empty_context_and_missing_fields if {
	r := scope.decision.a with input as {"cards": [{"id": "a"}]}
	r.applies
	r.scope_fit == 10
}

# paths

test_path_glob_matches_across_directories if {
	r := one({"file": "store/sql/db.go"}, card("a", {"paths": ["api/**", "store/**"]}))
	r == {"applies": true, "scope_fit": 12, "operation_fit": 0, "why": ["path store/sql/db.go matches store/**"]}
}

test_single_star_stays_in_one_directory if {
	r := one({"file": "store/sql/db.go"}, card("a", {"paths": ["store/*.go"]}))
	not r.applies
	r.why == ["path store/sql/db.go matches none of store/*.go"]
	one({"file": "store/db.go"}, card("a", {"paths": ["store/*.go"]})).applies
}

test_path_scoped_without_file_is_neutral if {
	r := one({}, card("a", {"paths": ["store/**", "db/**"]}))
	r == {"applies": true, "scope_fit": 0, "operation_fit": 0, "why": ["path-scoped to store/**, db/**; the request names no file"]}
}

test_bad_glob_matches_nothing if {
	r := one({"file": "x.go"}, card("a", {"paths": ["[", "*.go"]}))
	r.why == ["path x.go matches *.go"]
}

# languages

test_language_match_is_case_insensitive if {
	r := one({"language": "Go"}, card("a", {"languages": ["rust", "GO"]}))
	r == {"applies": true, "scope_fit": 8, "operation_fit": 0, "why": ["language go is one of rust, GO"]}
}

test_language_mismatch_excludes if {
	r := one({"language": "python"}, card("a", {"languages": ["go"]}))
	not r.applies
	r.why == ["language python is not one of go"]
}

test_language_scoped_without_language_is_neutral if {
	r := one({"file": "a.txt"}, card("a", {"languages": ["go"]}))
	r == {"applies": true, "scope_fit": 0, "operation_fit": 0, "why": ["language-scoped to go; the request names no language"]}
}

# fields

test_scope_field_match if {
	r := one({"field": "storage"}, card("a", {"fields": ["storage", "sql"]}))
	r == {"applies": true, "scope_fit": 10, "operation_fit": 0, "why": ["field storage is one of the scope fields storage, sql"]}
}

test_scope_field_mismatch_excludes if {
	r := one({"field": "ui"}, card("a", {"fields": ["storage"]}))
	not r.applies
	r.why == ["field ui is not one of the scope fields storage"]
}

test_field_scoped_without_field_is_neutral if {
	r := one({}, card("a", {"fields": ["storage"]}))
	r.applies
	r.why == ["field-scoped to storage; the request names no field"]
}

test_own_field_match_earns_a_smaller_bonus if {
	r := one({"field": "general"}, card("a", {}))
	r == {"applies": true, "scope_fit": 16, "operation_fit": 0, "why": ["card field general matches the request", "unscoped: applies everywhere"]}
}

test_own_field_mismatch_is_neutral if {
	r := one({"field": "ui"}, card("a", {"paths": ["ui/**"]}))
	r == {"applies": true, "scope_fit": 0, "operation_fit": 0, "why": ["path-scoped to ui/**; the request names no file"]}
}

# all dimensions together, and one miss is enough

test_full_match_reaches_30 if {
	r := one({"file": "store/db.go", "language": "go", "field": "storage"}, card("a", {"paths": ["store/**"], "languages": ["go"], "fields": ["storage"]}))
	r.applies
	r.scope_fit == 30
	count(r.why) == 3
}

test_one_miss_excludes if {
	r := one({"file": "store/db.go", "language": "sql"}, card("a", {"paths": ["store/**"], "languages": ["go"]}))
	not r.applies
	r.scope_fit == 12
}

# operation fit

test_intents_and_tools_add_ten_each_capped_at_20 if {
	c := object.union(card("a", {}), {"trigger": {"intents": ["refactor", "debug", "test"], "tool_needs": ["psql"]}})
	r := one({"intents": ["test", "refactor", "refactor"], "tools": ["psql"]}, c)
	r.operation_fit == 20
	r.why == [
		"unscoped: applies everywhere",
		"intent refactor is one of the card's trigger intents",
		"intent test is one of the card's trigger intents",
		"tool psql is one of the card's tool needs",
	]
	r1 := one({"intents": ["debug"]}, c)
	r1.operation_fit == 10
}

test_batch_has_one_result_per_card if {
	d := ask({"file": "a/b.go"}, [card("a", {}), card("b", {"paths": ["c/**"]}), card("c", {"paths": ["a/*"]})])
	count(d) == 3
	d.a.applies
	not d.b.applies
	d.c.applies
}
