package ui

import "github.com/palacehq/palace/host"

// ForgetAudit drops the audit the Needs-attention page keeps, as a commit
// of another connection does, so a benchmark measures the page's first
// load after a change.
func (s *Server) ForgetAudit() {
	s.kept.mu.Lock()
	s.kept.rep = host.AuditReport{}
	s.kept.mu.Unlock()
}
