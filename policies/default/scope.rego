# palace.scope decides, for a batch of candidate cards, which apply to the
# request and how well they fit it.
#
# Input and output are documented in policies/README.md. One evaluation
# covers the whole batch (never one per card). Anchors are already filtered
# by the host before a card reaches this policy.
#
# scope_fit (0..30): path glob match 12, language match 8, scope field match
# 10 (or the card's own field equals the request's 6), an unscoped card a
# base of 10. A scoped dimension the request says nothing about is neutral:
# it neither excludes the card nor earns points. A dimension the request does
# name must match, or the card does not apply.
#
# operation_fit (0..20): 10 for every request intent among the card's trigger
# intents and every request tool among its tool needs, capped at 20.
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

decision := {c.id: result(c) | some c in input.cards}

result(c) := {
	"applies": count([1 | some p in parts; p.miss]) == 0,
	"scope_fit": min([30, sum([p.points | some p in parts])]),
	"operation_fit": min([20, 10 * (count(hit_intents) + count(hit_tools))]),
	"why": array.concat(
		[line | some p in parts; some line in p.why],
		array.concat(
			[sprintf("intent %s is one of the card's trigger intents", [x]) | some x in hit_intents],
			[sprintf("tool %s is one of the card's tool needs", [x]) | some x in hit_tools],
		),
	),
} if {
	scope := object.get(c, "scope", {})
	paths := object.get(scope, "paths", [])
	langs := object.get(scope, "languages", [])
	fields := object.get(scope, "fields", [])
	parts := [
		path_part(paths),
		language_part(langs),
		field_part(fields, object.get(c, "field", "")),
		base_part(paths, langs, fields),
	]
	trigger := object.get(c, "trigger", {})
	hit_intents := sort({x | some x in object.get(trigger, "intents", []); x in intents})
	hit_tools := sort({x | some x in object.get(trigger, "tool_needs", []); x in tools})
}

neutral := {"points": 0, "miss": false, "why": []}

# path: `**` crosses directories, `*` does not (glob.match with "/" as the
# delimiter). The first matching glob, in the card's order, is named.
path_part(paths) := neutral if {
	count(paths) == 0
} else := {"points": 0, "miss": false, "why": [sprintf("path-scoped to %s; the request names no file", [concat(", ", paths)])]} if {
	file == ""
} else := {"points": 12, "miss": false, "why": [sprintf("path %s matches %s", [file, hits[0]])]} if {
	hits := [p | some p in paths; glob.match(p, ["/"], file)]
	count(hits) > 0
} else := {"points": 0, "miss": true, "why": [sprintf("path %s matches none of %s", [file, concat(", ", paths)])]}

# language: compared case-insensitively.
language_part(langs) := neutral if {
	count(langs) == 0
} else := {"points": 0, "miss": false, "why": [sprintf("language-scoped to %s; the request names no language", [concat(", ", langs)])]} if {
	language == ""
} else := {"points": 8, "miss": false, "why": [sprintf("language %s is one of %s", [language, concat(", ", langs)])]} if {
	some l in langs
	lower(l) == language
} else := {"points": 0, "miss": true, "why": [sprintf("language %s is not one of %s", [language, concat(", ", langs)])]}

# field: the card's scope fields must contain the request's field; a card
# without scope fields earns a smaller bonus when its own field matches.
field_part(fields, own) := neutral if {
	count(fields) == 0
	field == ""
} else := {"points": 0, "miss": false, "why": [sprintf("field-scoped to %s; the request names no field", [concat(", ", fields)])]} if {
	field == ""
} else := {"points": 6, "miss": false, "why": [sprintf("card field %s matches the request", [field])]} if {
	count(fields) == 0
	own == field
} else := neutral if {
	count(fields) == 0
} else := {"points": 10, "miss": false, "why": [sprintf("field %s is one of the scope fields %s", [field, concat(", ", fields)])]} if {
	field in fields
} else := {"points": 0, "miss": true, "why": [sprintf("field %s is not one of the scope fields %s", [field, concat(", ", fields)])]}

base_part(paths, langs, fields) := {"points": 10, "miss": false, "why": ["unscoped: applies everywhere"]} if {
	(count(paths) + count(langs)) + count(fields) == 0
} else := neutral
