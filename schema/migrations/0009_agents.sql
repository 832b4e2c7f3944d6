-- 0009_agents
-- On-broker agents and rolling restarts (docs/rolling-restarts.md).

-- One row per broker's agent: what its last heartbeat said.
CREATE TABLE agents (
    broker_id           INTEGER PRIMARY KEY,
    node_id             TEXT    NOT NULL,
    version             TEXT    NOT NULL,
    -- SHA-256 of the agent's own executable: equal to the service's when it runs the same build
    build_digest        TEXT    NOT NULL,
    -- 1 running, 0 not running, NULL unknown (no status command)
    broker_process_up   INTEGER,
    broker_uptime_s     INTEGER,
    agent_started_at_ms INTEGER NOT NULL,
    -- JSON array of {"path", "totalBytes", "availableBytes"} or {"path", "error"}
    disks               TEXT    NOT NULL DEFAULT '[]',
    remote_addr         TEXT,
    first_seen_at_ms    INTEGER NOT NULL,
    last_seen_at_ms     INTEGER NOT NULL
);

-- Work for an agent, picked up on its next heartbeat: pending -> sent -> succeeded | failed;
-- pending | sent -> cancelled.
CREATE TABLE agent_commands (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    broker_id       INTEGER NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('restart', 'upgrade')),
    state           TEXT    NOT NULL CHECK (state IN ('pending', 'sent', 'succeeded', 'failed', 'cancelled')),
    roll_id         TEXT,
    -- upgrade: the version and SHA-256 the agent must install
    target_version  TEXT,
    target_digest   TEXT,
    requested_by    TEXT    NOT NULL,
    audit_event_id  INTEGER,
    detail          TEXT,
    created_at_ms   INTEGER NOT NULL,
    sent_at_ms      INTEGER,
    finished_at_ms  INTEGER
);
CREATE INDEX agent_commands_open ON agent_commands (broker_id, state);

-- Rolling restarts: running <-> paused; running | paused -> aborting -> aborted;
-- running -> completed | failed. While one is unfinished the mutation slot is refused.
CREATE TABLE rolling_restarts (
    id                  TEXT    PRIMARY KEY,
    state               TEXT    NOT NULL CHECK (state IN ('running', 'paused', 'aborting', 'completed', 'failed', 'aborted')),
    -- JSON array of broker ids in restart order (the active controller last)
    brokers             TEXT    NOT NULL,
    -- index into brokers of the broker being restarted (= its length when done)
    position            INTEGER NOT NULL DEFAULT 0,
    -- healthy_wait | leaders_off | restarting | recovering | leaders_back | settling
    phase               TEXT    NOT NULL,
    phase_started_at_ms INTEGER NOT NULL,
    pause_requested     INTEGER NOT NULL DEFAULT 0,
    abort_requested     INTEGER NOT NULL DEFAULT 0,
    -- JSON: partitions whose replica order was changed to move leadership off the current
    -- broker, the restart command, and a line per finished broker
    progress            TEXT    NOT NULL DEFAULT '{}',
    user_id             TEXT    NOT NULL,
    method              TEXT    NOT NULL,
    reason              TEXT,
    error               TEXT,
    failed_broker       INTEGER,
    audit_event_id      INTEGER,
    created_at_ms       INTEGER NOT NULL,
    updated_at_ms       INTEGER NOT NULL,
    finished_at_ms      INTEGER
);
CREATE INDEX rolling_restarts_open ON rolling_restarts (state);
