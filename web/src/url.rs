//! URLs and origins: percent-encoding of one path segment or query value, and whether a
//! state-changing request comes from ballast's own origin. A leaf: it imports nothing of this
//! crate, so the dashboard and the authentication layers both use it.

use axum::http::HeaderMap;

/// Percent-encodes one path segment or query value (everything but RFC 3986's unreserved
/// characters), so a consumer group named `a/b?c` stays one segment.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether a state-changing request comes from a page of ballast's own origin. In order:
/// `Sec-Fetch-Site` decides when the browser sent it (`same-origin` is accepted, `cross-site` and
/// `same-site` refused: a sibling subdomain is another application). Otherwise the `Origin` must
/// be sent and equal the origin of `BALLAST_PUBLIC_URL` when it is set (always, with
/// authentication on), else the origin of the `Host` addressed. Forwarded headers
/// (`X-Forwarded-Host`) are never trusted: behind a reverse proxy, `BALLAST_PUBLIC_URL` names
/// the address browsers use. A request with neither header is refused: every browser sends one on
/// a cross-site post, so only a non-browser client lacks both, and it has no cookie to ride on.
pub fn same_origin(public_url: Option<&str>, headers: &HeaderMap) -> bool {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    match text("sec-fetch-site") {
        Some("same-origin") => return true,
        Some("cross-site" | "same-site") => return false,
        // `none` (typed or bookmarked, not a page's form) and unknown values: the origin decides.
        _ => {}
    }
    let Some(origin) = text("origin").filter(|o| !o.is_empty() && *o != "null") else {
        return false;
    };
    match public_url {
        Some(url) => origin_of(url).is_some_and(|own| origin.eq_ignore_ascii_case(&own)),
        None => {
            let host = text("host").unwrap_or_default();
            let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
            !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
        }
    }
}

/// `scheme://host[:port]` of a URL (its path dropped), as browsers send it in `Origin`.
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| format!("{scheme}://{authority}"))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn without_a_public_url_the_origin_must_match_the_host_and_must_be_sent() {
        let h = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(same_origin(None, &h));
        let h = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://evil.example"),
        ]);
        assert!(!same_origin(None, &h));
        let h = headers(&[("host", "127.0.0.1:8080")]);
        assert!(!same_origin(None, &h), "neither Origin nor Sec-Fetch-Site");
        let h = headers(&[("sec-fetch-site", "cross-site")]);
        assert!(!same_origin(None, &h));
    }

    #[test]
    fn with_a_public_url_the_origin_must_be_its_origin() {
        let public = Some("https://ballast.example.com/base");
        let h = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://ballast.example.com"),
        ]);
        assert!(same_origin(public, &h));
        let h = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://ballast.example.com"),
        ]);
        assert!(!same_origin(public, &h), "another scheme is another origin");
        let h = headers(&[("host", "evil.example"), ("origin", "https://evil.example")]);
        assert!(
            !same_origin(public, &h),
            "Host does not decide when the public URL is set"
        );
    }

    #[test]
    fn a_spoofed_forwarded_host_never_lets_a_foreign_origin_through() {
        for public in [None, Some("https://ballast.example.com")] {
            let h = headers(&[
                ("host", "127.0.0.1:8080"),
                ("x-forwarded-host", "evil.example"),
                ("origin", "https://evil.example"),
            ]);
            assert!(!same_origin(public, &h), "{public:?}");
        }
    }

    #[test]
    fn a_browser_saying_same_origin_is_accepted_whatever_host_a_proxy_forwards() {
        let h = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://ballast.example.com"),
            ("sec-fetch-site", "same-origin"),
        ]);
        assert!(same_origin(None, &h));
    }

    #[test]
    fn a_same_site_or_cross_site_browser_post_is_refused_even_with_a_matching_host() {
        for site in ["cross-site", "same-site"] {
            let mut h = headers(&[
                ("host", "ballast.example.com"),
                ("origin", "https://ballast.example.com"),
            ]);
            h.insert("sec-fetch-site", HeaderValue::from_static(site));
            assert!(
                !same_origin(Some("https://ballast.example.com"), &h),
                "{site}"
            );
        }
    }

    #[test]
    fn enc_keeps_unreserved_and_escapes_the_rest() {
        assert_eq!(enc("orders-1.v2_x~"), "orders-1.v2_x~");
        assert_eq!(enc("a/b?c d#é"), "a%2Fb%3Fc%20d%23%C3%A9");
    }
}
