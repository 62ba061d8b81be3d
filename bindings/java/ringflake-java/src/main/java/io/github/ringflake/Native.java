package io.github.ringflake;

/** The entries of the native library (bindings/java/native/src/lib.rs). */
final class Native {
    static {
        NativeLoader.load();
    }

    private Native() {}

    /** Builds a generator from {@code key, value} pairs; returns its handle. */
    static native long open(String[] settings);

    /**
     * Writes {@code length} new IDs, strictly increasing, into {@code out[offset..]}.
     *
     * @return the worker id the generator holds after taking them (another than before: a heal)
     */
    static native long fill(long handle, long[] out, int offset, int length);

    static native long workerId(long handle);

    /** {timeBits, workerBits, seqBits, epochMillis, tickMillis, order, maxWorkerId, lastValidSecond}. */
    static native long[] layout(long handle);

    /** A preset's layout, as {@link #layout(long)}. */
    static native long[] preset(String name);

    /** A layout of seconds, checked, as {@link #layout(long)}. */
    static native long[] seconds(int timeBits, int workerBits, int seqBits, long epochSeconds);

    /** {unixMillis, workerId, sequence}. */
    static native long[] parse(long[] layout, long id);

    /** The values of RingflakeStats, in its order. */
    static native long[] stats(long handle);

    static native String health(long handle);

    static native void close(long handle);
}
