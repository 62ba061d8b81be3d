package io.github.ringflake;

/**
 * A snapshot of a generator's ring and lease, as plain Java values, to bind to Micrometer
 * gauges or anything else ({@link RingflakeUidGenerator#stats()}).
 *
 * @param capacity the ring's size, in IDs
 * @param available IDs in the ring ready to hand out
 * @param issued IDs handed out by the ring (to the Java side's per-thread buffers too)
 * @param discarded IDs never handed out (stale, or the rest of a block given up)
 * @param expired IDs discarded because they lagged the clock by more than max lag
 * @param paddings the filler's rounds
 * @param takeWaits takes that found the ring empty and waited
 * @param leadSeconds how far the newest ID written runs ahead of the clock (borrowed seconds)
 * @param lagSeconds how far the next ID to hand out lags the clock
 * @param leadMillis {@code leadSeconds} in milliseconds
 * @param lagMillis {@code lagSeconds} in milliseconds
 * @param remainingSeconds seconds left before the layout's time bits run out
 * @param workerId the worker id
 * @param fillerUp whether the background filler runs
 * @param leaseUntil the unix second the worker id's lease runs to, -1 without a lease
 * @param leaseLost whether the lease was lost
 * @param clockSecond the clock's unix second as the generator last read it
 * @param maxLagSeconds the max lag setting
 * @param maxLeadSeconds the lead cap, -1 when unbounded
 * @param stateFileFailing whether the state file cannot be written
 * @param health the state's name: {@code serving}, {@code idle}, {@code held at the lead cap},
 *     {@code lease at risk} or {@code unavailable}
 */
public record RingflakeStats(
        long capacity,
        long available,
        long issued,
        long discarded,
        long expired,
        long paddings,
        long takeWaits,
        long leadSeconds,
        long lagSeconds,
        long leadMillis,
        long lagMillis,
        long remainingSeconds,
        long workerId,
        boolean fillerUp,
        long leaseUntil,
        boolean leaseLost,
        long clockSecond,
        long maxLagSeconds,
        long maxLeadSeconds,
        boolean stateFileFailing,
        String health) {

    /** Reads Native.stats's values, in the order of STATS_FIELDS in native/src/lib.rs. */
    static RingflakeStats of(long[] v, String health) {
        if (v.length != 20) {
            throw new RingflakeException("Jni", "stats: expected 20 values, got " + v.length);
        }
        return new RingflakeStats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
                v[10], v[11], v[12], v[13] != 0, v[14], v[15] != 0, v[16], v[17], v[18],
                v[19] != 0, health);
    }
}
