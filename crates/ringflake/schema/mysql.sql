-- ringflake worker table for MySQL / MariaDB: exactly UidGenerator's WORKER_NODE (same name,
-- columns and types), plus LEASE_UNTIL with a default, so Java's own
--   INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED)
--   VALUES (..., NOW(), NOW())
-- still works and Java and ringflake nodes can share one table.
-- To add ringflake's column to an existing Java table instead:
--   ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS WORKER_NODE (
    ID          BIGINT      NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',
    HOST_NAME   VARCHAR(64) NOT NULL COMMENT 'host name',
    PORT        VARCHAR(64) NOT NULL COMMENT 'port',
    TYPE        INT         NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',
    LAUNCH_DATE DATE        NOT NULL COMMENT 'launch date',
    MODIFIED    TIMESTAMP   NOT NULL COMMENT 'modified time',
    CREATED     TIMESTAMP   NOT NULL COMMENT 'created time',
    LEASE_UNTIL BIGINT      NOT NULL DEFAULT 0 COMMENT 'ringflake: last unix second this node may issue; 0 = none',
    PRIMARY KEY (ID)
) COMMENT = 'DB WorkerID Assigner for UID Generator', ENGINE = INNODB;
