/*
 * The case store: the interface the layers above use (engine, tools,
 * commands). One SQLite database holding customers, accounts,
 * transactions (directed edges in integer minor units), cases,
 * assessments, SAR drafts, FX rates, dated jurisdiction lists and the
 * hash-chained audit log.
 *
 * Every statement is a static SQL text with `?` parameters bound through
 * sqlite3_bind_*; no SQL is ever built from input. Statements are prepared
 * once per connection and cached by the address of their text.
 *
 * The schema is versioned with PRAGMA user_version and upgraded by the
 * migrations in schema.c, each in its own transaction. PRAGMA application_id
 * marks the file as ours, so a stranger's database is refused with a clear
 * message instead of being modified.
 *
 * Thread-safety: one aml_store is one SQLite connection. Callers that share
 * it between threads hold aml_store_lock() around each use (the MCP tool
 * handlers do; the command-line tools are single-threaded).
 */
#ifndef AML_STORE_H
#define AML_STORE_H

#include "util/util.h"

#include <pthread.h>
#include <sqlite3.h>

#define AML_SCHEMA_VERSION 6
#define AML_APPLICATION_ID 0x414d4c31 /* "AML1" */

/* Open flags. */
#define AML_OPEN_CREATE 0x1u   /* create the file when missing */
#define AML_OPEN_READONLY 0x2u /* never write (audit verify, eval) */
#define AML_OPEN_CHECK 0x4u    /* run PRAGMA quick_check first: a damaged file is refused at start */

typedef struct aml_stmt_slot {
    const char *sql;    /* the static SQL text (cache key: its address) */
    sqlite3_stmt *stmt; /* prepared once */
} aml_stmt_slot;

#define AML_STMT_CACHE 128

typedef struct aml_store {
    sqlite3 *db;                          /* the connection */
    pthread_mutex_t mu;                   /* serialises users of the connection */
    aml_stmt_slot stmts[AML_STMT_CACHE];  /* prepared-statement cache */
    size_t nstmts;                        /* slots in use */
    int memory;                           /* in-memory database */
    char errmsg[256];                     /* last SQLite error text */
} aml_store;

/**
 * Opens (or creates) a case store and brings its schema up to date.
 * @param path a file, or NULL / ":memory:" for a private in-memory store.
 * @return 0, or -1 with a message that names the file and the cause
 *         ("is not a database", "was written by a newer version", ...).
 */
int aml_store_open(aml_store **out, const char *path, unsigned flags, aml_err *err);
/** Closes the store; NULL is a no-op. */
void aml_store_close(aml_store *s);

void aml_store_lock(aml_store *s);
void aml_store_unlock(aml_store *s);

/**
 * The cached prepared statement for a static SQL text, reset and with its
 * bindings cleared. NULL on a prepare error (message in s->errmsg).
 */
sqlite3_stmt *aml_stmt(aml_store *s, const char *sql);

/** Runs static SQL (no parameters, several statements allowed). */
int aml_exec(aml_store *s, const char *sql, aml_err *err);
int aml_begin(aml_store *s, aml_err *err);     /* BEGIN IMMEDIATE */
int aml_commit(aml_store *s, aml_err *err);
void aml_rollback(aml_store *s);

/* Binding helpers: NULL / negative-length strings bind NULL. */
void aml_bind_text(sqlite3_stmt *st, int i, const char *s);
void aml_bind_textn(sqlite3_stmt *st, int i, const char *s, size_t n);
void aml_bind_int(sqlite3_stmt *st, int i, int64_t v);
/** Binds v, or NULL when `present` is 0. */
void aml_bind_int_opt(sqlite3_stmt *st, int i, int64_t v, int present);

/** A column as text ("" for NULL, never NULL). */
const char *aml_col_text(sqlite3_stmt *st, int i);
/** Writes a column as a JSON string, or null when it is NULL. */
void aml_jw_col_text(mcp_jw *w, sqlite3_stmt *st, int i);
/** Writes a column as a JSON integer, or null when it is NULL. */
void aml_jw_col_int(mcp_jw *w, sqlite3_stmt *st, int i);

/** Steps a statement that returns no rows; 0 or -1 with the SQLite message. */
int aml_step_done(aml_store *s, sqlite3_stmt *st, aml_err *err);

/** meta table access (small key/value settings). */
int aml_meta_get(aml_store *s, const char *key, char *out, size_t n);
int aml_meta_set(aml_store *s, const char *key, const char *value, aml_err *err);

/* ---- accounts ------------------------------------------------------------ */

/** acct_no for an account id, or 0 when unknown. */
int64_t aml_account_no(aml_store *s, const char *account_id);
/** account id for an acct_no into out ("" when unknown). */
void aml_account_id(aml_store *s, int64_t acct_no, char *out, size_t n);

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
