package io.github.ringflake.benchmarks;

import cn.hutool.core.lang.Snowflake;
import io.github.ringflake.RingflakeUidGenerator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import me.ahoo.cosid.IdGenerator;
import me.ahoo.cosid.segment.IdSegmentDistributor;
import me.ahoo.cosid.segment.SegmentChainId;
import me.ahoo.cosid.snowflake.MillisecondSnowflakeId;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * IDs per second from ringflake's Java library beside {@code AtomicLong.incrementAndGet()} (the
 * floor) and the peers from Maven Central, in one run: CosId's {@code MillisecondSnowflakeId} and
 * {@code SegmentChainId} (over its in-memory {@code IdSegmentDistributor.Atomic}),
 * Hutool's {@code Snowflake}. Names: {@code <generator>_<threads>}; {@code getUIDs1024} counts
 * batches of 1,024 (multiply by 1,024 for IDs).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class IdBenchmark {
    /** One generator of each kind, shared by the benchmark's threads. */
    @State(Scope.Benchmark)
    public static class Generators {
        RingflakeUidGenerator ringflake;
        final AtomicLong atomic = new AtomicLong();
        IdGenerator cosidSnowflake;
        IdGenerator cosidSegmentChain;
        Snowflake hutool;

        /** Starts them. */
        @Setup(Level.Trial)
        public void setUp() {
            // No lead cap, as the Rust take benches: at the default 10 s cap a flat-out consumer
            // would spend the run waiting for the clock (4 M IDs a second on the default layout).
            ringflake = RingflakeUidGenerator.builder().workerId(1).unboundedLead().shutdownHook(false).build();
            cosidSnowflake = new MillisecondSnowflakeId(2);
            cosidSegmentChain = new SegmentChainId(new IdSegmentDistributor.Atomic());
            hutool = new Snowflake(3, 1);
        }

        /** Closes ringflake's. */
        @TearDown(Level.Trial)
        public void tearDown() {
            ringflake.close();
        }
    }

    /** A thread's batch buffer. */
    @State(Scope.Thread)
    public static class Batch {
        final long[] out = new long[1024];
    }

    /** @return an ID */
    @Benchmark
    @Threads(1)
    public long ringflake_getUID_1(Generators g) {
        return g.ringflake.getUID();
    }

    /** @return an ID */
    @Benchmark
    @Threads(2)
    public long ringflake_getUID_2(Generators g) {
        return g.ringflake.getUID();
    }

    /** @return the batch's last ID */
    @Benchmark
    @Threads(1)
    public long ringflake_getUIDs1024_1(Generators g, Batch b) {
        g.ringflake.getUIDs(b.out);
        return b.out[1023];
    }

    /** @return a number */
    @Benchmark
    @Threads(1)
    public long atomicLong_1(Generators g) {
        return g.atomic.incrementAndGet();
    }

    /** @return a number */
    @Benchmark
    @Threads(2)
    public long atomicLong_2(Generators g) {
        return g.atomic.incrementAndGet();
    }

    /** @return an ID */
    @Benchmark
    @Threads(1)
    public long cosidSegmentChain_1(Generators g) {
        return g.cosidSegmentChain.generate();
    }

    /** @return an ID */
    @Benchmark
    @Threads(2)
    public long cosidSegmentChain_2(Generators g) {
        return g.cosidSegmentChain.generate();
    }

    /** @return an ID */
    @Benchmark
    @Threads(1)
    public long cosidSnowflake_1(Generators g) {
        return g.cosidSnowflake.generate();
    }

    /** @return an ID */
    @Benchmark
    @Threads(1)
    public long hutoolSnowflake_1(Generators g) {
        return g.hutool.nextId();
    }
}
