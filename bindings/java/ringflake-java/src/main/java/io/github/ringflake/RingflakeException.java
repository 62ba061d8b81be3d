package io.github.ringflake;

/**
 * A failure of ringflake's native generator, naming its cause: a setting the builder refuses,
 * a worker source that cannot be reached, an expired layout, a closed generator.
 *
 * <p>Unchecked, as Baidu UidGenerator's {@code UidGenerateException}. {@link #kind()} is a
 * stable name for the cause that code may switch on: the variant of the Rust crate's
 * {@code ringflake::Error} ({@code TimeBitsExhausted}, {@code WorkerIdOutOfRange},
 * {@code WorkerAssignment}, {@code Database}, {@code StateFile}, {@code LeadLimitReached},
 * {@code NegativeId}, {@code DeltaOutOfRange}, …) or one of the Java library's own:
 * {@code InvalidConfig} (a builder setting), {@code Closed} (the generator was closed),
 * {@code NativeLibrary} (the native library could not be loaded), {@code Panic} (a bug in the
 * native code, caught before it could reach the JVM).
 */
public class RingflakeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String kind;

    /**
     * A failure of the given kind.
     *
     * @param kind the cause's name (see {@link #kind()})
     * @param message what failed, naming the value and the limit
     */
    public RingflakeException(String kind, String message) {
        super(message);
        this.kind = kind;
    }

    /**
     * A failure of the given kind with an underlying cause.
     *
     * @param kind the cause's name (see {@link #kind()})
     * @param message what failed
     * @param cause the underlying exception
     */
    public RingflakeException(String kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /**
     * The cause's name, e.g. {@code TimeBitsExhausted}.
     *
     * @return the kind
     */
    public String kind() {
        return kind;
    }

    @Override
    public String toString() {
        return "RingflakeException[" + kind + "]: " + getMessage();
    }
}
