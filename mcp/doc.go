// Package mcp is palace's Model Context Protocol server: the surface coding
// agents (Claude Code, Codex, Cursor, VS Code agents) reach palace through.
// `palace mcp` serves it over stdio with github.com/modelcontextprotocol/go-sdk.
//
// mcp owns the MCP side only: tool names, their JSON schemas and the
// descriptions a model reads, strict decoding of tool arguments, the mapping
// of host errors onto MCP results, mode segmentation of the tool list, and a
// stdio transport that survives malformed input. Every tool is a thin call
// into one host operation, so a tool gives the same answer as the CLI
// command of the same name.
//
// mcp must not touch the store (no SQL; it names store's value types that
// host's requests carry, never its functions), the policy engine (no Rego,
// no WASM) or the terminal: it calls host only, and it never writes
// anything but JSON-RPC to its output stream.
//
// # Modes
//
// The mode is the Host's, fixed when the server starts. In agent mode the
// human-only tools (promote, demote, retire, publish, audit_action) are not
// listed, and calling one anyway is a JSON-RPC error -32602 with the message
// `Tool "palace_promote" not available in agent mode`. The floors of the
// lifecycle are enforced by host, not here: leaving a tool out of the list
// is presentation, the host's refusal is the rule.
package mcp
