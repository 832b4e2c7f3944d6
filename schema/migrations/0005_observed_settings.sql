-- 0005_observed_settings: broker configurations, ACLs and client quotas as the observer last read
-- them, so operators (and the dashboard) can inspect them with plain SQL while the cluster is away.
-- Each table is replaced as a whole by one observer pass; `observations` rows `brokerConfigs` and
-- `security` say when and whether that pass succeeded. Sensitive values are never stored.

-- Every broker's configuration entries (static, dynamic and defaults) with their source.
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

-- ACL bindings.
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

-- Client quotas per entity (`entity` is its path, e.g. `user=alice/client-id=app-1`; `entity_json`
-- the parts; `quota_values` the quotas by key).
CREATE TABLE cluster_quotas (
    entity         TEXT PRIMARY KEY NOT NULL,
    entity_json    TEXT NOT NULL CHECK (json_valid(entity_json)),
    quota_values   TEXT NOT NULL CHECK (json_valid(quota_values)),
    observed_at_ms INTEGER NOT NULL
);
