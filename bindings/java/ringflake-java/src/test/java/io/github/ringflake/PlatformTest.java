package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The platforms the jar carries are named, and on any other the first use throws a
 * RingflakeException naming the platform, the ones carried and the cargo command (a child JVM
 * told it runs on riscv64).
 */
class PlatformTest {
    @Test
    void thisPlatformIsCarried() {
        List<String> carried = NativeLoader.carried();
        assertTrue(carried.contains(NativeLoader.platform()), carried + " vs " + NativeLoader.platform());
    }

    @Test
    void anotherPlatformGetsAClearException() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = TestSupport.jar() + File.pathSeparator + TestSupport.testClasses();
        Process p = new ProcessBuilder(java, "-Dos.arch=riscv64", "-cp", cp, PlatformChild.class.getName())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.startsWith("UnsupportedPlatform: "), out);
        for (String part : new String[] {"linux-riscv64", "it carries " + String.join(", ", NativeLoader.carried()),
                "cargo build -p ringflake-jni", "-Dringflake.native.path="}) {
            assertTrue(out.contains(part), "no \"" + part + "\" in: " + out);
        }
    }
}
