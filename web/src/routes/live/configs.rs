//! Topic configuration (every entry, or only the topic's own overrides), the broker default
//! configuration and the search of topics by a configuration value: REST adapters of
//! `ballast_ops::configs`.

use axum::extract::State;
pub(crate) use ballast_ops::configs::*;

use crate::extract::{Path, Query};
use crate::{ApiOk, ApiResult, AppState};

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/config",
    tag = "topics",
    operation_id = "getTopicConfig",
    summary = "Topic configuration",
    description = "Every configuration entry of the topic as the cluster reports it, with its source.",
    params(("topic" = String, Path, description = "topic name"), TopicConfigQuery)
    // responses: declared by the operation `get_topic_config` (ballast_ops::catalog)
)]
/// `GET /api/v1/topics/{topic}/config`: every configuration entry of the topic with its source.
pub async fn topic_config(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TopicConfigQuery>,
) -> ApiResult<TopicConfig> {
    Ok(ApiOk(get_topic_config(&state, topic, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/config/explicit",
    tag = "topics",
    operation_id = "getTopicConfigExplicit",
    summary = "Explicitly set topic configuration",
    description = "Only the entries set on the topic itself.",
    params(("topic" = String, Path, description = "topic name"), TopicConfigQuery),
    responses(
        (status = 200, description = "Explicitly set topic configuration", body = ref("TopicConfig")),
        (status = 404, description = "Unknown topic"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/topics/{topic}/config/explicit`: only the entries set on the topic itself.
pub async fn topic_config_explicit(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TopicConfigQuery>,
) -> ApiResult<TopicConfig> {
    Ok(ApiOk(get_topic_config_explicit(&state, topic, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/config/defaults",
    tag = "topics",
    operation_id = "getConfigDefaults",
    summary = "Default broker configuration",
    description = "The broker configuration as one broker (default the controller) reports it.",
    params(DefaultsQuery)
    // responses: declared by the operation `get_default_configs` (ballast_ops::catalog)
)]
/// `GET /api/v1/config/defaults`: the configuration one broker runs with (Kafka's defaults, its
/// static file, cluster-wide and per-broker dynamic values), by default the controller's.
pub async fn broker_defaults(
    State(state): State<AppState>,
    Query(q): Query<DefaultsQuery>,
) -> ApiResult<BrokerDefaults> {
    Ok(ApiOk(get_default_configs(&state, q).await?))
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/config-search",
    tag = "topics",
    operation_id = "searchTopicsByConfig",
    summary = "Search topics by a configuration value",
    description = "Every topic's effective value of one configuration key, read live from the cluster, filtered by a comparison (`eq`, `ne`, `contains`, numeric `lt`/`le`/`gt`/`ge`) and whether the topic overrides it; by topic name.",
    params(ConfigSearchQuery)
    // responses: declared by the operation `search_topics_by_config` (ballast_ops::catalog)
)]
/// `GET /api/v1/topics/config-search`: topics by the value of one configuration key.
pub async fn search(
    State(state): State<AppState>,
    Query(q): Query<ConfigSearchQuery>,
) -> ApiResult<ConfigSearch> {
    Ok(ApiOk(search_topics_by_config(&state, q).await?))
}
