package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeUidGenerator.LeadPolicy;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ringflake.*} properties: a layout (bits and epoch, or a preset), at most one worker
 * source (with none, the application's {@code spring.datasource} is used), and options.
 *
 * <pre>
 * ringflake.layout.preset=twitter            # or time-bits/worker-bits/seq-bits and epoch
 * ringflake.jdbc.url=jdbc:mariadb://db/app    # or worker-id, sqlite, zookeeper.ensemble
 * ringflake.state-file=/var/lib/app/ringflake.state
 * </pre>
 */
@ConfigurationProperties(prefix = "ringflake")
public class RingflakeProperties {
    /** Whether to configure a generator at all. */
    private boolean enabled = true;

    /** A fixed worker id (a worker source: at most one of worker-id, sqlite, jdbc.url, zookeeper.ensemble). */
    private Long workerId;

    /** A SQLite file whose WORKER_NODE table hands out worker ids (created if missing; a worker source). */
    private String sqlite;

    /**
     * A file recording the highest second handed out, so that a restart (even after kill -9) never
     * repeats an ID of this worker id on this host.
     */
    private String stateFile;

    /** How far ahead of the clock IDs may run (borrowed seconds); 10 s unless set. */
    private Duration maxLead;

    /** What a take does at the lead cap: wait for the clock, or fail. */
    private LeadPolicy leadPolicy = LeadPolicy.WAIT;

    /** With no ringflake worker source set, take the worker id from spring.datasource's WORKER_NODE table. */
    private boolean useDatasource = true;

    private final Layout layout = new Layout();
    private final Jdbc jdbc = new Jdbc();
    private final Zookeeper zookeeper = new Zookeeper();
    private final Ring ring = new Ring();

    /** @return whether to configure a generator */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether to configure a generator */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the fixed worker id, or null */
    public Long getWorkerId() {
        return workerId;
    }

    /** @param workerId a fixed worker id */
    public void setWorkerId(Long workerId) {
        this.workerId = workerId;
    }

    /** @return the SQLite file, or null */
    public String getSqlite() {
        return sqlite;
    }

    /** @param sqlite a SQLite file */
    public void setSqlite(String sqlite) {
        this.sqlite = sqlite;
    }

    /** @return the state file, or null */
    public String getStateFile() {
        return stateFile;
    }

    /** @param stateFile the state file */
    public void setStateFile(String stateFile) {
        this.stateFile = stateFile;
    }

    /** @return the lead cap, or null for the default */
    public Duration getMaxLead() {
        return maxLead;
    }

    /** @param maxLead the lead cap */
    public void setMaxLead(Duration maxLead) {
        this.maxLead = maxLead;
    }

    /** @return the lead policy */
    public LeadPolicy getLeadPolicy() {
        return leadPolicy;
    }

    /** @param leadPolicy the lead policy */
    public void setLeadPolicy(LeadPolicy leadPolicy) {
        this.leadPolicy = leadPolicy;
    }

    /** @return whether spring.datasource is the fallback worker source */
    public boolean isUseDatasource() {
        return useDatasource;
    }

    /** @param useDatasource whether spring.datasource is the fallback worker source */
    public void setUseDatasource(boolean useDatasource) {
        this.useDatasource = useDatasource;
    }

    /** @return the layout properties */
    public Layout getLayout() {
        return layout;
    }

    /** @return the JDBC worker source's properties */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /** @return the ZooKeeper worker source's properties */
    public Zookeeper getZookeeper() {
        return zookeeper;
    }

    /** @return the ring's sizing */
    public Ring getRing() {
        return ring;
    }

    /** The ID layout: a preset, or bit widths adding up to 63 with an epoch. */
    public static class Layout {
        /** A preset layout: default, twitter, leaf, discord, instagram, sonyflake, js53 (not with the bits). */
        private String preset;
        /** The time field's width in bits (Baidu's timeBits); the three widths add up to 63. */
        private Integer timeBits;
        /** The worker id's width in bits (Baidu's workerBits). */
        private Integer workerBits;
        /** The sequence's width in bits (Baidu's seqBits). */
        private Integer seqBits;
        /** The epoch as yyyy-MM-dd, midnight in the JVM's zone (Baidu's epochStr); not in the future. */
        private String epoch;
        /** The epoch in unix seconds (instead of epoch); not in the future. */
        private Long epochSeconds;

        /** @return the preset, or null */
        public String getPreset() {
            return preset;
        }

        /** @param preset a preset name */
        public void setPreset(String preset) {
            this.preset = preset;
        }

        /** @return the time bits, or null */
        public Integer getTimeBits() {
            return timeBits;
        }

        /** @param timeBits the time bits */
        public void setTimeBits(Integer timeBits) {
            this.timeBits = timeBits;
        }

        /** @return the worker bits, or null */
        public Integer getWorkerBits() {
            return workerBits;
        }

        /** @param workerBits the worker bits */
        public void setWorkerBits(Integer workerBits) {
            this.workerBits = workerBits;
        }

        /** @return the sequence bits, or null */
        public Integer getSeqBits() {
            return seqBits;
        }

        /** @param seqBits the sequence bits */
        public void setSeqBits(Integer seqBits) {
            this.seqBits = seqBits;
        }

        /** @return the epoch date, or null */
        public String getEpoch() {
            return epoch;
        }

        /** @param epoch the epoch date, yyyy-MM-dd */
        public void setEpoch(String epoch) {
            this.epoch = epoch;
        }

        /** @return the epoch in unix seconds, or null */
        public Long getEpochSeconds() {
            return epochSeconds;
        }

        /** @param epochSeconds the epoch in unix seconds */
        public void setEpochSeconds(Long epochSeconds) {
            this.epochSeconds = epochSeconds;
        }
    }

    /** A MariaDB, MySQL or PostgreSQL WORKER_NODE table as the worker source. */
    public static class Jdbc {
        /** The JDBC URL (jdbc:mariadb://, jdbc:mysql://, jdbc:postgresql://); a worker source. */
        private String url;
        /** The database user. */
        private String username;
        /** The database password. */
        private String password;
        /**
         * Create WORKER_NODE if it is missing: in the database of ringflake.jdbc.url, or in the
         * application's spring.datasource when that is the worker source.
         */
        private boolean createTable;
        /** A PEM file with the database server's CA. */
        private String caFile;

        /** @return the URL, or null */
        public String getUrl() {
            return url;
        }

        /** @param url the URL */
        public void setUrl(String url) {
            this.url = url;
        }

        /** @return the user, or null */
        public String getUsername() {
            return username;
        }

        /** @param username the user */
        public void setUsername(String username) {
            this.username = username;
        }

        /** @return the password, or null */
        public String getPassword() {
            return password;
        }

        /** @param password the password */
        public void setPassword(String password) {
            this.password = password;
        }

        /** @return whether to create the table */
        public boolean isCreateTable() {
            return createTable;
        }

        /** @param createTable whether to create the table */
        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }

        /** @return the CA file, or null */
        public String getCaFile() {
            return caFile;
        }

        /** @param caFile the CA file */
        public void setCaFile(String caFile) {
            this.caFile = caFile;
        }
    }

    /** A ZooKeeper ensemble as the worker source, with Meituan Leaf's znodes. */
    public static class Zookeeper {
        /** The ensemble, host:port[,host:port…]; a worker source. */
        private String ensemble;
        /** Leaf's leaf.name: the znodes live under /snowflake/{leaf-name}/forever. */
        private String leafName = "ringflake";
        /** The port in this node's znode name ({ip}:{port}-). */
        private Integer port;

        /** @return the ensemble, or null */
        public String getEnsemble() {
            return ensemble;
        }

        /** @param ensemble the ensemble */
        public void setEnsemble(String ensemble) {
            this.ensemble = ensemble;
        }

        /** @return Leaf's name */
        public String getLeafName() {
            return leafName;
        }

        /** @param leafName Leaf's name */
        public void setLeafName(String leafName) {
            this.leafName = leafName;
        }

        /** @return the port, or null */
        public Integer getPort() {
            return port;
        }

        /** @param port the port */
        public void setPort(Integer port) {
            this.port = port;
        }
    }

    /** The ring's sizing, as Baidu's CachedUidGenerator names it. */
    public static class Ring {
        /** The ring holds 2^seq-bits << boost-power IDs (Baidu's boostPower). */
        private Integer boostPower;
        /** The filler tops the ring up when fewer than this percentage of its IDs are left (Baidu's paddingFactor). */
        private Integer paddingFactor;

        /** @return the boost power, or null */
        public Integer getBoostPower() {
            return boostPower;
        }

        /** @param boostPower the boost power */
        public void setBoostPower(Integer boostPower) {
            this.boostPower = boostPower;
        }

        /** @return the padding factor, or null */
        public Integer getPaddingFactor() {
            return paddingFactor;
        }

        /** @param paddingFactor the padding factor, percent */
        public void setPaddingFactor(Integer paddingFactor) {
            this.paddingFactor = paddingFactor;
        }
    }
}
