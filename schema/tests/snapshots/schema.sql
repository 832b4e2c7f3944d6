-- table approvals on approvals
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

-- table audit_events on audit_events
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

-- table cooldowns on cooldowns
CREATE TABLE cooldowns (
    topic        TEXT NOT NULL,
    partition    INTEGER NOT NULL CHECK (partition >= 0),
    moved_at_ms  INTEGER NOT NULL,
    operation_id TEXT,
    PRIMARY KEY (topic, partition)
);

-- table heartbeats on heartbeats
CREATE TABLE heartbeats (
    name   TEXT PRIMARY KEY NOT NULL,
    pid    INTEGER NOT NULL,
    at_ms  INTEGER NOT NULL,
    detail TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);

-- table mutation_slot on mutation_slot
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

-- table observations on observations
CREATE TABLE observations (
    kind           TEXT PRIMARY KEY NOT NULL,
    observed_at_ms INTEGER NOT NULL,
    ok             INTEGER NOT NULL CHECK (ok IN (0, 1)),
    error          TEXT,
    detail         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
);

-- table processes on processes
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

-- table schema_migrations on schema_migrations
CREATE TABLE schema_migrations (
    version       INTEGER PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    applied_at_ms INTEGER NOT NULL
);

-- table settings on settings
CREATE TABLE settings (
    key           TEXT PRIMARY KEY NOT NULL,
    value         TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- table sqlite_sequence on sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- index approvals_state_expires_at_ms on approvals
CREATE INDEX approvals_state_expires_at_ms ON approvals (state, expires_at_ms);

-- index audit_events_action on audit_events
CREATE INDEX audit_events_action ON audit_events (action);

-- index audit_events_at_ms on audit_events
CREATE INDEX audit_events_at_ms ON audit_events (at_ms);

-- index audit_events_related_event_id on audit_events
CREATE INDEX audit_events_related_event_id ON audit_events (related_event_id);

-- index audit_events_user_id on audit_events
CREATE INDEX audit_events_user_id ON audit_events (user_id);

-- index cooldowns_moved_at_ms on cooldowns
CREATE INDEX cooldowns_moved_at_ms ON cooldowns (moved_at_ms);

-- trigger audit_events_are_append_only on audit_events
CREATE TRIGGER audit_events_are_append_only
BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only');
END;

-- trigger mutation_slot_row_is_permanent on mutation_slot
CREATE TRIGGER mutation_slot_row_is_permanent
BEFORE DELETE ON mutation_slot
BEGIN
    SELECT RAISE(ABORT, 'mutation_slot row 1 must not be deleted');
END;

-- trigger mutation_slot_token_only_grows on mutation_slot
CREATE TRIGGER mutation_slot_token_only_grows
BEFORE UPDATE OF token ON mutation_slot
WHEN NEW.token <= OLD.token
BEGIN
    SELECT RAISE(ABORT, 'mutation_slot.token must strictly increase');
END;
