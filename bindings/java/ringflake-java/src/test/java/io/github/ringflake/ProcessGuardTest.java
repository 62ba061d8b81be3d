package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One generator per worker id per process, also when the library is loaded twice, by two class
 * loaders (each extracts and loads its own copy of the native library, with its own statics).
 */
class ProcessGuardTest {
    @TempDir
    Path dir;

    @Test
    void oneWorkerIdOneGeneratorInOneLoader() {
        RingflakeUidGenerator a = RingflakeUidGenerator.builder().workerId(31).shutdownHook(false).build();
        RingflakeException e = assertThrows(RingflakeException.class,
                () -> RingflakeUidGenerator.builder().workerId(31).shutdownHook(false).build());
        assertEquals("WorkerAssignment", e.kind());
        assertTrue(e.getMessage().contains("worker id 31 is in use"), e.getMessage());
        a.close();
        try (RingflakeUidGenerator b = RingflakeUidGenerator.builder().workerId(31).shutdownHook(false).build()) {
            assertEquals(31, b.workerId());
        }
    }

    /** A loader of its own over the jar: its classes (and native library copy) are not ours. */
    private static URLClassLoader isolated() throws Exception {
        return new URLClassLoader(new URL[] {TestSupport.jar().toUri().toURL()}, ClassLoader.getPlatformClassLoader());
    }

    /** builder().<source>(arg).shutdownHook(false).build() through reflection in {@code loader}. */
    private static Object build(ClassLoader loader, String source, Class<?> type, Object arg) throws Throwable {
        Class<?> g = loader.loadClass("io.github.ringflake.RingflakeUidGenerator");
        assertNotSame(RingflakeUidGenerator.class, g);
        Object b = g.getMethod("builder").invoke(null);
        Class<?> bc = b.getClass();
        bc.getMethod(source, type).invoke(b, arg);
        bc.getMethod("shutdownHook", boolean.class).invoke(b, false);
        try {
            return bc.getMethod("build").invoke(b);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static long workerId(Object g) throws Exception {
        return (long) g.getClass().getMethod("workerId").invoke(g);
    }

    private static void close(Object g) throws Exception {
        g.getClass().getMethod("close").invoke(g);
    }

    @Test
    void twoClassLoadersCannotShareAWorkerId() throws Throwable {
        try (URLClassLoader one = isolated(); URLClassLoader two = isolated()) {
            Object a = build(one, "workerId", long.class, 32L);
            Throwable e = assertThrows(Throwable.class, () -> build(two, "workerId", long.class, 32L));
            // The other loader's RingflakeException: same name, another class.
            assertEquals("io.github.ringflake.RingflakeException", e.getClass().getName());
            assertNotSame(RingflakeException.class, e.getClass());
            assertTrue(e.getMessage().contains("worker id 32 is in use"), e.getMessage());
            // Nor this test's own loader (a third copy of the library).
            RingflakeException mine = assertThrows(RingflakeException.class,
                    () -> RingflakeUidGenerator.builder().workerId(32).shutdownHook(false).build());
            assertTrue(mine.getMessage().contains("in use"), mine.getMessage());
            close(a);
            Object b = build(two, "workerId", long.class, 32L);
            assertEquals(32, workerId(b));
            close(b);
        }
    }

    @Test
    void twoClassLoadersOnOneSqliteFileGetTwoWorkerIds() throws Throwable {
        String db = dir.resolve("ids.db").toString();
        try (URLClassLoader one = isolated(); URLClassLoader two = isolated()) {
            Object a = build(one, "sqlite", String.class, db);
            Object b = build(two, "sqlite", String.class, db);
            assertNotEquals(workerId(a), workerId(b));
            close(a);
            close(b);
        }
    }
}
