//! TLS to the database servers (features `mysql`, `postgres`): verification with the right CA
//! (the library, and the `ringflake workers` binary with `--db-ca-file`), and a clear error,
//! without the password, for each way it fails: an unknown CA, a host name the certificate does
//! not list, a connection without TLS to a server that demands it, a server that offers no TLS,
//! a CA file that cannot be read.
//!
//! The real servers come from `.ci/run`, which starts MariaDB (`require_secure_transport=ON`) and
//! PostgreSQL (`ssl=on`, only `hostssl` lines) with a certificate for `localhost` and `127.0.0.1`
//! from a throw-away CA, and sets `RINGFLAKE_DB_CA` (that CA), `RINGFLAKE_DB_WRONG_CA` (an
//! unrelated one), `RINGFLAKE_MYSQL_URL` and `RINGFLAKE_POSTGRES_URL`. The tests that need them
//! are `#[ignore]`d (run them with `cargo test --all-features -- --include-ignored`) and fail,
//! naming the variable, when it is missing. They only read the table (created if missing). The
//! others stand in for a server without TLS with a few bytes of its protocol on a local port, and
//! always run.

mod common;

use ringflake::{DatabaseAssigner, Error, Layout, WorkerIdAssigner};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The value of `var`; a failure naming it when it is unset.
fn env(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => panic!(
            "{var} is not set: this test needs the TLS-only MariaDB and PostgreSQL servers and the \
             CA files that `bash .ci/run` makes (RINGFLAKE_DB_CA, RINGFLAKE_DB_WRONG_CA, \
             RINGFLAKE_MYSQL_URL, RINGFLAKE_POSTGRES_URL)"
        ),
    }
}

/// The password in `scheme://user:password@host...`.
fn password_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    let userinfo = rest.rsplit_once('@').unwrap().0;
    userinfo.split_once(':').unwrap().1.to_string()
}

/// `url` without its query (the TLS parameters the CI's URLs carry).
fn without_query(url: &str) -> String {
    url.split_once('?')
        .map_or(url, |(base, _)| base)
        .to_string()
}

/// `url` (without a query) with `host:port` replaced.
fn with_host(url: &str, hostport: &str) -> String {
    let (head, rest) = url.rsplit_once('@').unwrap();
    let (_, tail) = rest.split_once('/').unwrap();
    format!("{head}@{hostport}/{tail}")
}

/// What the tests need from one kind of server.
trait Server {
    const VAR: &'static str;
    /// The binary's flag for a URL: `--mysql`.
    const FLAG: &'static str;
    /// `(parameter, verify-full, verify-ca, disable, require)` in the URL's own names.
    const MODES: (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );
    fn assigner(url: &str) -> Result<DatabaseAssigner, Error>;
    /// Extra URL parameters to reach the server through a TCP forwarder.
    const VIA_TCP: &'static str;
}

struct Mysql;
impl Server for Mysql {
    const VAR: &'static str = "RINGFLAKE_MYSQL_URL";
    const FLAG: &'static str = "--mysql";
    const MODES: (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) = (
        "ssl-mode",
        "VERIFY_IDENTITY",
        "VERIFY_CA",
        "DISABLED",
        "REQUIRED",
    );
    // The mysql crate otherwise moves to the server's Unix socket when it can.
    const VIA_TCP: &'static str = "prefer_socket=false";
    fn assigner(url: &str) -> Result<DatabaseAssigner, Error> {
        DatabaseAssigner::mysql(url)
    }
}

struct Postgres;
impl Server for Postgres {
    const VAR: &'static str = "RINGFLAKE_POSTGRES_URL";
    const FLAG: &'static str = "--postgres";
    const MODES: (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) = ("sslmode", "verify-full", "verify-ca", "disable", "require");
    const VIA_TCP: &'static str = "connect_timeout=10";
    fn assigner(url: &str) -> Result<DatabaseAssigner, Error> {
        DatabaseAssigner::postgres(url)
    }
}

/// The server's URL without TLS parameters, and its password.
fn base<S: Server>() -> (String, String) {
    let url = env(S::VAR);
    let password = password_of(&url);
    (without_query(&url), password)
}

/// The right CA, from the builder or from the URL: TLS verified, the table read.
fn right_ca<S: Server>() {
    let (url, _) = base::<S>();
    let ca = env("RINGFLAKE_DB_CA");
    let assigner = S::assigner(&url).unwrap().ca_file(&ca).create_table(true);
    let shown = format!("{assigner:?}");
    assert!(shown.contains(&format!("{}={} with CA file {ca}", S::MODES.0, S::MODES.1)));
    assigner.list().unwrap();
    // The same, said in the URL (as the CI's URL says it).
    S::assigner(&env(S::VAR)).unwrap().list().unwrap();
}

/// The binary lists the table over TLS verified with `--db-ca-file` (or its variable), and fails
/// with the wrong CA, naming it, without the password.
fn binary_with_ca_file<S: Server>() {
    let (url, password) = base::<S>();
    let ca = env("RINGFLAKE_DB_CA");
    S::assigner(&url)
        .unwrap()
        .ca_file(&ca)
        .create_table(true)
        .list()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[(&str, &str)], args: &[&str]| {
        let mut cmd = common::ringflake(dir.path());
        cmd.args(["workers", S::FLAG, &url, "--db-retry", "0"]);
        cmd.args(args);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{args:?} {extra:?}: {text}");
        assert!(!text.contains(&password), "{text}");
        (out.status.success(), text)
    };
    let described = without_query(&url).replace(&format!(":{password}@"), "@");
    let (ok, text) = run(&[], &["--db-ca-file", &ca]);
    assert!(ok, "{text}");
    assert!(text.contains(&format!("in {described}")), "{text}");
    let (ok, text) = run(&[("RINGFLAKE_DB_CA_FILE", &ca)], &[]);
    assert!(ok, "{text}");
    let wrong = env("RINGFLAKE_DB_WRONG_CA");
    let (ok, text) = run(&[], &["--db-ca-file", &wrong]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("not signed by a CA in the CA file {wrong}")),
        "{text}"
    );
}

/// A CA that did not sign the server's certificate: verification fails, naming the CA file.
fn wrong_ca<S: Server>() {
    let (url, password) = base::<S>();
    let wrong = env("RINGFLAKE_DB_WRONG_CA");
    let text = common::fails_at_once(S::assigner(&url).unwrap().ca_file(&wrong), &[&password]);
    assert!(
        text.contains("TLS certificate verification failed"),
        "{text}"
    );
    assert!(
        text.contains(&format!("not signed by a CA in the CA file {wrong}")),
        "{text}"
    );
    assert!(text.contains("UnknownIssuer"), "{text}");
}

/// A TCP forwarder on 127.0.0.2 (an address the certificate does not list) to `upstream`.
fn forwarder(upstream: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.2:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(upstream) else {
                continue;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut c1, mut s1) = (client, server);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c1, &mut s1);
                let _ = s1.shutdown(std::net::Shutdown::Both);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    addr
}

/// Connected as 127.0.0.2, which the certificate does not list: verify-full fails on the name;
/// verify-ca (the chain only) works.
fn name_mismatch<S: Server>() {
    let (url, password) = base::<S>();
    let ca = env("RINGFLAKE_DB_CA");
    S::assigner(&url)
        .unwrap()
        .ca_file(&ca)
        .create_table(true)
        .list()
        .unwrap();
    let hostport = url.rsplit_once('@').unwrap().1.split('/').next().unwrap();
    let upstream = std::net::ToSocketAddrs::to_socket_addrs(hostport)
        .unwrap()
        .next()
        .unwrap();
    let other = with_host(&url, &forwarder(upstream).to_string());
    let (param, full, ca_only, _, _) = S::MODES;
    let full_url = format!("{other}?{param}={full}&{}", S::VIA_TCP);
    let text = common::fails_at_once(S::assigner(&full_url).unwrap().ca_file(&ca), &[&password]);
    assert!(text.contains("TLS host name verification failed"), "{text}");
    assert!(text.contains("127.0.0.2"), "{text}");
    assert!(text.contains(&format!("{param}={ca_only}")), "{text}");
    let ca_url = format!("{other}?{param}={ca_only}&{}", S::VIA_TCP);
    S::assigner(&ca_url).unwrap().ca_file(&ca).list().unwrap();
}

/// TLS turned off: the server refuses the connection, and the error says TLS may be the cause.
fn without_tls<S: Server>() {
    let (url, password) = base::<S>();
    let (param, _, _, disable, _) = S::MODES;
    let plain = format!("{url}?{param}={disable}");
    let text = common::fails_at_once(S::assigner(&plain).unwrap(), &[&password]);
    assert!(text.contains("accept only TLS connections"), "{text}");
    assert!(
        text.contains(&format!("{param}={disable} turns TLS off")),
        "{text}"
    );
}

/// A CA file that does not exist fails before connecting, naming it (no server needed).
fn missing_ca_file<S: Server>() {
    let url = format!(
        "{}://ringflake:ca-pw-63@127.0.0.1:1/ringflake",
        S::FLAG.trim_start_matches('-')
    );
    let text = common::fails_at_once(
        S::assigner(&url)
            .unwrap()
            .ca_file("/nonexistent/ringflake-ca.pem"),
        &["ca-pw-63"],
    );
    assert!(
        text.contains("cannot read the CA file /nonexistent/ringflake-ca.pem"),
        "{text}"
    );
}

/// A stand-in server on 127.0.0.1 that speaks the first bytes of `S`'s protocol without TLS;
/// what it got after refusing TLS (the client's first plain message) is sent to the channel.
fn server_without_tls(
    greet: fn(&mut TcpStream) -> Vec<u8>,
) -> (SocketAddr, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let got = greet(&mut stream);
            if !got.is_empty() {
                let _ = tx.send(got);
            }
        }
    });
    (addr, rx)
}

/// PostgreSQL: answers the SSLRequest with 'N' (no TLS), then reads what comes next.
fn postgres_greet(stream: &mut TcpStream) -> Vec<u8> {
    let mut request = [0u8; 8];
    if stream.read_exact(&mut request).is_err() || request[4..] != [4, 210, 22, 47] {
        return Vec::new();
    }
    let _ = stream.write_all(b"N");
    let mut next = vec![0u8; 4096];
    let n = stream.read(&mut next).unwrap_or(0);
    next.truncate(n);
    next
}

/// MariaDB/MySQL: a protocol 10 handshake without the CLIENT_SSL capability, then reads the
/// client's answer.
fn mysql_greet(stream: &mut TcpStream) -> Vec<u8> {
    // LONG_PASSWORD, FOUND_ROWS, LONG_FLAG, CONNECT_WITH_DB, PROTOCOL_41, TRANSACTIONS,
    // SECURE_CONNECTION, MULTI_STATEMENTS, MULTI_RESULTS, PLUGIN_AUTH; no SSL (0x800).
    let caps: u32 =
        0x1 | 0x2 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x1_0000 | 0x2_0000 | 0x8_0000;
    let mut p = vec![10u8];
    p.extend_from_slice(b"5.7.99-no-tls\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(33);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(b"mysql_native_password\0");
    let mut packet = (p.len() as u32).to_le_bytes()[..3].to_vec();
    packet.push(0);
    packet.extend_from_slice(&p);
    if stream.write_all(&packet).is_err() {
        return Vec::new();
    }
    let mut next = vec![0u8; 4096];
    let n = stream.read(&mut next).unwrap_or(0);
    next.truncate(n);
    next
}

/// A server without TLS: `require` fails at once saying so; the default (`prefer`) goes on in
/// plain TCP, as for a local server (the stand-in gets the login in clear, then hangs up).
fn no_tls_on_server<S: Server>(greet: fn(&mut TcpStream) -> Vec<u8>) {
    let (addr, got) = server_without_tls(greet);
    let scheme = S::FLAG.trim_start_matches('-');
    let url = format!("{scheme}://ringflake:plain-pw-29@{addr}/ringflake");
    let (param, _, _, _, require) = S::MODES;
    let required = format!("{url}?{param}={require}&{}", S::VIA_TCP);
    let text = common::fails_at_once(
        S::assigner(&required)
            .unwrap()
            .timeout(Duration::from_secs(5)),
        &["plain-pw-29"],
    );
    assert!(
        text.contains(&format!(
            "the server does not offer TLS, which {param}={require} requires"
        )),
        "{text}"
    );
    let preferred = format!("{url}?{}", S::VIA_TCP);
    let err = S::assigner(&preferred)
        .unwrap()
        .timeout(Duration::from_secs(5))
        .retry_for(Duration::ZERO)
        .assign_worker_id(&Layout::default())
        .unwrap_err();
    assert!(!format!("{err} {err:?}").contains("plain-pw-29"), "{err:?}");
    // The first connection of each attempt may also say goodbye (MariaDB's COM_QUIT).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|m: &Vec<u8>| m.windows(10).any(|w| w == b"ringflake\0"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match got.recv_timeout(left) {
            Ok(m) => seen.push(m),
            Err(_) => panic!("no login in clear after the server refused TLS: {seen:?}"),
        }
    }
}

macro_rules! tls_tests {
    ($feature:literal, $module:ident, $server:ty, $greet:expr, $needs:literal) => {
        mod $module {
            use super::*;

            #[test]
            #[ignore = $needs]
            fn the_right_ca_verifies() {
                right_ca::<$server>();
            }

            #[test]
            #[ignore = $needs]
            fn the_binary_takes_db_ca_file() {
                binary_with_ca_file::<$server>();
            }

            #[test]
            #[ignore = $needs]
            fn a_wrong_ca_is_a_clear_error() {
                wrong_ca::<$server>();
            }

            #[test]
            #[ignore = $needs]
            fn a_host_name_not_in_the_certificate_is_a_clear_error() {
                name_mismatch::<$server>();
            }

            #[test]
            #[ignore = $needs]
            fn without_tls_the_server_refuses_clearly() {
                without_tls::<$server>();
            }

            #[test]
            fn a_missing_ca_file_is_named() {
                missing_ca_file::<$server>();
            }

            #[test]
            fn a_server_without_tls() {
                no_tls_on_server::<$server>($greet);
            }
        }
    };
}

tls_tests!(
    "mysql",
    mysql_tls,
    Mysql,
    mysql_greet,
    "needs RINGFLAKE_MYSQL_URL, RINGFLAKE_DB_CA, RINGFLAKE_DB_WRONG_CA (.ci/run sets them)"
);
tls_tests!(
    "postgres",
    postgres_tls,
    Postgres,
    postgres_greet,
    "needs RINGFLAKE_POSTGRES_URL, RINGFLAKE_DB_CA, RINGFLAKE_DB_WRONG_CA (.ci/run sets them)"
);

/// `--db-ca-file` is for a server: with a SQLite file it is an error, not ignored, and the file
/// is not created.
#[test]
fn db_ca_file_with_sqlite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for command in [&["workers"][..], &["gen", "--no-state-file"][..]] {
        let out = common::ringflake(dir.path())
            .args(command)
            .args(["--db", "workers.db", "--db-ca-file", "ca.pem"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command:?}: {stderr}");
        assert!(
            stderr.contains(
                "--db-ca-file ca.pem is for TLS to a server: it needs --mysql, --postgres"
            ),
            "{command:?}: {stderr}"
        );
    }
    assert!(!dir.path().join("workers.db").exists());
}
