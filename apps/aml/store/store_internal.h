/*
 * Inside the store: what its files share. The layers above use store.h.
 *
 * A connection (aml_store) is SQLite (`db` set) or PostgreSQL (`pg` set,
 * store/pg_conn.c). Its statement cache holds aml_st values keyed by the address
 * of their static SQL text; each aml_st carries the backend's statement.
 */
#ifndef AML_STORE_INTERNAL_H
#define AML_STORE_INTERNAL_H

#include "store/store.h"

#include "store/pg_conn.h"

#include <pthread.h>
#include <sqlite3.h>

struct aml_st {
    aml_store *s;          /* the connection it belongs to */
    const char *sql;       /* the static SQL text (cache key: its address) */
    sqlite3_stmt *lite;    /* SQLite: the prepared statement */
    aml_pg_st *pg;         /* PostgreSQL: the prepared statement */
    int stream;            /* rows are fetched in batches (aml_stmt_stream) */
};

#define AML_STMT_CACHE 128

struct aml_store {
    aml_backend backend;
    sqlite3 *db;                   /* SQLite: the connection */
    aml_pg *pg;                    /* PostgreSQL: the connection (pg_conn.c) */
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

/** Seeds the data of schema version `version` (schema.c), inside its migration's transaction. */
int aml_store_seed(aml_store *s, int version, aml_err *err);

#endif /* AML_STORE_INTERNAL_H */
