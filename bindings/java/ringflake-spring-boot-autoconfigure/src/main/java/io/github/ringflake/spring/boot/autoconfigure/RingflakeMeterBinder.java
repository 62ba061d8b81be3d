package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeStats;
import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters named as the service's Prometheus series are: {@code ringflake.ring.capacity}
 * ({@code ringflake_ring_capacity}), {@code ringflake.ring.available}, {@code ringflake.ring.fill.ratio},
 * {@code ringflake.ids.issued} ({@code ringflake_ids_issued_total}), {@code ringflake.ids.discarded},
 * {@code ringflake.ids.expired}, {@code ringflake.paddings}, {@code ringflake.take.waits},
 * {@code ringflake.time.lead} ({@code ringflake_time_lead_seconds}), {@code ringflake.time.lag},
 * {@code ringflake.time.remaining}, {@code ringflake.worker.id}, {@code ringflake.filler.up},
 * {@code ringflake.lease.expiry.timestamp}.
 *
 * <p>Every meter reads the generator's stats when the registry asks (a scrape), through one
 * snapshot kept for a second: gauges and function counters, nothing on the per-ID path.
 */
public class RingflakeMeterBinder implements MeterBinder {
    private static final long SNAPSHOT_NANOS = 1_000_000_000L;

    private final RingflakeUidGenerator generator;
    private volatile RingflakeStats snapshot;
    private volatile long snapshotAt;

    /**
     * Meters of one generator.
     *
     * @param generator the generator
     */
    public RingflakeMeterBinder(RingflakeUidGenerator generator) {
        this.generator = generator;
    }

    /** The stats, read at most once a second (a scrape reads every meter at once). */
    RingflakeStats stats() {
        long now = System.nanoTime();
        RingflakeStats s = snapshot;
        if (s == null || now - snapshotAt > SNAPSHOT_NANOS) {
            if (generator.isClosed()) {
                return s;
            }
            s = generator.stats();
            snapshot = s;
            snapshotAt = now;
        }
        return s;
    }

    private double read(ToDoubleFunction<RingflakeStats> f) {
        RingflakeStats s = stats();
        return s == null ? Double.NaN : f.applyAsDouble(s);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "ringflake.ring.capacity", null, "The ring's size, in IDs", RingflakeStats::capacity);
        gauge(registry, "ringflake.ring.available", null, "IDs in the ring ready to hand out", RingflakeStats::available);
        gauge(registry, "ringflake.ring.fill.ratio", null, "The ring's fill, 0 to 1",
                s -> s.capacity() == 0 ? 0 : (double) s.available() / s.capacity());
        gauge(registry, "ringflake.time.lead", "seconds", "How far the newest ID runs ahead of the clock",
                s -> s.leadMillis() / 1000.0);
        gauge(registry, "ringflake.time.lag", "seconds", "How far the next ID lags the clock",
                s -> s.lagMillis() / 1000.0);
        gauge(registry, "ringflake.time.remaining", "seconds", "Seconds left before the time bits run out",
                RingflakeStats::remainingSeconds);
        gauge(registry, "ringflake.worker.id", null, "The worker id", RingflakeStats::workerId);
        gauge(registry, "ringflake.filler.up", null, "1 while the background filler runs",
                s -> s.fillerUp() ? 1 : 0);
        gauge(registry, "ringflake.lease.expiry.timestamp", "seconds",
                "The unix second the worker id's lease runs to (-1 without a lease)", RingflakeStats::leaseUntil);
        counter(registry, "ringflake.ids.issued", "IDs handed out by the ring", RingflakeStats::issued);
        counter(registry, "ringflake.ids.discarded", "IDs never handed out", RingflakeStats::discarded);
        counter(registry, "ringflake.ids.expired", "IDs discarded for lagging the clock", RingflakeStats::expired);
        counter(registry, "ringflake.paddings", "The filler's rounds", RingflakeStats::paddings);
        counter(registry, "ringflake.take.waits", "Takes that found the ring empty and waited", RingflakeStats::takeWaits);
    }

    private void gauge(MeterRegistry r, String name, String unit, String help, ToDoubleFunction<RingflakeStats> f) {
        Gauge.builder(name, this, b -> b.read(f)).description(help).baseUnit(unit).strongReference(true).register(r);
    }

    private void counter(MeterRegistry r, String name, String help, ToDoubleFunction<RingflakeStats> f) {
        FunctionCounter.builder(name, this, b -> b.read(f)).description(help).register(r);
    }
}
