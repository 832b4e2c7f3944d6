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
//!
//! A finished answer is also sent gzip-encoded to a client whose `Accept-Encoding` accepts gzip
//! ([`conditional`]): compressed the first time such a client asks for it and shared by every
//! request after, as its identity bytes are (an aged answer: the per-request head as a stored
//! deflate block before the shared compressed rest, in one gzip member). The gzip answer carries
//! `Content-Encoding: gzip` and its own tag, the identity tag with `-gz` (`"…-gz"`, `W/"…-gz"`);
//! `If-None-Match` with either tag is a 304. Every such answer, either encoding, carries
//! `Vary: Accept-Encoding`. Answers under [`MIN_GZIP`] bytes are sent as they are.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use axum::body::HttpBody as _;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, ETAG,
    IF_NONE_MATCH, VARY,
};
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

/// The tag of the gzip encoding of the answer tagged `tag`: `"…-gz"` (a weak tag stays weak).
pub fn gzip_tag(tag: &str) -> String {
    match tag.strip_suffix('"') {
        Some(open) => format!("{open}-gz\""),
        None => format!("{tag}-gz"),
    }
}

/// Answers smaller than this are sent as they are, whatever the client accepts: gzip would
/// save a few hundred bytes for a compression per answer.
pub const MIN_GZIP: usize = 1024;

/// An answer finished for the wire: its bytes and its tag, made once and shared; and its gzip
/// encoding, made the first time a client that accepts gzip asks for it and shared after.
#[derive(Debug)]
pub struct Finished {
    pub body: Bytes,
    pub tag: HeaderValue,
    /// None for an answer made for one request alone ([`finished`]): it is not compressed.
    gzip: Option<Arc<Gzip>>,
}

impl Finished {
    /// `body` under its strong tag.
    pub fn new(body: Bytes) -> Finished {
        let tag = HeaderValue::from_str(&tag(&body)).unwrap_or(HeaderValue::from_static("\"\""));
        let gzip = Some(Gzip::new(body.clone(), Framing::Whole, ONCE_PER_READING));
        Finished { body, tag, gzip }
    }

    /// `rest` (sent after a head made per request) under the weak tag of `rest`.
    pub fn rest(rest: Bytes) -> Finished {
        let tag =
            HeaderValue::from_str(&weak_tag(&rest)).unwrap_or(HeaderValue::from_static("W/\"\""));
        let gzip = Some(Gzip::new(
            rest.clone(),
            Framing::AfterHead,
            ONCE_PER_READING,
        ));
        Finished {
            body: rest,
            tag,
            gzip,
        }
    }

    /// `body` with no tag (an answer outside `/api/v1/`, `/metrics`): its gzip encoding is
    /// still made once and shared, at the fastest level (a `/metrics` rendering serves the
    /// scrapes that arrived while it was made: about one compression per scrape).
    pub fn untagged(body: Bytes) -> Finished {
        let gzip = Some(Gzip::new(body.clone(), Framing::Whole, 1));
        Finished {
            body,
            tag: HeaderValue::from_static("\"\""),
            gzip,
        }
    }

    /// The 200 answer: JSON, these bytes (shared, not copied) and the tag; gzip-encoded by the
    /// layer ([`conditional`]) for a client that accepts it.
    pub fn response(&self) -> Response {
        let mut response = Response::new(Body::from(self.body.clone()));
        json_tagged(&mut response, &self.tag, self.body.len());
        response.extensions_mut().insert(Encodable {
            gzip: self.gzip.clone(),
            len: self.body.len(),
            head: None,
        });
        response
    }

    /// The 200 answer of these bytes as `content_type`, without a tag (see [`Finished::untagged`]);
    /// gzip-encoded by the layer for a client that accepts it.
    pub fn untagged_response(&self, content_type: &'static str) -> Response {
        let mut response = Response::new(Body::from(self.body.clone()));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        response.extensions_mut().insert(Encodable {
            gzip: self.gzip.clone(),
            len: self.body.len(),
            head: None,
        });
        response
    }
}

/// The level of an answer compressed once per reading and sent many times: zlib's default (6);
/// 2–3× smaller than level 1 costs tens of milliseconds once (docs/big-clusters.md).
const ONCE_PER_READING: u32 = 6;

/// How the compressed bytes are framed: a whole gzip member, or a raw deflate stream that ends
/// a member begun by a head made per request ([`aged`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    Whole,
    AfterHead,
}

/// The gzip encoding of one finished answer's bytes, made at most once (on the blocking pool,
/// the requests that arrive meanwhile waiting for the same one).
#[derive(Debug)]
struct Gzip {
    source: Bytes,
    framing: Framing,
    level: u32,
    made: tokio::sync::OnceCell<Option<Deflated>>,
}

#[derive(Debug)]
enum Deflated {
    /// A complete gzip member of the source.
    Whole(Bytes),
    /// The source as raw deflate blocks, the last one final, and its CRC-32.
    AfterHead { raw: Bytes, crc: crc32fast::Hasher },
}

/// The header of a gzip member: deflate, no name, no time, unknown system.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

impl Gzip {
    fn new(source: Bytes, framing: Framing, level: u32) -> Arc<Gzip> {
        Arc::new(Gzip {
            source,
            framing,
            level,
            made: tokio::sync::OnceCell::new(),
        })
    }

    /// The compressed bytes, made by the first request that needs them (none when compressing
    /// failed: the answer is then sent as it is).
    async fn deflated(self: &Arc<Gzip>) -> Option<&Deflated> {
        let me = self.clone();
        self.made
            .get_or_init(|| async move {
                tokio::task::spawn_blocking(move || me.compress())
                    .await
                    .ok()
                    .flatten()
            })
            .await
            .as_ref()
    }

    fn compress(&self) -> Option<Deflated> {
        let level = flate2::Compression::new(self.level);
        let capacity = self.source.len() / 4 + 64;
        match self.framing {
            Framing::Whole => {
                let mut e = flate2::write::GzEncoder::new(Vec::with_capacity(capacity), level);
                e.write_all(&self.source).ok()?;
                Some(Deflated::Whole(e.finish().ok()?.into()))
            }
            Framing::AfterHead => {
                let mut e = flate2::write::DeflateEncoder::new(Vec::with_capacity(capacity), level);
                e.write_all(&self.source).ok()?;
                let mut crc = crc32fast::Hasher::new();
                crc.update(&self.source);
                Some(Deflated::AfterHead {
                    raw: e.finish().ok()?.into(),
                    crc,
                })
            }
        }
    }
}

impl Deflated {
    /// The gzip member of `head` (made for this request) followed by the shared source, as
    /// pieces to send one after another, and their length. The head goes in a stored (not
    /// compressed) deflate block that is not the last, so the shared raw deflate stream follows
    /// it on a byte boundary; the trailer's CRC-32 is the head's combined with the source's.
    fn member(&self, head: Option<&Bytes>, source_len: usize) -> (Vec<Bytes>, usize) {
        match (self, head) {
            (Deflated::Whole(whole), _) => (vec![whole.clone()], whole.len()),
            (Deflated::AfterHead { raw, crc }, head) => {
                let head = head.map_or(&[][..], |h| &h[..]);
                let mut start = Vec::with_capacity(
                    GZIP_HEADER.len() + 5 * (1 + head.len() / 0xffff) + head.len(),
                );
                start.extend_from_slice(&GZIP_HEADER);
                for block in head.chunks(0xffff) {
                    // BFINAL 0, BTYPE 00 (stored), padded to the byte; LEN and its complement.
                    let len = block.len() as u16;
                    start.push(0);
                    start.extend_from_slice(&len.to_le_bytes());
                    start.extend_from_slice(&(!len).to_le_bytes());
                    start.extend_from_slice(block);
                }
                let mut whole = crc32fast::Hasher::new();
                whole.update(head);
                whole.combine(crc);
                let total = head.len() + source_len;
                let mut trailer = Vec::with_capacity(8);
                trailer.extend_from_slice(&whole.finalize().to_le_bytes());
                trailer.extend_from_slice(&(total as u32).to_le_bytes());
                let len = start.len() + raw.len() + trailer.len();
                (vec![start.into(), raw.clone(), trailer.into()], len)
            }
        }
    }
}

/// What the layer needs to send an answer gzip-encoded: its shared encoding and, for an aged
/// answer, the head made for this request.
#[derive(Debug, Clone)]
struct Encodable {
    gzip: Option<Arc<Gzip>>,
    /// The identity answer's length.
    len: usize,
    head: Option<Bytes>,
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
    let head = Bytes::from(head);
    let chunks = [head.clone(), rest.body.clone()].map(Ok::<Bytes, std::convert::Infallible>);
    let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
    json_tagged(&mut response, &rest.tag, len);
    response.extensions_mut().insert(Encodable {
        gzip: rest.gzip.clone(),
        len,
        head: Some(head),
    });
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
/// for this request alone: it is finished for it and not kept, and is not compressed (a
/// compression per request costs more CPU than the bytes it saves on two shared cores:
/// docs/big-clusters.md, "Fourth round").
pub fn finished(text: &Arc<String>, finish: impl FnOnce(&str) -> Finished) -> Arc<Finished> {
    if Arc::strong_count(text) < 2 {
        let mut alone = finish(text);
        alone.gzip = None;
        return Arc::new(alone);
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

/// Whether `Accept-Encoding` accepts gzip: `gzip` (or `x-gzip`) or `*` with a weight above 0,
/// and gzip not refused by name.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut named = None;
    let mut any = false;
    for value in headers.get_all(ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let weight = parts
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                named = Some(named.unwrap_or(false) || weight > 0.0);
            } else if coding == "*" {
                any = weight > 0.0;
            }
        }
    }
    named.unwrap_or(any)
}

/// The layer: tags 200 answers of `GET`/`HEAD` under `/api/v1/` with a known length (not event
/// streams) and answers 304 when the client has the same; sends a finished answer
/// gzip-encoded to a client that accepts it (any path).
pub async fn conditional(req: Request, next: Next) -> Response {
    let gzip = accepts_gzip(req.headers());
    let tagged = matches!(*req.method(), Method::GET | Method::HEAD)
        && req.uri().path().starts_with("/api/v1/");
    if !tagged {
        let response = next.run(req).await;
        return encode(response, gzip).await;
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
            if let Some(encodable) = response.extensions().get::<Encodable>() {
                // Either encoding's tag names the same answer; the 304 carries the one the
                // client holds (the one this request would get first, for `*`).
                let identity = value.to_str().unwrap_or("").to_string();
                let compressed = (encodable.len >= MIN_GZIP)
                    .then(|| gzip_tag(&identity))
                    .filter(|_| !identity.is_empty());
                let mut tags = vec![identity];
                if let Some(t) = compressed {
                    if gzip {
                        tags.insert(0, t);
                    } else {
                        tags.push(t);
                    }
                }
                for t in tags {
                    if matches(&asked, &t) {
                        if let Ok(t) = HeaderValue::from_str(&t) {
                            let mut answer = not_modified(t);
                            vary(&mut answer);
                            return answer;
                        }
                    }
                }
            } else if value.to_str().is_ok_and(|t| matches(&asked, t)) {
                return not_modified(value);
            }
            if !response.headers().contains_key(CACHE_CONTROL) {
                response
                    .headers_mut()
                    .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            }
            return encode(response, gzip).await;
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

/// `Vary: Accept-Encoding` (once).
fn vary(response: &mut Response) {
    let present = response.headers().get_all(VARY).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("accept-encoding") || t.trim() == "*")
        })
    });
    if !present {
        response
            .headers_mut()
            .append(VARY, HeaderValue::from_static("accept-encoding"));
    }
}

/// A finished answer (one that carries [`Encodable`]) as the client asked for it: gzip-encoded,
/// under the gzip tag, when it accepts gzip and the answer is at least [`MIN_GZIP`] bytes; as
/// it is otherwise. Either way it carries `Vary: Accept-Encoding`. Any other answer is left
/// as it is.
async fn encode(mut response: Response, gzip: bool) -> Response {
    let Some(encodable) = response.extensions_mut().remove::<Encodable>() else {
        return response;
    };
    vary(&mut response);
    let shared = match encodable.gzip {
        Some(shared) if gzip && encodable.len >= MIN_GZIP => shared,
        _ => return response,
    };
    if response.status() != StatusCode::OK {
        return response;
    }
    let Some(deflated) = shared.deflated().await else {
        return response;
    };
    let (pieces, n) = deflated.member(encodable.head.as_ref(), shared.source.len());
    let (mut parts, _) = response.into_parts();
    let headers = &mut parts.headers;
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
    if let Some(t) = headers.get(ETAG).and_then(|t| t.to_str().ok()) {
        if let Ok(t) = HeaderValue::from_str(&gzip_tag(t)) {
            headers.insert(ETAG, t);
        }
    }
    let body = match <[Bytes; 1]>::try_from(pieces) {
        Ok([one]) => Body::from(one),
        Err(pieces) => Body::from_stream(futures_util::stream::iter(
            pieces
                .into_iter()
                .map(Ok::<Bytes, std::convert::Infallible>),
        )),
    };
    Response::from_parts(parts, body)
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
        // Only the shared one is compressed (once); one made for a request alone is not.
        assert!(first.gzip.is_some());
        assert!(a.gzip.is_none() && b.gzip.is_none());
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

    fn gunzip(pieces: &[Bytes]) -> Vec<u8> {
        use std::io::Read as _;
        let whole: Vec<u8> = pieces.iter().flat_map(|p| p.iter().copied()).collect();
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&whole[..])
            .read_to_end(&mut out)
            .expect("a valid gzip member");
        out
    }

    #[test]
    fn a_gzip_answer_decompresses_to_exactly_the_identity_bytes() {
        let body: String = (0..2000).map(|i| format!("{{\"p\":{i}}},")).collect();
        let whole = Finished::new(Bytes::from(body.clone()));
        let d = whole.gzip.as_ref().unwrap().compress().unwrap();
        let (pieces, n) = d.member(None, whole.body.len());
        assert_eq!(n, pieces.iter().map(Bytes::len).sum::<usize>());
        assert_eq!(gunzip(&pieces), body.as_bytes());
        assert!(n < body.len() / 4, "{n} of {}", body.len());
    }

    #[test]
    fn an_aged_gzip_answer_is_its_head_then_the_shared_rest_in_one_member() {
        let rest: String = (0..3000).map(|i| format!(",\"t{i}\":{i}")).collect();
        let finished = Finished::rest(Bytes::from(rest.clone()));
        let d = finished.gzip.as_ref().unwrap().compress().unwrap();
        // Heads of every size a stored block takes, and beyond one block.
        for head in [
            String::new(),
            "{\"ageMs\":12".into(),
            "h".repeat(0xffff),
            "h".repeat(70_000),
        ] {
            let (pieces, n) = d.member(Some(&Bytes::from(head.clone())), rest.len());
            assert_eq!(n, pieces.iter().map(Bytes::len).sum::<usize>());
            assert_eq!(
                gunzip(&pieces),
                format!("{head}{rest}").as_bytes(),
                "{}",
                head.len()
            );
        }
    }

    #[test]
    fn the_gzip_tag_is_the_identity_tag_with_gz_and_a_weak_tag_stays_weak() {
        let t = tag(b"abc");
        let gz = gzip_tag(&t);
        assert_ne!(gz, t);
        assert!(gz.ends_with("-gz\"") && gz.starts_with('"'), "{gz}");
        let w = gzip_tag(&weak_tag(b"abc"));
        assert!(w.starts_with("W/\"") && w.ends_with("-gz\""), "{w}");
        // Neither tag names the other.
        let mut h = HeaderMap::new();
        h.insert(IF_NONE_MATCH, HeaderValue::from_str(&gz).unwrap());
        assert!(matches(&h, &gz) && !matches(&h, &t));
    }

    #[test]
    fn accept_encoding_accepts_gzip_by_name_or_by_star_with_a_weight_above_zero() {
        let accepts = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            accepts_gzip(&h)
        };
        assert!(accepts("gzip"));
        assert!(accepts("gzip, deflate, br, zstd"));
        assert!(accepts("GZIP;q=0.5"));
        assert!(accepts("x-gzip"));
        assert!(accepts("*"));
        assert!(accepts("br;q=1.0, gzip;q=0.8, *;q=0.1"));
        assert!(!accepts("identity"));
        assert!(!accepts("br, deflate"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("*, gzip;q=0"));
        assert!(!accepts("*;q=0"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
