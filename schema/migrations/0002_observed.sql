-- 0002_observed: what the observer knows about the cluster.
--
-- Two kinds of tables. State tables (`cluster_*`, `consumer_group*`) hold the current view and are
-- replaced by every successful sample, in one transaction, so a reader always sees one whole
-- sample. Readings (`broker_readings`, `partition_counters`) are time series: per-broker loads
-- kept for BALLAST_READINGS_RETENTION (older ones downsampled), and per-partition counters kept
-- only as long as the rate window (BALLAST_RATE_WINDOW) needs them. Written by the observer only.

-- The latest successful sample: one row (id = 1), absent until the observer first read the cluster.
-- `generation` grows by one with every sample; readers use it to notice a new view cheaply.
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
);

-- Brokers in the metadata (alive = 1) and brokers that hold replicas but are missing from it
-- (alive = 0). A broker that is gone and holds nothing is forgotten.
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

-- Every log directory of every broker whose log dirs were read.
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
) WITHOUT ROWID;

-- One row per partition. `replicas`, `isr`, `offline_replicas`, `adding`, `removing` are JSON
-- arrays of broker ids (`replicas` in assignment order, the first is the preferred leader).
-- `produced_total` and `consumed_total` are the observer's monotonic counters (messages appended;
-- messages consumed summed over groups); rates are averaged over `rate_window_ms` and NULL until
-- the partition has two readings.
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
    rate_window_ms     INTEGER,
    PRIMARY KEY (topic, partition)
) WITHOUT ROWID;

-- Every replica of the assignment (with what its broker's log dirs said, NULL when unread) and
-- every future replica (an AlterReplicaLogDirs move in progress, is_future = 1).
CREATE TABLE cluster_replicas (
    topic      TEXT NOT NULL,
    partition  INTEGER NOT NULL,
    broker_id  INTEGER NOT NULL,
    is_future  INTEGER NOT NULL CHECK (is_future IN (0, 1)),
    log_dir    TEXT,
    size_bytes INTEGER,
    offset_lag INTEGER,
    PRIMARY KEY (topic, partition, broker_id, is_future)
) WITHOUT ROWID;

CREATE TABLE consumer_groups (
    group_id      TEXT PRIMARY KEY NOT NULL,
    state         TEXT,
    protocol_type TEXT NOT NULL,
    members       INTEGER,
    coordinator   INTEGER,
    offsets_read  INTEGER NOT NULL CHECK (offsets_read IN (0, 1))
) WITHOUT ROWID;

-- Committed offsets of every group; `lag` = the partition's log end minus the committed offset
-- (NULL when the log end is unknown).
CREATE TABLE consumer_group_offsets (
    group_id         TEXT NOT NULL,
    topic            TEXT NOT NULL,
    partition        INTEGER NOT NULL,
    committed_offset INTEGER NOT NULL,
    lag              INTEGER,
    PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;

-- The seven loads of every broker per sample (names as `ballast_model::Load::name()`, columns in
-- snake case). `resolution_ms` is 0 for a raw sample and the bucket width for a downsampled row
-- (the average of the samples in the bucket, stamped with the bucket start). NULL = unknown (e.g.
-- disk of a broker whose log dirs were not read).
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

CREATE INDEX broker_readings_at_ms ON broker_readings (at_ms);

-- Per-partition counters at some samples inside the rate window: the rolling rates run from the
-- oldest of them to the newest sample. Pruned once older than the window.
CREATE TABLE partition_counters (
    topic          TEXT NOT NULL,
    partition      INTEGER NOT NULL,
    at_ms          INTEGER NOT NULL,
    produced_total INTEGER NOT NULL,
    consumed_total INTEGER NOT NULL,
    size_bytes     INTEGER,
    PRIMARY KEY (topic, partition, at_ms)
) WITHOUT ROWID;

CREATE INDEX partition_counters_at_ms ON partition_counters (at_ms);
