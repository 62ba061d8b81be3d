package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The generator bean in application contexts: from properties, a user's bean winning, closing
 * with the context, turned off, and its meters. Written against what Spring Boot 3 and 4 share:
 * ringflake-spring-boot4-autoconfigure runs it too.
 */
class GeneratorBeanTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RingflakeAutoConfiguration.class));

    @Test
    void fixedWorkerIdGivesIdsAndClosesWithTheContext() {
        AtomicReference<RingflakeUidGenerator> seen = new AtomicReference<>();
        runner.withPropertyValues("ringflake.worker-id=301", "ringflake.layout.preset=twitter")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(RingflakeUidGenerator.class);
                    RingflakeUidGenerator g = ctx.getBean(RingflakeUidGenerator.class);
                    long a = g.getUID();
                    long b = g.getUID();
                    assertThat(b).isGreaterThan(a).isPositive();
                    assertThat(g.workerId()).isEqualTo(301);
                    assertThat(g.layout().timeBits()).isEqualTo(41);
                    seen.set(g);
                });
        assertThat(seen.get().isClosed()).isTrue();
    }

    @Test
    void bitsAndEpochAreTheLayout() {
        runner.withPropertyValues("ringflake.worker-id=302", "ringflake.layout.time-bits=31",
                "ringflake.layout.worker-bits=23", "ringflake.layout.seq-bits=9", "ringflake.layout.epoch=2016-05-20")
                .run(ctx -> {
                    RingflakeUidGenerator g = ctx.getBean(RingflakeUidGenerator.class);
                    assertThat(g.layout().workerBits()).isEqualTo(23);
                    assertThat(g.parseUID(g.getUID())).contains("\"workerId\":\"302\"");
                });
    }

    @Test
    void theApplicationsOwnBeanWins() {
        runner.withPropertyValues("ringflake.worker-id=303").withUserConfiguration(Own.class).run(ctx -> {
            assertThat(ctx).hasSingleBean(RingflakeUidGenerator.class);
            assertThat(ctx.getBean(RingflakeUidGenerator.class).workerId()).isEqualTo(304);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Own {
        @Bean(destroyMethod = "close")
        RingflakeUidGenerator mine() {
            return RingflakeUidGenerator.builder().workerId(304).shutdownHook(false).build();
        }
    }

    @Test
    void disabledMeansNoBean() {
        runner.withPropertyValues("ringflake.enabled=false", "ringflake.worker-id=305")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(RingflakeUidGenerator.class));
    }

    @Test
    void metersAreTheServicesPrometheusSeries() {
        runner.withPropertyValues("ringflake.worker-id=308").run(ctx -> {
            RingflakeUidGenerator g = ctx.getBean(RingflakeUidGenerator.class);
            for (int i = 0; i < 5000; i++) {
                g.getUID();
            }
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            ctx.getBean(RingflakeMeterBinder.class).bindTo(registry);
            String text = registry.scrape();
            assertThat(text).contains("ringflake_ring_capacity", "ringflake_ring_available",
                    "ringflake_ring_fill_ratio", "ringflake_ids_issued_total", "ringflake_time_lead_seconds",
                    "ringflake_time_lag_seconds", "ringflake_worker_id 308", "ringflake_paddings_total",
                    "ringflake_lease_expiry_timestamp_seconds");
            assertThat(registry.get("ringflake.ids.issued").functionCounter().count()).isGreaterThanOrEqualTo(5000);
        });
    }
}
