//! TLS with rustls (ring): the CA file or the system roots, optional client certificate, and
//! handshake failures explained in words that name the broker.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{CertificateError, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::config::TlsConfig;
use crate::error::{Error, Result};

/// The rustls client configuration for `tls`; files are read once here.
pub(crate) fn client_config(tls: &TlsConfig) -> Result<Arc<rustls::ClientConfig>> {
    let mut roots = RootCertStore::empty();
    match &tls.ca_file {
        Some(path) => {
            let certs = read_certs(path)?;
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| Error::Config(format!("ca file {}: {e}", path.display())))?;
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(native.certs);
            if added == 0 {
                return Err(Error::Config(
                    "no ca file given and no system root certificate found".to_string(),
                ));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("tls: {e}")))?
        .with_root_certificates(roots);
    let config = match (&tls.cert_file, &tls.key_file) {
        (Some(cert_file), Some(key_file)) => {
            let certs = read_certs(cert_file)?;
            let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| {
                Error::Config(format!(
                    "key file {} holds no usable private key: {e}",
                    key_file.display()
                ))
            })?;
            // Refused when the key is not the certificate's, or the certificate itself is not
            // usable (an X.509 v1 certificate, for one): say both, not a mismatch alone.
            builder.with_client_auth_cert(certs, key).map_err(|e| {
                let v1 = if e.to_string().contains("UnsupportedCertVersion") {
                    " (an X.509 v1 certificate: TLS needs v3, made with extensions)"
                } else {
                    ""
                };
                Error::Config(format!(
                    "client certificate {} with key {} cannot be used{v1}: {e}",
                    cert_file.display(),
                    key_file.display()
                ))
            })?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(Error::Config(
                "a client certificate needs both a cert file and a key file".to_string(),
            ))
        }
    };
    Ok(Arc::new(config))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::Config(format!(
                "cannot read certificates from {}: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::Config(format!(
            "{} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// The TLS handshake on an open TCP stream to `host`.
pub(crate) async fn handshake(
    config: &Arc<rustls::ClientConfig>,
    host: &str,
    label: &str,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| Error::Config(format!("{host:?} is not a valid tls server name")))?;
    TlsConnector::from(config.clone())
        .connect(name, tcp)
        .await
        .map_err(|source| Error::Tls {
            broker: label.to_string(),
            reason: explain(&source, host),
            source,
        })
}

/// Words for a failed handshake.
fn explain(error: &std::io::Error, host: &str) -> String {
    let Some(rustls_error) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return match error.kind() {
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset => {
                "the broker closed the connection during the handshake (is this a TLS listener?)"
                    .to_string()
            }
            _ => "the handshake did not complete".to_string(),
        };
    };
    match rustls_error {
        rustls::Error::InvalidCertificate(cert) => match cert {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                "the broker certificate is not trusted by the configured CA".to_string()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!("the broker certificate is not valid for the name {host}")
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the broker certificate has expired".to_string()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the broker certificate is not valid yet".to_string()
            }
            other => format!("the broker certificate was refused: {other:?}"),
        },
        rustls::Error::AlertReceived(alert) => format!(
            "the broker refused the handshake ({alert:?}); check the client certificate and the broker's trust store"
        ),
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the broker did not answer in TLS (is this a plaintext listener?)".to_string()
        }
        other => other.to_string().to_lowercase(),
    }
}
