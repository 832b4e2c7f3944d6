//! Read endpoints served from what the observer recorded in SQLite.

use axum::Router;

use crate::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
}
