# palace.scope decides, for a batch of candidate cards, which apply to the
# request and how well they fit it.
#
# Input and output are documented in policies/README.md. One evaluation
# covers the whole batch (never one per card). Anchors are already filtered
# by the host before a card reaches this policy.
#
# scope_fit (0..30) = location + field, capped at 30:
#   - location: an unscoped card (no paths, languages or fields) has a base
#     of 10 at a worktree or repository anchor: it was written for the
#     repository the request is in. At the global anchor the base is 2: a
#     card written for every repository fits any one of them less closely,
#     and its general words meet many requests by accident, so it needs the
#     request to be about it to reach an inline lane. A path scope the named
#     file matches earns 20 and a language scope the named language matches
#     4, so a confirmed path scope outranks no scope; a scoped card the
#     request confirms (a scope matched, none missed) is lifted to its
#     anchor's base at least. Scoped where the request names nothing: path
#     5, language 3 ("could apply"); nothing at all when the request names
#     no task (context.wake, a session start): a scope it cannot confirm
#     earns no place in the wake-up layer.
#   - a named language outside the card's languages excludes the card. A
#     named file outside its paths excludes it too, unless the request is
#     about the card (relevance >= 0.5): a card scoped to tests/** still
#     applies when the question is about tests and the open file is not
#     one, without the path's points.
#   - field: 6 when the card's scope fields contain the request's field (or,
#     for a card without scope fields, its own field equals it); 3 when the
#     card is field-scoped and the request names no field; a request field
#     outside the scope fields excludes the card.
#
# operation_fit (-10..20) says whether the card is about what the request
# is doing. It starts at relevance (the host's ranking of the card against
# the query and the file, 0..1) times 12, rounded; then:
#   - every request intent among the card's trigger intents and every
#     request tool among its tool needs adds 8, capped at 20; when the text
#     agrees too (relevance >= 0.2, what a reference line needs) the card
#     takes the whole 20: activity and words point at the same card;
#   - when the request names intents, the card's trigger names intents, and
#     none is shared (nor a tool), the card is about another activity:
#     -10. A scope that misses excludes; an activity that misses only
#     costs, since intents are coarser than paths;
#   - when either side names no intents, relevance alone.
# The query's words reach this policy only through relevance, which stems
# them, splits identifiers and ignores generic words.
#
# With the default lanes: a path-scoped card on the open file that the
# query is about (relevance 0.8) scores 20 + 10 here and 32 more for
# relevance in lanes, 62, inline; an unscoped card nothing in the request
# mentions stays at 10, out of the pack.
#
# Teams replace this package by placing their own `package palace.scope` in
# <repo>/.palace/policies/. Keep the why lines readable: people see them.
package palace.scope

import rego.v1

req := object.get(input, "context", {})

file := object.get(req, "file", "")

language := lower(object.get(req, "language", ""))

field := object.get(req, "field", "")

intents := {x | some x in object.get(req, "intents", [])}

tools := {x | some x in object.get(req, "tools", [])}

wake := object.get(req, "wake", false)

# could_apply is a scope's part when the request names nothing of its
# kind: points, or none when no task is named at all.
could_apply(points, kind, scopes) := {"points": 0, "miss": false, "hit": false, "why": [sprintf("%s-scoped to %s; no task is named, so it earns no place", [kind, concat(", ", scopes)])]} if {
	wake
} else := {"points": points, "miss": false, "hit": false, "why": [sprintf("%s-scoped to %s; the request names no %s, so it could apply", [kind, concat(", ", scopes), nothing])]} if {
	nothing := {"path": "file", "language": "language", "field": "field"}[kind]
}

# relevant_to_request is the relevance from which a path scope the file
# misses no longer excludes a card.
relevant_to_request := 0.5

# text_agrees is the relevance from which an intent or tool hit earns the
# whole operation fit.
text_agrees := 0.2

# base_fit is an unscoped card's location by anchor.
base_fit(anchor) := 2 if anchor == "global"

else := 10

decision := {c.id: result(c) | some c in input.cards}

result(c) := {
	"applies": misses == 0,
	"scope_fit": min([30, location + field_fit.points]),
	"operation_fit": operation_fit(relevance, count(hit_intents) + count(hit_tools), other_activity),
	"why": array.concat(
		[line | some p in array.concat(parts, [base]); some line in p.why],
		array.concat(
			array.concat(
				[sprintf("intent %s is one of the card's trigger intents", [x]) | some x in hit_intents],
				[sprintf("tool %s is one of the card's tool needs", [x]) | some x in hit_tools],
			),
			[line | other_activity; line := sprintf("the request's intents (%s) are none of the card's trigger intents (%s)", [concat(", ", sort(intents)), concat(", ", card_intents)])],
		),
	),
} if {
	relevance := object.get(c, "relevance", 0)
	scope := object.get(c, "scope", {})
	paths := object.get(scope, "paths", [])
	langs := object.get(scope, "languages", [])
	fields := object.get(scope, "fields", [])
	field_fit := field_part(fields, object.get(c, "field", ""))
	parts := [path_part(paths, relevance), language_part(langs), field_fit]
	located := parts[0].points + parts[1].points
	misses := count([1 | some p in parts; p.miss])
	base := base_part((count(paths) + count(langs)) + count(fields), count([1 | some p in parts; p.hit]), misses, located, base_fit(object.get(c, "anchor", "")))
	location := located + base.points
	trigger := object.get(c, "trigger", {})
	card_intents := sort({x | some x in object.get(trigger, "intents", [])})
	hit_intents := sort({x | some x in card_intents; x in intents})
	hit_tools := sort({x | some x in object.get(trigger, "tool_needs", []); x in tools})
	other_activity := another_activity(card_intents, count(hit_intents) + count(hit_tools))
}

# another_activity: the request names intents, the card's trigger names
# intents, and the two share none (nor a tool).
another_activity(card_intents, hits) := true if {
	count(intents) > 0
	count(card_intents) > 0
	hits == 0
} else := false

# operation_fit is relevance × 12 (rounded half up on thousandths, as the
# lanes policy rounds), plus 8 a hit capped at 20, or the whole 20 when the
# text agrees; 10 less for another activity.
operation_fit(relevance, hits, other) := 20 if {
	hits > 0
	relevance >= text_agrees
} else := min([20, op_points(relevance) + (8 * hits)]) if {
	hits > 0
} else := op_points(relevance) - 10 if {
	other
} else := op_points(relevance)

op_points(relevance) := floor(((round(relevance * 1000) * 12) + 500) / 1000)

# A part is what one dimension adds: points, whether it excludes the card
# (miss), whether the request confirmed a scope (hit), and its why lines.
neutral := {"points": 0, "miss": false, "hit": false, "why": []}

# path: `**` crosses directories, `*` does not (glob.match with "/" as the
# delimiter), and a leading `**/` or a `/**/` matches zero or more
# directories as in .gitignore (see gitglob). The first matching glob, in
# the card's order, is named.
path_part(paths, relevance) := neutral if {
	count(paths) == 0
} else := could_apply(5, "path", paths) if {
	file == ""
} else := {"points": 20, "miss": false, "hit": true, "why": [sprintf("path %s matches %s", [file, hits[0]])]} if {
	hits := [p | some p in paths; glob.match(gitglob(p), ["/"], file)]
	count(hits) > 0
} else := {"points": 0, "miss": false, "hit": false, "why": [sprintf("path %s matches none of %s, but the request is about the card", [file, concat(", ", paths)])]} if {
	relevance >= relevant_to_request
} else := {"points": 0, "miss": true, "hit": false, "why": [sprintf("path %s matches none of %s", [file, concat(", ", paths)])]}

# gitglob gives `**/` gitignore's meaning: glob.match's `**` alone needs the
# slashes around it, so `**/*.go` would miss a root-level main.go. Each
# leading `**/` or `/**/` becomes the alternation `{**/,}`: zero or more
# directories.
gitglob(p) := concat("", ["{**/,}", substring(q, 3, -1)]) if {
	q := replace(p, "/**/", "/{**/,}")
	startswith(q, "**/")
} else := replace(p, "/**/", "/{**/,}")

# language: compared case-insensitively.
language_part(langs) := neutral if {
	count(langs) == 0
} else := could_apply(3, "language", langs) if {
	language == ""
} else := {"points": 4, "miss": false, "hit": true, "why": [sprintf("language %s is one of %s", [language, concat(", ", langs)])]} if {
	some l in langs
	lower(l) == language
} else := {"points": 0, "miss": true, "hit": false, "why": [sprintf("language %s is not one of %s", [language, concat(", ", langs)])]}

# field: the card's scope fields must contain the request's field; a card
# without scope fields earns the same points when its own field matches (a
# bonus, not a scope: it does not confirm the card).
field_part(fields, own) := neutral if {
	count(fields) == 0
	field == ""
} else := could_apply(3, "field", fields) if {
	field == ""
} else := {"points": 6, "miss": false, "hit": false, "why": [sprintf("card field %s matches the request", [field])]} if {
	count(fields) == 0
	own == field
} else := neutral if {
	count(fields) == 0
} else := {"points": 6, "miss": false, "hit": true, "why": [sprintf("field %s is one of the scope fields %s", [field, concat(", ", fields)])]} if {
	field in fields
} else := {"points": 0, "miss": true, "hit": false, "why": [sprintf("field %s is not one of the scope fields %s", [field, concat(", ", fields)])]}

# base_part lifts the location of an unscoped card, and of a scoped card the
# request confirmed (a scope matched, none missed), to its anchor's base.
base_part(scopes, hits, misses, located, floor_fit) := {"points": floor_fit, "why": ["unscoped: applies everywhere at its anchor"]} if {
	scopes == 0
} else := {"points": floor_fit - located, "why": ["the request matches its scope, so it ranks no lower than an unscoped card"]} if {
	hits > 0
	misses == 0
	located < floor_fit
} else := {"points": 0, "why": []}
