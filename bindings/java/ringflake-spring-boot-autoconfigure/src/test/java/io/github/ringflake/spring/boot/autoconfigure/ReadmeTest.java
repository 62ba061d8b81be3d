package io.github.ringflake.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.ringflake.RingflakeUidGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * bindings/java/README.md's snippets are code the tests compile and run: each Java block is the
 * code of a test source, the properties block is {@code readme-application.properties} (started
 * here), the bridge's XML is the bridge test's XML, the start-up report is the analyzer's text.
 */
class ReadmeTest {
    private static Path javaDir() {
        String repo = System.getProperty("ringflake.test.repo", "../../..");
        return Path.of(repo, "bindings", "java");
    }

    /** The README's fenced blocks of one language. */
    private static List<String> blocks(String lang) throws IOException {
        String readme = Files.readString(javaDir().resolve("README.md"));
        Matcher m = Pattern.compile("```" + lang + "\n(.*?)```", Pattern.DOTALL).matcher(readme);
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** Lines stripped, blank lines dropped: indentation is not content. */
    private static String norm(String s) {
        return s.lines().map(String::strip).filter(l -> !l.isEmpty()).collect(Collectors.joining("\n"));
    }

    private static String testSources() throws IOException {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.walk(javaDir())) {
            for (Path p : files.filter(f -> f.toString().endsWith(".java") || f.toString().endsWith(".xml"))
                    .filter(f -> f.toString().contains("/src/test/")).toList()) {
                all.append(norm(Files.readString(p))).append("\n");
            }
        }
        return all.toString();
    }

    @Test
    void everyJavaAndXmlSnippetIsTestedCode() throws IOException {
        String sources = testSources();
        List<String> java = blocks("java");
        assertThat(java).hasSizeGreaterThanOrEqualTo(2);
        for (String b : java) {
            assertThat(sources).as("README snippet not in any test source:\n" + b).contains(norm(b));
        }
        long beans = 0;
        for (String b : blocks("xml")) {
            if (b.contains("<bean")) {
                beans++;
                assertThat(sources).as("README XML not in the bridge test's XML:\n" + b).contains(norm(b));
            }
        }
        assertThat(beans).isEqualTo(1);
    }

    @Test
    void thePropertiesBlockStartsTheReadmesService(@TempDir Path dir) throws IOException {
        String block = blocks("properties").get(0);
        Properties props = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/readme-application.properties")) {
            props.load(in);
        }
        assertThat(norm(block)).isEqualTo(norm(new String(
                getClass().getResourceAsStream("/readme-application.properties").readAllBytes(), StandardCharsets.UTF_8)));
        assertThat(props).hasSize(3);
        List<String> pairs = new ArrayList<>();
        props.forEach((k, v) -> pairs.add(k + "=" + ("ringflake.state-file".equals(k) ? dir.resolve("r.state") : v)));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RingflakeAutoConfiguration.class))
                .withPropertyValues(pairs.toArray(new String[0]))
                .withUserConfiguration(Orders.class)
                .run(ctx -> {
                    Orders orders = ctx.getBean(Orders.class);
                    long a = orders.newOrderId();
                    assertThat(orders.newOrderId()).isGreaterThan(a);
                    assertThat(ctx.getBean(RingflakeUidGenerator.class).workerId()).isEqualTo(7);
                });
    }

    @Test
    void theStartupReportIsTheAnalyzersText() throws IOException {
        String text = blocks("text").get(0);
        InvalidRingflakePropertyException e = new InvalidRingflakePropertyException("ringflake.layout.time-bits",
                "31 (+ worker-bits 23 + seq-bits 10 = 64)", "time-bits + worker-bits + seq-bits must add up to 63");
        var analysis = new RingflakeFailureAnalyzer().analyze(e);
        assertThat(text).contains(analysis.getDescription()).contains(analysis.getAction());
    }

    /** The README's plain-builder snippet, against the MariaDB server when CI has one. */
    @Test
    void thePlainBuilder(@TempDir Path dir) {
        String url = System.getenv("RINGFLAKE_MYSQL_URL");
        Assumptions.assumeTrue(url != null, "RINGFLAKE_MYSQL_URL is not set");
        URI u = URI.create(url);
        String ca = u.getRawQuery().replaceAll(".*ssl-ca=([^&]*).*", "$1");
        String jdbcUrl = "jdbc:mariadb://" + u.getHost() + ":" + u.getPort() + u.getPath()
                + "?sslMode=verify-full&serverSslCert=" + ca;
        String user = u.getRawUserInfo().split(":", 2)[0];
        String password = URLDecoder.decode(u.getRawUserInfo().split(":", 2)[1], StandardCharsets.UTF_8);
        String stateFile = dir.resolve("ringflake.state").toString();
        // The table, if no other test made it yet (the snippet does not create it).
        RingflakeUidGenerator.builder().jdbcUrl(jdbcUrl, user, password).createTable(true)
                .shutdownHook(false).build().close();
        readmeBuilder(jdbcUrl, user, password, stateFile);
    }

    private static void readmeBuilder(String jdbcUrl, String user, String password, String stateFile) {
        RingflakeUidGenerator uid = RingflakeUidGenerator.builder()
                .layout(31, 23, 9)                 // Baidu's timeBits, workerBits, seqBits
                .epochDate("2016-05-20")           // Baidu's epochStr (midnight in the JVM's zone)
                .jdbcUrl(jdbcUrl, user, password)  // jdbc:mariadb://, jdbc:mysql://, jdbc:postgresql://
                .stateFile(stateFile)
                .build();
        long id = uid.getUID();
        String json = uid.parseUID(id);   // {"UID":"…","timestamp":"…","workerId":"…","sequence":"…"}
        uid.close();                      // or at JVM exit, by the shutdown hook
        assertThat(json).contains("\"UID\":\"" + id + "\"");
    }

    @Test
    void theReadmeNamesEveryPresetTheStarterTakes() throws IOException {
        String readme = Files.readString(javaDir().resolve("README.md")).replaceAll("\\s+", " ");
        Matcher m = Pattern.compile("`ringflake\\.layout\\.preset` \\(([^)]*)\\)").matcher(readme);
        assertThat(m.find()).as("the README's list of presets").isTrue();
        assertThat(m.group(1).replace("`", "")).isEqualTo(RingflakeSettings.PRESETS);
    }
}
