//! The physical floor for `ringflake serve`'s `GET /id`: the same HTTP stack set up the same way
//! (one single-threaded Tokio runtime per core, each on its own `SO_REUSEPORT` socket, hyper's
//! HTTP/1 with `TCP_NODELAY` and a header timeout, from the service's own `listen` module), answering every request with a counter as
//! `text/plain` and doing nothing else. `scripts/load.sh` loads it right after the service, so
//! the ratio `/id ÷ floor` holds on a noisy machine.
//!
//! ```text
//! cargo run --release --example http_floor -- [ADDR] [THREADS]    (default 127.0.0.1:0, one per core)
//! ```
//!
//! Prints `listening on http://ADDR ` on its first line; stops on SIGTERM or Ctrl-C.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

// The service's own socket and HTTP/1 set-up.
#[path = "../src/bin/ringflake/listen.rs"]
mod listen;

async fn serve(listener: tokio::net::TcpListener, counter: Arc<AtomicU64>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        listen::prepare(&stream);
        let counter = Arc::clone(&counter);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_req| {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                async move {
                    let mut res = Response::new(Full::new(Bytes::from(n.to_string())));
                    res.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("text/plain"),
                    );
                    Ok::<_, Infallible>(res)
                }
            });
            let _ = listen::http1()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut addr: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:0").parse()?;
    let threads = match args.next() {
        Some(n) => n.parse()?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let counter = Arc::new(AtomicU64::new(0));
    for i in 0..threads {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let counter = Arc::clone(&counter);
        std::thread::Builder::new()
            .name(format!("floor-http-{i}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a Tokio runtime");
                rt.block_on(async move {
                    let listener = match listen::bind(addr) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(listener.local_addr());
                    serve(listener, counter).await;
                });
            })?;
        // The first thread resolves port 0; the others bind the same port.
        addr = ready_rx.recv()??;
    }
    println!("listening on http://{addr} with {threads} threads");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok::<_, std::io::Error>(())
    })?;
    Ok(())
}
