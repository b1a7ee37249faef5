/*
 * A bounded pool of connections to one case store, for the server: each
 * tool call borrows a connection for its length, so calls on different
 * workers read the store in parallel instead of queueing on one
 * connection (docs/aml.md, "Concurrency").
 *
 * - SQLite file: N connections to the file in WAL mode, where readers
 *   never block each other or the writer. Writes are serialised in the
 *   process by the pool's write lock (aml_pool_write_lock), so two tool
 *   calls never wait in SQLite's busy handler, which sleeps in
 *   milliseconds; other processes writing the same file (the CLI) are
 *   waited for by the busy timeout and BEGIN IMMEDIATE.
 * - SQLite in memory (":memory:", the demo store): a private in-memory
 *   database exists only on the connection that made it, so the pool
 *   holds that one connection and tool calls take turns on it.
 * - PostgreSQL: N connections (each its own session); the write lock
 *   keeps the process's writing sections one at a time as on SQLite, and
 *   the audit chain across processes is kept by the database's advisory
 *   lock (store/audit.c).
 */
#ifndef AML_POOL_H
#define AML_POOL_H

#include "store/store.h"

/* The pool; opaque. */
typedef struct aml_pool aml_pool;

/* The most connections a pool opens. */
#define AML_POOL_MAX 256

/**
 * Makes a pool of `size` connections around `first`, an open store whose
 * ownership moves to the pool (even on failure, when it is closed). The
 * other size - 1 connections open `path` with `flags` (they find the
 * schema already migrated by `first`). An in-memory store, or size <= 1,
 * gives a pool of `first` alone.
 * @return 0, or -1 with err (a connection that would not open).
 * Thread-safety: call before the pool is shared.
 */
int aml_pool_new(aml_pool **out, aml_store *first, const char *path, unsigned flags, unsigned size, aml_err *err);
/** Closes every connection; all must have been released. NULL is a no-op. */
void aml_pool_free(aml_pool *p);
/** The number of connections. */
unsigned aml_pool_size(const aml_pool *p);
/** The most connections lent at the same time so far (tests, benchmarks). Thread-safe. */
unsigned aml_pool_peak(aml_pool *p);
/** The first connection (for work done before serving, on one thread). */
aml_store *aml_pool_first(aml_pool *p);

/**
 * Borrows a connection, waiting until one is free. The caller has it to
 * itself until aml_pool_release(). Thread-safe.
 */
aml_store *aml_pool_acquire(aml_pool *p);
/**
 * Returns a connection: a transaction left open is rolled back and every
 * statement reset, so no read snapshot outlives the call. Thread-safe.
 */
void aml_pool_release(aml_pool *p, aml_store *s);

/**
 * The process-wide write lock: held around every section that writes
 * (the audit append included), never while waiting for a connection.
 * Lock order: a connection, then tool-specific locks, then this one.
 * aml_pool_write_lock also ends any read snapshot `s` still holds (see
 * aml_store_idle) so the write starts from the newest data.
 */
void aml_pool_write_lock(aml_pool *p, aml_store *s);
void aml_pool_write_unlock(aml_pool *p);

#endif /* AML_POOL_H */
