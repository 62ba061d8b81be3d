//! The Prometheus exporter a process installs once, as the global `metrics` recorder: with an
//! HTTP listener of its own ([`install_prometheus`]), or without one for an application that
//! serves `/metrics` itself ([`install_prometheus_recorder`]).

use crate::Error;
use metrics_exporter_prometheus::PrometheusBuilder;
pub use metrics_exporter_prometheus::PrometheusHandle;
use std::net::SocketAddr;

/// Installs `metrics-exporter-prometheus` as the process's global `metrics` recorder and serves
/// the Prometheus text format on `http://<addr>/metrics` (any path answers) from a thread of
/// its own, with a single-threaded Tokio runtime. Call it once, at startup, before starting
/// [`MetricsReporter`](crate::MetricsReporter)s. The returned handle renders the same text, e.g. for logs or tests.
///
/// Bind to `127.0.0.1` unless the scraper runs on another host; the endpoint has no
/// authentication.
///
/// # Errors
///
/// [`Error::Exporter`] naming the address: it cannot be bound (in use, or not an address of
/// this host), or a global recorder is already installed in this process.
///
/// # Examples
///
/// ```standalone_crate
/// use ringflake::{CachedUidGenerator, Layout, MetricsReporter, install_prometheus};
/// use std::{io::{Read, Write}, net::TcpStream, sync::Arc};
///
/// // Find a free port; real applications use a fixed one, e.g. 127.0.0.1:9464.
/// let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
/// let handle = install_prometheus(addr)?;
///
/// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
/// let reporter = MetricsReporter::builder("orders", &g).start()?;
/// g.next_id()?;
/// reporter.sample();
/// assert!(handle.render().contains(r#"ringflake_ids_issued_total{generator="orders"} 1"#));
///
/// let mut http = TcpStream::connect(addr).unwrap();
/// http.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
/// let mut response = String::new();
/// http.read_to_string(&mut response).unwrap();
/// assert!(response.starts_with("HTTP/1.1 200"));
/// assert!(response.contains(r#"ringflake_filler_up{generator="orders"} 1"#));
///
/// // Only one global recorder per process.
/// let again = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
/// assert!(install_prometheus(again).unwrap_err().to_string().contains("already installed"));
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn install_prometheus(addr: impl Into<SocketAddr>) -> Result<PrometheusHandle, Error> {
    let addr = addr.into();
    let fail = |message: String| Error::Exporter {
        address: addr.to_string(),
        message,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(format!("cannot create its Tokio runtime: {e}")))?;
    let (recorder, exporter) = {
        // `build` binds the listener and spawns the exporter's upkeep task on the runtime.
        let _entered = runtime.enter();
        PrometheusBuilder::new()
            .with_http_listener(addr)
            .build()
            .map_err(|e| {
                fail(format!(
                    "{e}; choose a free address of this host (e.g. 127.0.0.1:9464), or stop the process listening on it"
                ))
            })?
    };
    let handle = recorder.handle();
    // Installed before the listener serves: on failure the runtime, and with it the bound
    // socket, is dropped here.
    ::metrics::set_global_recorder(recorder).map_err(|_| fail(already_installed()))?;
    std::thread::Builder::new()
        .name("ringflake-metrics-http".into())
        .spawn(move || {
            // Serves until the process exits; an error here means the listener broke, and the
            // scraper sees the target down.
            let _ = runtime.block_on(exporter);
        })
        .map_err(|e| Error::thread_spawn("ringflake-metrics-http", e))?;
    Ok(handle)
}

/// Installs `metrics-exporter-prometheus` as the process's global `metrics` recorder without an
/// HTTP listener, for an application that serves HTTP itself: answer its `/metrics` route with
/// [`PrometheusHandle::render`] (content type `text/plain; version=0.0.4`).
///
/// # Errors
///
/// [`Error::Exporter`] if a global recorder is already installed in this process.
///
/// # Examples
///
/// ```standalone_crate
/// use ringflake::{CachedUidGenerator, Layout, MetricsReporter, install_prometheus_recorder};
/// use std::sync::Arc;
///
/// let handle = install_prometheus_recorder()?;
/// let g = Arc::new(CachedUidGenerator::builder(Layout::default()).worker_id(1).build()?);
/// let _reporter = MetricsReporter::builder("orders", &g).start()?;
///
/// let body = handle.render(); // the body of your /metrics response
/// assert!(body.contains(r#"ringflake_ring_capacity{generator="orders"} 33554432"#));
/// assert!(install_prometheus_recorder().is_err()); // once per process
/// # Ok::<(), ringflake::Error>(())
/// ```
pub fn install_prometheus_recorder() -> Result<PrometheusHandle, Error> {
    PrometheusBuilder::new()
        .install_recorder()
        .map_err(|_| Error::Exporter {
            address: "recorder".into(),
            message: already_installed(),
        })
}

fn already_installed() -> String {
    "a global metrics recorder is already installed in this process: install one recorder, once, \
     at startup, and share its PrometheusHandle"
        .into()
}
