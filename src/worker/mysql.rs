//! The worker table in MariaDB or MySQL (crate `mysql`, synchronous, no TLS): UidGenerator's own
//! `WORKER_NODE` table, shared with Java nodes, defined by `schema/mysql.sql`.
//!
//! The connection is opened on first use, not by the constructor, so that a database that is
//! still starting is retried for [`DatabaseAssigner::retry_for`] like any other transient
//! failure; a connection that breaks is reopened on the next operation.

use super::node::NodeInfo;
use super::secrets::{redact, url_passwords};
use super::table::{DatabaseAssigner, WorkerRow, WorkerTable};
use super::{connect_timeout, no_answer};
use crate::Error;
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The table definition: applied when creating the table is requested, and the file to apply by
/// hand otherwise.
pub(crate) const SCHEMA: &str = include_str!("../../schema/mysql.sql");

/// Where the schema lives in ringflake's sources, for error messages.
const SCHEMA_FILE: &str = "schema/mysql.sql";

/// Every column ringflake reads or writes: the probe that tells a missing table or column.
const PROBE: &str = "SELECT ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, LEASE_UNTIL \
                     FROM WORKER_NODE LIMIT 0";

/// Server error codes worth retrying: too many connections, shutdown in progress, lock wait
/// timeout, deadlock, connection killed, network read/write errors, inactivity disconnect.
const TRANSIENT_CODES: &[u16] = &[1040, 1053, 1158, 1159, 1160, 1161, 1205, 1213, 1927, 4031];

struct MysqlTable {
    opts: Opts,
    /// `tcp_connect_timeout_ms` from the URL (see [`connect_timeout`]).
    url_connect_timeout: Option<Duration>,
    create_table: bool,
    database: String,
    secrets: Vec<String>,
    /// Socket read and write timeout of the connections opened from now on.
    timeout: Mutex<Duration>,
    conn: Mutex<Option<Conn>>,
}

impl MysqlTable {
    fn new(url: &str, create_table: bool) -> Result<MysqlTable, Error> {
        let secrets = url_passwords(url);
        let parsed = Opts::from_url(url).map_err(|e| Error::Database {
            database: "mysql (URL not understood)".into(),
            message: redact(
                &format!("invalid URL, expected mysql://user:password@host:port/database: {e}"),
                &secrets,
            ),
            transient: false,
        })?;
        let database = describe(&parsed);
        if parsed.get_db_name().is_none_or(str::is_empty) {
            return Err(Error::Database {
                database,
                message:
                    "the URL names no database: expected mysql://user:password@host:port/database"
                        .into(),
                transient: false,
            });
        }
        let mut secrets = secrets;
        secrets.extend(parsed.get_pass().map(str::to_string));
        let builder = OptsBuilder::from_opts(parsed.clone())
            // UPDATE reports matched rows, not changed ones: a compare-and-set that matches
            // counts even if it writes the values the row already has.
            .additional_capabilities(
                parsed.get_additional_capabilities() | CapabilityFlags::CLIENT_FOUND_ROWS,
            );
        Ok(MysqlTable {
            url_connect_timeout: parsed.get_tcp_connect_timeout(),
            opts: builder.into(),
            create_table,
            database,
            secrets,
            timeout: Mutex::new(Duration::from_secs(30)),
            conn: Mutex::new(None),
        })
    }

    /// Opens a connection and checks (or creates) the table.
    fn connect(&self) -> Result<Conn, Error> {
        let timeout = *self.timeout.lock().unwrap_or_else(|e| e.into_inner());
        let opts = OptsBuilder::from_opts(self.opts.clone())
            .tcp_connect_timeout(Some(connect_timeout(self.url_connect_timeout, timeout)))
            .read_timeout(Some(timeout))
            .write_timeout(Some(timeout));
        let mut conn = Conn::new(opts).map_err(|e| self.error(e, "cannot connect"))?;
        if self.create_table {
            conn.query_drop(SCHEMA).map_err(|e| {
                self.error(
                    e,
                    &format!("cannot create table WORKER_NODE from {SCHEMA_FILE}"),
                )
            })?;
        }
        conn.query_drop(PROBE)
            .map_err(|e| self.error(e, "cannot read table WORKER_NODE"))?;
        Ok(conn)
    }

    /// Runs `f` on the connection, opening it first if needed; drops it after a transient
    /// failure so the next attempt reconnects.
    fn with_conn<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> Result<T, Error> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let conn = match guard.as_mut() {
            Some(conn) => conn,
            None => guard.insert(self.connect()?),
        };
        f(conn).map_err(|e| {
            let err = self.error(e, what);
            if matches!(
                err,
                Error::Database {
                    transient: true,
                    ..
                }
            ) {
                *guard = None;
            }
            err
        })
    }

    fn error(&self, e: mysql::Error, what: &str) -> Error {
        // A socket read or write timeout: the server did not answer in time.
        let io = match &e {
            mysql::Error::IoError(io) => Some(io),
            mysql::Error::CodecError(c) => {
                std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
            }
            _ => None,
        };
        if let Some(io) = io.filter(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            )
        }) {
            let timeout = *self.timeout.lock().unwrap_or_else(|e| e.into_inner());
            return Error::Database {
                database: self.database.clone(),
                message: format!("{} ({io})", no_answer(what, timeout)),
                transient: true,
            };
        }
        let (message, transient) = match &e {
            mysql::Error::MySqlError(m) => {
                let hint = match m.code {
                    1146 => format!(
                        "table WORKER_NODE not found: apply {SCHEMA_FILE} to the database or enable create_table (DatabaseAssigner::mysql_with(url, true)); "
                    ),
                    1054 => "table WORKER_NODE lacks ringflake's column: ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0 (see schema/mysql.sql); ".to_string(),
                    1044 | 1045 | 1698 => {
                        "access denied: check the user and password in the URL; ".to_string()
                    }
                    1049 => "unknown database: create it or fix the URL; ".to_string(),
                    _ => String::new(),
                };
                (
                    format!("{what}: {hint}{m}"),
                    TRANSIENT_CODES.contains(&m.code),
                )
            }
            mysql::Error::IoError(io) => (format!("{what}: {io}"), true),
            mysql::Error::CodecError(c) => (format!("{what}: {c}"), true),
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
                (format!("{what}: {d}"), transient)
            }
            mysql::Error::UrlError(u) => (format!("{what}: {u}"), false),
            _ => (format!("{what}: {e}"), false),
        };
        Error::Database {
            database: self.database.clone(),
            message: redact(&message, &self.secrets),
            transient,
        }
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
    fn describe(&self) -> String {
        self.database.clone()
    }

    fn insert(&self, node: &NodeInfo, lease_until: i64) -> Result<u64, Error> {
        self.with_conn("cannot insert into WORKER_NODE", |c| {
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
        self.with_conn("cannot update WORKER_NODE", |c| {
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
        self.with_conn("cannot update WORKER_NODE", |c| {
            c.exec_drop(
                "UPDATE WORKER_NODE SET LEASE_UNTIL = ?, MODIFIED = NOW() \
                 WHERE ID = ? AND LEASE_UNTIL = ?",
                (lease_until, id, expected),
            )?;
            Ok(c.affected_rows() == 1)
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

    fn set_timeout(&self, timeout: Duration) {
        *self.timeout.lock().unwrap_or_else(|e| e.into_inner()) = timeout;
        // The socket timeouts are set at connect: the next call opens a connection with these.
        *self.conn.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

impl DatabaseAssigner {
    /// Worker ids from the `WORKER_NODE` table of a MariaDB or MySQL database, the table a Java
    /// UidGenerator uses: `mysql://user:password@host:3306/database`. The table must exist
    /// (apply `schema/mysql.sql`, or add the `LEASE_UNTIL` column to Java's table as that file
    /// shows); [`mysql_with`](Self::mysql_with) can create it instead.
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
        DatabaseAssigner::mysql_with(url, false)
    }

    /// As [`mysql`](Self::mysql); with `create_table` true, the table is created from
    /// `schema/mysql.sql` when missing (`CREATE TABLE IF NOT EXISTS`, which needs the CREATE
    /// privilege).
    ///
    /// # Errors
    ///
    /// As [`mysql`](Self::mysql).
    ///
    /// ```no_run
    /// use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};
    ///
    /// let assigner = DatabaseAssigner::mysql_with("mysql://app:pw@127.0.0.1:3306/ids", true)?;
    /// let generator = CachedUidGenerator::builder(Layout::default())
    ///     .worker_id_from(&assigner)
    ///     .build()?;
    /// println!("worker {}", generator.worker_id());
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn mysql_with(url: &str, create_table: bool) -> Result<DatabaseAssigner, Error> {
        Ok(DatabaseAssigner::with_table(Arc::new(MysqlTable::new(
            url,
            create_table,
        )?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_described_without_password() {
        let t = MysqlTable::new("mysql://app:pa%3Ass@db:3307/ids", false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.describe(), "mysql://app@db:3307/ids");
        let e = MysqlTable::new("mysql://app:pw@db:3307", false)
            .err()
            .unwrap();
        assert!(e.to_string().contains("names no database"), "{e}");
        let e = MysqlTable::new("postgres://app:pw9@db/ids", false)
            .err()
            .unwrap();
        assert!(!e.to_string().contains("pw9"), "{e}");
        assert!(e.to_string().contains("invalid URL"), "{e}");
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
