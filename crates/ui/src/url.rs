//! Percent-encoding of one path segment or query value, for the API paths and the page links
//! the dashboard builds.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_stays_one_segment() {
        assert_eq!(enc("a/b?c d"), "a%2Fb%3Fc%20d");
        assert_eq!(enc("orders-3_x.y~"), "orders-3_x.y~");
    }
}
