package com.baidu.fsg.uid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.baidu.fsg.uid.exception.UidGenerateException;
import com.baidu.fsg.uid.impl.CachedUidGenerator;
import com.baidu.fsg.uid.impl.DefaultUidGenerator;
import com.baidu.fsg.uid.worker.DisposableWorkerIdAssigner;
import com.baidu.fsg.uid.worker.WorkerIdAssigner;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.context.support.GenericXmlApplicationContext;

/**
 * Baidu's Spring XML, unchanged but for the jar: beans by Baidu's class and property names, IDs
 * unique and increasing, Baidu's parseUID text, one WORKER_NODE row per generator.
 */
class BaiduSpringXmlTest {
    private static final String URL = "jdbc:h2:mem:baidu;MODE=MySQL;DB_CLOSE_DELAY=-1";

    private static void createTable() throws Exception {
        try (Connection c = DriverManager.getConnection(URL, "sa", ""); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
                    + " HOST_NAME VARCHAR(64) NOT NULL, PORT VARCHAR(64) NOT NULL, TYPE INT NOT NULL,"
                    + " LAUNCH_DATE DATE NOT NULL, MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL)");
        }
    }

    private static List<Long> rowIds() throws Exception {
        List<Long> ids = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(URL, "sa", ""); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT ID FROM WORKER_NODE ORDER BY ID")) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        return ids;
    }

    @Test
    void theReadmesXmlRunsOnTheBridge() throws Exception {
        createTable();
        int before = rowIds().size();
        try (GenericXmlApplicationContext ctx = new GenericXmlApplicationContext("classpath:cached-uid-spring.xml")) {
            UidGenerator cached = ctx.getBean("cachedUidGenerator", UidGenerator.class);
            UidGenerator plain = ctx.getBean("defaultUidGenerator", UidGenerator.class);
            List<Long> rows = rowIds();
            assertEquals(before + 2, rows.size(), "one WORKER_NODE row per generator");
            long cachedWorker = ((CachedUidGenerator) cached).getWorkerId();
            long plainWorker = ((DefaultUidGenerator) plain).getWorkerId();
            assertTrue(rows.contains(cachedWorker) && rows.contains(plainWorker), rows.toString());
            assertNotEquals(cachedWorker, plainWorker);

            Set<Long> seen = new HashSet<>();
            long last = 0;
            for (int i = 0; i < 3_000; i++) { // 31/23/9 makes 512 IDs a second: within the 10 s lead cap
                long id = cached.getUID();
                assertTrue(id > last, "increasing");
                last = id;
                assertTrue(seen.add(id));
            }
            assertTrue(seen.add(plain.getUID()));

            // 31/23/9 from 2016-05-20 (the JVM's zone): Baidu's parse text for a known ID.
            long epoch = LocalDate.parse("2016-05-20").atStartOfDay(ZoneId.systemDefault()).toEpochSecond();
            long delta = 300_000_000L;
            long id = delta << 32 | 5L << 9 | 7;
            String time = LocalDateTime.ofEpochSecond(epoch + delta, 0,
                    ZoneId.systemDefault().getRules().getOffset(java.time.Instant.ofEpochSecond(epoch + delta)))
                    .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
            assertEquals("{\"UID\":\"" + id + "\",\"timestamp\":\"" + time + "\",\"workerId\":\"5\",\"sequence\":\"7\"}",
                    cached.parseUID(id));
            assertTrue(cached.parseUID(last).contains("\"workerId\":\"" + cachedWorker + "\""), cached.parseUID(last));
        }
    }

    /**
     * Baidu's mybatis-spring.xml declares two pools, {@code abstractDataSource} and its child
     * {@code dataSource}: the assigner takes the one MyBatis is wired to, by name.
     */
    @Test
    void ofTwoDataSourcesTheOneNamedDataSourceHoldsTheTable() throws Exception {
        createTable();
        try (GenericApplicationContext ctx = new GenericApplicationContext()) {
            JdbcDataSource parent = new JdbcDataSource();
            parent.setURL("jdbc:h2:mem:no-worker-node;DB_CLOSE_DELAY=-1");
            JdbcDataSource child = new JdbcDataSource();
            child.setURL(URL);
            child.setUser("sa");
            ctx.registerBean("abstractDataSource", DataSource.class, () -> parent);
            ctx.registerBean("dataSource", DataSource.class, () -> child);
            ctx.registerBean("disposableWorkerIdAssigner", DisposableWorkerIdAssigner.class);
            ctx.refresh();
            long id = ctx.getBean(DisposableWorkerIdAssigner.class).assignWorkerId();
            assertTrue(rowIds().contains(id), "row " + id + " in dataSource's WORKER_NODE");
        }
        try (GenericApplicationContext ctx = new GenericApplicationContext()) {
            ctx.registerBean("one", DataSource.class, JdbcDataSource::new);
            ctx.registerBean("other", DataSource.class, JdbcDataSource::new);
            ctx.registerBean("disposableWorkerIdAssigner", DisposableWorkerIdAssigner.class);
            ctx.refresh();
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    ctx.getBean(DisposableWorkerIdAssigner.class)::assignWorkerId);
            assertTrue(e.getMessage().contains("one, other") && e.getMessage().contains("dataSource"), e.getMessage());
        }
    }

    @Test
    void baidusExpiredDefaultsAreRefusedBeforeAWorkerIdIsTaken() {
        CachedUidGenerator g = new CachedUidGenerator();
        long[] asked = {0};
        WorkerIdAssigner counting = () -> ++asked[0];
        g.setWorkerIdAssigner(counting);
        UidGenerateException e = assertThrows(UidGenerateException.class, g::afterPropertiesSet);
        assertTrue(e.getMessage().contains("timeBits=28") && e.getMessage().contains("31/23/9"), e.getMessage());
        assertEquals(0, asked[0], "no worker id burnt");
    }

    @Test
    void aWorkerIdAboveTheMaxIsBaidusMessage() {
        DefaultUidGenerator g = new DefaultUidGenerator();
        g.setTimeBits(31);
        g.setWorkerBits(23);
        g.setSeqBits(9);
        g.setEpochStr("2016-05-20");
        g.setWorkerIdAssigner(() -> 8_388_608L);
        UidGenerateException e = assertThrows(UidGenerateException.class, g::afterPropertiesSet);
        assertEquals("Worker id 8388608 exceeds the max 8388607", e.getMessage());
    }
}
