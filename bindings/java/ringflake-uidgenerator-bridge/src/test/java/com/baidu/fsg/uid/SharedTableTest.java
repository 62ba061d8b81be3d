package com.baidu.fsg.uid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.baidu.fsg.uid.impl.CachedUidGenerator;
import io.github.ringflake.RingflakeUidGenerator;
import io.github.ringflake.UidLayout;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbDataSource;
import org.springframework.context.support.GenericXmlApplicationContext;

/**
 * The bridge beside a ringflake node on one MariaDB WORKER_NODE table (CI's server, TLS
 * verified): the bridge's Baidu-shaped row and the ringflake node's row are two worker ids, their
 * IDs never meet. Needs {@code RINGFLAKE_MYSQL_URL}; skipped without it unless
 * {@code RINGFLAKE_JAVA_SERVER_TESTS=1}.
 */
class SharedTableTest {
    @Test
    void theBridgeAndARingflakeNodeShareTheTable() throws Exception {
        String url = System.getenv("RINGFLAKE_MYSQL_URL");
        if (url == null) {
            if ("1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"))) {
                fail("RINGFLAKE_MYSQL_URL is not set (RINGFLAKE_JAVA_SERVER_TESTS=1)");
            }
            Assumptions.abort("RINGFLAKE_MYSQL_URL is not set");
        }
        URI u = URI.create(url);
        String[] userInfo = u.getRawUserInfo().split(":", 2);
        String user = userInfo[0];
        String password = URLDecoder.decode(userInfo[1], StandardCharsets.UTF_8);
        String jdbc = "jdbc:mariadb://" + u.getHost() + ":" + u.getPort() + u.getPath()
                + "?sslMode=verify-full&serverSslCert=" + u.getRawQuery().replaceAll(".*ssl-ca=([^&]*).*", "$1");
        MariaDbDataSource dataSource = new MariaDbDataSource(jdbc);
        dataSource.setUser(user);
        dataSource.setPassword(password);

        try (RingflakeUidGenerator node = RingflakeUidGenerator.builder().layout(31, 23, 9).epochDate("2016-05-20")
                        .jdbcUrl(jdbc, user, password).createTable(true).shutdownHook(false).build();
                GenericXmlApplicationContext ctx = new GenericXmlApplicationContext()) {
            ctx.getBeanFactory().registerSingleton("dataSource", dataSource);
            ctx.load("classpath:cached-uid-beside-ringflake.xml");
            ctx.refresh();
            CachedUidGenerator bridge = ctx.getBean(CachedUidGenerator.class);
            assertNotEquals(node.workerId(), bridge.getWorkerId());
            try (Connection c = dataSource.getConnection();
                    PreparedStatement st = c.prepareStatement("SELECT TYPE, PORT FROM WORKER_NODE WHERE ID = ?")) {
                st.setLong(1, bridge.getWorkerId());
                try (ResultSet rs = st.executeQuery()) {
                    assertTrue(rs.next(), "no WORKER_NODE row " + bridge.getWorkerId());
                    assertEquals(2, rs.getInt(1));
                    assertTrue(rs.getString(2).matches("\\d+-\\d+"), rs.getString(2));
                }
            }
            UidLayout layout = node.layout();
            Set<Long> ids = new HashSet<>();
            for (int i = 0; i < 2_000; i++) {
                long a = node.getUID();
                long b = bridge.getUID();
                assertEquals(node.workerId(), layout.workerId(a));
                assertEquals(bridge.getWorkerId(), layout.workerId(b));
                assertTrue(ids.add(a) && ids.add(b), "an ID twice");
            }
        }
    }
}
