package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.ringflake.RingflakeUidGenerator;
import io.github.ringflake.WorkerNodeTable;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A real Spring Boot application with only the starter's auto-configuration and a
 * {@code spring.datasource} pointing at CI's MariaDB or PostgreSQL (TLS verified): the worker id
 * comes from that database's WORKER_NODE table, beside a Baidu-shaped row written through the
 * application's DataSource. Skipped without {@code RINGFLAKE_MYSQL_URL} /
 * {@code RINGFLAKE_POSTGRES_URL}, a failure then with {@code RINGFLAKE_JAVA_SERVER_TESTS=1}.
 * Written against what Spring Boot 3 and 4 share: ringflake-spring-boot4-autoconfigure runs it too.
 */
class DatabaseApplicationTest {
    /** The test application: nothing but Spring Boot's auto-configuration (no component scan). */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    /** {url, user, password} in JDBC form for the crate's URL in {@code env}, or skip/fail. */
    static String[] jdbc(String env) {
        String url = System.getenv(env);
        if (url == null) {
            if ("1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"))) {
                fail(env + " is not set (RINGFLAKE_JAVA_SERVER_TESTS=1)");
            }
            Assumptions.abort(env + " is not set");
        }
        URI u = URI.create(url);
        String[] userInfo = u.getRawUserInfo().split(":", 2);
        String password = URLDecoder.decode(userInfo[1], StandardCharsets.UTF_8);
        String base = u.getHost() + ":" + u.getPort() + u.getPath();
        String jdbc = url.startsWith("postgres")
                ? "jdbc:postgresql://" + base + "?" + u.getRawQuery()
                : "jdbc:mariadb://" + base + "?sslMode=verify-full&serverSslCert="
                        + u.getRawQuery().replaceAll(".*ssl-ca=([^&]*).*", "$1");
        return new String[] {jdbc, userInfo[0], password};
    }

    static void register(DynamicPropertyRegistry r, String env) {
        String[] j = jdbc(env);
        r.add("spring.datasource.url", () -> j[0]);
        r.add("spring.datasource.username", () -> j[1]);
        r.add("spring.datasource.password", () -> j[2]);
        r.add("ringflake.jdbc.create-table", () -> "true");
        r.add("ringflake.layout.time-bits", () -> "31");
        r.add("ringflake.layout.worker-bits", () -> "23");
        r.add("ringflake.layout.seq-bits", () -> "9");
        r.add("ringflake.layout.epoch", () -> "2016-05-20");
    }

    /** What both databases must show. */
    abstract static class Checks {
        @Autowired
        RingflakeUidGenerator uid;
        @Autowired
        DataSource dataSource;
        /** By its own class: Spring Boot 3 and 4 put the health API in other packages. */
        @Autowired
        RingflakeHealthIndicator health;

        @Test
        void theWorkerIdIsARowOfTheApplicationsDatabase() {
            long a = uid.getUID();
            assertThat(uid.getUID()).isGreaterThan(a);
            JdbcTemplate db = new JdbcTemplate(dataSource);
            List<Long> ids = db.queryForList("SELECT ID FROM WORKER_NODE", Long.class);
            assertThat(ids).contains(uid.workerId());
            // A Baidu node's row, through the same DataSource: another worker id.
            long baidu = WorkerNodeTable.assign(dataSource);
            assertThat(baidu).isNotEqualTo(uid.workerId());
            assertThat(db.queryForList("SELECT ID FROM WORKER_NODE", Long.class)).contains(baidu, uid.workerId());
            assertThat(health.health().getStatus().getCode()).isEqualTo("UP");
        }
    }

    /** MariaDB (RINGFLAKE_MYSQL_URL). */
    @Nested
    @SpringBootTest(classes = App.class)
    @DirtiesContext // closed after the class: its generator holds its worker id in this JVM
    class MariaDb extends Checks {
        @BeforeAll
        static void server() {
            jdbc("RINGFLAKE_MYSQL_URL");
        }

        @DynamicPropertySource
        static void properties(DynamicPropertyRegistry r) {
            register(r, "RINGFLAKE_MYSQL_URL");
        }
    }

    /** PostgreSQL (RINGFLAKE_POSTGRES_URL). */
    @Nested
    @SpringBootTest(classes = App.class)
    @DirtiesContext // closed after the class: its generator holds its worker id in this JVM
    class Postgres extends Checks {
        @BeforeAll
        static void server() {
            jdbc("RINGFLAKE_POSTGRES_URL");
        }

        @DynamicPropertySource
        static void properties(DynamicPropertyRegistry r) {
            register(r, "RINGFLAKE_POSTGRES_URL");
        }
    }
}
