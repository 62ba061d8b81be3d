//! Helpers for the tests that drive the `ringflake` binary as a subprocess: the command with a
//! clean environment, a running `serve` that is killed when dropped (so a failing test leaves no
//! process behind) and whose every wait is bounded, and a small keep-alive HTTP/1.1 client.
//!
//! Each test file that uses it declares `mod common;`; not every file uses every helper.
#![allow(dead_code)]

pub mod held;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The flags of the 30/20/13 layout (8,192 IDs a second, a small lead cap binds quickly).
pub const LAYOUT_30_20_13: [&str; 6] = [
    "--time-bits",
    "30",
    "--worker-bits",
    "20",
    "--seq-bits",
    "13",
];

/// The binary, with no `RINGFLAKE_…` variable from the caller's environment (CI sets database
/// URLs) and not in a Kubernetes pod even when the tests run in one (no `KUBERNETES_SERVICE_HOST`:
/// `serve` would refuse its default SQLite file), `TZ=UTC`, run in `dir` so that the default
/// `ringflake.db` and `ringflake.state` land there.
pub fn ringflake(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ringflake"));
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RINGFLAKE_") {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("RUST_LOG");
    cmd.env("TZ", "UTC").current_dir(dir);
    cmd
}

/// `ringflake ARGS` in `dir` (a `gen`), which must succeed: the IDs it printed, one a line.
pub fn gen_ids(dir: &Path, args: &[&str]) -> Vec<u64> {
    let out = ringflake(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ringflake {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// The wall clock as unix seconds with a fraction.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs_f64()
}

/// A `ringflake serve` child: SIGKILLed and reaped when dropped. Its stdout and stderr are read
/// by threads into one buffer (so that a chatty child never blocks on a full pipe, and a failure
/// can show what it said).
pub struct Serve {
    child: Option<Child>,
    pub pid: u32,
    addr: Option<SocketAddr>,
    first_line: Receiver<String>,
    output: Arc<Mutex<String>>,
    /// Files to remove once the process has ended (what a killed process could not clean up).
    leftovers: Vec<PathBuf>,
}

impl Serve {
    /// Spawns `ringflake serve --listen 127.0.0.1:0` plus `extra` in `dir` without waiting for it
    /// to listen: see [`Serve::ready`].
    pub fn launch(dir: &Path, extra: &[&str]) -> Serve {
        let mut cmd = ringflake(dir);
        cmd.args(["serve", "--listen", "127.0.0.1:0"]).args(extra);
        Serve::launch_command(cmd)
    }

    /// Spawns `cmd` (a `serve` command) with its output captured.
    pub fn launch_command(mut cmd: Command) -> Serve {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn ringflake serve");
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, first_line) = channel();
        let tx_err = tx.clone();
        let stdout = child.stdout.take().expect("piped stdout");
        let out = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut first = true;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // In the output before the address is announced: whoever waits for the
                // address finds the line in `output()`.
                {
                    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                    o.push_str(&line);
                    o.push('\n');
                }
                // The start-up line naming the address (serve prints its trade-off first).
                if first
                    && (line.contains("listening on http://")
                        || line.contains("listening on https://"))
                {
                    let _ = tx.send(line);
                    first = false;
                }
            }
        });
        let stderr = child.stderr.take().expect("piped stderr");
        let out = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut first = true;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                {
                    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                    o.push_str(&line);
                    o.push('\n');
                }
                // With --log-format json the address is an event on standard error, and
                // standard output stays empty.
                if first
                    && line.starts_with('{')
                    && (line.contains("\"message\":\"listening on http://")
                        || line.contains("\"message\":\"listening on https://"))
                {
                    let _ = tx_err.send(line);
                    first = false;
                }
            }
        });
        Serve {
            pid: child.id(),
            child: Some(child),
            addr: None,
            first_line,
            output,
            leftovers: Vec::new(),
        }
    }

    /// Spawns serve and waits (at most 60 s) until it listens.
    pub fn start(dir: &Path, extra: &[&str]) -> Serve {
        let mut s = Serve::launch(dir, extra);
        s.ready(Duration::from_secs(60));
        s
    }

    /// Waits at most `limit` for the start-up line (`http://` or `https://`) and returns the
    /// address it names; fails the test with serve's output if none comes.
    pub fn ready(&mut self, limit: Duration) -> SocketAddr {
        if let Some(addr) = self.addr {
            return addr;
        }
        let line = match self.first_line.recv_timeout(limit) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "serve (pid {}) did not print its address within {limit:?}; output: {}",
                    self.pid,
                    self.output()
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                // Exited before printing: give the stderr reader a moment to finish.
                std::thread::sleep(Duration::from_millis(200));
                panic!(
                    "serve (pid {}) exited before listening; output: {}",
                    self.pid,
                    self.output()
                )
            }
        };
        let addr = line
            .split("listening on http")
            .nth(1)
            .and_then(|rest| rest.strip_prefix("s://").or(rest.strip_prefix("://")))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}; output: {}", self.output()));
        self.addr = Some(addr);
        addr
    }

    /// The address (after [`Serve::ready`]).
    pub fn addr(&self) -> SocketAddr {
        self.addr.expect("serve is not ready yet: call ready()")
    }

    /// Everything serve printed so far, stdout and stderr.
    pub fn output(&self) -> String {
        self.output
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Removes `path` once the process has ended.
    pub fn remove_after_exit(&mut self, path: PathBuf) {
        self.leftovers.push(path);
    }

    /// SIGKILL (`Child::kill`) and reap it; its status. Nothing is left running.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        child.kill().ok();
        let status = child.wait().ok();
        for path in self.leftovers.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        status
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An HTTP response: status, headers lowercased, body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: String,
    pub body: String,
}

impl Reply {
    /// The value of header `name` (lowercase), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim())
        })
    }
}

/// A keep-alive HTTP/1.1 client of one server: one connection, reopened after an error. Every
/// read and write is bounded by `timeout`.
pub struct Client {
    addr: SocketAddr,
    timeout: Duration,
    conn: Option<BufReader<TcpStream>>,
}

impl Client {
    pub fn new(addr: SocketAddr, timeout: Duration) -> Client {
        Client {
            addr,
            timeout,
            conn: None,
        }
    }

    /// Drops the connection; the next request opens a new one.
    pub fn reset(&mut self) {
        self.conn = None;
    }

    /// `GET path`; on any error the connection is dropped.
    pub fn get(&mut self, path: &str) -> std::io::Result<Reply> {
        let r = self.try_get(path);
        if r.is_err() {
            self.conn = None;
        }
        r
    }

    fn try_get(&mut self, path: &str) -> std::io::Result<Reply> {
        if self.conn.is_none() {
            let s = TcpStream::connect_timeout(&self.addr, self.timeout)?;
            s.set_read_timeout(Some(self.timeout))?;
            s.set_write_timeout(Some(self.timeout))?;
            s.set_nodelay(true)?;
            self.conn = Some(BufReader::new(s));
        }
        let conn = self.conn.as_mut().expect("connected");
        write!(
            conn.get_mut(),
            "GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n",
            self.addr
        )?;
        read_reply(conn)
    }
}

fn bad(what: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.into())
}

/// Reads one response with a `content-length` body.
fn read_reply(conn: &mut BufReader<TcpStream>) -> std::io::Result<Reply> {
    let mut status_line = String::new();
    if conn.read_line(&mut status_line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(format!("bad status line {status_line:?}")))?;
    let mut headers = String::new();
    loop {
        let mut line = String::new();
        if conn.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if line == "\r\n" {
            break;
        }
        headers.push_str(&line.to_ascii_lowercase());
    }
    let len: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| bad(format!("no content-length in {headers:?}")))?;
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body)?;
    Ok(Reply {
        status,
        headers,
        body: String::from_utf8(body).map_err(|e| bad(e.to_string()))?,
    })
}

/// One request on a new connection, bounded by 10 s; fails the test on error.
pub fn get(addr: SocketAddr, path: &str) -> Reply {
    Client::new(addr, Duration::from_secs(10))
        .get(path)
        .unwrap_or_else(|e| panic!("GET {path} from {addr}: {e}"))
}

/// The IDs of a `/ids` answer: a JSON array of strings.
pub fn json_ids(body: &str) -> Vec<u64> {
    let inner = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or_else(|| panic!("not a JSON array: {body:.200}"));
    inner
        .split(',')
        .map(|s| {
            s.strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("not an ID string: {s:?}"))
        })
        .collect()
}

/// `ringflake serve --listen 127.0.0.1:0 --config ringflake.toml` plus `extra`, in `dir`.
pub fn serve_config(dir: &Path, extra: &[&str]) -> Command {
    let mut cmd = ringflake(dir);
    cmd.args([
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--config",
        "ringflake.toml",
    ])
    .args(extra);
    cmd
}

/// Runs `cmd`, a `serve` that must refuse to start: exit status 1 within 30 s (one that starts
/// instead is killed), without ever listening; its output.
pub fn refused(cmd: Command) -> String {
    let mut serve = Serve::launch_command(cmd);
    let start = Instant::now();
    while serve.running() {
        if start.elapsed() > Duration::from_secs(30) {
            panic!("serve did not refuse to start: {}", serve.output());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // The output threads read to the end of the pipes.
    std::thread::sleep(Duration::from_millis(100));
    let out = serve.output();
    assert!(!out.contains("listening on"), "started: {out}");
    let status = serve.kill();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{out}");
    out
}

/// Every ID `path` (an `/ids?count=N` route) of `addr` answered with 200 during `span`, asked
/// again and again on one connection; an answer other than 200 (a generator that cannot serve)
/// gives none.
pub fn ids_for(addr: SocketAddr, path: &str, span: Duration) -> Vec<u64> {
    let mut client = Client::new(addr, Duration::from_secs(10));
    let mut ids = Vec::new();
    let start = Instant::now();
    while start.elapsed() < span {
        match client.get(path) {
            Ok(r) if r.status == 200 => ids.extend(json_ids(&r.body)),
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("GET {path} from {addr}: {e}"),
        }
    }
    ids
}

/// How many IDs `a` and `b` have in common (each without repeats of its own).
pub fn in_both(a: &[u64], b: &[u64]) -> usize {
    let a: std::collections::HashSet<u64> = a.iter().copied().collect();
    b.iter().filter(|id| a.contains(id)).count()
}

/// The integer field `name` of a flat JSON object such as `/healthz`'s.
pub fn json_int(body: &str, name: &str) -> Option<i64> {
    let rest = body.split(&format!("\"{name}\":")).nth(1)?;
    let end = rest
        .find(|c: char| c != '-' && !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The path of a file of the test TLS set-up (`tests/data/tls/`: a CA, a server certificate
/// for `localhost`/`127.0.0.1` and its key).
pub fn tls_data(name: &str) -> String {
    format!("{}/tests/data/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The value of series `name` in a Prometheus scrape (`/metrics`), for the one generator there is
/// or the first listed.
pub fn metric(scrape: &str, name: &str) -> Option<f64> {
    scrape
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let base = series.split('{').next()?;
            (base == name).then(|| value.parse().ok())?
        })
}

/// The string field `name` of a flat JSON object (its raw text up to the next `"`).
pub fn json_str<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let rest = body.split(&format!("\"{name}\":\"")).nth(1)?;
    rest.split('"').next()
}

/// Polls `done` every 10 ms until it holds; fails, naming `what`, after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The JSON objects among `output`'s lines (standard error's log lines of `--log-format json`;
/// standard output's start-up lines are text). Every line that starts with `{` must parse.
pub fn events(output: &str) -> Vec<serde_json::Value> {
    output
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A string field of an event ("" if absent).
pub fn text<'a>(event: &'a serde_json::Value, field: &str) -> &'a str {
    event
        .get(field)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

/// Sends signal `name` (`STOP`, `CONT`, `TERM`, ...) to process `pid` with kill(1).
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}: {status}");
}

/// The error of a database boot that must fail at once (not retried: retrying cannot mend it),
/// as its Display text; its Display and Debug are both checked to be free of every one of
/// `secrets` (passwords).
pub fn fails_at_once(assigner: ringflake::DatabaseAssigner, secrets: &[&str]) -> String {
    use ringflake::WorkerIdAssigner as _;
    let assigner = assigner.retry_for(Duration::from_secs(20));
    let started = Instant::now();
    let err = assigner
        .assign_worker_id(&ringflake::Layout::default())
        .unwrap_err();
    let shown = format!("{err} {err:?}");
    eprintln!("{err}");
    assert!(
        matches!(
            err,
            ringflake::Error::Database {
                transient: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "not retried");
    for secret in secrets {
        assert!(!shown.contains(secret), "{shown}");
    }
    err.to_string()
}

// ---------------------------------------------------------------------------------------------
// Clock steps: libfaketime
// ---------------------------------------------------------------------------------------------

/// libfaketime's preload library as Debian installs it (`/usr/lib/<multiarch>/faketime/`).
pub fn libfaketime() -> Option<PathBuf> {
    std::fs::read_dir("/usr/lib")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .chain([PathBuf::from("/usr/lib/faketime/libfaketime.so.1")])
        .find(|p| p.is_file())
}

/// `serve` (default flags, plus `extra`) under libfaketime, its clock offset read from
/// `offset_file` on every call (`+0s`, `-3600s`): monotonic time stays real, so Tokio's timers
/// keep working.
pub fn serve_faked(dir: &Path, lib: &Path, offset_file: &Path, extra: &[&str]) -> Serve {
    let mut cmd = ringflake(dir);
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .env("LD_PRELOAD", lib)
        .env("FAKETIME_TIMESTAMP_FILE", offset_file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    let mut serve = Serve::launch_command(cmd);
    // libfaketime keeps shared memory named after the pid, removed at a normal exit only; a
    // SIGKILL leaves it, and it would fail a later process that gets the same pid.
    let pid = serve.pid;
    serve.remove_after_exit(PathBuf::from(format!("/dev/shm/faketime_shm_{pid}")));
    serve.remove_after_exit(PathBuf::from(format!("/dev/shm/sem.faketime_sem_{pid}")));
    serve.ready(Duration::from_secs(60));
    serve
}

/// Writes the clock offset every call of the faked process reads.
pub fn set_offset(file: &Path, offset: &str) {
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, format!("{offset}\n")).expect("write the faketime file");
    std::fs::rename(&tmp, file).expect("replace the faketime file");
}

// ---------------------------------------------------------------------------------------------
// Database servers: the tests' own clients
// ---------------------------------------------------------------------------------------------

/// `url` without its query parameters `keys`, and their values.
pub fn split_params(url: &str, keys: &[&str]) -> (String, HashMap<String, String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), HashMap::new());
    };
    let mut taken = HashMap::new();
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let ours = keys.contains(&k);
            if ours {
                taken.insert(k.to_string(), v.to_string());
            }
            !ours
        })
        .collect();
    if kept.is_empty() {
        (base.to_string(), taken)
    } else {
        (format!("{base}?{}", kept.join("&")), taken)
    }
}

/// The URL in `var`; a failure naming the variable when it is unset or empty. The test drops and
/// recreates `table` in the database the URL names.
pub fn server_url(var: &str, table: &str) -> String {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "{var} is not set: this test needs a real server, and drops and recreates {table} in \
             the database the URL names (give it a throw-away one); `bash .ci/run` starts \
             throw-away MariaDB and PostgreSQL servers and sets RINGFLAKE_MYSQL_URL and \
             RINGFLAKE_POSTGRES_URL"
        ),
    }
}

/// The tests' own PostgreSQL client, with TLS verified against the URL's `sslrootcert` if it has
/// one.
pub fn postgres_client(url: &str) -> postgres::Client {
    let (rest, tls) = split_params(url, &["sslmode", "sslrootcert"]);
    let mut config: postgres::Config = rest.parse().unwrap();
    match tls.get("sslrootcert") {
        Some(ca) if tls.get("sslmode").is_none_or(|m| m != "disable") => {
            use rustls::pki_types::{CertificateDer, pem::PemObject};
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(ca).unwrap() {
                roots.add(cert.unwrap()).unwrap();
            }
            let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
            config.ssl_mode(postgres::config::SslMode::Require);
            config
                .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
                .unwrap()
        }
        _ => config.connect(postgres::NoTls).unwrap(),
    }
}

/// A TCP relay on 127.0.0.1 to `upstream` (a database server) that can be stopped as the server
/// would be: every connection it carries is closed and its port refuses new ones. Started again,
/// it listens on the same port. The server behind it keeps running for everyone else.
pub struct Relay {
    addr: SocketAddr,
    upstream: SocketAddr,
    /// Running while true; the accepting thread and every connection of the run end when it
    /// turns false.
    running: Arc<std::sync::atomic::AtomicBool>,
    /// The connections of the current run (both ends), closed by `stop`.
    conns: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Relays a new port to `upstream`.
    pub fn start(upstream: SocketAddr) -> Relay {
        let mut relay = Relay {
            addr: "127.0.0.1:0".parse().expect("an address"),
            upstream,
            running: Arc::default(),
            conns: Arc::default(),
            acceptor: None,
        };
        relay.resume();
        relay
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes every relayed connection and the port: connecting is refused until `resume`.
    pub fn stop(&mut self) {
        use std::sync::atomic::Ordering;
        self.running.store(false, Ordering::SeqCst);
        if let Some(t) = self.acceptor.take() {
            t.join().expect("the relay's accepting thread");
        }
        for conn in self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            let _ = conn.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Listens again, on the same port.
    pub fn resume(&mut self) {
        use std::sync::atomic::Ordering;
        // The previous run's listener is closed; std sets SO_REUSEADDR, so the port is free at
        // once (bounded retry for a slow close).
        let start = Instant::now();
        let listener = loop {
            match std::net::TcpListener::bind(self.addr) {
                Ok(l) => break l,
                Err(e) if start.elapsed() < Duration::from_secs(10) => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("the relay cannot listen on {} again: {e}", self.addr),
            }
        };
        self.addr = listener.local_addr().expect("the relay's address");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
        self.running = Arc::clone(&running);
        let (conns, upstream) = (Arc::clone(&self.conns), self.upstream);
        self.acceptor = Some(std::thread::spawn(move || {
            while running.load(Ordering::SeqCst) {
                let client = match listener.accept() {
                    Ok((client, _)) => client,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    }
                    Err(_) => continue,
                };
                let _ = client.set_nonblocking(false);
                let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))
                else {
                    continue;
                };
                let ends = [&client, &server].map(|s| s.try_clone().expect("a socket clone"));
                conns.lock().unwrap_or_else(|e| e.into_inner()).extend(ends);
                for (mut from, mut to) in [
                    (
                        client.try_clone().expect("clone"),
                        server.try_clone().expect("clone"),
                    ),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = from.shutdown(std::net::Shutdown::Both);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        }));
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `cmd` to its end, as `Command::output` does, but for at most `limit`: a command that
/// should exit at once (a `serve` refusing its flags) but runs on is killed, and the test fails
/// with what it said instead of hanging.
pub fn output_within(mut cmd: Command, limit: Duration) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped stdout")));
    let err = read(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            let err = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("{cmd:?} still ran after {limit:?}; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// A runtime on this thread for a test's async client calls.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A tonic channel to `addr` in plain text (h2c).
pub async fn grpc_channel(addr: SocketAddr) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap()
}
