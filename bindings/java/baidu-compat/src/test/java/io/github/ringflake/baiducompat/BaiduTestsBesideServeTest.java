package io.github.ringflake.baiducompat;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.baidu.fsg.uid.CachedUidGeneratorTest;
import com.baidu.fsg.uid.DefaultUidGeneratorTest;
import com.baidu.fsg.uid.impl.DefaultUidGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.runner.RunWith;
import org.junit.runners.Suite;

/**
 * Baidu UidGenerator's own test classes, unchanged, with Baidu's Spring XML (its
 * {@code mybatis-spring.xml}: Druid pool, MyBatis, {@code DisposableWorkerIdAssigner}) on
 * ringflake-uidgenerator-bridge in place of Baidu's jar, against CI's MariaDB, while a real
 * {@code ringflake serve} takes its worker id from the same {@code WORKER_NODE} table (created by
 * Baidu's {@code WORKER_NODE.sql}) and hands out IDs over HTTP the whole time.
 *
 * <p>Before Baidu's classes: the table, the server, and the data source's URL as the system
 * properties {@code mysql.properties} names. After them: every ID Baidu's tests took (kept by
 * {@link RecordingListener}) and every ID the server handed out are checked: each generator's IDs
 * carry its own worker id, the three worker ids (two Spring contexts, one server) are distinct
 * rows of {@code WORKER_NODE}, and no ID appears twice among them all.
 *
 * <p>Needs {@code RINGFLAKE_MYSQL_URL} (CI's URL form, TLS verified against its {@code ssl-ca})
 * and the binary ({@code -Dringflake.bin}); skipped without them unless
 * {@code RINGFLAKE_JAVA_SERVER_TESTS=1}, which makes their absence a failure.
 */
@RunWith(Suite.class)
@Suite.SuiteClasses({CachedUidGeneratorTest.class, DefaultUidGeneratorTest.class})
public class BaiduTestsBesideServeTest {
    /** cached-uid-spring.xml's layout (31/12/20 from 2016-05-20), which the server runs too. */
    static final int TIME_BITS = 31;
    static final int WORKER_BITS = 12;
    static final int SEQ_BITS = 20;
    static final String EPOCH = "2016-05-20";
    /** default-uid-spring.xml's layout, Baidu's own: 29/21/13 from 2016-09-20. */
    static final int DEFAULT_WORKER_BITS = 21;
    static final int DEFAULT_SEQ_BITS = 13;
    /** At most this many served IDs are kept (the server hands out 10,000 every 50 ms at most). */
    static final int SERVED_CAP = 2_000_000;

    private static Process serve;
    private static Thread fetcher;
    private static final AtomicBoolean STOP = new AtomicBoolean();
    private static final List<long[]> SERVED = new ArrayList<>();
    private static volatile Throwable fetchError;
    private static String jdbcUrl;
    private static String user;
    private static String password;

    /** Not instantiated: a suite. */
    public BaiduTestsBesideServeTest() {}

    @BeforeClass
    public static void startServeAndPointBaidusXmlAtTheTable() throws Exception {
        String url = System.getenv("RINGFLAKE_MYSQL_URL");
        Path bin = Path.of(System.getProperty("ringflake.test.bin", "ringflake"));
        String missing = url == null ? "RINGFLAKE_MYSQL_URL is not set"
                : !Files.isExecutable(bin) ? "no ringflake binary at " + bin + " (cargo build -p ringflake-cli)" : null;
        if (missing != null) {
            if ("1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"))) {
                fail(missing + " (RINGFLAKE_JAVA_SERVER_TESTS=1)");
            }
            Assume.assumeTrue(missing, false);
        }
        URI u = URI.create(url);
        String[] info = u.getRawUserInfo().split(":", 2);
        user = URLDecoder.decode(info[0], StandardCharsets.UTF_8);
        password = URLDecoder.decode(info[1], StandardCharsets.UTF_8);
        String ca = null;
        for (String kv : u.getRawQuery().split("&")) {
            if (kv.startsWith("ssl-ca=")) {
                ca = URLDecoder.decode(kv.substring(7), StandardCharsets.UTF_8);
            }
        }
        assertTrue("RINGFLAKE_MYSQL_URL names no ssl-ca", ca != null);
        jdbcUrl = "jdbc:mariadb://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?sslMode=verify-full&serverSslCert="
                + ca;
        // mysql.properties: jdbc.url=${baidu.compat.jdbc.url}, resolved from system properties.
        System.setProperty("baidu.compat.jdbc.url", jdbcUrl);
        System.setProperty("baidu.compat.jdbc.username", user);
        System.setProperty("baidu.compat.jdbc.password", password);

        // Baidu's WORKER_NODE.sql, as its README has users run it: DROP, then CREATE.
        String script;
        try (InputStream in = BaiduTestsBesideServeTest.class.getResourceAsStream("/uid/WORKER_NODE.sql")) {
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password); Statement st = c.createStatement()) {
            for (String sql : script.split(";")) {
                if (!sql.isBlank()) {
                    st.execute(sql);
                }
            }
            // The one statement docs/migrating.md has a Baidu deployment run before a ringflake node joins.
            st.execute("ALTER TABLE WORKER_NODE ADD COLUMN LEASE_UNTIL BIGINT NOT NULL DEFAULT 0");
        }

        long epoch = LocalDate.parse(EPOCH).atStartOfDay(ZoneId.systemDefault()).toEpochSecond();
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path log = Path.of(System.getProperty("basedir", "."), "target", "ringflake-serve.log");
        Files.createDirectories(log.getParent());
        serve = new ProcessBuilder(bin.toString(), "serve", "--listen", "127.0.0.1:" + port, "--mysql", url,
                "--no-state-file", "--time-bits", String.valueOf(TIME_BITS), "--worker-bits", String.valueOf(WORKER_BITS),
                "--seq-bits", String.valueOf(SEQ_BITS), "--epoch-seconds", String.valueOf(epoch))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HttpClient http = HttpClient.newHttpClient();
        awaitUp(http, port, log);
        fetcher = new Thread(() -> fetchUntilStopped(http, port), "served-ids");
        fetcher.start();
    }

    private static void awaitUp(HttpClient http, int port, Path log) throws Exception {
        for (int i = 0; i < 300; i++) {
            if (!serve.isAlive()) {
                fail("ringflake serve exited with " + serve.exitValue() + ": " + Files.readString(log));
            }
            try {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/livez"))
                        .timeout(Duration.ofSeconds(2)).build();
                if (http.send(req, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        fail("ringflake serve did not come up in 30 s: " + Files.readString(log));
    }

    /** Takes IDs from the server, 10,000 at a time, beside Baidu's tests until they end. */
    private static void fetchUntilStopped(HttpClient http, int port) {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ids?count=10000"))
                .timeout(Duration.ofSeconds(30)).build();
        int kept = 0;
        try {
            while (!STOP.get() && kept < SERVED_CAP) {
                HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("/ids answered " + r.statusCode() + ": " + r.body());
                }
                long[] ids = Arrays.stream(r.body().replaceAll("[\\[\\]\" ]", "").split(","))
                        .mapToLong(Long::parseLong).toArray();
                synchronized (SERVED) {
                    SERVED.add(ids);
                }
                kept += ids.length;
                Thread.sleep(50); // beside the tests, not instead of them: 2 cores
            }
        } catch (Throwable t) {
            fetchError = t;
        }
    }

    @AfterClass
    public static void noIdTwiceAndDistinctWorkerIds() throws Exception {
        if (serve == null) {
            return;
        }
        STOP.set(true);
        if (fetcher != null) {
            fetcher.join(TimeUnit.SECONDS.toMillis(60));
        }
        serve.destroy();
        serve.waitFor(30, TimeUnit.SECONDS);
        if (fetcher == null) {
            return; // the server did not come up: @BeforeClass failed, and said why
        }
        if (fetchError != null) {
            throw new AssertionError("taking IDs from ringflake serve failed", fetchError);
        }

        List<long[]> parts = new ArrayList<>();
        long total = 0;
        long servedWorker = -1;
        long servedCount = 0;
        synchronized (SERVED) {
            for (long[] ids : SERVED) {
                for (long id : ids) {
                    long w = (id >>> SEQ_BITS) & ((1L << WORKER_BITS) - 1);
                    if (servedWorker < 0) {
                        servedWorker = w;
                    }
                    assertEquals("a served ID of another worker id: " + id, servedWorker, w);
                }
                parts.add(ids);
                servedCount += ids.length;
            }
        }
        assertTrue("ringflake serve handed out " + servedCount + " IDs beside Baidu's tests", servedCount >= 100_000);
        total += servedCount;

        Set<Long> workers = new HashSet<>();
        workers.add(servedWorker);
        List<Recording> recordings = RecordingListener.recordings();
        List<Long> workerList = new ArrayList<>(List.of(servedWorker));
        long expected = 0;
        StringBuilder report = new StringBuilder("ringflake serve: worker " + servedWorker + ", " + servedCount + " IDs");
        for (Recording r : recordings) {
            long worker = ((DefaultUidGenerator) r.bean()).getWorkerId();
            boolean cached = r.testClass().equals(CachedUidGeneratorTest.class.getSimpleName());
            int seqBits = cached ? SEQ_BITS : DEFAULT_SEQ_BITS;
            long mask = (1L << (cached ? WORKER_BITS : DEFAULT_WORKER_BITS)) - 1;
            long[] ids = r.ids();
            // Baidu's CachedUidGeneratorTest takes 7 M IDs twice, DefaultUidGeneratorTest 100,000 twice.
            expected += cached ? 14_000_000 : 200_000;
            assertTrue(r.testClass() + ": parseUID names worker " + worker,
                    r.parseUID(ids[0]).contains("\"workerId\":\"" + worker + "\""));
            for (long id : ids) {
                if (((id >>> seqBits) & mask) != worker) {
                    fail(r.testClass() + ": ID " + id + " carries another worker id than " + worker);
                }
            }
            workerList.add(worker);
            workers.add(worker);
            parts.add(ids);
            total += ids.length;
            report.append("; ").append(r.testClass()).append(": worker ").append(worker).append(", ").append(ids.length)
                    .append(" IDs");
        }

        // The three worker ids are rows of WORKER_NODE (Baidu's rows and ringflake's, one table).
        Set<Long> rows = new HashSet<>();
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT ID FROM WORKER_NODE")) {
            while (rs.next()) {
                rows.add(rs.getLong(1));
            }
        }
        assertTrue("worker ids " + workers + " are rows of WORKER_NODE " + rows, rows.containsAll(workers));

        long[] all = new long[Math.toIntExact(total)];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            if (all[i - 1] == all[i]) {
                fail("ID " + all[i] + " handed out twice (" + report + ")");
            }
        }
        assertEquals("distinct worker ids (" + report + ")", workerList.size(), workers.size());
        assertEquals("one generator bean per Baidu test class (" + report + ")", 2, recordings.size());
        assertEquals("IDs Baidu's tests took (" + report + ")", expected, total - servedCount);
        System.out.println(report + "; " + all.length + " IDs, none twice");
    }
}
