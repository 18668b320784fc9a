package pack

import (
	"slices"
	"strings"
	"sync"
)

// thesaurus groups, a line each, words engineers use for one thing: a query
// term brings its group's other words in at relWSynonym ("localize" meets
// i18n). General software vocabulary only, no project's names.
var thesaurus = `
localize localise localization localisation translate translation i18n l10n locale
test tests spec specs unittest testcase
dependency dependencies deps vendor vendored package packages module modules library
bump upgrade update pin pinned version versions
commit push pushed upstream branch
pr pull request review merge
lint linter format formatter formatting style prettier rustfmt gofmt black
doc docs documentation docstring docstrings readme
error errors exception exceptions panic panics unwrap expect raise throw
log logs logging logger
perf performance optimize optimise fast faster speed slow allocation allocations alloc benchmark benchmarks
build builds compile compiles compiler rebuild typecheck
release releases changelog
flag flags option options argument arguments cli
config configuration settings setting
async await concurrency concurrent thread threads goroutine
import imports require requires include includes
secret secrets credential credentials token tokens password passwords apikey
delete remove removal deprecate deprecated deprecation
generate generated generator codegen
migration migrations schema
listener listeners handler handlers callback callbacks subscription subscribe dispose disposable
endpoint endpoints route routes api
mock mocks mocked fake fakes stub stubs fixture fixtures
type types typing annotation annotations
ci pipeline workflow workflows check checks
comment comments
rename refactor restructure reorganize
cache caching memoize
database db sql query queries
security vulnerability vulnerable sanitize escape injection
crash crashes segfault
`

// synonyms maps a stem to the stems of its groups' other words, built on
// first use so a process that never ranks cards never stems the thesaurus.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(thesaurus, "\n") {
		var group []string
		for _, w := range strings.Fields(line) {
			if st := stem(w); !slices.Contains(group, st) {
				group = append(group, st)
			}
		}
		for _, a := range group {
			for _, b := range group {
				if a != b && !slices.Contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
})
