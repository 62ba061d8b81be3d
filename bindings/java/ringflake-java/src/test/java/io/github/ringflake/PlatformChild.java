package io.github.ringflake;

/** PlatformTest's child JVM: builds a generator, prints the exception's kind and message. */
public final class PlatformChild {
    private PlatformChild() {}

    /**
     * Entry.
     *
     * @param args none
     */
    public static void main(String[] args) {
        try {
            RingflakeUidGenerator.builder().workerId(1).build().close();
            System.out.println("built");
        } catch (RingflakeException e) {
            System.out.println(e.kind() + ": " + e.getMessage());
        }
    }
}
