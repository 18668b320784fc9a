// Package research ingests research reports as evidence: the report format,
// finding ids, the ingest plan and its batched write, distill suggestions,
// and the research floor at a dao card's gate (Floor). It writes only
// evidence rows and their anchors, never cards; host imports it.
package research

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/palacehq/palace/anchor"
	"github.com/palacehq/palace/domain"
	"github.com/palacehq/palace/host/cardview"
	"github.com/palacehq/palace/host/jobenv"
	"github.com/palacehq/palace/internal/hosterr"
	"github.com/palacehq/palace/internal/lazyregexp"
	"github.com/palacehq/palace/internal/limits"
	"github.com/palacehq/palace/internal/neardup"
	"github.com/palacehq/palace/policies"
	"github.com/palacehq/palace/store"
)

// MaxReportBytes bounds a research report.
const MaxReportBytes = 8 << 20

// Config is what research needs of the palace it ingests into. Every
// field is required.
type Config struct {
	jobenv.Env
	// PrepareEvidence checks one finding as `palace record` checks evidence
	// and returns its row; KindInvalid names the field at fault.
	PrepareEvidence func(f Finding, k domain.AnchorKind) (domain.Evidence, error)
	// ResolveAnchorKind validates a requested anchor kind ("" = innermost).
	ResolveAnchorKind func(field, s string) (domain.AnchorKind, error)
	// EnsureAnchor writes the anchor of kind k and its parents in tx.
	EnsureAnchor func(ctx context.Context, tx *store.Tx, k domain.AnchorKind) (store.Anchor, error)
	// BatchSize is how many rows one transaction writes.
	BatchSize int
}

// Finding is one finding as evidence to record, provenance research.
type Finding struct {
	Content, Field, Domain, SourceRef string
	Tags                              []string
}

// Ingester validates, plans and ingests reports for one palace.
type Ingester struct{ cfg Config }

func New(cfg Config) *Ingester { return &Ingester{cfg: cfg} }

// Request asks to validate, plan or ingest a report.
type Request struct {
	// Report is the report's JSON.
	Report []byte `json:"-"`
	// Name names the report in messages (its file).
	Name string `json:"name,omitempty"`
	// Action is validate, plan (a dry run of ingest) or ingest.
	Action string `json:"action"`
	// Anchor is repo (the default), worktree or global; global only for a
	// report whose about is general.
	Anchor string `json:"anchor,omitempty"`
}

// Plan is what an ingest writes, would write, or wrote.
type Plan struct {
	ReportID string `json:"report_id"`
	Title    string `json:"title"`
	About    string `json:"about"`
	Action   string `json:"action"`
	DryRun   bool   `json:"dry_run"`
	Anchor   string `json:"anchor"`
	Sources  int    `json:"sources"`
	Findings int    `json:"findings"`
	// Evidence is one planned row per finding, in report order.
	Evidence []PlannedEvidence `json:"evidence"`
	// New counts the rows not yet in the palace; Written those written now,
	// Duplicates those that repeat evidence at the anchor.
	New        int `json:"new"`
	Written    int `json:"written"`
	Duplicates int `json:"duplicates"`
	// Suggestions are the report's candidate insights as distill commands
	// citing the planned evidence; nothing distills them automatically.
	Suggestions []Suggestion      `json:"suggestions"`
	Policy      policies.Decision `json:"policy"`
	Message     string            `json:"message"`
}

// PlannedEvidence is one finding's evidence row.
type PlannedEvidence struct {
	ID        string `json:"id"`
	FindingID string `json:"finding_id"`
	Field     string `json:"field"`
	SourceRef string `json:"source_ref"`
	// Exists is true when a previous ingest wrote it.
	Exists bool `json:"exists"`
	// DuplicateOf is the original evidence this finding repeats at the
	// anchor (it counts as that original).
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// Suggestion is a candidate insight as a distill suggestion.
type Suggestion struct {
	Statement  string      `json:"statement"`
	Tier       domain.Tier `json:"tier"`
	Field      string      `json:"field"`
	Supporting []string    `json:"supporting"`
	Command    string      `json:"command"`
	// Note says what research cannot supply for the tier, when anything.
	Note string `json:"note,omitempty"`
	// NearDuplicates are the live cards at the anchor the suggestion nearly
	// repeats (filled by the host).
	NearDuplicates []neardup.Card `json:"near_duplicates,omitempty"`
}

// report is a validated report.
type report struct {
	id, title, about, field string
	sources                 map[string]reportSource
	nSources                int
	findings                []reportFinding
	insights                []reportInsight
}

type reportSource struct{ ref, title string }

type reportFinding struct {
	id, content, source, field, domain string
	tags                               []string
}

type reportInsight struct {
	statement, content, tier, field string
	findings                        []string
}

var reportIDPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

// Research validates, plans or ingests a report in batches of BatchSize. Bad
// input is KindInvalid naming the JSON path and writes nothing; a write
// palace.research refuses is KindMode.
func (ig *Ingester) Research(ctx context.Context, req Request) (Plan, error) {
	switch req.Action {
	case "validate", "plan", "ingest":
	default:
		return Plan{}, hosterr.Invalid("action", "action %q is not valid: use validate, plan or ingest", req.Action)
	}
	name := cmp.Or(req.Name, "report")
	if len(req.Report) > MaxReportBytes {
		return Plan{}, hosterr.Invalid("report", "%s is %d bytes, over the %d MiB limit of a research report: split it into several reports", name, len(req.Report), MaxReportBytes>>20)
	}
	r, err := parseReport(req.Report)
	if err != nil {
		var he *hosterr.Error
		if errors.As(err, &he) {
			he.Msg = name + ": " + he.Msg
		}
		return Plan{}, err
	}
	kind, err := ig.researchAnchor(req.Anchor, r)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{ReportID: r.id, Title: r.title, About: r.about, Action: req.Action, DryRun: req.Action != "ingest",
		Anchor: string(kind), Sources: r.nSources, Findings: len(r.findings), Evidence: make([]PlannedEvidence, len(r.findings)), Suggestions: []Suggestion{}}
	anchorID := anchor.ID(ig.cfg.Loc.Identity(kind))
	rows := make([]domain.Evidence, len(r.findings))
	for i, f := range r.findings {
		ev, err := ig.cfg.PrepareEvidence(Finding{Content: f.content, Field: f.field, Domain: f.domain, SourceRef: f.source, Tags: f.tags}, kind)
		if err != nil {
			var he *hosterr.Error
			if errors.As(err, &he) {
				he.Msg = fmt.Sprintf("%s: findings[%d].%s: %s", name, i, researchField(he.Field), he.Msg)
			}
			return Plan{}, err
		}
		ev.ID = researchEvidenceID(anchorID, r.id, f.id)
		rows[i] = ev
		plan.Evidence[i] = PlannedEvidence{ID: ev.ID, FindingID: f.id, Field: ev.Field, SourceRef: ev.SourceRef}
	}
	have, err := ig.cfg.Store.EvidenceHashes(ctx, evidenceIDs(rows))
	if err != nil {
		return Plan{}, hosterr.Internal(err, "plan research ingest")
	}
	var newRows []int
	for i, ev := range rows {
		sum, ok := have[ev.ID]
		switch {
		case !ok:
			newRows = append(newRows, i)
		case sum != ev.ContentSHA256:
			return Plan{}, hosterr.Invalid("report", "%s: findings[%d].content: finding %q of report %q was ingested before (%s) with other content: evidence is never edited, so give the changed finding a new id", name, i, r.findings[i].id, r.id, ev.ID)
		default:
			plan.Evidence[i].Exists = true
		}
	}
	plan.New = len(newRows)
	// Key order: each batch then writes neighbouring index entries. The
	// row numbers are sorted, not the rows (a row is a few hundred bytes).
	slices.SortFunc(newRows, func(x, y int) int { return strings.Compare(rows[x].ID, rows[y].ID) })
	fresh := make([]domain.Evidence, len(newRows))
	planned := map[string]int{}
	first := map[string]string{}
	for i, j := range newRows {
		fresh[i] = rows[j]
		planned[rows[j].ID] = j
		// The report's own repeats, in the order they are written.
		if orig, ok := first[rows[j].ContentSHA256]; ok {
			plan.Evidence[j].DuplicateOf = orig
		} else {
			first[rows[j].ContentSHA256] = rows[j].ID
		}
	}
	plan.Suggestions = researchSuggestions(r, plan.Evidence)
	set, err := ig.cfg.Policies(ctx)
	if err != nil {
		return plan, hosterr.Internal(err, "load policies for palace.research")
	}
	out, d := set.Research(ctx, policies.ResearchInput{Action: req.Action, DryRun: plan.DryRun, Mode: ig.cfg.Mode, Actor: ig.cfg.Actor,
		Anchor: string(kind), Report: policies.ResearchReport{ReportID: r.id, Title: r.title, Findings: len(r.findings), Sources: r.nSources, Insights: len(r.insights)}})
	plan.Policy = d
	if !out.Allow {
		return plan, &hosterr.Error{Kind: hosterr.KindMode, Field: "action", Msg: fmt.Sprintf("palace.research refused to %s report %s", req.Action, r.id), Reasons: out.Reasons}
	}
	if plan.DryRun {
		plan.Message = fmt.Sprintf("%s: %d findings valid; an ingest would write %d evidence rows (%d already ingested)", r.id, len(r.findings), plan.New, len(r.findings)-plan.New)
		if n := len(newRows) - len(first); n > 0 {
			plan.Message += fmt.Sprintf("; %d of them repeated another finding's content and would count as it", n)
		}
		return plan, nil
	}
	if len(fresh) == 0 {
		plan.Message = fmt.Sprintf("%s: nothing to write, all %d findings were ingested before (0 rows written)", r.id, len(r.findings))
		return plan, nil
	}
	for start := 0; start < len(fresh); start += ig.cfg.BatchSize {
		batch := fresh[start:min(start+ig.cfg.BatchSize, len(fresh))]
		var dups []store.Duplicate
		err := ig.cfg.Store.Tx(ctx, func(tx *store.Tx) error {
			a, err := ig.cfg.EnsureAnchor(ctx, tx, kind)
			if err != nil {
				return err
			}
			// The originals of the batch's contents at the anchor, kept
			// current across batches.
			shas := make([]string, len(batch))
			for i := range batch {
				batch[i].AnchorID = a.ID
				shas[i] = batch[i].ContentSHA256
			}
			originals, err := tx.OriginalsByHash(ctx, shas)
			if err != nil {
				return err
			}
			dups = dups[:0]
			for _, ev := range batch {
				key := a.ID + "|" + ev.ContentSHA256
				if orig, ok := originals[key]; ok {
					dups = append(dups, store.Duplicate{EvidenceID: ev.ID, Original: orig, Cause: store.DuplicateAllowed, CreatedAt: ev.CreatedAt})
					continue
				}
				originals[key] = ev.ID
			}
			if err := tx.InsertEvidenceRows(ctx, batch); err != nil {
				return err
			}
			return tx.MarkDuplicates(ctx, dups)
		})
		if err != nil {
			return plan, hosterr.Internal(err, "ingest %s: rows %d–%d rolled back, %d rows committed before them (ingest again: written rows are skipped)", r.id, start+1, start+len(batch), plan.Written)
		}
		plan.Written += len(batch)
		for _, d := range dups {
			plan.Evidence[planned[d.EvidenceID]].DuplicateOf = d.Original
		}
		plan.Duplicates += len(dups)
	}
	plan.Message = fmt.Sprintf("%s: wrote %d evidence rows (%d already ingested)", r.id, plan.Written, len(r.findings)-plan.Written)
	if plan.Duplicates > 0 {
		plan.Message += fmt.Sprintf("; %d of them repeated evidence on record here: each counts as its original", plan.Duplicates)
	}
	return plan, nil
}

// researchAnchor resolves where a report's evidence lands: the repo anchor
// by default, global only when asked and the report is not about a project.
func (ig *Ingester) researchAnchor(s string, r report) (domain.AnchorKind, error) {
	if s == "" {
		if !ig.cfg.Loc.InGit {
			if r.about == "project" {
				return "", hosterr.Invalid("anchor", "report %s is about a project and %s is not inside a git checkout: run it in the project (--cwd), or set \"about\": \"general\" and pass --anchor global", r.id, ig.cfg.Loc.Dir)
			}
			return domain.AnchorGlobal, nil
		}
		s = string(domain.AnchorRepo)
	}
	k, err := ig.cfg.ResolveAnchorKind("anchor", s)
	if err != nil {
		return "", err
	}
	if k == domain.AnchorGlobal && r.about == "project" {
		return "", hosterr.Invalid("anchor", "about: report %s is about a project (about defaults to project), so its evidence stays at the repo anchor: ingest it without --anchor global, or set \"about\": \"general\" if it holds everywhere", r.id)
	}
	return k, nil
}

// researchField maps a RecordRequest field to the finding's JSON key.
func researchField(f string) string {
	switch f {
	case "source_ref":
		return "source"
	case "":
		return "content"
	}
	return f
}

func evidenceIDs(rows []domain.Evidence) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// researchEvidenceID is the stable evidence id of a report's finding at an
// anchor: the evidence prefix, 10 base32 digits from a hash of anchor and
// report (one ingest writes one index region), 16 from a hash of all three.
func researchEvidenceID(anchorID, reportID, findingID string) string {
	report := sha256.Sum256([]byte("palace research report\x00" + anchorID + "\x00" + reportID))
	finding := sha256.Sum256([]byte("palace research\x00" + anchorID + "\x00" + reportID + "\x00" + findingID))
	var out [26]byte
	base32Digits(out[:10], report[:])
	base32Digits(out[10:], finding[:])
	return store.EvidencePrefix + string(out[:])
}

// base32Digits fills out with Crockford base32 digits of the bits of sum.
func base32Digits(out, sum []byte) {
	const crockford = "0123456789abcdefghjkmnpqrstvwxyz"
	var acc uint64
	bits, j := 0, 0
	for _, b := range sum {
		acc = acc<<8 | uint64(b)
		bits += 8
		for bits >= 5 && j < len(out) {
			out[j] = crockford[(acc>>(bits-5))&31]
			bits -= 5
			j++
		}
		if j == len(out) {
			return
		}
	}
}

// researchSuggestions turns candidate insights into distill suggestions.
func researchSuggestions(r report, planned []PlannedEvidence) []Suggestion {
	idOf := map[string]string{}
	for _, p := range planned {
		idOf[p.FindingID] = p.ID
	}
	out := []Suggestion{}
	for _, in := range r.insights {
		s := Suggestion{Statement: in.statement, Tier: domain.Tier(in.tier), Field: in.field, Supporting: []string{}}
		for _, f := range in.findings {
			s.Supporting = append(s.Supporting, idOf[f])
		}
		s.Command = fmt.Sprintf("palace distill --statement %s --tier %s --field %s --supporting %s", cardview.ShellWord(s.Statement), s.Tier, cardview.ShellWord(s.Field), strings.Join(s.Supporting, ","))
		if in.content != "" {
			s.Command += " --content " + cardview.ShellWord(in.content)
		}
		if strings.HasPrefix(string(s.Tier), "dao") {
			s.Note = "research alone cannot make a dao card authoritative: its gate needs verification or teaching recorded by a person or at run time"
		}
		out = append(out, s)
	}
	return out
}

// parseReport decodes and validates a report. Errors are KindInvalid and
// name the JSON path at fault.
func parseReport(b []byte) (report, error) {
	var r report
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return r, hosterr.Invalid("report", "not valid JSON: %v", err)
	}
	if dec.More() {
		return r, hosterr.Invalid("report", "more than one JSON value: a report is one object")
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return r, hosterr.Invalid("report", "$: a report is a JSON object with report_id, title, sources and findings")
	}
	var err error
	if r.id, err = reqString(top, "report_id", "report_id", 128); err != nil {
		return r, err
	}
	if !reportIDPattern.MatchString(r.id) {
		return r, hosterr.Invalid("report", "report_id: %q is not an id: use letters, digits and . _ : / - (at most 128, starting with a letter or digit)", r.id)
	}
	if r.title, err = reqString(top, "title", "title", 1000); err != nil {
		return r, err
	}
	if r.about, err = optString(top, "about", "about", 32); err != nil {
		return r, err
	}
	switch r.about {
	case "":
		r.about = "project"
	case "project", "general":
	default:
		return r, hosterr.Invalid("report", "about: %q is not valid: use project (the default) or general", r.about)
	}
	if r.field, err = optString(top, "field", "field", limits.FieldBytes); err != nil {
		return r, err
	}
	srcs, err := optArray(top, "sources", "sources")
	if err != nil {
		return r, err
	}
	r.sources = map[string]reportSource{}
	r.nSources = len(srcs)
	firstSource := map[string]int{}
	for i, x := range srcs {
		p := fmt.Sprintf("sources[%d]", i)
		o, ok := x.(map[string]any)
		if !ok {
			return r, hosterr.Invalid("report", "%s: a source is an object {id, url, title}", p)
		}
		id, err := reqString(o, "id", p+".id", 128)
		if err != nil {
			return r, err
		}
		if j, dup := firstSource[id]; dup {
			return r, hosterr.Invalid("report", "%s.id: duplicate id %q (first at sources[%d]): give each source its own id", p, id, j)
		}
		firstSource[id] = i
		ref, err := optString(o, "url", p+".url", limits.SourceRefBytes)
		if err != nil {
			return r, err
		}
		key := ".url"
		if ref == "" {
			if ref, err = optString(o, "path", p+".path", limits.SourceRefBytes); err != nil {
				return r, err
			}
			key = ".path"
		}
		if ref == "" {
			return r, hosterr.Invalid("report", "%s.url: missing: every source needs a url (or a path) a person can open", p)
		}
		if !isURLOrPath(ref) {
			return r, hosterr.Invalid("report", "%s%s: %q is not a URL or a path: name where the source can be read (https://…, docs/x.md)", p, key, ref)
		}
		title, err := optString(o, "title", p+".title", 1000)
		if err != nil {
			return r, err
		}
		r.sources[id] = reportSource{ref: ref, title: title}
	}
	fs, err := optArray(top, "findings", "findings")
	if err != nil {
		return r, err
	}
	if len(fs) == 0 {
		return r, hosterr.Invalid("report", "findings: missing or empty: a report brings at least one finding")
	}
	firstFinding := map[string]int{}
	for i, x := range fs {
		p := fmt.Sprintf("findings[%d]", i)
		o, ok := x.(map[string]any)
		if !ok {
			return r, hosterr.Invalid("report", "%s: a finding is an object {id, content, source}", p)
		}
		var f reportFinding
		if f.id, err = reqString(o, "id", p+".id", 128); err != nil {
			return r, err
		}
		if j, dup := firstFinding[f.id]; dup {
			return r, hosterr.Invalid("report", "%s.id: duplicate id %q (first at findings[%d]): finding ids make the evidence ids, so each must be unique", p, f.id, j)
		}
		firstFinding[f.id] = i
		if f.content, err = reqString(o, "content", p+".content", limits.ContentBytes); err != nil {
			return r, err
		}
		src, err := optString(o, "source", p+".source", limits.SourceRefBytes)
		if err != nil {
			return r, err
		}
		switch s, known := r.sources[src]; {
		case src == "":
			return r, hosterr.Invalid("report", "%s.source: missing: name a source id from sources[] or a URL, so the finding can be checked", p)
		case known:
			f.source = s.ref
		case isURLOrPath(src) && strings.ContainsAny(src, "/."):
			f.source = src
		default:
			return r, hosterr.Invalid("report", "%s.source: %q is neither a source id from sources[] nor a URL or path", p, src)
		}
		if f.field, err = optString(o, "field", p+".field", limits.FieldBytes); err != nil {
			return r, err
		}
		f.field = cmp.Or(f.field, r.field)
		if f.domain, err = optString(o, "domain", p+".domain", limits.DomainBytes); err != nil {
			return r, err
		}
		tags, err := optArray(o, "tags", p+".tags")
		if err != nil {
			return r, err
		}
		for j, t := range tags {
			s, ok := t.(string)
			if !ok {
				return r, hosterr.Invalid("report", "%s.tags[%d]: a tag is a string", p, j)
			}
			f.tags = append(f.tags, s)
		}
		f.tags = append(f.tags, "research", "report:"+truncateBytes(r.id, limits.TagBytes-len("report:")))
		r.findings = append(r.findings, f)
	}
	ins, err := optArray(top, "candidate_insights", "candidate_insights")
	if err != nil {
		return r, err
	}
	for i, x := range ins {
		p := fmt.Sprintf("candidate_insights[%d]", i)
		o, ok := x.(map[string]any)
		if !ok {
			return r, hosterr.Invalid("report", "%s: an insight is an object {statement, tier, field, findings}", p)
		}
		var in reportInsight
		if in.statement, err = reqString(o, "statement", p+".statement", 4000); err != nil {
			return r, err
		}
		if n := utf8.RuneCountInString(in.statement); n > 280 {
			return r, hosterr.Invalid("report", "%s.statement: %d characters, over the 280 of a card's statement: shorten it", p, n)
		}
		if in.content, err = optString(o, "content", p+".content", limits.ContentBytes); err != nil {
			return r, err
		}
		if in.tier, err = optString(o, "tier", p+".tier", 32); err != nil {
			return r, err
		}
		in.tier = cmp.Or(in.tier, "shu")
		if !domain.Tier(in.tier).Valid() {
			return r, hosterr.Invalid("report", "%s.tier: %q is not a tier: use %s", p, in.tier, strings.Join(domain.Strings(domain.Tiers), ", "))
		}
		if in.field, err = optString(o, "field", p+".field", limits.FieldBytes); err != nil {
			return r, err
		}
		refs, err := optArray(o, "findings", p+".findings")
		if err != nil {
			return r, err
		}
		if len(refs) == 0 {
			return r, hosterr.Invalid("report", "%s.findings: missing: an insight cites the finding ids it rests on", p)
		}
		for j, x := range refs {
			s, ok := x.(string)
			if _, known := firstFinding[s]; !ok || !known {
				return r, hosterr.Invalid("report", "%s.findings[%d]: %v is not the id of a finding of this report", p, j, x)
			}
			in.findings = append(in.findings, s)
		}
		// The insight's field defaults to that of the first finding it cites.
		in.field = cmp.Or(in.field, r.findings[firstFinding[in.findings[0]]].field, "general")
		r.insights = append(r.insights, in)
	}
	return r, nil
}

func reqString(o map[string]any, key, path string, limit int) (string, error) {
	s, err := optString(o, key, path, limit)
	if err == nil && s == "" {
		return "", hosterr.Invalid("report", "%s: missing: it is required", path)
	}
	return s, err
}

func optString(o map[string]any, key, path string, limit int) (string, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", hosterr.Invalid("report", "%s: must be a string", path)
	}
	s = strings.TrimSpace(s)
	if len(s) > limit {
		return "", hosterr.Invalid("report", "%s: %d bytes, over the limit of %d", path, len(s), limit)
	}
	return s, nil
}

func optArray(o map[string]any, key, path string) ([]any, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, hosterr.Invalid("report", "%s: must be an array", path)
	}
	return a, nil
}

// isURLOrPath accepts an absolute URL with a scheme and a host (or a file:
// URL) and a path: text without spaces or control characters.
func isURLOrPath(s string) bool {
	if strings.Contains(s, "://") || strings.HasPrefix(s, "file:") {
		u, err := url.Parse(s)
		return err == nil && u.Scheme != "" && (u.Host != "" || u.Scheme == "file" && u.Path != "")
	}
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) < 0
}

func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
