package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Uniqueness and order from many threads, every ID collected. */
class ConcurrencyTest {
    static final int THREADS = 8;
    static final int PER_THREAD = 250_000;

    @Test
    void manyThreadsGetUniqueIdsIncreasingPerThread() throws Exception {
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(11).shutdownHook(false).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<long[]>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    long[] ids = new long[PER_THREAD];
                    start.await();
                    int n = 0;
                    while (n < PER_THREAD) {
                        // Half the threads mix batches of several sizes into single takes.
                        if (thread % 2 == 1 && n % 1000 == 0) {
                            int len = Math.min(1 + (n / 1000) % 3000, PER_THREAD - n);
                            g.getUIDs(ids, n, len);
                            n += len;
                        } else {
                            ids[n++] = g.getUID();
                        }
                    }
                    return ids;
                }));
            }
            start.countDown();
            long[] all = new long[THREADS * PER_THREAD];
            int k = 0;
            for (Future<long[]> f : futures) {
                long[] ids = f.get();
                for (int i = 1; i < ids.length; i++) {
                    assertTrue(ids[i] > ids[i - 1], "not increasing at " + i + ": " + ids[i - 1] + ", " + ids[i]);
                }
                System.arraycopy(ids, 0, all, k, ids.length);
                k += ids.length;
            }
            pool.shutdown();
            Arrays.sort(all);
            for (int i = 1; i < all.length; i++) {
                assertTrue(all[i] != all[i - 1], "duplicate ID " + all[i]);
            }
            assertTrue(all[0] > 0, "IDs are positive");
            // Every ID carries this worker id.
            String parsed = g.parseUID(all[all.length / 2], ZoneOffset.UTC);
            assertTrue(parsed.contains("\"workerId\":\"11\""), parsed);
            RingflakeStats s = g.stats();
            assertEquals(11, s.workerId());
            assertTrue(s.issued() >= (long) THREADS * PER_THREAD, "issued " + s.issued());
        }
    }

    /** The per-ID path allocates nothing (the JVM's own per-thread allocation counter). */
    @Test
    void getUidAllocatesNothingPerId() {
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(13).shutdownHook(false).build()) {
            com.sun.management.ThreadMXBean mx =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long thread = Thread.currentThread().getId();
            long acc = 0;
            for (int i = 0; i < 200_000; i++) {
                acc += g.getUID();
            }
            int n = 2_000_000;
            long before = mx.getThreadAllocatedBytes(thread);
            for (int i = 0; i < n; i++) {
                acc += g.getUID();
            }
            long allocated = mx.getThreadAllocatedBytes(thread) - before;
            assertTrue(acc != 0);
            // Less than a byte per 100 IDs (the counter's own reads allocate nothing either).
            assertTrue(allocated < n / 100, allocated + " bytes allocated for " + n + " IDs");
        }
    }

    /** IDs that waited in a thread's buffer are dropped: an idle thread's next ID is recent. */
    @Test
    void anIdleThreadsBufferGoesStale() throws Exception {
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(12).shutdownHook(false).build()) {
            long first = g.getUID();
            g.getUID();
            Thread.sleep(1_200);
            long later = g.getUID();
            assertTrue(later > first);
            long second = Instant.now().getEpochSecond();
            long idSecond = g.layout().unixMillis(later) / 1000;
            // At most 0.75 s in the buffer plus the ring's 1 s max lag (and whole seconds).
            assertTrue(idSecond >= second - 2, "ID second " + idSecond + " lags " + second);
            assertTrue(idSecond <= second + 10, "ID second " + idSecond + " past the lead cap");
        }
    }
}
