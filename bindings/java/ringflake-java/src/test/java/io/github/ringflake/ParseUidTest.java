package io.github.ringflake;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TimeZone;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** parseUID against the strings Baidu's own Java classes produced (tests/data). */
class ParseUidTest {
    private static final Pattern CONFIG = Pattern.compile("[A-Z]\\((\\d+),(\\d+),(\\d+)\\)");

    @Test
    void vectorsMatchBaidusStrings() throws Exception {
        List<String> lines = Files.readAllLines(TestSupport.repo().resolve("crates/ringflake-cli/tests/data/uidgenerator-vectors-utc.tsv"));
        int exact = 0;
        int refused = 0;
        for (String line : lines) {
            if (line.startsWith("#") || line.startsWith("config\t") || line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t");
            assertEquals(9, f.length, line);
            Matcher m = CONFIG.matcher(f[0]);
            assertTrue(m.matches(), f[0]);
            UidLayout layout = UidLayout.seconds(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)), Long.parseLong(f[2]));
            long uid = Long.parseLong(f[6]);
            if (uid < 0) {
                // Java's spill into the sign bit: a wrong answer there, an error here.
                RingflakeException e = assertThrows(RingflakeException.class, () -> layout.parseUID(uid, ZoneOffset.UTC));
                assertEquals("NegativeId", e.kind(), e.getMessage());
                refused++;
            } else {
                assertEquals(f[8], layout.parseUID(uid, ZoneOffset.UTC), "line: " + line);
                exact++;
            }
        }
        assertEquals(24, exact);
        assertEquals(2, refused);
    }

    @Test
    void farFutureDatesAsJavaRendersThem() throws Exception {
        List<String> lines = Files.readAllLines(TestSupport.repo().resolve("crates/ringflake-cli/tests/data/java-far-future-dates.tsv"));
        UidLayout layout = UidLayout.seconds(61, 1, 1, 0);
        int rows = 0;
        for (String line : lines) {
            if (line.startsWith("#") || line.startsWith("second\t") || line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t");
            long second = Long.parseLong(f[0]);
            String json = layout.parseUID(second << 2, ZoneId.of(f[1]));
            assertTrue(json.contains("\"timestamp\":\"" + f[2] + "\""), json + " lacks " + f[2]);
            rows++;
        }
        assertEquals(756, rows);
    }

    @Test
    void defaultZoneIsTheJvms() {
        UidLayout layout = UidLayout.seconds(29, 21, 13, 1_474_329_600L);
        TimeZone saved = TimeZone.getDefault();
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("Asia/Shanghai"));
            assertEquals("{\"UID\":\"17179877377\",\"timestamp\":\"2016-09-20 08:00:01\",\"workerId\":\"1\",\"sequence\":\"1\"}",
                    layout.parseUID(17_179_877_377L));
        } finally {
            TimeZone.setDefault(saved);
        }
    }

    @Test
    void presetsAndMilliseconds() {
        // Discord's documented ID: 2016-04-30 11:18:25.796 UTC, worker 1, process 0, increment 7.
        UidLayout discord = UidLayout.preset("discord");
        String json = discord.parseUID(175_928_847_299_117_063L, ZoneOffset.UTC);
        assertTrue(json.contains("\"timestamp\":\"2016-04-30 11:18:25.796\""), json);
        assertTrue(json.endsWith("\"sequence\":\"7\"}"), json);
        assertEquals(10, UidLayout.preset("twitter").workerBits());
        RingflakeException e = assertThrows(RingflakeException.class, () -> UidLayout.preset("snowflake"));
        assertEquals("UnknownLayout", e.kind());
        assertTrue(e.getMessage().contains("snowflake"), e.getMessage());
    }
}
