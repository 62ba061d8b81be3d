//! The connection to Redis: a primary named by a `redis://` / `rediss://` URL, or the primary
//! that Sentinel names (`redis+sentinel://` / `rediss+sentinel://`), asked again at every
//! reconnection; one blocking connection, every call bounded by its own timeout, dropped and made
//! anew after a failure; and the confirmation of a write on the replicas ([`Conn::confirm`]).

use crate::Error;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{Client, Connection, ConnectionAddr, RedisError, TlsCertificates, TlsMode};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the primary is.
enum Target {
    /// A primary at a fixed address.
    Plain(Client),
    /// The primary Sentinel names, asked again at every reconnection.
    Sentinel(Mutex<SentinelClient>),
}

/// One connection to the primary, made when first needed and after a failure.
pub(crate) struct Conn {
    target: Target,
    describe: String,
    con: Mutex<Option<Connection>>,
    /// Use a write as soon as the primary has it (no `WAIT`).
    pub(crate) accept_async: bool,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("redis", &self.describe)
            .finish_non_exhaustive()
    }
}

/// `%XX` decoded (a URL's user and password).
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The parts of a URL: scheme, user, password, hosts, path and query.
struct Parts<'a> {
    scheme: &'a str,
    user: Option<String>,
    password: Option<String>,
    hosts: &'a str,
    path: &'a str,
    query: Vec<(&'a str, String)>,
}

fn invalid(url: &str, why: &str) -> Error {
    let shown = match url.split_once('@') {
        Some((before, after)) => match before.rsplit_once(':') {
            Some((user, _)) if user.contains("://") => format!("{user}:…@{after}"),
            _ => url.to_string(),
        },
        None => url.to_string(),
    };
    Error::WorkerAssignment(format!(
        "invalid Redis URL {shown}: {why}; expected redis://[USER:PASSWORD@]HOST:PORT[/DB], \
         rediss://… for TLS, or redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]"
    ))
}

fn parts(url: &str) -> Result<Parts<'_>, Error> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| invalid(url, "no scheme"))?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, q),
        None => (rest, ""),
    };
    let (auth, rest) = match rest.rsplit_once('@') {
        Some((a, r)) => (Some(a), r),
        None => (None, rest),
    };
    let (hosts, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (user, password) = match auth {
        None => (None, None),
        Some(a) => match a.split_once(':') {
            Some((u, p)) => ((!u.is_empty()).then(|| decode(u)), Some(decode(p))),
            None => (Some(decode(a)), None),
        },
    };
    let query = query
        .split('&')
        .filter(|q| !q.is_empty())
        .map(|q| match q.split_once('=') {
            Some((k, v)) => (k, decode(v)),
            None => (q, String::new()),
        })
        .collect();
    if hosts.is_empty() {
        return Err(invalid(url, "no host"));
    }
    Ok(Parts {
        scheme,
        user,
        password,
        hosts,
        path,
        query,
    })
}

/// `host:port` as an address (`port` by default).
fn addr(host: &str, default_port: u16, tls: bool, url: &str) -> Result<ConnectionAddr, Error> {
    let (h, p) = match host.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || host.starts_with('[') => (
            h.trim_matches(['[', ']']),
            p.parse::<u16>()
                .map_err(|_| invalid(url, &format!("port {p:?} is not a number")))?,
        ),
        _ => (host, default_port),
    };
    Ok(if tls {
        ConnectionAddr::TcpTls {
            host: h.to_string(),
            port: p,
            insecure: false,
            tls_params: None,
        }
    } else {
        ConnectionAddr::Tcp(h.to_string(), p)
    })
}

/// The CA file's certificates, for `rediss://`.
fn certificates(ca: Option<&Path>) -> Result<Option<TlsCertificates>, Error> {
    let Some(ca) = ca else { return Ok(None) };
    let pem = std::fs::read(ca).map_err(|e| {
        Error::WorkerAssignment(format!("cannot read the CA file {}: {e}", ca.display()))
    })?;
    Ok(Some(TlsCertificates {
        client_tls: None,
        root_cert: Some(pem),
    }))
}

impl Conn {
    /// A connection (not made yet) to the primary `url` names.
    pub(crate) fn new(url: &str, ca_file: Option<&PathBuf>) -> Result<Conn, Error> {
        let p = parts(url)?;
        let (sentinel, tls) = match p.scheme {
            "redis" => (false, false),
            "rediss" => (false, true),
            "redis+sentinel" => (true, false),
            "rediss+sentinel" => (true, true),
            other => return Err(invalid(url, &format!("unknown scheme {other}://"))),
        };
        if ca_file.is_some() && !tls {
            return Err(Error::WorkerAssignment(format!(
                "--db-ca-file is for TLS: give a rediss:// URL rather than {}://",
                p.scheme
            )));
        }
        let certs = certificates(ca_file.map(PathBuf::as_path))?;
        let user_at = p.user.as_ref().map_or(String::new(), |u| format!("{u}@"));
        let describe = format!("{}://{user_at}{}/{}", p.scheme, p.hosts, p.path);
        let redis_err = |e: RedisError| invalid(url, &e.to_string());
        let target = if sentinel {
            let mut segments = p.path.split('/').filter(|s| !s.is_empty());
            let master = segments
                .next()
                .ok_or_else(|| invalid(url, "no master name after the Sentinels"))?;
            let db: i64 = match segments.next() {
                Some(d) => d
                    .parse()
                    .map_err(|_| invalid(url, &format!("database {d:?} is not a number")))?,
                None => 0,
            };
            let mut nodes = Vec::new();
            for h in p.hosts.split(',') {
                nodes.push(addr(h, 26379, tls, url)?);
            }
            let mode = if tls {
                TlsMode::Secure
            } else {
                TlsMode::Insecure
            };
            let mut b = SentinelClientBuilder::new(nodes, master, SentinelServerType::Master)
                .map_err(redis_err)?
                .set_client_to_redis_db(db);
            if tls {
                b = b
                    .set_client_to_redis_tls_mode(mode)
                    .set_client_to_sentinel_tls_mode(mode);
                if let Some(c) = &certs {
                    b = b
                        .set_client_to_redis_certificates(c.clone())
                        .set_client_to_sentinel_certificates(c.clone());
                }
            }
            if let Some(u) = &p.user {
                b = b.set_client_to_redis_username(u);
            }
            if let Some(pw) = &p.password {
                b = b.set_client_to_redis_password(pw);
            }
            for (k, v) in &p.query {
                b = match *k {
                    "sentinel_user" => b.set_client_to_sentinel_username(v),
                    "sentinel_password" => b.set_client_to_sentinel_password(v),
                    other => {
                        return Err(invalid(
                            url,
                            &format!(
                                "unknown parameter {other:?} (sentinel_user and \
                                 sentinel_password are known)"
                            ),
                        ));
                    }
                };
            }
            Target::Sentinel(Mutex::new(b.build().map_err(redis_err)?))
        } else {
            if let Some((k, _)) = p.query.first() {
                return Err(invalid(url, &format!("unknown parameter {k:?}")));
            }
            if p.hosts.contains(',') {
                return Err(invalid(
                    url,
                    "several hosts: Sentinels need redis+sentinel://",
                ));
            }
            addr(p.hosts, 6379, tls, url)?;
            let client = match certs {
                Some(c) => Client::build_with_tls(url, c),
                None => Client::open(url),
            }
            .map_err(redis_err)?;
            Target::Plain(client)
        };
        Ok(Conn {
            target,
            describe,
            con: Mutex::new(None),
            accept_async: false,
        })
    }

    /// `redis://user@host:6379/0`, without the password.
    pub(crate) fn describe(&self) -> &str {
        &self.describe
    }

    /// Runs `call` on the connection (made first if there is none), within `within`; a
    /// connection that failed is dropped, and the next call makes another (through Sentinel: to
    /// the primary it names then).
    pub(crate) fn call<T>(
        &self,
        what: &str,
        within: Duration,
        call: impl FnOnce(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Error> {
        let within = within.max(Duration::from_millis(50));
        let mut guard = crate::lock::lock(&self.con);
        if guard.is_none() {
            let made = match &self.target {
                Target::Plain(c) => c.get_connection_with_timeout(within),
                Target::Sentinel(s) => crate::lock::lock(s)
                    .get_client()
                    .and_then(|c| c.get_connection_with_timeout(within)),
            };
            *guard = Some(made.map_err(|e| self.error(&format!("{what} (connecting)"), &e))?);
        }
        let Some(con) = guard.as_mut() else {
            return Err(self.error(
                what,
                &RedisError::from((redis::ErrorKind::Client, "no connection")),
            ));
        };
        let _ = con.set_read_timeout(Some(within));
        let _ = con.set_write_timeout(Some(within));
        match call(con) {
            Ok(t) => Ok(t),
            Err(e) => {
                if e.is_io_error()
                    || e.is_timeout()
                    || e.is_connection_dropped()
                    || e.code()
                        .is_some_and(|c| matches!(c, "READONLY" | "MASTERDOWN" | "LOADING"))
                {
                    *guard = None;
                }
                Err(self.error(what, &e))
            }
        }
    }

    /// A failed call as ringflake says it: a command the server refuses (renamed or disabled,
    /// as managed services do) is named with what to do; a wrong password and a missing
    /// permission are not retried.
    pub(crate) fn error(&self, what: &str, e: &RedisError) -> Error {
        let text = e.to_string();
        let lower = text.to_ascii_lowercase();
        let refused = ["wait", "info", "evalsha", "eval", "time"]
            .into_iter()
            .find(|c| lower.contains(&format!("'{c}'")))
            .filter(|_| lower.contains("unknown command") || lower.contains("noperm"));
        let (transient, hint) = if let Some(command) = refused {
            let command = command.to_ascii_uppercase();
            let escape = match command.as_str() {
                "WAIT" | "INFO" => {
                    " ringflake confirms every claim and extension on the replicas with INFO \
                     replication and WAIT: enable the command (or allow it to this user), or \
                     take the risk of an asynchronous failover with --accept-async-replication"
                }
                _ => " ringflake needs it: enable the command (or allow it to this user)",
            };
            (
                false,
                Some(format!(
                    "this Redis refuses {command} (renamed, disabled or not allowed to this \
                     user, as managed services do);{escape}"
                )),
            )
        } else if e.kind() == redis::ErrorKind::AuthenticationFailed
            || lower.contains("wrongpass")
            || lower.contains("noauth")
        {
            (false, Some("wrong user or password, or none given where one is needed (the URL's USER:PASSWORD@)".into()))
        } else if lower.contains("noperm") {
            (false, Some("the user may not run this command or touch these keys: grant its ACL the commands (SET, GET, HGET, HGETALL, MGET, EVALSHA, EVAL, SCRIPT, INFO, WAIT, TIME, PEXPIRE, DEL, HSET) and the prefix's keys".into()))
        } else if lower.contains("certificate") || lower.contains("invalidcertificate") {
            (false, Some("the server's certificate is not trusted: give the CA that signed it (--db-ca-file), and a host the certificate names".into()))
        } else if lower.contains("wrongtype") {
            (false, Some("a key under the prefix holds another program's data: give ringflake a prefix of its own (--redis-prefix)".into()))
        } else {
            (true, None)
        };
        let message = match hint {
            Some(h) => format!("{what}: {text}; {h}"),
            None => format!("{what}: {text}"),
        };
        Error::Database {
            database: self.describe.clone(),
            message,
            transient,
            source: Some(crate::Cause::from_error(e)),
        }
    }

    /// Confirms the writes made on this connection so far on every replica the primary reports
    /// (`INFO replication`'s `connected_slaves`, then `WAIT` for that many), trying until
    /// `deadline` in rounds of at most `round`; `Ok` at once with `--accept-async-replication`
    /// or no replica.
    pub(crate) fn confirm(
        &self,
        what: &str,
        round: Duration,
        deadline: Instant,
    ) -> Result<(), Error> {
        if self.accept_async {
            return Ok(());
        }
        let round = round.max(Duration::from_millis(100));
        loop {
            let wait_ms = u64::try_from((round / 2).as_millis())
                .unwrap_or(1_000)
                .max(10);
            let (replicas, acked) = self.call(what, round, |c| {
                let info: String = redis::cmd("INFO").arg("replication").query(c)?;
                let replicas = replicas_of(&info);
                if replicas == 0 {
                    return Ok((0, 0));
                }
                let acked: u64 = redis::cmd("WAIT").arg(replicas).arg(wait_ms).query(c)?;
                Ok((replicas, acked))
            })?;
            if acked >= replicas {
                return Ok(());
            }
            if Instant::now() + round > deadline {
                return Err(Error::Database {
                    database: self.describe.clone(),
                    message: format!(
                        "{what}: on {acked} of the {replicas} replica(s) the primary reports after \
                         {wait_ms} ms (a replica whose link stalls or lags): not used until every \
                         replica holds it, so that a failover cannot forget it; \
                         --accept-async-replication uses it at once, with that risk"
                    ),
                    transient: true,
                    source: None,
                });
            }
        }
    }
}

/// `connected_slaves:N` of `INFO replication`.
pub(crate) fn replicas_of(info: &str) -> u64 {
    info.lines()
        .find_map(|l| l.trim().strip_prefix("connected_slaves:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_described_without_password_and_bad_ones_named() {
        let c = Conn::new("redis://ids:s3cret@127.0.0.1:6379/2", None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.describe(), "redis://ids@127.0.0.1:6379/2");
        let c = Conn::new(
            "redis+sentinel://ids:p%40ss@s1:26379,s2:26380/mymaster",
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            c.describe(),
            "redis+sentinel://ids@s1:26379,s2:26380/mymaster"
        );
        for (bad, why) in [
            ("redis+sentinel://s1:26379", "no master name"),
            ("memcached://h:1", "unknown scheme"),
            ("redis://u:pw9@h:port/0", "not a number"),
            ("redis+sentinel://h/m?token=1", "unknown parameter"),
        ] {
            let e = Conn::new(bad, None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(!e.contains("pw9"), "{e}");
        }
        let e = Conn::new("redis://h:6379", Some(&PathBuf::from("/ca.pem")))
            .err()
            .unwrap();
        assert!(e.to_string().contains("rediss://"), "{e}");
        assert_eq!(decode("p%40ss%zz"), "p@ss%zz");
        assert_eq!(
            replicas_of("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"),
            2
        );
    }
}
