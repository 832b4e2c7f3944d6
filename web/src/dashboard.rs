//! The `/ui` dashboard's host: what the `ballast-ui` crate gets from this process (its
//! [`ballast_ui::Host`]). The pages themselves, their templates and assets live in `crates/ui`;
//! they reach data and actions only through the API router given here, called in-process.

use std::sync::Arc;

use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::{Extension, Router};
use ballast_ui::{AuditEvent, BoxFuture, Host, Maintenance, Problem, Settings, Viewer};

use crate::auth::Identity;
use crate::{ApiError, AppState};

/// The host of the dashboard over `state`.
pub fn host(state: &AppState) -> Arc<dyn Host> {
    Arc::new(WebHost {
        settings: Settings {
            version: crate::VERSION,
            chat: state.config.chat.enabled,
            threshold_percent: state.config.balance.threshold_percent,
        },
        state: state.clone(),
    })
}

struct WebHost {
    state: AppState,
    settings: Settings,
}

fn problem(e: ApiError) -> Problem {
    Problem::new(e.status.as_u16(), e.error, e.details)
}

impl Host for WebHost {
    /// The API router as `crate::router` builds it, without the request log and HTTP metrics
    /// layer (the dashboard's own request is logged and measured once, its in-process calls are
    /// not), the request's identity attached for `authorize` to check its scope.
    fn api(&self, request: &Parts) -> Router {
        let state = self.state.clone();
        let router = crate::api_routes()
            .fallback(crate::routes::not_found)
            .method_not_allowed_fallback(crate::routes::method_not_allowed)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                crate::license::gate,
            ))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                crate::auth::authorize,
            ))
            .with_state(state);
        match request.extensions.get::<Identity>() {
            Some(identity) => router.layer(Extension(identity.clone())),
            None => router,
        }
    }

    fn viewer(&self, request: &Parts) -> Option<Viewer> {
        let i = request.extensions.get::<Identity>()?;
        Some(Viewer {
            user_id: i.user_id.clone(),
            name: i.name.clone(),
            email: i.email.clone(),
            scope: i.scope.as_str(),
            write: i.scope == crate::auth::Scope::Write,
            session: i.session_id().is_some(),
        })
    }

    fn same_origin(&self, headers: &HeaderMap) -> bool {
        crate::url::same_origin(self.state.config.auth.public_url.as_deref(), headers)
    }

    fn cookie(&self, headers: &HeaderMap, name: &str) -> Option<String> {
        crate::auth::cookie(headers, name)
    }

    fn now_ms(&self) -> i64 {
        self.state.clock.now_ms()
    }

    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn skip_reasons(&self) -> &'static [(&'static str, &'static str)] {
        &crate::healing::SKIP_REASONS
    }

    fn maintenance(&self) -> BoxFuture<Result<Vec<Maintenance>, Problem>> {
        let state = self.state.clone();
        Box::pin(async move {
            let list = state.db(|s| s.maintenance()).await.map_err(problem)?;
            Ok(list
                .into_iter()
                .map(|m| Maintenance {
                    broker_id: m.broker_id,
                    entered_at_ms: m.entered_at_ms,
                    requested_by: m.requested_by,
                    operation_id: m.operation_id,
                    reason: m.reason,
                })
                .collect())
        })
    }

    fn audit_event(&self, id: i64) -> BoxFuture<Result<Option<AuditEvent>, Problem>> {
        let state = self.state.clone();
        Box::pin(async move {
            let event = state
                .db(move |s| s.audit_event(id))
                .await
                .map_err(problem)?;
            Ok(event.map(|e| AuditEvent {
                id: e.id,
                at_ms: e.at_ms,
                action: e.action,
                method: e.method,
                user_id: e.user_id,
                requested_by: e.requested_by,
                status: e.status,
                target: e.target,
                summary: e.summary,
                before: e.before,
                after: e.after,
                forced: e.forced,
                related_event_id: e.related_event_id,
                details: e.details,
            }))
        })
    }
}
