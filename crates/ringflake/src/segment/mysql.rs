//! `leaf_alloc` on a MariaDB or MySQL server: Leaf's own table (`schema/leaf_alloc.mysql.sql`),
//! on the worker table's client (`worker::mysql`: the URL, TLS, one kept connection, timeouts,
//! messages without passwords) and its replication check (`worker::durable`). Only the
//! statements are here.

use super::server::{OnServer, leaf_alloc};
use super::table::{AllocTable, Claim, LeafRow, MAX_STEP, SegmentTable, why_not_claimed};
use crate::Error;
use crate::worker::mysql::{Mysql, MysqlTable};
use crate::worker::server::TableDef;
use mysql::prelude::Queryable;
use mysql::{Row, TxOpts};

/// Leaf's table and ringflake's hold table.
const SCHEMA: &str = include_str!("../../schema/leaf_alloc.mysql.sql");

/// What the shared client keeps: `leaf_alloc`.
const TABLE: TableDef = leaf_alloc("schema/leaf_alloc.mysql.sql", SCHEMA);

impl AllocTable for OnServer<Mysql> {
    fn prepare(&self) -> Result<(), Error> {
        // Connecting creates the tables if missing, then probes Leaf's columns.
        self.server.with_conn("cannot read leaf_alloc", |_| Ok(()))
    }

    fn rows(&self) -> Result<Vec<LeafRow>, Error> {
        self.server.with_conn("cannot read leaf_alloc", |c| {
            c.query_map(
                "SELECT biz_tag, max_id, step, description, CAST(update_time AS CHAR) \
                 FROM leaf_alloc ORDER BY biz_tag",
                |(biz_tag, max_id, step, description, update_time): (
                    String,
                    i64,
                    i64,
                    Option<String>,
                    Option<String>,
                )| LeafRow {
                    biz_tag,
                    max_id,
                    step,
                    description,
                    update_time: update_time.unwrap_or_default(),
                },
            )
        })
    }

    fn claim(&self, tag: &str, step: Option<i64>, holder: &str) -> Result<Claim, Error> {
        self.server
            .write("cannot claim a range of leaf_alloc", |c| {
                let mut tx = c.start_transaction(TxOpts::default())?;
                // Leaf's UPDATE (matched rows counted, CLIENT_FOUND_ROWS), guarded: a positive step
                // within Leaf's INT that keeps max_id within BIGINT.
                match step {
                    None => tx.exec_drop(
                        "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ? \
                     AND step > 0 AND step <= ? \
                     AND max_id <= 9223372036854775807 - GREATEST(step, 0)",
                        (tag, MAX_STEP),
                    )?,
                    Some(s) => tx.exec_drop(
                        "UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ? \
                     AND step > 0 AND step <= ? AND max_id <= ?",
                        (s, tag, MAX_STEP, i64::MAX - s),
                    )?,
                }
                let updated = tx.affected_rows();
                // Leaf's SELECT.
                let row: Option<Row> = tx.exec_first(
                    "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?",
                    (tag,),
                )?;
                let row = row.and_then(|r| Some((r.get::<i64, _>(1)?, r.get::<i64, _>(2)?)));
                let claim = match (updated, row) {
                    (1, Some((max_id, table_step))) => {
                        tx.exec_drop(
                            "INSERT INTO ringflake_segment_hold (biz_tag, range_end, holder) \
                         VALUES (?, ?, ?)",
                            (tag, max_id, holder),
                        )?;
                        Claim::Claimed { max_id, table_step }
                    }
                    (_, row) => why_not_claimed(row, step),
                };
                tx.commit()?;
                Ok(claim)
            })
    }

    fn resume(&self, tag: &str, end: i64, from: &str, to: &str) -> Result<bool, Error> {
        self.server.write("cannot take a range over", |c| {
            c.exec_drop(
                "UPDATE ringflake_segment_hold SET holder = ? \
                 WHERE biz_tag = ? AND range_end = ? AND holder = ?",
                (to, tag, end, from),
            )?;
            Ok(c.affected_rows() == 1)
        })
    }

    fn release(&self, tag: &str, ends: &[i64], holder: &str) -> Result<(), Error> {
        self.server.with_conn("cannot release held ranges", |c| {
            for end in ends {
                c.exec_drop(
                    "DELETE FROM ringflake_segment_hold \
                     WHERE biz_tag = ? AND range_end = ? AND holder = ?",
                    (tag, end, holder),
                )?;
            }
            Ok(())
        })
    }

    fn insert(&self, tag: &str, max_id: i64, step: i64, description: &str) -> Result<bool, Error> {
        self.server.with_conn("cannot insert into leaf_alloc", |c| {
            c.exec_drop(
                "INSERT IGNORE INTO leaf_alloc (biz_tag, max_id, step, description) \
                 VALUES (?, ?, ?, ?)",
                (tag, max_id, step, description),
            )?;
            Ok(c.affected_rows() == 1)
        })
    }
}

impl SegmentTable {
    /// `leaf_alloc` in a MariaDB or MySQL database, the table Leaf nodes use:
    /// `mysql://user:password@host:3306/database`, with the URL parameters, TLS modes and CA
    /// files of [`DatabaseAssigner::mysql`](crate::DatabaseAssigner::mysql). The table (and
    /// ringflake's `ringflake_segment_hold`) is created from `schema/leaf_alloc.mysql.sql` when
    /// missing, which needs the CREATE privilege; an existing one must have Leaf's columns.
    /// Nothing is connected until the first call.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the URL cannot be parsed or names no database.
    ///
    /// ```
    /// let t = ringflake::SegmentTable::mysql("mysql://app:s3cret@db:3306/ids")?;
    /// assert_eq!(t.describe(), "mysql://app@db:3306/ids");
    /// assert!(!format!("{t:?}").contains("s3cret"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn mysql(url: &str) -> Result<SegmentTable, Error> {
        Ok(SegmentTable::with(OnServer::new(
            MysqlTable::from_url(url)?,
            TABLE,
        )))
    }
}
