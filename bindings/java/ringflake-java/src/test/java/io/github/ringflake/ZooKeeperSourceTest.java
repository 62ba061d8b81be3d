package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Worker ids from ZooKeeper in Meituan Leaf's znodes: two nodes (two {@code ip:port} names) get
 * two worker ids, and a restart of one finds its own znode again. Needs an ensemble
 * ({@code RINGFLAKE_ZK_ENSEMBLE}, which .ci/run starts); skipped without it unless
 * {@code RINGFLAKE_JAVA_SERVER_TESTS=1}.
 */
class ZooKeeperSourceTest {
    private static String ensemble() {
        String e = System.getenv("RINGFLAKE_ZK_ENSEMBLE");
        if (e == null) {
            if ("1".equals(System.getenv("RINGFLAKE_JAVA_SERVER_TESTS"))) {
                fail("RINGFLAKE_ZK_ENSEMBLE is not set");
            }
            Assumptions.abort("RINGFLAKE_ZK_ENSEMBLE is not set");
        }
        return e;
    }

    private static RingflakeUidGenerator node(String ensemble, String name, int port) {
        return RingflakeUidGenerator.builder().preset("twitter").zookeeper(ensemble, name).zookeeperPort(port)
                .shutdownHook(false).build();
    }

    @Test
    void leafsZnodesGiveEachNodeItsWorkerId() {
        String ensemble = ensemble();
        String name = "ringflake-java-" + System.nanoTime();
        long[] a = new long[10_000];
        long[] b = new long[10_000];
        long first;
        try (RingflakeUidGenerator one = node(ensemble, name, 18611);
                RingflakeUidGenerator two = node(ensemble, name, 18612)) {
            first = one.workerId();
            assertNotEquals(first, two.workerId());
            one.getUIDs(a);
            two.getUIDs(b);
            assertEquals(first, one.layout().workerId(a[0]));
        }
        long[] all = new long[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            assertTrue(all[i] != all[i - 1], "duplicate " + all[i]);
        }
        // The first node again: Leaf's holder finds its ip:port znode and keeps its worker id.
        try (RingflakeUidGenerator again = node(ensemble, name, 18611)) {
            assertEquals(first, again.workerId());
            assertTrue(again.getUID() > a[a.length - 1]);
        }
    }
}
