package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;

/**
 * A Spring Boot 4 application with Actuator and the auto-configuration found through its
 * imports file (not named by the test): IDs from the bean, the {@code ringflake} health UP, the
 * meters in the application's registry; the worker id from a SQLite file under target/.
 */
@SpringBootTest(classes = Boot4ApplicationTest.App.class,
        properties = {"ringflake.sqlite=target/boot4-application-test.db", "ringflake.layout.preset=twitter"})
@DirtiesContext // closed after the class: its generator holds its worker id in this JVM
class Boot4ApplicationTest {
    @SpringBootApplication
    static class App {}

    @Autowired
    RingflakeUidGenerator generator;

    @Autowired
    HealthIndicator ringflakeHealthIndicator;

    @Autowired
    MeterRegistry registry;

    @Test
    void idsHealthAndMeters() {
        long a = generator.getUID();
        assertThat(generator.getUID()).isGreaterThan(a);
        assertThat(generator.layout().timeBits()).isEqualTo(41);
        assertThat(ringflakeHealthIndicator.health().getStatus()).isEqualTo(Status.UP);
        assertThat(registry.get("ringflake.worker.id").gauge().value()).isEqualTo(generator.workerId());
        assertThat(registry.get("ringflake.ids.issued").functionCounter().count()).isGreaterThanOrEqualTo(2);
    }
}
