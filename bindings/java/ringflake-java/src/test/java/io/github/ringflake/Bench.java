package io.github.ringflake;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The speed harness (JMH is not installable here): every scenario in one JVM run, warmed up,
 * then measured in several rounds that alternate between the scenarios, so that the floor
 * ({@code AtomicLong.incrementAndGet}) and ringflake see the same machine state; reported as
 * medians and as ratios to the floor. Run: {@code bash bindings/java/build.sh --release --bench}.
 *
 * <p>Each measurement runs the scenario on its threads for a fixed time, counting calls, and
 * folds every value into a sum printed at the end, so the JIT cannot drop the calls.
 */
public final class Bench {
    private static final long WARMUP_MILLIS = 3_000;
    private static final long ROUND_MILLIS = 1_000;
    private static final int ROUNDS = 7;
    private static volatile long sink;

    private Bench() {}

    interface Scenario {
        /** One thread's loop: calls until {@code stop} says so; returns the IDs it took. */
        long run(Stop stop);
    }

    static final class Stop {
        volatile boolean now;
    }

    /** IDs per second of {@code threads} threads running {@code s} for ROUND_MILLIS. */
    static double measure(Scenario s, int threads, long millis) throws Exception {
        Stop stop = new Stop();
        CyclicBarrier barrier = new CyclicBarrier(threads + 1);
        long[] counts = new long[threads];
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int i = t;
            Thread th = new Thread(() -> {
                try {
                    barrier.await();
                    counts[i] = s.run(stop);
                    barrier.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            th.start();
            ts.add(th);
        }
        barrier.await();
        long t0 = System.nanoTime();
        Thread.sleep(millis);
        stop.now = true;
        barrier.await();
        long t1 = System.nanoTime();
        for (Thread th : ts) {
            th.join();
        }
        return Arrays.stream(counts).sum() / ((t1 - t0) / 1e9);
    }

    /** Calls {@code f} in blocks of 256 between checks of {@code stop}. */
    static long loop(LongSupplier f, Stop stop) {
        long n = 0;
        long acc = 0;
        while (!stop.now) {
            for (int i = 0; i < 256; i++) {
                acc += f.getAsLong();
            }
            n += 256;
        }
        sink += acc;
        return n;
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    public static void main(String[] args) throws Exception {
        AtomicLong counter = new AtomicLong();
        // Unbounded borrowing, as the Rust take benches: at the default 10 s cap a flat-out
        // consumer would spend the run waiting for the clock (2^22 IDs a second).
        try (RingflakeUidGenerator g = RingflakeUidGenerator.builder().workerId(1).unboundedLead()
                .shutdownHook(false).build()) {
            String[] names = {
                "floor/AtomicLong.incrementAndGet 1-thread",
                "getUID 1-thread",
                "getUIDs(long[1024]) 1-thread",
                "floor/AtomicLong.incrementAndGet 2-threads (shared)",
                "getUID 2-threads",
            };
            int[] threads = {1, 1, 1, 2, 2};
            Scenario atomic = stop -> loop(counter::incrementAndGet, stop);
            Scenario uid = stop -> loop(g::getUID, stop);
            Scenario uids = stop -> {
                long n = 0;
                long acc = 0;
                long[] b = new long[1024];
                while (!stop.now) {
                    g.getUIDs(b);
                    acc += b[1023];
                    n += 1024;
                }
                sink += acc;
                return n;
            };
            Scenario[] scenarios = {atomic, uid, uids, atomic, uid};
            System.out.printf("warm-up: %d ms per scenario%n", WARMUP_MILLIS);
            for (int i = 0; i < scenarios.length; i++) {
                measure(scenarios[i], threads[i], WARMUP_MILLIS);
            }
            double[][] results = new double[scenarios.length][ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                for (int i = 0; i < scenarios.length; i++) {
                    results[i][r] = measure(scenarios[i], threads[i], ROUND_MILLIS);
                }
            }
            double[] ratio1 = new double[ROUNDS];
            double[] ratio2 = new double[ROUNDS];
            double[] scale = new double[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                ratio1[r] = results[1][r] / results[0][r];
                ratio2[r] = results[4][r] / results[3][r];
                scale[r] = results[4][r] / results[1][r];
            }
            System.out.printf(Locale.ROOT, "%d rounds of %d ms, medians (M IDs/s), Java %s, %d CPUs%n", ROUNDS,
                    ROUND_MILLIS, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
            for (int i = 0; i < scenarios.length; i++) {
                double[] m = results[i].clone();
                Arrays.sort(m);
                System.out.printf(Locale.ROOT, "  %-52s %8.1f  (min %.1f, max %.1f)%n", names[i], median(results[i]) / 1e6,
                        m[0] / 1e6, m[m.length - 1] / 1e6);
            }
            System.out.printf(Locale.ROOT, "ratio getUID / AtomicLong, 1 thread:  median %.2f (rounds %s)%n", median(ratio1),
                    fmt(ratio1));
            System.out.printf(Locale.ROOT, "ratio getUID / AtomicLong, 2 threads: median %.2f (rounds %s)%n", median(ratio2),
                    fmt(ratio2));
            System.out.printf(Locale.ROOT, "scaling getUID 2 threads / 1 thread:  median %.2f%n", median(scale));
            System.out.printf(Locale.ROOT, "getUID vs Baidu CachedUidGenerator's 5.6-7.0 M/s (REFERENCE.md): %.0fx-%.0fx%n",
                    median(results[1]) / 7.0e6, median(results[1]) / 5.6e6);
            System.out.printf(Locale.ROOT, "bytes allocated per getUID (1 thread, 10 M IDs): %.4f%n", allocatedPerId(g));
        }
        System.out.println("(sink " + sink + ")");
    }

    private static String fmt(double[] v) {
        StringBuilder b = new StringBuilder();
        for (double x : v) {
            b.append(String.format(Locale.ROOT, "%.2f ", x));
        }
        return b.toString().trim();
    }

    /** Bytes this thread allocates per getUID, measured by the JVM's per-thread counter. */
    static double allocatedPerId(RingflakeUidGenerator g) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long acc = 0;
        for (int i = 0; i < 1_000_000; i++) {
            acc += g.getUID();
        }
        long before = mx.getThreadAllocatedBytes(id);
        int n = 10_000_000;
        for (int i = 0; i < n; i++) {
            acc += g.getUID();
        }
        long after = mx.getThreadAllocatedBytes(id);
        sink += acc;
        return (after - before) / (double) n;
    }
}
