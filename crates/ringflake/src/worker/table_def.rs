//! The table a server client keeps ([`TableDef`]): the worker table by default, or the segment
//! generator's `leaf_alloc`, which shares the connection handling of `server`.

/// Every column ringflake reads or writes: the probe that tells a missing table or column.
const PROBE: &str = "SELECT ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED, \
                                LEASE_UNTIL FROM WORKER_NODE LIMIT 0";

/// The table a [`Server`](super::server::Server) keeps: probed when a connection opens, created from `schema` when
/// asked to, and named in messages and hints. The worker table unless `Server::for_table` says
/// otherwise (the segment generator's `leaf_alloc` shares the connection handling).
#[derive(Clone, Copy)]
pub(crate) struct TableDef {
    /// The table's name: `WORKER_NODE`.
    pub(crate) name: &'static str,
    /// A statement that reads every column used and returns no row.
    pub(crate) probe: &'static str,
    /// The driver's schema file in ringflake's sources, for messages: `schema/mysql.sql`.
    pub(crate) schema_file: &'static str,
    /// Its statements, `;`-separated.
    pub(crate) schema: &'static str,
    /// What to do about a missing column, for the hint.
    pub(crate) missing_column: &'static str,
    /// How to have the table created, for the hint: `DatabaseAssigner::…(url)?.create_table(true)`.
    pub(crate) create_hint: &'static str,
}

impl TableDef {
    /// The worker table of driver `D`, whose schema is `schema` (from `schema_file`).
    pub(crate) const fn worker(
        schema_file: &'static str,
        schema: &'static str,
        create_hint: &'static str,
    ) -> TableDef {
        TableDef {
            name: "WORKER_NODE",
            probe: PROBE,
            schema_file,
            schema,
            missing_column: "table WORKER_NODE lacks ringflake's column: ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0",
            create_hint,
        }
    }
}
