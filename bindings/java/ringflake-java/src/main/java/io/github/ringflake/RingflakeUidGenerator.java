package io.github.ringflake;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * Unique, time-ordered 64-bit IDs from ringflake's native ring, inside the JVM: the drop-in for
 * Baidu UidGenerator's {@code CachedUidGenerator}, with the same method names, the same IDs for
 * the same layout and worker id, and the same {@code WORKER_NODE} table.
 *
 * <pre>{@code
 * try (RingflakeUidGenerator uid = RingflakeUidGenerator.builder()
 *         .layout(31, 23, 9).epochDate("2016-05-20")      // Baidu's timeBits, workerBits, seqBits, epochStr
 *         .jdbcUrl("jdbc:mysql://db:3306/app?sslMode=VERIFY_IDENTITY", "app", secret)
 *         .stateFile("/var/lib/app/ringflake.state")
 *         .build()) {
 *     long id = uid.getUID();
 *     String parsed = uid.parseUID(id); // {"UID":"…","timestamp":"…","workerId":"…","sequence":"…"}
 * }
 * }</pre>
 *
 * <h2>How it is fast</h2>
 * A native filler thread keeps a lock-free ring of IDs filled ahead of demand. Each Java thread
 * keeps a small buffer of IDs taken from the ring in one JNI call (up to 1,024 at a time, fewer
 * while the thread takes few), so {@link #getUID()} is a thread-local read, an array read and a
 * compare: no JNI call, no lock, no allocation per ID.
 *
 * <h2>Time</h2>
 * IDs never carry a time more than the lead cap (10 s by default) ahead of the clock, and an ID
 * waits in a thread's buffer 0.5 to 0.75 s at most: older ones are dropped, never handed out,
 * so an ID's time is at most about 1.75 s behind the clock at light load.
 *
 * <h2>Order</h2>
 * IDs one thread takes ({@link #getUID()} and {@link #getUIDs(long[])} alike) are strictly
 * increasing. IDs are unique across threads, and across restarts with a worker source or a state
 * file.
 *
 * <h2>Life</h2>
 * {@link #close()} stops the filler and releases the worker id's lease; a shutdown hook does it
 * at JVM exit unless the builder turned it off. One generator per worker id per process: a
 * second one with the same worker id (also from another class loader) is refused.
 */
public final class RingflakeUidGenerator implements AutoCloseable {
    /** The largest block a thread takes from the ring at once. */
    static final int MAX_BLOCK = 1024;
    /** The first block a thread takes: the block doubles while the thread uses it up in time. */
    static final int FIRST_BLOCK = 16;
    /** How often the shared tick advances, in milliseconds. */
    static final long TICK_MILLIS = 250;
    /** A buffer is fresh while fewer ticks than this passed since it was filled. */
    static final int FRESH_TICKS = 3;

    /**
     * The shared tick: a daemon thread adds one every {@link #TICK_MILLIS}; a close, and a heal
     * onto a new worker id once the Java side sees it ({@link #healed}), add {@link #FRESH_TICKS}
     * so that every thread's buffer goes stale and the next take sees the close, or takes IDs of
     * the new worker id. Read once per ID (a plain load on x86): the only check on the hot path.
     */
    private static volatile int ticks;

    private static final VarHandle TICKS;
    private static final Cleaner CLEANER = Cleaner.create();

    static {
        try {
            TICKS = MethodHandles.lookup().findStaticVarHandle(RingflakeUidGenerator.class, "ticks", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        Thread ticker = new Thread(() -> {
            while (true) {
                LockSupport.parkNanos(TICK_MILLIS * 1_000_000L);
                TICKS.getAndAdd(1);
            }
        }, "ringflake-tick");
        ticker.setDaemon(true);
        ticker.start();
    }

    /** A thread's IDs: {@code ids[next..end)} are ready, fresh while the tick is below stamp + FRESH_TICKS. */
    private static final class Buffer {
        final long[] ids = new long[MAX_BLOCK];
        int next;
        int end;
        int stamp;
        int size = FIRST_BLOCK / 2;
    }

    private final long handle;
    private final long workerId;
    /** The worker id last read from the native side (a heal may change it). */
    private volatile long lastWorkerId;
    private final UidLayout layout;
    private final ThreadLocal<Buffer> buffers = ThreadLocal.withInitial(Buffer::new);
    private volatile boolean closed;
    private final Thread hook;
    private final Cleaner.Cleanable cleanable;

    private RingflakeUidGenerator(long handle, boolean shutdownHook) {
        this.handle = handle;
        this.workerId = Native.workerId(handle);
        this.lastWorkerId = workerId;
        this.layout = new UidLayout(Native.layout(handle));
        // Closes the native generator if this object is collected unclosed (never with a hook:
        // the hook keeps it reachable). Holds only the handle, never this object.
        long h = handle;
        this.cleanable = CLEANER.register(this, () -> Native.close(h));
        if (shutdownHook) {
            hook = new Thread(this::closeQuietly, "ringflake-shutdown-" + workerId);
            Runtime.getRuntime().addShutdownHook(hook);
        } else {
            hook = null;
        }
    }

    /**
     * Starts configuring a generator.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The next ID. No lock, no allocation, no JNI call per ID (one JNI call per block).
     *
     * @return a positive ID, above every ID this thread took before
     * @throws RingflakeException if the generator is closed, its time bits ran out, or the lead
     *     cap was reached with {@link LeadPolicy#FAIL}
     */
    public long getUID() {
        Buffer b = buffers.get();
        int i = b.next;
        if (i < b.end && ticks - b.stamp < FRESH_TICKS) {
            b.next = i + 1;
            return b.ids[i];
        }
        return refill(b);
    }

    /** The slow path, once per block: sizes the next block, takes it, hands out its first ID. */
    private long refill(Buffer b) {
        if (closed) {
            throw closedException();
        }
        int now = ticks;
        // A thread that used its block up in time gets a larger one; one whose block went stale
        // a smaller one (the rest is dropped, never handed out).
        b.size = b.next >= b.end ? Math.min(b.size * 2, MAX_BLOCK) : Math.max(b.size / 4, 1);
        b.next = b.end = 0;
        long worker = Native.fill(handle, b.ids, 0, b.size);
        if (healed(worker)) {
            now = ticks; // this block is of the new worker id: fresh from the bump on
        }
        b.stamp = now;
        b.end = b.size;
        b.next = 1;
        return b.ids[0];
    }

    /**
     * Fills {@code out} with new IDs, strictly increasing (and above every ID this thread took
     * before).
     *
     * @param out the array to fill
     * @throws RingflakeException as {@link #getUID()}
     */
    public void getUIDs(long[] out) {
        getUIDs(out, 0, out.length);
    }

    /**
     * Fills {@code out[offset .. offset + length)} with new IDs, strictly increasing.
     *
     * @param out the array
     * @param offset the first index to fill
     * @param length how many IDs
     * @throws IndexOutOfBoundsException if the range is not within {@code out}
     * @throws RingflakeException as {@link #getUID()}
     */
    public void getUIDs(long[] out, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, out.length);
        if (closed) {
            throw closedException();
        }
        Buffer b = buffers.get();
        int done = 0;
        // This thread's buffered IDs first: they are below anything taken from the ring now.
        if (b.next < b.end && ticks - b.stamp < FRESH_TICKS) {
            done = Math.min(length, b.end - b.next);
            System.arraycopy(b.ids, b.next, out, offset, done);
            b.next += done;
        } else {
            b.next = b.end;
        }
        if (done < length) {
            healed(Native.fill(handle, out, offset + done, length - done));
        }
    }

    /**
     * Baidu UidGenerator's {@code parseUID}, exactly, for this generator's layout: see
     * {@link UidLayout#parseUID(long)}.
     *
     * @param uid an ID of this generator's layout
     * @return {@code {"UID":"…","timestamp":"…","workerId":"…","sequence":"…"}}
     * @throws RingflakeException for an ID this layout cannot have made
     */
    public String parseUID(long uid) {
        return layout.parseUID(uid);
    }

    /**
     * {@link #parseUID(long)} with the timestamp in {@code zone}.
     *
     * @param uid an ID of this generator's layout
     * @param zone the time zone of the timestamp
     * @return the JSON string
     */
    public String parseUID(long uid, ZoneId zone) {
        return layout.parseUID(uid, zone);
    }

    /**
     * This generator's layout.
     *
     * @return the layout
     */
    public UidLayout layout() {
        return layout;
    }

    /**
     * The worker id this generator runs with: the one it started with, or, after its lease was
     * lost for good and it healed onto a new worker id from its source, the new one (the process
     * guard moves with it). After {@link #close()}, the last one seen.
     *
     * @return the worker id
     */
    public long workerId() {
        if (closed) {
            return lastWorkerId;
        }
        try {
            long id = Native.workerId(handle);
            healed(id);
            return id;
        } catch (RingflakeException e) {
            if ("Closed".equals(e.kind())) {
                return lastWorkerId;
            }
            throw e;
        }
    }

    /**
     * The ring's fill, lead, lag, worker id and lease, as plain values.
     *
     * @return a snapshot
     * @throws RingflakeException if the generator is closed
     */
    public RingflakeStats stats() {
        RingflakeStats s = RingflakeStats.of(Native.stats(handle), Native.health(handle));
        if (!closed) {
            healed(s.workerId());
        }
        return s;
    }

    /**
     * Notes {@code worker}, as a JNI call just returned it; if it is not the last one seen, the
     * native generator healed onto it (its lease on the old one lost for good), and from here on
     * no thread hands out an ID of the old worker id still in its buffer: returns true. Bumps
     * the shared tick, so every thread's buffer (of every generator: heals are rare) is stale at
     * its next take, which then takes IDs of the new worker id from the ring. Off the hot path:
     * called where a JNI call already returned the worker id.
     *
     * @param worker the worker id the native side runs with now
     * @return whether it is a new one
     */
    private boolean healed(long worker) {
        if (worker == lastWorkerId) {
            return false;
        }
        lastWorkerId = worker;
        TICKS.getAndAdd(FRESH_TICKS);
        return true;
    }

    /**
     * Whether {@link #close()} was called (or the shutdown hook ran).
     *
     * @return true once closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Stops the filler and releases the worker id's lease (and the process's hold on the worker
     * id). Waits for takes under way; later takes throw {@code RingflakeException} of kind
     * {@code Closed}. Idempotent.
     *
     * @throws RingflakeException if the lease could not be released (it then runs out by itself)
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        TICKS.getAndAdd(FRESH_TICKS);
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook itself is running this close.
            }
        }
        cleanable.clean();
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            System.err.println("ringflake: closing generator of worker id " + lastWorkerId + " failed: " + e);
        }
    }

    private static RingflakeException closedException() {
        return new RingflakeException("Closed", "the generator is closed");
    }

    @Override
    public String toString() {
        return "RingflakeUidGenerator[workerId=" + lastWorkerId + ", " + layout + (closed ? ", closed" : "") + "]";
    }

    /** What the filler does when it reaches the lead cap and the ring runs dry. */
    public enum LeadPolicy {
        /** Takes wait until the clock catches up (about a second at most). */
        WAIT,
        /** Takes throw {@code RingflakeException} of kind {@code LeadLimitReached}. */
        FAIL
    }

    /**
     * Settings of a {@link RingflakeUidGenerator}: a layout (ringflake's default unless set), and
     * exactly one worker source.
     *
     * <p>Baidu's Spring bean properties map as: {@code timeBits, workerBits, seqBits} to
     * {@link #layout(int, int, int)}, {@code epochStr} to {@link #epochDate(String)}, the
     * {@code DisposableWorkerIdAssigner}'s data source to {@link #jdbcUrl(String, String, String)},
     * {@code boostPower} and {@code paddingFactor} to the methods of the same names.
     */
    public static final class Builder {
        private final List<String> settings = new ArrayList<>();
        private boolean shutdownHook = true;

        private Builder() {}

        private Builder set(String key, Object value) {
            settings.add(key);
            settings.add(String.valueOf(value));
            return this;
        }

        /**
         * A preset layout: {@code default}, {@code twitter}, {@code leaf}, {@code discord},
         * {@code instagram}, {@code sonyflake}, {@code uidgenerator} (Baidu's expired defaults:
         * refused at build), {@code js53}.
         *
         * @param name the preset
         * @return this builder
         */
        public Builder preset(String name) {
            return set("preset", Objects.requireNonNull(name, "preset"));
        }

        /**
         * Bit widths of a layout of seconds, as Baidu's {@code timeBits}, {@code workerBits},
         * {@code seqBits} (adding up to 63).
         *
         * @param timeBits the time field's width
         * @param workerBits the worker id's width
         * @param seqBits the sequence's width
         * @return this builder
         */
        public Builder layout(int timeBits, int workerBits, int seqBits) {
            return set("bits", timeBits + "," + workerBits + "," + seqBits);
        }

        /**
         * The epoch, in unix seconds (ringflake's default, 2025-01-01T00:00:00Z, unless set).
         *
         * @param epochSeconds unix seconds, not in the future
         * @return this builder
         */
        public Builder epochSeconds(long epochSeconds) {
            return set("epochSeconds", epochSeconds);
        }

        /**
         * The epoch as Baidu's {@code epochStr}: midnight of {@code yyyy-MM-dd} in the JVM's
         * default time zone.
         *
         * @param date {@code yyyy-MM-dd}
         * @return this builder
         */
        public Builder epochDate(String date) {
            return epochDate(date, ZoneId.systemDefault());
        }

        /**
         * The epoch: midnight of {@code yyyy-MM-dd} in {@code zone} (Baidu's default epoch is
         * 2016-05-20 in Asia/Shanghai, 1463673600).
         *
         * @param date {@code yyyy-MM-dd}
         * @param zone the zone of midnight
         * @return this builder
         */
        public Builder epochDate(String date, ZoneId zone) {
            try {
                return epochSeconds(LocalDate.parse(date).atStartOfDay(zone).toEpochSecond());
            } catch (DateTimeParseException e) {
                throw new RingflakeException("InvalidConfig",
                        "epochDate \"" + date + "\": expected yyyy-MM-dd (" + e.getMessage() + ")", e);
            }
        }

        /**
         * A fixed worker id (one per process, and per host with a state file).
         *
         * @param workerId 0 to the layout's largest
         * @return this builder
         */
        public Builder workerId(long workerId) {
            return set("workerId", workerId);
        }

        /**
         * Worker ids from a SQLite file's {@code WORKER_NODE} table (created if missing).
         *
         * @param path the database file
         * @return this builder
         */
        public Builder sqlite(String path) {
            return set("sqlite", Objects.requireNonNull(path, "sqlite"));
        }

        /**
         * Worker ids from a SQLite file's {@code WORKER_NODE} table (created if missing).
         *
         * @param path the database file
         * @return this builder
         */
        public Builder sqlite(Path path) {
            return sqlite(path.toString());
        }

        /**
         * Worker ids from the {@code WORKER_NODE} table of the MariaDB/MySQL or PostgreSQL
         * database of a JDBC URL ({@code jdbc:mysql://}, {@code jdbc:mariadb://},
         * {@code jdbc:postgresql://}) with {@code user=} and {@code password=} parameters, or
         * the crate's own {@code mysql://} and {@code postgres://} forms.
         *
         * @param url the URL
         * @return this builder
         */
        public Builder jdbcUrl(String url) {
            return jdbcUrl(url, null, null);
        }

        /**
         * {@link #jdbcUrl(String)} with the user and password given apart, as a
         * {@code DataSource} has them.
         *
         * @param url the JDBC URL
         * @param user the user (overrides the URL's)
         * @param password the password (overrides the URL's), or null
         * @return this builder
         */
        public Builder jdbcUrl(String url, String user, String password) {
            String[] crate = JdbcUrls.toCrate(url, user, password);
            return set(crate[0], crate[1]);
        }

        /**
         * Creates the {@code WORKER_NODE} table (with ringflake's lease column) if it is
         * missing (default: off; the table must exist).
         *
         * @param on whether to create it
         * @return this builder
         */
        public Builder createTable(boolean on) {
            return set("createTable", on);
        }

        /**
         * How long a database source's lease on the worker id runs before it must be extended
         * (ringflake's default unless set): a node that stops extending loses its row after
         * this long, and a generator whose row was taken over heals onto a new one.
         *
         * @param window 1 second or more
         * @return this builder
         */
        public Builder leaseWindow(Duration window) {
            return set("leaseWindowSeconds", Objects.requireNonNull(window, "leaseWindow").getSeconds());
        }

        /**
         * The CA (PEM file) the database server's certificate is verified against (makes
         * verification of the host name the default).
         *
         * @param path the PEM file
         * @return this builder
         */
        public Builder dbCaFile(String path) {
            return set("caFile", Objects.requireNonNull(path, "dbCaFile"));
        }

        /**
         * Worker ids from a ZooKeeper ensemble, in Meituan Leaf's znodes
         * ({@code /snowflake/{leafName}/forever}).
         *
         * @param ensemble {@code host:port,host:port}
         * @param leafName Leaf's {@code leaf.name}
         * @return this builder
         */
        public Builder zookeeper(String ensemble, String leafName) {
            set("zookeeper", Objects.requireNonNull(ensemble, "zookeeper"));
            return set("zookeeperName", Objects.requireNonNull(leafName, "leafName"));
        }

        /**
         * The port in this node's znode name ({@code ip:port}), Leaf's server port.
         *
         * @param port 1 to 65535
         * @return this builder
         */
        public Builder zookeeperPort(int port) {
            return set("zookeeperPort", port);
        }

        /**
         * Records the highest second this generator may use in {@code path}, durably, and
         * starts above it: a restart (even after kill -9) never repeats an ID of the same
         * worker id on this host. Holds a fixed worker id for the host while it lives.
         *
         * @param path the state file
         * @return this builder
         */
        public Builder stateFile(String path) {
            return set("stateFile", Objects.requireNonNull(path, "stateFile"));
        }

        /**
         * See {@link #stateFile(String)}.
         *
         * @param path the state file
         * @return this builder
         */
        public Builder stateFile(Path path) {
            return stateFile(path.toString());
        }

        /**
         * The lead cap: how far ahead of the clock the filler may borrow (default 10 s, with
         * {@link LeadPolicy#WAIT}).
         *
         * @param maxLead the cap
         * @param policy what takes do at the cap
         * @return this builder
         */
        public Builder maxLead(Duration maxLead, LeadPolicy policy) {
            if (maxLead.isNegative()) {
                throw new RingflakeException("InvalidConfig", "maxLead " + maxLead + ": expected 0 or more");
            }
            set("maxLeadMillis", maxLead.toMillis());
            return set("leadPolicy", policy.name());
        }

        /**
         * No lead cap (as Baidu's: its IDs may run hours ahead under load).
         *
         * @return this builder
         */
        public Builder unboundedLead() {
            return set("maxLeadMillis", -1);
        }

        /**
         * Refuses to start unless every ID sorts above {@code id}: the highest ID of the Java
         * fleet this generator takes over from.
         *
         * @param id an ID of the old fleet
         * @return this builder
         */
        public Builder above(long id) {
            return set("above", Long.toUnsignedString(id));
        }

        /**
         * Baidu's {@code boostPower}: the ring holds {@code 2^seqBits << boostPower} IDs (default 3).
         *
         * @param boostPower the power
         * @return this builder
         */
        public Builder boostPower(int boostPower) {
            return set("boostPower", boostPower);
        }

        /**
         * Baidu's {@code paddingFactor}: the filler is woken below this percent (default 50).
         *
         * @param percent 0 to 100
         * @return this builder
         */
        public Builder paddingFactor(int percent) {
            return set("paddingFactor", percent);
        }

        /**
         * Whether a shutdown hook closes the generator at JVM exit (default true).
         *
         * @param on whether to register it
         * @return this builder
         */
        public Builder shutdownHook(boolean on) {
            this.shutdownHook = on;
            return this;
        }

        /**
         * Claims a worker id and starts the generator.
         *
         * @return the generator
         * @throws RingflakeException naming the cause: a refused setting (nothing claimed), an
         *     expired layout (nothing claimed), a worker id out of range or in use in this
         *     process, an unreachable worker source
         */
        public RingflakeUidGenerator build() {
            NativeLoader.load(); // an unsupported platform: a RingflakeException, not an ExceptionInInitializerError
            long handle = Native.open(settings.toArray(new String[0]));
            try {
                return new RingflakeUidGenerator(handle, shutdownHook);
            } catch (RuntimeException | Error e) {
                Native.close(handle);
                throw e;
            }
        }
    }
}
