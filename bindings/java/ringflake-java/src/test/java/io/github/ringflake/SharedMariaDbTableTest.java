package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One MariaDB {@code WORKER_NODE} table shared, under restarts, by JVMs embedding ringflake,
 * {@code ringflake serve} nodes and nodes running Baidu UidGenerator's own table SQL (its
 * {@code WorkerNodeDAO} INSERT and {@code DefaultUidGenerator}'s bit packing): no two live nodes
 * share a worker id, no ringflake node ever takes a Baidu row's id, no ID repeats.
 *
 * <p>Needs the MariaDB server CI starts ({@code RINGFLAKE_MYSQL_URL}, the crate's URL form with
 * TLS), the {@code mariadb} client and the {@code ringflake} binary; skipped without them unless
 * {@code RINGFLAKE_JAVA_SERVER_TESTS=1} (as .ci/run sets), which makes their absence a failure.
 */
class SharedMariaDbTableTest {
    @TempDir
    Path dir;

    private static final int ROUNDS = 3;

    private String url;
    private URI uri;
    private String user;
    private String password;
    private String ca;

    private void requireServers() {
        url = System.getenv("RINGFLAKE_MYSQL_URL");
        Path bin = Path.of(System.getProperty("ringflake.test.bin", "ringflake"));
        boolean required = "1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"));
        String missing = url == null ? "RINGFLAKE_MYSQL_URL is not set"
                : !Files.isExecutable(bin) ? "no ringflake binary at " + bin + " (cargo build --bin ringflake)" : null;
        if (missing != null) {
            if (required) {
                fail(missing);
            }
            Assumptions.abort(missing);
        }
        uri = URI.create(url);
        String[] info = uri.getRawUserInfo().split(":", 2);
        user = URLDecoder.decode(info[0], StandardCharsets.UTF_8);
        password = URLDecoder.decode(info[1], StandardCharsets.UTF_8);
        for (String kv : uri.getRawQuery().split("&")) {
            if (kv.startsWith("ssl-ca=")) {
                ca = URLDecoder.decode(kv.substring(7), StandardCharsets.UTF_8);
            }
        }
        assertTrue(ca != null, "RINGFLAKE_MYSQL_URL names no ssl-ca");
    }

    /** Runs SQL with the mariadb client over TLS; returns its output (tab-separated, no headers). */
    private String sql(String statements) throws Exception {
        List<String> cmd = List.of("mariadb", "--no-defaults", "-h", uri.getHost(), "-P", String.valueOf(uri.getPort()),
                "--ssl", "--ssl-ca=" + ca, "--ssl-verify-server-cert", "-u", user, "-p" + password,
                "-N", "-B", uri.getPath().substring(1), "-e", statements);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "mariadb client hangs");
        assertEquals(0, p.exitValue(), "mariadb: " + out);
        return out.trim();
    }

    /** The JDBC URL a Spring data source of the Java fleet would have. */
    private String jdbcUrl() {
        return "jdbc:mariadb://" + uri.getHost() + ":" + uri.getPort() + uri.getPath() + "?user="
                + JdbcUrls.encode(user, false) + "&password=" + JdbcUrls.encode(password, false)
                + "&sslMode=verify-full&serverSslCert=" + ca + "&useUnicode=true";
    }

    /** A Baidu node: its WorkerNodeDAO's INSERT, then DefaultUidGenerator's packing of IDs. */
    private long[] baiduNode(UidLayout layout, int count, Set<Long> baiduIds) throws Exception {
        String id = sql("INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED)"
                + " VALUES ('10.0.0.9', '" + System.nanoTime() + "-42', 2, CURDATE(), NOW(), NOW());"
                + " SELECT LAST_INSERT_ID();");
        long worker = Long.parseLong(id);
        baiduIds.add(worker);
        int workerShift = layout.seqBits();
        int timeShift = layout.workerBits() + layout.seqBits();
        long maxSeq = (1L << layout.seqBits()) - 1;
        long[] ids = new long[count];
        long lastSecond = -1;
        long seq = 0;
        for (int i = 0; i < count; i++) {
            long second = System.currentTimeMillis() / 1000;
            if (second == lastSecond) {
                seq = (seq + 1) & maxSeq;
                if (seq == 0) {
                    while (second <= lastSecond) {
                        second = System.currentTimeMillis() / 1000;
                    }
                }
            } else {
                seq = 0;
            }
            lastSecond = second;
            long delta = second - layout.epochMillis() / 1000;
            ids[i] = delta << timeShift | worker << workerShift | seq;
        }
        return ids;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private Process serve(int port) throws IOException {
        Path bin = Path.of(System.getProperty("ringflake.test.bin"));
        return new ProcessBuilder(bin.toString(), "serve", "--listen", "127.0.0.1:" + port, "--mysql", url,
                "--no-state-file").redirectErrorStream(true).redirectOutput(dir.resolve("serve-" + port + ".log").toFile())
                .start();
    }

    private static long[] fetch(HttpClient http, int port, int count) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ids?count=" + count))
                .timeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        String body = r.body().replaceAll("[\\[\\]\" ]", "");
        return Arrays.stream(body.split(",")).mapToLong(Long::parseLong).toArray();
    }

    private static void awaitUp(HttpClient http, int port, Process p) throws Exception {
        for (int i = 0; i < 300; i++) {
            if (!p.isAlive()) {
                fail("serve on port " + port + " exited: " + p.exitValue());
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
        fail("serve on port " + port + " did not come up in 30 s");
    }

    private Process javaNode(Path out) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = TestSupport.jar() + java.io.File.pathSeparator + TestSupport.testClasses();
        return new ProcessBuilder(javaBin, "-cp", cp, "io.github.ringflake.CrashChild", "-", jdbcUrl(), out.toString())
                .redirectErrorStream(true).start();
    }

    private static long[] read(Path out) throws IOException {
        long[] ids = new long[(int) (Files.size(out) / 8)];
        try (DataInputStream in = new DataInputStream(Files.newInputStream(out))) {
            for (int i = 0; i < ids.length; i++) {
                ids[i] = in.readLong();
            }
        }
        return ids;
    }

    /** The one worker id of a node's IDs (all its IDs carry it). */
    private static long workerOf(UidLayout layout, long[] ids, String node) {
        assertTrue(ids.length > 0, node + " handed out no ID");
        long w = layout.workerId(ids[0]);
        // The same field by shifts (a JNI call per ID would take minutes for millions of IDs).
        long mask = (1L << layout.workerBits()) - 1;
        assertEquals(w, (ids[0] >>> layout.seqBits()) & mask);
        for (long id : ids) {
            if (((id >>> layout.seqBits()) & mask) != w) {
                fail(node + ": IDs of two worker ids, " + w + " and " + layout.workerId(id));
            }
        }
        return w;
    }

    @Test
    void javaServeAndBaiduNodesShareOneTable() throws Exception {
        requireServers();
        sql("DROP TABLE IF EXISTS WORKER_NODE; "
                + Files.readString(TestSupport.repo().resolve("crates/ringflake/schema/mysql.sql")));
        UidLayout layout = UidLayout.preset("default");
        HttpClient http = HttpClient.newHttpClient();
        Set<Long> baiduIds = new HashSet<>();
        Set<Long> ringflakeIds = new HashSet<>();
        List<long[]> all = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            Map<String, Long> live = new HashMap<>();
            // Two JVMs embedding ringflake, two serve nodes, started together.
            Path[] outs = {dir.resolve("java-" + round + "-a.ids"), dir.resolve("java-" + round + "-b.ids")};
            Process[] jvms = {javaNode(outs[0]), javaNode(outs[1])};
            int[] ports = {freePort(), freePort()};
            Process[] serves = {serve(ports[0]), serve(ports[1])};
            // A Baidu node joins meanwhile.
            long[] baidu = baiduNode(layout, 20_000, baiduIds);
            all.add(baidu);
            live.put("baidu-" + round, workerOf(layout, baidu, "baidu node"));
            for (Process jvm : jvms) {
                BufferedReader r = new BufferedReader(new InputStreamReader(jvm.getInputStream()));
                String line = r.readLine();
                assertEquals("ready", line, "a Java node did not start");
            }
            for (int i = 0; i < 2; i++) {
                awaitUp(http, ports[i], serves[i]);
                long[] ids = fetch(http, ports[i], 50_000);
                long[] more = fetch(http, ports[i], 50_000);
                assertTrue(more[0] > ids[ids.length - 1], "serve's IDs not increasing");
                long[] both = Arrays.copyOf(ids, ids.length + more.length);
                System.arraycopy(more, 0, both, ids.length, more.length);
                all.add(both);
                long w = workerOf(layout, both, "serve " + i);
                live.put("serve-" + round + "-" + i, w);
                ringflakeIds.add(w);
            }
            Thread.sleep(200);
            // Round 0 and 2: kill -9 everything; round 1: the JVMs and one serve end cleanly.
            for (int i = 0; i < 2; i++) {
                boolean kill = round != 1 || i == 0;
                if (kill) {
                    jvms[i].destroyForcibly();
                    serves[i].destroyForcibly();
                } else {
                    jvms[i].destroy();
                    serves[i].destroy();
                }
                assertTrue(jvms[i].waitFor(30, TimeUnit.SECONDS));
                assertTrue(serves[i].waitFor(30, TimeUnit.SECONDS));
            }
            for (int i = 0; i < 2; i++) {
                long[] ids = read(outs[i]);
                all.add(ids);
                long w = workerOf(layout, ids, "java node " + i);
                live.put("java-" + round + "-" + i, w);
                ringflakeIds.add(w);
            }
            assertEquals(live.size(), new HashSet<>(live.values()).size(),
                    "round " + round + ": live nodes shared a worker id: " + live);
        }
        Set<Long> overlap = new HashSet<>(baiduIds);
        overlap.retainAll(ringflakeIds);
        assertTrue(overlap.isEmpty(), "ringflake nodes took Baidu rows' worker ids " + overlap);
        long[] merged = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        for (int i = 1; i < merged.length; i++) {
            assertFalse(merged[i] == merged[i - 1], "duplicate ID " + merged[i]);
        }
        assertTrue(merged.length > ROUNDS * 120_000, "only " + merged.length + " IDs");
    }

    /** A wrong password or database: an exception naming the cause, and no row claimed. */
    @Test
    void aWrongUrlClaimsNothing() throws Exception {
        requireServers();
        sql(Files.readString(TestSupport.repo().resolve("crates/ringflake/schema/mysql.sql")));
        String before = sql("SELECT COUNT(*), COALESCE(MAX(ID), 0) FROM WORKER_NODE");
        String wrong = "jdbc:mariadb://" + uri.getHost() + ":" + uri.getPort() + uri.getPath() + "?user="
                + JdbcUrls.encode(user, false) + "&password=not-" + JdbcUrls.encode(password, false)
                + "&sslMode=verify-full&serverSslCert=" + ca;
        RingflakeException e = org.junit.jupiter.api.Assertions.assertThrows(RingflakeException.class,
                () -> RingflakeUidGenerator.builder().jdbcUrl(wrong).shutdownHook(false).build());
        assertEquals("Database", e.kind(), e.getMessage());
        assertFalse(e.getMessage().contains(password), "the password is shown: " + e.getMessage());
        String noDb = "jdbc:mariadb://" + uri.getHost() + ":" + uri.getPort() + "/no_such_db?user="
                + JdbcUrls.encode(user, false) + "&password=" + JdbcUrls.encode(password, false)
                + "&sslMode=verify-full&serverSslCert=" + ca;
        e = org.junit.jupiter.api.Assertions.assertThrows(RingflakeException.class,
                () -> RingflakeUidGenerator.builder().jdbcUrl(noDb).shutdownHook(false).build());
        assertEquals("Database", e.kind(), e.getMessage());
        assertEquals(before, sql("SELECT COUNT(*), COALESCE(MAX(ID), 0) FROM WORKER_NODE"), "a row was claimed");
    }
}
