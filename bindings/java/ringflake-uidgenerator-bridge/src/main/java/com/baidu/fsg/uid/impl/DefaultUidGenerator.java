package com.baidu.fsg.uid.impl;

import com.baidu.fsg.uid.UidGenerator;
import com.baidu.fsg.uid.exception.UidGenerateException;
import com.baidu.fsg.uid.worker.WorkerIdAssigner;
import io.github.ringflake.RingflakeException;
import io.github.ringflake.RingflakeUidGenerator;
import io.github.ringflake.UidLayout;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;

/**
 * Baidu UidGenerator's {@code DefaultUidGenerator}, with its bean properties ({@code timeBits},
 * {@code workerBits}, {@code seqBits}, {@code epochStr}, {@code workerIdAssigner}) and defaults
 * (28/22/13 from 2016-05-20 in UTC+8), backed by ringflake's native ring: IDs of the same layout,
 * the same {@code parseUID} text, without Baidu's lock or its cap of 2^seqBits IDs a second.
 *
 * <p>Baidu's 28/22/13 defaults ran out on 2024-11-20: this bridge refuses them at
 * {@link #afterPropertiesSet()} (before a worker id is taken) instead of handing out negative IDs;
 * set {@code timeBits}, {@code workerBits}, {@code seqBits} (Baidu's README: 31/23/9) or
 * {@code epochStr}. A worker id above the layout's maximum fails with Baidu's message
 * ("Worker id X exceeds the max Y").
 */
public class DefaultUidGenerator implements UidGenerator, InitializingBean, DisposableBean {
    /** Baidu's default epoch, 2016-05-20 00:00 in UTC+8. */
    static final long BAIDU_EPOCH_SECONDS = 1463673600L;

    /** The time field's width (Baidu's default 28). */
    protected int timeBits = 28;
    /** The worker id's width (Baidu's default 22). */
    protected int workerBits = 22;
    /** The sequence's width (Baidu's default 13). */
    protected int seqBits = 13;
    /** The epoch as set, {@code yyyy-MM-dd}. */
    protected String epochStr = "2016-05-20";
    /** The epoch in unix seconds. */
    protected long epochSeconds = BAIDU_EPOCH_SECONDS;
    /** Where the worker id comes from. */
    protected WorkerIdAssigner workerIdAssigner;
    /** The worker id, once started. */
    protected long workerId = -1;

    private volatile RingflakeUidGenerator generator;
    private UidLayout layout;

    /** A generator with Baidu's defaults; set the properties, then {@link #afterPropertiesSet()}. */
    public DefaultUidGenerator() {}

    /**
     * Checks the layout, takes a worker id and starts the native ring.
     *
     * @throws UidGenerateException naming the refused value and its limit
     */
    @Override
    public void afterPropertiesSet() {
        UidLayout l;
        try {
            l = UidLayout.seconds(timeBits, workerBits, seqBits, epochSeconds);
        } catch (RingflakeException e) {
            throw new UidGenerateException("refused layout timeBits=" + timeBits + ", workerBits=" + workerBits
                    + ", seqBits=" + seqBits + ", epochStr=" + epochStr + ": " + e.getMessage(), e);
        }
        if (l.lastValidSecond() < Instant.now().getEpochSecond()) {
            throw new UidGenerateException("Timestamp bits is exhausted: timeBits=" + timeBits + " from epochStr="
                    + epochStr + " ran out at " + Instant.ofEpochSecond(l.lastValidSecond())
                    + "; set more timeBits or a later epochStr (UidGenerator's README suggests 31/23/9 or 30/27/6)");
        }
        if (workerIdAssigner == null) {
            throw new UidGenerateException("no workerIdAssigner set (Baidu's bean property workerIdAssigner)");
        }
        long id = workerIdAssigner.assignWorkerId();
        if (id < 0 || id > l.maxWorkerId()) {
            throw new UidGenerateException("Worker id " + id + " exceeds the max " + l.maxWorkerId());
        }
        try {
            RingflakeUidGenerator.Builder b = RingflakeUidGenerator.builder()
                    .layout(timeBits, workerBits, seqBits).epochSeconds(epochSeconds).workerId(id);
            configure(b);
            generator = b.build();
        } catch (RingflakeException e) {
            throw new UidGenerateException("cannot start ringflake's generator for worker id " + id + ": "
                    + e.getMessage(), e);
        }
        workerId = id;
        layout = l;
    }

    /**
     * Ring settings of a subclass ({@link CachedUidGenerator}).
     *
     * @param b the builder
     */
    protected void configure(RingflakeUidGenerator.Builder b) {}

    /**
     * {@inheritDoc}
     *
     * <p>No lock, no allocation: ringflake's per-thread buffer over the native ring.
     */
    @Override
    public long getUID() {
        RingflakeUidGenerator g = generator;
        if (g == null) {
            throw new UidGenerateException("not started: call afterPropertiesSet() (Spring does)");
        }
        try {
            return g.getUID();
        } catch (RingflakeException e) {
            throw new UidGenerateException(e.getMessage(), e);
        }
    }

    /**
     * {@inheritDoc}
     *
     * @throws UidGenerateException for an ID this layout cannot have made (Baidu printed a wrong answer)
     */
    @Override
    public String parseUID(long uid) {
        UidLayout l = layout != null ? layout : UidLayout.seconds(timeBits, workerBits, seqBits, epochSeconds);
        try {
            return l.parseUID(uid);
        } catch (RingflakeException e) {
            throw new UidGenerateException(e.getMessage(), e);
        }
    }

    /** Closes the native ring (Spring calls it with the context). */
    @Override
    public void destroy() {
        RingflakeUidGenerator g = generator;
        if (g != null) {
            g.close();
        }
    }

    /** @param timeBits the time field's width */
    public void setTimeBits(int timeBits) {
        this.timeBits = timeBits;
    }

    /** @param workerBits the worker id's width */
    public void setWorkerBits(int workerBits) {
        this.workerBits = workerBits;
    }

    /** @param seqBits the sequence's width */
    public void setSeqBits(int seqBits) {
        this.seqBits = seqBits;
    }

    /**
     * Baidu's {@code epochStr}: midnight of {@code yyyy-MM-dd} in the JVM's time zone.
     *
     * @param epochStr {@code yyyy-MM-dd}
     * @throws UidGenerateException if it is not a date
     */
    public void setEpochStr(String epochStr) {
        if (epochStr == null || epochStr.isBlank()) {
            return;
        }
        try {
            this.epochSeconds = LocalDate.parse(epochStr).atStartOfDay(ZoneId.systemDefault()).toEpochSecond();
        } catch (DateTimeParseException e) {
            throw new UidGenerateException("epochStr \"" + epochStr + "\": expected yyyy-MM-dd", e);
        }
        this.epochStr = epochStr;
    }

    /** @param workerIdAssigner where the worker id comes from */
    public void setWorkerIdAssigner(WorkerIdAssigner workerIdAssigner) {
        this.workerIdAssigner = workerIdAssigner;
    }

    /** @return the worker id, -1 before start */
    public long getWorkerId() {
        return workerId;
    }
}
