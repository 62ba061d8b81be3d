package io.github.ringflake.baiducompat;

import com.baidu.fsg.uid.UidGenerator;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link UidGenerator} that hands out its bean's IDs and keeps a copy of each, in one buffer
 * per thread (no lock, nothing shared on a take). Read {@link #ids()} only after the threads
 * that took IDs have been joined (Baidu's tests join theirs before they return).
 */
public final class Recording implements UidGenerator {
    private final UidGenerator bean;
    private final String testClass;
    private final List<Buffer> buffers = new ArrayList<>();
    private final ThreadLocal<Buffer> local = ThreadLocal.withInitial(this::newBuffer);

    Recording(UidGenerator bean, String testClass) {
        this.bean = bean;
        this.testClass = testClass;
    }

    private Buffer newBuffer() {
        Buffer b = new Buffer();
        synchronized (buffers) {
            buffers.add(b);
        }
        return b;
    }

    @Override
    public long getUID() {
        long id = bean.getUID();
        local.get().add(id);
        return id;
    }

    @Override
    public String parseUID(long uid) {
        return bean.parseUID(uid);
    }

    /** @return the recorded bean (the bridge's generator) */
    public UidGenerator bean() {
        return bean;
    }

    /** @return the simple name of the test class that took the IDs */
    public String testClass() {
        return testClass;
    }

    /** @return every ID taken through this recording, per thread in the order taken */
    public long[] ids() {
        List<long[]> parts = new ArrayList<>();
        long n = 0;
        synchronized (buffers) {
            for (Buffer b : buffers) {
                parts.addAll(b.full);
                parts.add(java.util.Arrays.copyOf(b.open, b.count));
                n += (long) b.full.size() * Buffer.CHUNK + b.count;
            }
        }
        long[] all = new long[Math.toIntExact(n)];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    private static final class Buffer {
        static final int CHUNK = 1 << 16;
        final List<long[]> full = new ArrayList<>();
        long[] open = new long[CHUNK];
        int count;

        void add(long id) {
            if (count == CHUNK) {
                full.add(open);
                open = new long[CHUNK];
                count = 0;
            }
            open[count++] = id;
        }
    }
}
