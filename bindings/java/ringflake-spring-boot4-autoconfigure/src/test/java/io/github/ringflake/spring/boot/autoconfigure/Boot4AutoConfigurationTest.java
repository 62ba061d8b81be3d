package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The Spring Boot 4 edition in application contexts: the generator from a SQLite file and from
 * spring.datasource, closing with the context, Boot 4's health API. What Boot 3 and 4 share (the
 * bean, a user's bean winning, the meters, a wrong property analysed) runs from Boot 3's
 * {@code GeneratorBeanTest} and {@code FailureAnalyzerTest}.
 */
class Boot4AutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RingflakeAutoConfiguration.class));

    @TempDir
    Path dir;

    @Test
    void aSqliteFileGivesIdsAndClosesWithTheContext() {
        AtomicReference<RingflakeUidGenerator> seen = new AtomicReference<>();
        runner.withPropertyValues("ringflake.sqlite=" + dir.resolve("ringflake.db")).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(RingflakeUidGenerator.class);
            RingflakeUidGenerator g = ctx.getBean(RingflakeUidGenerator.class);
            long a = g.getUID();
            long b = g.getUID();
            assertThat(b).isGreaterThan(a).isPositive();
            assertThat(g.parseUID(b)).contains("\"workerId\":\"" + g.workerId() + "\"");
            seen.set(g);
        });
        assertThat(seen.get().isClosed()).isTrue();
    }

    @Test
    void springDatasourceGivesAWorkerNodeRow() throws Exception {
        String url = "jdbc:h2:mem:boot4-fallback;MODE=MySQL;DB_CLOSE_DELAY=-1";
        try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
                    + " HOST_NAME VARCHAR(64) NOT NULL, PORT VARCHAR(64) NOT NULL, TYPE INT NOT NULL,"
                    + " LAUNCH_DATE DATE NOT NULL, MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL)");
        }
        runner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + url, "spring.datasource.username=sa",
                        "spring.datasource.password=")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    long workerId = ctx.getBean(RingflakeUidGenerator.class).workerId();
                    try (Connection c = ctx.getBean(DataSource.class).getConnection();
                            Statement st = c.createStatement();
                            ResultSet rs = st.executeQuery("SELECT ID FROM WORKER_NODE")) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getLong(1)).isEqualTo(workerId);
                        assertThat(rs.next()).isFalse();
                    }
                });
    }

    @Test
    void healthIsUpWithDetails() {
        runner.withPropertyValues("ringflake.worker-id=403").run(ctx -> {
            HealthIndicator h = ctx.getBean("ringflakeHealthIndicator", HealthIndicator.class);
            ctx.getBean(RingflakeUidGenerator.class).getUID();
            var health = h.health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("workerId", 403L)
                    .containsKeys("state", "leadSeconds", "maxLeadSeconds", "ringFill", "leaseUntil");
        });
    }

    @Test
    void healthAndMetersNeedTheirLibraries() {
        runner.withPropertyValues("ringflake.worker-id=404")
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class, MeterBinder.class))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(RingflakeUidGenerator.class);
                    assertThat(ctx).doesNotHaveBean(RingflakeHealthIndicator.class);
                    assertThat(ctx).doesNotHaveBean(RingflakeMeterBinder.class);
                });
    }
}
