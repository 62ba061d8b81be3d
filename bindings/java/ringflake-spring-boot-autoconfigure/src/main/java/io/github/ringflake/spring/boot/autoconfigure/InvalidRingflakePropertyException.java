package io.github.ringflake.spring.boot.autoconfigure;

/**
 * A {@code ringflake.*} property the generator cannot start with: names the property, the value
 * given and the limit it broke. {@link RingflakeFailureAnalyzer} turns it into Spring Boot's
 * start-up report.
 */
public class InvalidRingflakePropertyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String property;
    private final String value;
    private final String limit;

    /**
     * A refused property.
     *
     * @param property the property's name, e.g. {@code ringflake.layout.time-bits}
     * @param value the value given, as text
     * @param limit what the value must be, e.g. {@code time-bits + worker-bits + seq-bits = 63}
     */
    public InvalidRingflakePropertyException(String property, String value, String limit) {
        super("invalid property " + property + "=" + value + ": " + limit);
        this.property = property;
        this.value = value;
        this.limit = limit;
    }

    /** @return the property's name */
    public String property() {
        return property;
    }

    /** @return the value given */
    public String value() {
        return value;
    }

    /** @return the limit the value broke */
    public String limit() {
        return limit;
    }
}
