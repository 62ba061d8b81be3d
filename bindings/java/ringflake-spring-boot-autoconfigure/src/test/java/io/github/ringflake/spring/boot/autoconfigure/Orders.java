package io.github.ringflake.spring.boot.autoconfigure;

import io.github.ringflake.RingflakeUidGenerator;
import org.springframework.stereotype.Service;

/** The README's service, compiled and run by {@link ReadmeTest}. */
@Service
public class Orders {
    private final RingflakeUidGenerator uid;

    public Orders(RingflakeUidGenerator uid) {
        this.uid = uid;
    }

    public long newOrderId() {
        return uid.getUID();
    }
}
