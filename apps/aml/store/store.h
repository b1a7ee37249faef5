/*
 * The case store: the interface the layers above use (engine, tools,
 * commands). One database holding customers, accounts, transactions
 * (directed edges in integer minor units), cases, assessments, SAR drafts,
 * FX rates, dated jurisdiction lists and the hash-chained audit log.
 *
 * Two backends behind one statement API: SQLite (a file path, the embedded
 * default) and PostgreSQL (a postgresql:// connection URI, store/pg_conn.c).
 * Callers never see the backend's handles: they prepare static SQL texts
 * with `?` parameters (aml_stmt), bind (aml_bind_*), step (aml_step) and
 * read columns (aml_col_*). No SQL is ever built from input. Statements are
 * prepared once per connection and cached by the address of their text.
 * SQL texts are written in the dialect SQLite 3.40 and PostgreSQL 15 share
 * (ON CONFLICT ... DO NOTHING / DO UPDATE, RETURNING, CASE instead of the
 * scalar min/max, CAST(? AS TEXT) where a parameter's type is not implied);
 * where one text cannot serve both, the caller picks between two static
 * texts with aml_store_backend().
 *
 * The schema is versioned and upgraded by migrations, each in its own
 * transaction (schema.c for SQLite; PRAGMA application_id marks a file as
 * ours, so a stranger's database is refused with a clear message instead of
 * being modified).
 *
 * Thread-safety: one aml_store is one connection, used by one thread at a
 * time. The server keeps several in a pool (store/pool.h) and lends each
 * tool call one; callers that share one connection between threads hold
 * aml_store_lock() around each use (the command-line tools are
 * single-threaded).
 */
#ifndef AML_STORE_H
#define AML_STORE_H

#include "util/util.h"

#include <stdio.h>

#define AML_SCHEMA_VERSION 7
#define AML_APPLICATION_ID 0x414d4c31 /* "AML1" */

/* Open flags. */
#define AML_OPEN_CREATE 0x1u   /* create the file when missing */
#define AML_OPEN_READONLY 0x2u /* never write (audit verify, eval) */
#define AML_OPEN_CHECK 0x4u    /* SQLite: run PRAGMA quick_check first: a damaged file is refused at start */

typedef enum aml_backend {
    AML_BACKEND_SQLITE = 1,
    AML_BACKEND_PG = 2,
} aml_backend;

/* One connection to a case store; opaque (store_internal.h). */
typedef struct aml_store aml_store;
/* A prepared statement of one connection; opaque, owned by the connection's cache. */
typedef struct aml_st aml_st;

/* aml_step() results (errors are -1). */
#define AML_ROW 100
#define AML_DONE 101

/**
 * Opens (or creates) a case store and brings its schema up to date.
 * @param path a file, NULL / ":memory:" for a private in-memory SQLite
 *        store, or a postgresql:// (postgres://) libpq connection URI.
 * @return 0, or -1 with a message that names the store and the cause
 *         ("is not a database", "was written by a newer version", ...).
 */
int aml_store_open(aml_store **out, const char *path, unsigned flags, aml_err *err);
/** Closes the store; NULL is a no-op. */
void aml_store_close(aml_store *s);
/** Which backend the store runs on. */
aml_backend aml_store_backend(const aml_store *s);
/** 1 for a private in-memory SQLite store. */
int aml_store_is_memory(const aml_store *s);
/**
 * SQLite file store: when `on`, the connection reads through a map of the
 * file (PRAGMA mmap_size, up to 2 GB) instead of its own page cache, which
 * another connection's commit empties; when off (the default), through the
 * cache. For reading much of the file for seconds while others commit (the
 * scan's threads); a connection that maps while the file grows under
 * frequent writes spends more than it saves. No-op on PostgreSQL and an
 * in-memory store. Not while a statement of the connection is running.
 * @return 0, or -1 with the message.
 */
int aml_store_map(aml_store *s, int on, aml_err *err);

void aml_store_lock(aml_store *s);
void aml_store_unlock(aml_store *s);
/**
 * Makes the connection idle between uses: every cached statement reset
 * (on SQLite a statement left mid-rows keeps a read snapshot open, which
 * would hide other connections' commits and make a later write on this
 * connection fail with SQLITE_BUSY_SNAPSHOT) and an open transaction
 * rolled back.
 */
void aml_store_idle(aml_store *s);

/**
 * The cached prepared statement for a static SQL text, reset and with its
 * bindings cleared. NULL on a prepare error (message in aml_errmsg()).
 */
aml_st *aml_stmt(aml_store *s, const char *sql);
/**
 * Like aml_stmt, for a statement whose rows may be too many to hold at
 * once (the scan's transactions, the audit log): on PostgreSQL its rows
 * come through a cursor, AML_PG_STREAM_BATCH (4,096) per round trip, and
 * other statements may run between its steps. Started outside a
 * transaction the cursor is held (WITH HOLD: PostgreSQL keeps the result on
 * its side), so transactions may begin and commit between steps; started
 * inside one it lives in it and must be read before it ends. The cursor is
 * closed with the last row or the reset. On SQLite it is aml_stmt.
 */
aml_st *aml_stmt_stream(aml_store *s, const char *sql);

/**
 * Sends a cached, bound SELECT ahead of its use, so that several queries
 * whose parameters are known early cost one round trip together. On
 * PostgreSQL it joins a pipeline (libpq pipeline mode) with the other
 * statements sent ahead; the pipeline's answers are read when the
 * connection is next used, and each statement keeps its rows for its next
 * run: the caller gets it again later with aml_stmt, binds the same values
 * and steps it as usual, and reads the kept rows without a round trip (with
 * other values it runs afresh). Kept rows are dropped by aml_prefetch_end,
 * aml_exec, a transaction's begin, end or rollback and aml_store_idle, so
 * no write on this connection can be hidden by them. On SQLite a no-op
 * (each query costs no round trip there).
 */
void aml_prefetch(aml_st *st);
/** Drops every result kept by aml_prefetch (after reading the pipeline). */
void aml_prefetch_end(aml_store *s);

/**
 * A one-off statement, not cached: for SQL whose text is not one static
 * string (tests, reports). Free it with aml_finalize(). NULL on error.
 */
aml_st *aml_prepare(aml_store *s, const char *sql);
/** Frees a statement from aml_prepare(); NULL is a no-op. */
void aml_finalize(aml_st *st);
/** One step: AML_ROW (a row is readable), AML_DONE, or -1 (aml_errmsg()). */
int aml_step(aml_st *st);
/** Ends the statement's current run (rows not read are dropped); keeps the bindings. */
void aml_reset(aml_st *st);

/**
 * Round trips to the database server so far on this connection (PostgreSQL:
 * each statement run, prepare, cursor fetch or exec that waits for an
 * answer, and each pipeline of statements sent ahead, counts one); 0 on
 * SQLite, which has no server. For tests and benchmarks: the count of a
 * piece of work is robust against the machine's load, its wall time is not.
 * Thread-safety: as every use of the connection (the store's lock).
 */
int64_t aml_store_round_trips(const aml_store *s);
/**
 * How many times the connection to the database server was found lost and
 * opened again (0 on SQLite). A statement that noticed the loss failed;
 * statements after it ran on the new connection. A piece of work that
 * sees this figure change while it runs may have read a partial answer
 * (a failed read looks like no rows to some callers) and must not return
 * or store it. Thread-safety: as every use of the connection.
 */
int64_t aml_store_resets(const aml_store *s);
/**
 * Before a connection is used for a new piece of work (a tool call): a
 * PostgreSQL session the server ended while the connection was idle is
 * noticed without a round trip and opened again, so the work runs on a
 * working connection instead of failing at its first statement. A no-op
 * on SQLite. Thread-safety: as every use of the connection.
 */
void aml_store_check(aml_store *s);

/** The last error's text on this connection. */
const char *aml_errmsg(const aml_store *s);
/** 1 when the last error was a UNIQUE or PRIMARY KEY violation. */
int aml_err_unique(const aml_store *s);
/** Rows changed by the last INSERT, UPDATE or DELETE. */
int64_t aml_changes(aml_store *s);
/** 1 inside an explicit transaction. */
int aml_in_tx(aml_store *s);

/** Runs static SQL (no parameters, several statements allowed). */
int aml_exec(aml_store *s, const char *sql, aml_err *err);
int aml_begin(aml_store *s, aml_err *err); /* a write transaction (SQLite: BEGIN IMMEDIATE) */
int aml_commit(aml_store *s, aml_err *err);
void aml_rollback(aml_store *s);

/* Binding (1-based): NULL / negative-length strings bind NULL. */
void aml_bind_text(aml_st *st, int i, const char *s);
void aml_bind_textn(aml_st *st, int i, const char *s, size_t n);
void aml_bind_int(aml_st *st, int i, int64_t v);
void aml_bind_double(aml_st *st, int i, double v);
/** Binds a string that stays unchanged until the statement has run (no copy on SQLite). */
void aml_bind_static(aml_st *st, int i, const char *s);
/** Binds v, or NULL when `present` is 0. */
void aml_bind_int_opt(aml_st *st, int i, int64_t v, int present);
/**
 * Binds v[0, n) as the text of a PostgreSQL bigint array ("{1,2,3}"), for
 * a PostgreSQL-only text that reads `= ANY(CAST(? AS bigint[]))`: one
 * statement for many keys instead of one round trip each. @return 0, or -1
 * out of memory (then NULL is bound).
 */
int aml_bind_int_array(aml_st *st, int i, const int64_t *v, size_t n);
/**
 * Binds v[0, n) as the text of a PostgreSQL text array (each element
 * quoted, `"` and `\` escaped; a NULL element is NULL), for
 * `CAST(? AS text[])`. @return 0, or -1 out of memory (then NULL is bound).
 */
int aml_bind_text_array(aml_st *st, int i, const char *const *v, size_t n);

/* Columns (0-based) of the current row. */
int64_t aml_col_int(aml_st *st, int i);
double aml_col_double(aml_st *st, int i);
/** A column as text ("" for NULL, never NULL); valid until the next step or reset. */
const char *aml_col_text(aml_st *st, int i);
/** The number of columns in the statement's result. */
int aml_col_count(aml_st *st);
/** 1 when the column is NULL. */
int aml_col_null(aml_st *st, int i);
/** Writes a column as a JSON string, or null when it is NULL. */
void aml_jw_col_text(mcp_jw *w, aml_st *st, int i);
/** Writes a column as a JSON integer, or null when it is NULL. */
void aml_jw_col_int(mcp_jw *w, aml_st *st, int i);

/** Steps a statement that returns no rows; 0 or -1 with the store's message. */
int aml_step_done(aml_store *s, aml_st *st, aml_err *err);
/** Runs an INSERT ... RETURNING <integer key> and stores the key in *id; 0 or -1. */
int aml_step_id(aml_store *s, aml_st *st, int64_t *id, aml_err *err);

/*
 * Bulk load through COPY (PostgreSQL only; on SQLite aml_copy_begin fails
 * saying so). `sql` is a static "COPY table(columns) FROM STDIN"; each row
 * is its fields in order (aml_copy_text/_textn/_int/_int_opt/_null; text
 * is escaped here, NULL text is NULL), then aml_copy_row_end. Data is sent
 * in 64 KiB blocks; a constraint violation is reported by aml_copy_end,
 * which fails the whole COPY (aml_changes() = rows copied on success).
 * aml_copy_put sends bytes as they are, in the format the statement names
 * (text rows, or `(FORMAT binary)` with its header, rows and trailer).
 * While a COPY is open the connection runs nothing else.
 */
int aml_copy_begin(aml_store *s, const char *sql, aml_err *err);
void aml_copy_text(aml_store *s, const char *v);
void aml_copy_textn(aml_store *s, const char *v, size_t n);
void aml_copy_int(aml_store *s, int64_t v);
void aml_copy_int_opt(aml_store *s, int64_t v, int present);
void aml_copy_null(aml_store *s);
int aml_copy_row_end(aml_store *s, aml_err *err);
int aml_copy_put(aml_store *s, const char *data, size_t n, aml_err *err);
int aml_copy_end(aml_store *s, aml_err *err);
/**
 * A bulk load that gives every key itself, inside its transaction
 * (PostgreSQL): given = 1 drops the rowid triggers of transactions and
 * accounts (with a BEFORE ROW trigger on the table COPY inserts row by row
 * instead of in batches) and the primary key of transactions (an index
 * entry per row costs more than building it in one sort), given = 0
 * creates them again before the commit (a rollback restores them anyway;
 * fails when the load gave a txn_no twice). Meanwhile an INSERT without its
 * key fails on the NOT NULL key, a lookup by txn_no scans the table, and
 * both tables are held exclusively until the transaction ends. A no-op on
 * SQLite.
 */
int aml_bulk_keys(aml_store *s, int given, aml_err *err);
/** Cancels an open COPY: nothing of it is kept. */
void aml_copy_abort(aml_store *s, const char *why);

/** meta table access (small key/value settings). */
int aml_meta_get(aml_store *s, const char *key, char *out, size_t n);
int aml_meta_set(aml_store *s, const char *key, const char *value, aml_err *err);

/* ---- accounts ------------------------------------------------------------ */

/** acct_no for an account id, or 0 when unknown. */
int64_t aml_account_no(aml_store *s, const char *account_id);
/** account id for an acct_no into out ("" when unknown). */
void aml_account_id(aml_store *s, int64_t acct_no, char *out, size_t n);

/* Which column an aml_acct_map reads. */
#define AML_ACCT_ID 0   /* account_id */
#define AML_ACCT_BANK 1 /* bank_id */

/* One account's column in an aml_acct_map. */
typedef struct aml_acct_ent {
    int64_t acct_no; /* the key */
    char *text;      /* the column (malloc), NULL when NULL or no such account */
} aml_acct_ent;

/*
 * A column of accounts read for one piece of work (an assessment's account
 * ids, the banks of a fan's counterparties): the accounts named ahead with
 * aml_acct_map_load cost one statement together on PostgreSQL instead of
 * one round trip each; any other is read when first asked for, and every
 * answer is kept until the cleanup. On SQLite (no round trips) the load
 * does nothing and each account is read when asked for, as before.
 * Accounts do not change while a map lives (its owner holds the store).
 */
typedef struct aml_acct_map {
    aml_store *s;     /* the store read */
    int col;          /* AML_ACCT_ID or AML_ACCT_BANK */
    aml_acct_ent *v;  /* entries, ascending by acct_no (malloc) */
    size_t n, cap;    /* entries used and allocated */
} aml_acct_map;

/** An empty map of column `col` over store s (no allocation). */
void aml_acct_map_init(aml_acct_map *m, aml_store *s, int col);
/** Frees the entries; the map may be loaded again after. NULL is a no-op. */
void aml_acct_map_cleanup(aml_acct_map *m);
/**
 * Reads the column of accts[0, n) not in the map yet, in one statement on
 * PostgreSQL (a no-op on SQLite). Duplicates and unknown accounts are fine.
 * @return 0, or -1 on a store error or out of memory (the map keeps what
 *         it had; later gets read one by one).
 */
int aml_acct_map_load(aml_acct_map *m, const int64_t *accts, size_t n);
/**
 * The column of one account, read now when the map lacks it; NULL when the
 * account is unknown, the column NULL, or on a store error. Valid until the
 * cleanup.
 */
const char *aml_acct_map_get(aml_acct_map *m, int64_t acct_no);

/* ---- audit log --------------------------------------------------------- */

/* One audit entry to append. */
typedef struct aml_audit_entry {
    const char *actor;           /* who: the MCP client / CLI user */
    const char *action;          /* "tool.assessCase", "cli.import", ... */
    const char *case_id;         /* or NULL */
    const char *request_sha256;  /* digest of the canonical arguments */
    const char *response_sha256; /* digest of the result, or NULL */
    const char *outcome;         /* "ok" | "error" | "denied" */
    const char *detail;          /* short, no personal data, or NULL */
} aml_audit_entry;

/**
 * Appends an entry to the hash chain: entry_hash = SHA-256 over the
 * previous entry's hash and the length-prefixed fields of this row.
 * Runs in its own transaction unless one is open.
 */
int aml_audit_append(aml_store *s, const aml_audit_entry *e, aml_err *err);

/**
 * Recomputes the chain. Writes a report to `out` (may be NULL).
 * @return 0 when intact; 1 when broken (*bad_seq = first bad row);
 *         -1 on a database error.
 */
int aml_audit_verify(aml_store *s, FILE *out, int64_t *bad_seq, aml_err *err);

#endif /* AML_STORE_H */
