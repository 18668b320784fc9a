module github.com/palacehq/palace/examples/plugins/gate-go

go 1.26.0

require github.com/extism/go-pdk v1.1.3
