# palace.scope decides, for a batch of candidate cards, which apply to the
# request and how well they fit it.
#
# Input and output are documented in policies/README.md. One evaluation
# covers the whole batch (never one per card). Anchors are already filtered
# by the host before a card reaches this policy.
#
# scope_fit (0..30) = location + field, capped at 30:
#   - field: 7 when the card's scope fields contain the request's field (or,
#     for a card without scope fields, its own field equals it); 5 when the
#     card is field-scoped and the request names no field ("could apply");
#     a request field outside the scope fields excludes the card.
#   - location: path 15 and language 8 when the request names them and they
#     match; 5 each when the card is scoped there and the request says
#     nothing ("could apply"); a named one that misses excludes the card.
#     An unscoped card (no paths, languages or fields) has a base of 20: it
#     applies everywhere at its anchor. A scoped card the request confirms
#     (a named path, language or scope field matches) is lifted to that base
#     too, so being scoped never ranks a card below an unscoped one.
#   Path + language + field reach exactly 30.
#
# operation_fit (0..20): the query's terms against the card's statement,
# trigger intents and tool needs (lower case, split on [^a-z0-9_]+,
# stopwords and terms under 3 characters dropped): one shared term 10, two or
# more 15; plus 10 for every request intent among the card's trigger intents
# and every request tool among its tool needs; capped at 20.
#
# With the default lanes: a card scoped on path, language and field that the
# request matches on all three and asks about on-topic (two shared terms)
# reaches 30 + 15 = 45, scoped; an unscoped foundational card 20 + 20 = 40,
# core, before any query or intent; an unscoped standard card that shares
# nothing with the query stays at 20, ref_only; a path-scoped card asked
# about on-topic without a file reaches 5 + 15 = 20, level with that
# unscoped card.
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

query_terms := terms(object.get(req, "query", ""))

# stopwords are common words of three letters or more (shorter ones are
# dropped anyway) that would make every card share a term with every query.
stopwords := {
	"all", "also", "and", "any", "are", "but", "can", "does", "for", "from", "has", "have",
	"how", "into", "its", "not", "should", "than", "that", "the", "their", "then", "there",
	"these", "this", "use", "used", "using", "was", "were", "what", "when", "where", "which",
	"who", "why", "will", "with", "you", "your",
}

# terms is the set of a text's lower-cased runs of [a-z0-9_], at least 3
# characters long, stopwords dropped.
terms(s) := {t | some t in regex.split(`[^a-z0-9_]+`, lower(s)); count(t) >= 3; not stopwords[t]}

decision := {c.id: result(c) | some c in input.cards}

result(c) := {
	"applies": misses == 0,
	"scope_fit": min([30, location + field_fit.points]),
	"operation_fit": min([20, (query_points(shared) + (10 * count(hit_intents))) + (10 * count(hit_tools))]),
	"why": array.concat(
		[line | some p in array.concat(parts, [base]); some line in p.why],
		array.concat(
			query_why(shared),
			array.concat(
				[sprintf("intent %s is one of the card's trigger intents", [x]) | some x in hit_intents],
				[sprintf("tool %s is one of the card's tool needs", [x]) | some x in hit_tools],
			),
		),
	),
} if {
	scope := object.get(c, "scope", {})
	paths := object.get(scope, "paths", [])
	langs := object.get(scope, "languages", [])
	fields := object.get(scope, "fields", [])
	field_fit := field_part(fields, object.get(c, "field", ""))
	parts := [path_part(paths), language_part(langs), field_fit]
	located := parts[0].points + parts[1].points
	misses := count([1 | some p in parts; p.miss])
	base := base_part((count(paths) + count(langs)) + count(fields), count([1 | some p in parts; p.hit]), misses, located)
	location := located + base.points
	trigger := object.get(c, "trigger", {})
	card_intents := object.get(trigger, "intents", [])
	card_tools := object.get(trigger, "tool_needs", [])
	hit_intents := sort({x | some x in card_intents; x in intents})
	hit_tools := sort({x | some x in card_tools; x in tools})
	text := concat(" ", array.concat([object.get(c, "statement", "")], array.concat(card_intents, card_tools)))
	shared := sort(query_terms & terms(text))
}

query_points(shared) := 15 if {
	count(shared) >= 2
} else := 10 if {
	count(shared) == 1
} else := 0

query_why(shared) := [] if {
	count(shared) == 0
} else := [sprintf("the query shares %s with the card", [concat(", ", shared)])]

# A part is what one dimension adds: points, whether it excludes the card
# (miss), whether the request confirmed a scope (hit), and its why lines.
neutral := {"points": 0, "miss": false, "hit": false, "why": []}

# path: `**` crosses directories, `*` does not (glob.match with "/" as the
# delimiter), and a leading `**/` or a `/**/` matches zero or more
# directories as in .gitignore (see gitglob). The first matching glob, in
# the card's order, is named.
path_part(paths) := neutral if {
	count(paths) == 0
} else := {"points": 5, "miss": false, "hit": false, "why": [sprintf("path-scoped to %s; the request names no file, so it could apply", [concat(", ", paths)])]} if {
	file == ""
} else := {"points": 15, "miss": false, "hit": true, "why": [sprintf("path %s matches %s", [file, hits[0]])]} if {
	hits := [p | some p in paths; glob.match(gitglob(p), ["/"], file)]
	count(hits) > 0
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
} else := {"points": 5, "miss": false, "hit": false, "why": [sprintf("language-scoped to %s; the request names no language, so it could apply", [concat(", ", langs)])]} if {
	language == ""
} else := {"points": 8, "miss": false, "hit": true, "why": [sprintf("language %s is one of %s", [language, concat(", ", langs)])]} if {
	some l in langs
	lower(l) == language
} else := {"points": 0, "miss": true, "hit": false, "why": [sprintf("language %s is not one of %s", [language, concat(", ", langs)])]}

# field: the card's scope fields must contain the request's field; a card
# without scope fields earns the same points when its own field matches (a
# bonus, not a scope: it does not confirm the card).
field_part(fields, own) := neutral if {
	count(fields) == 0
	field == ""
} else := {"points": 5, "miss": false, "hit": false, "why": [sprintf("field-scoped to %s; the request names no field, so it could apply", [concat(", ", fields)])]} if {
	field == ""
} else := {"points": 7, "miss": false, "hit": false, "why": [sprintf("card field %s matches the request", [field])]} if {
	count(fields) == 0
	own == field
} else := neutral if {
	count(fields) == 0
} else := {"points": 7, "miss": false, "hit": true, "why": [sprintf("field %s is one of the scope fields %s", [field, concat(", ", fields)])]} if {
	field in fields
} else := {"points": 0, "miss": true, "hit": false, "why": [sprintf("field %s is not one of the scope fields %s", [field, concat(", ", fields)])]}

# base_part lifts the location of an unscoped card, and of a scoped card the
# request confirmed (a scope matched, none missed), to 20.
base_part(scopes, hits, misses, located) := {"points": 20, "why": ["unscoped: applies everywhere at its anchor"]} if {
	scopes == 0
} else := {"points": 20 - located, "why": ["the request matches its scope, so it ranks no lower than an unscoped card"]} if {
	hits > 0
	misses == 0
	located < 20
} else := {"points": 0, "why": []}
