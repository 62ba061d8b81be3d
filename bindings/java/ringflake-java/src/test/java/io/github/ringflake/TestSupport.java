package io.github.ringflake;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the tests find the repository, the jar and the test classes (set by build.sh). */
final class TestSupport {
    private TestSupport() {}

    static Path repo() {
        String given = System.getProperty("ringflake.test.repo");
        Path p = given != null ? Path.of(given) : Path.of("../..");
        if (!Files.isRegularFile(p.resolve("Cargo.toml"))) {
            throw new IllegalStateException("no repository at " + p.toAbsolutePath()
                    + ": run the tests with bindings/java/build.sh --test");
        }
        return p;
    }

    static Path property(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("system property " + name + " is not set: run the tests with"
                    + " bindings/java/build.sh --test");
        }
        return Path.of(v);
    }

    static Path jar() {
        return property("ringflake.test.jar");
    }

    static Path testClasses() {
        return property("ringflake.test.classes");
    }
}
