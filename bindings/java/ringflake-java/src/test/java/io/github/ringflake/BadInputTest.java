package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input: a clear exception naming the value and the limit, and nothing claimed. */
class BadInputTest {
    @TempDir
    Path dir;

    private static RingflakeException fails(String kind, Runnable r) {
        RingflakeException e = assertThrows(RingflakeException.class, r::run);
        assertEquals(kind, e.kind(), e.getMessage());
        return e;
    }

    @Test
    void anExpiredLayoutClaimsNothing() {
        Path db = dir.resolve("ids.db");
        RingflakeException e = fails("TimeBitsExhausted",
                () -> RingflakeUidGenerator.builder().preset("uidgenerator").sqlite(db).shutdownHook(false).build());
        assertTrue(e.getMessage().contains("2024-11-20T13:24:15Z"), e.getMessage());
        // Refused before the source was asked: not even the database file was made.
        assertFalse(Files.exists(db), "the SQLite file was created");
        // The first generator on that file gets the table's first worker id.
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().sqlite(db).shutdownHook(false).build()) {
            assertEquals(1, g.workerId());
        }
    }

    @Test
    void aWorkerIdOutOfRange() {
        RingflakeException e = fails("WorkerIdOutOfRange",
                () -> RingflakeUidGenerator.builder().layout(31, 10, 22).workerId(1024).shutdownHook(false).build());
        assertTrue(e.getMessage().contains("1024") && e.getMessage().contains("1023"), e.getMessage());
        e = fails("InvalidConfig", () -> RingflakeUidGenerator.builder().workerId(-1).build());
        assertTrue(e.getMessage().contains("workerId = \"-1\""), e.getMessage());
    }

    @Test
    void wrongUrls() {
        RingflakeException e = fails("InvalidConfig",
                () -> RingflakeUidGenerator.builder().jdbcUrl("jdbc:oracle:thin:@db:1521:ids"));
        assertTrue(e.getMessage().contains("jdbc:oracle:thin:@db:1521:ids"), e.getMessage());
        e = fails("InvalidConfig",
                () -> RingflakeUidGenerator.builder().jdbcUrl("jdbc:mysql://db:3306/ids?password=s3cret"));
        assertTrue(e.getMessage().contains("names no user"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), "the password is shown: " + e.getMessage());
        // A port the crate's URL parser refuses: its error, before any connection.
        e = fails("Database", () -> RingflakeUidGenerator.builder()
                .jdbcUrl("jdbc:mysql://db:port/ids?user=app&password=s3cret").shutdownHook(false).build());
        assertFalse(e.getMessage().contains("s3cret"), "the password is shown: " + e.getMessage());
    }

    @Test
    void badLayoutsAndSettings() {
        fails("InvalidBitWidths", () -> RingflakeUidGenerator.builder().layout(30, 30, 30).workerId(1).build());
        long future = Instant.now().getEpochSecond() + 86_400 * 400L;
        fails("EpochInFuture", () -> RingflakeUidGenerator.builder().layout(31, 10, 22).epochSeconds(future).workerId(1).build());
        RingflakeException e = fails("InvalidConfig",
                () -> RingflakeUidGenerator.builder().workerId(1).sqlite(dir.resolve("x.db")).build());
        assertTrue(e.getMessage().contains("2 worker sources"), e.getMessage());
        e = fails("InvalidConfig", () -> RingflakeUidGenerator.builder().build());
        assertTrue(e.getMessage().contains("0 worker sources"), e.getMessage());
        fails("InvalidConfig", () -> RingflakeUidGenerator.builder().epochDate("20-05-2016"));
        fails("InvalidConfig", () -> RingflakeUidGenerator.builder().workerId(1).paddingFactor(101).build());
        fails("InvalidConfig", () -> RingflakeUidGenerator.builder().workerId(1).boostPower(40).build());
        fails("InvalidConfig", () -> RingflakeUidGenerator.builder().maxLead(java.time.Duration.ofMillis(-1),
                RingflakeUidGenerator.LeadPolicy.FAIL));
        // A state file that holds no state is refused, never overwritten.
        Path junk = dir.resolve("junk.state");
        assertTrue(junk.toFile().mkdir() || Files.isDirectory(junk));
        fails("StateFile", () -> RingflakeUidGenerator.builder().workerId(1).stateFile(junk).shutdownHook(false).build());
    }

    @Test
    void aClosedGeneratorRefuses() {
        RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(21).shutdownHook(false).build();
        g.getUID();
        g.close();
        g.close(); // idempotent
        assertTrue(g.isClosed());
        fails("Closed", g::getUID);
        fails("Closed", () -> g.getUIDs(new long[10]));
        fails("Closed", g::stats);
        assertThrows(IndexOutOfBoundsException.class, () -> RingflakeUidGenerator.builder().workerId(22)
                .shutdownHook(false).build().getUIDs(new long[8], 5, 10));
    }

    @Test
    void idsThisLayoutCannotHaveMade() {
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(23).shutdownHook(false).build()) {
            fails("NegativeId", () -> g.parseUID(-1));
        }
    }
}
