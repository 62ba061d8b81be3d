package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A wrong property fails start-up with a report naming the property, the value and the limit,
 * through the FailureAnalyzer registered in META-INF/spring.factories. Written against what Spring
 * Boot 3 and 4 share: ringflake-spring-boot4-autoconfigure runs it too.
 */
class FailureAnalyzerTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RingflakeAutoConfiguration.class));

    /** The start-up report Spring Boot would print for these properties. */
    private String report(String... properties) {
        String[] out = new String[1];
        runner.withPropertyValues(properties).run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis analysis = new RingflakeFailureAnalyzer().analyze(ctx.getStartupFailure());
            assertThat(analysis).as("no analysis of " + ctx.getStartupFailure()).isNotNull();
            out[0] = analysis.getDescription() + "\n" + analysis.getAction();
        });
        return out[0];
    }

    @Test
    void theAnalyzersAreRegistered() throws IOException {
        StringBuilder all = new StringBuilder(); // the files Spring Boot reads its analyzers from
        var files = getClass().getClassLoader().getResources("META-INF/spring.factories");
        while (files.hasMoreElements()) {
            try (var in = files.nextElement().openStream()) {
                all.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        assertThat(all.toString()).contains("org.springframework.boot.diagnostics.FailureAnalyzer=\\\n"
                + "io.github.ringflake.spring.boot.autoconfigure.RingflakeFailureAnalyzer,\\\n"
                + "io.github.ringflake.spring.boot.autoconfigure.RingflakeFailureAnalyzer$Native");
        assertThat(FailureAnalyzer.class).isAssignableFrom(RingflakeFailureAnalyzer.Native.class);
    }

    @Test
    void aNativeFailureIsReportedWithItsKind() {
        var analysis = new RingflakeFailureAnalyzer.Native().analyze(
                new IllegalStateException(new io.github.ringflake.RingflakeException("Database", "no route to db:3306")));
        assertThat(analysis.getDescription()).contains("(Database)", "no route to db:3306");
    }

    @Test
    void bitsThatDoNotAddUpTo63() {
        assertThat(report("ringflake.worker-id=1", "ringflake.layout.time-bits=31",
                "ringflake.layout.worker-bits=23", "ringflake.layout.seq-bits=10"))
                .contains("ringflake.layout.time-bits", "31 (+ worker-bits 23 + seq-bits 10 = 64)", "add up to 63");
    }

    @Test
    void anEpochInTheFuture() {
        assertThat(report("ringflake.worker-id=1", "ringflake.layout.epoch=2999-01-01"))
                .contains("ringflake.layout.epoch", "2999-01-01", "may not be after the clock");
    }

    @Test
    void twoSources() {
        assertThat(report("ringflake.worker-id=1", "ringflake.sqlite=/tmp/x.db"))
                .contains("ringflake.worker-id", "1", "only one worker source", "ringflake.sqlite=/tmp/x.db");
    }

    @Test
    void anUnknownPreset() {
        assertThat(report("ringflake.worker-id=1", "ringflake.layout.preset=snowflakey"))
                .contains("ringflake.layout.preset", "snowflakey", "twitter", "sonyflake");
    }

    @Test
    void aWorkerIdOutOfRange() {
        assertThat(report("ringflake.worker-id=1024", "ringflake.layout.preset=twitter"))
                .contains("ringflake.worker-id", "1024", "0 to 1023");
    }

    @Test
    void noSourceAndNoDatasource() {
        assertThat(report("ringflake.layout.preset=twitter"))
                .contains("ringflake.worker-id", "not set", "spring.datasource");
    }

    @Test
    void baiduDefaultsExpired() {
        assertThat(report("ringflake.worker-id=1", "ringflake.layout.time-bits=28",
                "ringflake.layout.worker-bits=22", "ringflake.layout.seq-bits=13", "ringflake.layout.epoch=2016-05-20"))
                .contains("ringflake.layout.time-bits", "28", "ran out");
    }
}
