package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeStats;
import io.github.ringflake.RingflakeUidGenerator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Actuator's {@code ringflake} health: UP while the generator serves (also idle, or held at the
 * lead cap, which is back-pressure, not a fault), DOWN when it is closed, its lease is lost or it
 * is unavailable. Details: the state, worker id, lease, lead against the cap, and the ring's fill.
 * Spring Boot 4's edition ({@code org.springframework.boot.health.contributor}).
 */
public class RingflakeHealthIndicator extends AbstractHealthIndicator {
    private final RingflakeUidGenerator generator;

    /**
     * A health indicator of one generator.
     *
     * @param generator the generator
     */
    public RingflakeHealthIndicator(RingflakeUidGenerator generator) {
        super("ringflake health check failed");
        this.generator = generator;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (generator.isClosed()) {
            builder.down().withDetail("state", "closed");
            return;
        }
        RingflakeStats s = generator.stats();
        boolean down = s.leaseLost() || "unavailable".equals(s.health());
        (down ? builder.down() : builder.up())
                .withDetail("state", s.health())
                .withDetail("workerId", s.workerId())
                .withDetail("leaseUntil", s.leaseUntil())
                .withDetail("leaseLost", s.leaseLost())
                .withDetail("leadSeconds", s.leadSeconds())
                .withDetail("maxLeadSeconds", s.maxLeadSeconds())
                .withDetail("lagSeconds", s.lagSeconds())
                .withDetail("ringCapacity", s.capacity())
                .withDetail("ringAvailable", s.available())
                .withDetail("ringFill", s.capacity() == 0 ? 0.0 : (double) s.available() / s.capacity())
                .withDetail("remainingSeconds", s.remainingSeconds());
    }
}
