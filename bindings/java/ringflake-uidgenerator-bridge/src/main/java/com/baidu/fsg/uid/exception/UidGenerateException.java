package com.baidu.fsg.uid.exception;

/** Baidu UidGenerator's exception, unchecked: no ID could be made; the cause says why. */
public class UidGenerateException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An exception with no message. */
    public UidGenerateException() {
        super();
    }

    /**
     * An exception with a message.
     *
     * @param message what failed
     */
    public UidGenerateException(String message) {
        super(message);
    }

    /**
     * An exception with a message and a cause.
     *
     * @param message what failed
     * @param cause the underlying exception (ringflake's {@code RingflakeException})
     */
    public UidGenerateException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * An exception with a cause.
     *
     * @param cause the underlying exception
     */
    public UidGenerateException(Throwable cause) {
        super(cause);
    }
}
