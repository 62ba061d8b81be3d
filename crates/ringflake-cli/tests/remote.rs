//! [`RemoteGenerator`] against the real `ringflake serve`: served from its buffer, through a
//! `kill -9` of the service (a typed error once the buffer is empty) and its restart (served
//! again, by itself), with every ID any client received distinct; TLS, tokens and refusals; its
//! metrics series.

mod common;

use common::{LAYOUT_30_20_13, Serve, tls_data};
use ringflake::{Error, RemoteGenerator};
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The client's IDs while the service is killed and restarted: served from the buffer, then
/// `RemoteUnavailable`, then served again once the service is back, with no help. Two clients
/// take at once, on threads of their own; every ID either received is distinct.
#[test]
fn survives_a_kill_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    // The state file (in `dir`) makes the restarted service start above what the killed one
    // may have issued; it takes the same worker id again from the same SQLite file... or a new
    // one: either way its IDs are new.
    let mut serve = Serve::start(dir.path(), &[]);
    let addr = serve.addr();
    let endpoint = format!("http://{addr}");
    let clients: Vec<RemoteGenerator> = (0..2)
        .map(|_| {
            RemoteGenerator::builder(&endpoint)
                .capacity(1 << 14)
                .wait(Duration::from_secs(5))
                .build()
                .unwrap()
        })
        .collect();
    let received = Mutex::new(Vec::new());
    let errors = Mutex::new(Vec::new());
    let killed = AtomicBool::new(false);
    let restarted = AtomicBool::new(false);
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for client in &clients {
            let (received, errors) = (&received, &errors);
            let (killed, restarted, finished) = (&killed, &restarted, &finished);
            s.spawn(move || {
                let mut mine = Vec::new();
                let start = Instant::now();
                let mut served_after_restart = 0;
                while served_after_restart < 50_000 {
                    assert!(
                        start.elapsed() < Duration::from_secs(40),
                        "not served again after the restart: {:?}; {:?}",
                        client.stats(),
                        client.next_id()
                    );
                    match client.next_id() {
                        Ok(id) => {
                            mine.push(id);
                            if restarted.load(Ordering::Acquire) {
                                served_after_restart += 1;
                            }
                        }
                        Err(e) => {
                            assert!(
                                killed.load(Ordering::Acquire),
                                "failed before the kill: {e}"
                            );
                            errors.lock().unwrap().push(e);
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }
                }
                received.lock().unwrap().extend(mine);
                finished.fetch_add(1, Ordering::AcqRel);
            });
        }
        // Let the clients stream for a while, then kill the service mid-stream.
        std::thread::sleep(Duration::from_millis(500));
        killed.store(true, Ordering::Release);
        serve.kill();
        // Both clients drain their buffers and fail with the typed error.
        common::wait_until(
            "both clients report the service unavailable",
            Duration::from_secs(30),
            || errors.lock().unwrap().len() >= 2,
        );
        let restart = [
            "--listen".to_string(),
            addr.to_string(),
            "--threads".to_string(),
            "2".to_string(),
        ];
        let mut cmd = common::ringflake(dir.path());
        cmd.arg("serve").args(&restart);
        let mut again = Serve::launch_command(cmd);
        again.ready(Duration::from_secs(60));
        restarted.store(true, Ordering::Release);
        // Kept alive until the clients are done (each adds its IDs at its end).
        let since = Instant::now();
        while finished.load(Ordering::Acquire) < clients.len() {
            assert!(
                since.elapsed() < Duration::from_secs(90) && again.running(),
                "the restarted service (running: {}) said: {}",
                again.running(),
                again.output()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(again);
    });
    let errors = errors.into_inner().unwrap();
    for e in &errors {
        match e {
            Error::RemoteUnavailable { endpoint: at, .. } => assert_eq!(at, &endpoint),
            e => panic!("not RemoteUnavailable: {e:?}"),
        }
    }
    let received = received.into_inner().unwrap();
    let distinct: HashSet<u64> = received.iter().copied().collect();
    assert_eq!(distinct.len(), received.len(), "an ID was handed out twice");
    assert!(received.len() >= 100_000, "{}", received.len());
    for client in &clients {
        let s = client.stats();
        assert!(s.failed_fetches >= 1, "{s:?}");
    }
}

/// A service replaced by one with a lower worker id: the client's buffer holds the old service's
/// IDs (borrowed seconds ahead) and then the new one's, which are lower. The client hands out the
/// old service's last IDs, then the new one's (a single decrease: none dropped as out of order),
/// each once, each with one of the two worker ids. (That a block across such a decrease is never
/// read as one range is checked in `remote::held`'s unit tests, where the IDs can be chosen.)
#[test]
fn a_service_replaced_by_one_with_a_lower_worker_id() {
    // 8,192 IDs a second, 30 s of borrowing: the first service runs seconds ahead of the clock.
    let layout = ringflake::Layout::new(30, 20, 13, ringflake::DEFAULT_EPOCH_SECONDS).unwrap();
    let flags = |worker: &str| {
        let mut flags: Vec<String> = LAYOUT_30_20_13.map(str::to_string).to_vec();
        flags.extend(["--max-lead", "30", "--worker-id", worker].map(str::to_string));
        flags
    };
    let (first_dir, second_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first_flags = flags("5");
    let first_flags: Vec<&str> = first_flags.iter().map(String::as_str).collect();
    let mut first = Serve::start(first_dir.path(), &first_flags);
    let addr = first.addr();
    let client = RemoteGenerator::builder(format!("http://{addr}"))
        .capacity(1 << 16)
        .wait(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut received: Vec<u64> = (0..150_000).map(|_| client.next_id().unwrap()).collect();
    first.kill();
    let ahead = received.last().copied().unwrap() >> layout.time_shift();
    let mut cmd = common::ringflake(second_dir.path());
    cmd.arg("serve")
        .args(["--listen", &addr.to_string()])
        .args(flags("2"));
    let mut second = Serve::launch_command(cmd);
    second.ready(Duration::from_secs(60));
    let start = Instant::now();
    while received.len() < 250_000 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "not served by the second service: {:?}; {}",
            client.stats(),
            second.output()
        );
        match client.next_id() {
            Ok(id) => received.push(id),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let worker = |id: u64| layout.parse(id).unwrap().worker_id;
    let drops = received
        .windows(2)
        .filter(|w| w[1] < w[0] && (worker(w[0]), worker(w[1])) == (5, 2))
        .count();
    assert_eq!(
        drops, 1,
        "the IDs go down once, from the first service's (up to second {ahead}) to the second's"
    );
    assert!(received.iter().all(|&id| matches!(worker(id), 5 | 2)));
    let distinct: HashSet<u64> = received.iter().copied().collect();
    assert_eq!(distinct.len(), received.len(), "an ID was handed out twice");
}

/// Over TLS (a CA file) with a bearer token: served; a wrong token and an unknown generator are
/// refused at build with the service's words; a named generator serves its own IDs.
#[test]
fn tls_tokens_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tokens"), "remote-test-token-0123456789\n").unwrap();
    std::fs::write(
        dir.path().join("generators.toml"),
        "[generators.orders]\nmax-lead = 5\n",
    )
    .unwrap();
    let (cert, key) = (tls_data("server.pem"), tls_data("server-key.pem"));
    let serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
            "--auth-token-file",
            "tokens",
            "--config",
            "generators.toml",
        ],
    );
    let endpoint = format!("https://localhost:{}", serve.addr().port());
    let builder = || {
        RemoteGenerator::builder(&endpoint)
            .ca_file(tls_data("ca.pem"))
            .capacity(4096)
    };
    let ids = builder()
        .token("remote-test-token-0123456789")
        .build()
        .unwrap();
    let a = ids.next_id().unwrap();
    let b = ids.next_id().unwrap();
    assert!(b > a);
    let orders = builder()
        .token("remote-test-token-0123456789")
        .generator("orders")
        .build()
        .unwrap();
    assert_ne!(orders.next_id().unwrap() >> 22, 0);

    let err = builder().build().unwrap_err();
    assert!(
        matches!(&err, Error::RemoteRefused { code, message, .. }
            if code == "Unauthenticated" && message.contains("missing bearer token")),
        "{err:?}"
    );
    let err = builder()
        .token("wrong-token-0123456789")
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("invalid bearer token"), "{err}");
    let err = builder()
        .token("remote-test-token-0123456789")
        .generator("nope")
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("NotFound: no generator \"nope\": the generators are default, orders"),
        "{err}"
    );
    // Without the CA, the certificate is not trusted.
    let err = RemoteGenerator::builder(&endpoint)
        .token("remote-test-token-0123456789")
        .timeout(Duration::from_secs(3))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::RemoteUnavailable { .. }), "{err:?}");
    // Nothing listens: unavailable, within the timeout.
    let started = Instant::now();
    let err = RemoteGenerator::builder("http://127.0.0.1:9")
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::RemoteUnavailable { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // Settings out of range.
    let err = RemoteGenerator::builder("http://127.0.0.1:9")
        .capacity(0)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("capacity"), "{err}");
}

/// `next_id_async` on a runtime of the caller's; the buffer refills as it is drained, in
/// batches that grow with the demand; the metrics series count what was fetched.
#[test]
fn async_takes_refills_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let ids = metrics::with_local_recorder(&recorder, || {
        RemoteGenerator::builder(format!("http://{}", serve.addr()))
            .capacity(1 << 16)
            .metrics("remote-test")
            .build()
    })
    .unwrap();
    let first = ids.stats();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let taken = runtime.block_on(async {
        let mut last = 0;
        for _ in 0..300_000 {
            let id = ids.next_id_async().await.unwrap();
            assert!(id > last);
            last = id;
        }
        300_000u64
    });
    let s = ids.stats();
    assert!(s.fetched >= taken, "{s:?}");
    assert!(s.fetches > first.fetches, "{s:?}");
    assert_eq!(s.failed_fetches, 0, "{s:?}");
    common::wait_until("the series are set", Duration::from_secs(10), || {
        handle
            .render()
            .contains("ringflake_remote_ids_fetched_total{generator=\"remote-test\"}")
    });
    let text = handle.render();
    assert!(
        text.contains("ringflake_remote_up{generator=\"remote-test\"} 1"),
        "{text}"
    );
    assert!(text.contains("ringflake_remote_fetch_seconds"), "{text}");
    assert!(
        text.contains("# HELP ringflake_remote_ids_dropped_total"),
        "{text}"
    );
}
