package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * close() and the shutdown hook give the worker id's lease back. The layout has one worker bit,
 * so a SQLite table holds a single worker id (1): the next generator can only start by
 * recycling it, which it does once the released lease is past (a second or two), where a lease
 * still held (a kill -9) would keep it waiting for the lease window.
 */
class ShutdownHookTest {
    @TempDir
    Path dir;

    private static RingflakeUidGenerator.Builder oneWorkerId(Path db) {
        return RingflakeUidGenerator.builder().layout(40, 1, 22).sqlite(db).shutdownHook(false);
    }

    /** Builds on {@code db} within 10 s (a lease still held would make it wait 30 s and fail). */
    private static long workerIdWithin10s(Path db) throws Exception {
        CompletableFuture<Long> f = CompletableFuture.supplyAsync(() -> {
            try (RingflakeUidGenerator g = oneWorkerId(db).build()) {
                return g.workerId();
            }
        });
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void closeGivesTheWorkerIdBack() throws Exception {
        Path db = dir.resolve("close.db");
        try (RingflakeUidGenerator g = oneWorkerId(db).build()) {
            assertEquals(1, g.workerId());
            g.getUID();
        }
        assertEquals(1, workerIdWithin10s(db));
    }

    @Test
    void theShutdownHookGivesTheWorkerIdBack() throws Exception {
        Path db = dir.resolve("hook.db");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = TestSupport.jar() + java.io.File.pathSeparator + TestSupport.testClasses();
        Process p = new ProcessBuilder(javaBin, "-Dringflake.child.bits=40,1,22", "-cp", cp,
                "io.github.ringflake.CrashChild", "-", "sqlite:" + db, dir.resolve("ids").toString())
                .redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()));
        assertEquals("ready", r.readLine(), "the child did not start");
        p.destroy(); // SIGTERM: the JVM runs its shutdown hooks
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(143, p.exitValue());
        assertEquals(1, workerIdWithin10s(db));
    }
}
