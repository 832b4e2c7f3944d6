-- 0003_proposals: the observer's rebalancing proposals and the readings they are decided on.
--
-- After every successful sample the observer plans the observed cluster, records which brokers
-- were beyond the trigger (`proposal_readings`) and keeps the result as the current proposal
-- (`proposals`, exactly one row with current = 1). Written by the observer; the web process
-- reads both and may delete proposals that are not current.

-- One reading per evaluation: the brokers beyond the trigger on any counted load (JSON array of
-- broker ids). A bounded number is kept, newest last, so a restarted observer keeps its history.
CREATE TABLE proposal_readings (
    at_ms   INTEGER PRIMARY KEY NOT NULL,
    tripped TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tripped) AND json_type(tripped) = 'array')
);

-- Proposals, newest first by created_at_ms. `checked_at_ms` is when it was last checked for
-- applicability (an unchanged plan updates it and its decision instead of adding a row).
-- `fingerprint` is a stable hash of the topology planned on (brokers, their states and every
-- partition's replicas); `moves_digest` a hash of the moves. `plan` is the `ballast.plan/v1`,
-- `decision` the readiness decision, `detail` what the observer adds for the API (per-broker
-- shares, topic spread at its cap).
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
);

-- At most one current proposal.
CREATE UNIQUE INDEX proposals_one_current ON proposals (current) WHERE current = 1;
CREATE INDEX proposals_by_created ON proposals (created_at_ms DESC, id DESC);
