-- 0006_partition_readings: a time series per partition, beside the per-broker one.
--
-- One row per partition every BALLAST_PARTITION_READINGS_INTERVAL (default 1 h): the partition's
-- size and its four rates as averaged over the rate window at that time (`NULL` = not known
-- yet). Kept for BALLAST_READINGS_RETENTION; rows older than a day are folded into daily
-- averages (`resolution_ms` says which). Written by the observer only; read by
-- `GET /api/v1/topics/{topic}/history`.
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

CREATE INDEX partition_readings_at_ms ON partition_readings (at_ms);
