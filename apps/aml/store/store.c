/*
 * The case store on SQLite: opening (and upgrading through schema.c), the
 * statement cache, binding and column helpers, settings and account ids.
 * The audit log is in audit.c. See store.h.
 */
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- connection ------------------------------------------------------------ */

void aml_store_lock(aml_store *s)
{
    pthread_mutex_lock(&s->mu);
}

void aml_store_unlock(aml_store *s)
{
    pthread_mutex_unlock(&s->mu);
}

aml_backend aml_store_backend(const aml_store *s)
{
    return s->backend;
}

int aml_store_is_memory(const aml_store *s)
{
    return s->memory;
}

/*
 * SQLite drops a connection's page cache whenever another connection has
 * committed, and each scan thread then read its pages again (430,000
 * preads for the 1.7M-transaction bank with two threads against 250,000
 * with one). A map of the file lets the connections share the kernel's
 * one copy. It is not the default: a connection mapped while others write
 * to the file remaps it as the file grows and faults its pages in again,
 * which made the server's tool calls (each one a write) take about 1.4x
 * the CPU. SQLite maps at most the file's size, up to its compiled limit
 * (2 GB on Linux); pages past it are read as before.
 */
int aml_store_map(aml_store *s, int on, aml_err *err)
{
    if (s->pg || s->memory)
        return 0;
    return aml_exec(s, on ? "PRAGMA mmap_size = 2147418112" : "PRAGMA mmap_size = 0", err);
}

const char *aml_errmsg(const aml_store *s)
{
    return s->errmsg;
}

int aml_err_unique(const aml_store *s)
{
    return s->err_unique;
}

/* Records the connection's last SQLite error as the store's. */
static void lite_error(aml_store *s, int rc)
{
    snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
    s->err_unique = rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE;
}

/* Records the PostgreSQL connection's last error as the store's. */
static void pg_error(aml_store *s)
{
    snprintf(s->errmsg, sizeof s->errmsg, "%s", aml_pg_errmsg(s->pg));
    s->err_unique = strcmp(aml_pg_sqlstate(s->pg), "23505") == 0; /* unique_violation */
}

/* A PostgreSQL call's result: 0, or -1 with the error recorded and in *err. */
static int pg_result(aml_store *s, int rc, aml_err *err)
{
    if (rc == 0)
        return 0;
    pg_error(s);
    return aml_errf(err, "%s", s->errmsg);
}

static int prepare(aml_store *s, aml_st *st)
{
    if (s->pg) {
        /* aml_prepare's one-off SQL (outside the cache) is never prepared on the server: its text's address
         * may hold another text next time. */
        int oneshot = st < s->stmts || st >= s->stmts + AML_STMT_CACHE;
        st->pg = aml_pg_st_new(s->pg, st->sql, st->stream, oneshot);
        if (!st->pg)
            pg_error(s);
        return st->pg ? 0 : -1;
    }
    int rc = sqlite3_prepare_v3(s->db, st->sql, -1, SQLITE_PREPARE_PERSISTENT, &st->lite, NULL);
    if (rc != SQLITE_OK) {
        lite_error(s, rc);
        sqlite3_finalize(st->lite);
        st->lite = NULL;
        return -1;
    }
    return 0;
}

static void clear(aml_st *st)
{
    if (st->lite) {
        sqlite3_reset(st->lite);
        sqlite3_clear_bindings(st->lite);
    } else {
        aml_pg_clear(st->pg);
    }
}

static aml_st *cached(aml_store *s, const char *sql, int stream)
{
    size_t h = ((uintptr_t)sql >> 3) % AML_STMT_CACHE;
    for (size_t k = 0; k < AML_STMT_CACHE; k++) {
        aml_st *slot = &s->stmts[(h + k) % AML_STMT_CACHE];
        if (slot->sql == sql && slot->stream == stream) {
            clear(slot);
            return slot;
        }
        if (!slot->sql) {
            slot->s = s;
            slot->sql = sql;
            slot->stream = stream;
            if (prepare(s, slot)) {
                slot->sql = NULL;
                return NULL;
            }
            s->nstmts++;
            return slot;
        }
    }
    /* Cache full (a bug: there are fewer static statements than slots). */
    snprintf(s->errmsg, sizeof s->errmsg, "statement cache full");
    return NULL;
}

aml_st *aml_stmt(aml_store *s, const char *sql)
{
    return cached(s, sql, 0);
}

aml_st *aml_stmt_stream(aml_store *s, const char *sql)
{
    return cached(s, sql, s->pg != NULL);
}

aml_st *aml_prepare(aml_store *s, const char *sql)
{
    aml_st *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(s->errmsg, sizeof s->errmsg, "out of memory");
        return NULL;
    }
    st->s = s;
    st->sql = sql;
    if (prepare(s, st)) {
        free(st);
        return NULL;
    }
    return st;
}

void aml_finalize(aml_st *st)
{
    if (!st)
        return;
    if (st->lite)
        sqlite3_finalize(st->lite);
    aml_pg_st_free(st->pg);
    free(st);
}

int aml_step(aml_st *st)
{
    if (!st->lite) {
        int prc = aml_pg_step(st->pg);
        if (prc < 0)
            pg_error(st->s);
        return prc;
    }
    int rc = sqlite3_step(st->lite);
    if (rc == SQLITE_ROW)
        return AML_ROW;
    if (rc == SQLITE_DONE)
        return AML_DONE;
    lite_error(st->s, rc);
    return -1;
}

void aml_reset(aml_st *st)
{
    if (st->lite)
        sqlite3_reset(st->lite);
    else
        aml_pg_reset(st->pg);
}

void aml_store_finalize_all(aml_store *s)
{
    aml_prefetch_end(s);
    for (size_t i = 0; i < AML_STMT_CACHE; i++) {
        aml_st *st = &s->stmts[i];
        if (st->lite)
            sqlite3_finalize(st->lite);
        aml_pg_st_free(st->pg);
        memset(st, 0, sizeof *st);
    }
    s->nstmts = 0;
}

void aml_prefetch(aml_st *st)
{
    if (st && st->pg && st->s->pg)
        aml_pg_prefetch(st->pg);
}

void aml_prefetch_end(aml_store *s)
{
    if (s->pg)
        aml_pg_prefetch_end(s->pg);
}

void aml_store_idle(aml_store *s)
{
    aml_prefetch_end(s);
    for (size_t i = 0; i < AML_STMT_CACHE; i++)
        if (s->stmts[i].sql)
            aml_reset(&s->stmts[i]);
    if (aml_in_tx(s))
        aml_rollback(s);
}

int64_t aml_store_round_trips(const aml_store *s)
{
    return s->pg ? aml_pg_round_trips(s->pg) : 0;
}

int64_t aml_store_resets(const aml_store *s)
{
    return s->pg ? aml_pg_resets(s->pg) : 0;
}

void aml_store_check(aml_store *s)
{
    if (s->pg)
        aml_pg_check(s->pg);
}

int64_t aml_changes(aml_store *s)
{
    return s->pg ? aml_pg_changes(s->pg) : sqlite3_changes64(s->db);
}

int aml_in_tx(aml_store *s)
{
    return s->pg ? aml_pg_in_tx(s->pg) : !sqlite3_get_autocommit(s->db);
}

int aml_exec(aml_store *s, const char *sql, aml_err *err)
{
    if (s->pg)
        return pg_result(s, aml_pg_exec(s->pg, sql), err);
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", msg ? msg : sqlite3_errmsg(s->db));
        s->err_unique = sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY ||
                        sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE;
        sqlite3_free(msg);
        return aml_errf(err, "%s", s->errmsg);
    }
    return 0;
}

int aml_begin(aml_store *s, aml_err *err)
{
    return s->pg ? pg_result(s, aml_pg_begin(s->pg), err) : aml_exec(s, "BEGIN IMMEDIATE", err);
}

int aml_commit(aml_store *s, aml_err *err)
{
    return s->pg ? pg_result(s, aml_pg_commit(s->pg), err) : aml_exec(s, "COMMIT", err);
}

void aml_rollback(aml_store *s)
{
    if (s->pg)
        aml_pg_rollback(s->pg);
    else if (aml_in_tx(s))
        aml_exec(s, "ROLLBACK", NULL);
}

/* ---- binding and columns ----------------------------------------------------- */

void aml_bind_textn(aml_st *st, int i, const char *v, size_t n)
{
    if (!st->lite)
        aml_pg_bind(st->pg, i, v, n, AML_PG_UNKNOWN);
    else if (v)
        sqlite3_bind_text(st->lite, i, v, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st->lite, i);
}

void aml_bind_text(aml_st *st, int i, const char *v)
{
    aml_bind_textn(st, i, v, v ? strlen(v) : 0);
}

void aml_bind_static(aml_st *st, int i, const char *v)
{
    if (!st->lite)
        aml_pg_bind(st->pg, i, v, v ? strlen(v) : 0, AML_PG_UNKNOWN);
    else if (v)
        sqlite3_bind_text(st->lite, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st->lite, i);
}

void aml_bind_int(aml_st *st, int i, int64_t v)
{
    if (st->lite) {
        sqlite3_bind_int64(st->lite, i, v);
        return;
    }
    aml_pg_bind_int(st->pg, i, v);
}

void aml_bind_double(aml_st *st, int i, double v)
{
    if (st->lite) {
        sqlite3_bind_double(st->lite, i, v);
        return;
    }
    aml_pg_bind_double(st->pg, i, v);
}

void aml_bind_int_opt(aml_st *st, int i, int64_t v, int present)
{
    if (present)
        aml_bind_int(st, i, v);
    else
        aml_bind_textn(st, i, NULL, 0);
}

int aml_col_count(aml_st *st)
{
    return st->lite ? sqlite3_column_count(st->lite) : aml_pg_col_count(st->pg);
}

int aml_col_null(aml_st *st, int i)
{
    return st->lite ? sqlite3_column_type(st->lite, i) == SQLITE_NULL : aml_pg_col_null(st->pg, i);
}

int64_t aml_col_int(aml_st *st, int i)
{
    return st->lite ? sqlite3_column_int64(st->lite, i) : aml_pg_col_int(st->pg, i);
}

double aml_col_double(aml_st *st, int i)
{
    return st->lite ? sqlite3_column_double(st->lite, i) : aml_pg_col_double(st->pg, i);
}

const char *aml_col_text(aml_st *st, int i)
{
    if (!st->lite)
        return aml_pg_col_text(st->pg, i);
    const char *t = (const char *)sqlite3_column_text(st->lite, i);
    return t ? t : "";
}

void aml_jw_col_text(mcp_jw *w, aml_st *st, int i)
{
    if (aml_col_null(st, i))
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, i));
}

void aml_jw_col_int(mcp_jw *w, aml_st *st, int i)
{
    if (aml_col_null(st, i))
        mcp_jw_null(w);
    else
        mcp_jw_int(w, aml_col_int(st, i));
}

int aml_step_done(aml_store *s, aml_st *st, aml_err *err)
{
    int rc = aml_step(st);
    aml_reset(st);
    if (rc != AML_DONE && rc != AML_ROW)
        return aml_errf(err, "%s", s->errmsg);
    return 0;
}

int aml_step_id(aml_store *s, aml_st *st, int64_t *id, aml_err *err)
{
    int rc = aml_step(st);
    if (rc == AML_ROW) {
        *id = aml_col_int(st, 0);
        rc = aml_step(st);
    }
    aml_reset(st);
    if (rc != AML_DONE)
        return aml_errf(err, "%s", rc == AML_ROW ? "INSERT ... RETURNING gave more than one row" : s->errmsg);
    return 0;
}

int aml_meta_get(aml_store *s, const char *key, char *out, size_t n)
{
    aml_st *st = aml_stmt(s, "SELECT value FROM meta WHERE key = ?");
    out[0] = '\0';
    if (!st)
        return -1;
    aml_bind_text(st, 1, key);
    int found = aml_step(st) == AML_ROW;
    if (found)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    aml_reset(st);
    return found ? 0 : -1;
}

int aml_meta_set(aml_store *s, const char *key, const char *value, aml_err *err)
{
    aml_st *st = aml_stmt(s, "INSERT INTO meta(key, value) VALUES (?, ?) "
                                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    if (!st)
        return aml_errf(err, "%s", s->errmsg);
    aml_bind_text(st, 1, key);
    aml_bind_text(st, 2, value);
    return aml_step_done(s, st, err);
}

static int pragma_int(aml_store *s, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE)
        snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : -1;
}

/* SQLite's allocation statistics take a global mutex per malloc; nothing here reads them. */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;
static void sqlite_setup(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* The connection: read-only or writable, created when asked. */
static int open_connection(aml_store *s, const char *name, unsigned flags, aml_err *err)
{
    int oflags = (flags & AML_OPEN_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if ((flags & AML_OPEN_CREATE) && !(flags & AML_OPEN_READONLY))
        oflags |= SQLITE_OPEN_CREATE;
    oflags |= SQLITE_OPEN_NOMUTEX; /* aml_store_lock serialises users */
    int rc = sqlite3_open_v2(name, &s->db, oflags, NULL);
    if (rc != SQLITE_OK)
        return aml_errf(err, "%s: cannot open the case store: %s", name,
                        s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    return 0;
}

/* Reading the header catches a file that is not SQLite at all, and a stranger's database. */
static int check_header(aml_store *s, const char *name, int64_t *app, int64_t *ver, aml_err *err)
{
    int64_t ntables = 0;
    if (pragma_int(s, "PRAGMA application_id", app) || pragma_int(s, "PRAGMA user_version", ver) ||
        pragma_int(s, "SELECT count(*) FROM sqlite_schema", &ntables))
        return aml_errf(err, "%s: not a usable case store: %s", name, s->errmsg);
    if (*app != AML_APPLICATION_ID && (*app != 0 || ntables != 0))
        return aml_errf(err, "%s: is an SQLite database but not an mcp-server-aml case store "
                             "(application_id %lld); refusing to touch it", name, (long long)*app);
    return 0;
}

/* Reads every page once: damage anywhere is reported now, not in the middle of a tool call. */
static int check_integrity(aml_store *s, const char *name, aml_err *err)
{
    sqlite3_stmt *st = NULL;
    char first[200] = "";
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(st, 0));
    if (rc != SQLITE_ROW)
        snprintf(first, sizeof first, "%s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    if (strcmp(first, "ok") != 0)
        return aml_errf(err, "%s: the case store is damaged (integrity check: %s); restore it from a backup", name,
                        first);
    return 0;
}

/* An older schema is upgraded (a new file is marked as ours first); a read-only open cannot. */
static int upgrade(aml_store *s, const char *name, unsigned flags, int64_t app, int64_t ver, aml_err *err)
{
    if (flags & AML_OPEN_READONLY)
        return aml_errf(err, "%s: case store schema version %lld needs an upgrade to %d; open it writable once", name,
                        (long long)ver, AML_SCHEMA_VERSION);
    if (app == 0) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", AML_APPLICATION_ID);
        if (aml_exec(s, sql, err))
            return -1;
    }
    return aml_store_migrate(s, ver, err);
}

/* A libpq connection URI rather than a file name. */
static int is_pg_uri(const char *path)
{
    return path && (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

static int seed_pg(void *ud, int version, aml_err *err)
{
    return aml_store_seed(ud, version, err);
}

static int open_pg(aml_store **out, aml_store *s, const char *uri, unsigned flags, aml_err *err)
{
    s->backend = AML_BACKEND_PG;
    if (aml_pg_connect(&s->pg, uri, err) || aml_pg_schema_open(s->pg, flags, seed_pg, s, err)) {
        aml_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

int aml_store_open(aml_store **out, const char *path, unsigned flags, aml_err *err)
{
    pthread_once(&sqlite_once, sqlite_setup);
    int memory = !path || strcmp(path, ":memory:") == 0;
    aml_store *s = calloc(1, sizeof *s);
    if (!s)
        return aml_errf(err, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    if (is_pg_uri(path))
        return open_pg(out, s, path, flags, err);
    s->backend = AML_BACKEND_SQLITE;
    s->memory = memory;
    const char *name = memory ? ":memory:" : path;
    int64_t app = 0, ver = 0;
    int rc = open_connection(s, name, flags, err) || check_header(s, name, &app, &ver, err) ||
             ((flags & AML_OPEN_CHECK) && !memory && check_integrity(s, name, err));
    if (!rc && ver > AML_SCHEMA_VERSION)
        rc = aml_errf(err, "%s: case store schema version %lld was written by a newer mcp-server-aml "
                           "(this one knows up to %d)", name, (long long)ver, AML_SCHEMA_VERSION);
    if (!rc && !(flags & AML_OPEN_READONLY)) {
        aml_exec(s, "PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;"
                    "PRAGMA cache_size = -65536", NULL);
        if (!memory)
            aml_exec(s, "PRAGMA journal_mode = WAL", NULL);
    }
    if (!rc && ver < AML_SCHEMA_VERSION)
        rc = upgrade(s, name, flags, app, ver, err);
    if (rc) {
        aml_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

void aml_store_close(aml_store *s)
{
    if (!s)
        return;
    aml_store_finalize_all(s);
    aml_pg_free(s->pg);
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- accounts -------------------------------------------------------------- */

int64_t aml_account_no(aml_store *s, const char *account_id)
{
    aml_st *st = aml_stmt(s, "SELECT acct_no FROM accounts WHERE account_id = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, account_id);
    int64_t no = aml_step(st) == AML_ROW ? aml_col_int(st, 0) : 0;
    aml_reset(st);
    return no;
}

void aml_account_id(aml_store *s, int64_t acct_no, char *out, size_t n)
{
    out[0] = '\0';
    aml_st *st = aml_stmt(s, "SELECT account_id FROM accounts WHERE acct_no = ?");
    if (!st)
        return;
    aml_bind_int(st, 1, acct_no);
    if (aml_step(st) == AML_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    aml_reset(st);
}

int aml_bind_int_array(aml_st *st, int i, const int64_t *v, size_t n)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    int rc = aml_buf_puts(&b, "{") == MCP_OK ? 0 : -1;
    for (size_t k = 0; k < n && !rc; k++)
        rc = aml_buf_printf(&b, "%s%lld", k ? "," : "", (long long)v[k]) == MCP_OK ? 0 : -1;
    if (!rc)
        rc = aml_buf_puts(&b, "}") == MCP_OK ? 0 : -1;
    aml_bind_textn(st, i, rc ? NULL : b.data, rc ? 0 : b.len);
    mcp_buf_cleanup(&b);
    return rc;
}

int aml_bind_text_array(aml_st *st, int i, const char *const *v, size_t n)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    int rc = aml_buf_puts(&b, "{") == MCP_OK ? 0 : -1;
    for (size_t k = 0; k < n && !rc; k++) {
        if (k && aml_buf_puts(&b, ",") != MCP_OK)
            rc = -1;
        if (!v[k]) {
            rc = rc || aml_buf_puts(&b, "NULL") != MCP_OK ? -1 : 0;
            continue;
        }
        rc = rc || aml_buf_puts(&b, "\"") != MCP_OK ? -1 : 0;
        for (const char *p = v[k]; *p && !rc; p++) {
            size_t run = strcspn(p, "\"\\");
            if (run && mcp_buf_append(&b, p, run) != MCP_OK)
                rc = -1;
            p += run;
            if (!*p)
                break;
            char esc[2] = {'\\', *p};
            if (mcp_buf_append(&b, esc, 2) != MCP_OK)
                rc = -1;
        }
        rc = rc || aml_buf_puts(&b, "\"") != MCP_OK ? -1 : 0;
    }
    if (!rc)
        rc = aml_buf_puts(&b, "}") == MCP_OK ? 0 : -1;
    aml_bind_textn(st, i, rc ? NULL : b.data, rc ? 0 : b.len);
    mcp_buf_cleanup(&b);
    return rc;
}

/* The single-account and the many-account texts of each column (the second PostgreSQL's only). */
static const char *const acct_col_one[] = {"SELECT account_id FROM accounts WHERE acct_no = ?",
                                           "SELECT bank_id FROM accounts WHERE acct_no = ?"};
static const char *const acct_col_many[] = {
    "SELECT acct_no, account_id FROM accounts WHERE acct_no = ANY(CAST(? AS bigint[]))",
    "SELECT acct_no, bank_id FROM accounts WHERE acct_no = ANY(CAST(? AS bigint[]))"};

void aml_acct_map_init(aml_acct_map *m, aml_store *s, int col)
{
    memset(m, 0, sizeof *m);
    m->s = s;
    m->col = col == AML_ACCT_BANK ? AML_ACCT_BANK : AML_ACCT_ID;
}

void aml_acct_map_cleanup(aml_acct_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].text);
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* Where acct_no is or would go in the sorted entries; *found says which. */
static size_t acct_map_find(const aml_acct_map *m, int64_t acct_no, int *found)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].acct_no < acct_no)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < m->n && m->v[lo].acct_no == acct_no;
    return lo;
}

/* Adds an entry (text NULL for none) unless the account has one: the entry, or NULL out of memory. */
static aml_acct_ent *acct_map_put(aml_acct_map *m, int64_t acct_no, const char *text)
{
    int found;
    size_t at = acct_map_find(m, acct_no, &found);
    if (found)
        return &m->v[at];
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        aml_acct_ent *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv)
            return NULL;
        m->v = nv;
        m->cap = nc;
    }
    char *t = NULL;
    if (text && !(t = aml_strdup(text)))
        return NULL;
    memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof *m->v);
    m->v[at].acct_no = acct_no;
    m->v[at].text = t;
    m->n++;
    return &m->v[at];
}

int aml_acct_map_load(aml_acct_map *m, const int64_t *accts, size_t n)
{
    if (aml_store_backend(m->s) != AML_BACKEND_PG || !n)
        return 0;
    int64_t *want = malloc(n * sizeof *want);
    if (!want)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int found;
        acct_map_find(m, accts[i], &found);
        if (!found)
            want[k++] = accts[i];
    }
    aml_st *st = k ? aml_stmt(m->s, acct_col_many[m->col]) : NULL;
    int rc = k && (!st || aml_bind_int_array(st, 1, want, k)) ? -1 : 0;
    int step = AML_DONE;
    while (st && !rc && (step = aml_step(st)) == AML_ROW)
        if (!acct_map_put(m, aml_col_int(st, 0), aml_col_null(st, 1) ? NULL : aml_col_text(st, 1)))
            rc = -1;
    if (st)
        aml_reset(st);
    rc = rc || step != AML_DONE ? -1 : 0;
    /* The accounts asked for and not found are known to be absent: no statement of their own later. */
    for (size_t i = 0; i < k && !rc; i++)
        if (!acct_map_put(m, want[i], NULL))
            rc = -1;
    free(want);
    return rc;
}

const char *aml_acct_map_get(aml_acct_map *m, int64_t acct_no)
{
    int found;
    size_t at = acct_map_find(m, acct_no, &found);
    if (found)
        return m->v[at].text;
    aml_st *st = aml_stmt(m->s, acct_col_one[m->col]);
    if (!st)
        return NULL;
    aml_bind_int(st, 1, acct_no);
    int rc = aml_step(st);
    aml_acct_ent *e = NULL;
    if (rc == AML_ROW || rc == AML_DONE)
        e = acct_map_put(m, acct_no, rc == AML_ROW && !aml_col_null(st, 0) ? aml_col_text(st, 0) : NULL);
    aml_reset(st);
    return e ? e->text : NULL;
}
