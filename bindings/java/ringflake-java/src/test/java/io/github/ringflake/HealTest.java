package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A generator whose WORKER_NODE row is taken over (as another node would, its lease lost for
 * good) heals onto a new row by itself: {@code workerId()}, {@code stats().workerId()} and the
 * process guard follow the new worker id (a second generator of the new id is refused, the old
 * id is free again), and once the heal is seen (here by {@code stats()}) no thread hands out an ID
 * of the old worker id, though their per-thread buffers held some.
 */
class HealTest {
    @Test
    void theGuardAndTheWorkerIdFollowAHeal(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("ringflake.db");
        UidLayout layout = UidLayout.preset("default");
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().sqlite(db.toString())
                .leaseWindow(Duration.ofSeconds(1)).stateFile(dir.resolve("ringflake.state").toString())
                .shutdownHook(false).build()) {
            assertEquals(1, g.workerId());
            // Two threads take IDs all along, so their buffers hold IDs of worker id 1 when the
            // heal comes; each notes whether the heal had been seen before it took an ID.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean seen = new AtomicBoolean();
            AtomicLong afterSeen = new AtomicLong();
            List<String> wrong = new CopyOnWriteArrayList<>();
            List<Thread> takers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Thread taker = new Thread(() -> {
                    while (!stop.get()) {
                        boolean after = seen.get();
                        try {
                            long id = g.getUID();
                            if (after) {
                                afterSeen.incrementAndGet();
                                if (layout.workerId(id) != 2) {
                                    wrong.add(id + " of worker id " + layout.workerId(id));
                                }
                            }
                        } catch (RingflakeException e) {
                            // unavailable between the loss and the heal
                        }
                        LockSupport.parkNanos(200_000);
                    }
                }, "taker-" + t);
                taker.start();
                takers.add(taker);
            }
            long last = g.getUID();
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement st = c.createStatement()) {
                assertEquals(1, st.executeUpdate("UPDATE WORKER_NODE SET PORT = '1700000000000-99999',"
                        + " LEASE_UNTIL = LEASE_UNTIL + 1000 WHERE ID = 1"));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (g.stats().workerId() == 1) {
                assertTrue(System.nanoTime() < deadline, "not healed: " + g.stats());
                try {
                    long id = g.getUID();
                    assertTrue(id > last, "IDs went down");
                    last = id;
                } catch (RingflakeException e) {
                    // unavailable between the loss and the heal
                }
                Thread.sleep(5);
            }
            // stats() saw worker id 2: from here on no thread hands out an ID of worker id 1,
            // though this thread's and the takers' buffers may still hold some (fresh for 0.75 s).
            seen.set(true);
            for (int i = 0; i < 10_000; i++) {
                long id = g.getUID();
                assertTrue(id > last, "IDs went down");
                last = id;
                assertEquals(2, layout.workerId(id), "an ID of the old worker id after the heal was seen");
            }
            Thread.sleep(1000);
            stop.set(true);
            for (Thread taker : takers) {
                taker.join();
            }
            assertTrue(afterSeen.get() > 100, "the takers took " + afterSeen.get() + " IDs after the heal");
            assertEquals(List.of(), wrong, "IDs of the old worker id after the heal was seen");
            assertEquals(2, g.stats().workerId());
            assertEquals(2, g.workerId());
            // The process guard moved: the new id is held, the old one free.
            RingflakeException e = assertThrows(RingflakeException.class,
                    () -> RingflakeUidGenerator.builder().workerId(2).shutdownHook(false).build());
            assertEquals("WorkerAssignment", e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("worker id 2 is in use"), e.getMessage());
            RingflakeUidGenerator.builder().workerId(1).shutdownHook(false).build().close();
        }
    }
}
