//! Conditional GETs: every `GET /api/v1/…` answer of 200 carries an `ETag` (a hash of its body)
//! and `Cache-Control: no-cache`; a request whose `If-None-Match` names it is answered 304 with no
//! body. Answers that change only with a new reading are rendered once per reading (the
//! observed view, the proposal), so the tag is the same until the next reading.
//!
//! Such an answer is also finished once ([`finished`]): its bytes, envelope included, and its tag
//! are made the first time it is served and shared by every request after (a response that
//! carries its own `ETag` is not read or hashed again here). An answer with a field that moves
//! per request (`ageMs`) is sent as that request's head and the shared rest ([`aged`]), under a
//! weak tag of the rest: the same reading, only its age differs.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use axum::body::HttpBody as _;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
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

/// The weak tag of the part of an answer that is the same for every request of one reading.
pub fn weak_tag(shared: &[u8]) -> String {
    format!("W/{}", tag(shared))
}

/// An answer finished for the wire: its bytes and its tag, made once and shared.
#[derive(Debug)]
pub struct Finished {
    pub body: Bytes,
    pub tag: HeaderValue,
}

impl Finished {
    /// `body` under its strong tag.
    pub fn new(body: Bytes) -> Finished {
        let tag = HeaderValue::from_str(&tag(&body)).unwrap_or(HeaderValue::from_static("\"\""));
        Finished { body, tag }
    }

    /// `rest` (sent after a head made per request) under the weak tag of `rest`.
    pub fn rest(rest: Bytes) -> Finished {
        let tag =
            HeaderValue::from_str(&weak_tag(&rest)).unwrap_or(HeaderValue::from_static("W/\"\""));
        Finished { body: rest, tag }
    }

    /// The 200 answer: JSON, these bytes (shared, not copied) and the tag.
    pub fn response(&self) -> Response {
        let mut response = Response::new(Body::from(self.body.clone()));
        json_tagged(&mut response, &self.tag, self.body.len());
        response
    }
}

fn json_tagged(response: &mut Response, tag: &HeaderValue, len: usize) {
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    headers.insert(ETAG, tag.clone());
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
}

/// The 200 answer of `head` (made for this request) followed by `rest` (finished once, shared),
/// under the rest's tag: the whole answer is never copied per request.
pub fn aged(head: String, rest: &Finished) -> Response {
    let len = head.len() + rest.body.len();
    let chunks = [Bytes::from(head), rest.body.clone()].map(Ok::<Bytes, std::convert::Infallible>);
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    json_tagged(&mut response, &rest.tag, len);
    response
}

/// The finished answers of shared texts, by the text's address. Each entry holds a `Weak` of its
/// text, so the address is not reused while the entry lives, and an entry whose text is gone
/// (its reading replaced) is dropped at a later insert.
struct Table {
    entries: HashMap<usize, (Weak<String>, Arc<Finished>)>,
    prune_at: usize,
}

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(|| {
        Mutex::new(Table {
            entries: HashMap::new(),
            prune_at: 64,
        })
    })
}

/// The answer finished from `text` by `finish`, made once per text and shared by every request
/// that serves the same text: a text of a render cache (made once per reading: the observed
/// view, a proposal) is finished the first time it is served. A text nobody else holds was made
/// for this request alone: it is finished for it and not kept.
pub fn finished(text: &Arc<String>, finish: impl FnOnce(&str) -> Finished) -> Arc<Finished> {
    if Arc::strong_count(text) < 2 {
        return Arc::new(finish(text));
    }
    let key = Arc::as_ptr(text) as usize;
    let known = |t: &Table| {
        t.entries
            .get(&key)
            .filter(|(w, _)| w.upgrade().is_some_and(|w| Arc::ptr_eq(&w, text)))
            .map(|(_, f)| f.clone())
    };
    if let Some(hit) = known(&table().lock().unwrap_or_else(|e| e.into_inner())) {
        return hit;
    }
    // Made outside the lock: a large answer must not stall the others.
    let made = Arc::new(finish(text));
    let mut t = table().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(hit) = known(&t) {
        return hit;
    }
    if t.entries.len() >= t.prune_at {
        t.entries.retain(|_, (w, _)| w.strong_count() > 0);
        t.prune_at = (2 * t.entries.len()).max(64);
    }
    t.entries.insert(key, (Arc::downgrade(text), made.clone()));
    made
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
    let mut response = next.run(req).await;
    if response.status() == StatusCode::OK {
        // A finished answer carries its tag: its body is neither read nor hashed here.
        if let Some(value) = response.headers().get(ETAG).cloned() {
            if value.to_str().is_ok_and(|t| matches(&asked, t)) {
                return not_modified(value);
            }
            if !response.headers().contains_key(CACHE_CONTROL) {
                response
                    .headers_mut()
                    .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            }
            return response;
        }
    }
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
        return not_modified(value);
    }
    Response::from_parts(parts, Body::from(bytes))
}

fn not_modified(tag: HeaderValue) -> Response {
    let mut not_modified = StatusCode::NOT_MODIFIED.into_response();
    not_modified.headers_mut().insert(ETAG, tag);
    not_modified
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    not_modified
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

    #[test]
    fn an_answer_s_bytes_and_tag_are_made_once_per_rendered_text_and_shared() {
        // A text a render cache keeps (a second holder): finished once, then shared.
        let text = Arc::new(String::from("{\"a\":1}"));
        let cache = text.clone();
        let mut made = 0;
        let first = finished(&text, |t| {
            made += 1;
            Finished::new(Bytes::from(t.to_owned()))
        });
        let again = finished(&cache, |_| unreachable!("made once"));
        assert_eq!(made, 1);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first.tag.to_str().unwrap(), tag(b"{\"a\":1}"));
        // A text made for one request alone is finished for it and not kept.
        let once = Arc::new(String::from("{}"));
        let a = finished(&once, |t| Finished::new(Bytes::from(t.to_owned())));
        let b = finished(&once, |t| Finished::new(Bytes::from(t.to_owned())));
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn a_finished_answer_of_a_text_that_is_gone_is_not_served_for_another_text() {
        let old = Arc::new(String::from("old"));
        let keep = old.clone();
        finished(&old, |t| Finished::new(Bytes::from(t.to_owned())));
        drop((old, keep));
        let new = Arc::new(String::from("new"));
        let _cache = new.clone();
        let f = finished(&new, |t| Finished::new(Bytes::from(t.to_owned())));
        assert_eq!(&f.body[..], b"new");
    }
}
