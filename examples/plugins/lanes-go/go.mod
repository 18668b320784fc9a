module github.com/palacehq/palace/examples/plugins/lanes-go

go 1.26.0

require (
	github.com/extism/go-pdk v1.1.3
	github.com/palacehq/palace/examples/plugins/pluginjson v0.0.0
)

replace github.com/palacehq/palace/examples/plugins/pluginjson => ../pluginjson
