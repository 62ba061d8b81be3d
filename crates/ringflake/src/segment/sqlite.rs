//! `leaf_alloc` in a SQLite file (the worker table's file by default), created on first use from
//! `schema/leaf_alloc.sqlite.sql`. Only the statements and the connection are SQLite's; errors
//! read as the worker table's (`worker::sqlite::to_error`).

use super::table::{
    AllocSetup, AllocTable, Claim, LeafRow, MAX_STEP, PROBE, SegmentTable, why_not_claimed,
};
use crate::Error;
use crate::worker::sqlite::to_error;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The tables, applied on first use.
const SCHEMA: &str = include_str!("../../schema/leaf_alloc.sqlite.sql");

struct Sqlite {
    path: PathBuf,
    conn: Mutex<(Connection, Duration, bool)>,
}

impl Sqlite {
    /// Runs `f` in a transaction (IMMEDIATE: the write lock taken up front, so concurrent
    /// claims are serialized by the busy timeout), the tables created first if needed.
    fn run<T>(
        &self,
        write: bool,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, Error> {
        let mut guard = crate::lock::lock(&self.conn);
        let (conn, timeout, ready) = &mut *guard;
        let db = |e| with_hint(to_error(&self.path, e, Some(*timeout)));
        if !*ready {
            conn.execute_batch(SCHEMA).map_err(db)?;
            conn.execute_batch(PROBE).map_err(db)?;
            *ready = true;
        }
        let behavior = if write {
            TransactionBehavior::Immediate
        } else {
            TransactionBehavior::Deferred
        };
        let tx = conn.transaction_with_behavior(behavior).map_err(db)?;
        let out = f(&tx).map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(out)
    }
}

/// A missing column gets the schema to compare with.
pub(crate) fn with_hint(e: Error) -> Error {
    match e {
        Error::Database {
            database,
            message,
            transient,
            source,
        } if message.contains("no such column") || message.contains("has no column") => {
            Error::Database {
                database,
                message: format!(
                    "table leaf_alloc is not Leaf's (expected the columns biz_tag, max_id, step, \
                     description, update_time of schema/leaf_alloc.sqlite.sql): {message}"
                ),
                transient,
                source,
            }
        }
        other => other,
    }
}

impl AllocSetup for Sqlite {
    fn describe(&self) -> String {
        format!("sqlite file {}", self.path.display())
    }

    fn set_timeout(&self, timeout: Duration) {
        let mut guard = crate::lock::lock(&self.conn);
        guard.1 = timeout;
        let _ = guard.0.busy_timeout(timeout);
    }
}

impl AllocTable for Sqlite {
    fn prepare(&self) -> Result<(), Error> {
        self.run(false, |_| Ok(()))
    }

    fn rows(&self) -> Result<Vec<LeafRow>, Error> {
        self.run(false, |tx| {
            let mut st = tx.prepare(
                "SELECT biz_tag, max_id, step, description, CAST(update_time AS TEXT) \
                 FROM leaf_alloc ORDER BY biz_tag",
            )?;
            st.query_map([], |r| {
                Ok(LeafRow {
                    biz_tag: r.get(0)?,
                    max_id: r.get(1)?,
                    step: r.get(2)?,
                    description: r.get(3)?,
                    update_time: r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                })
            })?
            .collect()
        })
    }

    fn claim(&self, tag: &str, step: Option<i64>, holder: &str) -> Result<Claim, Error> {
        self.run(true, |tx| {
            // Leaf's UPDATE, guarded: a positive step within Leaf's INT that keeps max_id below
            // 2^63 (SQLite would turn an overflowing sum into a float).
            let updated = match step {
                None => tx.execute(
                    "UPDATE leaf_alloc SET max_id = max_id + step, update_time = CURRENT_TIMESTAMP \
                     WHERE biz_tag = ?1 AND step > 0 AND step <= ?2 \
                     AND max_id <= 9223372036854775807 - max(step, 0)",
                    params![tag, MAX_STEP],
                )?,
                Some(s) => tx.execute(
                    "UPDATE leaf_alloc SET max_id = max_id + ?2, update_time = CURRENT_TIMESTAMP \
                     WHERE biz_tag = ?1 AND step > 0 AND step <= ?3 AND max_id <= ?4",
                    params![tag, s, MAX_STEP, i64::MAX - s],
                )?,
            };
            // Leaf's SELECT.
            let row: Option<(i64, i64)> = tx
                .query_row(
                    "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?1",
                    params![tag],
                    |r| Ok((r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            match (updated, row) {
                (1, Some((max_id, table_step))) => {
                    tx.execute(
                        "INSERT INTO ringflake_segment_hold (biz_tag, range_end, holder) \
                         VALUES (?1, ?2, ?3)",
                        params![tag, max_id, holder],
                    )?;
                    Ok(Claim::Claimed { max_id, table_step })
                }
                (_, row) => Ok(why_not_claimed(row, step)),
            }
        })
    }

    fn resume(&self, tag: &str, end: i64, from: &str, to: &str) -> Result<bool, Error> {
        self.run(true, |tx| {
            tx.execute(
                "UPDATE ringflake_segment_hold SET holder = ?4, update_time = CURRENT_TIMESTAMP \
                 WHERE biz_tag = ?1 AND range_end = ?2 AND holder = ?3",
                params![tag, end, from, to],
            )
            .map(|n| n == 1)
        })
    }

    fn release(&self, tag: &str, ends: &[i64], holder: &str) -> Result<(), Error> {
        self.run(true, |tx| {
            for end in ends {
                tx.execute(
                    "DELETE FROM ringflake_segment_hold \
                     WHERE biz_tag = ?1 AND range_end = ?2 AND holder = ?3",
                    params![tag, end, holder],
                )?;
            }
            Ok(())
        })
    }

    fn insert(&self, tag: &str, max_id: i64, step: i64, description: &str) -> Result<bool, Error> {
        self.run(true, |tx| {
            tx.execute(
                "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (biz_tag) DO NOTHING",
                params![tag, max_id, step, description],
            )
            .map(|n| n == 1)
        })
    }
}

impl SegmentTable {
    /// `leaf_alloc` in the SQLite file at `path` (created, with Leaf's table, on first use):
    /// usually the worker table's file, [`DEFAULT_SQLITE_PATH`](crate::DEFAULT_SQLITE_PATH).
    ///
    /// # Errors
    ///
    /// [`Error::Database`] naming the file if it cannot be opened.
    ///
    /// ```
    /// use ringflake::SegmentTable;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let table = SegmentTable::sqlite(dir.path().join("ids.db"))?;
    /// assert!(table.rows()?.is_empty()); // created, empty
    /// # Ok::<(), ringflake::Error>(())
    /// ```
    pub fn sqlite(path: impl AsRef<Path>) -> Result<SegmentTable, Error> {
        let path = path.as_ref();
        let conn = Connection::open(path).map_err(|e| to_error(path, e, None))?;
        Ok(SegmentTable::with(Sqlite {
            path: path.to_path_buf(),
            conn: Mutex::new((conn, Duration::ZERO, false)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> (tempfile::TempDir, SegmentTable) {
        let dir = tempfile::tempdir().unwrap();
        let t = SegmentTable::sqlite(dir.path().join("ids.db")).unwrap();
        (dir, t)
    }

    #[test]
    fn claims_are_leafs_and_recorded_as_held() {
        let (dir, t) = table();
        assert!(t.add("orders", 1, 1000, "o").unwrap());
        let a = &t.table;
        assert_eq!(
            a.claim("orders", None, "me").unwrap(),
            Claim::Claimed {
                max_id: 1001,
                table_step: 1000
            }
        );
        assert_eq!(
            a.claim("orders", Some(4000), "me").unwrap(),
            Claim::Claimed {
                max_id: 5001,
                table_step: 1000
            }
        );
        assert_eq!(a.claim("nope", None, "me").unwrap(), Claim::NoRow);
        assert!(a.resume("orders", 1001, "me", "you").unwrap());
        assert!(
            !a.resume("orders", 1001, "me", "them").unwrap(),
            "taken over once"
        );
        a.release("orders", &[1001, 5001], "you").unwrap();
        let conn = Connection::open(dir.path().join("ids.db")).unwrap();
        let held: Vec<(i64, String)> = conn
            .prepare("SELECT range_end, holder FROM ringflake_segment_hold ORDER BY range_end")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(held, vec![(5001, "me".to_string())]);
    }

    #[test]
    fn bad_rows_change_nothing() {
        let (dir, t) = table();
        let conn = Connection::open(dir.path().join("ids.db")).unwrap();
        t.rows().unwrap();
        conn.execute_batch(
            "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('zero', 1, 0), \
             ('neg', 1, -5), ('top', 9223372036854775000, 1000), ('wide', 1, 3000000000)",
        )
        .unwrap();
        let a = &t.table;
        assert_eq!(a.claim("zero", None, "me").unwrap(), Claim::BadStep(0));
        assert_eq!(a.claim("neg", Some(10), "me").unwrap(), Claim::BadStep(-5));
        assert_eq!(
            a.claim("wide", None, "me").unwrap(),
            Claim::BadStep(3_000_000_000)
        );
        assert_eq!(
            a.claim("top", None, "me").unwrap(),
            Claim::Overflow {
                max_id: 9_223_372_036_854_775_000,
                step: 1000
            }
        );
        assert_eq!(
            a.claim("top", Some(807), "me").unwrap(),
            Claim::Claimed {
                max_id: i64::MAX,
                table_step: 1000
            }
        );
        let rows = t.rows().unwrap();
        assert_eq!(
            rows.iter().map(|r| r.max_id).collect::<Vec<_>>(),
            [1, i64::MAX, 1, 1]
        );
    }

    #[test]
    fn a_table_that_is_not_leafs_is_refused_by_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE leaf_alloc (biz_tag TEXT PRIMARY KEY, max_id BIGINT)")
            .unwrap();
        let e = SegmentTable::sqlite(&path)
            .unwrap()
            .rows()
            .unwrap_err()
            .to_string();
        assert!(e.contains("table leaf_alloc is not Leaf's"), "{e}");
        assert!(e.contains("step"), "{e}");
    }
}
