package store

// migrations are forward-only: migrations[i] moves a database from schema
// version i to i+1, inside the transaction that sets user_version. A released
// entry is never edited. Later entries assume only what they name (IF NOT
// EXISTS, OR REPLACE), so they hold whatever number they get.
var migrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE anchors (
	id         TEXT PRIMARY KEY,
	kind       TEXT NOT NULL CHECK (kind IN ('global','repo','worktree')),
	parent_id  TEXT REFERENCES anchors(id),
	path       TEXT NOT NULL DEFAULT '',
	identity   TEXT NOT NULL UNIQUE,
	created_at TEXT NOT NULL,
	CHECK ((kind = 'global') = (parent_id IS NULL))
);

CREATE TABLE evidence (
	id             TEXT PRIMARY KEY,
	content        TEXT NOT NULL CHECK (length(content) > 0),
	domain         TEXT NOT NULL CHECK (domain IN ('project','agent','skill','global')),
	field          TEXT NOT NULL DEFAULT 'general' CHECK (length(field) > 0),
	provenance     TEXT NOT NULL CHECK (provenance IN ('runtime','research','human')),
	source_ref     TEXT NOT NULL DEFAULT '',
	tags           TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
	anchor_id      TEXT NOT NULL REFERENCES anchors(id),
	content_sha256 TEXT NOT NULL,
	actor          TEXT NOT NULL,
	actor_type     TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	created_at     TEXT NOT NULL
);
CREATE INDEX evidence_anchor_field ON evidence(anchor_id, field);
CREATE INDEX evidence_field ON evidence(field);

-- Evidence is append-only: the database itself refuses to change it.
CREATE TRIGGER evidence_no_update BEFORE UPDATE ON evidence
BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;
CREATE TRIGGER evidence_no_delete BEFORE DELETE ON evidence
BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;

CREATE VIRTUAL TABLE evidence_fts USING fts5(
	content, content='evidence', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER evidence_fts_insert AFTER INSERT ON evidence
BEGIN INSERT INTO evidence_fts(rowid, content) VALUES (new.rowid, new.content); END;

CREATE TABLE cards (
	id             TEXT PRIMARY KEY,
	statement      TEXT NOT NULL CHECK (length(statement) BETWEEN 1 AND 280),
	statement_norm TEXT NOT NULL,
	content        TEXT NOT NULL DEFAULT '',
	tier           TEXT NOT NULL CHECK (tier IN ('dao_tian','dao_ren','shu','qi')),
	status         TEXT NOT NULL CHECK (status IN ('candidate','promoted','canonical','demoted','retired')),
	domain         TEXT NOT NULL CHECK (domain IN ('project','agent','skill','global')),
	field          TEXT NOT NULL DEFAULT 'general' CHECK (length(field) > 0),
	anchor_id      TEXT NOT NULL REFERENCES anchors(id),
	scope          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(scope)),
	trigger        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(trigger)),
	persistence    TEXT NOT NULL DEFAULT 'standard' CHECK (persistence IN ('standard','protected','foundational')),
	render_pref    TEXT NOT NULL DEFAULT 'auto' CHECK (render_pref IN ('auto','inline_full','inline_compact','ref_preferred')),
	review_after   TEXT,
	expires_at     TEXT,
	origin_card    TEXT REFERENCES cards(id),
	published_to   TEXT REFERENCES cards(id),
	created_by     TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
);
CREATE INDEX cards_tier_status ON cards(tier, status);
CREATE INDEX cards_anchor_status ON cards(anchor_id, status);
CREATE INDEX cards_domain_field ON cards(domain, field);
CREATE INDEX cards_anchor_norm ON cards(anchor_id, statement_norm);

CREATE VIRTUAL TABLE cards_fts USING fts5(
	statement, content, content='cards', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER cards_fts_insert AFTER INSERT ON cards
BEGIN INSERT INTO cards_fts(rowid, statement, content) VALUES (new.rowid, new.statement, new.content); END;
CREATE TRIGGER cards_fts_update AFTER UPDATE OF statement, content ON cards
BEGIN
	INSERT INTO cards_fts(cards_fts, rowid, statement, content) VALUES ('delete', old.rowid, old.statement, old.content);
	INSERT INTO cards_fts(rowid, statement, content) VALUES (new.rowid, new.statement, new.content);
END;
CREATE TRIGGER cards_no_delete BEFORE DELETE ON cards
BEGIN SELECT RAISE(ABORT, 'cards are retired, never deleted'); END;

CREATE TABLE card_links (
	card_id     TEXT NOT NULL REFERENCES cards(id),
	evidence_id TEXT NOT NULL REFERENCES evidence(id),
	role        TEXT NOT NULL CHECK (role IN ('supporting','verification','counterexample','teaching')),
	note        TEXT NOT NULL DEFAULT '',
	created_at  TEXT NOT NULL,
	UNIQUE (card_id, evidence_id, role)
);
CREATE INDEX card_links_evidence ON card_links(evidence_id);

CREATE TABLE card_events (
	id          TEXT PRIMARY KEY,
	card_id     TEXT NOT NULL REFERENCES cards(id),
	seq         INTEGER NOT NULL CHECK (seq > 0),
	type        TEXT NOT NULL CHECK (type IN ('created','linked','promoted','demoted','retired','published','direct_write','updated')),
	from_status TEXT NOT NULL DEFAULT '',
	to_status   TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL DEFAULT '',
	actor       TEXT NOT NULL,
	actor_type  TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	policy      TEXT NOT NULL DEFAULT '',
	policy_hash TEXT NOT NULL DEFAULT '',
	decision    TEXT NOT NULL DEFAULT 'null' CHECK (json_valid(decision)),
	data        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
	created_at  TEXT NOT NULL,
	UNIQUE (card_id, seq)
);
CREATE TRIGGER card_events_no_update BEFORE UPDATE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;
CREATE TRIGGER card_events_no_delete BEFORE DELETE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;

CREATE TABLE injection_events (
	request_id TEXT NOT NULL,
	card_id    TEXT NOT NULL REFERENCES cards(id),
	outcome    TEXT NOT NULL CHECK (outcome IN ('inline_full','inline_compact','ref_only','trimmed','skipped_cooled','skipped_scope','viewed')),
	created_at TEXT NOT NULL
);
CREATE INDEX injection_events_card_time ON injection_events(card_id, created_at);
`,
	// 2: injection rollups kept by a trigger, so a 30-day window is read by
	// days (injection_daily) and a card's latest event per outcome in one row.
	`
DROP INDEX injection_events_card_time;
CREATE TABLE injection_daily (
	card_id TEXT NOT NULL REFERENCES cards(id),
	day     TEXT NOT NULL,
	outcome TEXT NOT NULL,
	n       INTEGER NOT NULL CHECK (n > 0),
	last_at TEXT NOT NULL,
	PRIMARY KEY (card_id, day, outcome)
) WITHOUT ROWID;
CREATE TABLE injection_last (
	card_id TEXT NOT NULL REFERENCES cards(id),
	outcome TEXT NOT NULL,
	total   INTEGER NOT NULL CHECK (total > 0),
	last_at TEXT NOT NULL,
	PRIMARY KEY (card_id, outcome)
) WITHOUT ROWID;
INSERT INTO injection_daily(card_id, day, outcome, n, last_at)
	SELECT card_id, substr(created_at, 1, 10), outcome, count(*), max(created_at) FROM injection_events GROUP BY 1, 2, 3;
INSERT INTO injection_last(card_id, outcome, total, last_at)
	SELECT card_id, outcome, count(*), max(created_at) FROM injection_events GROUP BY 1, 2;
CREATE TRIGGER injection_events_rollup AFTER INSERT ON injection_events
BEGIN
	INSERT INTO injection_daily(card_id, day, outcome, n, last_at) VALUES (new.card_id, substr(new.created_at, 1, 10), new.outcome, 1, new.created_at)
		ON CONFLICT(card_id, day, outcome) DO UPDATE SET n = n + 1, last_at = max(last_at, excluded.last_at);
	INSERT INTO injection_last(card_id, outcome, total, last_at) VALUES (new.card_id, new.outcome, 1, new.created_at)
		ON CONFLICT(card_id, outcome) DO UPDATE SET total = total + 1, last_at = max(last_at, excluded.last_at);
END;
`,
	// 3: a covering index answers the visible selection without card rows;
	// evidence_counts answers evidence per anchor and field without a scan.
	`
CREATE INDEX cards_context ON cards(anchor_id, status, persistence, tier, expires_at, field, id);
CREATE TABLE evidence_counts (
	anchor_id TEXT NOT NULL REFERENCES anchors(id),
	field     TEXT NOT NULL,
	n         INTEGER NOT NULL CHECK (n > 0),
	PRIMARY KEY (anchor_id, field)
) WITHOUT ROWID;
INSERT INTO evidence_counts(anchor_id, field, n) SELECT anchor_id, field, count(*) FROM evidence GROUP BY 1, 2;
CREATE TRIGGER evidence_counts_insert AFTER INSERT ON evidence
BEGIN
	INSERT INTO evidence_counts(anchor_id, field, n) VALUES (new.anchor_id, new.field, 1)
		ON CONFLICT(anchor_id, field) DO UPDATE SET n = n + 1;
END;
`,
	// 4: links and an anchor's evidence read in order straight from an index
	// (docs/rationale.md), and a counter of changes to card texts (textCache).
	`
CREATE INDEX card_links_card_time ON card_links(card_id, created_at);
CREATE INDEX evidence_anchor ON evidence(anchor_id);
CREATE TABLE card_text_version (n INTEGER NOT NULL);
INSERT INTO card_text_version(n) VALUES (0);
CREATE TRIGGER cards_text_changed AFTER UPDATE OF statement, content ON cards
BEGIN UPDATE card_text_version SET n = n + 1; END;
`,
	// 5: evidence joins its full-text index at commit (Store.Tx), so FTS5
	// flushes once per batch; the field-only index serves no query.
	`
DROP TRIGGER evidence_fts_insert;
DROP INDEX evidence_field;
`,
	// Redaction: an evidence row's content may be replaced, once, by the notice
	// of its append-only evidence_redactions row; every other column, the
	// content hash included, stays. Assumes only migrations 1 to 5.
	`
CREATE TABLE evidence_redactions (
	evidence_id TEXT PRIMARY KEY REFERENCES evidence(id),
	notice      TEXT NOT NULL CHECK (length(notice) > 0),
	reason      TEXT NOT NULL CHECK (length(reason) > 0),
	actor       TEXT NOT NULL,
	actor_type  TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	created_at  TEXT NOT NULL
);
CREATE TRIGGER evidence_redactions_no_update BEFORE UPDATE ON evidence_redactions
BEGIN SELECT RAISE(ABORT, 'evidence redactions are append-only'); END;
CREATE TRIGGER evidence_redactions_no_delete BEFORE DELETE ON evidence_redactions
BEGIN SELECT RAISE(ABORT, 'evidence redactions are append-only'); END;

DROP TRIGGER evidence_no_update;
CREATE TRIGGER evidence_no_update BEFORE UPDATE ON evidence
WHEN NOT (
	new.rowid = old.rowid AND new.id IS old.id AND new.domain IS old.domain
	AND new.field IS old.field AND new.provenance IS old.provenance
	AND new.source_ref IS old.source_ref AND new.tags IS old.tags
	AND new.anchor_id IS old.anchor_id AND new.content_sha256 IS old.content_sha256
	AND new.actor IS old.actor AND new.actor_type IS old.actor_type
	AND new.created_at IS old.created_at
	AND old.content IS NOT new.content
	AND new.content IS (SELECT notice FROM evidence_redactions WHERE evidence_id = old.id)
)
BEGIN SELECT RAISE(ABORT, 'evidence is append-only'); END;
CREATE TRIGGER evidence_fts_redact AFTER UPDATE OF content ON evidence
BEGIN
	INSERT INTO evidence_fts(evidence_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
	INSERT INTO evidence_fts(rowid, content) VALUES (new.rowid, new.content);
END;
`,
	// Telemetry of one row per context request (injection_requests: cards per
	// outcome, delta-coded, see encodeRequest; skipped_scope only counted).
	// The writer keeps the rollups in the same transaction; raw requests are
	// pruned after a retention window. Assumes only migrations 1 to 5.
	`
DROP TRIGGER IF EXISTS injection_events_rollup;
CREATE TABLE injection_requests (
	seq           INTEGER PRIMARY KEY,
	request_id    TEXT NOT NULL,
	created_at    TEXT NOT NULL,
	cards         BLOB NOT NULL CHECK (typeof(cards) IN ('blob','text')),
	scope_skipped INTEGER NOT NULL DEFAULT 0 CHECK (scope_skipped >= 0)
);
CREATE INDEX injection_requests_time ON injection_requests(created_at);
INSERT INTO injection_requests(request_id, created_at, cards, scope_skipped)
	SELECT request_id, created_at,
		coalesce(group_concat(CASE WHEN outcome != 'skipped_scope' THEN outcome || ':' || ids END, ';'), ''),
		sum(CASE WHEN outcome = 'skipped_scope' THEN n ELSE 0 END)
	FROM (SELECT request_id, created_at, outcome, group_concat(card_id, ',') AS ids, count(*) AS n, min(rowid) AS first
		FROM injection_events GROUP BY request_id, created_at, outcome)
	GROUP BY request_id, created_at ORDER BY min(first);
DROP TABLE injection_events;
DELETE FROM injection_last WHERE outcome NOT IN ('inline_full','inline_compact');
`,
	// injection_window: a running count per card and outcome, so a request
	// reads one short range per card. n counts events from base on; readers
	// correct for days between base and their window (InjectionSummaries), so
	// any base is correct and a recent one is cheap.
	`
CREATE TABLE injection_window (
	card_id TEXT NOT NULL REFERENCES cards(id),
	outcome TEXT NOT NULL,
	base    TEXT NOT NULL,
	n       INTEGER NOT NULL CHECK (n >= 0),
	total   INTEGER NOT NULL CHECK (total > 0),
	last_at TEXT NOT NULL,
	PRIMARY KEY (card_id, outcome)
) WITHOUT ROWID;
INSERT INTO injection_window(card_id, outcome, base, n, total, last_at)
	SELECT card_id, outcome, (SELECT date(max(day), '-30 days') FROM injection_daily),
		sum(CASE WHEN day >= (SELECT date(max(day), '-30 days') FROM injection_daily) THEN n ELSE 0 END), sum(n), max(last_at)
	FROM injection_daily GROUP BY card_id, outcome;
DROP TABLE injection_last;
`,
	// Adoption signals about use, never authority: nothing reads them to
	// change a status or satisfy a gate. request_terms keeps each request's
	// signature while raw telemetry is kept; a signal copies it. Assumes only
	// the first migration.
	`
CREATE TABLE adoption_events (
	id            TEXT PRIMARY KEY,
	signal        TEXT NOT NULL CHECK (signal IN ('used','accepted','rejected','miss','rollback','contradiction','neutral')),
	card_id       TEXT REFERENCES cards(id),
	request_id    TEXT NOT NULL DEFAULT '',
	request_terms TEXT NOT NULL DEFAULT '',
	query         TEXT NOT NULL DEFAULT '',
	field         TEXT NOT NULL DEFAULT '',
	evidence_id   TEXT REFERENCES evidence(id),
	note          TEXT NOT NULL DEFAULT '',
	actor         TEXT NOT NULL,
	actor_type    TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	policy_hash   TEXT NOT NULL DEFAULT '',
	created_at    TEXT NOT NULL,
	CHECK (card_id IS NOT NULL OR signal = 'miss')
);
CREATE INDEX adoption_events_card_time ON adoption_events(card_id, created_at);
CREATE INDEX adoption_events_time ON adoption_events(created_at);
CREATE TRIGGER adoption_events_no_update BEFORE UPDATE ON adoption_events
BEGIN SELECT RAISE(ABORT, 'adoption events are append-only'); END;
CREATE TRIGGER adoption_events_no_delete BEFORE DELETE ON adoption_events
BEGIN SELECT RAISE(ABORT, 'adoption events are append-only'); END;
CREATE TABLE request_terms (
	request_id TEXT PRIMARY KEY,
	query      TEXT NOT NULL DEFAULT '',
	terms      TEXT NOT NULL,
	created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX request_terms_time ON request_terms(created_at);
`,
	// Card files under <repo>/.palace/cards/: card_events learns 'imported'
	// (a CHECK cannot be altered, so the table is rebuilt with its triggers);
	// card_files keeps each card's file as last synced; card_sync_marks lets a
	// sync with no new event read card_files alone. Assumes only migrations 1
	// to 5.
	`
DROP TRIGGER card_events_no_update;
DROP TRIGGER card_events_no_delete;
CREATE TABLE card_events_next (
	id          TEXT PRIMARY KEY,
	card_id     TEXT NOT NULL REFERENCES cards(id),
	seq         INTEGER NOT NULL CHECK (seq > 0),
	type        TEXT NOT NULL CHECK (type IN ('created','linked','promoted','demoted','retired','published','direct_write','updated','imported')),
	from_status TEXT NOT NULL DEFAULT '',
	to_status   TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL DEFAULT '',
	actor       TEXT NOT NULL,
	actor_type  TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	policy      TEXT NOT NULL DEFAULT '',
	policy_hash TEXT NOT NULL DEFAULT '',
	decision    TEXT NOT NULL DEFAULT 'null' CHECK (json_valid(decision)),
	data        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
	created_at  TEXT NOT NULL,
	UNIQUE (card_id, seq)
);
INSERT INTO card_events_next(id, card_id, seq, type, from_status, to_status, reason, actor, actor_type, policy, policy_hash, decision, data, created_at)
	SELECT id, card_id, seq, type, from_status, to_status, reason, actor, actor_type, policy, policy_hash, decision, data, created_at FROM card_events;
DROP TABLE card_events;
ALTER TABLE card_events_next RENAME TO card_events;
CREATE TRIGGER card_events_no_update BEFORE UPDATE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;
CREATE TRIGGER card_events_no_delete BEFORE DELETE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;

CREATE TABLE IF NOT EXISTS card_files (
	anchor_id   TEXT NOT NULL REFERENCES anchors(id),
	card_id     TEXT NOT NULL UNIQUE REFERENCES cards(id),
	file_sha256 TEXT NOT NULL DEFAULT '',
	event_seq   INTEGER NOT NULL DEFAULT 0,
	checkout    TEXT NOT NULL DEFAULT '',
	size        INTEGER NOT NULL DEFAULT -1,
	mtime_ns    INTEGER NOT NULL DEFAULT 0,
	held        TEXT NOT NULL DEFAULT '',
	synced_at   TEXT NOT NULL,
	PRIMARY KEY (anchor_id, card_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS card_sync_marks (
	anchor_id   TEXT PRIMARY KEY REFERENCES anchors(id),
	event_rowid INTEGER NOT NULL
);
`,
	// Governance. Evidence counts once per (anchor, content hash); later rows
	// are listed in evidence_duplicates, never removed. card_contests holds
	// open challenges to authoritative cards; demote, retire or resolve closes
	// one.
	`
-- The lookup index holds a 16-hex prefix of the hash only: a quarter of
-- the key, so an import pays less for it; the query checks the full hash.
CREATE INDEX evidence_sha ON evidence(substr(content_sha256, 1, 16));
CREATE TABLE evidence_duplicates (
	evidence_id TEXT PRIMARY KEY REFERENCES evidence(id),
	original_id TEXT NOT NULL REFERENCES evidence(id),
	cause       TEXT NOT NULL CHECK (cause IN ('migration','allow_duplicate')),
	created_at  TEXT NOT NULL,
	CHECK (evidence_id != original_id)
);
CREATE INDEX evidence_duplicates_original ON evidence_duplicates(original_id);
CREATE TRIGGER evidence_duplicates_no_update BEFORE UPDATE ON evidence_duplicates
BEGIN SELECT RAISE(ABORT, 'evidence duplicates are append-only'); END;
CREATE TRIGGER evidence_duplicates_no_delete BEFORE DELETE ON evidence_duplicates
BEGIN SELECT RAISE(ABORT, 'evidence duplicates are append-only'); END;
INSERT INTO evidence_duplicates(evidence_id, original_id, cause, created_at)
	SELECT e.id, f.id, 'migration', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
	FROM evidence e JOIN (SELECT anchor_id, content_sha256, min(rowid) AS first FROM evidence GROUP BY 1, 2 HAVING count(*) > 1) g
		ON g.anchor_id = e.anchor_id AND g.content_sha256 = e.content_sha256 AND e.rowid > g.first
	JOIN evidence f ON f.rowid = g.first;

CREATE TABLE card_contests (
	seq         INTEGER PRIMARY KEY,
	card_id     TEXT NOT NULL REFERENCES cards(id),
	kind        TEXT NOT NULL CHECK (length(kind) > 0),
	reason      TEXT NOT NULL CHECK (length(reason) > 0),
	evidence_id TEXT REFERENCES evidence(id),
	source      TEXT NOT NULL DEFAULT '',
	actor       TEXT NOT NULL,
	actor_type  TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	created_at  TEXT NOT NULL,
	resolved_at TEXT,
	resolution  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX card_contests_open ON card_contests(card_id) WHERE resolved_at IS NULL;
`,
	// Folded telemetry: injection_fold holds the seq of the last request folded
	// into the rollups (foldEvery); readers add the records after it. IF NOT
	// EXISTS and OR REPLACE make it hold whatever its number.
	`
CREATE TABLE IF NOT EXISTS injection_fold (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	seq INTEGER NOT NULL
);
INSERT OR REPLACE INTO injection_fold(id, seq) SELECT 1, coalesce(max(seq), 0) FROM injection_requests;
`,
	// Cards join the full-text index at commit, as evidence does (fulltext.go).
	`
DROP TRIGGER IF EXISTS cards_fts_insert;
`,
	// injection_recent: each running count's daily counts of the last
	// recentDays days ("YYYY-MM-DD:n,…", recentDaysSQL), so a window is summed
	// from one row. The fold keeps it.
	`
CREATE TABLE IF NOT EXISTS injection_recent (
	card_id TEXT NOT NULL,
	outcome TEXT NOT NULL,
	days    TEXT,
	PRIMARY KEY (card_id, outcome)
) WITHOUT ROWID;
INSERT OR REPLACE INTO injection_recent(card_id, outcome, days)
	SELECT card_id, outcome, ` + recentDaysSQL("injection_window") + ` FROM injection_window;
`,
	// card_version counts every UPDATE or DELETE of a card, by any process, so
	// cardCache may keep cards; an INSERT gets a rowid no cache holds.
	`
CREATE TABLE IF NOT EXISTS card_version (n INTEGER NOT NULL);
INSERT INTO card_version(n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM card_version);
CREATE TRIGGER IF NOT EXISTS cards_changed AFTER UPDATE ON cards
BEGIN UPDATE card_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS cards_deleted AFTER DELETE ON cards
BEGIN UPDATE card_version SET n = n + 1; END;
`,
	// link_version does the same for links (linkCache); an INSERT raises
	// max(rowid), which the cache reads with the counter.
	`
CREATE TABLE IF NOT EXISTS link_version (n INTEGER NOT NULL);
INSERT INTO link_version(n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM link_version);
CREATE TRIGGER IF NOT EXISTS card_links_changed AFTER UPDATE ON card_links
BEGIN UPDATE link_version SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS card_links_deleted AFTER DELETE ON card_links
BEGIN UPDATE link_version SET n = n + 1; END;
`,
	// Card events record who decided them (decided_by; the table is rebuilt,
	// as a CHECK cannot be added), and card_files keeps the blob palace last
	// wrote or imported and the blob at HEAD. Blobs start empty and sync marks
	// are dropped, so the next sync compares each committed file once.
	`
DROP TRIGGER card_events_no_update;
DROP TRIGGER card_events_no_delete;
CREATE TABLE card_events_next (
	id          TEXT PRIMARY KEY,
	card_id     TEXT NOT NULL REFERENCES cards(id),
	seq         INTEGER NOT NULL CHECK (seq > 0),
	type        TEXT NOT NULL CHECK (type IN ('created','linked','promoted','demoted','retired','published','direct_write','updated','imported')),
	from_status TEXT NOT NULL DEFAULT '',
	to_status   TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL DEFAULT '',
	actor       TEXT NOT NULL,
	actor_type  TEXT NOT NULL CHECK (actor_type IN ('human','agent')),
	policy      TEXT NOT NULL DEFAULT '',
	policy_hash TEXT NOT NULL DEFAULT '',
	decision    TEXT NOT NULL DEFAULT 'null' CHECK (json_valid(decision)),
	decided_by  TEXT NOT NULL DEFAULT '' CHECK (decided_by IN ('', 'gate', 'human', 'rule')),
	data        TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
	created_at  TEXT NOT NULL,
	UNIQUE (card_id, seq)
);
INSERT INTO card_events_next(id, card_id, seq, type, from_status, to_status, reason, actor, actor_type, policy, policy_hash, decision, data, created_at)
	SELECT id, card_id, seq, type, from_status, to_status, reason, actor, actor_type, policy, policy_hash, decision, data, created_at FROM card_events;
DROP TABLE card_events;
ALTER TABLE card_events_next RENAME TO card_events;
CREATE TRIGGER card_events_no_update BEFORE UPDATE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;
CREATE TRIGGER card_events_no_delete BEFORE DELETE ON card_events
BEGIN SELECT RAISE(ABORT, 'card events are append-only'); END;
CREATE TABLE card_files_next (
	anchor_id TEXT NOT NULL REFERENCES anchors(id),
	card_id   TEXT NOT NULL UNIQUE REFERENCES cards(id),
	blob      TEXT NOT NULL DEFAULT '',
	base      TEXT NOT NULL DEFAULT '',
	event_seq INTEGER NOT NULL DEFAULT 0,
	held      TEXT NOT NULL DEFAULT '',
	synced_at TEXT NOT NULL,
	PRIMARY KEY (anchor_id, card_id)
) WITHOUT ROWID;
INSERT INTO card_files_next(anchor_id, card_id, event_seq, held, synced_at)
	SELECT anchor_id, card_id, event_seq, held, synced_at FROM card_files;
DROP TABLE card_files;
ALTER TABLE card_files_next RENAME TO card_files;
DELETE FROM card_sync_marks;
`,
	// What a person allowed in a workspace (workspace.go): append-only, keyed
	// by the worktree anchor, the newest row in force; only a human decides.
	`
CREATE TABLE IF NOT EXISTS workspace_permissions (
	seq        INTEGER PRIMARY KEY,
	anchor_id  TEXT NOT NULL REFERENCES anchors(id),
	permission TEXT NOT NULL CHECK (permission IN ('all_repos')),
	allowed    INTEGER NOT NULL CHECK (allowed IN (0, 1)),
	actor      TEXT NOT NULL,
	actor_type TEXT NOT NULL CHECK (actor_type = 'human'),
	reason     TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS workspace_permissions_anchor ON workspace_permissions(anchor_id, permission, seq);
CREATE TRIGGER IF NOT EXISTS workspace_permissions_no_update BEFORE UPDATE ON workspace_permissions
BEGIN SELECT RAISE(ABORT, 'workspace permissions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS workspace_permissions_no_delete BEFORE DELETE ON workspace_permissions
BEGIN SELECT RAISE(ABORT, 'workspace permissions are append-only'); END;
`,
	// What evidence saw of the code it cites (domain.Observation): an
	// append-only side table, since evidence rows are never updated.
	`
CREATE TABLE IF NOT EXISTS evidence_observations (
	evidence_id  TEXT NOT NULL REFERENCES evidence(id),
	n            INTEGER NOT NULL CHECK (n >= 0),
	kind         TEXT NOT NULL CHECK (kind IN ('lines','file','symbol')),
	path         TEXT NOT NULL CHECK (length(path) > 0),
	line_start   INTEGER NOT NULL DEFAULT 0,
	line_end     INTEGER NOT NULL DEFAULT 0,
	symbol       TEXT NOT NULL DEFAULT '',
	lines_sha256 TEXT NOT NULL DEFAULT '',
	git_commit   TEXT NOT NULL DEFAULT '',
	observed_at  TEXT NOT NULL,
	UNIQUE (evidence_id, n),
	CHECK (kind != 'lines' OR (line_start >= 1 AND line_end >= line_start AND length(lines_sha256) = 64)),
	CHECK (kind != 'symbol' OR length(symbol) > 0)
);
CREATE TRIGGER IF NOT EXISTS evidence_observations_no_update BEFORE UPDATE ON evidence_observations
BEGIN SELECT RAISE(ABORT, 'evidence observations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS evidence_observations_no_delete BEFORE DELETE ON evidence_observations
BEGIN SELECT RAISE(ABORT, 'evidence observations are append-only'); END;
`,
	// Statements compare in NFC (domain.NormalizeStatement): recompute every
	// statement_norm with palace_statement_norm; idempotent.
	`
UPDATE cards SET statement_norm = palace_statement_norm(statement)
	WHERE statement_norm IS NOT palace_statement_norm(statement);
`,
	// A card may supersede another (distill --from): one append-only row per
	// new card, written by WriteCards.
	`
CREATE TABLE IF NOT EXISTS card_supersessions (
	card_id    TEXT PRIMARY KEY REFERENCES cards(id),
	supersedes TEXT NOT NULL REFERENCES cards(id) CHECK (supersedes != card_id),
	created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS card_supersessions_old ON card_supersessions(supersedes);
CREATE TRIGGER IF NOT EXISTS card_supersessions_no_update BEFORE UPDATE ON card_supersessions
BEGIN SELECT RAISE(ABORT, 'card supersessions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS card_supersessions_no_delete BEFORE DELETE ON card_supersessions
BEGIN SELECT RAISE(ABORT, 'card supersessions are append-only'); END;
`,
}

// SchemaVersion is the schema version this binary writes and understands.
var SchemaVersion = len(migrations)
