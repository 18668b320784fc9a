package palace.scope_test

import rego.v1

import data.palace.lanes
import data.palace.scope

card(id, sc) := {"id": id, "tier": "qi", "field": "general", "statement": "", "scope": sc, "trigger": {"patterns": [], "intents": [], "tool_needs": []}}

ask(ctx, cards) := d if {
	d := scope.decision with input as {"context": ctx, "cards": cards}
}

one(ctx, c) := r if {
	d := ask(ctx, [c])
	r := d[c.id]
}

# lane_of runs the default lanes over what scope said of a fresh card (no
# injection history) of the given persistence.
lane_of(r, persistence) := l if {
	l := lanes.decision.x with input as {"cards": [{
		"card": {"id": "x", "persistence": persistence, "render_pref": "auto"},
		"scope_fit": r.scope_fit, "operation_fit": r.operation_fit,
		"counts30d": {"applied": 0, "skipped": 0, "trimmed": 0, "viewed": 0}, "age_days": 0,
	}]}
}

# unscoped

test_unscoped_card_applies_with_base_fit if {
	r := one({"file": "store/db.go"}, card("a", {}))
	r == {"applies": true, "scope_fit": 20, "operation_fit": 0, "why": ["unscoped: applies everywhere at its anchor"]}
}

test_empty_context_and_missing_fields if {
	r := scope.decision.a with input as {"cards": [{"id": "a"}]}
	r.applies
	r.scope_fit == 20
	r.operation_fit == 0
}

# paths

test_path_glob_matches_across_directories if {
	r := one({"file": "store/sql/db.go"}, card("a", {"paths": ["api/**", "store/**"]}))
	r == {"applies": true, "scope_fit": 20, "operation_fit": 0, "why": ["path store/sql/db.go matches store/**", "the request matches its scope, so it ranks no lower than an unscoped card"]}
}

test_single_star_stays_in_one_directory if {
	r := one({"file": "store/sql/db.go"}, card("a", {"paths": ["store/*.go"]}))
	not r.applies
	r.why == ["path store/sql/db.go matches none of store/*.go"]
	one({"file": "store/db.go"}, card("a", {"paths": ["store/*.go"]})).applies
}

test_double_star_slash_matches_zero_directories if {
	one({"file": "main.go"}, card("a", {"paths": ["**/*.go"]})).applies
	one({"file": "cmd/palace/main.go"}, card("a", {"paths": ["**/*.go"]})).applies
	one({"file": "store/query.go"}, card("a", {"paths": ["store/**/query.go"]})).applies
	one({"file": "store/sql/v2/query.go"}, card("a", {"paths": ["store/**/query.go"]})).applies
	not one({"file": "storequery.go"}, card("a", {"paths": ["store/**/query.go"]})).applies
	not one({"file": "main.ts"}, card("a", {"paths": ["**/*.go"]})).applies
}

test_path_scoped_without_file_could_apply if {
	r := one({}, card("a", {"paths": ["store/**", "db/**"]}))
	r == {"applies": true, "scope_fit": 5, "operation_fit": 0, "why": ["path-scoped to store/**, db/**; the request names no file, so it could apply"]}
}

test_bad_glob_matches_nothing if {
	r := one({"file": "x.go"}, card("a", {"paths": ["[", "*.go"]}))
	r.why[0] == "path x.go matches *.go"
}

# languages

test_language_match_is_case_insensitive if {
	r := one({"language": "Go"}, card("a", {"languages": ["rust", "GO"]}))
	r == {"applies": true, "scope_fit": 20, "operation_fit": 0, "why": ["language go is one of rust, GO", "the request matches its scope, so it ranks no lower than an unscoped card"]}
}

test_language_mismatch_excludes if {
	r := one({"language": "python"}, card("a", {"languages": ["go"]}))
	not r.applies
	r.why == ["language python is not one of go"]
}

test_language_scoped_without_language_could_apply if {
	r := one({"file": "a.txt"}, card("a", {"languages": ["go"]}))
	r == {"applies": true, "scope_fit": 5, "operation_fit": 0, "why": ["language-scoped to go; the request names no language, so it could apply"]}
}

# fields

test_scope_field_match if {
	r := one({"field": "storage"}, card("a", {"fields": ["storage", "sql"]}))
	r == {"applies": true, "scope_fit": 27, "operation_fit": 0, "why": ["field storage is one of the scope fields storage, sql", "the request matches its scope, so it ranks no lower than an unscoped card"]}
}

test_scope_field_mismatch_excludes if {
	r := one({"field": "ui"}, card("a", {"fields": ["storage"]}))
	not r.applies
	r.why == ["field ui is not one of the scope fields storage"]
}

test_field_scoped_without_field_could_apply if {
	r := one({}, card("a", {"fields": ["storage"]}))
	r == {"applies": true, "scope_fit": 5, "operation_fit": 0, "why": ["field-scoped to storage; the request names no field, so it could apply"]}
}

test_own_field_match_earns_the_field_points if {
	r := one({"field": "general"}, card("a", {}))
	r == {"applies": true, "scope_fit": 27, "operation_fit": 0, "why": ["card field general matches the request", "unscoped: applies everywhere at its anchor"]}
}

test_own_field_is_a_bonus_not_a_confirmation if {
	r := one({"field": "general"}, card("a", {"paths": ["ui/**"]}))
	r == {"applies": true, "scope_fit": 12, "operation_fit": 0, "why": ["path-scoped to ui/**; the request names no file, so it could apply", "card field general matches the request"]}
}

test_own_field_mismatch_is_neutral if {
	r := one({"field": "ui"}, card("a", {"paths": ["ui/**"]}))
	r == {"applies": true, "scope_fit": 5, "operation_fit": 0, "why": ["path-scoped to ui/**; the request names no file, so it could apply"]}
}

# all dimensions together, and one miss is enough

test_full_match_reaches_30 if {
	r := one({"file": "store/db.go", "language": "go", "field": "storage"}, card("a", {"paths": ["store/**"], "languages": ["go"], "fields": ["storage"]}))
	r.applies
	r.scope_fit == 30
	count(r.why) == 3
}

test_open_dimensions_add_up if {
	r := one({}, card("a", {"paths": ["store/**"], "languages": ["go"], "fields": ["storage"]}))
	r.applies
	r.scope_fit == 15
}

test_a_confirmed_scope_above_the_base_is_not_lifted if {
	r := one({"file": "store/db.go"}, card("a", {"paths": ["store/**"], "languages": ["go"]}))
	r == {"applies": true, "scope_fit": 20, "operation_fit": 0, "why": ["path store/db.go matches store/**", "language-scoped to go; the request names no language, so it could apply"]}
}

test_one_miss_excludes if {
	r := one({"file": "store/db.go", "language": "sql"}, card("a", {"paths": ["store/**"], "languages": ["go"]}))
	not r.applies
	r.scope_fit == 15
}

# operation fit: the query

stmt(id, s) := object.union(card(id, {}), {"statement": s})

test_query_sharing_one_term_earns_10 if {
	r := one({"query": "Why does SQLite lock?"}, stmt("a", "Open sqlite in WAL mode"))
	r.operation_fit == 10
	r.why == ["unscoped: applies everywhere at its anchor", "the query shares sqlite with the card"]
}

test_query_sharing_two_terms_earns_15 if {
	r := one({"query": "wal-mode busy_timeout; sqlite"}, stmt("a", "SQLite in WAL mode needs a busy_timeout"))
	r.operation_fit == 15
	r.why == ["unscoped: applies everywhere at its anchor", "the query shares busy_timeout, mode, sqlite, wal with the card"]
}

test_query_ignores_stopwords_short_terms_and_case if {
	r := one({"query": "the DB is on, and it should go"}, stmt("a", "The db should go on and on"))
	r.operation_fit == 0
	r.why == ["unscoped: applies everywhere at its anchor"]
}

test_query_reads_trigger_intents_and_tool_needs if {
	c := object.union(stmt("a", "Keep migrations small"), {"trigger": {"intents": ["schema-migrate"], "tool_needs": ["psql"]}})
	r := one({"query": "psql schema"}, c)
	r.operation_fit == 15
	r.why == ["unscoped: applies everywhere at its anchor", "the query shares psql, schema with the card"]
}

# operation fit: intents and tools

test_intents_and_tools_add_ten_each_capped_at_20 if {
	c := object.union(card("a", {}), {"trigger": {"intents": ["refactor", "debug", "test"], "tool_needs": ["psql"]}})
	r := one({"intents": ["test", "refactor", "refactor"], "tools": ["psql"]}, c)
	r.operation_fit == 20
	r.why == [
		"unscoped: applies everywhere at its anchor",
		"intent refactor is one of the card's trigger intents",
		"intent test is one of the card's trigger intents",
		"tool psql is one of the card's tool needs",
	]
	r1 := one({"intents": ["debug"]}, c)
	r1.operation_fit == 10
}

test_query_and_intent_add_up_capped_at_20 if {
	c := object.union(stmt("a", "Retry with a deadline"), {"trigger": {"intents": ["debug"], "tool_needs": []}})
	one({"query": "retry", "intents": ["debug"]}, c).operation_fit == 20
	one({"query": "retry deadline", "intents": ["debug"]}, c).operation_fit == 20
}

test_batch_has_one_result_per_card if {
	d := ask({"file": "a/b.go"}, [card("a", {}), card("b", {"paths": ["c/**"]}), card("c", {"paths": ["a/*"]})])
	count(d) == 3
	d.a.applies
	not d.b.applies
	d.c.applies
}

# orderings with the default lanes (DESIGN §5)

perfect := object.union(
	card("p", {"paths": ["store/**"], "languages": ["go"], "fields": ["storage"]}),
	{"statement": "Open SQLite in WAL mode with a busy timeout"},
)

test_perfectly_scoped_on_topic_card_is_scoped if {
	r := one({"file": "store/db.go", "language": "go", "field": "storage", "query": "sqlite busy timeout"}, perfect)
	r.scope_fit + r.operation_fit >= 45
	lane_of(r, "standard").lane == "scoped"
}

test_perfectly_scoped_off_topic_card_is_a_reference if {
	r := one({"file": "store/db.go", "language": "go", "field": "storage", "query": "button colours"}, perfect)
	lane_of(r, "standard").lane == "ref_only"
}

test_unscoped_foundational_card_is_core_with_any_overlap_or_intent if {
	law := object.union(stmt("law", "Never claim absence without looking"), {"trigger": {"intents": ["review"], "tool_needs": []}})
	lane_of(one({"query": "claim"}, law), "foundational").lane == "core"
	lane_of(one({"intents": ["review"]}, law), "foundational").lane == "core"
	lane_of(one({"query": "button colours"}, law), "foundational").lane == "core"
}

test_unscoped_standard_card_without_overlap_stays_a_reference if {
	r := one({"file": "store/db.go", "query": "button colours"}, stmt("a", "Open SQLite in WAL mode"))
	r.operation_fit == 0
	lane_of(r, "standard").lane == "ref_only"
}

test_path_scoped_on_topic_card_without_file_ranks_with_unscoped_cards if {
	q := {"query": "sqlite wal"}
	scoped := one(q, object.union(card("s", {"paths": ["store/**"]}), {"statement": "Open SQLite in WAL mode"}))
	unscoped := one(q, stmt("u", "Buttons use the Button component"))
	scoped.scope_fit + scoped.operation_fit >= unscoped.scope_fit + unscoped.operation_fit
	lane_of(scoped, "standard").lane == "ref_only"
}

test_confirmed_scoped_cards_rank_no_lower_than_unscoped_ones if {
	ctx := {"file": "store/db.go", "language": "go", "field": "storage"}
	unscoped := one(ctx, object.union(card("u", {}), {"field": "storage"}))
	path := one(ctx, object.union(card("p", {"paths": ["store/**"]}), {"field": "storage"}))
	field := one(ctx, card("f", {"fields": ["storage"]}))
	path.scope_fit >= unscoped.scope_fit
	field.scope_fit >= unscoped.scope_fit
	one(ctx, perfect).scope_fit > unscoped.scope_fit
}

test_field_scoped_foundational_card_in_its_field_is_core if {
	law := object.union(card("law", {"fields": ["storage"]}), {"trigger": {"intents": ["debug"], "tool_needs": []}})
	lane_of(one({"field": "storage", "intents": ["debug"]}, law), "foundational").lane == "core"
}

test_card_whose_path_misses_the_file_does_not_apply if {
	r := one({"file": "web/app.ts", "query": "sqlite busy timeout"}, perfect)
	not r.applies
}
