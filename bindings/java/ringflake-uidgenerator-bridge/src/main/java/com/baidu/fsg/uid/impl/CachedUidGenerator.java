package com.baidu.fsg.uid.impl;

import com.baidu.fsg.uid.exception.UidGenerateException;
import io.github.ringflake.RingflakeUidGenerator;

/**
 * Baidu UidGenerator's {@code CachedUidGenerator}, with its ring's bean properties
 * ({@code boostPower}, default 3; {@code paddingFactor}, default 50 percent;
 * {@code scheduleInterval}) on top of {@link DefaultUidGenerator}'s, backed by ringflake's native
 * ring, which is Baidu's design with its reported defects fixed (no negative IDs after the time
 * bits run out, no drift of the embedded second, no dropped batches, no exception on an empty
 * ring, no race in take).
 *
 * <p>{@code scheduleInterval} is accepted and has no effect: ringflake's filler pads when the
 * ring runs low and keeps IDs within a bounded lead of the clock, so no periodic padding is needed.
 */
public class CachedUidGenerator extends DefaultUidGenerator {
    private int boostPower = 3;
    private int paddingFactor = 50;
    private Long scheduleInterval;

    /** A generator with Baidu's defaults. */
    public CachedUidGenerator() {}

    @Override
    protected void configure(RingflakeUidGenerator.Builder b) {
        b.boostPower(boostPower).paddingFactor(paddingFactor);
    }

    /**
     * The ring holds {@code 2^seqBits << boostPower} IDs.
     *
     * @param boostPower 0 or more (Baidu's default 3)
     */
    public void setBoostPower(int boostPower) {
        if (boostPower < 0) {
            throw new UidGenerateException("boostPower " + boostPower + ": must be 0 or more");
        }
        this.boostPower = boostPower;
    }

    /**
     * Pad when fewer than this percentage of the ring's IDs are left.
     *
     * @param paddingFactor 1 to 99 (Baidu's default 50)
     */
    public void setPaddingFactor(int paddingFactor) {
        if (paddingFactor <= 0 || paddingFactor >= 100) {
            throw new UidGenerateException("paddingFactor " + paddingFactor + ": must be between 1 and 99");
        }
        this.paddingFactor = paddingFactor;
    }

    /**
     * Baidu's periodic padding interval, in seconds: accepted, not needed (see the class doc).
     *
     * @param scheduleInterval seconds
     */
    public void setScheduleInterval(long scheduleInterval) {
        this.scheduleInterval = scheduleInterval;
    }

    /** @return the scheduleInterval as set, or null */
    public Long getScheduleInterval() {
        return scheduleInterval;
    }
}
