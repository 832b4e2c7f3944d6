//! One connection to one broker: TCP (or TLS), ApiVersions negotiation, SASL, then requests one
//! at a time (a mutex around write+read). Several connections to several brokers are used
//! concurrently by the client.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::protocol::Request;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Instant};

use crate::config::{split_host_port, Sasl};
use crate::error::{Error, Result};
use crate::oauth::TokenProvider;
use crate::wire::{self, ApiVersionMap, ApiVersionsOutcome};

pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Where a broker listens; `id` is None for a bootstrap address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub id: Option<i32>,
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    pub(crate) fn parse(address: &str) -> Result<Endpoint, String> {
        let (host, port) = split_host_port(address)?;
        Ok(Endpoint {
            id: None,
            host,
            port,
        })
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.id {
            Some(id) => write!(f, "{id} ({host}:{})", self.port),
            None => write!(f, "{host}:{}", self.port),
        }
    }
}

/// What every new connection needs: identity, timeouts and security.
pub(crate) struct Dialer {
    pub client_id: String,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub sasl: Option<Sasl>,
    pub oauth: Option<Arc<TokenProvider>>,
}

/// The stream and the correlation counter, owned by whoever is talking.
pub(crate) struct Transport {
    io: Box<dyn Io>,
    next_correlation: i32,
    pub(crate) label: String,
    client_id: String,
}

impl Transport {
    pub(crate) fn new(io: Box<dyn Io>, label: String, client_id: String) -> Transport {
        Transport {
            io,
            next_correlation: 1,
            label,
            client_id,
        }
    }

    fn protocol(&self, detail: impl Into<String>) -> Error {
        Error::Protocol {
            broker: self.label.clone(),
            detail: detail.into(),
        }
    }

    fn io_error(&self, api: &'static str, source: std::io::Error) -> Error {
        if matches!(
            source.kind(),
            std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::ConnectionAborted
        ) {
            Error::Disconnected {
                broker: self.label.clone(),
                api,
            }
        } else {
            Error::Io {
                broker: self.label.clone(),
                api,
                source,
            }
        }
    }

    /// Encodes `request` (errors here leave the stream untouched).
    fn encode<R: Request>(&mut self, request: &R, version: i16) -> Result<(i32, Bytes)> {
        let correlation_id = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1).max(1);
        let frame = wire::encode_request(request, version, correlation_id, &self.client_id)
            .map_err(|detail| self.protocol(detail))?;
        Ok((correlation_id, frame))
    }

    async fn write(&mut self, api: &'static str, frame: &[u8]) -> Result<()> {
        if let Err(e) = self.io.write_all(frame).await {
            return Err(self.io_error(api, e));
        }
        if let Err(e) = self.io.flush().await {
            return Err(self.io_error(api, e));
        }
        Ok(())
    }

    async fn read_frame(&mut self, api: &'static str) -> Result<Bytes> {
        let mut prefix = [0u8; 4];
        if let Err(e) = self.io.read_exact(&mut prefix).await {
            return Err(self.io_error(api, e));
        }
        let len = wire::frame_len(prefix).map_err(|d| self.protocol(d))?;
        let mut body = vec![0u8; len];
        if let Err(e) = self.io.read_exact(&mut body).await {
            return Err(self.io_error(api, e));
        }
        Ok(Bytes::from(body))
    }

    /// Sends one request and reads its answer.
    pub(crate) async fn exchange<R: Request>(
        &mut self,
        request: &R,
        version: i16,
    ) -> Result<R::Response> {
        let api = wire::api_name(R::KEY);
        let (correlation_id, frame) = self.encode(request, version)?;
        self.write(api, &frame).await?;
        let answer = self.read_frame(api).await?;
        let (got, response) =
            wire::decode_response::<R>(answer, version).map_err(|d| self.protocol(d))?;
        if got != correlation_id {
            return Err(self.protocol(format!(
                "answer to request {correlation_id} carries correlation id {got}"
            )));
        }
        Ok(response)
    }

    /// Sends one request that the broker does not answer (Produce with acks=0).
    pub(crate) async fn send_only<R: Request>(&mut self, request: &R, version: i16) -> Result<()> {
        let api = wire::api_name(R::KEY);
        let (_, frame) = self.encode(request, version)?;
        self.write(api, &frame).await
    }

    /// ApiVersions, v3 first, falling back to what the broker offers (KIP-511).
    async fn negotiate_versions(&mut self) -> Result<ApiVersionMap> {
        let mut version = wire::API_VERSIONS_FIRST;
        for _ in 0..4 {
            let request = wire::api_versions_request(version);
            let (correlation_id, frame) = self.encode(&request, version)?;
            self.write("ApiVersions", &frame).await?;
            let answer = self.read_frame("ApiVersions").await?;
            let (got, outcome) =
                wire::decode_api_versions(answer, version).map_err(|d| self.protocol(d))?;
            if got != correlation_id {
                return Err(self.protocol(format!(
                    "answer to request {correlation_id} carries correlation id {got}"
                )));
            }
            match outcome {
                ApiVersionsOutcome::Ok(map) => {
                    tracing::debug!(broker = %self.label, version, "api versions negotiated");
                    return Ok(map);
                }
                ApiVersionsOutcome::Retry(lower) => {
                    tracing::debug!(broker = %self.label, from = version, to = lower, "apiversions fallback");
                    version = lower;
                }
                ApiVersionsOutcome::Failed(code) => {
                    return Err(Error::kafka("ApiVersions", code, None));
                }
            }
        }
        Err(self.protocol("apiversions negotiation did not settle on a version"))
    }
}

/// An established, negotiated (and authenticated) connection to one broker.
pub(crate) struct Connection {
    label: String,
    /// The broker's id (None for a bootstrap address).
    broker: Option<i32>,
    transport: tokio::sync::Mutex<Transport>,
    versions: ApiVersionMap,
    broken: AtomicBool,
    /// When the broker's SASL session ends (KIP-368); the connection is replaced before.
    reauth_at: Option<Instant>,
    request_timeout: Duration,
}

impl Connection {
    /// Opens a connection: TCP, TLS, ApiVersions, SASL, all within the connect timeout.
    pub(crate) async fn open(dialer: &Dialer, endpoint: &Endpoint) -> Result<Connection> {
        let label = endpoint.to_string();
        match timeout(
            dialer.connect_timeout,
            Self::open_within(dialer, endpoint, &label),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectTimeout {
                broker: label,
                after: dialer.connect_timeout,
            }),
        }
    }

    async fn open_within(dialer: &Dialer, endpoint: &Endpoint, label: &str) -> Result<Connection> {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|source| Error::Connect {
                broker: label.to_string(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = match &dialer.tls {
            Some(tls) => Box::new(crate::tls::handshake(tls, &endpoint.host, label, tcp).await?),
            None => Box::new(tcp),
        };
        let mut transport = Transport::new(io, label.to_string(), dialer.client_id.clone());
        let versions = transport.negotiate_versions().await?;
        let mut reauth_at = None;
        if let Some(sasl) = &dialer.sasl {
            let lifetime =
                crate::sasl::authenticate(&mut transport, &versions, sasl, dialer.oauth.as_deref())
                    .await?;
            reauth_at = lifetime.map(|l| Instant::now() + l.mul_f64(0.85));
        }
        tracing::debug!(broker = %label, "connected");
        Ok(Connection {
            label: label.to_string(),
            broker: endpoint.id,
            transport: tokio::sync::Mutex::new(transport),
            versions,
            broken: AtomicBool::new(false),
            reauth_at,
            request_timeout: dialer.request_timeout,
        })
    }

    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// The broker's id (None for a bootstrap address).
    pub(crate) fn broker(&self) -> Option<i32> {
        self.broker
    }

    /// What the broker offered in ApiVersions.
    pub(crate) fn api_versions(&self) -> &ApiVersionMap {
        &self.versions
    }

    /// False once a request failed mid-way (the stream is in an unknown state) or the SASL
    /// session is about to end.
    pub(crate) fn is_usable(&self) -> bool {
        !self.broken.load(Ordering::Acquire) && self.reauth_at.is_none_or(|t| Instant::now() < t)
    }

    /// The version to use for `R` with this broker.
    pub(crate) fn version<R: Request>(&self) -> Result<i16> {
        let ours = wire::client_versions::<R>();
        self.versions
            .pick(R::KEY, ours)
            .map_err(|broker_versions| Error::UnsupportedVersion {
                api: wire::api_name(R::KEY),
                broker: self.label.clone(),
                broker_versions,
                client_versions: ours,
            })
    }

    /// Sends `request` at `version` and waits (at most the request timeout) for the answer.
    ///
    /// Cancel-safe: a caller that drops this future mid-exchange (a client of a server-sent
    /// stream going away) leaves the connection marked broken, so the next request never reads
    /// the abandoned answer.
    pub(crate) async fn send<R: Request>(&self, request: &R, version: i16) -> Result<R::Response> {
        let api = wire::api_name(R::KEY);
        let mut transport = self.lock(api).await?;
        let mut in_flight = InFlight::new(&self.broken);
        let outcome = timeout(self.request_timeout, transport.exchange(request, version)).await;
        in_flight.settled();
        match outcome {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => {
                if transport_touched(&e) {
                    self.broken.store(true, Ordering::Release);
                }
                Err(e)
            }
            Err(_) => {
                self.broken.store(true, Ordering::Release);
                Err(Error::Timeout {
                    broker: self.label.clone(),
                    api,
                    after: self.request_timeout,
                })
            }
        }
    }

    /// Sends a request that gets no answer (Produce with acks=0). Cancel-safe like [`Self::send`].
    pub(crate) async fn send_only<R: Request>(&self, request: &R, version: i16) -> Result<()> {
        let api = wire::api_name(R::KEY);
        let mut transport = self.lock(api).await?;
        let mut in_flight = InFlight::new(&self.broken);
        let outcome = timeout(self.request_timeout, transport.send_only(request, version)).await;
        in_flight.settled();
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                self.broken.store(true, Ordering::Release);
                Err(e)
            }
            Err(_) => {
                self.broken.store(true, Ordering::Release);
                Err(Error::Timeout {
                    broker: self.label.clone(),
                    api,
                    after: self.request_timeout,
                })
            }
        }
    }

    async fn lock(&self, api: &'static str) -> Result<tokio::sync::MutexGuard<'_, Transport>> {
        let transport = timeout(self.request_timeout, self.transport.lock())
            .await
            .map_err(|_| Error::Timeout {
                broker: self.label.clone(),
                api,
                after: self.request_timeout,
            })?;
        if self.broken.load(Ordering::Acquire) {
            return Err(Error::Disconnected {
                broker: self.label.clone(),
                api,
            });
        }
        Ok(transport)
    }
}

/// Marks a connection broken when dropped before the exchange it guards settled: the bytes of a
/// half-written request or an unread answer would otherwise be read by the next request.
struct InFlight<'a> {
    broken: &'a AtomicBool,
    settled: bool,
}

impl<'a> InFlight<'a> {
    fn new(broken: &'a AtomicBool) -> InFlight<'a> {
        InFlight {
            broken,
            settled: false,
        }
    }

    fn settled(&mut self) {
        self.settled = true;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.broken.store(true, Ordering::Release);
        }
    }
}

/// Protocol errors raised while encoding leave the stream clean; all others mean bytes were
/// (or may have been) exchanged.
fn transport_touched(e: &Error) -> bool {
    match e {
        Error::Protocol { detail, .. } => !detail.starts_with("cannot encode"),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_into_host_and_port() {
        assert_eq!(
            split_host_port("kafka-1:9092"),
            Ok(("kafka-1".into(), 9092))
        );
        assert_eq!(split_host_port("[::1]:9093"), Ok(("::1".into(), 9093)));
        assert!(split_host_port("kafka-1").is_err());
        assert!(split_host_port(":9092").is_err());
        assert!(split_host_port("kafka:99999").is_err());
        assert!(split_host_port("[::1]9092").is_err());
    }

    /// A connection over an in-memory stream whose far end the test plays.
    fn connection_over(io: tokio::io::DuplexStream) -> Connection {
        let transport = Transport::new(Box::new(io), "test".into(), "ballast".into());
        Connection {
            label: "test".into(),
            broker: None,
            transport: tokio::sync::Mutex::new(transport),
            versions: ApiVersionMap::from_ranges(&[(3, 0, 4)]),
            broken: AtomicBool::new(false),
            reauth_at: None,
            request_timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn a_request_dropped_mid_exchange_leaves_the_connection_unusable_not_desynchronised() {
        use kafka_protocol::messages::MetadataRequest;
        let (ours, _broker) = tokio::io::duplex(64 * 1024);
        let conn = connection_over(ours);
        // The broker never answers: the caller gives up (drops the future) mid-exchange.
        let request = MetadataRequest::default();
        let dropped = tokio::time::timeout(Duration::from_millis(50), conn.send(&request, 4)).await;
        assert!(
            dropped.is_err(),
            "the exchange was still waiting for its answer"
        );
        assert!(
            !conn.is_usable(),
            "a connection with an abandoned answer is not reused"
        );
        match conn.send(&request, 4).await {
            Err(Error::Disconnected { .. }) => {}
            other => panic!("expected the next request to be refused, got {other:?}"),
        }
    }

    #[test]
    fn endpoints_name_the_broker_id_and_address() {
        let mut e = Endpoint::parse("kafka-1:9092").unwrap();
        assert_eq!(e.to_string(), "kafka-1:9092");
        e.id = Some(3);
        assert_eq!(e.to_string(), "3 (kafka-1:9092)");
        let v6 = Endpoint {
            id: None,
            host: "::1".into(),
            port: 1,
        };
        assert_eq!(v6.to_string(), "[::1]:1");
    }
}
