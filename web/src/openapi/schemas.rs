//! The schemas of the web door itself: the envelopes (success is built in `openapi.rs`, failure
//! and licence failure here), the transports' own answers (server-sent events, JSON-RPC errors),
//! and the answers of the web process's own routes (health, readiness, version, authentication,
//! tokens, notices, self-healing status, licence). Every answer of an operation's family is
//! `ballast_ops::catalog::outputs`, which [`all`] includes. Handlers name them with
//! `body = ref("Name")`.

use ballast_ops::catalog::outputs::{arr, n, obj, one_of, r, rows, t};
use serde_json::{json, Value};

/// Every schema of the document, by name: the web door's and the operations' answers.
pub(super) fn all() -> Vec<(&'static str, Value)> {
    let mut out = vec![
        (
            "ServerSentEvent",
            json!({
                "type": "object",
                "description": "One server-sent event as a client reads it: its `event` name, its `data` (JSON text, docs per route), optionally `id` and `retry`",
                "properties": {
                    "event": {"type": "string"},
                    "data": {"type": "string"},
                    "id": {"type": "string"},
                    "retry": {"type": "integer"}
                }
            }),
        ),
        (
            "TailEvent",
            json!({
                "type": "object",
                "description": "One event of the live tail (docs/api/live.md): `subscribed` (the topic, filters and each partition's start offset), `message` (one record), `error` (reading failed); `data` is JSON text",
                "required": ["data"],
                "properties": {
                    "event": {"type": "string", "enum": ["subscribed", "message", "error"]},
                    "data": {"type": "string"},
                    "id": {"type": "string"},
                    "retry": {"type": "integer"}
                }
            }),
        ),
        (
            "JsonRpcError",
            json!({
                "type": "object",
                "description": "A JSON-RPC 2.0 error: how the MCP transport refuses a request (docs/api/mcp.md)",
                "required": ["jsonrpc", "error"],
                "properties": {
                    "jsonrpc": {"type": "string", "const": "2.0"},
                    "id": {"type": ["string", "integer", "null"]},
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"type": "integer"},
                            "message": {"type": "string"},
                            "data": {}
                        }
                    }
                }
            }),
        ),
        (
            "Error",
            json!({
                "type": "object",
                "description": "The failure envelope",
                "required": ["success", "error", "details"],
                "properties": {
                    "success": {"type": "boolean", "const": false},
                    "error": {"type": "string", "description": "What failed"},
                    "details": {"type": "string", "description": "The underlying error text"}
                }
            }),
        ),
        (
            "LicenseError",
            json!({
                "type": "object",
                "description": "The license failure envelope (status 403 on a licensed route in monitoring mode)",
                "required": ["data", "error"],
                "properties": {
                    "data": {"type": "null"},
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"type": "string", "enum": ["LICENSE_INVALID", "LICENSE_EXPIRED"]},
                            "message": {"type": "string"}
                        }
                    }
                }
            }),
        ),
    ];
    out.extend(system());
    out.push(("LicenseStatus", license_status()));
    out.extend(ballast_ops::catalog::outputs::all());
    out
}

fn license_status() -> Value {
    obj(
        "License status (`GET /api/v1/license`)",
        vec![
            ("state", one_of(&["licensed", "trial", "expired", "invalid"], "the license state")),
            ("reason", n("string", "why the best source has this state")),
            ("message", t("string", "a sentence for people")),
            ("management_enabled", t("boolean", "licensed routes are open (licensed or trial)")),
            ("source", n("string", "where the best license came from (`env`, `file`, `fetched`)")),
            ("key", n("string", "the key that verified it")),
            ("sub", n("string", "customer the license was issued to")),
            ("lic", n("string", "license identifier")),
            ("notes", n("string", "the license's notes")),
            ("issued_at", n("string", "ISO 8601 UTC")),
            ("not_before", n("string", "ISO 8601 UTC")),
            ("expires_at", n("string", "license expiry, ISO 8601 UTC")),
            ("leeway_seconds", t("integer", "clock-skew leeway (300)")),
            ("trial", obj("the demo trial: `state` (`not_offered`, `pending`, `refused`, `active`, `ended`), `message`, `started_at`, `ends_at`, `cluster_id`, `days`", vec![])),
            ("sources", rows("every source's verdict: `source`, `state`, `reason`, `message`, `lic`, `sub`, `expires_at`")),
            ("fetch", obj("auto-fetch: `enabled`, `disabled_because`, `url`, `interval_seconds`, `last_attempt_at`, `last_result`, `last_error`, `last_success_at`, `last_stored`", vec![])),
        ],
    )
}

fn system() -> Vec<(&'static str, Value)> {
    vec![
        (
            "SelfHealingStatus",
            obj(
                "The healer's latest report and the healing settings",
                vec![
                    ("reported", t("boolean", "false until the healer's first report")),
                    ("dryRun", t("boolean", "`BALLAST_HEAL_DRY_RUN`")),
                    ("window", n("object", "`start`, `end` (UTC, `BALLAST_HEAL_WINDOW_START`/`_END`); `null` = any time")),
                    ("maxPartitionsPerRun", n("integer", "`BALLAST_HEAL_MAX_PARTITIONS_PER_RUN`; `null` = unlimited")),
                    ("license", n("string", "the license state the healer saw")),
                    ("skipped", n("string", "why the latest pass applied nothing (a skip reason), `null` when it did not skip")),
                    ("lastPassAt", n("string", "")),
                    ("passes", n("integer", "passes since the healer started")),
                    ("skippedTotal", n("object", "skip reason → loop passes skipped for it since the healer started (every reason, 0 included)")),
                    ("loops", rows("the three loops, highest priority first (`critical`, `replicationFactor`, `activity`): `loop`, `enabled`, `lastPassAt`, `lastDecision` (`applied`, `skipped`, `disabled`), `reason` (a skip reason), `why`, `then` (in a dry run, the gate that would have stopped it next), `moves`/`moveCount` (what it applied, or in a dry run would have), `dryRun` (`at`, `wouldMove`, `wouldMoveCount` of its last dry run), `window`, `cooldownUntil`, `lastOperationId`, `lastAppliedAt`")),
                    ("heartbeatAt", n("string", "")),
                    ("heartbeatAgeMs", n("integer", "")),
                ],
            ),
        ),
        (
            "Health",
            obj(
                "Liveness, with every process's state",
                vec![
                    ("status", one_of(&["ok", "degraded"], "`degraded` when a worker is not running or its heartbeat is stale")),
                    ("degraded", arr(json!({"type": "string"}), "names of the degraded workers")),
                    ("uptimeSeconds", t("integer", "since this web process started")),
                    ("supervisor", n("object", "`pid`, `startedAt`")),
                    ("workers", rows("one per worker (`observer`, `executor`, `healer`, `web`): `name`, `state`, `pid`, `restarts`, `startedAt`, `lastExit`, `lastExitAt`, `heartbeatAt`, `heartbeatAgeMs`, `detail` (the worker's last report without its lists: the healer's moves and the executor's throttled partitions are cluster data, for authenticated callers in `GET /api/v1/self-healing/status` and the reassignment endpoints)")),
                    ("detailsAsOf", t("string", "when the process and heartbeat rows were read: the probes read through a connection of their own, answer from their last read when it is under 250 ms old, and from it too when the database does not answer within 25 ms")),
                ],
            ),
        ),
        (
            "Ready",
            obj(
                "The observer's view of the brokers is fresh",
                vec![
                    ("ready", t("boolean", "always true on a 200")),
                    ("observedAt", t("string", "when the brokers were last read (RFC 3339)")),
                    ("ageMs", t("integer", "how old that reading is")),
                ],
            ),
        ),
        (
            "AuthProviders",
            obj(
                "Login providers (`AUTH_PROVIDERS`)",
                vec![
                    ("enabled", t("boolean", "whether authentication is on")),
                    ("patEnabled", t("boolean", "whether personal access tokens are accepted")),
                    ("providers", rows("`name`, `displayName`, `loginUrl` (start a login here), `redirectUri` (register this at the provider)")),
                ],
            ),
        ),
        (
            "AuthMe",
            obj(
                "Who the request acts as",
                vec![
                    ("authEnabled", t("boolean", "whether authentication is on")),
                    ("userId", t("string", "the name audit events record")),
                    ("name", n("string", "display name")),
                    ("email", n("string", "email address")),
                    ("provider", n("string", "the login provider")),
                    ("groups", arr(json!({"type": "string"}), "groups from the provider")),
                    ("roles", arr(json!({"type": "string"}), "role-shaped claims from the provider")),
                    ("scope", one_of(&["read", "write"], "what the identity may do")),
                    ("via", one_of(&["session", "token", "open"], "how the request proved who it is (`open`: authentication is off)")),
                    ("sessionId", n("string", "the session (not the cookie)")),
                    ("tokenId", n("string", "the personal access token used")),
                    ("expiresAt", n("string", "when the session ends (RFC 3339)")),
                ],
            ),
        ),
        (
            "AuthLogout",
            obj(
                "A finished logout",
                vec![
                    ("loggedOut", t("boolean", "whether a session was ended")),
                    ("endSessionUrl", n("string", "the provider's end-session endpoint, for a sign-out there too")),
                ],
            ),
        ),
        (
            "AccessToken",
            obj(
                "A personal access token (never its value)",
                vec![
                    ("id", t("string", "token id")),
                    ("name", t("string", "what it is for")),
                    ("scope", one_of(&["read", "write"], "what it may do")),
                    ("userId", t("string", "whose it is")),
                    ("status", one_of(&["active", "expired", "revoked"], "whether it works")),
                    ("createdAt", t("string", "RFC 3339")),
                    ("expiresAt", n("string", "RFC 3339; null: never")),
                    ("lastUsedAt", n("string", "RFC 3339, to the minute")),
                    ("revokedAt", n("string", "RFC 3339")),
                ],
            ),
        ),
        (
            "AccessTokenCreated",
            obj(
                "A new token: the fields of AccessToken, and its value, shown this once",
                vec![
                    ("id", t("string", "token id")),
                    ("token", t("string", "the value: `pat_` and 256 random bits; only its HMAC is stored")),
                    ("name", t("string", "what it is for")),
                    ("scope", one_of(&["read", "write"], "what it may do")),
                    ("expiresAt", n("string", "RFC 3339; null: never")),
                    ("auditEventId", n("integer", "the audit event of the creation")),
                ],
            ),
        ),
        (
            "AccessTokens",
            obj(
                "The current user's tokens",
                vec![
                    ("patEnabled", t("boolean", "whether tokens are accepted")),
                    ("tokens", arr(r("AccessToken"), "newest first")),
                ],
            ),
        ),
        (
            "ThirdPartyNotices",
            obj(
                "Every crate compiled into the binary with its licence and licence text (generated by cargo-about)",
                vec![
                    ("generator", t("string", "the tool and version that generated the list")),
                    ("target", t("string", "the target the dependency tree was resolved for")),
                    ("count", t("integer", "crates")),
                    ("crates", t("array", "by name and version: `name`, `version`, `license` (SPDX expression), `repository`, `licenseTexts` (indices into `licenses`)")),
                    ("licenses", t("array", "`id` (SPDX), `name`, `text`")),
                ],
            ),
        ),
        (
            "Version",
            obj(
                "Version and build information",
                vec![
                    ("name", t("string", "`ballast`")),
                    ("version", t("string", "release number")),
                    ("commit", t("string", "source commit")),
                    ("buildTime", t("string", "build time (RFC 3339)")),
                    ("schemaVersion", t("integer", "database schema version")),
                    ("apiVersion", t("string", "`v1`")),
                ],
            ),
        ),
    ]
}
