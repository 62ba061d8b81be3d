//! The worker table in MariaDB or MySQL (crate `mysql`, synchronous, TLS by rustls with the ring
//! provider): UidGenerator's own `WORKER_NODE` table, shared with Java nodes, defined by
//! `schema/mysql.sql`.
//!
//! Only what is MariaDB's own: the URL, the driver calls, the error codes and the statements;
//! connecting, reconnecting and messages are `server`'s.

use super::db_clock::DatabaseTime;
use super::node::NodeInfo;
use super::rows::{Commit, TableSetup, WorkerRow, WorkerTable};
use super::secrets::url_passwords;
use super::server::{
    Driver, Failure, Problem, Server, TableDef, Tls, TlsMode, incomplete_url, invalid_url,
    take_params, tls_problem,
};
use super::table::DatabaseAssigner;
use crate::Error;
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, SslOpts};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

/// The table definition: applied when creating the table is requested, and the file to apply by
/// hand otherwise.
pub(crate) const SCHEMA: &str = include_str!("../../schema/mysql.sql");

/// Server error codes worth retrying: too many connections, shutdown in progress, lock wait
/// timeout, deadlock, connection killed, network read/write errors, inactivity disconnect.
const TRANSIENT_CODES: &[u16] = &[1040, 1053, 1158, 1159, 1160, 1161, 1205, 1213, 1927, 4031];

/// "Connections using insecure transport are prohibited while --require_secure_transport=ON":
/// MySQL's code, and MariaDB's.
const INSECURE_TRANSPORT_CODES: &[u16] = &[3159, 4146];

/// The URL parameters ringflake reads itself (keys lower-cased, `_` as `-`): the TLS mode and the
/// CA file (`root_cert_path` is the mysql crate's own name for it).
const TLS_KEYS: &[&str] = &["ssl-mode", "sslmode", "ssl-ca", "root-cert-path"];

/// The mysql crate's TLS switches, which `ssl-mode` replaces.
const REFUSED_KEYS: &[&str] = &[
    "danger-skip-domain-validation",
    "danger-accept-invalid-certs",
];

/// The MariaDB/MySQL client: the options from the URL.
pub(crate) struct Mysql {
    opts: Opts,
    /// The last write of each thread: the id of the connection that made it (see
    /// [`WorkerTable::take_commit`]).
    commits: Mutex<HashMap<ThreadId, u32>>,
}

impl MysqlTable {
    /// Runs the write `f` makes (see [`Server::with_conn`]) and keeps its connection's id as
    /// this thread's last commit.
    pub(crate) fn write<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut Conn) -> Result<T, mysql::Error>,
    ) -> Result<T, Error> {
        let (out, conn_id) = self.with_conn(what, |c| f(c).map(|out| (out, c.connection_id())))?;
        crate::lock::lock(&self.driver.commits).insert(std::thread::current().id(), conn_id);
        Ok(out)
    }
}

/// What may replicate from this server without holding every commit: `None` when a commit
/// cannot be lost in a failover (no binary log, Galera, semi-synchronous replication in force),
/// else the replicas it lists, or why they cannot be listed.
fn replicas_at_risk(c: &mut Conn) -> Result<Option<Vec<String>>, mysql::Error> {
    if c.query_first::<u8, _>("SELECT @@GLOBAL.log_bin")? == Some(0) {
        return Ok(None);
    }
    // Galera certifies every commit on the cluster before it returns.
    let galera: Option<(String, String)> =
        c.query_first("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")?;
    if galera.is_some_and(|(_, on)| on.eq_ignore_ascii_case("ON")) {
        return Ok(None);
    }
    // Semi-synchronous in force: a replica acknowledged the commit before it returned.
    let semi: Vec<(String, String)> = c.query(
        "SHOW GLOBAL STATUS WHERE Variable_name IN \
         ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_source_status')",
    )?;
    if semi.iter().any(|(_, on)| on.eq_ignore_ascii_case("ON")) {
        return Ok(None);
    }
    let hosts = match c.query_iter("SHOW SLAVE HOSTS") {
        Ok(result) => {
            let mut listed = Vec::new();
            for row in result {
                let row = row?;
                let id: Option<u64> = row.get(0);
                let host: Option<String> = row.get(1);
                let port: Option<u64> = row.get(2);
                listed.push(format!(
                    "replica server_id {} ({}:{}) without semi-synchronous replication",
                    id.unwrap_or(0),
                    host.filter(|h| !h.is_empty())
                        .unwrap_or_else(|| "no report_host".into()),
                    port.unwrap_or(0)
                ));
            }
            listed
        }
        Err(mysql::Error::MySqlError(e)) => vec![format!(
            "the replicas of this binary-logging server cannot be listed (SHOW SLAVE HOSTS: {}): \
             grant REPLICATION MASTER ADMIN (MariaDB) or REPLICATION SLAVE (MySQL) to this \
             user, or turn binary logging off if nothing replicates from it",
            e.message
        )],
        Err(e) => return Err(e),
    };
    Ok((!hosts.is_empty()).then_some(hosts))
}

/// The worker table on a MariaDB or MySQL server.
pub(crate) type MysqlTable = Server<Mysql>;

impl MysqlTable {
    pub(crate) fn from_url(url: &str) -> Result<MysqlTable, Error> {
        let mut secrets = url_passwords(url);
        let (rest, refused) = take_params(url, REFUSED_KEYS);
        if let Some((key, _)) = refused.first() {
            return Err(invalid_url::<Mysql>(
                &format!(
                    "{key} is not supported: ssl-mode=REQUIRED encrypts without checking the certificate, VERIFY_CA checks the CA only"
                ),
                &secrets,
            ));
        }
        let (rest, tls) = take_params(&rest, TLS_KEYS);
        let mut mode = None;
        let mut ca = None;
        for (key, value) in tls {
            if key.to_ascii_lowercase().replace('_', "-").ends_with("mode") {
                mode = Some(TlsMode::parse::<Mysql>(&value, &secrets)?);
            } else {
                ca = Some(PathBuf::from(value));
            }
        }
        let parsed =
            Opts::from_url(&rest).map_err(|e| invalid_url::<Mysql>(&e.to_string(), &secrets))?;
        let database = describe(&parsed);
        if parsed.get_db_name().is_none_or(str::is_empty) {
            return Err(incomplete_url::<Mysql>(database, "database"));
        }
        secrets.extend(parsed.get_pass().map(str::to_string));
        let builder = OptsBuilder::from_opts(parsed.clone())
            // UPDATE reports matched rows, not changed ones: a compare-and-set that matches
            // counts even if it writes the values the row already has.
            .additional_capabilities(
                parsed.get_additional_capabilities() | CapabilityFlags::CLIENT_FOUND_ROWS,
            );
        let driver = Mysql {
            opts: builder.into(),
            commits: Mutex::new(HashMap::new()),
        };
        Ok(Server::new(
            driver,
            database,
            secrets,
            parsed.get_tcp_connect_timeout(),
            mode,
            ca,
        ))
    }
}

impl Driver for Mysql {
    type Conn = Conn;
    type Error = mysql::Error;

    const NAME: &'static str = "mysql";
    const WORKER_TABLE: TableDef = TableDef::worker(
        "schema/mysql.sql",
        SCHEMA,
        "enable create_table (DatabaseAssigner::mysql(url)?.create_table(true))",
    );
    const CREDENTIALS_REFUSED: &'static str = "access denied";
    // The socket timeouts are set at connect.
    const TIMEOUT_SET_AT_CONNECT: bool = true;
    const TLS_PARAM: &'static str = "ssl-mode";
    const CA_PARAM: &'static str = "ssl-ca";
    const TLS_MODES: [&'static str; 5] = [
        "DISABLED",
        "PREFERRED",
        "REQUIRED",
        "VERIFY_CA",
        "VERIFY_IDENTITY",
    ];

    fn open(&self, connect_timeout: Duration, timeout: Duration, tls: &Tls) -> mysql::Result<Conn> {
        let opts = OptsBuilder::from_opts(self.opts.clone())
            .tcp_connect_timeout(Some(connect_timeout))
            .read_timeout(Some(timeout))
            .write_timeout(Some(timeout));
        if tls.mode != TlsMode::Disable {
            // The mysql crate builds its rustls configuration with the process's default
            // provider, which rustls picks on its own only when one provider is compiled in:
            // install ring (ours) unless the application installed one, so that another crate
            // enabling aws-lc-rs cannot make connecting panic. An error means one is installed.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let ssl = (tls.mode != TlsMode::Disable).then(|| {
            SslOpts::default()
                .with_root_cert_path(tls.ca.as_ref().map(|ca| ca.path.clone()))
                .with_danger_accept_invalid_certs(!tls.verify_chain())
                .with_danger_skip_domain_validation(!tls.verify_name())
        });
        match Conn::new(opts.clone().ssl_opts(ssl)) {
            // PREFERRED: plain TCP when the server offers no TLS.
            Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
                if tls.mode == TlsMode::Prefer =>
            {
                Conn::new(opts.ssl_opts(None))
            }
            other => other,
        }
    }

    fn create_table(&self, conn: &mut Conn, schema: &str, _timeout: Duration) -> mysql::Result<()> {
        // One statement at a time (the text protocol runs one, whatever the capabilities).
        for statement in schema_statements(schema) {
            conn.query_drop(statement)?;
        }
        Ok(())
    }

    fn replication(&self, conn: &mut Conn, _timeout: Duration) -> Option<String> {
        Some(match replicas_at_risk(conn) {
            Ok(None) => "no replica can lack a commit (binary log off, Galera, \
                         semi-synchronous replication in force, or no replica listed)"
                .into(),
            Ok(Some(at_risk)) => format!(
                "{}: each claim and lease extension is refused while that holds, unless \
                 --accept-async-replication",
                at_risk.join("; ")
            ),
            Err(e) => format!("the replication settings cannot be read: {e}"),
        })
    }

    fn execute(&self, conn: &mut Conn, sql: &str, _timeout: Duration) -> mysql::Result<()> {
        conn.query_drop(sql)
    }

    fn cause<'e>(&self, e: &'e mysql::Error) -> Option<&'e (dyn std::error::Error + 'static)> {
        Some(e)
    }

    fn classify(&self, e: &mysql::Error) -> Failure {
        // A socket read or write timeout: the server did not answer in time.
        let io = match e {
            mysql::Error::IoError(io) => Some(io),
            mysql::Error::CodecError(c) => {
                std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
            }
            _ => None,
        };
        // (mysql::Error tells its cause by the old `cause`, not `source`.)
        let tls = match e {
            mysql::Error::IoError(io) => tls_problem(io),
            mysql::Error::CodecError(c) => tls_problem(c),
            mysql::Error::TlsError(t) => tls_problem(t),
            _ => None,
        };
        if let Some(problem) = tls {
            return Failure::Failed {
                message: tls_message(e),
                transient: false,
                problem: Some(problem),
            };
        }
        if let Some(io) = io.filter(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            )
        }) {
            return Failure::NoAnswer(Some(io.to_string()));
        }
        let failed = |message: String, transient: bool| Failure::Failed {
            message,
            transient,
            problem: None,
        };
        match e {
            mysql::Error::MySqlError(m) => Failure::Failed {
                message: m.to_string(),
                transient: TRANSIENT_CODES.contains(&m.code),
                problem: match m.code {
                    1146 => Some(Problem::MissingTable),
                    1054 => Some(Problem::MissingColumn),
                    1044 | 1045 | 1698 => Some(Problem::Credentials),
                    1049 => Some(Problem::UnknownDatabase),
                    c if INSECURE_TRANSPORT_CODES.contains(&c) => Some(Problem::ServerRequiresTls),
                    _ => None,
                },
            },
            mysql::Error::IoError(io) => failed(io.to_string(), true),
            mysql::Error::CodecError(c) => failed(c.to_string(), true),
            mysql::Error::DriverError(mysql::DriverError::TlsNotSupported) => Failure::Failed {
                message: e.to_string(),
                transient: false,
                problem: Some(Problem::ServerWithoutTls),
            },
            mysql::Error::DriverError(d) => {
                use mysql::DriverError as D;
                let transient = matches!(
                    d,
                    D::ConnectTimeout
                        | D::CouldNotConnect(_)
                        | D::Timeout
                        | D::PacketOutOfSync
                        | D::UnexpectedPacket
                );
                failed(d.to_string(), transient)
            }
            mysql::Error::UrlError(u) => failed(u.to_string(), false),
            _ => failed(e.to_string(), false),
        }
    }
}

/// The statements of a schema file: split at `;` ending a line, comments left to the server.
pub(crate) fn schema_statements(schema: &str) -> impl Iterator<Item = &str> {
    schema.split(";\n").map(str::trim).filter(|s| {
        s.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with("--"))
    })
}

/// A TLS failure's message: the rustls error the driver carries (its own words wrap it in a
/// codec error), else the driver's message.
fn tls_message(e: &mysql::Error) -> String {
    let io = match e {
        mysql::Error::IoError(io) => Some(io),
        mysql::Error::CodecError(c) => {
            std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
        }
        _ => None,
    };
    match io.and_then(|io| io.get_ref()) {
        Some(inner) => format!("TLS handshake: {inner}"),
        None => e.to_string(),
    }
}

/// `mysql://user@host:port/database`, never the password.
fn describe(opts: &Opts) -> String {
    let user = opts.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    format!(
        "mysql://{user}{}:{}/{}",
        opts.get_ip_or_hostname(),
        opts.get_tcp_port(),
        opts.get_db_name().unwrap_or("")
    )
}

impl WorkerTable for MysqlTable {
    fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
        self.write("cannot insert into WORKER_NODE", |c| {
            c.exec_drop(
                "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, LEASE_UNTIL) \
                 VALUES (?, ?, ?, ?, NOW(), NOW(), ?)",
                (&node.host_name, &node.port, node.node_type, &node.launch_date, lease_until),
            )?;
            // LAST_INSERT_ID of this statement on this connection: concurrent boots each get
            // their own row's id.
            Ok(c.last_insert_id())
        })
    }

    fn delete(&self, id: u64) -> Result<(), Error> {
        self.with_conn("cannot delete from WORKER_NODE", |c| {
            c.exec_drop("DELETE FROM WORKER_NODE WHERE ID = ?", (id,))
        })
    }

    fn max_lease_for_host(&self, host: &str) -> Result<Option<i64>, Error> {
        self.with_conn("cannot read WORKER_NODE", |c| {
            c.exec_first::<Option<i64>, _, _>(
                "SELECT MAX(LEASE_UNTIL) FROM WORKER_NODE WHERE HOST_NAME = ? AND LEASE_UNTIL > 0",
                (host,),
            )
            .map(Option::flatten)
        })
    }

    fn recyclable(&self, max_id: u64, before: i64, limit: u32) -> Result<Vec<(u64, i64)>, Error> {
        self.with_conn("cannot read WORKER_NODE", |c| {
            c.exec(
                "SELECT ID, LEASE_UNTIL FROM WORKER_NODE \
                 WHERE ID <= ? AND LEASE_UNTIL > 0 AND LEASE_UNTIL < ? \
                 ORDER BY LEASE_UNTIL, ID LIMIT ?",
                (max_id, before, limit),
            )
        })
    }

    fn claim(
        &self,
        id: u64,
        expected: i64,
        node: &NodeInfo,
        lease_until: i64,
    ) -> Result<bool, Error> {
        self.write("cannot update WORKER_NODE", |c| {
            c.exec_drop(
                "UPDATE WORKER_NODE SET HOST_NAME = ?, PORT = ?, TYPE = ?, LAUNCH_DATE = ?, \
                 MODIFIED = NOW(), LEASE_UNTIL = ? WHERE ID = ? AND LEASE_UNTIL = ?",
                (
                    &node.host_name,
                    &node.port,
                    node.node_type,
                    &node.launch_date,
                    lease_until,
                    id,
                    expected,
                ),
            )?;
            Ok(c.affected_rows() == 1)
        })
    }

    fn set_lease(&self, id: u64, expected: i64, lease_until: i64) -> Result<bool, Error> {
        self.write("cannot update WORKER_NODE", |c| {
            c.exec_drop(
                "UPDATE WORKER_NODE SET LEASE_UNTIL = ?, MODIFIED = NOW() \
                 WHERE ID = ? AND LEASE_UNTIL = ?",
                (lease_until, id, expected),
            )?;
            Ok(c.affected_rows() == 1)
        })
    }

    fn clock(&self, _within: Duration) -> Result<Option<DatabaseTime>, Error> {
        // UTC_TIMESTAMP(6): the statement's start in UTC, whatever the session's time zone.
        // The text protocol: one round trip, measured around it.
        self.with_conn("cannot read the database's clock", |c| {
            let sent = std::time::Instant::now();
            let micros: Option<i64> = c.query_first(
                "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))",
            )?;
            let round_trip = sent.elapsed();
            Ok(micros.map(|unix_micros| DatabaseTime {
                unix_micros,
                round_trip,
            }))
        })
    }

    fn list(&self) -> Result<Vec<WorkerRow>, Error> {
        self.with_conn("cannot read WORKER_NODE", |c| {
            c.query_map(
                "SELECT ID, HOST_NAME, PORT, TYPE, CAST(LAUNCH_DATE AS CHAR), LEASE_UNTIL \
                 FROM WORKER_NODE ORDER BY ID",
                |(id, host_name, port, node_type, launch_date, lease_until)| WorkerRow {
                    id,
                    host_name,
                    port,
                    node_type,
                    launch_date,
                    lease_until,
                },
            )
        })
    }

    fn take_commit(&self) -> Option<Commit> {
        let taken = crate::lock::lock(&self.driver.commits).remove(&std::thread::current().id());
        taken.map(|id| Commit(Box::new(id)))
    }

    /// MariaDB and MySQL report no replica's position to the primary: the check is by
    /// configuration (see [`replicas_at_risk`]), on the connection that made the write.
    fn standbys_lacking(&self, commit: &Commit, _within: Duration) -> Result<Vec<String>, Error> {
        let Some(&made_by) = commit.0.downcast_ref::<u32>() else {
            return Ok(Vec::new());
        };
        let checked = self.with_conn("cannot read the replication settings", |c| {
            if c.connection_id() != made_by {
                return Ok(None);
            }
            replicas_at_risk(c).map(|r| Some(r.unwrap_or_default()))
        })?;
        checked.ok_or_else(|| Error::Database {
            database: TableSetup::describe(self),
            message: "the connection that made the write is closed: whether the write reached \
                      the replicas cannot be known"
                .into(),
            transient: false,
            source: None,
        })
    }

    fn connection_broke(&self) -> bool {
        self.broke_since_asked()
    }

    fn synchronous_setting(&self) -> &'static str {
        "semi-synchronous replication, rpl_semi_sync_master_enabled with the wait point \
         AFTER_SYNC, or Galera"
    }
}

impl DatabaseAssigner {
    /// Worker ids from the `WORKER_NODE` table of a MariaDB or MySQL database, the table a Java
    /// UidGenerator uses: `mysql://user:password@host:3306/database`. The table must exist
    /// (apply `schema/mysql.sql`, or add the `LEASE_UNTIL` column to Java's table as that file
    /// shows), unless [`create_table`](Self::create_table) is on.
    ///
    /// TLS as the MySQL client's `--ssl-mode` says, in the URL: `ssl-mode=DISABLED`,
    /// `PREFERRED` (the default: TLS when the server offers it, unverified), `REQUIRED`,
    /// `VERIFY_CA`, `VERIFY_IDENTITY`, with the CA file of `ssl-ca=PATH` or
    /// [`ca_file`](Self::ca_file) (which makes `VERIFY_IDENTITY` the default); see the README's
    /// "Databases" section.
    ///
    /// Nothing is connected until the first assignment, which retries an unreachable server
    /// for [`retry_for`](Self::retry_for). A wrong password or a missing table fails at once.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the URL cannot be parsed or names no database.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let assigner = DatabaseAssigner::mysql("mysql://app:s3cret@db.internal:3306/ids")?;
    /// // Descriptions and errors name the server and user, never the password.
    /// let shown = format!("{assigner:?}");
    /// assert!(shown.contains("mysql://app@db.internal:3306/ids"));
    /// assert!(!shown.contains("s3cret"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn mysql(url: &str) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::with_table(Arc::new(
            MysqlTable::from_url(url)?,
        )))
    }

    /// `mysql(url)?.create_table(create_table)`: the same assigner, built in one call; prefer
    /// [`mysql`](Self::mysql) and [`create_table`](Self::create_table).
    ///
    /// # Errors
    ///
    /// As [`mysql`](Self::mysql).
    ///
    /// ```
    /// use ringflake::DatabaseAssigner;
    ///
    /// let assigner = DatabaseAssigner::mysql_with("mysql://app:pw@127.0.0.1:3306/ids", true)?;
    /// assert!(format!("{assigner:?}").contains("create_table: true"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn mysql_with(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::mysql(url)?.create_table(create_table))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::rows::TableSetup;

    #[test]
    fn urls_are_described_without_password() {
        let t = MysqlTable::from_url("mysql://app:pa%3Ass@db:3307/ids")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.describe(), "mysql://app@db:3307/ids");
        let e = MysqlTable::from_url("mysql://app:pw@db:3307")
            .err()
            .unwrap();
        assert!(e.to_string().contains("names no database"), "{e}");
        let e = MysqlTable::from_url("postgres://app:pw9@db/ids")
            .err()
            .unwrap();
        assert!(!e.to_string().contains("pw9"), "{e}");
        assert!(e.to_string().contains("invalid URL"), "{e}");
    }

    #[test]
    fn tls_mode_and_ca_come_from_the_url() {
        let t = MysqlTable::from_url(
            "mysql://app:pw@db:3306/ids?ssl_mode=verify_ca&ssl-ca=%2Fetc%2Fca.pem&prefer_socket=false",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t.tls().unwrap(),
            "ssl-mode=VERIFY_CA with CA file /etc/ca.pem"
        );
        let t = MysqlTable::from_url("mysql://app:pw@db:3306/ids?root_cert_path=/ca.pem")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            t.tls().unwrap(),
            "ssl-mode=VERIFY_IDENTITY with CA file /ca.pem"
        );
        let t =
            MysqlTable::from_url("mysql://app:pw@db:3306/ids").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.tls().unwrap(), "ssl-mode=PREFERRED");
        let e = MysqlTable::from_url("mysql://app:pw5@db/ids?ssl-mode=ON")
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("ssl-mode=ON is not a TLS mode"),
            "{e}"
        );
        assert!(!e.to_string().contains("pw5"), "{e}");
        let e = MysqlTable::from_url("mysql://app:pw@db/ids?danger_accept_invalid_certs=true")
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("not supported: ssl-mode=REQUIRED"),
            "{e}"
        );
    }

    #[test]
    fn schema_is_java_table_plus_lease() {
        for column in [
            "ID",
            "HOST_NAME",
            "PORT",
            "TYPE",
            "LAUNCH_DATE",
            "MODIFIED",
            "CREATED",
        ] {
            assert!(SCHEMA.contains(&format!("\n    {column} ")), "{column}");
        }
        assert!(SCHEMA.contains("LEASE_UNTIL BIGINT      NOT NULL DEFAULT 0"));
    }
}
