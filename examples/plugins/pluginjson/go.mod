module github.com/palacehq/palace/examples/plugins/pluginjson

go 1.26.0
