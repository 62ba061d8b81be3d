package io.github.ringflake;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;

/**
 * Baidu UidGenerator's worker id assignment through an application's own {@link DataSource}:
 * every call inserts one row into the {@code WORKER_NODE} table and returns its auto-increment
 * {@code ID} (Baidu's {@code DisposableWorkerIdAssigner}, as documented; not its code).
 *
 * <p>The row is the one a Baidu node writes: {@code HOST_NAME} and {@code PORT} from the
 * environment variables {@code JPAAS_HOST} and {@code JPAAS_HTTP_PORT} (or
 * {@code JPAAS_HOST_PORT_8080}) with {@code TYPE} 1 (container), otherwise the first
 * non-loopback address and {@code <epoch millis>-<random 0..99999>} with {@code TYPE} 2
 * (actual). So Baidu's Java nodes, these rows and {@code ringflake serve} nodes share one table.
 *
 * <p>Used by the Spring Boot starter when the application has a {@code DataSource} that
 * ringflake's native sources do not speak (H2, Oracle, …), and by the UidGenerator bridge. For
 * MariaDB, MySQL and PostgreSQL, {@link RingflakeUidGenerator.Builder#jdbcUrl(String, String, String)}
 * is better: it reuses a host's row and keeps a lease instead of burning an id per boot.
 */
public final class WorkerNodeTable {
    private WorkerNodeTable() {}

    /**
     * Inserts this boot's row and returns its {@code ID}.
     *
     * @param dataSource the database holding {@code WORKER_NODE}
     * @return the new row's {@code ID}, the worker id
     * @throws RingflakeException of kind {@code Database} if the insert fails (the table is
     *     missing, …), naming the driver's words
     */
    public static long assign(DataSource dataSource) {
        String host;
        String port;
        int type;
        String jpaasHost = System.getenv("JPAAS_HOST");
        String jpaasPort = System.getenv("JPAAS_HTTP_PORT");
        if (jpaasPort == null || jpaasPort.isEmpty()) {
            jpaasPort = System.getenv("JPAAS_HOST_PORT_8080");
        }
        if (jpaasHost != null && !jpaasHost.isEmpty() && jpaasPort != null && !jpaasPort.isEmpty()) {
            host = jpaasHost;
            port = jpaasPort;
            type = 1;
        } else {
            host = localAddress();
            port = System.currentTimeMillis() + "-" + ThreadLocalRandom.current().nextInt(100_000);
            type = 2;
        }
        String sql = "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED)"
                + " VALUES (?, ?, ?, CURRENT_DATE, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";
        try (Connection c = dataSource.getConnection();
                PreparedStatement st = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
            st.setString(1, host);
            st.setString(2, port);
            st.setInt(3, type);
            st.executeUpdate();
            try (ResultSet keys = st.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new RingflakeException("Database",
                            "INSERT INTO WORKER_NODE returned no generated ID (is ID an auto-increment column?)");
                }
                return keys.getLong(1);
            }
        } catch (SQLException e) {
            throw new RingflakeException("Database",
                    "cannot insert this boot's WORKER_NODE row (host " + host + ", port " + port + "): "
                            + e.getMessage(), e);
        }
    }

    /** The first non-loopback IPv4 address, as Baidu's NetUtils picks; the loopback one otherwise. */
    static String localAddress() {
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (!a.isLoopbackAddress() && a.getAddress().length == 4) {
                        return a.getHostAddress();
                    }
                }
            }
        } catch (SocketException e) {
            // fall through: no interface list, the loopback address names the host
        }
        return InetAddress.getLoopbackAddress().getHostAddress();
    }
}
