//! `ringflake serve` as an operator exposes it and a hostile client meets it, on the real binary:
//! bearer tokens (`--auth-token-file`, reloaded on SIGHUP), HTTPS (`--tls-cert`/`--tls-key`, with
//! the throw-away certificates of `tests/data/tls`, made once by its `make.sh`), `/metrics` on its
//! own listener (`--metrics-listen`), and the strict grammar of the ID routes (counts, IDs, query
//! parameters, bounded and escaped echoes of bad values, request heads too large).
#![cfg(unix)]

mod common;

use common::{Serve, ringflake, tls_data, wait_until};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Two tokens of the token file the tests write.
const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-fedcba9876543210";

/// A response, read to the end of a `Connection: close` exchange.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// Lowercased names, values as sent.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find_map(|(n, v)| (n == name).then_some(v.as_str()))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts a JSON error with `status` whose message contains `needle`.
    fn assert_error(&self, status: u16, needle: &str) {
        let body = self.text();
        assert_eq!(self.status, status, "{body}");
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        assert!(body.starts_with(r#"{"error":""#), "{body}");
        assert!(body.contains(needle), "{needle:?} not in {body}");
    }
}

fn parse_reply(raw: &[u8]) -> Reply {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no complete head in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: raw[end + 4..].to_vec(),
    }
}

/// Sends `head` (the request line and headers, without the blank line; `Connection: close` is
/// added) on `stream` and reads the answer to the end.
fn exchange(stream: &mut impl ReadWrite, head: &[u8]) -> Reply {
    let mut request = head.to_vec();
    request.extend_from_slice(b"\r\nConnection: close\r\n\r\n");
    stream.write_all(&request).expect("send the request");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse_reply(&raw)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// `GET path` over plain HTTP, with `token` as a bearer token if given.
fn get(addr: SocketAddr, path: &str, token: Option<&str>) -> Reply {
    request(addr, "GET", path.as_bytes(), token)
}

fn request(addr: SocketAddr, method: &str, path: &[u8], token: Option<&str>) -> Reply {
    let mut head = format!("{method} ").into_bytes();
    head.extend_from_slice(path);
    head.extend_from_slice(format!(" HTTP/1.1\r\nHost: {addr}").as_bytes());
    if let Some(token) = token {
        head.extend_from_slice(format!("\r\nAuthorization: Bearer {token}").as_bytes());
    }
    exchange(&mut connect(addr), &head)
}

/// A scratch directory with a token file holding `text`.
fn token_dir(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The address after `prefix` in serve's output, once it is there (at most 60 s).
fn printed_addr(serve: &Serve, prefix: &str) -> SocketAddr {
    let mut found = None;
    wait_until(
        &format!("serve prints {prefix:?}"),
        Duration::from_secs(60),
        || {
            found = serve
                .output()
                .split(prefix)
                .nth(1)
                .and_then(|rest| rest.split([' ', '/']).next())
                .and_then(|a| a.parse().ok());
            found.is_some()
        },
    );
    found.unwrap()
}

/// Runs `serve` with `args` and expects it to refuse to start: exit 1 within 30 s, its standard
/// error.
fn refused(dir: &Path, args: &[&str]) -> String {
    let start = Instant::now();
    let out = ringflake(dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-state-file"])
        .args(args)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(30));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains("listening on"), "{stdout}");
    stderr
}

#[test]
fn tokens_guard_the_id_routes_and_a_sighup_reloads_them() {
    let (dir, tokens) = token_dir(&format!(
        "# the service's clients\n\n{TOKEN_A}\n  {TOKEN_B}  \n# retired: token-c-0000000000000000\n"
    ));
    let file = tokens.to_str().unwrap();
    let mut serve = Serve::start(dir.path(), &["--no-state-file", "--auth-token-file", file]);
    let addr = serve.addr();
    assert!(
        serve.output().contains(&format!(
            "2 bearer tokens from {file} (read again on SIGHUP)"
        )),
        "{}",
        serve.output()
    );

    // No token: 401 and the challenge, on every ID, parse and Leaf route (the named ones too),
    // HEAD included.
    for path in [
        "/id",
        "/ids?count=3",
        "/parse/1",
        "/ids?count=0",
        "/id/default",
        "/ids/default?count=3",
        "/parse/default/1",
        "/api/snowflake/get/orders",
        "/decodeSnowflakeId?snowflakeId=1",
    ] {
        let r = get(addr, path, None);
        r.assert_error(401, "missing bearer token");
        assert_eq!(
            r.header("www-authenticate"),
            Some(r#"Bearer realm="ringflake""#),
            "{path}"
        );
    }
    let r = request(addr, "HEAD", b"/id", None);
    assert_eq!(r.status, 401);
    // A wrong token, a token of another scheme, a token's prefix: 401, and the token never
    // comes back.
    for wrong in [
        "token-a-0123456789abcdeX",
        "token-a-0123456789abcde",
        "nope",
    ] {
        let r = get(addr, "/id", Some(wrong));
        r.assert_error(401, "invalid bearer token");
        assert_eq!(
            r.header("www-authenticate"),
            Some(r#"Bearer realm="ringflake", error="invalid_token""#)
        );
        assert!(!r.text().contains(wrong), "{}", r.text());
    }
    let basic = exchange(
        &mut connect(addr),
        format!("GET /id HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {TOKEN_A}").as_bytes(),
    );
    basic.assert_error(401, "missing bearer token");

    // The file's tokens: 200; comments are not tokens.
    let r = get(addr, "/id", Some(TOKEN_A));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().trim_end().parse::<u64>().is_ok(), "{}", r.text());
    assert_eq!(get(addr, "/ids?count=3", Some(TOKEN_B)).status, 200);
    assert_eq!(get(addr, "/parse/1", Some(TOKEN_B)).status, 200);
    get(addr, "/id", Some("token-c-0000000000000000")).assert_error(401, "invalid");
    // With a token, the routes' own errors.
    get(addr, "/ids?count=0", Some(TOKEN_A)).assert_error(400, "count 0 out of range");
    assert_eq!(get(addr, "/id/default", Some(TOKEN_A)).status, 200);
    assert_eq!(
        get(addr, "/api/snowflake/get/orders", Some(TOKEN_A)).status,
        200
    );
    // Health, metrics and the status page stay open.
    assert_eq!(get(addr, "/healthz", None).status, 200);
    assert_eq!(get(addr, "/metrics", None).status, 200);
    assert_eq!(get(addr, "/status", None).status, 200);
    assert_eq!(get(addr, "/", None).status, 200);

    // SIGHUP: the file's new tokens, from the next request on.
    let token_c = "token-c-new-after-sighup";
    std::fs::write(&tokens, format!("{token_c}\n")).unwrap();
    signal(serve.pid, "HUP");
    wait_until("the reload's line", Duration::from_secs(10), || {
        serve
            .output()
            .contains(&format!("SIGHUP: 1 bearer token from {file}"))
    });
    get(addr, "/id", Some(TOKEN_A)).assert_error(401, "invalid bearer token");
    assert_eq!(get(addr, "/id", Some(token_c)).status, 200);

    // A bad file: the tokens in use stay, and one line says why.
    std::fs::write(&tokens, "# emptied by mistake\n").unwrap();
    signal(serve.pid, "HUP");
    wait_until("the failed reload's line", Duration::from_secs(10), || {
        serve.output().contains("SIGHUP: kept the 1 token in use: ")
    });
    assert!(
        serve
            .output()
            .contains(&format!("token file {file} holds no token")),
        "{}",
        serve.output()
    );
    assert_eq!(get(addr, "/id", Some(token_c)).status, 200);
    std::fs::remove_file(&tokens).unwrap();
    signal(serve.pid, "HUP");
    wait_until(
        "the second failed reload's line",
        Duration::from_secs(10),
        || serve.output().contains("cannot read token file"),
    );
    assert_eq!(get(addr, "/id", Some(token_c)).status, 200);
    assert!(serve.running());

    // No token ever reached the output.
    let output = serve.output();
    for token in [TOKEN_A, TOKEN_B, token_c, "token-a-0123456789abcdeX"] {
        assert!(!output.contains(token), "{token} in {output}");
    }
    signal(serve.pid, "TERM");
    wait_until("serve stops", Duration::from_secs(20), || !serve.running());
}

#[test]
fn a_token_file_without_tokens_is_refused_at_start() {
    for (text, why) in [
        ("", "holds no token"),
        ("# only a comment\n\n   \n", "holds no token"),
        (
            "short\n",
            "line 1: a token of 5 characters is too short: at least 16",
        ),
        (
            "# ok\nwith a space inside it\n",
            "line 2: a token is printable ASCII without spaces",
        ),
    ] {
        let (dir, tokens) = token_dir(text);
        let err = refused(dir.path(), &["--auth-token-file", tokens.to_str().unwrap()]);
        assert!(
            err.contains(&format!("token file {}", tokens.display())),
            "{err}"
        );
        assert!(err.contains(why), "{why:?} not in {err}");
        assert!(!err.contains("short\n") && !err.contains("inside"), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), &["--auth-token-file", "missing-tokens"]);
    assert!(
        err.contains("cannot read token file missing-tokens: "),
        "{err}"
    );
    // The environment variable names it too.
    let out = ringflake(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0", "--no-state-file"])
        .env("RINGFLAKE_AUTH_TOKEN_FILE", "missing-too")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("token file missing-too"));
}

#[test]
fn metrics_are_served_on_their_own_listener() {
    let (dir, tokens) = token_dir(&format!("{TOKEN_A}\n"));
    let mut serve = Serve::start(
        dir.path(),
        &[
            "--no-state-file",
            "--metrics-listen",
            "127.0.0.1:0",
            "--auth-token-file",
            tokens.to_str().unwrap(),
        ],
    );
    let main = serve.addr();
    let internal = printed_addr(&serve, "metrics on http://");
    assert_ne!(main, internal);

    // The main listener: IDs, parse, Leaf and health, not metrics or the status page (a 404
    // like any unknown path).
    assert_eq!(get(main, "/id", Some(TOKEN_A)).status, 200);
    for path in ["/metrics", "/status", "/"] {
        get(main, path, Some(TOKEN_A)).assert_error(
            404,
            &format!("no route {path}: try GET /id, /id/{{name}}, /ids?count=N"),
        );
    }
    assert_eq!(get(main, "/healthz", None).status, 200);

    // The internal listener: metrics and health, no token needed, no IDs.
    let r = get(internal, "/metrics", None);
    assert_eq!(r.status, 200);
    assert!(
        r.text()
            .contains(r#"ringflake_ids_issued_total{generator="ringflake"} 1"#),
        "{}",
        r.text()
    );
    assert_eq!(get(internal, "/healthz", None).status, 200);
    assert_eq!(get(internal, "/status", None).status, 200);
    assert_eq!(get(internal, "/", None).status, 200);
    for path in [
        "/id",
        "/ids?count=1",
        "/parse/1",
        "/id/default",
        "/api/snowflake/get/x",
    ] {
        get(internal, path, Some(TOKEN_A))
            .assert_error(404, "try GET /, /status, /metrics, /healthz or /livez");
    }
    let issued = get(main, "/healthz", None);
    assert!(issued.text().contains(r#""issued":1"#), "{}", issued.text());

    // Both stop on SIGTERM.
    signal(serve.pid, "TERM");
    wait_until("serve stops", Duration::from_secs(20), || !serve.running());
    assert!(TcpStream::connect(internal).is_err());
}

#[test]
fn metrics_need_an_address_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = ringflake(dir.path())
        .args(["serve", "--no-state-file", "--listen", "127.0.0.1:18089"])
        .args(["--metrics-listen", "127.0.0.1:18089"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--metrics-listen 127.0.0.1:18089 is --listen's address"),
        "{err}"
    );
}

/// A TLS client that trusts the test CA only and speaks HTTP/1.1 (ALPN `http/1.1`).
fn tls_client() -> Arc<rustls::ClientConfig> {
    tls_client_offering(&[b"http/1.1"])
}

/// A TLS client that trusts the test CA only and offers `alpn`.
fn tls_client_offering(alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_file_iter(tls_data("ca.pem")).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// `GET path` over TLS to `addr`, verified as `name`; the answer and the ALPN protocol agreed.
fn tls_get(addr: SocketAddr, name: &str, path: &str) -> (Reply, Option<Vec<u8>>) {
    let server = rustls::pki_types::ServerName::try_from(name.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(tls_client(), server).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, connect(addr));
    let reply = exchange(
        &mut tls,
        format!("GET {path} HTTP/1.1\r\nHost: {name}").as_bytes(),
    );
    let alpn = tls.conn.alpn_protocol().map(<[u8]>::to_vec);
    (reply, alpn)
}

/// The test key, copied into `dir` with `mode`.
fn tls_key_with_mode(dir: &Path, mode: u32) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let key = dir.join(format!("server-key-{mode:o}.pem"));
    std::fs::copy(tls_data("server-key.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
    key.to_str().unwrap().to_string()
}

fn start_tls(dir: &Path, extra: &[&str]) -> (Serve, SocketAddr) {
    let cert = tls_data("server.pem");
    let key = tls_key_with_mode(dir, 0o600);
    let mut args = vec!["--no-state-file", "--tls-cert", &cert, "--tls-key", &key];
    args.extend_from_slice(extra);
    let serve = Serve::launch(dir, &args);
    let addr = printed_addr(&serve, "listening on https://");
    (serve, addr)
}

#[test]
fn https_serves_the_same_routes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, addr) = start_tls(dir.path(), &[]);

    for name in ["localhost", "127.0.0.1"] {
        let (r, alpn) = tls_get(addr, name, "/id");
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(r.text().trim_end().parse::<u64>().is_ok(), "{}", r.text());
        assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    }
    // A client that offers HTTP/2 too gets it (tests/grpc.rs speaks it).
    let server = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn =
        rustls::ClientConnection::new(tls_client_offering(&[b"h2", b"http/1.1"]), server).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, connect(addr));
    tls.flush().unwrap();
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).unwrap();
    }
    assert_eq!(tls.conn.alpn_protocol(), Some(&b"h2"[..]));
    drop(tls);
    let (r, _) = tls_get(addr, "localhost", "/ids?count=3");
    assert_eq!(common::json_ids(&r.text()).len(), 3);
    let (r, _) = tls_get(addr, "localhost", "/parse/0");
    assert_eq!(r.status, 200);
    let (r, _) = tls_get(addr, "localhost", "/metrics");
    assert_eq!(r.status, 200);
    let (r, _) = tls_get(addr, "localhost", "/ids?count=+5");
    r.assert_error(400, r#"count \"+5\" is not a number"#);

    // A name the certificate does not carry: the client refuses the handshake.
    let server = rustls::pki_types::ServerName::try_from("example.com").unwrap();
    let conn = rustls::ClientConnection::new(tls_client(), server).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, connect(addr));
    let e = tls
        .write_all(b"GET /id HTTP/1.1\r\n\r\n")
        .and_then(|()| tls.flush());
    let mut rest = Vec::new();
    assert!(e.is_err() || tls.read_to_end(&mut rest).is_err());

    // Plain HTTP to the TLS port: a plain 400 saying so, the connection closed.
    let r = get(addr, "/id", None);
    r.assert_error(400, "this port speaks TLS: use https://");
    assert_eq!(r.header("connection"), Some("close"));
    // Bytes that are neither: closed without an answer; a handshake that is garbage: closed.
    for junk in [&b"\x16\x03\x01\x00\x05hello"[..], b"\x00\x01\x02"] {
        let mut s = connect(addr);
        s.write_all(junk).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(!rest.starts_with(b"HTTP/1.1 200"), "{rest:?}");
    }
    // The service goes on serving.
    let (r, _) = tls_get(addr, "localhost", "/healthz");
    assert_eq!(r.status, 200);

    // curl, as an operator would check it, if it is installed.
    if let Ok(out) = Command::new("curl")
        .args(["-sS", "--max-time", "10", "--cacert", &tls_data("ca.pem")])
        .arg(format!("https://localhost:{}/id", addr.port()))
        .output()
    {
        let body = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(body.trim().parse::<u64>().is_ok(), "{body}");
    }
    assert!(serve.running());
    signal(serve.pid, "TERM");
    wait_until("serve stops", Duration::from_secs(20), || !serve.running());
}

/// A TLS key every user of the machine can read gets a warning at start, as the token and ID
/// key files do; one only its owner reads gets none.
#[test]
fn a_tls_key_every_user_can_read_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let (serve, _) = start_tls(dir.path(), &[]);
    assert!(
        !serve.output().contains("warning: TLS key"),
        "{}",
        serve.output()
    );
    drop(serve);
    let cert = tls_data("server.pem");
    let key = tls_key_with_mode(dir.path(), 0o644);
    let serve = Serve::launch(
        dir.path(),
        &["--no-state-file", "--tls-cert", &cert, "--tls-key", &key],
    );
    printed_addr(&serve, "listening on https://");
    assert!(
        serve.output().contains(&format!(
            "ringflake: warning: TLS key {key} is readable by every user (mode 644): chmod 600 \
             it\n"
        )),
        "{}",
        serve.output()
    );
}

/// A client that connects to the TLS port and says nothing is disconnected after the handshake
/// timeout (10 s), not held forever; the service serves others meanwhile.
#[test]
fn a_silent_tls_client_is_disconnected() {
    let dir = tempfile::tempdir().unwrap();
    let (serve, addr) = start_tls(dir.path(), &["--threads", "1"]);
    let mut silent = connect(addr);
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let start = Instant::now();
    let (r, _) = tls_get(addr, "localhost", "/id");
    assert_eq!(r.status, 200);
    let mut buf = [0u8; 16];
    let n = silent.read(&mut buf).unwrap_or(0);
    let waited = start.elapsed();
    assert_eq!(n, 0, "the silent client got {:?}", &buf[..n]);
    assert!(
        waited >= Duration::from_secs(9) && waited < Duration::from_secs(25),
        "disconnected after {waited:?}"
    );
    drop(serve);
}

#[test]
fn bad_tls_files_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let cert = tls_data("server.pem");
    let key = tls_data("server-key.pem");
    let other = tls_data("other-key.pem");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();
    let garbled = dir.path().join("garbled.pem");
    std::fs::write(&garbled, "-----BEGIN CERTIFICATE-----\nnot base64!\n").unwrap();
    let garbled = garbled.to_str().unwrap();
    for (c, k, why) in [
        (
            cert.as_str(),
            other.as_str(),
            format!(
                "TLS certificate {cert} and key {other} cannot be used together: the key is not \
                 the private key of the certificate"
            ),
        ),
        (
            "no-such-cert.pem",
            key.as_str(),
            "cannot read TLS certificate no-such-cert.pem: ".to_string(),
        ),
        (
            cert.as_str(),
            "no-such-key.pem",
            "cannot read TLS key no-such-key.pem: ".to_string(),
        ),
        (
            key.as_str(),
            key.as_str(),
            format!("TLS certificate {key} holds no certificate"),
        ),
        (
            cert.as_str(),
            cert.as_str(),
            format!("TLS key {cert} holds no private key"),
        ),
        (
            empty,
            key.as_str(),
            format!("TLS certificate {empty} holds no certificate"),
        ),
        (
            garbled,
            key.as_str(),
            format!("TLS certificate {garbled} is not valid PEM"),
        ),
    ] {
        let err = refused(dir.path(), &["--tls-cert", c, "--tls-key", k]);
        assert!(err.contains(&why), "{why:?} not in {err}");
    }
    // One without the other is a usage error.
    let out = ringflake(dir.path())
        .args(["serve", "--tls-cert", &cert])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tls-key"));
}

#[test]
fn the_id_routes_read_a_strict_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    let bad = |path: &str, needle: &str| get(addr, path, None).assert_error(400, needle);

    // Counts: digits only, no sign, no leading zero; each parameter once; no unknown ones.
    bad(
        "/ids?count=+5",
        r#"count \"+5\" is not a number: expected digits only"#,
    );
    bad("/ids?count=-5", r#"count \"-5\" is not a number"#);
    bad("/ids?count=010", r#"count \"010\" has a leading zero"#);
    bad("/ids?count=%35", r#"count \"%35\" is not a number"#);
    bad("/ids?count=5%20", r#"count \"5%20\" is not a number"#);
    bad(
        "/ids?count=10&count=20",
        "query parameter count given 2 times: give it once",
    );
    bad(
        "/ids?count=10&size=20",
        r#"unknown query parameter \"size\""#,
    );
    bad(
        "/id?count=5",
        r#"unknown query parameter \"count\": use /id [?format=decimal|base32|base62]"#,
    );
    bad("/parse/1?tz=UTC", r#"unknown query parameter \"tz\""#);
    assert_eq!(get(addr, "/ids?count=10", None).status, 200);
    assert_eq!(get(addr, "/healthz?probe=1&probe=2", None).status, 200);

    // IDs: the same grammar.
    bad(
        "/parse/+5",
        r#"ID \"+5\" is not a decimal number: expected digits only"#,
    );
    bad("/parse/-0", r#"ID \"-0\" is not a decimal number"#);
    bad("/parse/010", r#"ID \"010\" has a leading zero"#);
    bad("/parse/-5", "ID -5 is negative");
    assert_eq!(get(addr, "/parse/0", None).status, 200);

    // Bad values are echoed bounded: the first 32 characters and the length.
    let long = format!("/parse/{}", "x".repeat(10_000));
    let r = get(addr, &long, None);
    r.assert_error(
        400,
        &format!(r#"ID \"{}…(10000 bytes)\" is not"#, "x".repeat(32)),
    );
    assert!(r.body.len() < 300, "{} bytes: {}", r.body.len(), r.text());
    let r = get(addr, &format!("/ids?count={}", "7".repeat(10_000)), None);
    r.assert_error(400, "…(10000 bytes) out of range");
    assert!(r.body.len() < 300, "{}", r.text());
    let r = get(addr, &format!("/{}", "n".repeat(10_000)), None);
    r.assert_error(404, "…(10001 bytes)");
    assert!(r.body.len() < 300, "{}", r.text());

    // Bytes that are not printable ASCII come back percent-encoded, never raw.
    let r = request(addr, "GET", b"/parse/\xc3\xa9", None);
    r.assert_error(400, r#"ID \"%C3%A9\" is not a decimal number"#);
    let r = request(addr, "GET", b"/nope\xe2\x80\xae", None);
    r.assert_error(404, "no route /nope%E2%80%AE");
    for r in [
        get(addr, "/parse/%00", None),
        request(addr, "GET", b"/parse/\xc3\xa9", None),
        request(addr, "GET", b"/x\xe2\x80\xae\xc2\x85", None),
    ] {
        let text = String::from_utf8(r.body.clone()).expect("UTF-8");
        assert!(
            text.chars().all(|c| c == '…' || (' '..='~').contains(&c)),
            "{text:?}"
        );
    }
    get(addr, "/parse/%00", None).assert_error(400, r#"ID \"%00\" is not"#);

    // 405 names every method allowed, in the body as in Allow.
    let r = request(addr, "POST", b"/id", None);
    r.assert_error(405, "method POST not allowed on /id: use GET or HEAD");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    drop(serve);
}

/// What hyper answers itself, before any route sees the request: a head larger than 64 KiB gets
/// 431 (hyper's default let 400 KiB through), a malformed request 400, and the connection is
/// closed; hyper writes these without a body, and the service adds its JSON one as they are
/// written.
#[test]
fn oversized_and_malformed_requests() {
    let dir = tempfile::tempdir().unwrap();
    let serve = Serve::start(dir.path(), &["--no-state-file"]);
    let addr = serve.addr();
    // A 10 KB ID is within the bound: the route answers it, with its JSON error.
    get(addr, &format!("/parse/{}", "9".repeat(10_000)), None).assert_error(400, "out of range");
    // 100 KB of headers: 431, where hyper's default took up to 400 KiB.
    let big = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: {}",
        "p".repeat(100_000)
    );
    let mut s = connect(addr);
    let _ = s.write_all(big.as_bytes());
    let _ = s.write_all(b"\r\nConnection: close\r\n\r\n");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let r = parse_reply(&raw);
    r.assert_error(
        431,
        "request head too large: the request line and headers may take at most 65536 bytes",
    );
    assert_eq!(r.header("connection"), Some("close"));
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    // A 70 KB URI: over the head bound too.
    get(addr, &format!("/parse/{}", "1".repeat(70_000)), None)
        .assert_error(431, "request head too large");
    // Malformed: 400 from hyper, with the JSON body; so are bytes outside the URI grammar.
    exchange(
        &mut connect(addr),
        b"GET /id HTTP/1.1\r\nBad Header\r\nHost: x",
    )
    .assert_error(400, "malformed request");
    request(addr, "GET", b"/parse/a\x01b", None).assert_error(400, "malformed request");
    // On a kept-alive connection: the answers before are untouched, the bad request's has its
    // body.
    let mut s = connect(addr);
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /id HTTP/1.1\r\nBad Header\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let first = parse_reply(&raw);
    assert_eq!(first.status, 200);
    let len: usize = first.header("content-length").unwrap().parse().unwrap();
    assert!(first.body[..len].starts_with(br#"{"status":"ok""#));
    parse_reply(&first.body[len..]).assert_error(400, "malformed request");
    drop(serve);
    // Over TLS too.
    let (serve, tls) = start_tls(dir.path(), &[]);
    let (r, _) = tls_get(tls, "localhost", &format!("/parse/{}", "1".repeat(70_000)));
    r.assert_error(431, "request head too large");
    drop(serve);
}
