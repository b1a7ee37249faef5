/*
 * The PostgreSQL backend of the case store (store_internal.h). Not built
 * yet: opening a postgresql:// store says so. The other hooks are never
 * reached, since no PostgreSQL connection can exist.
 */
#include "store/store_internal.h"

int aml_pg_open(aml_store *s, const char *uri, unsigned flags, aml_err *err)
{
    (void)s, (void)uri, (void)flags;
    return aml_errf(err, "PostgreSQL stores are not supported by this build");
}

void aml_pg_close(aml_store *s)
{
    (void)s;
}

int aml_pg_prepare(aml_store *s, aml_st *st)
{
    (void)st;
    snprintf(s->errmsg, sizeof s->errmsg, "no PostgreSQL connection");
    return -1;
}

void aml_pg_finalize(aml_st *st)
{
    (void)st;
}

void aml_pg_clear(aml_st *st)
{
    (void)st;
}

int aml_pg_step(aml_st *st)
{
    (void)st;
    return -1;
}

void aml_pg_reset(aml_st *st)
{
    (void)st;
}

void aml_pg_bind(aml_st *st, int i, const char *text, size_t n)
{
    (void)st, (void)i, (void)text, (void)n;
}

const char *aml_pg_col(aml_st *st, int i)
{
    (void)st, (void)i;
    return NULL;
}

int aml_pg_ncols(aml_st *st)
{
    (void)st;
    return 0;
}

int aml_pg_exec(aml_store *s, const char *sql, aml_err *err)
{
    (void)s, (void)sql;
    return aml_errf(err, "no PostgreSQL connection");
}

int64_t aml_pg_changes(aml_store *s)
{
    (void)s;
    return 0;
}

int aml_pg_in_tx(aml_store *s)
{
    (void)s;
    return 0;
}
