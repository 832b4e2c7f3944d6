//! What the operations answer: the JSON Schema of every answer (the REST envelope's `data`) the
//! operations' families give, by name. An operation names its own in its declaration
//! ([`super::Operation::output`]); the web door's OpenAPI document takes them from here (as
//! `#/components/schemas/<Name>`), and so do the routes of the same families that are not agent
//! operations (a proposal's moves page, the throttle, a proposal delete, …).
//!
//! Written from the endpoint documentation in `docs/api/*.md` and the structs the answers are
//! serialised from. Top-level fields are typed and described; nested rows name their fields in
//! the description where the docs give them. Fields are not marked required: several are left out
//! by a query (`summary=true`) or only present in some states.

use serde_json::{json, Map, Value};

/// A field of `ty` (`string`, `integer`, `number`, `boolean`, `object`, `array`).
pub fn t(ty: &str, description: &str) -> Value {
    json!({"type": ty, "description": description})
}

/// A field of `ty` that may be `null` (unknown, not read yet).
pub fn n(ty: &str, description: &str) -> Value {
    json!({"type": [ty, "null"], "description": description})
}

/// An array of `items`.
pub fn arr(items: Value, description: &str) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

/// An array of objects whose fields the description names.
pub fn rows(description: &str) -> Value {
    arr(json!({"type": "object"}), description)
}

/// An array of broker ids.
pub fn ids(description: &str) -> Value {
    arr(json!({"type": "integer", "format": "int32"}), description)
}

/// A string of the listed values.
pub fn one_of(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

/// A reference to another schema of this list.
pub fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// An object with these fields.
pub fn obj(description: &str, fields: Vec<(&str, Value)>) -> Value {
    let properties: Map<String, Value> = fields
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect();
    json!({"type": "object", "description": description, "properties": properties})
}

/// Every answer schema of the operations' families, by name.
pub fn all() -> Vec<(&'static str, Value)> {
    let mut out = proposals();
    out.extend(reassignments());
    out.extend(simulation());
    out.extend(observed());
    out.extend(typed());
    out.extend(topic_lifecycle());
    out
}

/// The answers of the topic lifecycle (`crate::topic_lifecycle`, docs/api/topics.md).
fn topic_lifecycle() -> Vec<(&'static str, Value)> {
    let assignment = || rows("the new partitions' replicas, leader first: {partition, replicas}");
    let brokers = || {
        rows("every broker's leader and replica count before and after: {brokerId, state, leadersBefore, leadersAfter, replicasBefore, replicasAfter}; disk and rates do not change until data arrives")
    };
    let audit = || {
        n(
            "object",
            "the audit event: {auditEventId, auditError when it was lost}; only once changed",
        )
    };
    vec![
        (
            "TopicCreated",
            obj(
                "A topic's placement, and whether it was created",
                vec![
                    ("topic", t("string", "")),
                    ("partitions", t("integer", "")),
                    ("replicationFactor", t("integer", "")),
                    ("configs", t("object", "the overrides it is created with")),
                    ("assignment", assignment()),
                    ("brokers", brokers()),
                    ("validateOnly", t("boolean", "checked and placed only")),
                    ("created", t("boolean", "")),
                    ("audit", audit()),
                ],
            ),
        ),
        (
            "PartitionsAdded",
            obj(
                "The new partitions' placement, and whether they were added",
                vec![
                    ("topic", t("string", "")),
                    ("partitionsBefore", t("integer", "")),
                    ("partitionsAfter", t("integer", "")),
                    ("replicationFactor", t("integer", "of the new partitions: the topic's")),
                    ("assignment", assignment()),
                    ("brokers", brokers()),
                    ("validateOnly", t("boolean", "")),
                    ("added", t("boolean", "")),
                    ("revertible", t("boolean", "always false: Kafka cannot remove partitions")),
                    ("audit", audit()),
                ],
            ),
        ),
        (
            "ReplicationFactorChange",
            obj(
                "A replication-factor change: the plan, and the operation that runs it",
                vec![
                    ("topic", t("string", "")),
                    ("replicationFactor", t("integer", "the factor asked for")),
                    ("partitions", n("array", "the partitions named; null: every partition")),
                    ("moves", rows("{partition, replicasBefore, replicasAfter}")),
                    ("totalMoves", t("integer", "")),
                    ("estimatedBytes", t("integer", "bytes the added replicas copy (each partition's size as last read, once per added replica)")),
                    ("throttleBytesPerSec", t("number", "the replication throttle the moves run under")),
                    ("estimatedSeconds", n("number", "estimatedBytes over the throttle; null without a throttle")),
                    ("brokers", brokers()),
                    ("validateOnly", t("boolean", "")),
                    ("started", t("boolean", "an operation was queued")),
                    ("operationId", t("string", "the queued operation (GET /api/v1/reassignments/{id}), when started")),
                    ("message", t("string", "why nothing was queued, when nothing changes")),
                ],
            ),
        ),
        (
            "TopicDeleted",
            obj(
                "What a topic deletion loses, and whether it was deleted",
                vec![
                    ("topic", t("string", "")),
                    ("partitions", t("integer", "")),
                    ("sizeBytes", n("integer", "one replica of every partition, as last read; null while a size is unread")),
                    ("replicaBytes", n("integer", "every replica: the disk freed")),
                    ("sizeReadAt", t("string", "when the sizes were read")),
                    ("consumerGroups", arr(json!({"type": "string"}), "groups with committed offsets on it, as last read")),
                    ("validateOnly", t("boolean", "")),
                    ("deleted", t("boolean", "")),
                    ("revertible", t("boolean", "always false: the messages are gone")),
                    ("audit", audit()),
                ],
            ),
        ),
    ]
}

/// The answer schema named `name`.
pub fn find(name: &str) -> Option<Value> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, s)| s)
}

/// The answers of handlers that return a typed struct whose fields use types of other crates:
/// their top-level fields, written from the structs (same names, `camelCase` as serialised).
fn typed() -> Vec<(&'static str, Value)> {
    vec![
        (
            "AclList",
            obj(
                "ACL bindings, by resource type, resource name and principal",
                vec![
                    ("count", t("integer", "")),
                    ("total", t("integer", "")),
                    ("truncated", t("boolean", "")),
                    ("hint", n("string", "(left out when absent)")),
                    ("authorizerEnabled", t("boolean", "False when the cluster has no authorizer (Kafka answers SECURITY_DISABLED): there are no ACLs and every principal may do everything.")),
                    ("bindings", rows("`resourceType`, `resourceName`, `patternType`, `principal`, `host`, `operation`, `permissionType`")),
                ],
            ),
        ),
        (
            "RevertDone",
            obj(
                "A revert done or queued (status 200 for configuration, quota and ACL reverts; 202 for a reassignment revert, with its executionId); with the fields of `Audited`",
                vec![
                    ("executionId", t("string", "")),
                    ("eventId", t("integer", "")),
                    ("kind", t("string", "")),
                    ("state", t("string", "`completed` for configuration, quota and ACL reverts (applied before the answer); `queued` for a reassignment revert.")),
                    ("changes", rows("docs/api/audit.md")),
                    ("note", t("string", "Only when the cluster did not show the change within `BALLAST_READBACK_TIMEOUT` (or could not be read back): why the values read back may not be the changed ones; the audit event's `details` say the same")),
                ],
            ),
        ),
        (
            "TopicConfig",
            obj(
                "A topic's configuration",
                vec![
                    ("topic", t("string", "")),
                    ("count", t("integer", "")),
                    ("entries", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "ConfigSearch",
            obj(
                "Topics by the value of one configuration key, by topic name",
                vec![
                    ("key", t("string", "")),
                    ("value", n("string", "The value compared with (null: every topic).")),
                    ("op", t("string", "`eq`, `ne`, `contains`, `lt`, `le`, `gt` or `ge`.")),
                    ("searched", t("integer", "Topics searched.")),
                    ("count", t("integer", "")),
                    ("total", t("integer", "")),
                    ("truncated", t("boolean", "")),
                    ("hint", n("string", "(left out when absent)")),
                    ("topics", rows("`topic`, `value` (null when sensitive or unset), `source`, `overridden`")),
                    ("errors", rows("`topic`, `error`: topics whose configuration the cluster did not return")),
                ],
            ),
        ),
        (
            "BrokerDefaults",
            obj(
                "Broker configuration as one broker reports it",
                vec![
                    ("broker", t("integer", "")),
                    ("controller", t("boolean", "Whether `broker` is the active controller (KRaft: the metadata quorum's leader).")),
                    ("count", t("integer", "")),
                    ("total", t("integer", "Entries before `keyFilter`.")),
                    ("entries", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "GroupList",
            obj(
                "Consumer groups",
                vec![
                    ("count", t("integer", "")),
                    ("total", t("integer", "")),
                    ("truncated", t("boolean", "")),
                    ("hint", n("string", "(left out when absent)")),
                    ("groups", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "GroupSummary",
            obj(
                "Aggregated consumer-group statistics",
                vec![
                    ("totalGroups", t("integer", "")),
                    ("byState", t("object", "")),
                    ("byProtocolType", t("object", "")),
                    ("totalMembers", t("integer", "")),
                    ("totalLag", t("integer", "")),
                    ("groupsWithLag", t("integer", "Groups with a lag above 0.")),
                    ("groupsWithoutLag", t("integer", "Groups whose lag could not be read (their error is in `topLagging` if they rank).")),
                    ("topLagging", rows("The groups with the largest lag, largest first (then group id).")),
                ],
            ),
        ),
        (
            "GroupDetail",
            obj(
                "A consumer group with its members",
                vec![
                    ("groupId", t("string", "")),
                    ("state", t("string", "Classic: `Stable`, `Empty`, `PreparingRebalance`, ...; consumer (KIP-848) also `Assigning`, `Reconciling`.")),
                    ("groupType", n("string", "`classic` (DescribeGroups), `consumer` (KIP-848, ConsumerGroupDescribe), `share` (KIP-932, ShareGroupDescribe).")),
                    ("groupEpoch", n("integer", "Consumer and share groups only.")),
                    ("assignmentEpoch", n("integer", "The target assignment's epoch; consumer and share groups only.")),
                    ("protocolType", t("string", "")),
                    ("protocol", t("string", "The assignor (e.g. `range`; `uniform` for a consumer group).")),
                    ("coordinator", n("integer", "")),
                    ("members", rows("rows: fields in docs/api/live.md")),
                    ("totalLag", t("integer", "")),
                    ("topics", rows("rows: fields in docs/api/live.md")),
                    ("offsets", rows("Every partition with a committed offset or an assignment, by topic and partition.")),
                ],
            ),
        ),
        (
            "GroupLag",
            obj(
                "A group's lag per partition",
                vec![
                    ("groupId", t("string", "")),
                    ("state", t("string", "")),
                    ("topic", n("string", "")),
                    ("totalLag", t("integer", "")),
                    ("maxLag", t("integer", "")),
                    ("partitionCount", t("integer", "")),
                    ("topics", rows("rows: fields in docs/api/live.md")),
                    ("partitions", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "MessageRange",
            obj(
                "Messages of a range",
                vec![
                    ("topic", t("string", "")),
                    ("partition", n("integer", "")),
                    ("from", t("string", "`earliest`, `latest`, `offset` or `timestamp`.")),
                    ("limit", t("integer", "")),
                    ("count", t("integer", "")),
                    ("keyFilter", n("string", "")),
                    ("valueFilter", n("string", "")),
                    ("scanned", t("integer", "")),
                    ("scanLimitReached", t("boolean", "")),
                    ("partitions", rows("rows: fields in docs/api/live.md")),
                    ("messages", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "SingleMessage",
            obj(
                "One message; with the fields of `Message`",
                vec![
                    ("topic", t("string", "")),
                ],
            ),
        ),
        (
            "Watermarks",
            obj(
                "A topic's offsets per partition",
                vec![
                    ("topic", t("string", "")),
                    ("partitionCount", t("integer", "")),
                    ("totalMessages", t("integer", "")),
                    ("partitions", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "QuotaList",
            obj(
                "Every client quota",
                vec![
                    ("count", t("integer", "")),
                    ("quotas", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "QuotaRow",
            obj(
                "One quota entity",
                vec![
                    ("entity", t("object", "`{\"user\": ..., \"clientId\": ..., \"ip\": ...}`; `<default>` names a default entity.")),
                    ("entityType", t("string", "`user`, `client-id`, `user+client-id` or `ip`, with `default-` for default names.")),
                    ("path", n("string", "The REST path of the entity (none for IP entities, which have no path).")),
                    ("configured", t("boolean", "Whether any quota is set on the entity.")),
                    ("values", t("object", "")),
                ],
            ),
        ),
        (
            "QuotaResolution",
            obj(
                "Effective quotas of a user and client id",
                vec![
                    ("user", n("string", "")),
                    ("clientId", n("string", "")),
                    ("quotas", rows("rows: fields in docs/api/live.md")),
                    ("levels", rows("rows: fields in docs/api/live.md")),
                ],
            ),
        ),
        (
            "AclsCreated",
            obj(
                "Bindings created; with the fields of `Audited`",
                vec![
                    ("count", t("integer", "")),
                    ("failed", t("integer", "")),
                    ("results", rows("rows: fields in docs/api/manage.md")),
                    ("note", t("string", "Only when the cluster did not show the change within `BALLAST_READBACK_TIMEOUT` (or could not be read back): why the values read back may not be the changed ones; the audit event's `details` say the same")),
                ],
            ),
        ),
        (
            "AclUpdated",
            obj(
                "A binding replaced; with the fields of `Audited`",
                vec![
                    ("from", t("object", "")),
                    ("to", t("object", "")),
                ],
            ),
        ),
        (
            "AclsDeleted",
            obj(
                "Bindings deleted; with the fields of `Audited`",
                vec![
                    ("count", t("integer", "")),
                    ("deleted", rows("rows: fields in docs/api/manage.md")),
                ],
            ),
        ),
        (
            "MetadataRefreshed",
            obj(
                "Metadata read afresh; with the fields of `Audited`",
                vec![
                    ("clusterId", n("string", "")),
                    ("controllerId", n("integer", "The active controller: on KRaft the leader of the metadata quorum (DescribeQuorum; what `kafka-metadata-quorum.sh describe --status` prints as `LeaderId`), on ZooKeeper Metadata's controller id; null when there is none or it is unknown (`controllerSource`).")),
                    ("brokers", t("integer", "")),
                    ("topics", t("integer", "")),
                    ("partitions", t("integer", "")),
                    (
                        "observerSample",
                        obj(
                            "The observer sample requested through the database",
                            vec![
                                ("requested", t("boolean", "always true")),
                                ("requestedAt", t("string", "RFC 3339")),
                                ("pollSeconds", t("number", "`BALLAST_SAMPLE_REQUEST_POLL`: the observer starts the sample within about this long")),
                            ],
                        ),
                    ),
                ],
            ),
        ),
        (
            "TopicConfigUpdated",
            obj(
                "A topic's configuration changed; with the fields of `Audited`",
                vec![
                    ("topic", t("string", "")),
                    ("changes", rows("rows: fields in docs/api/manage.md")),
                    ("note", t("string", "Only when the cluster did not show the change within `BALLAST_READBACK_TIMEOUT` (or could not be read back): why the values read back may not be the changed ones; the audit event's `details` say the same")),
                ],
            ),
        ),
        (
            "TopicConfigsUpdated",
            obj(
                "Several topics' configuration changed; with the fields of `Audited`",
                vec![
                    ("topics", rows("rows: fields in docs/api/manage.md")),
                    ("note", t("string", "Only when the cluster did not show the change within `BALLAST_READBACK_TIMEOUT` (or could not be read back): why the values read back may not be the changed ones; the audit event's `details` say the same")),
                ],
            ),
        ),
        (
            "OffsetReset",
            obj(
                "Offsets reset (or the dry run); with the fields of `Option<Audited>`",
                vec![
                    ("groupId", t("string", "")),
                    ("strategy", t("string", "")),
                    ("dryRun", t("boolean", "")),
                    ("applied", t("boolean", "Whether offsets were committed (false for a dry run).")),
                    ("partitions", rows("rows: fields in docs/api/manage.md")),
                ],
            ),
        ),
        (
            "GroupDeleted",
            obj(
                "A group deleted; with the fields of `Audited`",
                vec![
                    ("groupId", t("string", "")),
                    ("deleted", t("boolean", "")),
                    ("offsets", t("integer", "Committed offsets the group had (kept in the audit event).")),
                ],
            ),
        ),
        (
            "QuotaChange",
            obj(
                "A quota entity changed; with the fields of `Audited`",
                vec![
                    ("entity", t("object", "")),
                    ("entityType", t("string", "")),
                    ("path", t("string", "")),
                    ("before", t("object", "")),
                    ("after", t("object", "")),
                    ("note", t("string", "Only when the cluster did not show the change within `BALLAST_READBACK_TIMEOUT` (or could not be read back): why the values read back may not be the changed ones; the audit event's `details` say the same")),
                ],
            ),
        ),
        (
            "AuditList",
            obj(
                "A page of audit events, newest first",
                vec![
                    ("count", t("integer", "")),
                    ("total", t("integer", "")),
                    ("limit", t("integer", "")),
                    ("offset", t("integer", "")),
                    ("hasMore", t("boolean", "More events match after this page.")),
                    ("events", rows("rows: fields in docs/api/audit.md")),
                ],
            ),
        ),
        (
            "RevertPreview",
            obj(
                "What a revert would do",
                vec![
                    ("eventId", t("integer", "")),
                    ("action", t("string", "")),
                    ("target", n("string", "")),
                    ("kind", t("string", "")),
                    ("canRevert", t("boolean", "Whether a revert with this fingerprint would be accepted now.")),
                    ("revertedBy", n("integer", "The `audit.revert` event that already reverted this one; null when none did.")),
                    ("reason", n("string", "Why not, when it would not. (left out when absent)")),
                    ("fingerprint", t("string", "")),
                    ("changes", rows("Items a revert would change.")),
                    ("conflicts", rows("Items changed since the audited change (a revert is refused while there are any).")),
                ],
            ),
        ),
    ]
}

fn sample(mut fields: Vec<(&'static str, Value)>) -> Vec<(&'static str, Value)> {
    fields.push(("coverage", r("Coverage")));
    fields
}

fn list_counts() -> Vec<(&'static str, Value)> {
    vec![
        ("total", t("integer", "rows before the limit")),
        ("count", t("integer", "rows returned")),
        ("truncated", t("boolean", "rows were dropped")),
    ]
}

fn activity(rows_name: &'static str, row_fields: &str) -> Value {
    let mut fields = vec![
        ("observedAt", t("string", "ISO 8601 UTC")),
        ("sortBy", n("string", "")),
        ("clusterTrafficBytesPerSec", n("number", "")),
        ("clusterMessagesPerSec", n("number", "")),
    ];
    fields.extend(list_counts());
    fields.push((rows_name, rows(row_fields)));
    obj("Activity scores: shares of the cluster's traffic in percent; `relative` compares with the mean item (1.0 = average) and gives `level` (`idle`, `low`, `normal`, `hot`, `unknown`)", sample(fields))
}

fn observed() -> Vec<(&'static str, Value)> {
    const RATES: &str =
        "`producerMsgRate`, `producerByteRate`, `consumerMsgRate`, `consumerByteRate`";
    let history_fields = || {
        vec![
            ("brokerId", t("integer", "")),
            ("since", t("string", "")),
            ("until", t("string", "")),
            (
                "loads",
                arr(json!({"type": "string"}), "the load names returned"),
            ),
            ("readings", t("integer", "rows read")),
            (
                "points",
                rows("`at`, `atMs`, `values` keyed by load name (`null` where unknown)"),
            ),
        ]
    };
    vec![
        (
            "Coverage",
            obj(
                "How complete the sample is (unknown values are `null`, never 0)",
                vec![
                    ("brokers", t("integer", "brokers in the metadata")),
                    ("logDirsRead", t("integer", "brokers whose log dirs were read")),
                    ("logDirs", t("number", "fraction")),
                    ("partitions", t("integer", "")),
                    ("offsetsRead", t("integer", "partitions whose log-end offset was read")),
                    ("offsets", t("number", "fraction")),
                    ("ratesKnown", t("integer", "partitions with rates (two readings or more)")),
                    ("rates", t("number", "fraction")),
                    ("groups", t("integer", "consumer groups")),
                    ("groupsRead", t("integer", "groups whose committed offsets were read")),
                    ("complete", t("boolean", "everything above was read and every partition has rates")),
                ],
            ),
        ),
        (
            "ClusterInfo",
            obj(
                "Basic cluster information of the latest sample",
                sample(vec![
                    ("clusterId", n("string", "")),
                    ("controllerId", n("integer", "The active controller: on KRaft the leader of the metadata quorum (DescribeQuorum; what `kafka-metadata-quorum.sh describe --status` prints as `LeaderId`), on ZooKeeper Metadata's controller id; null when there is none or it is unknown (`controllerSource`).")),
                    ("controllerSource", n("string", "`quorum` (KRaft: DescribeQuorum's leader), `metadata` (ZooKeeper: Metadata's controller id), `unknown` (KRaft, DescribeQuorum could not be read)")),
                    ("metadataMode", n("string", "`kraft` (the brokers offer DescribeQuorum) or `zookeeper`; null before a sample read it")),
                    ("kafkaVersion", json!({"type": ["object", "null"], "description": "The Apache Kafka releases the brokers' ApiVersions fit (release markers: crates/kafka/README.md); null before a sample read it", "properties": {"min": n("string", "oldest release it can be, e.g. `3.5`; null: older than 2.4"), "max": n("string", "newest release it can be (inclusive), e.g. `3.6`; null: newer than every known marker"), "text": t("string", "e.g. `3.5 to 3.6`, `4.1 or newer`")}})),
                    ("quorum", json!({"type": ["object", "null"], "description": "KRaft only: the metadata quorum as DescribeQuorum reported it: `leaderId`, `leaderEpoch`, `highWatermark`, `voters[]` and `observers[]` (`id`, `logEndOffset`, `lag` = records behind the leader's log end offset, `lastFetchMs`, `lastCaughtUpMs`, `fetchAgeMs`/`caughtUpAgeMs` = how long before the leader's answer), `nodes[]` (DescribeQuorum v2, Kafka 3.9+: each voter's listeners)"})),
                    ("controllers", r("Controllers")),
                    ("observedAt", t("string", "when the sample was taken")),
                    ("ageMs", t("integer", "how old it is")),
                    ("sampleDurationMs", t("integer", "how long reading the cluster took")),
                    ("historySeconds", t("integer", "how long the observer has been sampling")),
                    ("brokers", obj("`total`, `alive`, `down` (ids)", vec![])),
                    ("racks", t("integer", "distinct racks")),
                    ("topics", t("integer", "")),
                    ("internalTopics", t("integer", "")),
                    ("partitions", t("integer", "")),
                    ("replicas", t("integer", "")),
                    ("offlinePartitions", t("integer", "")),
                    ("underReplicatedPartitions", t("integer", "")),
                    ("consumerGroups", t("integer", "")),
                    ("sizeBytes", n("integer", "sum of partition sizes (one copy)")),
                    ("replicaBytes", n("integer", "all replicas (disk)")),
                    ("producerMsgRate", n("number", "per second; `null` until some partition has rates")),
                    ("producerByteRate", n("number", "")),
                    ("consumerMsgRate", n("number", "")),
                    ("consumerByteRate", n("number", "")),
                ]),
            ),
        ),
        (
            "ClusterComprehensive",
            obj(
                "Everything of one sample",
                sample(vec![
                    ("cluster", r("ClusterInfo")),
                    ("brokers", rows("`id`, `host`, `port`, `rack`, `alive`, `isController` (the active controller: on KRaft the metadata quorum's leader), `firstSeenAt`, `lastSeenAt`, `logDirsRead`, `logDirsError`, `leaders`, `followers`, `replicas`, `futureReplicas`, `diskBytes`, `loads`, `activityScore`")),
                    ("topics", rows("`name`, `topicId`, `internal`, `compacted`, `partitionCount`, `replicationFactor`, `minInsyncReplicas`, `retentionMs`, `retentionBytes`, `cleanupPolicy`, `remoteStorage`, `sizeBytes`, `replicaBytes` (local bytes for a tiered topic), `remoteOffsets`, `remoteBytesEstimate`, `remoteBytesBasis` (tiered topics: how the estimate is made), the four rates, `underReplicatedPartitions`, `offlinePartitions`, `underMinIsrPartitions`, `activityScore`, and `partitions[]` unless `summary=true`; the page's topics without `summary`")),
                    ("consumerGroups", obj("`total`, `byState`, `groups[]` (`groupId`, `state`, `protocolType`, `members`, `coordinator`, `offsetsRead`, `partitions`, `totalLag`)", vec![])),
                    ("health", obj("`status`, `brokersAlive`, `brokersDown`, `offlinePartitions`, `underReplicatedPartitions`, `underMinIsrPartitions`, `atMinIsrPartitions`", vec![])),
                    ("rackAssessment", obj("as in `GET /api/v1/brokers/racks`", vec![])),
                    ("page", obj("`offset`, `limit`, `topics`, `partitions`, `totalTopics`, `totalPartitions`, `nextOffset` (`null` on the last page)", vec![])),
                ]),
            ),
        ),
        (
            "LogDirs",
            obj(
                "Disk usage by broker and log directory",
                sample(vec![
                    ("brokers", rows("`brokerId`, `host`, `rack`, `alive`, `logDirsRead`, `error`, `usedBytes`, `totalBytes`, `usableBytes` (its filesystems, each once: log dirs with equal total and usable bytes are one), `filesystems`, `usedPercent`, `replicaCount`, `assignedReplicas`, `futureReplicas`, `offlineDirs`, and unless `summary`: `dirs[]` (`path`, `error`, `totalBytes`, `usableBytes`, `usedBytes`, `replicaCount`)")),
                    ("totals", obj("`usedBytes`, `totalBytes`, `usableBytes` over the brokers read", vec![])),
                    ("topics", rows("unless `summary`: `topic`, `sizeBytes`, `replicaCount`; largest first")),
                    ("totalTopics", t("integer", "")),
                    ("topicsTruncated", t("boolean", "")),
                    ("partitions", rows("with `topic`/`brokerId`: `topic`, `partition`, `brokerId`, `logDir`, `sizeBytes`, `lagBytes` (bytes behind its leader: the leader's size minus its own, 0 for the leader; a future replica: behind the current replica on its broker), `isFuture`; largest first")),
                    ("totalPartitions", t("integer", "")),
                    ("partitionsTruncated", t("boolean", "")),
                ]),
            ),
        ),
        (
            "Controllers",
            obj(
                "Controllers as nodes: on KRaft every voter and observer of the metadata quorum; on ZooKeeper the controller broker",
                vec![
                    ("metadataMode", n("string", "`kraft` or `zookeeper`")),
                    ("controllerId", n("integer", "the active controller")),
                    ("controllerSource", n("string", "`quorum`, `metadata` or `unknown`")),
                    ("quorum", json!({"type": ["object", "null"], "description": "KRaft: `status`, `text`, `leaderId`, `leaderEpoch`, `highWatermark`, `voters`, `votersUp`, `votersUnknown`, `votersDown`, `fetchTimeoutMs`; null on ZooKeeper"})),
                    ("nodes", rows("`id`, `role` (`controller`: a voter that is no broker; `broker`: an observer, or on ZooKeeper the controller broker; `both`: a voter that is also a broker), `voter`, `leader`, `endpoints[]` (`listener`, `host`, `port`: a voter's from DescribeQuorum v2, a broker's from Metadata), `logEndOffset`, `lag` (records behind the leader), `lastFetchMs`, `fetchAgeMs`, `lastCaughtUpMs`, `caughtUpAgeMs`, `up` (voters: fetching and caught up within `BALLAST_QUORUM_FETCH_TIMEOUT`; null when not known), `downReason`")),
                ],
            ),
        ),
        (
            "ClusterHealth",
            obj(
                "Broker and partition health",
                sample(vec![
                    ("status", one_of(&["critical", "degraded", "healthy"], "`critical` includes no active controller (not an unknown one) and a metadata quorum with fewer than a majority of its voters up; `degraded` a voter down")),
                    ("quorum", json!({"type": ["object", "null"], "description": "KRaft only (null on ZooKeeper or when DescribeQuorum could not be read): `status`, `text` (\"quorum: 2 of 3 voters\"), `leaderId`, `voters`, `votersUp`, `votersUnknown` (no fetch times: DescribeQuorum v0), `votersDown` (ids), `down[]` (`id`, `role`, `reason`). A voter is down when it has not fetched from the quorum leader, or not caught up with it, within `BALLAST_QUORUM_FETCH_TIMEOUT` of the leader's answer"})),
                    ("controllerId", n("integer", "The active controller: on KRaft the leader of the metadata quorum (DescribeQuorum; what `kafka-metadata-quorum.sh describe --status` prints as `LeaderId`), on ZooKeeper Metadata's controller id; null when there is none or it is unknown (`controllerSource`).")),
                    ("controllerSource", n("string", "`quorum`, `metadata` or `unknown`, as in `ClusterInfo`")),
                    ("observedAt", t("string", "")),
                    ("brokers", obj("`total`, `alive`, `down` (ids), `list[]`", vec![])),
                    ("partitions", obj("counts: `total`, `offline`, `underReplicated`, `underReplicatedByReassignment` (of those, partitions whose only missing replicas are ones a reassignment in progress is adding), `underMinIsr`, `atMinIsr`, `eligibleLeaderReplicasReported` (the brokers answer DescribeTopicPartitions, KIP-966), `uncleanElectionRisk` (partitions below min ISR with no eligible leader replica; null when ELR is not reported)", vec![])),
                    ("offlinePartitions", rows("`topic`, `partition`, `leader`, `replicas`, `isr`, `outOfSync`, `minInsyncReplicas`, `eligibleLeaderReplicas`, `lastKnownElr` (KIP-966; null when not reported)")),
                    ("uncleanElectionRiskPartitions", json!({"type": ["array", "null"], "description": "rows as `offlinePartitions`: below min ISR with no eligible leader replica; null when ELR is not reported"})),
                    ("underReplicatedPartitions", rows("as `offlinePartitions`")),
                    ("underMinIsrPartitions", rows("as `offlinePartitions`")),
                    ("atMinIsrPartitions", rows("as `offlinePartitions`")),
                    ("truncated", t("boolean", "a list was cut at `limit`")),
                    ("offlineLogDirs", rows("`brokerId`, `path`, `error`")),
                    ("rackAssessment", obj("`status`, `notRackAwarePartitions`, `notRackAwareDetails`", vec![])),
                ]),
            ),
        ),
        (
            "FollowerLag",
            obj(
                "The follower-lag report (the specification's snake_case shape). Every lag is in bytes: how far a follower is behind its leader, the leader's replica size minus the follower's (DescribeLogDirs, same sample), never below 0. The spec's fields carry it; each `*_bytes` twin names the unit.",
                vec![
                    ("lag_unit", one_of(&["bytes"], "the unit of every lag figure")),
                    ("cluster_total_lag", t("integer", "bytes: sum of the followers' lag behind their leaders")),
                    ("cluster_max_lag", t("integer", "bytes: largest single follower lag")),
                    ("cluster_total_lag_bytes", t("integer", "= `cluster_total_lag`")),
                    ("cluster_max_lag_bytes", t("integer", "= `cluster_max_lag`")),
                    ("broker_lag", arr(obj("", vec![("broker_id", t("integer", "")), ("total_lag", t("integer", "bytes")), ("max_lag", t("integer", "bytes")), ("total_lag_bytes", t("integer", "= `total_lag`")), ("max_lag_bytes", t("integer", "= `max_lag`")), ("replica_count", t("integer", "follower replicas with a known lag"))]), "per broker")),
                    ("topic_lag", arr(obj("", vec![("topic", t("string", "")), ("total_lag", t("integer", "bytes")), ("max_lag", t("integer", "bytes")), ("total_lag_bytes", t("integer", "= `total_lag`")), ("max_lag_bytes", t("integer", "= `max_lag`")), ("partition_count", t("integer", ""))]), "per topic; omitted when `summary=true`")),
                    ("partition_lag", arr(obj("", vec![("topic", t("string", "")), ("partition", t("integer", "")), ("replicas", rows("`broker_id`, `offset_lag` (bytes behind the leader, the spec's name), `lag_bytes` (the same), `is_leader` (the leader's lag is 0)"))]), "omitted when `summary=true`")),
                    ("urp_classification", arr(obj("", vec![("topic", t("string", "")), ("partition", t("integer", "")), ("cause", t("string", "`broker_down`, `log_dir_offline`, `reassignment`, `follower_lag`")), ("lagging_brokers", ids(""))]), "omitted when `summary=true`")),
                ],
            ),
        ),
        (
            "PartitionList",
            obj(
                "Partitions of one sample",
                sample(vec![
                    ("observedAt", t("string", "")),
                    ("total", t("integer", "")),
                    ("offset", t("integer", "")),
                    ("count", t("integer", "")),
                    ("partitions", rows(&format!("`topic`, `partition`, `leader`, `leaderEpoch`, `replicas`, `isr`, `eligibleLeaderReplicas` and `lastKnownElr` (KIP-966, DescribeTopicPartitions: broker ids; null where the cluster does not report ELR, before Kafka 3.8 or on ZooKeeper), `offlineReplicas`, `addingReplicas`, `removingReplicas`, `preferredLeader`, `leaderIsPreferred`, `underReplicated`, `underMinIsr`, `atMinIsr`, `offline`, `minInsyncReplicas`, `rackAware`, `sizeBytes` (a tiered topic's: the local log), `avgSizeBytes`, `earliestOffset`, `latestOffset`, `messages`, `remoteStorage`, `localStartOffset` (ListOffsets earliest-local), `remoteOffsets` (held only remotely), `remoteBytesEstimate` (an estimate: Kafka reports no remote size), {RATES}, `rateWindowSeconds`, `followerLagBytes` (sum of the followers' bytes behind the leader), `activityScore`"))),
                ]),
            ),
        ),
        (
            "Racks",
            obj(
                "Rack topology and assessment",
                vec![
                    ("racks", rows("`rack`, `brokers`, `brokersAlive`, `leaders`, `replicas`, `diskBytes`")),
                    ("brokersWithoutRack", ids("")),
                    ("assessment", obj("`status` (`complete`, `partial`, `no_racks`), `rackCount`, `brokersWithRack`, `brokersWithoutRack`, `notRackAwarePartitions`, `topicsAffected`, `notRackAwareDetails[]`", vec![])),
                ],
            ),
        ),
        ("BrokerLoadHistory", obj("One broker's loads over time", history_fields())),
        (
            "LoadHistory",
            obj(
                "Every broker's loads over time",
                vec![
                    ("since", t("string", "")),
                    ("until", t("string", "")),
                    ("brokers", arr(obj("", history_fields()), "one per broker")),
                ],
            ),
        ),
        (
            "TopicHistory",
            obj(
                "A topic's (or one partition's) size and rates over time",
                vec![
                    ("topic", t("string", "")),
                    ("partition", n("integer", "`null` for the topic's totals")),
                    ("since", t("string", "")),
                    ("until", t("string", "")),
                    (
                        "metrics",
                        arr(json!({"type": "string"}), "`sizeBytes` and the four rates"),
                    ),
                    ("readings", t("integer", "partition readings read")),
                    ("intervalSeconds", t("integer", "`BALLAST_PARTITION_READINGS_INTERVAL`")),
                    (
                        "points",
                        rows("`at`, `atMs`, `values` keyed by metric (sums over the topic's partitions; `null` where unknown)"),
                    ),
                ],
            ),
        ),
        (
            "TopicSearch",
            obj(
                "Topics by name, in name order",
                vec![
                    ("query", t("string", "")),
                    ("match", t("string", "")),
                    ("total", t("integer", "")),
                    ("offset", t("integer", "")),
                    ("count", t("integer", "")),
                    ("truncated", t("boolean", "")),
                    ("topics", rows("as the `topics[]` items of `cluster/comprehensive`, without `partitions`")),
                ],
            ),
        ),
        (
            "PartitionRecommendations",
            obj(
                "Partition-count recommendations",
                sample({
                    let mut f = vec![("observedAt", t("string", ""))];
                    f.extend(list_counts());
                    f.push(("byPriority", obj("`High`, `Medium`, `Low` → count over all", vec![])));
                    f.push(("recommendations", rows("`topic`, `priority`, `kind` (`increase`, `skew`, `reduce`), `currentPartitions`, `recommendedPartitions`, `reason`, `evidence`")));
                    f
                }),
            ),
        ),
        ("ActivityPartitions", activity("partitions", "`topic`, `partition`, `leader`, the four rates, `trafficBytesPerSec`, `messagesPerSec`, `sizeBytes`, `activityScore`, `relative`, `level`")),
        ("ActivityTopics", activity("topics", "`topic`, `partitions`, the four rates, `trafficBytesPerSec`, `messagesPerSec`, `sizeBytes`, `activityScore`, `relative`, `level`, `hottestPartition`")),
        ("ActivityBrokers", activity("brokers", "`brokerId`, `rack`, `alive`, `leaders`, `replicas`, the four rate loads, `trafficBytesPerSec`, `messagesPerSec`, `diskBytes`, `activityScore`, `relative`, `level`")),
    ]
}

fn partition_change_fields() -> Vec<(&'static str, Value)> {
    vec![
        ("currentReplicas", ids("replicas now")),
        ("replicas", ids("replicas planned")),
        ("adding", ids("replicas added")),
        ("removing", ids("replicas removed")),
        ("leaderChange", t("boolean", "the preferred leader changes")),
    ]
}

/// `realized` of one reassignment: predicted vs realized loads (docs/api/reassignments.md).
fn realized() -> Vec<(&'static str, Value)> {
    let by_load = |what: &str| {
        let loads: Vec<(&str, Value)> = ballast_model::Load::ALL
            .into_iter()
            .map(|l| (l.name(), n("number", what)))
            .collect();
        obj(what, loads)
    };
    let load = obj(
        "One load: the farthest broker's distance from fair share, in percent (absolute), before, as predicted and as observed",
        vec![
            ("status", one_of(&["pending", "measured", "unknown", "unavailable"], "`pending` until its reading (counts and disk: the first after completion; rates: the first a full BALLAST_RATE_WINDOW after completion), `unknown` when a rate was not measured (`reason` says how many partitions had none)")),
            ("reason", n("string", "why it is not measured (with until when), null when measured")),
            ("before", n("number", "at the reading the prediction was made from, before the moves")),
            ("predicted", n("number", "the operation's moves applied to that reading")),
            ("observed", n("number", "at the reading after completion")),
            ("errorPercent", n("number", "the largest difference over brokers between a broker's observed and predicted distance from fair share, in percentage points")),
        ],
    );
    let loads: Vec<(&str, Value)> = ballast_model::Load::ALL
        .into_iter()
        .map(|l| (l.name(), r("RealizedLoad")))
        .collect();
    vec![
        ("RealizedLoad", load),
        (
            "RealizedBroker",
            obj(
                "One broker's loads in the load's unit: before, predicted and observed (null while not measured or unknown), and its distance from fair share predicted and observed",
                vec![
                    ("brokerId", t("integer", "")),
                    ("takesLoad", t("boolean", "alive and not in maintenance when predicted: fair shares are counted over these")),
                    ("before", by_load("per load, at the reading the prediction was made from")),
                    ("predicted", by_load("per load, with the moves applied")),
                    ("observed", by_load("per load, at the reading after completion")),
                    ("predictedDistance", by_load("per load, percent from fair share as predicted")),
                    ("observedDistance", by_load("per load, percent from fair share as observed")),
                ],
            ),
        ),
        (
            "Realized",
            obj(
                "Predicted vs realized: the loads the operation's moves were predicted to leave (its moves applied to the latest reading when it was queued) against the readings after it completed",
                vec![
                    ("status", one_of(&["pending", "measured", "unavailable"], "`pending` until the operation completed and its readings were taken, `measured` when every load was read, `unavailable` when it failed or was cancelled or has no prediction")),
                    ("reason", n("string", "why not measured yet (with until when) or unavailable")),
                    ("predictedFrom", n("string", "when the reading the prediction was made from was taken")),
                    ("countsObservedAt", n("string", "the reading after completion that gave counts and disk")),
                    ("ratesObservedAt", n("string", "the reading that gave the rates")),
                    ("ratesDueAt", n("string", "completion + BALLAST_REALIZED_SETTLE + BALLAST_RATE_WINDOW: rates are read at the first reading from then")),
                    ("loads", json!({"type": ["object", "null"], "description": "per load (contract names)", "properties": Value::Object(loads.into_iter().map(|(k, v)| (k.to_string(), v)).collect())})),
                    ("brokers", arr(r("RealizedBroker"), "every broker of the prediction, by id")),
                ],
            ),
        ),
    ]
}

fn reassignments() -> Vec<(&'static str, Value)> {
    let mut single = partition_change_fields();
    single.extend([
        ("preview", t("boolean", "planned only")),
        ("started", t("boolean", "an operation was queued")),
        (
            "operationId",
            t("string", "the queued operation, when started"),
        ),
    ]);
    let mut topic_move = vec![("partition", t("integer", ""))];
    topic_move.extend(partition_change_fields());
    let operation_fields = || {
        vec![
            ("id", t("string", "operation id (`op-…`)")),
            (
                "kind",
                t(
                    "string",
                    "what queued it (`proposal`, `bulk`, `topic`, `drain`, …)",
                ),
            ),
            (
                "strategy",
                t("string", "`PROPOSAL`, `BULK_MANUAL`, `TOPIC`, `DRAIN`, …"),
            ),
            (
                "state",
                one_of(
                    &["Pending", "Active", "Completed", "Failed", "Cancelled"],
                    "progress state",
                ),
            ),
            ("cancelRequested", t("boolean", "")),
            (
                "method",
                t("string", "`MCP`, `CHAT`, `INTERNAL` or the HTTP method"),
            ),
            ("userId", n("string", "acting user")),
            ("requestedBy", n("string", "requester")),
            ("description", n("string", "")),
            ("proposalId", n("string", "the applied proposal")),
            ("forced", t("boolean", "soft checks were overridden")),
            ("reason", n("string", "why it failed or was cancelled")),
            ("createdAt", t("string", "ISO 8601 UTC")),
            ("startedAt", n("string", "")),
            ("finishedAt", n("string", "")),
            ("totalMoves", t("integer", "")),
            ("moves", t("object", "count per progress state: `Pending`, `Active`, `Stalled` (in flight, but a broker it needs is down or its copied bytes stopped growing), `Completed`, `Failed`, `Cancelled`")),
            ("bytesTotal", n("integer", "")),
            ("bytesDone", n("integer", "")),
            ("rateBytesPerSecond", n("number", "the in-flight moves' current rates, summed")),
            (
                "averageRateBytesPerSecond",
                n("number", "bytes done over the time running, once it has run 10 s"),
            ),
            (
                "etaSeconds",
                n("number", "seconds left for the unfinished moves that are not stalled, from `etaBasis`'s rate; null when unknown, finished or every unfinished move is stalled"),
            ),
            (
                "etaBasis",
                one_of(
                    &["average_rate", "current_rate", "unknown", "stalled", "finished"],
                    "the rate the ETA divides by: the average since the start once it has run 10 s and copied something, else the current rate; `stalled` when every unfinished move is stalled (no ETA)",
                ),
            ),
            (
                "etaLeavesOut",
                n("object", "the stalled moves the ETA does not count: `stalledMoves` and their `bytesLeft`; null when none is stalled or the operation finished"),
            ),
            ("auditEventId", n("integer", "")),
        ]
    };
    let mut with_partitions = operation_fields();
    with_partitions.push(("partitions", rows("every move: `topic`, `partition`, `state` (Pending, Active, Stalled with `reason`, `stalledSince` and `stalledBrokers`, Completed, Failed with `reason`, Cancelled), `stalledSince` (since when a stalled move's cause holds; null otherwise), `stalledBrokers` (the brokers down a stalled move needs, `[]` when it stalls for want of progress; null otherwise), `sourceReplicas`, `targetReplicas`, `step`, `steps`, `submittedReplicas`, `submittedAt`, `submissions`, `bytesTotal`, `bytesDone`, `rateBytesPerSecond` (null while not measured), `etaSeconds` (null when stalled), `reason`, `timedOut`, `cancelConfirmed`, `startedAt`, `finishedAt`")));
    with_partitions.push(("realized", r("Realized")));
    let mut out = realized();
    out.extend(vec![
        (
            "ApplyResult",
            obj(
                "A proposal queued for the executor",
                vec![
                    ("started", t("boolean", "")),
                    ("operationId", t("string", "")),
                    ("proposalId", t("string", "")),
                    ("moves", t("integer", "moves queued")),
                    ("skipped", rows("partitions with no healthy target")),
                    ("forced", t("boolean", "soft reasons were overridden with `force=true`")),
                    ("overridden", arr(json!({"type": "string"}), "the soft reasons overridden")),
                ],
            ),
        ),
        ("PartitionChange", obj("One partition's planned change", single)),
        (
            "BulkResult",
            obj(
                "The bulk reassignment's outcome",
                vec![
                    ("results", rows("one per request entry, in request order: `partition`, `success`, `preview`, `currentReplicas`, `replicas`, `adding`, `removing`, `leaderChange`, or `error` when rejected")),
                    ("started", t("boolean", "an operation started; present when the request has a live entry")),
                    ("bulkId", t("string", "the operation id; present when started")),
                    ("message", t("string", "outcome summary; present when the request has a live entry")),
                ],
            ),
        ),
        (
            "TopicRedistribution",
            obj(
                "A topic's redistribution plan",
                vec![
                    ("topic", t("string", "")),
                    ("preview", t("boolean", "")),
                    ("brokers", ids("the brokers spread over")),
                    ("moves", arr(obj("", topic_move), "partitions that change")),
                    ("totalMoves", t("integer", "")),
                    ("estimatedBytes", t("integer", "")),
                    ("started", t("boolean", "")),
                    ("operationId", n("string", "when started")),
                ],
            ),
        ),
        ("ReassignmentSummary", obj("A reassignment operation", operation_fields())),
        (
            "ReassignmentList",
            obj(
                "Operations, newest first",
                vec![
                    ("reassignments", arr(r("ReassignmentSummary"), "")),
                    ("total", t("integer", "operations stored (of the state asked for)")),
                    ("limit", t("integer", "")),
                    ("offset", t("integer", "")),
                    ("slot", n("object", "the current holder of the mutation slot")),
                ],
            ),
        ),
        ("Reassignment", obj("A reassignment operation with its partitions", with_partitions)),
        (
            "CancelRequested",
            obj(
                "A cancellation asked of the executor",
                vec![
                    ("id", t("string", "")),
                    ("state", t("string", "`Cancelling`")),
                    ("message", t("string", "")),
                ],
            ),
        ),
        (
            "Throttle",
            obj(
                "The replication throttle",
                vec![
                    ("rateMb", t("integer", "the rate in force, MB/s")),
                    ("configuredRateMb", t("integer", "`BALLAST_THROTTLE_RATE_MB`")),
                    ("maxRateMb", t("integer", "`BALLAST_THROTTLE_MAX_RATE_MB`")),
                    ("managed", t("boolean", "`BALLAST_THROTTLE_MANAGED`")),
                    ("overridden", t("boolean", "the rate was set through the API")),
                    (
                        "pending",
                        arr(
                            t("string", "one change"),
                            "throttle changes the executor's last pass could not confirm (a broker down or refusing); retried every pass",
                        ),
                    ),
                    (
                        "kept",
                        arr(
                            t("string", "target, config and why"),
                            "throttles set in the cluster that ballast's moves do not need, kept because a reassignment in progress that ballast does not track (another tool's) needs them; cleared by the first pass after it completes",
                        ),
                    ),
                ],
            ),
        ),
        (
            "MaintenanceEntered",
            obj(
                "A broker in maintenance",
                vec![
                    ("brokerId", t("integer", "")),
                    ("maintenance", t("boolean", "true")),
                    ("drain", t("boolean", "a drain was queued")),
                    ("operationId", n("string", "the drain")),
                    ("leadershipMoves", t("integer", "phase 0")),
                    ("replicaMoves", t("integer", "phase 1")),
                    ("skipped", rows("partitions with nowhere to go")),
                ],
            ),
        ),
        (
            "MaintenanceExited",
            obj(
                "Maintenance ended",
                vec![
                    ("brokerId", t("integer", "")),
                    ("maintenance", t("boolean", "false")),
                    ("drain", json!({"type": ["object", "null"], "description": "The broker's drain when one was still running: `operationId`, `movesDone`, `movesTotal`, and `cancelled` (false with `keepDrain=true`); null when none ran", "properties": {"operationId": t("string", ""), "movesDone": t("integer", ""), "movesTotal": t("integer", ""), "cancelled": t("boolean", "")}})),
                    ("message", t("string", "what happened, in words")),
                ],
            ),
        ),
        (
            "LogDirMoves",
            obj(
                "Log-directory moves",
                vec![
                    ("brokerId", t("integer", "")),
                    ("results", rows("`topic`, `partition`, `from`, `to`, `success`, `error`")),
                ],
            ),
        ),
        (
            "Election",
            obj(
                "A preferred leader election",
                vec![
                    ("scope", t("string", "the cluster or the topic")),
                    ("elected", t("integer", "")),
                    ("notNeeded", t("integer", "")),
                    ("failed", t("integer", "")),
                    ("results", rows("`topic`, `partition`, `outcome` (`elected`, `not needed`, `failed`), `error`")),
                ],
            ),
        ),
    ]);
    out
}

fn simulation() -> Vec<(&'static str, Value)> {
    vec![
        (
            "WhatIfScenario",
            json!({
                "type": "object",
                "description": "One scenario; which fields apply depends on `type` (docs/api/simulation.md)",
                "required": ["type"],
                "properties": {
                    "type": {"type": "string", "enum": ["addBrokers", "removeBrokers", "decommissionBrokers", "changeReplicationFactor", "scaleTraffic", "addTopic"]},
                    "count": {"type": "integer", "description": "addBrokers: how many"},
                    "brokerIds": {"type": "array", "items": {"type": "integer"}, "description": "addBrokers, removeBrokers"},
                    "rack": {"type": "string", "description": "addBrokers"},
                    "topic": {"type": "string", "description": "changeReplicationFactor, scaleTraffic (optional), addTopic"},
                    "replicationFactor": {"type": "integer", "minimum": 1, "maximum": 16, "description": "changeReplicationFactor, addTopic"},
                    "factor": {"type": "number", "minimum": 0, "description": "scaleTraffic"},
                    "sizeFactor": {"type": "number", "minimum": 0, "description": "scaleTraffic, default 1"},
                    "partitions": {"type": "integer", "minimum": 1, "maximum": 100000, "description": "addTopic"},
                    "minInsyncReplicas": {"type": "integer", "description": "addTopic, default 1"},
                    "sizeBytes": {"type": "number", "description": "addTopic"},
                    "producerMsgRate": {"type": "number", "description": "addTopic"},
                    "producerByteRate": {"type": "number", "description": "addTopic"},
                    "consumerMsgRate": {"type": "number", "description": "addTopic"},
                    "consumerByteRate": {"type": "number", "description": "addTopic"}
                }
            }),
        ),
        (
            "WhatIfRequest",
            json!({
                "type": "object",
                "required": ["scenarios"],
                "properties": {
                    "scenarios": {"type": "array", "minItems": 1, "items": r("WhatIfScenario"), "description": "applied in order"},
                    "limit": {"type": "integer", "description": "moves listed, default 1000, at most 100000"}
                }
            }),
        ),
        (
            "WhatIfResult",
            obj(
                "The changed cluster and what it needs",
                vec![
                    ("scenarios", rows("each scenario as applied: `index`, `type`, `summary`, `brokerIds`, `topic`, `partitions`")),
                    ("brokers", rows("every broker of the changed cluster: `brokerId`, `rack`, `change`, `state`, `takesLoad`, `takesLoadAfter`, `loads`, `distance`, `loadsBeforeMoves`, `distanceBeforeMoves`, `loadsAfter`, `distanceAfter`")),
                    ("fairShare", obj("`before` and `after`, keyed by load name", vec![])),
                    ("movement", obj("`moves`, `bytes`, `replicasAdded`, `replicasRemoved`, `leaderChanges`, `byCostClass`, `byCause`, `transfer`", vec![])),
                    ("moves", rows("`topic`, `partition`, `replicasBefore`, `replicasAfter`, `leaderBefore`, `leaderAfter`, `costClass`, `bytes`, `cause`")),
                    ("movesTruncated", t("boolean", "more moves than `limit`")),
                    ("addedTopics", rows("`topic`, `partitions`, `requestedReplicationFactor`, `replicationFactor`, `placement[]`, `placementTruncated`")),
                    ("plan", obj("the planner on the changed cluster: `recommended`, `reason`, `balanceHold`, `downBrokers`, `evennessBefore`, `evennessAfter`, `effectiveBefore`, `effectiveAfter`, `structuralLimits[]`, `loads`", vec![])),
                    ("warnings", rows("`code`, `scenario`, `message`")),
                ],
            ),
        ),
        (
            "BlastRequest",
            json!({
                "type": "object",
                "description": "Exactly one of `brokerId`, `brokerIds`, `rack`",
                "properties": {
                    "brokerId": {"type": "integer"},
                    "brokerIds": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
                    "rack": {"type": "string"},
                    "limit": {"type": "integer", "description": "entries per list, default 100, at most 1000"}
                }
            }),
        ),
        (
            "BlastResult",
            obj(
                "The effects of the failure",
                vec![
                    ("failure", obj("`kind` (`broker`, `brokers`, `rack`), `rack`, `brokers`, `alreadyDown`, `brokersRemaining`", vec![])),
                    ("summary", obj("counts: `partitionsAffected`, `offline`, `underMinIsr`, `atMinIsr`, `underReplicated`, `leadersLost`, `leadersFailedOver`, `replicasLost`, `topicsAffected`, `consumerGroupsAffected`", vec![])),
                    ("offline", obj("`count`, `truncated`, `partitions[]`", vec![])),
                    ("underMinIsr", obj("`count`, `truncated`, `partitions[]`", vec![])),
                    ("atMinIsr", obj("`count`, `truncated`, `partitions[]`", vec![])),
                    ("leadership", obj("`lost`, `failedOver`, `offline`, `changes[]`, `changesTruncated`, `byBroker[]`", vec![])),
                    ("reReplication", obj("`replicasLost`, `replicasToRebuild`, `bytesToReplicate`, `replicasUnavailable`, `bytesUnavailable`, `replicasWithoutDestination`, `bytesWithoutDestination`, `destinations[]`, `transfer`", vec![])),
                    ("consumerGroups", obj("`count`, `truncated`, `groups[]`", vec![])),
                    ("topics", obj("`count`, `truncated`, `topics[]`", vec![])),
                ],
            ),
        ),
    ]
}

const LOADS: &str = "keyed by load name (`leaderCount`, `followerCount`, `diskBytes`, `producerMsgRate`, `producerByteRate`, `consumerMsgRate`, `consumerByteRate`)";

fn decision() -> Value {
    obj(
        "The authoritative readiness decision",
        vec![
            ("applicationAllowed", t("boolean", "whether the proposal may be applied now")),
            ("nextAction", t("string", "what happens or is needed next")),
            ("reason", n("string", "`warming_up`, `data_not_ready` (a load is still being measured; `nextAction` names which and how long), `not_recommended`, `balance_held` (also when an allowed plan only repairs), `confirming`, `benefit_unconfirmed`, `throttles_externally_managed`, `operation_in_progress` (an operation or a rolling restart runs; `nextAction` names it and how far it is)")),
            ("unsafeReasons", arr(json!({"type": "string"}), "reasons the plan is unsafe to apply")),
            ("readingsBeyondTrigger", t("integer", "readings in a row (no gap over three sample intervals) the same broker stayed beyond the trigger")),
            ("readingsRequired", t("integer", "readings needed (4)")),
            ("freshMeasurements", t("integer", "of those, the newest in a row taken after this observer's warm-up whose plan was recommended and helped the broker")),
            ("freshRequired", t("integer", "fresh measurements needed (3)")),
            ("warmupRemainingMs", n("integer", "measurement warm-up left")),
        ],
    )
}

fn proposals() -> Vec<(&'static str, Value)> {
    vec![
        ("ProposalDecision", decision()),
        (
            "ProposalSummary",
            obj(
                "A proposal's summary row",
                vec![
                    ("id", t("string", "`p-<created unix ms>-<8 hex digits>`")),
                    ("createdAt", t("string", "ISO 8601 UTC")),
                    ("checkedAt", t("string", "when it was last checked for applicability")),
                    ("current", t("boolean", "it is the current proposal")),
                    ("superseded", t("boolean", "a newer proposal replaced it: its decision was about the cluster as it was then, and only the current proposal can be applied")),
                    ("candidateAvailable", t("boolean", "current and has moves; does not mean it can be applied")),
                    ("recommended", t("boolean", "the planner's benefit test")),
                    ("totalReassignments", t("integer", "moves")),
                    ("estimatedBytes", t("integer", "bytes the moves copy")),
                    ("balanceHold", t("boolean", "balancing paused while a broker is down")),
                    ("fingerprint", t("string", "hash of the topology planned on")),
                    ("decision", r("ProposalDecision")),
                ],
            ),
        ),
        (
            "ProposalList",
            obj(
                "A page of proposals, newest first",
                vec![
                    ("total", t("integer", "stored proposals")),
                    ("offset", t("integer", "rows skipped")),
                    ("count", t("integer", "rows returned")),
                    ("truncated", t("boolean", "more rows follow")),
                    ("proposals", arr(r("ProposalSummary"), "the rows")),
                ],
            ),
        ),
        (
            "Proposal",
            obj(
                "A rebalancing proposal (docs/api/proposals.md)",
                vec![
                    ("id", t("string", "`p-<created unix ms>-<8 hex digits>`")),
                    ("createdAt", t("string", "ISO 8601 UTC")),
                    ("checkedAt", t("string", "when it was last checked for applicability")),
                    ("current", t("boolean", "it is the current proposal")),
                    ("superseded", t("boolean", "a newer proposal replaced it: its decision was about the cluster as it was then, and only the current proposal can be applied")),
                    ("candidateAvailable", t("boolean", "current and has moves; does not mean it can be applied")),
                    ("recommended", t("boolean", "the planner's benefit test")),
                    ("reason", n("string", "why it is not recommended, as a code: `balance_held` (also when a repair plan is recommended), `too_few_brokers`, `balanced`, `no_move_helps`, `not_beneficial`, `likely_not_beneficial`")),
                    ("reasonText", n("string", "the same in words")),
                    ("decision", r("ProposalDecision")),
                    ("fingerprint", t("string", "hash of the topology planned on")),
                    ("fairShare", obj("`shares[]`: every broker (`brokerId`, `rack`, `state`, `takesLoad`, `loads`, `distance`, `loadsAfter`, `distanceAfter`); `loads`: per load `fairShare`, `counted`, `noTraffic`, `measuring`, `belowFloor`, `triggered`, `maxDistanceBefore`, `maxDistanceAfter`, `largestDifference`, `busiestBroker`, `quietestBroker`", vec![
                        ("shares", rows("every broker")),
                        ("loads", t("object", LOADS)),
                    ])),
                    ("topicSpread", obj("`atLimit`: keyed by `topic@broker`, pairs at their topic's spread cap (`topic`, `brokerId`, `replicas`, `cap`); the cap counts before and after the plan", vec![
                        ("atLimit", t("object", "keyed by `topic@broker`: the first 100 pairs by key")),
                        ("atLimitTotal", t("integer", "pairs at their topic's cap, every one counted")),
                        ("atLimitTruncated", t("boolean", "more pairs than `atLimit` holds")),
                        ("overCap", n("integer", "topic/broker pairs holding more replicas of the topic than its cap, before the plan")),
                        ("projectedOverCap", n("integer", "the same once the plan is done")),
                        ("excessLeaders", n("integer", "leaders beyond their topic's leader cap `ceil(partitions / eligible brokers)`, summed over brokers, before the plan")),
                        ("projectedExcessLeaders", n("integer", "the same once the plan is done")),
                        ("excessReplicas", n("integer", "replicas beyond their topic's spread cap, summed over brokers, before the plan")),
                        ("projectedExcessReplicas", n("integer", "the same once the plan is done")),
                    ])),
                    ("rackAwareness", n("object", "partitions whose replicas sit on fewer racks than `min(replication factor, racks)`: `racks` (racks of the brokers that take load; 0 when not assessed), `violationsBefore`, `violationsAfter`, `repaired`, `limits[]` (`partitions`, `cause`, `proof`, `remediation`) for those that stay; null in proposals stored before plans reported it")),
                    ("benefitEvidence", obj("evidence of imbalance", vec![
                        ("tripped", rows("brokers beyond the trigger: `brokerId`, `load`, `distanceBefore`, `distanceAfter`, `helped`")),
                        ("topicBreaches", rows("topic/broker pairs above the spread cap before the plan, most replicas beyond the cap first, at most 100: `topic`, `brokerId`, `replicas`, `cap`, `replicasAfter`")),
                        ("topicBreachesTotal", t("integer", "every such pair counted")),
                        ("topicBreachesTruncated", t("boolean", "more pairs than `topicBreaches` holds")),
                    ])),
                    ("structuralLimits", rows("`brokerId`, `load`, `distance`, `cause` (`large partition`, `rack layout`, `messages vs bytes`, `no move helps`, `recent moves`), `remediation`")),
                    ("metrics", obj("evenness figures", vec![
                        ("effective", n("number", "half the distance of the farthest broker, after the plan")),
                        ("effectiveBefore", n("number", "the same before the plan")),
                        ("evennessBefore", n("number", "")),
                        ("evennessAfter", n("number", "")),
                    ])),
                    ("movement", obj("what the moves cost", vec![
                        ("estimatedBytes", t("integer", "bytes copied")),
                        ("costClasses", t("object", "every move counted, per cost class (`leader-only`, `inter-broker`, `cross-rack`): `moves` and `bytes`")),
                        ("search", n("object", "optimizer diagnostics")),
                        ("planningMs", n("number", "planning time in milliseconds (fractional)")),
                    ])),
                    ("balance", t("object", &format!("per load, {LOADS}: `imbalance`, `imbalanceAfter`, `counted`, `noTraffic` (measured below the No traffic threshold), `measuring` (null once measured; else `readings`, `needed`, `remainingMs`: the load is unknown and not balanced yet), `belowFloor`, `triggered`, `largestDifference`, `busiestBroker`, `quietestBroker`, `stop` (`measuring`, `no_traffic`, `below_floor`, `within_threshold`, `within_trigger` or `limit`) and `stopReason` (where the load ends and why, with the numbers)"))),
                    ("balanceHold", t("boolean", "balancing paused while a broker is down (only repairs are planned)")),
                    ("downBrokers", ids("brokers that are down")),
                    ("reassignments", arr(r("ProposalMove"), "the first 100 moves in the planner's order (the order the executor submits them in); `GET /api/v1/proposals/{proposalId}/moves` pages the whole list")),
                    ("totalReassignments", t("integer", "moves in the plan")),
                    ("reassignmentsTruncated", t("boolean", "more moves than `reassignments` holds")),
                    ("reassignmentsNext", n("string", "the path of the next page of moves; null when `reassignments` holds every move")),
                ],
            ),
        ),
        (
            "ProposalMoves",
            obj(
                "A page of a proposal's moves",
                vec![
                    ("proposalId", t("string", "the proposal")),
                    ("checkedAt", t("string", "when the proposal was last checked")),
                    ("sort", one_of(&["plan", "bytes", "partition"], "the order")),
                    ("total", t("integer", "moves matching the filters")),
                    ("offset", t("integer", "moves skipped")),
                    ("limit", t("integer", "page size")),
                    ("count", t("integer", "moves returned")),
                    ("truncated", t("boolean", "more moves follow")),
                    ("next", n("string", "the path of the next page; null on the last")),
                    ("moves", arr(r("ProposalMove"), "the page")),
                ],
            ),
        ),
        (
            "ProposalMove",
            obj(
                "One partition move of a plan",
                vec![
                    ("topic", t("string", "")),
                    ("partition", t("integer", "")),
                    ("replicasBefore", ids("replicas now")),
                    ("replicasAfter", ids("replicas after the move")),
                    ("leaderBefore", n("integer", "")),
                    ("leaderAfter", n("integer", "")),
                    ("costClass", one_of(&["leader-only", "inter-broker", "cross-rack"], "movement cost class")),
                    ("bytes", t("integer", "bytes copied")),
                ],
            ),
        ),
        (
            "ProposalDeleted",
            obj(
                "A deleted proposal",
                vec![
                    ("id", t("string", "")),
                    ("deleted", t("boolean", "true")),
                    ("auditEventId", t("integer", "the audit event `proposals.delete`")),
                    ("auditError", n("string", "set when the event could not be completed (the proposal was deleted)")),
                ],
            ),
        ),
    ]
}
