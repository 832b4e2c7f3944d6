//! OpenID Connect login with the `openidconnect` crate: discovery from the issuer URL (cached per
//! provider, fetched again when an ID token is signed by a key the cached JWKS lacks: key
//! rotation), the authorization-code flow with PKCE (S256), `state` and `nonce`, and the ID
//! token's signature (the provider's JWKS; `alg: none` is never accepted), `iss`, `aud`, `exp`
//! and `nonce` checked against the injected clock. Claims are the verified ID token's, merged
//! with the userinfo endpoint's (the ID token wins; userinfo must name the same subject).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ballast_config::{AuthConfig, OidcProvider};
use openidconnect::core::{
    CoreAuthDisplay, CoreAuthenticationFlow, CoreClaimName, CoreClaimType, CoreClient,
    CoreClientAuthMethod, CoreGrantType, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm, CoreResponseMode, CoreResponseType, CoreSubjectIdentifierType,
};
use openidconnect::{
    AdditionalProviderMetadata, AuthType, AuthorizationCode, ClaimsVerificationError, ClientId,
    ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet, EndpointSet, IssuerUrl, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadata, RedirectUrl,
    RefreshToken, RequestTokenError, Scope,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

/// How long one HTTP exchange with a provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// Discovery fields beyond the core set that the login uses.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ExtraMetadata {
    /// Where a browser ends the session at the provider (RP-initiated logout).
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
}
impl AdditionalProviderMetadata for ExtraMetadata {}

type Metadata = ProviderMetadata<
    ExtraMetadata,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

/// A client made from discovered metadata (authorization endpoint set; token and userinfo
/// endpoints as discovered).
type DiscoveredClient = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// What went wrong at or with a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OidcError {
    /// The provider could not be reached or answered nonsense (502).
    Unavailable(String),
    /// The provider or its tokens refused the login (401).
    Refused(String),
}

impl std::fmt::Display for OidcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OidcError::Unavailable(m) | OidcError::Refused(m) => f.write_str(m),
        }
    }
}

/// A started login: where to send the browser and what to keep until it returns.
pub struct Started {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// A finished login's verified claims and tokens.
pub struct Finished {
    pub claims: Map<String, Value>,
    pub refresh_token: Option<String>,
    pub access_expires_at_ms: Option<i64>,
}

/// Refreshed tokens.
pub struct Refreshed {
    /// A new refresh token when the provider rotated it.
    pub refresh_token: Option<String>,
    pub access_expires_at_ms: Option<i64>,
}

/// The configured providers and their discovered metadata.
pub struct Providers {
    config: HashMap<String, OidcProvider>,
    public_url: String,
    http: openidconnect::reqwest::Client,
    cache: Mutex<HashMap<String, Arc<Metadata>>>,
}

impl Providers {
    pub fn new(auth: &AuthConfig) -> Providers {
        let http = openidconnect::reqwest::ClientBuilder::new()
            // Following redirects would open the client to server-side request forgery.
            .redirect(openidconnect::reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .unwrap_or_default();
        Providers {
            config: auth
                .providers
                .iter()
                .map(|p| (p.name.clone(), p.clone()))
                .collect(),
            public_url: auth.public_url.clone().unwrap_or_default(),
            http,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// `{BALLAST_PUBLIC_URL}/api/v1/auth/callback/{provider}`
    pub fn redirect_uri(&self, provider: &str) -> String {
        format!("{}/api/v1/auth/callback/{provider}", self.public_url)
    }

    fn provider(&self, name: &str) -> Result<&OidcProvider, OidcError> {
        self.config
            .get(name)
            .ok_or_else(|| OidcError::Refused(format!("no provider {name:?}")))
    }

    /// The provider's metadata and keys: cached, or discovered when `fresh` or not cached.
    async fn metadata(&self, name: &str, fresh: bool) -> Result<Arc<Metadata>, OidcError> {
        let provider = self.provider(name)?;
        let mut cache = self.cache.lock().await;
        if !fresh {
            if let Some(m) = cache.get(name) {
                return Ok(m.clone());
            }
        }
        let issuer = IssuerUrl::new(provider.issuer.clone())
            .map_err(|e| OidcError::Unavailable(format!("issuer URL: {e}")))?;
        let metadata = Metadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| {
                OidcError::Unavailable(format!(
                    "discovery at {} failed: {}",
                    provider.issuer,
                    error_chain(&e)
                ))
            })?;
        let metadata = Arc::new(metadata);
        cache.insert(name.to_string(), metadata.clone());
        Ok(metadata)
    }

    fn client(
        &self,
        provider: &OidcProvider,
        metadata: &Metadata,
    ) -> Result<DiscoveredClient, OidcError> {
        let redirect = RedirectUrl::new(self.redirect_uri(&provider.name))
            .map_err(|e| OidcError::Unavailable(format!("redirect URI: {e}")))?;
        let client = CoreClient::from_provider_metadata(
            metadata.clone(),
            ClientId::new(provider.client_id.clone()),
            provider
                .client_secret
                .as_ref()
                .map(|s| ClientSecret::new(s.expose().to_string())),
        )
        .set_redirect_uri(redirect);
        // HTTP Basic unless the provider says it takes the secret only in the body.
        let methods = metadata.token_endpoint_auth_methods_supported();
        let post_only = methods.is_some_and(|m| {
            m.contains(&CoreClientAuthMethod::ClientSecretPost)
                && !m.contains(&CoreClientAuthMethod::ClientSecretBasic)
        });
        Ok(if post_only {
            client.set_auth_type(AuthType::RequestBody)
        } else {
            client
        })
    }

    /// Starts a login at `name`: the authorization URL with a fresh state, nonce and PKCE
    /// challenge.
    pub async fn start(&self, name: &str) -> Result<Started, OidcError> {
        let provider = self.provider(name)?;
        let metadata = self.metadata(name, false).await?;
        let client = self.client(provider, &metadata)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in provider.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok(Started {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Finishes a login: exchanges the code (with the PKCE verifier), verifies the ID token at
    /// `now_ms` against `nonce`, and merges userinfo.
    pub async fn finish(
        &self,
        name: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
        now_ms: i64,
    ) -> Result<Finished, OidcError> {
        let provider = self.provider(name)?;
        let metadata = self.metadata(name, false).await?;
        let client = self.client(provider, &metadata)?;
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| OidcError::Unavailable(format!("token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()))
            .request_async(&self.http)
            .await
            .map_err(token_error)?;
        let id_token = response
            .extra_fields()
            .id_token()
            .ok_or_else(|| OidcError::Refused("the provider returned no ID token".into()))?;
        let nonce = Nonce::new(nonce.to_string());
        let verified = {
            let verifier = client.id_token_verifier().set_time_fn(move || at(now_ms));
            id_token.claims(&verifier, &nonce).map(|_| ())
        };
        if let Err(first) = verified {
            let rotated = matches!(first, ClaimsVerificationError::SignatureVerification(_));
            if !rotated {
                return Err(refused_token(&first));
            }
            // The provider may have rotated its keys: fetch them again, once.
            let metadata = self.metadata(name, true).await?;
            let client = self.client(provider, &metadata)?;
            let verifier = client.id_token_verifier().set_time_fn(move || at(now_ms));
            id_token
                .claims(&verifier, &nonce)
                .map_err(|e| refused_token(&e))?;
        }
        let mut claims = jwt_claims(&id_token.to_string())
            .ok_or_else(|| OidcError::Refused("the ID token's claims are unreadable".into()))?;
        if let Some(endpoint) = metadata.userinfo_endpoint() {
            let info = self
                .userinfo(endpoint.url().as_str(), response.access_token().secret())
                .await?;
            if info.get("sub").is_some() && info.get("sub") != claims.get("sub") {
                return Err(OidcError::Refused(
                    "userinfo names another subject than the ID token".into(),
                ));
            }
            for (k, v) in info {
                claims.entry(k).or_insert(v);
            }
        }
        Ok(Finished {
            claims,
            refresh_token: response.refresh_token().map(|t| t.secret().clone()),
            access_expires_at_ms: expiry(now_ms, response.expires_in()),
        })
    }

    async fn userinfo(
        &self,
        url: &str,
        access_token: &str,
    ) -> Result<Map<String, Value>, OidcError> {
        let answer = self
            .http
            .get(url)
            .bearer_auth(access_token)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| OidcError::Unavailable(format!("userinfo: {}", error_chain(&e))))?;
        let status = answer.status();
        if !status.is_success() {
            return Err(OidcError::Unavailable(format!(
                "userinfo answered {status}"
            )));
        }
        let is_json = answer
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            // A signed or encrypted userinfo answer: the ID token's claims are used alone.
            return Ok(Map::new());
        }
        answer
            .json::<Map<String, Value>>()
            .await
            .map_err(|e| OidcError::Unavailable(format!("userinfo: {}", error_chain(&e))))
    }

    /// New tokens for a refresh token.
    pub async fn refresh(
        &self,
        name: &str,
        refresh_token: &str,
        now_ms: i64,
    ) -> Result<Refreshed, OidcError> {
        let provider = self.provider(name)?;
        let metadata = self.metadata(name, false).await?;
        let client = self.client(provider, &metadata)?;
        let token = RefreshToken::new(refresh_token.to_string());
        let response = client
            .exchange_refresh_token(&token)
            .map_err(|e| OidcError::Unavailable(format!("token endpoint: {e}")))?
            .request_async(&self.http)
            .await
            .map_err(token_error)?;
        Ok(Refreshed {
            refresh_token: response.refresh_token().map(|t| t.secret().clone()),
            access_expires_at_ms: expiry(now_ms, response.expires_in()),
        })
    }

    /// The provider's end-session endpoint, when it has one and was discovered.
    pub async fn end_session_url(&self, name: &str) -> Option<String> {
        let cache = self.cache.lock().await;
        cache
            .get(name)
            .and_then(|m| m.additional_metadata().end_session_endpoint.clone())
    }
}

fn at(now_ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(now_ms).unwrap_or_default()
}

fn expiry(now_ms: i64, expires_in: Option<Duration>) -> Option<i64> {
    expires_in.map(|d| now_ms.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))
}

fn refused_token(e: &ClaimsVerificationError) -> OidcError {
    let why = match e {
        ClaimsVerificationError::SignatureVerification(inner) => {
            format!("signature verification failed: {inner}")
        }
        other => other.to_string(),
    };
    OidcError::Refused(format!("the ID token was refused: {why}"))
}

fn token_error<RE: std::error::Error + 'static, T: openidconnect::ErrorResponse + 'static>(
    e: RequestTokenError<RE, T>,
) -> OidcError {
    match e {
        RequestTokenError::ServerResponse(r) => {
            OidcError::Refused(format!("the provider refused the code: {r}"))
        }
        other => OidcError::Unavailable(format!("token endpoint: {}", error_chain(&other))),
    }
}

/// The payload of a compact JWT as a JSON object (only after its signature was verified).
fn jwt_claims(jwt: &str) -> Option<Map<String, Value>> {
    use base64::Engine;
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
