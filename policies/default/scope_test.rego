package palace.scope_test

import rego.v1

import data.palace.lanes
import data.palace.scope

card(id, sc) := rel_card(id, sc, 0)

rel_card(id, sc, relevance) := {"id": id, "tier": "qi", "field": "general", "statement": "", "scope": sc, "trigger": {"patterns": [], "intents": [], "tool_needs": []}, "relevance": relevance}

ask(ctx, cards) := d if {
	d := scope.decision with input as {"context": ctx, "cards": cards}
}

one(ctx, c) := r if {
	d := ask(ctx, [c])
	r := d[c.id]
}

# lane_of runs the default lanes over what scope said of a fresh card (no
# injection history) of the given persistence and relevance.
lane_of(r, persistence, relevance) := l if {
	l := lanes.decision.x with input as {"cards": [{
		"card": {"id": "x", "persistence": persistence, "render_pref": "auto"},
		"scope_fit": r.scope_fit, "operation_fit": r.operation_fit, "relevance": relevance,
		"counts30d": {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}, "age_days": 0,
	}]}
}

noscope := {"paths": [], "languages": [], "fields": []}

test_unscoped_card_applies_with_base_fit if {
	r := one({"file": "a.go", "language": "go"}, card("a", noscope))
	r.applies
	r.scope_fit == 10
	r.operation_fit == 0
	r.why == ["unscoped: applies everywhere at its anchor"]
}

test_empty_context_and_missing_fields if {
	r := one({}, {"id": "a"})
	r.applies
	r.scope_fit == 10
}

test_confirmed_path_outranks_no_scope if {
	r := one({"file": "store/sql/db.go"}, card("a", {"paths": ["store/**"], "languages": [], "fields": []}))
	r.applies
	r.scope_fit == 20
	r.why == ["path store/sql/db.go matches store/**"]
}

test_path_miss_excludes_unless_the_request_is_about_the_card if {
	sc := {"paths": ["tests/**"], "languages": [], "fields": []}
	not one({"file": "src/a.py"}, rel_card("a", sc, 0.499)).applies
	r := one({"file": "src/a.py"}, rel_card("a", sc, 0.5))
	r.applies
	r.scope_fit == 0
	r.why == ["path src/a.py matches none of tests/**, but the request is about the card"]
}

test_language_match_is_case_insensitive_and_lifted_to_the_base if {
	r := one({"language": "Go"}, card("a", {"paths": [], "languages": ["GO"], "fields": []}))
	r.applies
	r.scope_fit == 10
	not one({"language": "python"}, card("a", {"paths": [], "languages": ["go"], "fields": []})).applies
}

test_scoped_without_request_could_apply if {
	one({}, card("a", {"paths": ["x/**"], "languages": [], "fields": []})).scope_fit == 5
	one({}, card("a", {"paths": [], "languages": ["go"], "fields": []})).scope_fit == 3
	one({}, card("a", {"paths": [], "languages": [], "fields": ["ui"]})).scope_fit == 3
}

test_fields if {
	one({"field": "ui"}, card("a", {"paths": [], "languages": [], "fields": ["ui"]})).scope_fit == 16
	own := one({"field": "general"}, card("a", noscope))
	own.scope_fit == 16
	not one({"field": "db"}, card("a", {"paths": [], "languages": [], "fields": ["ui"]})).applies
	one({"field": "db"}, card("a", noscope)).scope_fit == 10
}

test_path_language_field_cap_at_30 if {
	r := one({"file": "store/db.go", "language": "go", "field": "ui"}, card("a", {"paths": ["store/**"], "languages": ["go"], "fields": ["ui"]}))
	r.scope_fit == 30
}

test_operation_fit_is_relevance_plus_triggers_capped if {
	one({}, rel_card("a", noscope, 0.5)).operation_fit == 6
	one({}, rel_card("a", noscope, 1)).operation_fit == 12
	c := object.union(rel_card("a", noscope, 1), {"trigger": {"intents": ["debug"], "tool_needs": ["git"]}})
	r := one({"intents": ["debug"], "tools": ["git"]}, c)
	r.operation_fit == 20
	r.why == ["unscoped: applies everywhere at its anchor", "intent debug is one of the card's trigger intents", "tool git is one of the card's tool needs"]
}

test_an_intent_hit_the_text_agrees_with_earns_the_whole_operation_fit if {
	c := object.union(rel_card("a", noscope, 0.2), {"trigger": {"intents": ["debug"], "tool_needs": []}})
	one({"intents": ["debug"]}, c).operation_fit == 20
	weak := object.union(rel_card("a", noscope, 0.199), {"trigger": {"intents": ["debug"], "tool_needs": []}})
	one({"intents": ["debug"]}, weak).operation_fit == 10
}

test_another_activity_costs if {
	c := object.union(rel_card("a", noscope, 0.5), {"trigger": {"intents": ["ui", "debug"], "tool_needs": []}})
	r := one({"intents": ["test", "build"]}, c)
	r.applies
	r.operation_fit == -4
	r.why == ["unscoped: applies everywhere at its anchor", "the request's intents (build, test) are none of the card's trigger intents (debug, ui)"]

	# Neither a request without intents nor a card without trigger intents
	# is another activity.
	one({}, c).operation_fit == 6
	one({"intents": ["test"]}, rel_card("a", noscope, 0.5)).operation_fit == 6
}

test_a_global_card_fits_less_than_a_repository_card if {
	g := object.union(card("a", noscope), {"anchor": "global"})
	one({}, g).scope_fit == 2
	one({}, object.union(card("a", noscope), {"anchor": "repo"})).scope_fit == 10
	lang := object.union(card("a", {"paths": [], "languages": ["go"], "fields": []}), {"anchor": "global"})
	one({"language": "go"}, lang).scope_fit == 4
	l := object.union(card("a", {"paths": [], "languages": ["go"], "fields": []}), {"anchor": "repo"})
	one({"language": "go"}, l).scope_fit == 10
}

test_relevant_scoped_card_beats_unscoped_bait if {
	sc := {"paths": ["store/**"], "languages": [], "fields": []}
	scoped := one({"file": "store/db.go"}, rel_card("a", sc, 0.6))
	bait := one({"file": "store/db.go"}, rel_card("b", noscope, 0.6))
	lane_of(scoped, "standard", 0.6).salience > lane_of(bait, "standard", 0.6).salience
	lane_of(scoped, "standard", 0.6).lane == "scoped"
}

test_cards_the_request_is_not_about_stay_out if {
	r := one({"file": "store/db.go"}, card("a", {"paths": ["store/**"], "languages": [], "fields": []}))
	lane_of(r, "standard", 0).lane == "inspector_only"
	u := one({}, card("a", noscope))
	lane_of(u, "standard", 0).lane == "inspector_only"
}

# A foundational card the file confirms by scope, and a protected card
# without a scope, stay references when the request is about something
# else; one that only could apply (no file named) does not.
test_standing_cards_stay_references if {
	r := one({"file": "store/db.go"}, card("a", {"paths": ["store/**"], "languages": [], "fields": []}))
	lane_of(r, "foundational", 0).lane == "ref_only"
	u := one({}, card("a", noscope))
	lane_of(u, "protected", 0).lane == "ref_only"
	p := one({}, card("a", {"paths": ["store/**"], "languages": [], "fields": []}))
	lane_of(p, "foundational", 0).lane == "inspector_only"
}

# globs read as in .gitignore: a leading `**/` or a `/**/` matches zero or
# more directories.
pathscope(p) := {"paths": [p], "languages": [], "fields": []}

test_double_star_slash_matches_zero_directories if {
	one({"file": "main.go"}, card("a", pathscope("**/*.go"))).applies
	one({"file": "cmd/palace/main.go"}, card("a", pathscope("**/*.go"))).applies
	one({"file": "store/query.go"}, card("a", pathscope("store/**/query.go"))).applies
	one({"file": "store/sql/v2/query.go"}, card("a", pathscope("store/**/query.go"))).applies
	not one({"file": "storequery.go"}, card("a", pathscope("store/**/query.go"))).applies
	not one({"file": "main.ts"}, card("a", pathscope("**/*.go"))).applies
}

# With no task named, a scope the request cannot confirm earns nothing: a
# session start is about the whole repository.
test_wake_gives_unconfirmed_scopes_no_place if {
	c := card("a", {"paths": ["store/**"], "languages": ["go"], "fields": ["storage"]})
	r := one({"wake": true}, c)
	r.applies
	r.scope_fit == 0
	r.why == [
		"path-scoped to store/**; no task is named, so it earns no place",
		"language-scoped to go; no task is named, so it earns no place",
		"field-scoped to storage; no task is named, so it earns no place",
	]
	one({}, c).scope_fit == 11
	one({"wake": true}, card("b", noscope)).scope_fit == 10
}
