package com.baidu.fsg.uid.worker;

import io.github.ringflake.WorkerNodeTable;
import javax.sql.DataSource;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Baidu UidGenerator's assigner: every boot inserts one row into the application's
 * {@code WORKER_NODE} table and takes its {@code ID} as the worker id (as Baidu's does, so Baidu's
 * Java nodes and {@code ringflake serve} nodes share the table; see
 * {@link io.github.ringflake.WorkerNodeTable} for the row).
 *
 * <p>The {@code DataSource} is the {@code dataSource} property when set, otherwise the
 * application context's one {@code DataSource} bean (or its primary one), otherwise the bean named
 * {@code dataSource}: Baidu's XML declares the assigner with no properties and reaches the table
 * through MyBatis, whose {@code SqlSessionFactoryBean} takes {@code ref="dataSource"}, while its
 * {@code mybatis-spring.xml} declares a second pool, {@code abstractDataSource}, as that bean's
 * parent. This bridge needs no MyBatis.
 */
public class DisposableWorkerIdAssigner implements WorkerIdAssigner, BeanFactoryAware {
    /** The bean name Baidu's mybatis-spring.xml gives the application's pool. */
    private static final String BAIDU_DATA_SOURCE = "dataSource";

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
        DataSource ds = dataSource != null ? dataSource : fromContext();
        if (ds == null) {
            throw new IllegalStateException("DisposableWorkerIdAssigner: no DataSource (set its dataSource"
                    + " property, or declare one DataSource bean in the context)");
        }
        return WorkerNodeTable.assign(ds);
    }

    /** The context's one (or primary) DataSource, else the one named {@code dataSource}, else null. */
    private DataSource fromContext() {
        if (beanFactory == null) {
            return null;
        }
        DataSource unique = beanFactory.getBeanProvider(DataSource.class).getIfUnique();
        if (unique != null) {
            return unique;
        }
        if (beanFactory.containsBean(BAIDU_DATA_SOURCE) && beanFactory.isTypeMatch(BAIDU_DATA_SOURCE, DataSource.class)) {
            return beanFactory.getBean(BAIDU_DATA_SOURCE, DataSource.class);
        }
        if (beanFactory instanceof ListableBeanFactory l && l.getBeanNamesForType(DataSource.class).length > 1) {
            throw new IllegalStateException("DisposableWorkerIdAssigner: DataSource beans "
                    + String.join(", ", l.getBeanNamesForType(DataSource.class)) + " and none named "
                    + BAIDU_DATA_SOURCE + " or primary: set the assigner's dataSource property");
        }
        return null;
    }
}
