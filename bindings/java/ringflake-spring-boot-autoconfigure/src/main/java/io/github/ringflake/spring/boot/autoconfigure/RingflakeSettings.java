package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeException;
import io.github.ringflake.RingflakeUidGenerator;
import io.github.ringflake.UidLayout;
import io.github.ringflake.WorkerNodeTable;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Turns {@link RingflakeProperties} into a {@link RingflakeUidGenerator.Builder}, refusing a
 * wrong property with an {@link InvalidRingflakePropertyException} that names it (before any
 * worker id is claimed).
 */
public final class RingflakeSettings {
    /** The presets the native library knows, for messages. */
    static final String PRESETS = "default, twitter, leaf, discord, instagram, sonyflake, uidgenerator, js53";

    private RingflakeSettings() {}

    /** The application's {@code spring.datasource}, when no ringflake worker source is set. */
    public record Fallback(String url, String username, String password, Supplier<DataSource> dataSource) {
        /** @return whether ringflake's native JDBC source speaks this URL */
        boolean nativeUrl() {
            return url != null && (url.startsWith("jdbc:mysql:") || url.startsWith("jdbc:mariadb:")
                    || url.startsWith("jdbc:postgresql:"));
        }
    }

    /**
     * A builder configured from the properties.
     *
     * @param p the properties
     * @param fallback the application's data source, or null
     * @param now the clock's instant (an epoch may not be after it)
     * @return the builder, with no shutdown hook (the context closes the generator)
     * @throws InvalidRingflakePropertyException naming the property, the value and the limit
     */
    public static RingflakeUidGenerator.Builder builder(RingflakeProperties p, Fallback fallback, Instant now) {
        RingflakeUidGenerator.Builder b = RingflakeUidGenerator.builder().shutdownHook(false);
        UidLayout layout = layout(p.getLayout(), b, now);
        source(p, fallback, b, layout);
        if (p.getStateFile() != null && !p.getStateFile().isBlank()) {
            b.stateFile(p.getStateFile());
        }
        if (p.getMaxLead() != null) {
            if (p.getMaxLead().isNegative() || p.getMaxLead().isZero()) {
                throw new InvalidRingflakePropertyException("ringflake.max-lead", p.getMaxLead().toString(),
                        "it must be a positive duration (10s unless set)");
            }
            b.maxLead(p.getMaxLead(), p.getLeadPolicy());
        }
        Integer boost = p.getRing().getBoostPower();
        if (boost != null) {
            if (boost < 0 || boost > 10) {
                throw new InvalidRingflakePropertyException("ringflake.ring.boost-power", boost.toString(),
                        "it must be between 0 and 10");
            }
            b.boostPower(boost);
        }
        Integer padding = p.getRing().getPaddingFactor();
        if (padding != null) {
            if (padding < 1 || padding > 99) {
                throw new InvalidRingflakePropertyException("ringflake.ring.padding-factor", padding.toString(),
                        "it must be a percentage between 1 and 99");
            }
            b.paddingFactor(padding);
        }
        return b;
    }

    /** Checks and sets the layout; returns it (for the worker id's range). */
    static UidLayout layout(RingflakeProperties.Layout l, RingflakeUidGenerator.Builder b, Instant now) {
        Integer t = l.getTimeBits();
        Integer w = l.getWorkerBits();
        Integer s = l.getSeqBits();
        boolean anyBits = t != null || w != null || s != null;
        if (l.getPreset() != null && anyBits) {
            throw new InvalidRingflakePropertyException("ringflake.layout.preset", l.getPreset(),
                    "a preset cannot be combined with ringflake.layout.time-bits/worker-bits/seq-bits: set one or the other");
        }
        if (l.getEpoch() != null && l.getEpochSeconds() != null) {
            throw new InvalidRingflakePropertyException("ringflake.layout.epoch", l.getEpoch(),
                    "it cannot be combined with ringflake.layout.epoch-seconds (" + l.getEpochSeconds() + "): set one");
        }
        Long epoch = l.getEpochSeconds();
        String epochProperty = "ringflake.layout.epoch-seconds";
        String epochText = epoch == null ? null : epoch.toString();
        if (l.getEpoch() != null) {
            epochProperty = "ringflake.layout.epoch";
            epochText = l.getEpoch();
            try {
                epoch = LocalDate.parse(l.getEpoch()).atStartOfDay(ZoneId.systemDefault()).toEpochSecond();
            } catch (DateTimeParseException e) {
                throw new InvalidRingflakePropertyException(epochProperty, l.getEpoch(),
                        "it must be a date as yyyy-MM-dd (" + e.getMessage() + ")");
            }
        }
        if (epoch != null && epoch > now.getEpochSecond()) {
            throw new InvalidRingflakePropertyException(epochProperty, epochText,
                    "an epoch may not be after the clock (" + now + "): every ID would need a negative time");
        }
        if (l.getPreset() != null) {
            if (epoch != null) {
                throw new InvalidRingflakePropertyException(epochProperty, epochText,
                        "a preset carries its own epoch: drop " + epochProperty + " or use the bits instead of the preset");
            }
            String name = l.getPreset().toLowerCase(Locale.ROOT);
            try {
                UidLayout layout = UidLayout.preset(name);
                b.preset(name);
                return layout;
            } catch (RingflakeException e) {
                if ("NativeLibrary".equals(e.kind()) || "UnsupportedPlatform".equals(e.kind())) {
                    throw e;
                }
                throw new InvalidRingflakePropertyException("ringflake.layout.preset", l.getPreset(),
                        "it must be one of " + PRESETS);
            }
        }
        if (anyBits) {
            String[] names = {"time-bits", "worker-bits", "seq-bits"};
            Integer[] v = {t, w, s};
            for (int i = 0; i < 3; i++) {
                if (v[i] == null) {
                    throw new InvalidRingflakePropertyException("ringflake.layout." + names[i], "not set",
                            "time-bits, worker-bits and seq-bits are set together (they add up to 63)");
                }
                if (v[i] < 1 || v[i] > 61) {
                    throw new InvalidRingflakePropertyException("ringflake.layout." + names[i], v[i].toString(),
                            "a field's width must be between 1 and 61 bits");
                }
            }
            if (t + w + s != 63) {
                throw new InvalidRingflakePropertyException("ringflake.layout.time-bits",
                        t + " (+ worker-bits " + w + " + seq-bits " + s + " = " + (t + w + s) + ")",
                        "time-bits + worker-bits + seq-bits must add up to 63");
            }
            long e = epoch != null ? epoch : UidLayout.preset("default").epochMillis() / 1000;
            UidLayout layout;
            try {
                layout = UidLayout.seconds(t, w, s, e);
            } catch (RingflakeException ex) {
                if ("NativeLibrary".equals(ex.kind()) || "UnsupportedPlatform".equals(ex.kind())) {
                    throw ex;
                }
                throw new InvalidRingflakePropertyException("ringflake.layout.time-bits", t.toString(),
                        ex.getMessage());
            }
            if (layout.lastValidSecond() < now.getEpochSecond()) {
                throw new InvalidRingflakePropertyException("ringflake.layout.time-bits", t.toString(),
                        "with this epoch the time bits ran out at unix second " + layout.lastValidSecond()
                                + " (" + Instant.ofEpochSecond(layout.lastValidSecond())
                                + "): give the time more bits or a later epoch (Baidu's README: 31/23/9 or 30/27/6)");
            }
            b.layout(t, w, s).epochSeconds(e);
            return layout;
        }
        if (epoch != null) {
            UidLayout d = UidLayout.preset("default");
            b.layout(d.timeBits(), d.workerBits(), d.seqBits()).epochSeconds(epoch);
            return UidLayout.seconds(d.timeBits(), d.workerBits(), d.seqBits(), epoch);
        }
        return UidLayout.preset("default");
    }

    /** Checks and sets the worker source: at most one of the properties, else the fallback. */
    static void source(RingflakeProperties p, Fallback fallback, RingflakeUidGenerator.Builder b, UidLayout layout) {
        List<String> set = new ArrayList<>();
        if (p.getWorkerId() != null) {
            set.add("ringflake.worker-id=" + p.getWorkerId());
        }
        if (p.getSqlite() != null) {
            set.add("ringflake.sqlite=" + p.getSqlite());
        }
        if (p.getJdbc().getUrl() != null) {
            set.add("ringflake.jdbc.url=" + p.getJdbc().getUrl());
        }
        if (p.getZookeeper().getEnsemble() != null) {
            set.add("ringflake.zookeeper.ensemble=" + p.getZookeeper().getEnsemble());
        }
        if (set.size() > 1) {
            String first = set.get(0);
            throw new InvalidRingflakePropertyException(first.substring(0, first.indexOf('=')),
                    first.substring(first.indexOf('=') + 1),
                    "only one worker source may be set, and " + String.join(" and ", set.subList(1, set.size()))
                            + " is set too");
        }
        if (p.getWorkerId() != null) {
            checkWorkerId("ringflake.worker-id", p.getWorkerId(), layout);
            b.workerId(p.getWorkerId());
        } else if (p.getSqlite() != null) {
            b.sqlite(p.getSqlite());
        } else if (p.getJdbc().getUrl() != null) {
            jdbc(b, p.getJdbc().getUrl(), p.getJdbc().getUsername(), p.getJdbc().getPassword());
            b.createTable(p.getJdbc().isCreateTable());
            if (p.getJdbc().getCaFile() != null) {
                b.dbCaFile(p.getJdbc().getCaFile());
            }
        } else if (p.getZookeeper().getEnsemble() != null) {
            b.zookeeper(p.getZookeeper().getEnsemble(), p.getZookeeper().getLeafName());
            if (p.getZookeeper().getPort() != null) {
                b.zookeeperPort(p.getZookeeper().getPort());
            }
        } else if (fallback != null && p.isUseDatasource()) {
            if (fallback.nativeUrl()) {
                jdbc(b, fallback.url(), fallback.username(), fallback.password());
                b.createTable(p.getJdbc().isCreateTable());
                if (p.getJdbc().getCaFile() != null) {
                    b.dbCaFile(p.getJdbc().getCaFile());
                }
            } else {
                long id = WorkerNodeTable.assign(fallback.dataSource().get(), p.getJdbc().isCreateTable());
                checkWorkerId("spring.datasource (the WORKER_NODE row's ID)", id, layout);
                b.workerId(id);
            }
        } else {
            throw new InvalidRingflakePropertyException("ringflake.worker-id", "not set",
                    "a worker source is needed: set one of ringflake.worker-id, ringflake.sqlite,"
                            + " ringflake.jdbc.url, ringflake.zookeeper.ensemble, or configure spring.datasource");
        }
    }

    private static void jdbc(RingflakeUidGenerator.Builder b, String url, String user, String password) {
        if (user != null || password != null) {
            b.jdbcUrl(url, user == null ? "" : user, password == null ? "" : password);
        } else {
            b.jdbcUrl(url);
        }
    }

    private static void checkWorkerId(String property, long id, UidLayout layout) {
        if (id < 0 || id > layout.maxWorkerId()) {
            throw new InvalidRingflakePropertyException(property, Long.toString(id),
                    "the layout's " + layout.workerBits() + " worker bits allow 0 to " + layout.maxWorkerId());
        }
    }
}
