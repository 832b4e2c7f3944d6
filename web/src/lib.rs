//! The web process: REST under `/api/v1`, `/metrics`, the agent doors (MCP, chat), the `/ui`
//! dashboard. The module map: `README.md`.
//!
//! Handlers never talk to each other or to another process: what they know comes from SQLite,
//! written by the other processes, or from the cluster through the operations (`ballast_ops`).

pub mod agents;
pub mod audit;
/// Authentication: OIDC login, sessions, personal access tokens, scopes (docs/auth.md).
pub mod auth;
/// The catalog of operations that MCP (and chat) are adapters over.
pub mod catalog;
/// The chat assistant `/api/v1/chat/*` over the catalog.
pub mod chat;
pub mod envelope;
/// Conditional GETs: `ETag` on every answer, 304 for `If-None-Match`.
pub mod etag;
pub mod extract;
mod healing;
/// License enforcement: the licensed-route table, the 403 layer, `/api/v1/license`, auto-fetch.
pub mod license;
/// Bounded concurrency per route: 503 with `Retry-After` beyond it.
pub mod limit;
/// The MCP endpoint `/api/v1/mcp` over the catalog.
pub mod mcp;
mod metrics;
mod middleware;
pub mod notices;
/// The observer's latest sample in memory, shared by `/metrics` and the observed routes.
use ballast_ops::view as observed_view;
/// The `/ui` dashboard's host: what the `ballast-ui` crate gets from this process.
mod dashboard;
/// The OpenAPI description (`/api/v1/openapi.json`, `.yaml`) and the `/docs/` pages.
pub mod openapi;
mod params;
/// The probes' own reads: `/api/v1/health` and `/api/v1/ready` never wait on the pool.
pub mod probes;
mod routes;
/// Percent-encoding and the same-origin rule of cookie mutations.
pub mod url;

use std::sync::Arc;

use axum::Router;
use ballast_config::Config;
use ballast_runtime::{Clock, WorkerContext, WorkerError};
use ballast_schema::{Store, StoreError};
use tracing::{info, warn};

pub use envelope::{ApiError, ApiOk, ApiResult, LicenseCode, LicenseError};

pub const NAME: &str = "web";

/// Build facts of this binary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = env!("BALLAST_COMMIT");
pub const BUILD_TIME: &str = env!("BALLAST_BUILD_TIME");
/// `ballast --version`: the version, the git commit and the build time.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("BALLAST_COMMIT"),
    ", built ",
    env!("BALLAST_BUILD_TIME"),
    ")"
);

/// How long a change waits for another change of the same resource before it is refused with
/// 503: longer than any change takes (reading a change back gives up after
/// `BALLAST_READBACK_TIMEOUT`, 10 s by default).
pub const CHANGE_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

pub use ballast_ops::context::DB_RETRY_AFTER_S;

/// What every handler can reach: one shared [`State`]. Cloned for every middleware layer of
/// every request, so a clone is one reference count (a clone of the fields was seventeen, and a
/// measurable share of a small answer under load: docs/big-clusters.md).
#[derive(Clone)]
pub struct AppState(Arc<State>);

impl std::ops::Deref for AppState {
    type Target = State;

    fn deref(&self) -> &State {
        &self.0
    }
}

/// The web process's state, behind [`AppState`].
#[derive(Clone)]
pub struct State {
    /// What every operation runs over: store, configuration, clock, the cluster and the one
    /// pipeline every change runs through (`ballast_ops`). `AppState` dereferences to it.
    pub ops: ballast_ops::Context,
    pub metrics: Arc<metrics::HttpMetrics>,
    pub started_at_ms: i64,
    /// The license: accepted keys, cached sources, auto-fetch (`license.rs`). The operation
    /// context's licence is the same runtime ([`AppState::set_license`] replaces both), so the
    /// REST layer and the agents' gate give one verdict.
    pub(crate) license: Arc<license::LicenseRuntime>,
    /// Authentication: the OIDC providers and the token key (`auth`).
    pub auth: Arc<auth::AuthRuntime>,
    /// The probes' own connection and last read (`probes.rs`).
    pub probes: Arc<probes::Probes>,
    /// Each route's bound on requests served at once (`limit.rs`).
    pub limits: Arc<limit::Limits>,
    /// Set when the process stops: long-lived responses (server-sent events) end on it, so a
    /// graceful shutdown is not held open by a client that never disconnects.
    stop: Arc<tokio::sync::watch::Sender<bool>>,
}

impl std::ops::Deref for State {
    type Target = ballast_ops::Context;

    fn deref(&self) -> &ballast_ops::Context {
        &self.ops
    }
}

impl AppState {
    pub fn new(store: Store, config: Arc<Config>, clock: Arc<dyn Clock>) -> Self {
        let started_at_ms = clock.now_ms();
        let kafka = ballast_ops::KafkaHandle::new(ballast_runtime::client_config(&config.kafka));
        let license = Arc::new(license::LicenseRuntime::for_this_build());
        let auth = auth::runtime(&config);
        let pipeline = ballast_ops::Pipeline::new(store.clone(), CHANGE_WAIT);
        let probes = Arc::new(probes::Probes::new(&store));
        let limits = Arc::new(limit::Limits::new(
            config.http_route_concurrency,
            config.http_queue_wait,
        ));
        Self(Arc::new(State {
            ops: ballast_ops::Context {
                store,
                config,
                clock,
                kafka,
                pipeline,
                flights: Arc::default(),
                licence: license.clone(),
            },
            metrics: Arc::new(metrics::HttpMetrics::new()),
            started_at_ms,
            license,
            auth,
            probes,
            limits,
            stop: Arc::new(tokio::sync::watch::channel(false).0),
        }))
    }

    /// Replaces the license runtime, for the REST layer and the operation context's licence
    /// alike (tests give one that trusts their own key).
    pub fn set_license(&mut self, runtime: license::LicenseRuntime) {
        let runtime = Arc::new(runtime);
        let state = Arc::make_mut(&mut self.0);
        state.ops.licence = runtime.clone();
        state.license = runtime;
    }

    /// Completes once the process is stopping.
    pub async fn stopping(&self) {
        let mut rx = self.stop.subscribe();
        // An error means the sender is gone, which only happens when the process is ending.
        let _ = rx.wait_for(|stop| *stop).await;
    }

    /// Ends long-lived responses; called when the process is told to stop.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Runs store work on the blocking pool. A busy database (another process held the write
    /// lock past the busy timeout) or no free pooled connection is a 503 with `Retry-After`;
    /// any other store failure a 500 envelope.
    pub async fn db<T, F>(&self, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    {
        Ok(self.ops.db(f).await?)
    }
}

/// Every route of the HTTP API: the operations' modules (`routes`) and the doors and pages beside
/// them (licence, login and tokens, chat, agents, the OpenAPI document). The dashboard calls these
/// in-process (`dashboard::WebHost`); `router` adds the dashboard, MCP and the layers.
pub(crate) fn api_routes() -> Router<AppState> {
    routes::routes()
        .merge(license::routes())
        .merge(auth::routes::routes())
        .merge(chat::routes())
        .merge(agents::routes())
        .merge(openapi::routes())
}

/// The whole HTTP surface. Layers, outermost first: request log and metrics, authentication
/// (credentials to an identity, 401), authorization (scope, 403), the license gate (403).
pub fn router(state: AppState) -> Router {
    api_routes()
        .merge(ballast_ui::routes(dashboard::host(&state)))
        .merge(auth::routes::ui_routes())
        .route("/api/v1/mcp", {
            let (mcp, door) = mcp::service(state.clone());
            // Calls of kept answers are answered before rmcp (mcp::kept_answers).
            let post = tower::ServiceBuilder::new()
                .layer(axum::middleware::from_fn_with_state(
                    door,
                    mcp::kept_answers,
                ))
                .service(mcp.clone());
            axum::routing::post_service(post)
                .get_service(mcp.clone())
                .delete_service(mcp::session_end(mcp))
                .layer(axum::middleware::from_fn(mcp::json_rpc_errors))
        })
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(axum::middleware::from_fn(params::check_parameters))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limit::bound,
        ))
        .layer(axum::middleware::from_fn(
            middleware::refuse_unexpected_bodies,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            license::gate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authorize,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn(etag::conditional))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::log_and_measure,
        ))
        .with_state(state)
}

/// How often the web process looks for a new reading or proposal to load ([`spawn_preparer`]).
const PREPARE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Loads each new reading of the observer and each new current proposal within a second of
/// their being stored, so requests find them in memory and none waits for the load (a request
/// that comes first still loads it, once, as before).
fn spawn_preparer(state: AppState) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(PREPARE_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            if let Err(e) = observed_view::current(&state).await {
                tracing::debug!(error = %e.details, "the latest reading was not loaded");
            }
            if let Err(e) = ballast_ops::proposal_view::load(&state, None).await {
                tracing::debug!(error = %e.details, "the current proposal was not loaded");
            }
        }
    });
}

/// Serves until shutdown is requested.
pub async fn run(ctx: WorkerContext) -> Result<(), WorkerError> {
    let addr = std::net::SocketAddr::new(ctx.config.bind, ctx.config.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WorkerError::Io {
            context: format!("cannot listen on {addr}"),
            source,
        })?;
    info!(%addr, "listening");
    let state = AppState::new(ctx.store.clone(), ctx.config.clone(), ctx.clock.clone());
    // Intents a web process that ended left in progress: their outcome is unknown.
    match state.pipeline.fail_stale_intents(state.started_at_ms).await {
        Ok(0) => {}
        Ok(n) => warn!(
            intents = n,
            "audit intents left in progress by a process that ended are recorded as failed (status 500)"
        ),
        Err(e) => warn!(error = %e, "cannot complete the audit intents a process that ended left"),
    }
    license::spawn_fetcher(state.clone());
    spawn_preparer(state.clone());
    let shutdown = ctx.shutdown.clone();
    let stopping = state.clone();
    // No Nagle delay: a streamed answer (MCP, server-sent events) is written in several pieces,
    // and each would otherwise wait for the client's delayed acknowledgement (about 40 ms).
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    });
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown.requested().await;
        stopping.stop();
    })
    .await
    .map_err(|source| WorkerError::Io {
        context: "http server failed".into(),
        source,
    })
}
