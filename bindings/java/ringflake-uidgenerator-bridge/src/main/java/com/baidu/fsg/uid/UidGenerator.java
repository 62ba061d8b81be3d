package com.baidu.fsg.uid;

import com.baidu.fsg.uid.exception.UidGenerateException;

/**
 * Baidu UidGenerator's interface, for code that injects it ({@code @Resource UidGenerator}):
 * backed by ringflake's native ring in this bridge ({@link com.baidu.fsg.uid.impl.CachedUidGenerator}).
 */
public interface UidGenerator {
    /**
     * A unique ID.
     *
     * @return the ID
     * @throws UidGenerateException if no ID can be made (the time bits ran out, the generator is closed, …)
     */
    long getUID() throws UidGenerateException;

    /**
     * The ID's fields as Baidu prints them:
     * {@code {"UID":"…","timestamp":"yyyy-MM-dd HH:mm:ss","workerId":"…","sequence":"…"}}.
     *
     * @param uid an ID of this layout
     * @return the JSON text
     */
    String parseUID(long uid);
}
