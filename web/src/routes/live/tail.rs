//! The live tail: new messages of a topic as server-sent events.
//!
//! The handler checks the request and fixes the starting positions (each partition's high
//! watermark) before answering, so a bad request is an ordinary error envelope. A task then polls
//! the partitions and hands events to the response through a small bounded channel: a slow client
//! holds the task back instead of growing a buffer, and a client that goes away drops the
//! channel's receiver, which ends the task.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use ballast_kafka::{Client, Error as KafkaError, OffsetSpec, TopicPartition};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

use super::{fail, kafka_name, non_empty};
use crate::extract::{Path, Query};
use crate::{ApiError, AppState};
use ballast_ops::cluster::connection_level;
use ballast_ops::messages::{partitions_of, select_partition, watermarks_of};
use ballast_ops::payload::{Filters, Message, PREVIEW_BYTES};

/// Events waiting for the client, at most.
const CHANNEL_EVENTS: usize = 16;
/// Bytes asked per Fetch of one partition.
const TAIL_FETCH_BYTES: i32 = 256 * 1024;
/// Wait after a round over every partition that found nothing new.
const IDLE_POLL: Duration = Duration::from_millis(250);
/// Wait after a failed read before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
const DEFAULT_KEEPALIVE_SECS: u64 = 15;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TailQuery {
    /// Only this partition.
    #[param(minimum = 0)]
    partition: Option<i32>,
    /// Only messages whose key contains this.
    key_filter: Option<String>,
    /// Only messages whose value contains this.
    value_filter: Option<String>,
    /// Seconds between `keepalive` comments, 1 to 300 (default 15).
    #[param(minimum = 1, maximum = 300)]
    keepalive: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Position {
    partition: i32,
    offset: i64,
}

/// The receiving half of the channel as the `Stream` that `Sse` sends.
struct Events(mpsc::Receiver<Event>);

impl futures_core::Stream for Events {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|e| e.map(Ok))
    }
}

fn event(name: &str, data: &impl Serialize) -> Event {
    Event::default()
        .event(name)
        .json_data(data)
        .unwrap_or_else(|_| {
            Event::default()
                .event("error")
                .data("{\"error\":\"unserializable event\"}")
        })
}

#[utoipa::path(
    get,
    path = "/api/v1/topics/{topic}/messages/tail",
    tag = "messages",
    operation_id = "tailMessages",
    summary = "Stream new messages (server-sent events)",
    description = "New messages as server-sent events from the end of the log, with `keepalive` comments; the stream ends when ballast stops. docs/api/live.md.",
    params(("topic" = String, Path, description = "topic name"), TailQuery),
    responses(
        (status = 200, description = "A stream of server-sent events, one event per message", content_type = "text/event-stream", body = ref("TailEvent")),
        (status = 404, description = "Unknown topic or partition"),
        (status = 502, description = "The cluster answered with an error"),
        (status = 503, description = "The cluster is unreachable"),
    )
)]
/// `GET /api/v1/topics/{topic}/messages/tail`: `subscribed` once, then a `message` event per new
/// matching record, `error` events when reading fails, and a `keepalive` comment periodically.
pub async fn tail(
    State(state): State<AppState>,
    Path(topic): Path<String>,
    Query(q): Query<TailQuery>,
) -> Result<Sse<impl futures_core::Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let keepalive = q.keepalive.unwrap_or(DEFAULT_KEEPALIVE_SECS);
    if !(1..=300).contains(&keepalive) {
        return Err(ApiError::bad_request(
            "invalid query",
            format!("keepalive: expected 1 to 300 seconds, got {keepalive}"),
        ));
    }
    let filters = Filters {
        key: non_empty(q.key_filter),
        value: non_empty(q.value_filter),
    };
    let client = state.kafka.client().await?;
    let all = partitions_of(&state, &client, &topic).await?;
    let selected = select_partition(&topic, all, q.partition)?;
    let ids: Vec<i32> = selected.iter().map(|(p, _)| *p).collect();
    let marks = watermarks_of(&client, &topic, &ids)
        .await
        .map_err(|e| fail(&state, e))?;
    let mut positions = Vec::with_capacity(ids.len());
    for p in &ids {
        match marks.get(p) {
            Some(Ok((_, high))) => positions.push(Position {
                partition: *p,
                offset: *high,
            }),
            Some(Err(e)) => {
                return Err(ApiError::unavailable(
                    "partition unavailable",
                    format!("partition {p} of {topic}: {e}"),
                ))
            }
            None => {
                return Err(ApiError::unavailable(
                    "partition unavailable",
                    format!("no watermark for partition {p} of {topic}"),
                ))
            }
        }
    }
    let (tx, rx) = mpsc::channel(CHANNEL_EVENTS);
    let subscribed = event(
        "subscribed",
        &json!({"topic": topic, "partitions": positions, "keyFilter": filters.key, "valueFilter": filters.value}),
    );
    // The channel is empty: this cannot wait.
    let _ = tx.try_send(subscribed);
    tokio::spawn(follow(state, client, topic, positions, filters, tx));
    Ok(Sse::new(Events(rx)).keep_alive(
        KeepAlive::new()
            .interval(Duration::from_secs(keepalive))
            .text("keepalive"),
    ))
}

/// Polls every partition from its position until the client goes away (`tx` closed), the topic
/// is gone, or the process is stopping (the stream then ends, so shutdown is not held open).
async fn follow(
    state: AppState,
    mut client: Client,
    topic: String,
    mut positions: Vec<Position>,
    filters: Filters,
    tx: mpsc::Sender<Event>,
) {
    loop {
        let mut found = false;
        for pos in positions.iter_mut() {
            let tp = TopicPartition::new(topic.clone(), pos.partition);
            let fetched = tokio::select! {
                _ = tx.closed() => return,
                _ = state.stopping() => return,
                r = client.fetch(&tp, pos.offset, TAIL_FETCH_BYTES) => r,
            };
            match fetched {
                Ok(f) => {
                    for r in &f.records {
                        found = true;
                        if filters.matches(r) {
                            let m = Message::from_record(pos.partition, r, PREVIEW_BYTES);
                            let e =
                                event("message", &m).id(format!("{}:{}", m.partition, m.offset));
                            if tx.send(e).await.is_err() {
                                return;
                            }
                        }
                    }
                    pos.offset = f.next_offset.max(pos.offset);
                }
                Err(e) if kafka_name(&e) == Some("OFFSET_OUT_OF_RANGE") => {
                    // Retention or truncation moved the log under us: continue inside it.
                    if let Ok(listed) = client
                        .list_offsets(std::slice::from_ref(&tp), OffsetSpec::Earliest)
                        .await
                    {
                        if let Some(low) = listed.first().and_then(|o| o.offset) {
                            pos.offset = pos.offset.max(low);
                        }
                    }
                    if let Ok(listed) = client
                        .list_offsets(std::slice::from_ref(&tp), OffsetSpec::Latest)
                        .await
                    {
                        if let Some(high) = listed.first().and_then(|o| o.offset) {
                            pos.offset = pos.offset.min(high);
                        }
                    }
                }
                Err(e) => {
                    let gone = matches!(e, KafkaError::UnknownTopicOrPartition { .. })
                        || kafka_name(&e) == Some("UNKNOWN_TOPIC_OR_PARTITION");
                    let details = ballast_runtime::error_chain(&e);
                    let error = if gone { "topic deleted" } else { "read failed" };
                    let body =
                        json!({"error": error, "details": details, "partition": pos.partition});
                    if tx.send(event("error", &body)).await.is_err() || gone {
                        return;
                    }
                    if connection_level(&e) {
                        state.kafka.reset().await;
                        if let Ok(fresh) = state.kafka.client().await {
                            client = fresh;
                        }
                    }
                    tokio::select! {
                        _ = tx.closed() => return,
                        _ = state.stopping() => return,
                        _ = tokio::time::sleep(RETRY_AFTER) => {}
                    }
                }
            }
        }
        if !found {
            tokio::select! {
                _ = tx.closed() => return,
                _ = state.stopping() => return,
                _ = tokio::time::sleep(IDLE_POLL) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};

    use super::*;

    async fn state_for(bootstrap: &str, dir: &std::path::Path) -> AppState {
        let db = dir.join("ballast.db");
        ballast_schema::Store::migrate(&db).expect("migrate");
        let store = ballast_schema::Store::open(&db).expect("open");
        let raw = ballast_config::RawConfig::from_pairs(
            [(
                "BALLAST_KAFKA_BOOTSTRAP_SERVERS".to_string(),
                bootstrap.to_string(),
            )],
            None,
        )
        .expect("raw");
        let config = ballast_config::Config::from_raw(&raw).expect("config");
        AppState::new(
            store,
            Arc::new(config),
            Arc::new(ballast_runtime::SystemClock),
        )
    }

    /// The follower of a client that went away stops, whether it was handing records over or
    /// recovering from a position outside the log.
    #[tokio::test]
    async fn the_follower_stops_when_the_client_goes_away() {
        let sim = SimCluster::start(SimConfig {
            scenario: Scenario::Generate(GenerateParams {
                brokers: 1,
                racks: 0,
                topics: 1,
                partitions_per_topic: 2,
                replication_factor: 1,
                mean_msg_rate: 1000.0,
                ..GenerateParams::default()
            }),
            ..SimConfig::default()
        })
        .await
        .expect("sim");
        let dir = tempfile::tempdir().expect("dir");
        let state = state_for(&sim.bootstrap(), dir.path()).await;
        let client = state.kafka.client().await.expect("client");
        let topic = sim.snapshot().partitions[0].topic.clone();
        for (offset, what) in [(i64::MAX / 2, "out of range"), (0, "busy")] {
            let (tx, rx) = mpsc::channel(1);
            let positions = vec![Position {
                partition: 0,
                offset,
            }];
            let task = tokio::spawn(follow(
                state.clone(),
                client.clone(),
                topic.clone(),
                positions,
                Filters::default(),
                tx,
            ));
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(rx);
            tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .unwrap_or_else(|_| panic!("{what} follower still running"))
                .expect("follower");
        }
    }
}
