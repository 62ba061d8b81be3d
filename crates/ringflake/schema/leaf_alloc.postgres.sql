-- Meituan Leaf's segment table for PostgreSQL: Leaf's columns, types and defaults (PostgreSQL has
-- no ON UPDATE: ringflake's claim sets update_time itself), so that Leaf nodes and ringflake
-- nodes share it; plus ringflake's own table of the ranges each ringflake node holds (Leaf
-- ignores it). `ringflake serve` and `ringflake segments` create both when missing.
-- Add a tag:
--   INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('orders', 1, 2000, 'order numbers');
CREATE TABLE IF NOT EXISTS leaf_alloc (
    biz_tag     VARCHAR(128) NOT NULL DEFAULT '' PRIMARY KEY,
    max_id      BIGINT       NOT NULL DEFAULT 1,
    step        INT          NOT NULL,
    description VARCHAR(256) DEFAULT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
-- ringflake: a range [range_end - step, range_end) of biz_tag held by a ringflake node (holder: a
-- token of its boot); a restart takes it over by compare-and-set before it uses the rest.
CREATE TABLE IF NOT EXISTS ringflake_segment_hold (
    biz_tag     VARCHAR(128) NOT NULL,
    range_end   BIGINT       NOT NULL,
    holder      VARCHAR(64)  NOT NULL,
    update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (biz_tag, range_end)
);
