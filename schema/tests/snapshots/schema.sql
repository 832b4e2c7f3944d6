-- table agent_commands on agent_commands
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

-- table agents on agents
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

-- table api_tokens on api_tokens
CREATE TABLE api_tokens (
    id              TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    owner           TEXT NOT NULL CHECK (owner <> ''),
    user_id         TEXT NOT NULL CHECK (user_id <> ''),
    name            TEXT NOT NULL CHECK (name <> ''),
    scope           TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    value_hmac      TEXT NOT NULL UNIQUE CHECK (length(value_hmac) = 64),
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER
);

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

-- table auth_logins on auth_logins
CREATE TABLE auth_logins (
    state_hash    TEXT PRIMARY KEY NOT NULL CHECK (length(state_hash) = 64),
    browser_hash  TEXT NOT NULL CHECK (length(browser_hash) = 64),
    provider      TEXT NOT NULL CHECK (provider <> ''),
    nonce         TEXT NOT NULL CHECK (nonce <> ''),
    pkce_verifier TEXT NOT NULL CHECK (pkce_verifier <> ''),
    next_path     TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);

-- table broker_readings on broker_readings
CREATE TABLE broker_readings (
    broker_id          INTEGER NOT NULL,
    at_ms              INTEGER NOT NULL,
    resolution_ms      INTEGER NOT NULL DEFAULT 0 CHECK (resolution_ms >= 0),
    leader_count       REAL,
    follower_count     REAL,
    disk_bytes         REAL,
    producer_msg_rate  REAL,
    producer_byte_rate REAL,
    consumer_msg_rate  REAL,
    consumer_byte_rate REAL,
    PRIMARY KEY (broker_id, at_ms)
) WITHOUT ROWID;

-- table chat_conversations on chat_conversations
CREATE TABLE chat_conversations (
    id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    user_id       TEXT NOT NULL CHECK (user_id <> ''),
    title         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- table chat_messages on chat_messages
CREATE TABLE chat_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES chat_conversations (id) ON DELETE CASCADE,
    at_ms           INTEGER NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content         TEXT NOT NULL,
    tool_calls      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tool_calls)),
    tool_call_id    TEXT,
    is_error        INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    error           TEXT CHECK (error IS NULL OR json_valid(error)),
    CHECK ((role = 'tool') = (tool_call_id IS NOT NULL))
);

-- table chat_tool_calls on chat_tool_calls
CREATE TABLE chat_tool_calls (
    conversation_id TEXT NOT NULL REFERENCES chat_conversations (id) ON DELETE CASCADE,
    id              TEXT NOT NULL CHECK (id <> ''),
    name            TEXT NOT NULL CHECK (name <> ''),
    arguments       TEXT NOT NULL CHECK (json_valid(arguments)),
    category        TEXT NOT NULL CHECK (category IN ('read', 'mutate', 'meta')),
    state           TEXT NOT NULL
                    CHECK (state IN ('running', 'pending_approval', 'approved', 'rejected', 'done', 'failed')),
    summary         TEXT,
    result          TEXT CHECK (result IS NULL OR json_valid(result)),
    created_at_ms   INTEGER NOT NULL,
    decided_at_ms   INTEGER,
    PRIMARY KEY (conversation_id, id)
);

-- table cluster_acls on cluster_acls
CREATE TABLE cluster_acls (
    resource_type  TEXT NOT NULL,
    resource_name  TEXT NOT NULL,
    pattern_type   TEXT NOT NULL,
    principal      TEXT NOT NULL,
    host           TEXT NOT NULL,
    operation      TEXT NOT NULL,
    permission     TEXT NOT NULL,
    observed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (resource_type, resource_name, pattern_type, principal, host, operation, permission)
);

-- table cluster_broker_configs on cluster_broker_configs
CREATE TABLE cluster_broker_configs (
    broker_id      INTEGER NOT NULL,
    name           TEXT NOT NULL CHECK (name <> ''),
    value          TEXT,
    source         TEXT NOT NULL,
    is_default     INTEGER NOT NULL CHECK (is_default IN (0, 1)),
    read_only      INTEGER NOT NULL CHECK (read_only IN (0, 1)),
    sensitive      INTEGER NOT NULL CHECK (sensitive IN (0, 1)),
    observed_at_ms INTEGER NOT NULL,
    PRIMARY KEY (broker_id, name),
    CHECK (sensitive = 0 OR value IS NULL)
);

-- table cluster_brokers on cluster_brokers
CREATE TABLE cluster_brokers (
    broker_id      INTEGER PRIMARY KEY NOT NULL,
    host           TEXT,
    port           INTEGER,
    rack           TEXT,
    alive          INTEGER NOT NULL CHECK (alive IN (0, 1)),
    first_seen_ms  INTEGER,
    last_seen_ms   INTEGER,
    log_dirs_read  INTEGER NOT NULL CHECK (log_dirs_read IN (0, 1)),
    log_dirs_error TEXT
);

-- table cluster_log_dirs on cluster_log_dirs
CREATE TABLE cluster_log_dirs (
    broker_id    INTEGER NOT NULL,
    path         TEXT NOT NULL,
    error        TEXT,
    total_bytes  INTEGER,
    usable_bytes INTEGER,
    used_bytes   INTEGER NOT NULL,
    replicas     INTEGER NOT NULL,
    PRIMARY KEY (broker_id, path)
) WITHOUT ROWID;

-- table cluster_partitions on cluster_partitions
CREATE TABLE cluster_partitions (
    topic              TEXT NOT NULL,
    partition          INTEGER NOT NULL CHECK (partition >= 0),
    leader             INTEGER,
    leader_epoch       INTEGER,
    replicas           TEXT NOT NULL CHECK (json_valid(replicas)),
    isr                TEXT NOT NULL CHECK (json_valid(isr)),
    offline_replicas   TEXT NOT NULL CHECK (json_valid(offline_replicas)),
    adding             TEXT NOT NULL CHECK (json_valid(adding)),
    removing           TEXT NOT NULL CHECK (json_valid(removing)),
    size_bytes         INTEGER,
    avg_size_bytes     REAL,
    earliest_offset    INTEGER,
    latest_offset      INTEGER,
    offsets_at_ms      INTEGER,
    produced_total     INTEGER NOT NULL,
    consumed_total     INTEGER NOT NULL,
    producer_msg_rate  REAL,
    producer_byte_rate REAL,
    consumer_msg_rate  REAL,
    consumer_byte_rate REAL,
    rate_window_ms     INTEGER, local_start_offset INTEGER,
    PRIMARY KEY (topic, partition)
) WITHOUT ROWID;

-- table cluster_quotas on cluster_quotas
CREATE TABLE cluster_quotas (
    entity         TEXT PRIMARY KEY NOT NULL,
    entity_json    TEXT NOT NULL CHECK (json_valid(entity_json)),
    quota_values   TEXT NOT NULL CHECK (json_valid(quota_values)),
    observed_at_ms INTEGER NOT NULL
);

-- table cluster_replicas on cluster_replicas
CREATE TABLE cluster_replicas (
    topic      TEXT NOT NULL,
    partition  INTEGER NOT NULL,
    broker_id  INTEGER NOT NULL,
    is_future  INTEGER NOT NULL CHECK (is_future IN (0, 1)),
    log_dir    TEXT,
    size_bytes INTEGER,
    offset_lag INTEGER, lag_bytes INTEGER,
    PRIMARY KEY (topic, partition, broker_id, is_future)
) WITHOUT ROWID;

-- table cluster_state on cluster_state
CREATE TABLE cluster_state (
    id                  INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    generation          INTEGER NOT NULL CHECK (generation > 0),
    cluster_id          TEXT,
    controller_id       INTEGER,
    sampled_at_ms       INTEGER NOT NULL,
    sample_duration_ms  INTEGER NOT NULL CHECK (sample_duration_ms >= 0),
    first_sampled_at_ms INTEGER NOT NULL,
    brokers             INTEGER NOT NULL CHECK (brokers >= 0),
    log_dirs_read       INTEGER NOT NULL CHECK (log_dirs_read >= 0),
    partitions          INTEGER NOT NULL CHECK (partitions >= 0),
    offsets_read        INTEGER NOT NULL CHECK (offsets_read >= 0),
    groups              INTEGER NOT NULL CHECK (groups >= 0),
    groups_read         INTEGER NOT NULL CHECK (groups_read >= 0),
    detail              TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
, metadata_mode TEXT, kafka_version_min TEXT, kafka_version_max TEXT, controller_source TEXT, quorum TEXT);

-- table cluster_topics on cluster_topics
CREATE TABLE cluster_topics (
    name               TEXT PRIMARY KEY NOT NULL,
    topic_id           TEXT,
    partitions         INTEGER NOT NULL CHECK (partitions >= 0),
    replication_factor INTEGER NOT NULL CHECK (replication_factor >= 0),
    internal           INTEGER NOT NULL CHECK (internal IN (0, 1)),
    compacted          INTEGER NOT NULL CHECK (compacted IN (0, 1)),
    min_insync         INTEGER,
    retention_ms       INTEGER,
    retention_bytes    INTEGER,
    cleanup_policy     TEXT
, remote_storage INTEGER) WITHOUT ROWID;

-- table consumer_group_offsets on consumer_group_offsets
CREATE TABLE consumer_group_offsets (
    group_id         TEXT NOT NULL,
    topic            TEXT NOT NULL,
    partition        INTEGER NOT NULL,
    committed_offset INTEGER NOT NULL,
    lag              INTEGER,
    PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;

-- table consumer_groups on consumer_groups
CREATE TABLE consumer_groups (
    group_id      TEXT PRIMARY KEY NOT NULL,
    state         TEXT,
    protocol_type TEXT NOT NULL,
    members       INTEGER,
    coordinator   INTEGER,
    offsets_read  INTEGER NOT NULL CHECK (offsets_read IN (0, 1))
) WITHOUT ROWID;

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

-- table maintenance on maintenance
CREATE TABLE maintenance (
    broker_id     INTEGER PRIMARY KEY NOT NULL,
    entered_at_ms INTEGER NOT NULL,
    requested_by  TEXT,
    operation_id  TEXT,
    reason        TEXT
);

-- table moves on moves
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
    finished_at_ms   INTEGER, stalled_since_ms INTEGER, stalled_brokers TEXT
    CHECK (stalled_brokers IS NULL OR (json_valid(stalled_brokers) AND json_type(stalled_brokers) = 'array')),
    PRIMARY KEY (operation_id, seq)
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

-- table operation_realized on operation_realized
CREATE TABLE operation_realized (
    operation_id TEXT PRIMARY KEY NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
    predicted    TEXT NOT NULL CHECK (json_valid(predicted)),
    counts       TEXT CHECK (counts IS NULL OR json_valid(counts)),
    rates        TEXT CHECK (rates IS NULL OR json_valid(rates))
);

-- table operations on operations
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

-- table partition_counters on partition_counters
CREATE TABLE partition_counters (
    topic          TEXT NOT NULL,
    partition      INTEGER NOT NULL,
    at_ms          INTEGER NOT NULL,
    produced_total INTEGER NOT NULL,
    consumed_total INTEGER NOT NULL,
    size_bytes     INTEGER,
    PRIMARY KEY (topic, partition, at_ms)
) WITHOUT ROWID;

-- table partition_readings on partition_readings
CREATE TABLE partition_readings (
    topic              TEXT NOT NULL,
    partition          INTEGER NOT NULL,
    at_ms              INTEGER NOT NULL,
    resolution_ms      INTEGER NOT NULL DEFAULT 0 CHECK (resolution_ms >= 0),
    size_bytes         REAL,
    producer_msg_rate  REAL,
    producer_byte_rate REAL,
    consumer_msg_rate  REAL,
    consumer_byte_rate REAL,
    PRIMARY KEY (topic, partition, at_ms)
) WITHOUT ROWID;

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

-- table proposal_readings on proposal_readings
CREATE TABLE proposal_readings (
    at_ms   INTEGER PRIMARY KEY NOT NULL,
    tripped TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tripped) AND json_type(tripped) = 'array')
);

-- table proposals on proposals
CREATE TABLE proposals (
    id                  TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    created_at_ms       INTEGER NOT NULL,
    checked_at_ms       INTEGER NOT NULL CHECK (checked_at_ms >= created_at_ms),
    current             INTEGER NOT NULL DEFAULT 0 CHECK (current IN (0, 1)),
    fingerprint         TEXT NOT NULL,
    moves_digest        TEXT NOT NULL,
    recommended         INTEGER NOT NULL CHECK (recommended IN (0, 1)),
    application_allowed INTEGER NOT NULL CHECK (application_allowed IN (0, 1)),
    moves               INTEGER NOT NULL CHECK (moves >= 0),
    estimated_bytes     INTEGER NOT NULL CHECK (estimated_bytes >= 0),
    balance_hold        INTEGER NOT NULL CHECK (balance_hold IN (0, 1)),
    plan                TEXT NOT NULL CHECK (json_valid(plan)),
    decision            TEXT NOT NULL CHECK (json_valid(decision)),
    detail              TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
, basis TEXT NOT NULL DEFAULT '');

-- table rolling_restarts on rolling_restarts
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

-- table schema_migrations on schema_migrations
CREATE TABLE schema_migrations (
    version       INTEGER PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    applied_at_ms INTEGER NOT NULL
);

-- table sessions on sessions
CREATE TABLE sessions (
    id                   TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 32),
    cookie_hash          TEXT NOT NULL UNIQUE CHECK (length(cookie_hash) = 64),
    provider             TEXT NOT NULL CHECK (provider <> ''),
    subject              TEXT NOT NULL CHECK (subject <> ''),
    user_id              TEXT NOT NULL CHECK (user_id <> ''),
    name                 TEXT,
    email                TEXT,
    groups               TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(groups)),
    roles                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(roles)),
    scope                TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    refresh_token        TEXT,
    access_expires_at_ms INTEGER,
    created_at_ms        INTEGER NOT NULL,
    expires_at_ms        INTEGER NOT NULL,
    last_seen_at_ms      INTEGER NOT NULL
);

-- table settings on settings
CREATE TABLE settings (
    key           TEXT PRIMARY KEY NOT NULL,
    value         TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- table sqlite_sequence on sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- index agent_commands_open on agent_commands
CREATE INDEX agent_commands_open ON agent_commands (broker_id, state);

-- index api_tokens_owner on api_tokens
CREATE INDEX api_tokens_owner ON api_tokens (owner, created_at_ms);

-- index approvals_state_expires_at_ms on approvals
CREATE INDEX approvals_state_expires_at_ms ON approvals (state, expires_at_ms);

-- index audit_events_action on audit_events
CREATE INDEX audit_events_action ON audit_events (action);

-- index audit_events_at_ms on audit_events
CREATE INDEX audit_events_at_ms ON audit_events (at_ms);

-- index audit_events_intents on audit_events
CREATE INDEX audit_events_intents ON audit_events (status) WHERE status = 102;

-- index audit_events_related_event_id on audit_events
CREATE INDEX audit_events_related_event_id ON audit_events (related_event_id);

-- index audit_events_user_id on audit_events
CREATE INDEX audit_events_user_id ON audit_events (user_id);

-- index auth_logins_expires_at_ms on auth_logins
CREATE INDEX auth_logins_expires_at_ms ON auth_logins (expires_at_ms);

-- index broker_readings_at_ms on broker_readings
CREATE INDEX broker_readings_at_ms ON broker_readings (at_ms);

-- index chat_conversations_user on chat_conversations
CREATE INDEX chat_conversations_user ON chat_conversations (user_id, updated_at_ms);

-- index chat_messages_conversation on chat_messages
CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, id);

-- index cooldowns_moved_at_ms on cooldowns
CREATE INDEX cooldowns_moved_at_ms ON cooldowns (moved_at_ms);

-- index moves_partition on moves
CREATE INDEX moves_partition ON moves (topic, partition);

-- index moves_state on moves
CREATE INDEX moves_state ON moves (state);

-- index operations_created_at_ms on operations
CREATE INDEX operations_created_at_ms ON operations (created_at_ms);

-- index operations_state on operations
CREATE INDEX operations_state ON operations (state);

-- index partition_counters_at_ms on partition_counters
CREATE INDEX partition_counters_at_ms ON partition_counters (at_ms);

-- index partition_readings_at_ms on partition_readings
CREATE INDEX partition_readings_at_ms ON partition_readings (at_ms);

-- index proposals_by_created on proposals
CREATE INDEX proposals_by_created ON proposals (created_at_ms DESC, id DESC);

-- index proposals_one_current on proposals
CREATE UNIQUE INDEX proposals_one_current ON proposals (current) WHERE current = 1;

-- index rolling_restarts_open on rolling_restarts
CREATE INDEX rolling_restarts_open ON rolling_restarts (state);

-- index sessions_expires_at_ms on sessions
CREATE INDEX sessions_expires_at_ms ON sessions (expires_at_ms);

-- trigger audit_events_are_append_only on audit_events
CREATE TRIGGER audit_events_are_append_only
BEFORE UPDATE ON audit_events
WHEN OLD.status <> 102
  OR NEW.id IS NOT OLD.id
  OR NEW.at_ms IS NOT OLD.at_ms
  OR NEW.action IS NOT OLD.action
  OR NEW.method IS NOT OLD.method
  OR NEW.user_id IS NOT OLD.user_id
  OR NEW.requested_by IS NOT OLD.requested_by
  OR NEW.target IS NOT OLD.target
  OR NEW.summary IS NOT OLD.summary
  OR NEW.forced IS NOT OLD.forced
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only: only an intent (status 102) is completed, once');
END;

-- trigger audit_events_only_intents_are_withdrawn on audit_events
CREATE TRIGGER audit_events_only_intents_are_withdrawn
BEFORE DELETE ON audit_events
WHEN OLD.status <> 102
BEGIN
    SELECT RAISE(ABORT, 'audit_events rows are append-only: only an intent (status 102) is withdrawn');
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
