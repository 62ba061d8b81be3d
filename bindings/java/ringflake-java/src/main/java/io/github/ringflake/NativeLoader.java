package io.github.ringflake;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
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

    /** Every platform a release may carry, in the jar's naming. */
    private static final List<String> KNOWN = List.of(
            "linux-x86_64", "linux-aarch64", "macos-x86_64", "macos-aarch64", "windows-x86_64");

    /**
     * The platforms this jar carries a native library for: those of {@link #KNOWN} whose library
     * file is among its resources (the manifest's {@code Ringflake-Native-Platforms} says the same).
     */
    static List<String> carried() {
        List<String> out = new ArrayList<>();
        for (String p : KNOWN) {
            String file = System.mapLibraryName("ringflake_jni");
            if (p.startsWith("macos")) {
                file = "libringflake_jni.dylib";
            } else if (p.startsWith("windows")) {
                file = "ringflake_jni.dll";
            } else if (p.startsWith("linux")) {
                file = "libringflake_jni.so";
            }
            if (NativeLoader.class.getResource("/io/github/ringflake/native/" + p + "/" + file) != null) {
                out.add(p);
            }
        }
        return out;
    }

    /** The message of the exception thrown on a platform the jar does not carry. */
    static String unsupported(String platform, String resource, List<String> carried) {
        return "ringflake: this jar carries no native library for " + platform + " (no " + resource
                + "); it carries " + (carried.isEmpty() ? "none" : String.join(", ", carried))
                + ". Build the library from source on this platform (cargo build -p ringflake-jni"
                + " --release, in the ringflake repository) and name it with -D" + PATH_PROPERTY
                + "=/path/to/" + fileName() + ", or put it in the jar: bindings/java/README.md,"
                + " \"Other platforms\"";
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
                throw new RingflakeException("UnsupportedPlatform",
                        unsupported(platform(), resource, carried()));
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
