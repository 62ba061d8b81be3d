-- Meituan Leaf's segment table for SQLite: Leaf's columns, types and defaults (SQLite has no ON
-- UPDATE: ringflake's claim sets update_time itself); plus ringflake's own table of the ranges
-- each ringflake node holds. Applied by ringflake on first use (src/segment/sqlite.rs).
CREATE TABLE IF NOT EXISTS leaf_alloc (
    biz_tag     VARCHAR(128) NOT NULL DEFAULT '' PRIMARY KEY,
    max_id      BIGINT       NOT NULL DEFAULT 1,
    step        INT          NOT NULL,
    description VARCHAR(256) DEFAULT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS ringflake_segment_hold (
    biz_tag     VARCHAR(128) NOT NULL,
    range_end   BIGINT       NOT NULL,
    holder      VARCHAR(64)  NOT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (biz_tag, range_end)
);
