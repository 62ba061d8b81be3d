//! The connection to an etcd cluster: tonic's channel over every endpoint (requests go to the
//! ones that answer), TLS by rustls with ring, the user's token in every request, all driven by
//! a private single-threaded Tokio runtime on a thread of its own, and every call bounded in time
//! from the calling thread.

use super::rpc::{self, auth_client::AuthClient};
use crate::Error;
use crate::worker::runtime::Driven;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// How to reach the cluster: its endpoints, TLS and user.
#[derive(Clone)]
pub(crate) struct Settings {
    /// `http://host:2379` or `https://host:2379`, one or more.
    pub(crate) endpoints: Vec<String>,
    /// The CA certificates trusted for `https://` (else the public web roots).
    pub(crate) ca_file: Option<PathBuf>,
    /// A client certificate and its key (PEM), for a cluster that asks for one.
    pub(crate) identity: Option<(PathBuf, PathBuf)>,
    /// The user and password, for a cluster with authentication on.
    pub(crate) user: Option<(String, String)>,
    /// The longest a connection attempt may take.
    pub(crate) connect_timeout: Duration,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("endpoints", &self.endpoints)
            .field("ca_file", &self.ca_file)
            .field("identity", &self.identity)
            .field("user", &self.user.as_ref().map(|(u, _)| u))
            .finish_non_exhaustive()
    }
}

impl Settings {
    /// `etcd http://a:2379,http://b:2379` (`user@` before the first if there is one).
    pub(crate) fn describe(&self) -> String {
        match &self.user {
            Some((user, _)) => format!("etcd {user}@{}", self.endpoints.join(",")),
            None => format!("etcd {}", self.endpoints.join(",")),
        }
    }
}

/// A connected (lazily: nothing is sent until the first call) etcd client.
pub(crate) struct Client {
    channel: Channel,
    runtime: Driven,
    settings: Settings,
    /// The user's token, once authenticated.
    token: Mutex<Option<String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Whether a gRPC status may pass by itself (no leader yet, a member down, a call that timed
/// out), as opposed to an answer that will not change (a wrong password, a permission).
pub(crate) fn transient(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::ResourceExhausted
            | Code::Internal
            | Code::Unknown
            | Code::Cancelled
    )
}

/// What a status says, with its cause chain (the transport's own words) and a hint where the
/// words are known.
fn explain(status: &tonic::Status) -> String {
    let mut text = format!("{} ({:?})", status.message(), status.code());
    let mut source = std::error::Error::source(status);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    let lower = text.to_ascii_lowercase();
    let hint = if lower.contains("certificate") || lower.contains("unknownissuer") {
        Some(
            "the server's certificate is not trusted: give the CA that signed it (--db-ca-file), \
             and an https:// endpoint whose host the certificate names",
        )
    } else if lower.contains("tls handshake") {
        Some(
            "no TLS handshake: an https:// endpoint of a server that does not speak TLS on this \
             port (give http://), or a server that closed the connection",
        )
    } else if lower.contains("authentication failed") || lower.contains("invalid user") {
        Some("wrong user or password (--etcd-user USER:PASSWORD)")
    } else if lower.contains("user name is empty") || lower.contains("user name not found") {
        Some("this cluster has authentication on: give --etcd-user USER:PASSWORD")
    } else if lower.contains("permission denied") {
        Some("the user may not read or write the prefix: grant its role readwrite on it")
    } else if lower.contains("frame") || lower.contains("http2") || lower.contains("h2 protocol") {
        Some(
            "the server did not speak gRPC as expected: an https:// endpoint called as http:// \
             (or the reverse)?",
        )
    } else {
        None
    };
    match hint {
        Some(h) => format!("{text}; {h}"),
        None => text,
    }
}

/// Reads a PEM file for TLS, naming it when it cannot.
fn pem(path: &PathBuf, what: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| {
        Error::WorkerAssignment(format!("cannot read the {what} {}: {e}", path.display()))
    })
}

impl Client {
    /// A client of the cluster `settings` describe. Nothing is sent yet.
    pub(crate) fn new(settings: Settings) -> Result<Client, Error> {
        let describe = settings.describe();
        let runtime = Driven::start("ringflake-etcd", &describe, true)?;
        let mut endpoints = Vec::new();
        for url in &settings.endpoints {
            let mut e = Endpoint::from_shared(url.clone())
                .map_err(|e| {
                    Error::WorkerAssignment(format!("etcd endpoint {url:?} is not a URL: {e}"))
                })?
                .connect_timeout(settings.connect_timeout)
                .http2_keep_alive_interval(Duration::from_secs(1))
                .keep_alive_timeout(Duration::from_secs(2));
            if url.starts_with("https://") {
                let mut tls = ClientTlsConfig::new();
                tls = match &settings.ca_file {
                    Some(ca) => tls.ca_certificate(Certificate::from_pem(pem(ca, "CA file")?)),
                    None => tls.with_webpki_roots(),
                };
                if let Some((cert, key)) = &settings.identity {
                    tls = tls.identity(Identity::from_pem(
                        pem(cert, "client certificate")?,
                        pem(key, "client key")?,
                    ));
                }
                e = e.tls_config(tls).map_err(|e| {
                    Error::WorkerAssignment(format!("TLS to the etcd endpoint {url}: {e}"))
                })?;
            }
            endpoints.push(e);
        }
        // The balance's workers are spawned on the private runtime.
        let channel = {
            let _in_runtime = runtime.handle().enter();
            Channel::balance_list(endpoints.into_iter())
        };
        Ok(Client {
            channel,
            runtime,
            settings,
            token: Mutex::new(None),
        })
    }

    /// `etcd http://a:2379,…`.
    pub(crate) fn describe(&self) -> String {
        self.settings.describe()
    }

    /// Runs `call` (given the channel and the user's token) within `within`, authenticating
    /// first where a user is given, and once again if the token was refused (it expires).
    pub(crate) fn call<T, F, Fut>(&self, what: &str, within: Duration, call: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: Fn(Channel, Option<String>) -> Fut,
        Fut: Future<Output = Result<T, tonic::Status>> + Send + 'static,
    {
        for attempt in 0..2 {
            let token = self.token(within)?;
            match self.run(what, within, call(self.channel.clone(), token))? {
                Ok(t) => return Ok(t),
                Err(s)
                    if attempt == 0
                        && self.settings.user.is_some()
                        && s.code() == tonic::Code::Unauthenticated
                        && s.message().contains("token") =>
                {
                    *crate::lock::lock(&self.token) = None;
                }
                Err(s) => return Err(self.error(what, &s)),
            }
        }
        Err(self.error(
            what,
            &tonic::Status::unauthenticated("the token was refused twice"),
        ))
    }

    /// The user's token, authenticating if there is none yet.
    fn token(&self, within: Duration) -> Result<Option<String>, Error> {
        let Some((name, password)) = self.settings.user.clone() else {
            return Ok(None);
        };
        if let Some(t) = crate::lock::lock(&self.token).clone() {
            return Ok(Some(t));
        }
        let channel = self.channel.clone();
        let answer = self.run("authenticating", within, async move {
            AuthClient::new(channel)
                .authenticate(rpc::AuthenticateRequest { name, password })
                .await
        })?;
        let token = answer
            .map_err(|s| self.error("authenticating", &s))?
            .into_inner()
            .token;
        *crate::lock::lock(&self.token) = Some(token.clone());
        Ok(Some(token))
    }

    /// Runs `fut` on the private runtime and waits for it from this thread, within `within`.
    fn run<T: Send + 'static>(
        &self,
        what: &str,
        within: Duration,
        fut: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, Error> {
        self.runtime.run(&self.describe(), what, within, fut)
    }

    /// A failed call as ringflake says it.
    pub(crate) fn error(&self, what: &str, status: &tonic::Status) -> Error {
        Error::Database {
            database: self.describe(),
            message: format!("{what}: {}", explain(status)),
            transient: transient(status),
            source: Some(crate::Cause::from_error(status)),
        }
    }
}
