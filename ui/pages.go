package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/palacehq/palace/host"
	"github.com/palacehq/palace/host/audit"
	"github.com/palacehq/palace/host/mail"
	"github.com/palacehq/palace/host/pack"
	"github.com/palacehq/palace/host/teamsync"
	"github.com/palacehq/palace/mailbox"
)

// queuePage is how many candidates the review queue shows at a time.
const queuePage = 20

// pager links the pages of a list.
type pager struct {
	Page, Pages int
	Prev, Next  string
}

// newPager pages total items n at a time on the page the request asks for,
// linking to r's address with another page number.
func newPager(r *http.Request, page, n, total int) pager {
	p := pager{Page: page, Pages: max(1, (total+n-1)/n)}
	link := func(k int) string {
		q := r.URL.Query()
		q.Del("flash")
		q.Set("page", strconv.Itoa(k))
		return r.URL.Path + "?" + q.Encode()
	}
	p.Prev, p.Next = link(page-1), link(page+1)
	return p
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	page := pageNumber(r)
	order := cmp.Or(r.URL.Query().Get("order"), host.ReviewNewest)
	q, err := s.h.ReviewQueue(r.Context(), host.ReviewRequest{Order: order, Offset: (page - 1) * queuePage, Limit: queuePage})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "queue", "Review queue", "queue", struct {
		Page  host.ReviewPage
		Pager pager
	}{q, newPager(r, page, queuePage, q.Total)})
}

// attentionSection is one list of the Needs-attention page, rendered by its
// ID.
type attentionSection struct {
	ID, Title, Help string
	Count           int
	// Note says why a section could not be read, or is not shown here.
	Note      string
	Rows      []audit.Row
	Expiring  []host.CandidateRow
	Held      []teamsync.HeldCard
	Conflicts []conflictView
}

// conflictView is a sync conflict with the line diff of its two versions.
type conflictView struct {
	teamsync.SyncConflict
	Diff []diffLine
}

// auditKept is the audit the Needs-attention page read last, with the
// database version and the minute it was read at: the whole audit is over
// the page's target at 100k cards, and it changes with neither.
type auditKept struct {
	mu      sync.Mutex
	version int64
	minute  int64
	rep     host.AuditReport
}

// audit returns the audit of the visible anchors, read again when another
// connection committed or the minute turned since the last read.
func (s *Server) audit(ctx context.Context) (host.AuditReport, error) {
	version, err := s.live.probe.Version(ctx)
	if err != nil {
		return s.h.Audit(ctx, audit.Filter{})
	}
	minute := s.h.Now().Unix() / 60
	k := &s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.version == version && k.minute == minute && k.rep.Rows != nil {
		return k.rep, nil
	}
	rep, err := s.h.Audit(ctx, audit.Filter{})
	if err != nil {
		return rep, err
	}
	k.version, k.minute, k.rep = version, minute, rep
	return rep, nil
}

// attentionLimit bounds the audit findings one page lists.
const attentionLimit = 100

func (s *Server) attention(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rep, err := s.audit(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	contested := attentionSection{ID: "contested", Title: "Contested cards",
		Help: "Authoritative cards something contradicts: they stay out of the inline lanes until a human demotes them or resolves the contest with newer verification."}
	findings := attentionSection{ID: "findings", Title: "Audit findings",
		Help: "Warnings of `palace audit` on authoritative cards, with the repair each suggests."}
	for _, row := range rep.Rows {
		if row.Contest != nil {
			contested.Rows = append(contested.Rows, row)
			continue
		}
		if len(row.Warnings) > 0 {
			if findings.Count++; len(findings.Rows) < attentionLimit {
				findings.Rows = append(findings.Rows, row)
			}
		}
	}
	contested.Count = len(contested.Rows)
	if findings.Count > len(findings.Rows) {
		findings.Note = "The first " + strconv.Itoa(len(findings.Rows)) + " are shown; `palace audit --warning CODE` lists the rest by warning."
	}
	expiring := attentionSection{ID: "expiring", Title: "Expiring candidates",
		Help: "Candidates past their age limit or their expiry: `palace audit --apply-expiry` archives them."}
	if cands, err := s.h.Candidates(ctx, host.CandidateRequest{}); err != nil {
		expiring.Note = err.Error()
	} else {
		for _, c := range cands.Candidates {
			if c.Stale != "" {
				expiring.Expiring = append(expiring.Expiring, c)
			}
		}
		expiring.Count = len(expiring.Expiring)
	}
	held := attentionSection{ID: "held", Title: "Held back by sync",
		Help: "Card files that claimed promoted or canonical, imported as candidates because the gate refused them."}
	if hc, err := s.h.Team().HeldCards(ctx, s.h.Location().ChainIDs()); err != nil {
		held.Note = err.Error()
	} else {
		held.Held, held.Count = hc, len(hc)
	}
	conflicts := attentionSection{ID: "conflicts", Title: "Sync conflicts",
		Help: "Cards changed both in their file and in this palace since the last sync. `palace sync --resolve ID=file` takes the file, `ID=palace` this palace's card."}
	switch {
	case !s.h.Location().InGit:
		conflicts.Note = "Outside a git checkout there are no card files."
	case !s.human:
		conflicts.Note = "A sync is a person's step: conflicts are read in human mode."
	default:
		if rep, err := s.h.Sync(ctx, teamsync.SyncRequest{DryRun: true}); err != nil {
			conflicts.Note = err.Error()
		} else {
			for _, c := range rep.Conflicts {
				conflicts.Conflicts = append(conflicts.Conflicts, conflictView{SyncConflict: c, Diff: diffLines(c.Diff)})
			}
			conflicts.Count = len(conflicts.Conflicts)
		}
	}
	s.render(w, r, http.StatusOK, "attention", "Needs attention", "attention", struct {
		Sections []attentionSection
		Audited  int
	}{[]attentionSection{contested, expiring, findings, held, conflicts}, rep.Audited})
}

// inspectRequest is the pack inspector's form.
type inspectRequest struct {
	Query, File, Intents string
	Budget               int
	Candidates           bool
}

func (s *Server) inspect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in := inspectRequest{Query: q.Get("q"), File: q.Get("file"), Intents: q.Get("intents"), Candidates: q.Get("candidates") == "1"}
	in.Budget, _ = strconv.Atoi(q.Get("budget"))
	data := struct {
		In      inspectRequest
		Asked   bool
		Pack    *pack.Pack
		Default int
		Err     string
	}{In: in, Asked: q.Has("q") || q.Has("file"), Default: pack.DefaultBudget}
	if data.Asked {
		req := pack.ContextRequest{Query: in.Query, File: in.File, Budget: in.Budget, Explain: true, DryRun: true, IncludeCandidates: in.Candidates, Intents: split(in.Intents, ",")}
		p, err := s.h.Pack().Context(r.Context(), req)
		if err != nil {
			if host.KindOf(err) == host.KindInternal {
				s.fail(w, r, err)
				return
			}
			data.Err = err.Error()
		} else {
			data.Pack = &p
		}
	}
	s.render(w, r, http.StatusOK, "inspect", "Pack inspector", "inspect", data)
}

func (s *Server) card(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	d, err := s.h.CardDossier(r.Context(), id, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "card", d.Card.Statement, "", struct {
		D        host.CardDossier
		Chart    signalChart
		Packs    []packDay
		Changing bool
	}{d, newSignalChart(d.Signals, s.h.Now()), packDays(d), d.Card.Status != "retired"})
}

// mailboxPage is how many letters the mailbox lists at a time.
const mailboxPage = 50

func (s *Server) mailbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.h.Mail()
	sw, err := m.Sweep(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	check, checkErr := m.Check(ctx, mail.CheckRequest{})
	letters := slices.Clone(sw.Letters)
	slices.Reverse(letters) // newest first
	open := slices.DeleteFunc(slices.Clone(letters), func(e mailbox.Entry) bool { return !e.Fate.Open() })
	page := pageNumber(r)
	from := min(len(letters), (page-1)*mailboxPage)
	data := struct {
		Sweep    mailbox.SweepResult
		Open     []mailbox.Entry
		Letters  []mailbox.Entry
		Pager    pager
		Check    mail.CheckReport
		CheckErr string
	}{Sweep: sw, Open: open, Letters: letters[from:min(len(letters), from+mailboxPage)], Pager: newPager(r, page, mailboxPage, len(letters)), Check: check}
	if checkErr != nil {
		data.CheckErr = checkErr.Error()
	}
	s.render(w, r, http.StatusOK, "mailbox", "Mailbox", "mailbox", data)
}

// completeLimit bounds the path completions one request returns.
const completeLimit = 50

// complete answers the pack inspector's path completion: JSON, a list of
// worktree-relative paths.
func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	paths, err := s.h.CompletePath(r.URL.Query().Get("path"), completeLimit)
	if err != nil {
		s.log.Error("complete", "err", err)
		paths = []string{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(paths)
}

// returnTo is where a change redirects: the form's own page when it names
// one on this server, else the card's page.
func returnTo(r *http.Request, id string) string {
	ret := r.PostForm.Get("return")
	u, err := url.Parse(ret)
	if ret == "" || err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(ret, "/") || strings.HasPrefix(ret, "//") || strings.HasPrefix(ret, "/\\") {
		return "/card/" + url.PathEscape(id)
	}
	q := u.Query()
	q.Del("flash")
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// diffLine is one line of a conflict's diff: Op is ' ' (both), '-' (only
// in the file), '+' (only in this palace) or '@' (a hunk header).
type diffLine struct {
	Op   string
	Text string
}

// diffLines splits a sync conflict's unified diff into lines to render,
// leaving out the two file-name lines.
func diffLines(unified string) []diffLine {
	var out []diffLine
	for i, l := range strings.Split(strings.TrimSuffix(unified, "\n"), "\n") {
		if i < 2 && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) || l == "" {
			continue
		}
		out = append(out, diffLine{Op: l[:1], Text: l[1:]})
	}
	return out
}
