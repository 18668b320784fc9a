// Package lsp is palace's language server: `palace lsp` speaks LSP 3.18 over
// stdio (go.lsp.dev/protocol types, go.lsp.dev/jsonrpc2 transport) so an
// editor shows governed knowledge next to the code it applies to.
//
// It owns the JSON-RPC session and everything editor-shaped: the document
// buffers and their UTF-16 positions, the client's settings and
// capabilities, per-document caches, debounced diagnostics, the file
// watcher on .palace/ and the poll of the database's data_version that
// makes changes by other processes (CLI, MCP) visible without a restart.
//
// It is a thin adapter over host: every answer comes from the same host
// call the CLI makes, so editor and terminal agree. lsp must not speak SQL
// (store's), evaluate Rego or WASM (policies'), or decide a lifecycle rule
// (host's); it renders what host answers. It never writes to stdout except
// JSON-RPC frames. Every request runs under recover: a panic becomes an
// InternalError response and a window/logMessage, never a dead server.
package lsp
