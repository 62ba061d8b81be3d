-- ringflake worker table for SQLite: UidGenerator's WORKER_NODE, plus LEASE_UNTIL (with a default).
-- Applied by ringflake on first use (src/worker/sqlite.rs includes this file).
-- AUTOINCREMENT keeps ids from ever being handed out twice, even after the highest row is deleted.
CREATE TABLE IF NOT EXISTS WORKER_NODE (
    ID          INTEGER      NOT NULL PRIMARY KEY AUTOINCREMENT,
    HOST_NAME   VARCHAR(64)  NOT NULL,
    PORT        VARCHAR(64)  NOT NULL,
    TYPE        INT          NOT NULL,
    LAUNCH_DATE DATE         NOT NULL,
    MODIFIED    TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CREATED     TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- ringflake: the last unix second this row's node may issue; 0 = no lease (a Java node).
    LEASE_UNTIL BIGINT       NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS WORKER_NODE_HOST ON WORKER_NODE (HOST_NAME);
