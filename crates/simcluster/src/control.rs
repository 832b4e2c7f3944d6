//! The control API: JSON over HTTP on its own loopback port. Tests and the demo change the
//! scenario while it runs and read the simulator's truth. Routes are documented in the README.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::{scenario, truth, NewTopic, RatesUpdate, Shared, SimError};

type Sim = State<Arc<Shared>>;

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

fn from_sim(e: SimError) -> Response {
    let status = match e {
        SimError::UnknownBroker(_) => StatusCode::NOT_FOUND,
        SimError::Bind { .. } => StatusCode::CONFLICT,
        _ => StatusCode::BAD_REQUEST,
    };
    error(status, e.to_string())
}

fn body<T>(r: Result<Json<T>, JsonRejection>) -> Result<T, Box<Response>> {
    r.map(|Json(v)| v)
        .map_err(|e| Box::new(error(StatusCode::BAD_REQUEST, e.body_text())))
}

pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/truth", get(get_truth))
        .route("/snapshot", get(get_snapshot))
        .route("/brokers", post(add_broker))
        .route("/brokers/{id}/stop", post(stop_broker))
        .route("/brokers/{id}/start", post(start_broker))
        .route("/brokers/{id}/restart", post(restart_broker))
        .route("/brokers/{id}/alive", get(broker_alive))
        .route("/controller", put(move_controller))
        .route("/controllers", put(set_controllers))
        .route("/controllers/{id}/stop", post(stop_controller))
        .route("/controllers/{id}/start", post(start_controller))
        .route("/topics", post(add_topic))
        .route("/groups", post(add_group))
        .route("/groups/{id}/stop", post(stop_group))
        .route("/metadata-lag", get(get_metadata_lag).put(put_metadata_lag))
        .route("/topics/{topic}/rates", put(topic_rates))
        .route(
            "/topics/{topic}/partitions/{partition}/rates",
            put(partition_rates),
        )
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such route") })
        .with_state(shared)
}

pub async fn serve(
    shared: Arc<Shared>,
    host: &str,
    port: u16,
) -> Result<(SocketAddr, JoinHandle<()>), SimError> {
    let addr = format!("{host}:{port}");
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|source| SimError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let local = listener
        .local_addr()
        .map_err(|source| SimError::Bind { addr, source })?;
    let mut stop = shared.shutdown.subscribe();
    let app = router(shared);
    let task = tokio::spawn(async move {
        let result = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.changed().await;
            })
            .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "control api stopped");
        }
    });
    Ok((local, task))
}

async fn get_truth(State(s): Sim) -> Response {
    let c = s.lock();
    Json(truth::build(&c, s.clock.speed())).into_response()
}

async fn get_snapshot(State(s): Sim) -> Response {
    let c = s.lock();
    Json(scenario::export(&c)).into_response()
}

/// `{"ms": N}`: simulated milliseconds from a config or quota change to its describe showing it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetadataLagBody {
    ms: u64,
}

async fn get_metadata_lag(State(s): Sim) -> Response {
    let ms = s.lock().lag.lag_ms;
    Json(json!({ "ms": ms })).into_response()
}

async fn put_metadata_lag(
    State(s): Sim,
    b: Result<Json<MetadataLagBody>, JsonRejection>,
) -> Response {
    let spec = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let ms = i64::try_from(spec.ms).unwrap_or(i64::MAX);
    s.lock().lag.lag_ms = ms;
    Json(json!({ "ms": ms })).into_response()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AddBroker {
    #[serde(default)]
    rack: Option<String>,
}

async fn add_broker(State(s): Sim, b: Result<Json<AddBroker>, JsonRejection>) -> Response {
    let spec = match b {
        Ok(Json(v)) => v,
        Err(JsonRejection::MissingJsonContentType(_)) => AddBroker::default(),
        Err(e) => return error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    match s.add_broker(spec.rack).await {
        Ok(id) => {
            let port = s.lock().brokers.get(&id).map(|b| b.port).unwrap_or(0);
            (
                StatusCode::CREATED,
                Json(json!({ "id": id, "port": port, "address": format!("{}:{port}", s.host) })),
            )
                .into_response()
        }
        Err(e) => from_sim(e),
    }
}

fn broker_id(id: &str) -> Result<i32, Box<Response>> {
    id.parse().map_err(|_| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            format!("broker id {id:?} is not a number"),
        ))
    })
}

async fn stop_broker(State(s): Sim, Path(id): Path<String>) -> Response {
    let id = match broker_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    match s.stop_broker(id).await {
        Ok(()) => Json(json!({ "id": id, "up": false })).into_response(),
        Err(e) => from_sim(e),
    }
}

async fn start_broker(State(s): Sim, Path(id): Path<String>) -> Response {
    let id = match broker_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    match s.start_broker(id).await {
        Ok(()) => Json(json!({ "id": id, "up": true })).into_response(),
        Err(e) => from_sim(e),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RestartQuery {
    /// How long the broker stays down, in milliseconds of wall time (default 1000).
    down_ms: Option<u64>,
}

/// Stops the broker, waits, starts it again, and answers when it is started: what a restart
/// command such as `systemctl restart kafka` does to a real broker.
async fn restart_broker(
    State(s): Sim,
    Path(id): Path<String>,
    axum::extract::Query(q): axum::extract::Query<RestartQuery>,
) -> Response {
    let id = match broker_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    if let Err(e) = s.stop_broker(id).await {
        return from_sim(e);
    }
    tokio::time::sleep(std::time::Duration::from_millis(q.down_ms.unwrap_or(1000))).await;
    match s.start_broker(id).await {
        Ok(()) => Json(json!({ "id": id, "up": true, "restarted": true })).into_response(),
        Err(e) => from_sim(e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveController {
    broker: i32,
}

/// Moves the quorum's leadership (the active controller) to a broker that is up.
async fn move_controller(
    State(s): Sim,
    b: Result<Json<MoveController>, JsonRejection>,
) -> Response {
    let spec = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    match s.move_controller(spec.broker) {
        Ok(()) => {
            let c = s.lock();
            Json(json!({ "controller": c.controller, "controllerEpoch": c.controller_epoch }))
                .into_response()
        }
        Err(e) => from_sim(e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DedicatedControllers {
    ids: Vec<i32>,
}

/// Dedicated controllers (`{"ids": [101, 102, 103]}`): they vote, the brokers observe.
async fn set_controllers(
    State(s): Sim,
    b: Result<Json<DedicatedControllers>, JsonRejection>,
) -> Response {
    let spec = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    match s.set_dedicated_controllers(&spec.ids) {
        Ok(()) => controllers_json(&s),
        Err(e) => from_sim(e),
    }
}

fn controllers_json(s: &Shared) -> Response {
    let c = s.lock();
    let voters: Vec<Value> = c
        .dedicated_controllers
        .iter()
        .map(|(id, v)| json!({"id": id, "up": v.up, "downSinceMs": v.down_since}))
        .collect();
    Json(json!({
        "controller": c.controller,
        "controllerEpoch": c.controller_epoch,
        "controllers": voters,
    }))
    .into_response()
}

/// A dedicated controller stopped: it stops fetching from the quorum leader.
async fn stop_controller(State(s): Sim, Path(id): Path<String>) -> Response {
    controller_up(&s, &id, false)
}

async fn start_controller(State(s): Sim, Path(id): Path<String>) -> Response {
    controller_up(&s, &id, true)
}

fn controller_up(s: &Shared, id: &str, up: bool) -> Response {
    let id = match broker_id(id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    match s.set_controller_up(id, up) {
        Ok(()) => controllers_json(s),
        Err(e) => from_sim(e),
    }
}

/// 200 while the broker process runs, 503 while it is stopped (a status command for agents).
async fn broker_alive(State(s): Sim, Path(id): Path<String>) -> Response {
    let id = match broker_id(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    let up = s.lock().brokers.get(&id).map(|b| b.up);
    match up {
        None => error(StatusCode::NOT_FOUND, format!("no broker {id}")),
        Some(true) => Json(json!({ "id": id, "up": true })).into_response(),
        Some(false) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "id": id, "up": false })),
        )
            .into_response(),
    }
}

async fn add_topic(State(s): Sim, b: Result<Json<NewTopic>, JsonRejection>) -> Response {
    let spec = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    match s.add_topic(&spec) {
        Ok(()) => (StatusCode::CREATED, Json(json!({ "name": spec.name }))).into_response(),
        Err(e) => from_sim(e),
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGroup {
    id: String,
    /// `classic`, `consumer` (KIP-848), `share` (KIP-932) or `streams` (KIP-1071).
    #[serde(rename = "type")]
    kind: String,
    topic: String,
    #[serde(default = "one")]
    members: usize,
}

fn one() -> usize {
    1
}

async fn add_group(State(s): Sim, b: Result<Json<NewGroup>, JsonRejection>) -> Response {
    let spec = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(kind) = crate::state::GroupKind::parse(&spec.kind) else {
        return error(
            StatusCode::BAD_REQUEST,
            format!(
                "type: classic, consumer, share or streams, not {:?}",
                spec.kind
            ),
        );
    };
    let mut c = s.lock();
    match c.add_group(&spec.id, kind, &spec.topic, spec.members) {
        Ok(()) => (
            StatusCode::CREATED,
            Json(json!({ "id": spec.id, "type": kind.as_str() })),
        )
            .into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

async fn stop_group(State(s): Sim, Path(id): Path<String>) -> Response {
    let mut c = s.lock();
    match c.stop_group(&id) {
        Ok(()) => Json(json!({ "id": id, "members": 0 })).into_response(),
        Err(e) => error(StatusCode::NOT_FOUND, e),
    }
}

async fn topic_rates(
    State(s): Sim,
    Path(topic): Path<String>,
    b: Result<Json<RatesUpdate>, JsonRejection>,
) -> Response {
    let update = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    match s.set_rates(&topic, None, &update) {
        Ok(()) => Json(json!({ "topic": topic })).into_response(),
        Err(e) => from_sim(e),
    }
}

async fn partition_rates(
    State(s): Sim,
    Path((topic, partition)): Path<(String, String)>,
    b: Result<Json<RatesUpdate>, JsonRejection>,
) -> Response {
    let Ok(partition) = partition.parse::<i32>() else {
        return error(StatusCode::BAD_REQUEST, "partition must be a number");
    };
    let update = match body(b) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    match s.set_rates(&topic, Some(partition), &update) {
        Ok(()) => Json(json!({ "topic": topic, "partition": partition })).into_response(),
        Err(e) => from_sim(e),
    }
}
