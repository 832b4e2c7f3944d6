//! Answers finished once per reading are sent gzip-encoded to a client that accepts gzip
//! (`web/src/etag.rs`): compressed once and shared, under a tag of their own, with
//! `Vary: Accept-Encoding`; a client that does not accept gzip gets the identity bytes.

mod observed_common;

use std::io::Read as _;

use observed_common::Harness;

/// Answers finished once per reading (strong tags).
const SHARED: [&str; 4] = [
    "/api/v1/partitions",
    "/api/v1/cluster/follower-lag",
    "/api/v1/cluster/health",
    "/api/v1/optimize/partitions",
];

/// An answer whose `ageMs` is made per request before the shared rest (a weak tag).
/// (`/api/v1/cluster` is another, under 1 KiB with this fixture.)
const AGED: [&str; 1] = ["/api/v1/cluster/comprehensive"];

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a valid gzip body");
    out
}

fn header(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii header").to_string())
}

async fn get(h: &Harness, path: &str, encoding: Option<&str>) -> reqwest::Response {
    let mut req = h.http.get(h.url(path));
    if let Some(e) = encoding {
        req = req.header("Accept-Encoding", e);
    }
    req.send().await.expect("request")
}

/// The answer with the digits of its (first) `ageMs` value left out.
fn without_age(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(body.to_vec()).expect("utf-8");
    let at = text.find("\"ageMs\":").expect("ageMs") + "\"ageMs\":".len();
    let end = at
        + text[at..]
            .find(|c: char| !c.is_ascii_digit())
            .expect("digits end");
    format!("{}{}", &text[..at], &text[end..]).into_bytes()
}

#[tokio::test]
async fn an_accepting_client_gets_gzip_that_decompresses_to_exactly_the_identity_bytes() {
    let h = Harness::with_fixture().await;
    for path in SHARED.iter().chain(&AGED) {
        let plain = get(&h, path, None).await;
        assert_eq!(plain.status(), 200, "{path}");
        let identity = plain.bytes().await.unwrap();
        assert!(
            identity.len() >= ballast_web::etag::MIN_GZIP,
            "{path}: {}",
            identity.len()
        );
        for accept in ["gzip", "gzip, deflate, br, zstd", "br;q=1, gzip;q=0.5", "*"] {
            let zipped = get(&h, path, Some(accept)).await;
            assert_eq!(zipped.status(), 200, "{path}");
            assert_eq!(header(&zipped, "content-encoding").as_deref(), Some("gzip"));
            assert_eq!(
                header(&zipped, "content-type").as_deref(),
                Some("application/json")
            );
            let length = header(&zipped, "content-length").expect("content-length");
            let body = zipped.bytes().await.unwrap();
            assert_eq!(length, body.len().to_string(), "{path}");
            assert!(body.len() < identity.len(), "{path}: smaller");
            let decoded = gunzip(&body);
            if AGED.contains(path) {
                // The same reading; only the age moved between the two requests.
                assert_eq!(without_age(&decoded), without_age(&identity), "{path}");
            } else {
                assert_eq!(decoded, identity, "{path}: exactly the identity bytes");
            }
        }
    }
}

#[tokio::test]
async fn the_gzip_answer_has_a_tag_of_its_own_and_if_none_match_with_either_tag_is_a_304() {
    let h = Harness::with_fixture().await;
    for path in SHARED.iter().chain(&AGED) {
        let plain = get(&h, path, None).await;
        let identity = header(&plain, "etag").expect("identity tag");
        let zipped = get(&h, path, Some("gzip")).await;
        let gz = header(&zipped, "etag").expect("gzip tag");
        assert_ne!(gz, identity, "{path}");
        assert_eq!(gz, ballast_web::etag::gzip_tag(&identity), "{path}");
        assert_eq!(
            gz.starts_with("W/"),
            identity.starts_with("W/"),
            "{path}: a weak tag stays weak"
        );
        // Either tag, asked with or without gzip: 304, the tag the client holds, nothing sent.
        for (held, accept) in [
            (&gz, Some("gzip")),
            (&identity, Some("gzip")),
            (&gz, None),
            (&identity, None),
        ] {
            let r = h
                .http
                .get(h.url(path))
                .header("If-None-Match", held.as_str())
                .header("Accept-Encoding", accept.unwrap_or("identity"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 304, "{path} {held} {accept:?}");
            assert_eq!(header(&r, "etag").as_deref(), Some(held.as_str()), "{path}");
            assert_eq!(header(&r, "content-encoding"), None, "{path}");
            assert!(r.bytes().await.unwrap().is_empty(), "{path}");
        }
        // Another tag: the whole answer, gzip-encoded.
        let other = h
            .http
            .get(h.url(path))
            .header("If-None-Match", "\"something-else\"")
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), 200, "{path}");
        assert_eq!(header(&other, "etag"), Some(gz.clone()), "{path}");
    }
}

#[tokio::test]
async fn a_client_that_does_not_accept_gzip_gets_the_identity_bytes() {
    let h = Harness::with_fixture().await;
    for path in SHARED {
        let reference = get(&h, path, None).await.bytes().await.unwrap();
        for accept in [
            None,
            Some("identity"),
            Some("br, deflate"),
            Some("gzip;q=0"),
        ] {
            let r = get(&h, path, accept).await;
            assert_eq!(r.status(), 200, "{path} {accept:?}");
            assert_eq!(header(&r, "content-encoding"), None, "{path} {accept:?}");
            let tag = header(&r, "etag").expect("tag");
            let body = r.bytes().await.unwrap();
            assert_eq!(body, reference, "{path} {accept:?}");
            assert_eq!(tag, ballast_web::etag::tag(&body), "{path} {accept:?}");
        }
    }
}

#[tokio::test]
async fn every_answer_of_a_route_that_may_be_gzip_encoded_varies_by_accept_encoding() {
    let h = Harness::with_fixture().await;
    for path in SHARED.iter().chain(&AGED) {
        let plain = get(&h, path, None).await;
        let zipped = get(&h, path, Some("gzip")).await;
        let tag = header(&zipped, "etag").unwrap();
        let not_modified = h
            .http
            .get(h.url(path))
            .header("Accept-Encoding", "gzip")
            .header("If-None-Match", tag)
            .send()
            .await
            .unwrap();
        assert_eq!(not_modified.status(), 304);
        for r in [&plain, &zipped, &not_modified] {
            assert_eq!(
                header(r, "vary").map(|v| v.to_ascii_lowercase()).as_deref(),
                Some("accept-encoding"),
                "{path} {}",
                r.status()
            );
        }
    }
}

#[tokio::test]
async fn an_answer_under_a_kilobyte_is_sent_as_it_is_to_a_client_that_accepts_gzip() {
    let h = Harness::with_fixture().await;
    let path = "/api/v1/brokers/racks";
    let plain = get(&h, path, None).await;
    let tag = header(&plain, "etag").unwrap();
    let identity = plain.bytes().await.unwrap();
    assert!(
        identity.len() < ballast_web::etag::MIN_GZIP,
        "{}",
        identity.len()
    );
    let r = get(&h, path, Some("gzip")).await;
    assert_eq!(header(&r, "content-encoding"), None);
    assert_eq!(header(&r, "etag"), Some(tag));
    assert_eq!(r.bytes().await.unwrap(), identity);
}

#[tokio::test]
async fn a_scrape_that_accepts_gzip_gets_the_metrics_gzip_encoded_and_others_the_text() {
    let h = Harness::with_fixture().await;
    let zipped = get(&h, "/metrics", Some("gzip")).await;
    assert_eq!(zipped.status(), 200);
    assert_eq!(header(&zipped, "content-encoding").as_deref(), Some("gzip"));
    assert_eq!(
        header(&zipped, "vary")
            .map(|v| v.to_ascii_lowercase())
            .as_deref(),
        Some("accept-encoding")
    );
    assert!(header(&zipped, "content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = String::from_utf8(gunzip(&zipped.bytes().await.unwrap())).unwrap();
    assert!(
        text.contains("ballast_audit_events_failure_total"),
        "{text}"
    );
    let plain = get(&h, "/metrics", None).await;
    assert_eq!(header(&plain, "content-encoding"), None);
    let text = plain.text().await.unwrap();
    assert!(text.contains("ballast_http_requests_total"), "{text}");
}

#[tokio::test]
async fn the_probes_and_the_dashboard_are_unaffected_by_accept_encoding() {
    let h = Harness::with_fixture().await;
    for path in ["/api/v1/health", "/api/v1/ready"] {
        let r = get(&h, path, Some("gzip")).await;
        assert_eq!(header(&r, "content-encoding"), None, "{path}");
        let body: serde_json::Value = r.json().await.expect("json");
        assert!(
            body.get("status").is_some() || body.get("data").is_some(),
            "{path}: {body}"
        );
    }
    // The dashboard reads the API in-process: its pages are the same whatever the browser
    // accepts (they are not gzip-encoded here, and read the identity bytes inside).
    for path in ["/ui/", "/ui/brokers", "/ui/topics"] {
        let plain = get(&h, path, None).await;
        let zipped = get(&h, path, Some("gzip, deflate, br")).await;
        assert_eq!(plain.status(), zipped.status(), "{path}");
        assert_eq!(header(&zipped, "content-encoding"), None, "{path}");
        let (a, b) = (plain.text().await.unwrap(), zipped.text().await.unwrap());
        assert!(
            b.contains("<html") || b.contains("<!DOCTYPE"),
            "{path}: {b}"
        );
        assert_eq!(a.len() / 100, b.len() / 100, "{path}: the same page");
    }
}
