package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configuration in Spring Boot 3's application contexts: the generator from
 * spring.datasource, health and meters present only with their libraries (what Boot 3 and 4 share
 * is {@link GeneratorBeanTest}).
 */
class RingflakeAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RingflakeAutoConfiguration.class));

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
}
