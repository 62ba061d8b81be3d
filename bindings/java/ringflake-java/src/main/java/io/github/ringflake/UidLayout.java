package io.github.ringflake;

import java.text.SimpleDateFormat;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.Date;
import java.util.TimeZone;

/**
 * An ID layout: {@code [sign 1][time][worker id][sequence]}, its widths, epoch and tick. Parses
 * IDs without a generator (IDs of a Java UidGenerator fleet, of an expired layout).
 *
 * <pre>{@code
 * UidLayout baidu = UidLayout.seconds(29, 21, 13, 1474329600L); // epochStr "2016-09-20", UTC
 * baidu.parseUID(17179877377L, ZoneOffset.UTC);
 * // {"UID":"17179877377","timestamp":"2016-09-20 00:00:01","workerId":"1","sequence":"1"}
 * }</pre>
 */
public final class UidLayout {
    /** See native/src/lib.rs, layout_longs. */
    private final long[] v;

    UidLayout(long[] v) {
        this.v = v;
    }

    /**
     * A layout of seconds, as Baidu's {@code timeBits}, {@code workerBits}, {@code seqBits} and
     * epoch.
     *
     * @param timeBits the time field's width
     * @param workerBits the worker id's width
     * @param seqBits the sequence's width (the three add up to 63)
     * @param epochSeconds the epoch, unix seconds, not in the future
     * @return the layout
     * @throws RingflakeException of kind {@code InvalidBitWidths} or {@code EpochInFuture}
     */
    public static UidLayout seconds(int timeBits, int workerBits, int seqBits, long epochSeconds) {
        NativeLoader.load();
        return new UidLayout(Native.seconds(timeBits, workerBits, seqBits, epochSeconds));
    }

    /**
     * A preset by name: {@code default}, {@code twitter}, {@code leaf}, {@code discord},
     * {@code instagram}, {@code sonyflake}, {@code uidgenerator}, {@code js53}.
     *
     * @param name the preset
     * @return the layout
     * @throws RingflakeException of kind {@code UnknownLayout}
     */
    public static UidLayout preset(String name) {
        NativeLoader.load();
        return new UidLayout(Native.preset(name));
    }

    /** @return the time field's width */
    public int timeBits() {
        return (int) v[0];
    }

    /** @return the worker id's width */
    public int workerBits() {
        return (int) v[1];
    }

    /** @return the sequence's width */
    public int seqBits() {
        return (int) v[2];
    }

    /** @return the epoch, unix milliseconds */
    public long epochMillis() {
        return v[3];
    }

    /** @return the tick: 1000 (seconds), 10 or 1 millisecond */
    public long tickMillis() {
        return v[4];
    }

    /** @return the largest worker id */
    public long maxWorkerId() {
        return v[6];
    }

    /** @return the last unix second an ID can carry */
    public long lastValidSecond() {
        return v[7];
    }

    /**
     * Baidu UidGenerator's {@code parseUID}, exactly:
     * {@code {"UID":"…","timestamp":"yyyy-MM-dd HH:mm:ss","workerId":"…","sequence":"…"}}, the
     * timestamp in the JVM's default time zone, formatted as Baidu's code does (with
     * {@code .SSS} for a layout of milliseconds).
     *
     * @param uid an ID of this layout
     * @return the JSON string
     * @throws RingflakeException for an ID this layout cannot have made (kind {@code NegativeId},
     *     {@code DeltaOutOfRange}), where Baidu's code returns a wrong answer
     */
    public String parseUID(long uid) {
        return parseUID(uid, TimeZone.getDefault());
    }

    /**
     * {@link #parseUID(long)} with the timestamp in {@code zone}.
     *
     * @param uid an ID of this layout
     * @param zone the time zone of the timestamp
     * @return the JSON string
     */
    public String parseUID(long uid, ZoneId zone) {
        return parseUID(uid, TimeZone.getTimeZone(zone));
    }

    /**
     * The time an ID carries, as unix milliseconds (where its tick starts).
     *
     * @param uid an ID of this layout
     * @return unix milliseconds
     * @throws RingflakeException for an ID this layout cannot have made
     */
    public long unixMillis(long uid) {
        return Native.parse(v, uid)[0];
    }

    /**
     * The worker id of an ID.
     *
     * @param uid an ID of this layout
     * @return the worker id
     * @throws RingflakeException for an ID this layout cannot have made
     */
    public long workerId(long uid) {
        return Native.parse(v, uid)[1];
    }

    private String parseUID(long uid, TimeZone zone) {
        long[] p = Native.parse(v, uid);
        SimpleDateFormat format = new SimpleDateFormat(
                tickMillis() >= 1000 ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm:ss.SSS");
        format.setTimeZone(zone);
        return "{\"UID\":\"" + uid + "\",\"timestamp\":\"" + format.format(new Date(p[0]))
                + "\",\"workerId\":\"" + p[1] + "\",\"sequence\":\"" + p[2] + "\"}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UidLayout other && Arrays.equals(v, other.v);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(v);
    }

    @Override
    public String toString() {
        return "UidLayout[" + v[0] + "/" + v[1] + "/" + v[2] + ", epochMillis=" + v[3] + ", tickMillis="
                + v[4] + (v[5] == 1 ? ", sequence above worker" : "") + "]";
    }
}
