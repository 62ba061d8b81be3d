package io.github.ringflake;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;

/**
 * A JVM that takes IDs until it is killed: {@code CrashChild STATE_FILE|- WORKER_ID|JDBC_URL|sqlite:PATH OUT [COUNT]}.
 * Appends every ID it takes to OUT (8 bytes, big-endian), written to the kernel before the next
 * batch is taken, so a kill -9 loses none that were handed out; prints "ready" after the first
 * batch. With COUNT, stops after COUNT IDs and closes the generator. The system property
 * {@code ringflake.child.bits} ({@code time,worker,seq}) sets the layout's widths.
 */
public final class CrashChild {
    private CrashChild() {}

    public static void main(String[] args) throws IOException {
        RingflakeUidGenerator.Builder b = RingflakeUidGenerator.builder();
        String bits = System.getProperty("ringflake.child.bits");
        if (bits != null) {
            String[] w = bits.split(",");
            b.layout(Integer.parseInt(w[0]), Integer.parseInt(w[1]), Integer.parseInt(w[2]));
        }
        if (args[1].startsWith("jdbc:")) {
            b.jdbcUrl(args[1]);
        } else if (args[1].startsWith("sqlite:")) {
            b.sqlite(args[1].substring("sqlite:".length()));
        } else {
            b.workerId(Long.parseLong(args[1]));
        }
        if (!args[0].equals("-")) {
            b.stateFile(args[0]);
        }
        long limit = args.length > 3 ? Long.parseLong(args[3]) : Long.MAX_VALUE;
        RingflakeUidGenerator g = b.build();
        long[] batch = new long[500];
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(args[2], true), 8 * 500))) {
            long n = 0;
            while (n < limit) {
                // Single takes, as a service makes them.
                for (int i = 0; i < batch.length; i++) {
                    batch[i] = g.getUID();
                }
                for (long id : batch) {
                    out.writeLong(id);
                }
                out.flush();
                if (n == 0) {
                    System.out.println("ready");
                    System.out.flush();
                }
                n += batch.length;
            }
        }
        g.close();
    }
}
