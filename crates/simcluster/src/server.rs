//! One tokio listener per broker: 4-byte length framing, optional TLS, dispatch to the handlers.
//! A stopped broker closes its listener and every connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use crate::handlers::{self, Conn, Reply};
use crate::state::BrokerId;
use crate::{Shared, SimError};

/// Largest request frame accepted (Kafka's socket.request.max.bytes).
const MAX_FRAME: usize = 100 * 1024 * 1024;

pub struct Listener {
    pub port: u16,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Listener {
    /// Closes the listener and every connection it accepted, and waits until they are gone.
    pub async fn close(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

pub async fn bind(shared: Arc<Shared>, id: BrokerId, port: u16) -> Result<Listener, SimError> {
    let addr = format!("{}:{}", shared.host, port);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|source| SimError::Bind {
            addr: addr.clone(),
            source,
        })?;
    let port = listener
        .local_addr()
        .map_err(|source| SimError::Bind { addr, source })?
        .port();
    let (stop, stop_rx) = watch::channel(false);
    let task = tokio::spawn(accept_loop(shared, id, listener, stop_rx));
    tracing::debug!(broker = id, port, "broker listening");
    Ok(Listener { port, stop, task })
}

async fn accept_loop(
    shared: Arc<Shared>,
    id: BrokerId,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
) {
    let mut global = shared.shutdown.subscribe();
    let mut conns = JoinSet::new();
    if *global.borrow() {
        return;
    }
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = global.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok((sock, peer)) => {
                    conns.spawn(connection(shared.clone(), id, sock, peer));
                }
                Err(e) => {
                    tracing::debug!(broker = id, error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    conns.shutdown().await;
    tracing::debug!(broker = id, "broker listener closed");
}

async fn connection(shared: Arc<Shared>, broker: BrokerId, sock: TcpStream, peer: SocketAddr) {
    let _ = sock.set_nodelay(true);
    match shared.tls.clone() {
        Some(tls) => {
            let acceptor = tokio_rustls::TlsAcceptor::from(tls);
            match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(sock)).await {
                Ok(Ok(stream)) => serve(shared, broker, stream, peer).await,
                Ok(Err(e)) => tracing::debug!(broker, %peer, error = %e, "tls handshake failed"),
                Err(_) => tracing::debug!(broker, %peer, "tls handshake timed out"),
            }
        }
        None => serve(shared, broker, sock, peer).await,
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    broker: BrokerId,
    mut stream: S,
    peer: SocketAddr,
) {
    let mut conn = Conn::new(shared.protocol.uses_sasl(), peer.ip().to_string());
    loop {
        let mut len = [0u8; 4];
        if stream.read_exact(&mut len).await.is_err() {
            return;
        }
        let size = i32::from_be_bytes(len);
        if size <= 0 || size as usize > MAX_FRAME {
            tracing::debug!(broker, %peer, size, "invalid frame size, closing");
            return;
        }
        let mut buf = vec![0u8; size as usize];
        if stream.read_exact(&mut buf).await.is_err() {
            return;
        }
        let frame = Bytes::from(buf);
        let mut reply = handlers::handle(&shared, broker, &mut conn, frame.clone(), true);
        if let Reply::Wait(d) = reply {
            tokio::time::sleep(d).await;
            reply = handlers::handle(&shared, broker, &mut conn, frame, false);
        }
        match reply {
            Reply::Frame(body) => {
                let mut out = Vec::with_capacity(body.len() + 4);
                out.extend_from_slice(&(body.len() as i32).to_be_bytes());
                out.extend_from_slice(&body);
                if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
                if conn.close_after_reply {
                    let _ = stream.shutdown().await;
                    return;
                }
            }
            Reply::Nothing => {}
            Reply::Close => return,
            Reply::Wait(_) => return,
        }
    }
}
