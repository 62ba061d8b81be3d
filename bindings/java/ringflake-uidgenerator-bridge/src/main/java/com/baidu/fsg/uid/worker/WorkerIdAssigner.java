package com.baidu.fsg.uid.worker;

/** Baidu UidGenerator's source of worker ids: a deployment may implement its own. */
public interface WorkerIdAssigner {
    /**
     * This process's worker id.
     *
     * @return the worker id
     */
    long assignWorkerId();
}
