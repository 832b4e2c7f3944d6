//! A topic's lifecycle over REST: create, add partitions, change the replication factor,
//! delete. Adapters over the operations of `ballast_ops::topic_lifecycle`, where the rules
//! live (docs/api/topics.md).

use axum::extract::State;
use ballast_ops::reassignments::ForceQuery;
use ballast_ops::topic_lifecycle::{
    add_partitions, change_replication_factor, create_topic, delete_topic, AddPartitions,
    ChangeReplicationFactor, CreateTopic, DeleteTopic,
};
use serde::Deserialize;
use serde_json::Value;

use crate::audit::HttpActor;
use crate::extract::{Json, Path, Query};
use crate::{ApiOk, ApiResult, AppState};

/// `POST /api/v1/topics`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicCreateBody)]
pub struct CreateBody {
    /// The topic's name.
    #[schema(min_length = 1, max_length = 249, pattern = "^[A-Za-z0-9._-]+$")]
    name: String,
    /// Partitions, 1 to 10,000.
    #[schema(minimum = 1, maximum = 10000)]
    partitions: i64,
    /// Replicas of each partition, 1 to 16 (at most the brokers that take load).
    #[schema(minimum = 1, maximum = 16)]
    replication_factor: i64,
    /// Configuration overrides: key → string, number or boolean.
    #[serde(default)]
    #[schema(value_type = Object)]
    configs: std::collections::BTreeMap<String, Value>,
    /// The replicas of every partition, in partition order, leader first (default: placed by
    /// ballast): `partitions` lists of `replicationFactor` distinct brokers that are up.
    #[serde(default)]
    #[schema(max_items = 10000)]
    assignment: Option<Vec<Vec<i32>>>,
    /// Check and place only; create nothing.
    #[serde(default)]
    validate_only: bool,
}

/// `POST /api/v1/topics/{topic}/partitions`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicPartitionsBody)]
pub struct PartitionsBody {
    /// The new total number of partitions (more than the topic has).
    #[schema(minimum = 2)]
    count: i64,
    /// The replicas of each new partition, in partition order, leader first (default: placed
    /// by ballast).
    #[serde(default)]
    #[schema(max_items = 10000)]
    assignment: Option<Vec<Vec<i32>>>,
    /// Check and place only; add nothing.
    #[serde(default)]
    validate_only: bool,
}

/// `PUT /api/v1/topics/{topic}/replication-factor`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopicReplicationFactorBody)]
pub struct ReplicationFactorBody {
    /// The replication factor wanted, 1 to 16.
    #[schema(minimum = 1, maximum = 16)]
    replication_factor: i64,
    /// Only these partitions (default: all).
    #[serde(default)]
    partitions: Option<Vec<i32>>,
    /// Plan only; queue nothing.
    #[serde(default)]
    validate_only: bool,
}

#[utoipa::path(
    post,
    path = "/api/v1/topics",
    tag = "topics",
    operation_id = "createTopic",
    summary = "Create a topic",
    description = "Creates a topic with the replicas ballast places (rack-aware, fair shares of leaders and replicas, the topic spread evenly); `validateOnly` answers the placement and changes nothing.",
    request_body(content = CreateBody)
    // responses: declared by the operation `create_topic` (ballast_ops::catalog)
)]
pub async fn create(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Json(b): Json<CreateBody>,
) -> ApiResult<Value> {
    let body = CreateTopic {
        name: b.name,
        partitions: b.partitions,
        replication_factor: b.replication_factor,
        configs: b.configs,
        assignment: b.assignment,
        validate_only: b.validate_only,
    };
    Ok(ApiOk(create_topic(&state, &actor, body).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/topics/{topic}/partitions",
    tag = "topics",
    operation_id = "addPartitions",
    summary = "Add partitions to a topic",
    description = "Raises the partition count to `count`, the new partitions placed by ballast. A lower count is refused: Kafka cannot remove partitions.",
    params(("topic" = String, Path, description = "topic name")),
    request_body(content = PartitionsBody)
    // responses: declared by the operation `add_partitions` (ballast_ops::catalog)
)]
pub async fn partitions(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Json(b): Json<PartitionsBody>,
) -> ApiResult<Value> {
    let body = AddPartitions {
        count: b.count,
        assignment: b.assignment,
        validate_only: b.validate_only,
    };
    Ok(ApiOk(add_partitions(&state, &actor, topic, body).await?))
}

#[utoipa::path(
    put,
    path = "/api/v1/topics/{topic}/replication-factor",
    tag = "topics",
    operation_id = "changeReplicationFactor",
    summary = "Change a topic's replication factor",
    description = "Raises or lowers the replication factor as throttled reassignments the executor runs (strategy `REPLICATION_FACTOR`); `validateOnly` answers the plan.",
    params(("topic" = String, Path, description = "topic name"), ForceQuery),
    request_body(content = ReplicationFactorBody)
    // responses: declared by the operation `change_replication_factor` (ballast_ops::catalog)
)]
pub async fn replication_factor(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Query(q): Query<ForceQuery>,
    Json(b): Json<ReplicationFactorBody>,
) -> ApiResult<Value> {
    let body = ChangeReplicationFactor {
        replication_factor: b.replication_factor,
        partitions: b.partitions,
        validate_only: b.validate_only,
    };
    Ok(ApiOk(
        change_replication_factor(&state, &actor, topic, q, body).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/v1/topics/{topic}",
    tag = "topics",
    operation_id = "deleteTopic",
    summary = "Delete a topic",
    description = "Deletes the topic and its messages; refused while a reassignment moves it, or while consumer groups have committed offsets on it unless `force=true`. `validateOnly=true` answers what would be lost.",
    params(("topic" = String, Path, description = "topic name"), DeleteTopic)
    // responses: declared by the operation `delete_topic` (ballast_ops::catalog)
)]
pub async fn delete(
    State(state): State<AppState>,
    HttpActor(actor): HttpActor,
    Path(topic): Path<String>,
    Query(q): Query<DeleteTopic>,
) -> ApiResult<Value> {
    Ok(ApiOk(delete_topic(&state, &actor, topic, q).await?))
}
