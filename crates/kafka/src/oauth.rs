//! OAUTHBEARER tokens from the client-credentials grant (RFC 6749 4.4): a form POST of
//! `grant_type=client_credentials` (and `scope`) with the client id and secret as HTTP basic
//! auth. The token is cached and fetched again once 80% of its lifetime (`expires_in`, else the
//! JWT `exp` claim) has passed; connections authenticate with the current token.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// The share of a token's lifetime after which it is replaced.
const REFRESH_AT: f64 = 0.8;
/// How long a token whose lifetime is unknown is reused.
const UNKNOWN_LIFETIME: Duration = Duration::from_secs(60);

pub(crate) struct TokenProvider {
    endpoint: String,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
    http: reqwest::Client,
    cached: tokio::sync::Mutex<Option<CachedToken>>,
}

struct CachedToken {
    token: String,
    refresh_at: Instant,
}

impl TokenProvider {
    pub(crate) fn new(
        endpoint: &str,
        client_id: &str,
        client_secret: &str,
        scope: Option<&str>,
        ca_file: Option<&std::path::Path>,
        timeout: Duration,
    ) -> Result<TokenProvider> {
        let mut builder = reqwest::Client::builder().timeout(timeout);
        if let Some(path) = ca_file {
            // a private CA for the brokers often signs the identity provider too
            if let Ok(pem) = std::fs::read(path) {
                if let Ok(certs) = reqwest::Certificate::from_pem_bundle(&pem) {
                    for cert in certs {
                        builder = builder.add_root_certificate(cert);
                    }
                }
            }
        }
        let http = builder.build().map_err(|e| Error::OAuth {
            endpoint: endpoint.to_string(),
            detail: format!("cannot build the http client: {e}"),
        })?;
        Ok(TokenProvider {
            endpoint: endpoint.to_string(),
            client_id: client_id.to_string(),
            client_secret: client_secret.to_string(),
            scope: scope.map(str::to_string),
            http,
            cached: tokio::sync::Mutex::new(None),
        })
    }

    /// The current token, fetched again when 80% of its lifetime has passed.
    pub(crate) async fn token(&self) -> Result<String> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref() {
            if Instant::now() < c.refresh_at {
                return Ok(c.token.clone());
            }
        }
        let (token, lifetime) = self.fetch().await?;
        let refresh_after = lifetime.map_or(UNKNOWN_LIFETIME, |l| l.mul_f64(REFRESH_AT));
        tracing::debug!(endpoint = %self.endpoint, refresh_after_s = refresh_after.as_secs(), "oauth token fetched");
        *cached = Some(CachedToken {
            token: token.clone(),
            refresh_at: Instant::now() + refresh_after,
        });
        Ok(token)
    }

    async fn fetch(&self) -> Result<(String, Option<Duration>)> {
        let error = |detail: String| Error::OAuth {
            endpoint: self.endpoint.clone(),
            detail,
        };
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope.as_str()));
        }
        let response = self
            .http
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header("accept", "application/json")
            .form(&form)
            .send()
            .await
            .map_err(|e| error(format!("request failed: {}", without_url(&e))))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| error(format!("cannot read the answer: {}", without_url(&e))))?;
        if !status.is_success() {
            let excerpt: String = body.chars().take(300).collect();
            return Err(error(format!("http status {}: {excerpt}", status.as_u16())));
        }
        parse_token_response(&body, unix_now()).map_err(error)
    }
}

fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "").replace(" ()", "");
    }
    text.trim().to_string()
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The token and its lifetime from a token endpoint's JSON answer.
pub(crate) fn parse_token_response(
    body: &str,
    now_unix: u64,
) -> Result<(String, Option<Duration>), String> {
    let json: serde_json::Value =
        serde_json::from_str(body).map_err(|_| "the answer is not json".to_string())?;
    let token = json
        .get("access_token")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| "the answer has no access_token".to_string())?
        .to_string();
    let expires_in = json.get("expires_in").and_then(|v| {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse::<f64>().ok()))
    });
    let lifetime = match expires_in {
        Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
        _ => jwt_exp(&token).map(|exp| Duration::from_secs(exp.saturating_sub(now_unix))),
    };
    Ok((token, lifetime))
}

/// The `exp` claim of a JWT, if the token is one.
pub(crate) fn jwt_exp(token: &str) -> Option<u64> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("exp")?.as_f64().map(|v| v.max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.sig",
            engine.encode(r#"{"alg":"none"}"#),
            engine.encode(claims)
        )
    }

    #[test]
    fn token_lifetime_comes_from_expires_in_then_the_jwt_exp() {
        let (token, lifetime) =
            parse_token_response(r#"{"access_token":"abc","expires_in":3600}"#, 0).unwrap();
        assert_eq!(token, "abc");
        assert_eq!(lifetime, Some(Duration::from_secs(3600)));
        let (_, lifetime) =
            parse_token_response(r#"{"access_token":"abc","expires_in":"120"}"#, 0).unwrap();
        assert_eq!(lifetime, Some(Duration::from_secs(120)));
        let token = jwt(r#"{"sub":"ballast","exp":1000600}"#);
        let body = format!(r#"{{"access_token":"{token}","token_type":"Bearer"}}"#);
        let (_, lifetime) = parse_token_response(&body, 1_000_000).unwrap();
        assert_eq!(lifetime, Some(Duration::from_secs(600)));
        let (_, lifetime) = parse_token_response(r#"{"access_token":"opaque"}"#, 0).unwrap();
        assert_eq!(lifetime, None);
    }

    /// A token endpoint that hands out `tok-1`, `tok-2`, ... with `expires_in` seconds.
    async fn endpoint(expires_in: f64) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let served = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let n = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let body = format!(r#"{{"access_token":"tok-{n}","expires_in":{expires_in}}}"#);
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            }
        });
        (format!("http://{addr}/token"), count)
    }

    #[tokio::test]
    async fn the_token_is_cached_and_refreshed_after_80_percent_of_its_lifetime() {
        let (url, count) = endpoint(1.0).await;
        let provider =
            TokenProvider::new(&url, "id", "secret", None, None, Duration::from_secs(5)).unwrap();
        assert_eq!(provider.token().await.unwrap(), "tok-1");
        assert_eq!(provider.token().await.unwrap(), "tok-1", "cached");
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(850)).await;
        assert_eq!(
            provider.token().await.unwrap(),
            "tok-2",
            "refreshed before expiry"
        );
        assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn a_token_answer_without_a_token_is_an_error() {
        assert!(parse_token_response(r#"{"error":"invalid_client"}"#, 0).is_err());
        assert!(parse_token_response("<html>", 0).is_err());
        assert!(parse_token_response(r#"{"access_token":""}"#, 0).is_err());
    }
}
