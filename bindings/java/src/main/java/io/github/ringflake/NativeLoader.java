package io.github.ringflake;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the native library the jar carries, as sqlite-jdbc and netty-tcnative do: the resource
 * {@code /io/github/ringflake/native/<os>-<arch>/<library file>} is copied to a new temporary
 * file and loaded from there. A new file for every class loader that loads this class: the JVM
 * refuses to load one file into two class loaders. The system property
 * {@code ringflake.native.path} names a library file to load instead (a build for a platform the
 * jar does not carry).
 */
final class NativeLoader {
    /** The system property naming a native library file to load instead of the jar's. */
    static final String PATH_PROPERTY = "ringflake.native.path";

    private static boolean loaded;

    private NativeLoader() {}

    /** {@code linux-x86_64}, {@code linux-aarch64}, {@code macos-aarch64}, … */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "macos"
                : os.startsWith("windows") ? "windows" : os.replace(' ', '_');
        String a = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return o + "-" + a;
    }

    /** The library's file name on this system: {@code libringflake_jni.so}, … */
    static String fileName() {
        return System.mapLibraryName("ringflake_jni");
    }

    static synchronized void load() {
        if (loaded) {
            return;
        }
        String given = System.getProperty(PATH_PROPERTY);
        if (given != null && !given.isEmpty()) {
            try {
                System.load(Path.of(given).toAbsolutePath().toString());
            } catch (UnsatisfiedLinkError e) {
                throw new RingflakeException("NativeLibrary",
                        "cannot load the native library " + given + " (system property "
                                + PATH_PROPERTY + "): " + e.getMessage(), e);
            }
            loaded = true;
            return;
        }
        String resource = "/io/github/ringflake/native/" + platform() + "/" + fileName();
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new RingflakeException("NativeLibrary",
                        "this jar carries no native library for " + platform() + " (no " + resource
                                + "): build one (bindings/java/README.md, \"Other platforms\") and"
                                + " name it with -D" + PATH_PROPERTY + "=/path/to/" + fileName());
            }
            Path file = Files.createTempFile("ringflake-jni-", "-" + fileName());
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            System.load(file.toAbsolutePath().toString());
            if (!platform().startsWith("windows")) {
                // Mapped: the file is no longer needed (Windows keeps it until exit).
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new RingflakeException("NativeLibrary",
                    "cannot extract the native library " + resource + " to a temporary file: " + e, e);
        } catch (UnsatisfiedLinkError e) {
            throw new RingflakeException("NativeLibrary",
                    "cannot load the native library " + resource + ": " + e.getMessage(), e);
        }
        loaded = true;
    }
}
