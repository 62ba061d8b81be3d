package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Spring Boot's start-up report for a refused {@code ringflake.*} property: the property, the
 * value and the limit, instead of a stack trace. Registered in {@code META-INF/spring.factories}.
 */
public class RingflakeFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRingflakePropertyException> {
    /** Used by Spring Boot. */
    public RingflakeFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidRingflakePropertyException cause) {
        return new FailureAnalysis(
                "ringflake cannot start: the property " + cause.property() + " is " + cause.value()
                        + ", but " + cause.limit() + ".",
                "Change " + cause.property() + " in the application's configuration (application.yml,"
                        + " application.properties or the environment).",
                cause);
    }

    /**
     * The report for a failure of the native generator at start (a worker source that cannot be
     * reached, a worker id in use, an expired layout): its kind and message.
     */
    public static class Native extends AbstractFailureAnalyzer<RingflakeException> {
        /** Used by Spring Boot. */
        public Native() {}

        @Override
        protected FailureAnalysis analyze(Throwable rootFailure, RingflakeException cause) {
            return new FailureAnalysis(
                    "ringflake's generator could not start (" + cause.kind() + "): " + cause.getMessage(),
                    "Check the ringflake.* properties and the worker source they name"
                            + " (or spring.datasource.*, used when no ringflake worker source is set);"
                            + " ringflake.jdbc.create-table=true creates a missing WORKER_NODE table.",
                    cause);
        }
    }
}
