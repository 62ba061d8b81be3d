//! The service started in-process from a `Service`, as a Rust program would: it serves IDs of
//! the generator it was given on the address it was given, stops cleanly on SIGTERM (returning
//! `Ok`), and refuses to start without a generator. A test binary of its own: the stop is a
//! signal to the whole process.
#![cfg(unix)]

use ringflake::{CachedUidGenerator, Layout};
use ringflake_server::Service;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// A port nothing listens on now.
fn free_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr")
}

/// `GET path` over a fresh connection; the body, once the service answers.
fn get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

#[test]
fn a_program_starts_the_service_and_stops_it_with_sigterm() {
    let addr = free_addr();
    let layout = Layout::default();
    let server = std::thread::spawn(move || {
        Service::new(addr)
            .generator(CachedUidGenerator::builder(layout).worker_id(7))
            .threads(1)
            .run()
    });
    let started = Instant::now();
    let body = loop {
        if let Some(body) = get(addr, "/id") {
            break body;
        }
        assert!(!server.is_finished(), "the service stopped at start");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no answer on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let first: u64 = body.trim().parse().expect("an ID");
    assert_eq!(layout.parse(first).expect("parse").worker_id, 7);
    let second: u64 = get(addr, "/id")
        .expect("a second ID")
        .trim()
        .parse()
        .expect("an ID");
    assert!(second > first, "{second} after {first}");
    let health = get(addr, "/healthz").expect("/healthz");
    assert!(health.contains("\"worker_id\":7"), "{health}");

    let status = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let result = server.join().expect("the service thread");
    assert_eq!(result, Ok(()));
    assert!(get(addr, "/id").is_none(), "still serving after SIGTERM");
}

#[test]
fn a_service_without_a_generator_does_not_start() {
    let error = Service::new(free_addr()).run().expect_err("no generator");
    assert!(error.to_string().contains("no generator"), "{error}");
    let named_only = Service::new(free_addr())
        .named(
            "orders",
            CachedUidGenerator::builder(Layout::default()).worker_id(1),
        )
        .run()
        .expect_err("no default generator");
    assert!(
        named_only.to_string().contains("no default generator"),
        "{named_only}"
    );
}
