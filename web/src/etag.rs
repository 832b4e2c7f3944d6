//! Conditional GETs: every `GET /api/v1/…` answer of 200 carries an `ETag` (a hash of its body)
//! and `Cache-Control: no-cache`; a request whose `If-None-Match` names it is answered 304 with no
//! body. Answers that change only with a new reading are rendered once per reading (the
//! observed view, the proposal), so the tag is the same until the next reading.

use std::hash::{BuildHasher, Hasher};

use axum::body::Body;
use axum::body::HttpBody as _;
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Bodies larger than this are sent without a tag (none is; a bound, not a limit).
const MAX_TAGGED: usize = 64 << 20;

/// The strong tag of a body: a 64-bit hash and the length.
pub fn tag(body: &[u8]) -> String {
    let mut h = foldhash::quality::FixedState::with_seed(0x0062_616c_6c61_7374).build_hasher();
    h.write(body);
    format!("\"{:016x}-{:x}\"", h.finish(), body.len())
}

/// Whether `If-None-Match` names `tag` (`*`, or a list of tags compared weakly).
pub fn matches(headers: &HeaderMap, tag: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let want = bare(tag);
    headers.get_all(IF_NONE_MATCH).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|t| t == "*" || bare(t) == want)
        })
    })
}

/// The layer: tags 200 answers of `GET`/`HEAD` under `/api/v1/` with a known length (not event
/// streams) and answers 304 when the client has the same.
pub async fn conditional(req: Request, next: Next) -> Response {
    let tagged = matches!(*req.method(), Method::GET | Method::HEAD)
        && req.uri().path().starts_with("/api/v1/");
    if !tagged {
        return next.run(req).await;
    }
    // Only the tags the client holds are kept, not every header of every request.
    let mut asked = HeaderMap::new();
    for v in req.headers().get_all(IF_NONE_MATCH) {
        asked.append(IF_NONE_MATCH, v.clone());
    }
    let response = next.run(req).await;
    if response.status() != StatusCode::OK
        || response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"))
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    match body.size_hint().exact() {
        Some(n) if n as usize <= MAX_TAGGED => {}
        _ => return Response::from_parts(parts, body),
    }
    let bytes = match axum::body::to_bytes(body, MAX_TAGGED).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return crate::ApiError::internal("answer unavailable", e.to_string()).into_response()
        }
    };
    let tag = tag(&bytes);
    let Ok(value) = HeaderValue::from_str(&tag) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    parts.headers.insert(ETAG, value.clone());
    if !parts.headers.contains_key(CACHE_CONTROL) {
        parts
            .headers
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    if matches(&asked, &tag) {
        let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
        not_modified.headers_mut().insert(ETAG, value);
        not_modified
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        return not_modified;
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_names_a_tag_in_a_list_weakly_or_with_a_star() {
        let t = tag(b"{\"a\":1}");
        let mut h = HeaderMap::new();
        h.insert(
            IF_NONE_MATCH,
            HeaderValue::from_str(&format!("\"x\", W/{t}")).unwrap(),
        );
        assert!(matches(&h, &t));
        h.insert(IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert!(matches(&h, &t));
        h.insert(IF_NONE_MATCH, HeaderValue::from_static("\"other\""));
        assert!(!matches(&h, &t));
        assert!(!matches(&HeaderMap::new(), &t));
    }

    #[test]
    fn the_tag_changes_with_the_body() {
        assert_eq!(tag(b"abc"), tag(b"abc"));
        assert_ne!(tag(b"abc"), tag(b"abd"));
    }
}
