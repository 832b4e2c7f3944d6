-- 0004_operations: reassignment operations and their moves, and brokers in maintenance.
--
-- The API (proposal apply, redistribution, bulk), the healer, maintenance drains and audit revert
-- queue an operation with its exact moves; the executor runs one operation at a time behind the
-- mutation slot and records every submission here before it is sent, so a restarted executor
-- resumes tracking and never submits a step twice.

-- One row per operation. `state`: pending (queued) → running → completed | failed | cancelled.
-- `slot_token` is the fencing token of the mutation-slot lease taken when it was queued; the
-- executor renews that lease (holder `op:<id>`) for as long as the operation runs.
CREATE TABLE operations (
    id               TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    kind             TEXT NOT NULL CHECK (kind <> ''),
    strategy         TEXT NOT NULL CHECK (strategy <> ''),
    state            TEXT NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    method           TEXT NOT NULL CHECK (method <> ''),
    user_id          TEXT,
    requested_by     TEXT,
    description      TEXT,
    proposal_id      TEXT,
    fingerprint      TEXT,
    forced           INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1)),
    slot_token       INTEGER,
    audit_event_id   INTEGER REFERENCES audit_events (id),
    reason           TEXT,
    detail           TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail)),
    created_at_ms    INTEGER NOT NULL,
    started_at_ms    INTEGER,
    finished_at_ms   INTEGER,
    updated_at_ms    INTEGER NOT NULL
);

CREATE INDEX operations_state ON operations (state);
CREATE INDEX operations_created_at_ms ON operations (created_at_ms);

-- The moves of an operation, in the order given. `source` is the partition's replicas when the
-- move was planned, `target` where it ends (its first replica the preferred leader). A move that
-- adds several replicas goes through `steps` submissions of one added replica each; `step` counts
-- the finished ones and `submitted` holds the replica list of the step in flight.
-- `state`: pending → submitting (recorded, being sent) → active (accepted by the controller) →
-- pending (next step) … → completed; or failed (with `reason`) or cancelled.
-- `cancel_confirmed` = 0 on a cancelled move the cluster may still be moving. Moves of a higher
-- `phase` start only when every move of the lower phases has finished (a drain moves leadership
-- before replicas).
CREATE TABLE moves (
    operation_id     TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL CHECK (seq >= 0),
    phase            INTEGER NOT NULL DEFAULT 0 CHECK (phase >= 0),
    topic            TEXT NOT NULL CHECK (topic <> ''),
    partition        INTEGER NOT NULL CHECK (partition >= 0),
    source           TEXT NOT NULL CHECK (json_valid(source) AND json_type(source) = 'array'),
    target           TEXT NOT NULL CHECK (json_valid(target) AND json_type(target) = 'array'),
    state            TEXT NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'submitting', 'active', 'completed', 'failed', 'cancelled')),
    step             INTEGER NOT NULL DEFAULT 0 CHECK (step >= 0),
    steps            INTEGER NOT NULL CHECK (steps >= 1),
    submitted        TEXT CHECK (submitted IS NULL OR json_valid(submitted)),
    submitted_at_ms  INTEGER,
    submissions      INTEGER NOT NULL DEFAULT 0 CHECK (submissions >= 0),
    bytes_total      INTEGER NOT NULL DEFAULT 0 CHECK (bytes_total >= 0),
    bytes_done       INTEGER NOT NULL DEFAULT 0 CHECK (bytes_done >= 0),
    rate             REAL,
    reason           TEXT,
    timed_out        INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
    cancel_confirmed INTEGER NOT NULL DEFAULT 1 CHECK (cancel_confirmed IN (0, 1)),
    started_at_ms    INTEGER,
    finished_at_ms   INTEGER,
    PRIMARY KEY (operation_id, seq)
);

CREATE INDEX moves_state ON moves (state);
CREATE INDEX moves_partition ON moves (topic, partition);

-- Brokers an operator put in maintenance: the planner drains them and plans nothing onto them.
CREATE TABLE maintenance (
    broker_id     INTEGER PRIMARY KEY NOT NULL,
    entered_at_ms INTEGER NOT NULL,
    requested_by  TEXT,
    operation_id  TEXT,
    reason        TEXT
);
