/*
 * Bulk load through COPY ... FROM STDIN (store.h): PostgreSQL only, over
 * pg_conn.c's COPY buffer; errors become the store's like any statement's.
 */
#include "store/store_internal.h"

#include <string.h>

/* The connection's error as the store's: 0, or -1 with it in *err. */
static int copy_result(aml_store *s, int rc, aml_err *err)
{
    if (rc == 0)
        return 0;
    snprintf(s->errmsg, sizeof s->errmsg, "%s", aml_pg_errmsg(s->pg));
    s->err_unique = strcmp(aml_pg_sqlstate(s->pg), "23505") == 0;
    return aml_errf(err, "%s", s->errmsg);
}

int aml_copy_begin(aml_store *s, const char *sql, aml_err *err)
{
    if (!s->pg)
        return aml_errf(err, "COPY needs a PostgreSQL store (this one is SQLite)");
    return copy_result(s, aml_pg_copy_begin(s->pg, sql), err);
}

void aml_copy_textn(aml_store *s, const char *v, size_t n)
{
    aml_pg_copy_text(s->pg, v, n);
}

void aml_copy_text(aml_store *s, const char *v)
{
    aml_pg_copy_text(s->pg, v, v ? strlen(v) : 0);
}

void aml_copy_int(aml_store *s, int64_t v)
{
    aml_pg_copy_int(s->pg, v);
}

void aml_copy_int_opt(aml_store *s, int64_t v, int present)
{
    if (present)
        aml_pg_copy_int(s->pg, v);
    else
        aml_pg_copy_null(s->pg);
}

void aml_copy_null(aml_store *s)
{
    aml_pg_copy_null(s->pg);
}

int aml_copy_row_end(aml_store *s, aml_err *err)
{
    return copy_result(s, aml_pg_copy_row_end(s->pg), err);
}

int aml_copy_put(aml_store *s, const char *data, size_t n, aml_err *err)
{
    return copy_result(s, aml_pg_copy_put(s->pg, data, n), err);
}

int aml_copy_end(aml_store *s, aml_err *err)
{
    return copy_result(s, aml_pg_copy_end(s->pg, NULL), err);
}

int aml_bulk_keys(aml_store *s, int given, aml_err *err)
{
    return s->pg ? copy_result(s, aml_pg_bulk_keys(s->pg, given), err) : 0;
}

void aml_copy_abort(aml_store *s, const char *why)
{
    if (s->pg)
        aml_pg_copy_end(s->pg, why ? why : "aborted by the client");
}
