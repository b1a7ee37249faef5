/*
 * Inside the store: what its files share. The layers above use store.h.
 *
 * A connection (aml_store) is SQLite (`db` set) or PostgreSQL (`pg` set,
 * store/pg.c). Its statement cache holds aml_st values keyed by the address
 * of their static SQL text; each aml_st carries the backend's statement.
 */
#ifndef AML_STORE_INTERNAL_H
#define AML_STORE_INTERNAL_H

#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>

struct aml_pg;    /* a PostgreSQL connection (pg.c) */
struct aml_pg_st; /* a PostgreSQL prepared statement and its current result (pg.c) */

struct aml_st {
    aml_store *s;          /* the connection it belongs to */
    const char *sql;       /* the static SQL text (cache key: its address) */
    sqlite3_stmt *lite;    /* SQLite: the prepared statement */
    struct aml_pg_st *pg;  /* PostgreSQL: the prepared statement */
};

#define AML_STMT_CACHE 128

struct aml_store {
    aml_backend backend;
    sqlite3 *db;                   /* SQLite: the connection */
    struct aml_pg *pg;             /* PostgreSQL: the connection */
    pthread_mutex_t mu;            /* serialises users of the connection */
    aml_st stmts[AML_STMT_CACHE];  /* prepared-statement cache */
    size_t nstmts;                 /* slots in use */
    int memory;                    /* in-memory SQLite database */
    int err_unique;                /* the last error was a unique violation */
    char errmsg[256];              /* the last error's text */
};

/** Runs the migrations from schema version `from` to AML_SCHEMA_VERSION (schema.c). */
int aml_store_migrate(aml_store *s, int64_t from, aml_err *err);

/** Finalizes every cached statement (after a rollback that removed tables they use). */
void aml_store_finalize_all(aml_store *s);

/* ---- the PostgreSQL backend (pg.c); each is called only when s->pg is set --- */

/** Connects to a postgresql:// URI, checks and migrates the schema. */
int aml_pg_open(aml_store *s, const char *uri, unsigned flags, aml_err *err);
void aml_pg_close(aml_store *s);
/** Prepares `st->sql` on the connection into st->pg; -1 with s->errmsg. */
int aml_pg_prepare(aml_store *s, aml_st *st);
void aml_pg_finalize(aml_st *st);
/** Drops the current result and the bindings. */
void aml_pg_clear(aml_st *st);
int aml_pg_step(aml_st *st);
void aml_pg_reset(aml_st *st);
void aml_pg_bind(aml_st *st, int i, const char *text, size_t n); /* text NULL: SQL NULL */
const char *aml_pg_col(aml_st *st, int i);                      /* NULL for SQL NULL */
int aml_pg_ncols(aml_st *st);
int aml_pg_exec(aml_store *s, const char *sql, aml_err *err);
int64_t aml_pg_changes(aml_store *s);
int aml_pg_in_tx(aml_store *s);

#endif /* AML_STORE_INTERNAL_H */
