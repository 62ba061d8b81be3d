package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a JVM taking IDs, and a restart with the same fixed worker id: thanks to the state
 * file no ID repeats, and every run's IDs sort above the previous run's. The layout has 9
 * sequence bits (512 IDs a second), so each run borrows seconds up to the lead cap (10 s) ahead
 * of the clock: a restart that started at the clock would repeat them.
 */
class CrashRestartTest {
    @TempDir
    Path dir;

    private static final UidLayout LAYOUT = UidLayout.seconds(31, 23, 9, 1_735_689_600L);

    private Process start(Path state, Path out, String... more) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = TestSupport.jar() + java.io.File.pathSeparator + TestSupport.testClasses();
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Dringflake.child.bits=31,23,9", "-cp", cp,
                "io.github.ringflake.CrashChild",
                state == null ? "-" : state.toString(), "41", out.toString()));
        cmd.addAll(List.of(more));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    private static void awaitReady(Process p) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()));
        String line = r.readLine();
        assertEquals("ready", line, "the child did not start");
    }

    private static long[] read(Path out) throws IOException {
        long size = Files.size(out);
        long[] ids = new long[(int) (size / 8)];
        try (DataInputStream in = new DataInputStream(Files.newInputStream(out))) {
            for (int i = 0; i < ids.length; i++) {
                ids[i] = in.readLong();
            }
        }
        return ids;
    }

    @Test
    void killedAndRestartedNeverRepeats() throws Exception {
        Path state = dir.resolve("ringflake.state");
        long previousMax = 0;
        long total = 0;
        long[] all = new long[0];
        for (int run = 0; run < 4; run++) {
            Path out = dir.resolve("run-" + run + ".ids");
            Process p = start(state, out);
            awaitReady(p);
            // Let it run past borrowing: a few hundred thousand IDs, then SIGKILL at once.
            Thread.sleep(300 + 200L * run);
            p.destroyForcibly(); // SIGKILL on Linux
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, p.exitValue(), "killed by SIGKILL");
            long[] ids = read(out);
            assertTrue(ids.length >= 500, "run " + run + " took " + ids.length);
            // It borrowed: its last ID's second is ahead of the clock.
            long ahead = LAYOUT.unixMillis(ids[ids.length - 1]) / 1000 - System.currentTimeMillis() / 1000;
            assertTrue(ahead >= 3, "run " + run + " ran only " + ahead + " s ahead");
            for (int i = 1; i < ids.length; i++) {
                assertTrue(ids[i] > ids[i - 1], "run " + run + " not increasing at " + i);
            }
            assertTrue(ids[0] > previousMax, "run " + run + " started at " + ids[0]
                    + ", at or below the last run's " + previousMax);
            previousMax = ids[ids.length - 1];
            total += ids.length;
            long[] merged = Arrays.copyOf(all, all.length + ids.length);
            System.arraycopy(ids, 0, merged, all.length, ids.length);
            all = merged;
        }
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            assertTrue(all[i] != all[i - 1], "duplicate " + all[i]);
        }
        assertEquals(total, all.length);
    }
}
