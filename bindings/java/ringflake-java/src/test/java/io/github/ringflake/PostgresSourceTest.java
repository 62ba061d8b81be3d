package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Worker ids from PostgreSQL through a pgJDBC URL (TLS verified against the CA of
 * {@code sslrootcert}): two generators, two worker ids; a wrong password, a clear exception.
 * Needs {@code RINGFLAKE_POSTGRES_URL} (.ci/run's server); skipped without it unless
 * {@code RINGFLAKE_JAVA_SERVER_TESTS=1}.
 */
class PostgresSourceTest {
    /** pgJDBC's spelling of the crate's {@code postgres://} URL, with {@code password}. */
    private static String jdbc(String password) {
        String url = System.getenv("RINGFLAKE_POSTGRES_URL");
        if (url == null) {
            if ("1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"))) {
                fail("RINGFLAKE_POSTGRES_URL is not set");
            }
            Assumptions.abort("RINGFLAKE_POSTGRES_URL is not set");
        }
        URI u = URI.create(url);
        String user = u.getRawUserInfo().split(":", 2)[0];
        String pw = password != null ? password : URLDecoder.decode(u.getRawUserInfo().split(":", 2)[1], StandardCharsets.UTF_8);
        return "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?" + u.getRawQuery()
                + "&user=" + user + "&password=" + JdbcUrls.encode(pw, false) + "&ApplicationName=orders";
    }

    @Test
    void twoGeneratorsTwoWorkerIds() {
        String url = jdbc(null);
        try (RingflakeUidGenerator a = RingflakeUidGenerator.builder().jdbcUrl(url).createTable(true)
                        .shutdownHook(false).build();
                RingflakeUidGenerator b = RingflakeUidGenerator.builder().jdbcUrl(url).createTable(true)
                        .shutdownHook(false).build()) {
            assertNotEquals(a.workerId(), b.workerId());
            assertNotEquals(a.getUID(), b.getUID());
            assertEquals(a.workerId(), a.stats().workerId());
        }
        RingflakeException e = assertThrows(RingflakeException.class,
                () -> RingflakeUidGenerator.builder().jdbcUrl(jdbc("wrong-password")).shutdownHook(false).build());
        assertEquals("Database", e.kind(), e.getMessage());
    }
}
