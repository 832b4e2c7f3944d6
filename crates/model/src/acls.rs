//! Kafka's ACL vocabulary as the API writes it: the names a binding's fields take (a concrete
//! binding: the filters' `Any` and `Match` are not among them). The operations' parsers, the
//! OpenAPI document and the dashboard's forms all read these.

/// Resource types.
pub const RESOURCE_TYPES: [&str; 6] = [
    "Topic",
    "Group",
    "Cluster",
    "TransactionalId",
    "DelegationToken",
    "User",
];
/// Pattern types.
pub const PATTERN_TYPES: [&str; 2] = ["Literal", "Prefixed"];
/// Operations.
pub const OPERATIONS: [&str; 14] = [
    "All",
    "Read",
    "Write",
    "Create",
    "Delete",
    "Alter",
    "Describe",
    "ClusterAction",
    "DescribeConfigs",
    "AlterConfigs",
    "IdempotentWrite",
    "CreateTokens",
    "DescribeTokens",
    "TwoPhaseCommit",
];
/// Permission types.
pub const PERMISSIONS: [&str; 2] = ["Allow", "Deny"];
