//! The dashboard's stylesheet, script and icon, compiled into the binary: no CDN, no file
//! system, the same bytes offline.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Name, content type, bytes.
const ASSETS: [(&str, &str, &[u8]); 3] = [
    (
        "ballast.css",
        "text/css; charset=utf-8",
        include_bytes!("../assets/ballast.css"),
    ),
    (
        "ballast.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/ballast.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../assets/favicon.svg"),
    ),
];

/// `GET /ui/assets/{file}`.
pub async fn serve(Path(file): Path<String>) -> Response {
    let Some((_, content_type, bytes)) = ASSETS.iter().find(|(name, _, _)| *name == file) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let mut response = bytes.into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Assets change only with the binary; an hour keeps a reload cheap and an upgrade visible.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}
