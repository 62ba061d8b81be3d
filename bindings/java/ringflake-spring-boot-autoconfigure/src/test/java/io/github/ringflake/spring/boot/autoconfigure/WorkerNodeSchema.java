package io.github.ringflake.spring.boot.autoconfigure;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** Baidu's WORKER_NODE table in an H2 database (MySQL mode), for the tests. */
final class WorkerNodeSchema {
    private WorkerNodeSchema() {}

    static void create(String url) {
        try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
                    + " HOST_NAME VARCHAR(64) NOT NULL, PORT VARCHAR(64) NOT NULL, TYPE INT NOT NULL,"
                    + " LAUNCH_DATE DATE NOT NULL, MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL)");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
