// Package ui is `palace ui`: the reviewer's desk, a local web page served
// by the palace binary. It shows the candidate queue with the gate's
// answer, what needs attention (contested cards, audit findings, expiring
// candidates, cards held back by sync, sync conflicts), a pack inspector,
// card pages and the mailbox, and follows changes other processes make.
//
// ui is a surface beside lsp and mcp: every read and every change goes
// through host's exported methods, so the desk decides nothing itself — a
// promote from the browser is the same Promote, through the same gate and
// floors, as `palace promote`. It must not import store or policies
// (internal/archtest enforces it), and it renders only: pages are
// server-side html/template with embedded assets and a little JavaScript.
//
// A browser is an attack surface, so the server trusts nothing it is
// sent: it answers only requests that carry the session (a random token
// in the printed URL, then an HttpOnly SameSite=Strict cookie), whose Host
// names the server and whose Origin, when present, is the server's own
// (no DNS rebinding, no cross-site requests); every change is a POST with
// a CSRF token; every page carries a strict Content-Security-Policy; card
// text is escaped wherever it is shown. In agent mode every page is
// read-only and every POST is refused.
package ui
