//! `leaf_alloc` on a PostgreSQL server: Leaf's columns (`schema/leaf_alloc.postgres.sql`), on
//! the worker table's client (`worker::postgres`: the URL, TLS, the private runtime, one kept
//! connection, timeouts, messages without passwords) and its replication check
//! (`worker::durable`: the claim's WAL position on every standby). Only the statements are here.

use super::server::{OnServer, leaf_alloc};
use super::table::{AllocTable, Claim, LeafRow, MAX_STEP, SegmentTable, why_not_claimed};
use crate::Error;
use crate::worker::postgres::{Postgres, PostgresTable};
use crate::worker::server::TableDef;

/// Leaf's table and ringflake's hold table.
const SCHEMA: &str = include_str!("../../schema/leaf_alloc.postgres.sql");

/// What the shared client keeps: `leaf_alloc`.
const TABLE: TableDef = leaf_alloc("schema/leaf_alloc.postgres.sql", SCHEMA);

impl AllocTable for OnServer<Postgres> {
    fn prepare(&self) -> Result<(), Error> {
        // Connecting creates the tables if missing, then probes Leaf's columns.
        self.server
            .with_client("cannot read leaf_alloc", |_| async { Ok(()) })
    }

    fn rows(&self) -> Result<Vec<LeafRow>, Error> {
        self.server
            .with_client("cannot read leaf_alloc", |c| async move {
                let rows = c
                    .query(
                        "SELECT biz_tag, max_id::int8, step::int8, description, \
                         update_time::text FROM leaf_alloc ORDER BY biz_tag",
                        &[],
                    )
                    .await?;
                Ok(rows
                    .iter()
                    .map(|r| LeafRow {
                        biz_tag: r.get(0),
                        max_id: r.get(1),
                        step: r.get(2),
                        description: r.get(3),
                        update_time: r.get::<_, Option<String>>(4).unwrap_or_default(),
                    })
                    .collect())
            })
    }

    fn claim(&self, tag: &str, step: Option<i64>, holder: &str) -> Result<Claim, Error> {
        let (tag, holder) = (tag.to_string(), holder.to_string());
        self.server
            .write("cannot claim a range of leaf_alloc", |c| async move {
                // The statements `Client::transaction` sends, on the shared client; a failure
                // rolls back before the error is returned.
                c.batch_execute("BEGIN").await?;
                let claimed = async {
                    // Leaf's UPDATE, guarded: a positive step within Leaf's INT that keeps
                    // max_id within BIGINT.
                    let updated = match step {
                        None => {
                            c.execute(
                                "UPDATE leaf_alloc SET max_id = max_id + step, \
                                 update_time = CURRENT_TIMESTAMP WHERE biz_tag = $1 \
                                 AND step > 0 AND step <= $2::int8 \
                                 AND max_id <= 9223372036854775807 - GREATEST(step, 0)",
                                &[&tag, &MAX_STEP],
                            )
                            .await?
                        }
                        Some(s) => {
                            c.execute(
                                "UPDATE leaf_alloc SET max_id = max_id + $1::int8, \
                                 update_time = CURRENT_TIMESTAMP WHERE biz_tag = $2 \
                                 AND step > 0 AND step <= $3::int8 AND max_id <= $4::int8",
                                &[&s, &tag, &MAX_STEP, &(i64::MAX - s)],
                            )
                            .await?
                        }
                    };
                    // Leaf's SELECT.
                    let row = c
                        .query_opt(
                            "SELECT biz_tag, max_id::int8, step::int8 FROM leaf_alloc \
                             WHERE biz_tag = $1",
                            &[&tag],
                        )
                        .await?
                        .map(|r| (r.get::<_, i64>(1), r.get::<_, i64>(2)));
                    Ok(match (updated, row) {
                        (1, Some((max_id, table_step))) => {
                            c.execute(
                                "INSERT INTO ringflake_segment_hold (biz_tag, range_end, holder) \
                                 VALUES ($1, $2::int8, $3)",
                                &[&tag, &max_id, &holder],
                            )
                            .await?;
                            Claim::Claimed { max_id, table_step }
                        }
                        (_, row) => why_not_claimed(row, step),
                    })
                }
                .await;
                match claimed {
                    Ok(claim) => c.batch_execute("COMMIT").await.map(|()| claim),
                    Err(e) => {
                        let _ = c.batch_execute("ROLLBACK").await;
                        Err(e)
                    }
                }
            })
    }

    fn resume(&self, tag: &str, end: i64, from: &str, to: &str) -> Result<bool, Error> {
        let (tag, from, to) = (tag.to_string(), from.to_string(), to.to_string());
        self.server
            .write("cannot take a range over", |c| async move {
                c.execute(
                    "UPDATE ringflake_segment_hold SET holder = $1, \
                     update_time = CURRENT_TIMESTAMP \
                     WHERE biz_tag = $2 AND range_end = $3::int8 AND holder = $4",
                    &[&to, &tag, &end, &from],
                )
                .await
                .map(|n| n == 1)
            })
    }

    fn release(&self, tag: &str, ends: &[i64], holder: &str) -> Result<(), Error> {
        let (tag, ends, holder) = (tag.to_string(), ends.to_vec(), holder.to_string());
        self.server
            .with_client("cannot release held ranges", |c| async move {
                c.execute(
                    "DELETE FROM ringflake_segment_hold \
                     WHERE biz_tag = $1 AND range_end = ANY($2::int8[]) AND holder = $3",
                    &[&tag, &ends, &holder],
                )
                .await
                .map(|_| ())
            })
    }

    fn insert(&self, tag: &str, max_id: i64, step: i64, description: &str) -> Result<bool, Error> {
        let (tag, description) = (tag.to_string(), description.to_string());
        self.server
            .with_client("cannot insert into leaf_alloc", |c| async move {
                c.execute(
                    "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) \
                     VALUES ($1, $2::int8, $3::int8, $4) ON CONFLICT (biz_tag) DO NOTHING",
                    &[&tag, &max_id, &step, &description],
                )
                .await
                .map(|n| n == 1)
            })
    }
}

impl SegmentTable {
    /// `leaf_alloc` in a PostgreSQL database: `postgres://user:password@host:5432/database` (or
    /// the `host=… user=…` form), with the URL parameters, TLS modes and CA files of
    /// [`DatabaseAssigner::postgres`](crate::DatabaseAssigner::postgres). The table (and
    /// ringflake's `ringflake_segment_hold`) is created from `schema/leaf_alloc.postgres.sql`
    /// when missing, which needs the CREATE privilege; an existing one must have Leaf's
    /// columns. Nothing is connected until the first call.
    ///
    /// # Errors
    ///
    /// [`Error::Database`] if the URL cannot be parsed or names no host.
    ///
    /// ```
    /// let t = ringflake::SegmentTable::postgres("postgres://app:s3cret@db:5432/ids")?;
    /// assert_eq!(t.describe(), "postgres://app@db:5432/ids");
    /// assert!(!format!("{t:?}").contains("s3cret"));
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn postgres(url: &str) -> Result<SegmentTable, Error> {
        Ok(SegmentTable::with(OnServer::new(
            PostgresTable::from_url(url)?,
            TABLE,
        )))
    }
}
