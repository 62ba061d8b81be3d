package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeUidGenerator;
import java.time.Instant;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.DataSourceProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Configures a {@link RingflakeUidGenerator} from the {@code ringflake.*} properties (see
 * {@link RingflakeProperties}); with no ringflake worker source set, from the application's
 * {@code spring.datasource}'s {@code WORKER_NODE} table. A generator bean of the application's
 * own wins. The context closes the generator. With Actuator on the class path, a health indicator
 * ({@code ringflake}); with Micrometer, the service's meters ({@link RingflakeMeterBinder}).
 *
 * <p>Spring Boot 4's edition (ringflake-spring-boot4-autoconfigure): the same beans as Spring Boot
 * 3's, with Boot 4's packages for the health API ({@code spring-boot-health}) and
 * {@code DataSourceProperties} ({@code spring-boot-jdbc}).
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass(RingflakeUidGenerator.class)
@ConditionalOnProperty(prefix = "ringflake", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(RingflakeProperties.class)
public class RingflakeAutoConfiguration {
    /** Used by Spring. */
    public RingflakeAutoConfiguration() {}

    /**
     * The generator.
     *
     * @param properties the {@code ringflake.*} properties
     * @param dataSourceProperties {@code spring.datasource.*}, if configured
     * @param dataSource the application's data source, if any
     * @return a started generator, closed with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RingflakeUidGenerator ringflakeUidGenerator(RingflakeProperties properties,
            ObjectProvider<DataSourceProperties> dataSourceProperties, ObjectProvider<DataSource> dataSource) {
        RingflakeSettings.Fallback fallback = null;
        DataSource ds = dataSource.getIfUnique();
        if (ds != null) {
            DataSourceProperties dsp = dataSourceProperties.getIfAvailable();
            String url = null;
            String user = null;
            String password = null;
            if (dsp != null && dsp.getUrl() != null) {
                url = dsp.getUrl();
                user = dsp.determineUsername();
                password = dsp.determinePassword();
            }
            fallback = new RingflakeSettings.Fallback(url, user, password, () -> ds);
        }
        return RingflakeSettings.builder(properties, fallback, Instant.now()).build();
    }

    /** The Actuator health indicator, when Actuator is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("ringflake")
    static class Health {
        // No @ConditionalOnBean: member classes are read before the enclosing class's beans.
        @Bean
        @ConditionalOnMissingBean(name = "ringflakeHealthIndicator")
        RingflakeHealthIndicator ringflakeHealthIndicator(RingflakeUidGenerator generator) {
            return new RingflakeHealthIndicator(generator);
        }
    }

    /** The meters, when Micrometer is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        RingflakeMeterBinder ringflakeMeterBinder(RingflakeUidGenerator generator) {
            return new RingflakeMeterBinder(generator);
        }
    }
}
