package io.github.ringflake.baiducompat;

import com.baidu.fsg.uid.UidGenerator;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * Keeps every ID Baidu's unchanged test classes take: after Spring has injected their
 * {@code @Resource UidGenerator uidGenerator} field, this listener (registered for every Spring
 * test in {@code META-INF/spring.factories}) puts a {@link Recording} of the same bean in the
 * field. One recording per bean, so the two test methods of a class, which share Spring's cached
 * context, add to one.
 */
public final class RecordingListener extends AbstractTestExecutionListener {
    private static final Map<UidGenerator, Recording> RECORDINGS = new IdentityHashMap<>();

    /** Registered through {@code META-INF/spring.factories}. */
    public RecordingListener() {}

    /** After {@code DependencyInjectionTestExecutionListener} (2000): the field is set by then. */
    @Override
    public int getOrder() {
        return 5000;
    }

    @Override
    public void prepareTestInstance(TestContext testContext) throws Exception {
        Object test = testContext.getTestInstance();
        for (Field f : testContext.getTestClass().getDeclaredFields()) {
            if (f.getType() != UidGenerator.class) {
                continue;
            }
            f.setAccessible(true);
            UidGenerator bean = (UidGenerator) f.get(test);
            if (bean == null || bean instanceof Recording) {
                continue;
            }
            Recording r;
            synchronized (RECORDINGS) {
                r = RECORDINGS.computeIfAbsent(bean, b -> new Recording(b, testContext.getTestClass().getSimpleName()));
            }
            f.set(test, r);
        }
    }

    /** @return every recording so far, in no order */
    public static List<Recording> recordings() {
        synchronized (RECORDINGS) {
            return new ArrayList<>(RECORDINGS.values());
        }
    }
}
