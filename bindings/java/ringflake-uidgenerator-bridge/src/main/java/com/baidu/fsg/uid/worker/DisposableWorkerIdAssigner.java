package com.baidu.fsg.uid.worker;

import io.github.ringflake.WorkerNodeTable;
import javax.sql.DataSource;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;

/**
 * Baidu UidGenerator's assigner: every boot inserts one row into the application's
 * {@code WORKER_NODE} table and takes its {@code ID} as the worker id (as Baidu's does, so Baidu's
 * Java nodes and {@code ringflake serve} nodes share the table; see
 * {@link io.github.ringflake.WorkerNodeTable} for the row).
 *
 * <p>The {@code DataSource} is the {@code dataSource} property when set, otherwise the
 * application context's single {@code DataSource} bean (Baidu's XML declares the assigner with no
 * properties and reaches the table through MyBatis; this bridge needs no MyBatis).
 */
public class DisposableWorkerIdAssigner implements WorkerIdAssigner, BeanFactoryAware {
    private DataSource dataSource;
    private BeanFactory beanFactory;

    /** An assigner; its data source is set or found in the context. */
    public DisposableWorkerIdAssigner() {}

    /**
     * The database holding {@code WORKER_NODE}.
     *
     * @param dataSource the data source
     */
    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = beanFactory;
    }

    /**
     * Inserts this boot's {@code WORKER_NODE} row.
     *
     * @return the row's {@code ID}
     * @throws io.github.ringflake.RingflakeException naming the database's error
     * @throws IllegalStateException with no data source set or in the context
     */
    @Override
    public long assignWorkerId() {
        DataSource ds = dataSource;
        if (ds == null && beanFactory != null) {
            ds = beanFactory.getBean(DataSource.class);
        }
        if (ds == null) {
            throw new IllegalStateException("DisposableWorkerIdAssigner: no DataSource (set its dataSource"
                    + " property, or declare one DataSource bean in the context)");
        }
        return WorkerNodeTable.assign(ds);
    }
}
