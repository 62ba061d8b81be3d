//! HTTPS for `ringflake serve` (`--tls-cert`, `--tls-key`): rustls with the ring provider,
//! TLS 1.2 and 1.3, HTTP/2 and HTTP/1.1 (ALPN `h2`, `http/1.1`: [`super::versions`]).
//!
//! The handshake runs in the connection's own task, bounded by [`HANDSHAKE_TIMEOUT`]: a client
//! that connects and says nothing, or stalls half-way, is disconnected instead of holding the
//! connection open. A client that speaks plain HTTP to the TLS port gets a plain `400` with the
//! usual JSON error saying to use `https://`, and the connection is closed; nothing is logged
//! per connection (a scanner would fill the log).

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// A client that has not finished its TLS handshake within this time is disconnected.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The first byte of a TLS record carrying a handshake message (a ClientHello).
const TLS_HANDSHAKE: u8 = 0x16;

/// The acceptor for the certificate chain in `cert` and the private key in `key` (PEM); the
/// error names the file and what is wrong with it.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    let certs = certificates(cert)?;
    let private = private_key(key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, private)
        .map_err(|e| {
            let why = match e {
                rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                    "the key is not the private key of the certificate (the first in the file)"
                        .to_string()
                }
                e => e.to_string(),
            };
            format!(
                "TLS certificate {} and key {} cannot be used together: {why}",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = super::versions::ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error("certificate", path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error("certificate", path, e))?;
    if certs.is_empty() {
        return Err(format!(
            "TLS certificate {shown} holds no certificate: expected PEM blocks \
             '-----BEGIN CERTIFICATE-----', the server's first, then its intermediates"
        ));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| pem_error("key", path, e))
}

/// A PEM file's error for a person: the file, and what was wrong.
fn pem_error(what: &str, path: &Path, e: rustls_pki_types::pem::Error) -> String {
    use rustls_pki_types::pem::Error;
    let shown = path.display();
    match e {
        Error::Io(e) => format!("cannot read TLS {what} {shown}: {e}"),
        Error::NoItemsFound if what == "key" => format!(
            "TLS key {shown} holds no private key: expected a PEM block '-----BEGIN PRIVATE \
             KEY-----' (PKCS#8), 'RSA PRIVATE KEY' or 'EC PRIVATE KEY'"
        ),
        e => format!("TLS {what} {shown} is not valid PEM: {e}"),
    }
}

/// The TLS session on `stream`, once its handshake is done; `None` if the client did not
/// complete it within [`HANDSHAKE_TIMEOUT`], failed it, or spoke plain HTTP (answered with a
/// plain `400`).
pub async fn accept(acceptor: &TlsAcceptor, stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        let mut first = [0u8; 1];
        match stream.peek(&mut first).await {
            Ok(1) if first[0] == TLS_HANDSHAKE => acceptor.accept(stream).await.ok(),
            Ok(1) => {
                not_tls(stream).await;
                None
            }
            _ => None,
        }
    })
    .await
    .ok()
    .flatten()
}

/// Answers a client that sent something other than a TLS handshake (most likely
/// `http://` to an `https://` port) with a plain-text HTTP `400`, then closes.
async fn not_tls(mut stream: TcpStream) {
    // Read what came first, so that closing does not reset the connection before the client reads
    // the answer.
    let mut request = [0u8; 4096];
    let _ = stream.read(&mut request).await;
    let body = crate::text::json_error(
        "this port speaks TLS: use https:// (the request was not a TLS handshake)",
    );
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(answer.as_bytes()).await.is_ok() {
        let _ = stream.shutdown().await;
        // Wait (within the handshake bound) for the client to close, reading what it sends.
        while matches!(stream.read(&mut request).await, Ok(n) if n > 0) {}
    }
}
