/*
 * PostgreSQL for the store tests (tests/README.md, "Both stores"). With
 * AML_TEST_DB set to a libpq URI (tests/lib/pg.sh sets it), every fresh
 * store a test asks for is a fresh PostgreSQL schema of that database
 * (t_PID_N, made here through libpq), opened through a URI that puts it
 * first on search_path: tests never see each other's tables, and the
 * throwaway cluster is removed whole at the end.
 */
#ifndef AML_PGTEST_H
#define AML_PGTEST_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** The PostgreSQL URI under test, or NULL when the tests run on SQLite. */
static inline const char *pgt_base(void)
{
    const char *u = getenv("AML_TEST_DB");
    return u && (strncmp(u, "postgresql://", 13) == 0 || strncmp(u, "postgres://", 11) == 0) ? u : NULL;
}

/** Runs SQL on the base database through a connection of its own: 0 or -1 (printed). */
static inline int pgt_exec(const char *sql)
{
    PGconn *c = PQconnectdb(pgt_base());
    int rc = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
        if (rc)
            fprintf(stderr, "pgtest: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
    } else {
        fprintf(stderr, "pgtest: %s", PQerrorMessage(c));
    }
    PQfinish(c);
    return rc;
}

/**
 * A URI for a new empty schema of the test database (created here), into
 * out; `schema_out` (may be NULL) receives the schema's name. 0 or -1.
 */
static inline int pgt_fresh(char *out, size_t n, char *schema_out, size_t sn)
{
    static int counter;
    char schema[64], sql[128];
    snprintf(schema, sizeof schema, "t_%d_%d", (int)getpid(), ++counter);
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
    if (pgt_exec(sql))
        return -1;
    const char *base = pgt_base();
    snprintf(out, n, "%s%soptions=-csearch_path%%3D%s", base, strchr(base, '?') ? "&" : "?", schema);
    if (schema_out)
        snprintf(schema_out, sn, "%s", schema);
    return 0;
}

#endif /* AML_PGTEST_H */
