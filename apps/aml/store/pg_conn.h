/*
 * Inside the store: the PostgreSQL connection under an aml_store opened on a
 * postgresql:// URI (pg_conn.c, pg_schema.c). store.c dispatches the
 * backend-neutral statement API of store.h here; nothing above the store
 * includes this file.
 *
 * One aml_pg is one libpq connection (the aml_store's lock serialises its
 * users, as for SQLite). Statements are static SQL texts with SQLite's `?`
 * / `?NNN` placeholders, translated to `$n` once and prepared once per
 * connection (PQprepare), cached by the address of the text. Parameters
 * travel as text; their types are declared at the first execution from the
 * first bindings (bigint for aml_bind_int, double precision for
 * aml_bind_double, left for PostgreSQL to infer for text and NULL). Results
 * are text and parsed by the column accessors.
 */
#ifndef AML_STORE_PG_CONN_H
#define AML_STORE_PG_CONN_H

#include "store/store.h"

#include <libpq-fe.h>
#include <stdint.h>

typedef struct aml_pg aml_pg;       /* a connection and its statement cache */
typedef struct aml_pg_st aml_pg_st; /* a prepared statement on it */

/* Type hints of a bound parameter (PostgreSQL type OIDs; 0 lets the server infer). */
#define AML_PG_UNKNOWN 0u
#define AML_PG_INT8 20u
#define AML_PG_FLOAT8 701u

/* Rows fetched per round trip by a streaming statement (a cursor). */
#define AML_PG_STREAM_BATCH 4096

/**
 * Connects to a libpq connection URI (postgresql://USER@HOST[:PORT]/DB?...;
 * PG* environment variables and the password file apply). A password inside
 * the URI is refused: it would show in process lists and shell histories.
 * Sets the session up (UTC, ISO dates, warnings only, UTF8).
 * @return 0, or -1 with a message naming the URI without any password.
 */
int aml_pg_connect(aml_pg **out, const char *uri, aml_err *err);
/** Closes the connection and frees every statement; NULL is a no-op. */
void aml_pg_free(aml_pg *pg);
/** The URI with any password removed: safe to print. */
const char *aml_pg_name(const aml_pg *pg);
/** The libpq connection (schema and tests). */
PGconn *aml_pg_conn(aml_pg *pg);

/**
 * The cached statement for a static text (keyed by its address), reset and
 * with its bindings cleared. `stream`: rows come through a cursor in
 * batches of AML_PG_STREAM_BATCH instead of all at once (see aml_stmt_stream
 * in store.h). NULL on error (aml_pg_errmsg).
 */
aml_pg_st *aml_pg_get(aml_pg *pg, const char *sql, int stream);
/**
 * A statement outside the cache (the caller frees it with aml_pg_st_free).
 * `oneshot`: never prepared, each run parsed anew (aml_prepare's one-off SQL).
 */
aml_pg_st *aml_pg_st_new(aml_pg *pg, const char *sql, int stream, int oneshot);
void aml_pg_st_free(aml_pg_st *st);
/**
 * Sends a bound cached statement ahead (aml_prefetch in store.h): it joins
 * the open pipeline (libpq pipeline mode), entered here when none is; the
 * pipeline is read in one go when the connection is next used otherwise,
 * each statement keeping its result for a run with the same values.
 */
void aml_pg_prefetch(aml_pg_st *st);
/** Reads the open pipeline and drops every result kept for a later run. */
void aml_pg_prefetch_end(aml_pg *pg);
/** Runs (at the first step) or advances: AML_ROW, AML_DONE or -1 (aml_pg_errmsg). */
int aml_pg_step(aml_pg_st *st);
/** Ends the current run (closing a stream's cursor); the bindings stay. */
void aml_pg_reset(aml_pg_st *st);
/** aml_pg_reset and clears the bindings. */
void aml_pg_clear(aml_pg_st *st);
/** Binds parameter i (1-based) to n bytes of v as text; v NULL binds NULL. */
void aml_pg_bind(aml_pg_st *st, int i, const char *v, size_t n, unsigned type);
void aml_pg_bind_int(aml_pg_st *st, int i, int64_t v);
void aml_pg_bind_double(aml_pg_st *st, int i, double v);

/* Columns of the current row (0-based); out of range reads as NULL. */
int aml_pg_col_null(aml_pg_st *st, int i);
/** Text of a column, "" for NULL; booleans read "1" / "0" as in SQLite. */
const char *aml_pg_col_text(aml_pg_st *st, int i);
/** Integer value: bigint text, a numeric or double truncated toward zero, t/f as 1/0; NULL is 0. */
int64_t aml_pg_col_int(aml_pg_st *st, int i);
double aml_pg_col_double(aml_pg_st *st, int i);
int aml_pg_col_count(aml_pg_st *st);

/** Runs static SQL without parameters (several statements allowed): 0 or -1. */
int aml_pg_exec(aml_pg *pg, const char *sql);
/** BEGIN / COMMIT / ROLLBACK. Committing a transaction an error aborted rolls it back and fails. */
int aml_pg_begin(aml_pg *pg);
int aml_pg_commit(aml_pg *pg);
void aml_pg_rollback(aml_pg *pg);
/** 1 inside a transaction (also one an error aborted), else 0. */
int aml_pg_in_tx(aml_pg *pg);
/** Rows the last INSERT/UPDATE/DELETE/COPY changed (PQcmdTuples). */
int64_t aml_pg_changes(aml_pg *pg);
/** The last error's text, and its SQLSTATE ("" when none). */
const char *aml_pg_errmsg(aml_pg *pg);
const char *aml_pg_sqlstate(aml_pg *pg);
/**
 * Round trips so far: requests this connection sent and then waited for
 * the server's answer to (a statement's run or prepare, a cursor's fetch,
 * an exec, one pipeline of statements sent ahead, a reconnect). Schema
 * checks at the open are not counted. See aml_store_round_trips.
 */
int64_t aml_pg_round_trips(const aml_pg *pg);
/** Times the connection was found lost and opened again (each reset prepares every statement again). */
int64_t aml_pg_resets(const aml_pg *pg);
/**
 * Between uses: finds out, without a round trip, whether the server ended
 * the idle session (pg_terminate_backend, a restart) and if so connects
 * again now, so the next statement runs instead of failing. @return 1 when
 * it reset the connection, else 0.
 */
int aml_pg_check(aml_pg *pg);

/*
 * COPY ... FROM STDIN in text format. Fields are escaped here (backslash,
 * tab, newline, carriage return); NULL is \N. Data is buffered and sent in
 * blocks of 64 KiB.
 */
int aml_pg_copy_begin(aml_pg *pg, const char *sql);
void aml_pg_copy_text(aml_pg *pg, const char *v, size_t n); /* v NULL: NULL */
void aml_pg_copy_int(aml_pg *pg, int64_t v);
void aml_pg_copy_null(aml_pg *pg);
/** Ends the row; -1 when sending failed (aml_pg_errmsg). */
int aml_pg_copy_row_end(aml_pg *pg);
/** Raw text-format data (already escaped, rows ending in newlines). */
int aml_pg_copy_put(aml_pg *pg, const char *data, size_t n);
/** Ends the COPY: 0 (aml_pg_changes = rows) or -1; `abort_why` non-NULL cancels it. */
int aml_pg_copy_end(aml_pg *pg, const char *abort_why);

/*
 * Advisory lock keys (pg_advisory_xact_lock, one-bigint form): "AML1" then
 * the lock's number. The rowid trigger locks (1095586865, hashtext(table))
 * in the two-integer form, a separate key space.
 */
#define AML_PG_LOCK_MIGRATE 0x414d4c3100000001LL /* schema migrations */
#define AML_PG_LOCK_AUDIT 0x414d4c3100000002LL   /* the audit hash chain */

/** Seeds the data of migration `version` (schema.c's), inside its transaction: 0 or -1. */
typedef int (*aml_pg_seed_fn)(void *ud, int version, aml_err *err);

/**
 * Recognises the database (pg_schema.c): an empty schema is set up, ours is
 * upgraded (each migration in its own transaction under an advisory lock,
 * `seed` called for its data), a stranger's or a newer one refused with a
 * message naming the URI without password. @return 0 or -1.
 */
int aml_pg_schema_open(aml_pg *pg, unsigned flags, aml_pg_seed_fn seed, void *ud, aml_err *err);
/** aml_bulk_keys (store.h): drops (given) or creates again the rowid triggers of transactions and accounts and
 * the primary key of transactions. */
int aml_pg_bulk_keys(aml_pg *pg, int given);

/**
 * Translates `?` and `?NNN` placeholders to `$n`, leaving string literals
 * ('..', E'..'), quoted identifiers, dollar-quoted strings and comments
 * alone. @return the new text (malloc'd) with *nparams set, or NULL when a
 * placeholder is out of range (1..32766) or on no memory.
 */
char *aml_pg_translate(const char *sql, int *nparams);

/** Writes uri without a password (user:password@ and password=...) into out. */
void aml_pg_redact(const char *uri, char *out, size_t n);

#endif /* AML_STORE_PG_CONN_H */
