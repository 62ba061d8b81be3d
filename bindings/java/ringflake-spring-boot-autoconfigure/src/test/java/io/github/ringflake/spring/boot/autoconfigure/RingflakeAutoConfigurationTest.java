package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configuration in application contexts: the generator from properties and from
 * spring.datasource, a user's bean winning, closing with the context, health and meters present
 * only with their libraries.
 */
class RingflakeAutoConfigurationTest {
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
    void springDatasourceGivesAWorkerNodeRow() throws Exception {
        String url = "jdbc:h2:mem:boot-fallback;MODE=MySQL;DB_CLOSE_DELAY=-1";
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + url, "spring.datasource.username=sa",
                        "spring.datasource.password=",
                        "spring.sql.init.mode=never")
                .withInitializer(ctx -> WorkerNodeSchema.create(url))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    long workerId = ctx.getBean(RingflakeUidGenerator.class).workerId();
                    try (Connection c = ctx.getBean(DataSource.class).getConnection();
                            Statement st = c.createStatement();
                            ResultSet rs = st.executeQuery("SELECT ID, TYPE FROM WORKER_NODE")) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getLong(1)).isEqualTo(workerId);
                        assertThat(rs.getInt(2)).isIn(1, 2);
                        assertThat(rs.next()).isFalse();
                    }
                });
    }

    @Test
    void aMissingWorkerNodeTableIsCreatedOnlyWhenAsked() throws Exception {
        String url = "jdbc:h2:mem:boot-no-table;DB_CLOSE_DELAY=-1";
        ApplicationContextRunner h2 = runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + url, "spring.datasource.username=sa",
                        "spring.datasource.password=", "spring.sql.init.mode=never");
        h2.run(ctx -> {
            assertThat(ctx).hasFailed();
            var analysis = new RingflakeFailureAnalyzer.Native().analyze(ctx.getStartupFailure());
            assertThat(analysis.getDescription()).contains("WORKER_NODE");
            assertThat(analysis.getAction()).contains("ringflake.jdbc.create-table=true");
        });
        long[] first = new long[1];
        h2.withPropertyValues("ringflake.jdbc.create-table=true").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            first[0] = ctx.getBean(RingflakeUidGenerator.class).workerId();
        });
        h2.withPropertyValues("ringflake.jdbc.create-table=true").run(ctx -> {
            RingflakeUidGenerator g = ctx.getBean(RingflakeUidGenerator.class);
            assertThat(g.workerId()).isEqualTo(first[0] + 1); // a new row a boot, as Baidu's assigner
            assertThat(g.parseUID(g.getUID())).contains("\"workerId\":\"" + (first[0] + 1) + "\"");
        });
    }

    @Test
    void healthIsUpWithDetails() {
        runner.withPropertyValues("ringflake.worker-id=306").run(ctx -> {
            HealthIndicator h = ctx.getBean("ringflakeHealthIndicator", HealthIndicator.class);
            ctx.getBean(RingflakeUidGenerator.class).getUID();
            var health = h.health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("workerId", 306L)
                    .containsKeys("state", "leadSeconds", "maxLeadSeconds", "ringFill", "leaseUntil");
        });
    }

    @Test
    void healthAndMetersNeedTheirLibraries() {
        runner.withPropertyValues("ringflake.worker-id=307")
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class, MeterBinder.class))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(RingflakeUidGenerator.class);
                    assertThat(ctx).doesNotHaveBean(RingflakeHealthIndicator.class);
                    assertThat(ctx).doesNotHaveBean(RingflakeMeterBinder.class);
                });
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
