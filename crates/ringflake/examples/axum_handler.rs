//! Embedding the generator in an axum service: one `CachedUidGenerator` in the router's state,
//! shared by every request, taken with `next_id_async` so that a request waiting through an
//! empty ring parks its task instead of a runtime thread.
//!
//! ```sh
//! cargo run --release --example axum_handler
//! ```
//!
//! It serves `GET /order` on 127.0.0.1 (a free port), asks itself for three order IDs over
//! HTTP, prints them and exits. In an application, keep `axum::serve` running instead.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use ringflake::{CachedUidGenerator, FixedWorkerId, Layout};
use std::io::{Read, Write};
use std::sync::Arc;

/// A handler that needs a new ID: here, a new order.
async fn new_order(
    State(ids): State<Arc<CachedUidGenerator>>,
) -> Result<String, (StatusCode, String)> {
    // The fast path is one atomic add; only an empty ring awaits the filler.
    let id = ids
        .next_id_async()
        .await
        .map_err(|e| (StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    Ok(format!("order {id} created\n"))
}

/// A plain HTTP/1.1 GET, to show the handler answering without any client crate.
fn get_body(addr: std::net::SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or(response))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A fixed worker id keeps the example free of a database; a service would use
    // DatabaseAssigner::sqlite(...) (or mysql/postgres) so that every boot gets its own id.
    let layout = Layout::default();
    let generator = CachedUidGenerator::builder(layout)
        .worker_id_from(&FixedWorkerId(7))
        .build()?;
    let app = Router::new()
        .route("/order", get(new_order))
        .with_state(Arc::new(generator));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    println!("serving GET http://{addr}/order");

    let mut previous = 0;
    for _ in 0..3 {
        let body = tokio::task::spawn_blocking(move || get_body(addr, "/order")).await??;
        print!("{body}");
        let id: u64 = body
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or("no ID in the answer")?;
        assert!(id > previous, "IDs increase");
        assert_eq!(layout.parse(id)?.worker_id, 7);
        previous = id;
    }
    server.abort();
    Ok(())
}
