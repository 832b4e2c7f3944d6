-- 0001_init: the first ballast schema.
--
-- Conventions: timestamps are INTEGER unix milliseconds in columns ending in `_ms`; booleans are
-- INTEGER 0/1; JSON is TEXT checked with json_valid. Tables are not STRICT so that the sqlite3
-- shell of older distributions can still open the file for inspection.
-- `schema_migrations` is created by the migration runner, not here.

-- Child processes as the supervisor sees them. Written by the supervisor only.
CREATE TABLE processes (
    name             TEXT PRIMARY KEY NOT NULL,
    pid              INTEGER,
    state            TEXT NOT NULL
                     CHECK (state IN ('starting', 'running', 'backoff', 'stopping', 'stopped', 'exited')),
    started_at_ms    INTEGER,
    restarts         INTEGER NOT NULL DEFAULT 0 CHECK (restarts >= 0),
    last_exit        TEXT,
    last_exit_at_ms  INTEGER,
    next_start_at_ms INTEGER,
    updated_at_ms    INTEGER NOT NULL
);

-- One row per worker, replaced on every tick. Written by each worker for itself.
CREATE TABLE heartbeats (
    name   TEXT PRIMARY KEY NOT NULL,
    pid    INTEGER NOT NULL,
    at_ms  INTEGER NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);

-- Freshness of what the observer has seen, one row per kind ('brokers', ...). Written by the observer.
CREATE TABLE observations (
    kind           TEXT PRIMARY KEY NOT NULL,
    observed_at_ms INTEGER NOT NULL,
    ok             INTEGER NOT NULL CHECK (ok IN (0, 1)),
    error          TEXT,
    detail         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);

-- The single server-wide mutation slot (a lease). Exactly one row, id = 1; holder NULL = free.
-- `token` is the fencing token: it grows by one on every acquisition and is never reused.
CREATE TABLE mutation_slot (
    id             INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    holder         TEXT,
    purpose        TEXT,
    operation_id   TEXT,
    token          INTEGER NOT NULL DEFAULT 0 CHECK (token >= 0),
    acquired_at_ms INTEGER,
    expires_at_ms  INTEGER,
    CHECK ((holder IS NULL) = (expires_at_ms IS NULL))
);

INSERT INTO mutation_slot (id, token) VALUES (1, 0);

CREATE TRIGGER mutation_slot_token_only_grows
BEFORE UPDATE OF token ON mutation_slot
WHEN NEW.token <= OLD.token
BEGIN
    SELECT RAISE(ABORT, 'mutation_slot.token must strictly increase');
END;

CREATE TRIGGER mutation_slot_row_is_permanent
BEFORE DELETE ON mutation_slot
BEGIN
    SELECT RAISE(ABORT, 'mutation_slot row 1 must not be deleted');
END;

-- Partitions moved recently; a newer move of the same partition replaces the row.
CREATE TABLE cooldowns (
    topic        TEXT NOT NULL,
    partition    INTEGER NOT NULL CHECK (partition >= 0),
    moved_at_ms  INTEGER NOT NULL,
    operation_id TEXT,
    PRIMARY KEY (topic, partition)
);

CREATE INDEX cooldowns_moved_at_ms ON cooldowns (moved_at_ms);

-- The audit log. Append-only: rows are never updated (a later failure adds a new event that points
-- to the original through related_event_id).
CREATE TABLE audit_events (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms            INTEGER NOT NULL,
    action           TEXT NOT NULL CHECK (action <> ''),
    method           TEXT NOT NULL CHECK (method <> ''),
    user_id          TEXT,
    requested_by     TEXT,
    status           INTEGER NOT NULL CHECK (status BETWEEN 100 AND 599),
    target           TEXT,
    summary          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(summary)),
    before           TEXT CHECK (before IS NULL OR json_valid(before)),
    after            TEXT CHECK (after IS NULL OR json_valid(after)),
    forced           INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    related_event_id INTEGER REFERENCES audit_events (id),
    details          TEXT
);

CREATE INDEX audit_events_at_ms ON audit_events (at_ms);
CREATE INDEX audit_events_action ON audit_events (action);
CREATE INDEX audit_events_user_id ON audit_events (user_id);
CREATE INDEX audit_events_related_event_id ON audit_events (related_event_id);

CREATE TRIGGER audit_events_are_append_only
BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only');
END;

-- Mutations requested through MCP that wait for a second person's approval.
CREATE TABLE approvals (
    id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    tool          TEXT NOT NULL CHECK (tool <> ''),
    arguments     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(arguments)),
    requested_by  TEXT,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    state         TEXT NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'approved', 'rejected', 'expired', 'executed', 'failed')),
    decided_by    TEXT,
    decided_at_ms INTEGER,
    result        TEXT CHECK (result IS NULL OR json_valid(result))
);

CREATE INDEX approvals_state_expires_at_ms ON approvals (state, expires_at_ms);

-- Small key/value settings changed at run time (e.g. throttle rate).
CREATE TABLE settings (
    key           TEXT PRIMARY KEY NOT NULL,
    value         TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
