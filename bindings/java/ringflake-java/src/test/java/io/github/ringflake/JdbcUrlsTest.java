package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** JDBC URLs as Spring data sources spell them, in the crate's URL forms. */
class JdbcUrlsTest {
    private static String[] map(String url) {
        return JdbcUrls.toCrate(url, null, null);
    }

    @Test
    void mysqlAndMariadb() {
        assertArrayEquals(new String[] {"mysql", "mysql://app:pw@db:3306/ids"},
                map("jdbc:mysql://db/ids?user=app&password=pw&useUnicode=true&serverTimezone=UTC"));
        assertArrayEquals(new String[] {"mysql", "mysql://app:pw@db:3307/ids?ssl-mode=VERIFY_IDENTITY"},
                map("jdbc:mysql://db:3307/ids?user=app&password=pw&sslMode=VERIFY_IDENTITY"));
        assertArrayEquals(new String[] {"mysql", "mysql://app@db:3306/ids?ssl-mode=DISABLED"},
                map("jdbc:mysql://db:3306/ids?user=app&useSSL=false"));
        assertArrayEquals(new String[] {"mysql", "mysql://app:pw@db:3306/ids?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/ca.pem"},
                map("jdbc:mariadb://db:3306/ids?user=app&password=pw&sslMode=verify-full&serverSslCert=/etc/ca.pem"));
        assertArrayEquals(new String[] {"mysql", "mysql://app:pw@db:3306/ids?ssl-mode=VERIFY_CA"},
                map("jdbc:mysql://db:3306/ids?user=app&password=pw&useSSL=true&verifyServerCertificate=true"));
    }

    @Test
    void postgres() {
        assertArrayEquals(new String[] {"postgres", "postgres://app:pw@db:5432/ids"},
                map("jdbc:postgresql://db/ids?user=app&password=pw&ApplicationName=orders"));
        // pgJDBC's ssl=true verifies the certificate and the host name.
        assertArrayEquals(new String[] {"postgres", "postgres://app:pw@db:5433/ids?sslmode=verify-full"},
                map("jdbc:postgresql://db:5433/ids?user=app&password=pw&ssl=true"));
        assertArrayEquals(new String[] {"postgres", "postgres://app@[::1]:5432/ids?sslmode=require&sslrootcert=/ca.pem"},
                map("jdbc:postgresql://[::1]/ids?user=app&sslmode=require&sslrootcert=/ca.pem"));
    }

    @Test
    void credentialsApartAndEncoded() {
        assertArrayEquals(new String[] {"mysql", "mysql://app%40corp:p%40ss%3Aw%2Frd%20x@db:3306/ids"},
                JdbcUrls.toCrate("jdbc:mysql://db:3306/ids?user=ignored", "app@corp", "p@ss:w/rd x"));
        assertArrayEquals(new String[] {"postgres", "postgres://u:p@h:1/d"},
                JdbcUrls.toCrate("postgres://u:p@h:1/d", null, null));
    }

    @Test
    void refused() {
        for (String url : new String[] {
            "jdbc:mysql://a:3306,b:3306/ids?user=app",
            "jdbc:mysql://db:3306/?user=app",
            "jdbc:mysql://db:3306/ids?user=app&trustCertificateKeyStoreUrl=file:/ks.jks",
            "jdbc:postgresql://db/ids?user=app&sslfactory=org.postgresql.ssl.NonValidatingFactory",
            "jdbc:postgresql://db/ids?user=app&sslmode=sometimes",
            "jdbc:mysql://db:3306/ids?user=app&sslMode=MAYBE",
            "jdbc:h2:mem:ids",
            "",
        }) {
            RingflakeException e = assertThrows(RingflakeException.class, () -> map(url), url);
            assertEquals("InvalidConfig", e.kind());
        }
        RingflakeException e = assertThrows(RingflakeException.class,
                () -> map("jdbc:sqlserver://db;password=s3cret"));
        assertTrue(e.getMessage().contains("jdbc:sqlserver"), e.getMessage());
        e = assertThrows(RingflakeException.class, () -> map("jdbc:mysql://a,b/ids?user=u&password=s3cret"));
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }
}
