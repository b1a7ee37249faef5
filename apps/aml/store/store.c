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

sqlite3_stmt *aml_stmt(aml_store *s, const char *sql)
{
    size_t h = ((uintptr_t)sql >> 3) % AML_STMT_CACHE;
    for (size_t k = 0; k < AML_STMT_CACHE; k++) {
        aml_stmt_slot *slot = &s->stmts[(h + k) % AML_STMT_CACHE];
        if (slot->sql == sql) {
            sqlite3_reset(slot->stmt);
            sqlite3_clear_bindings(slot->stmt);
            return slot->stmt;
        }
        if (!slot->sql) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
                snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
                sqlite3_finalize(st);
                return NULL;
            }
            slot->sql = sql;
            slot->stmt = st;
            s->nstmts++;
            return st;
        }
    }
    /* Cache full (a bug: there are fewer static statements than slots). */
    snprintf(s->errmsg, sizeof s->errmsg, "statement cache full");
    return NULL;
}

void aml_store_finalize_all(aml_store *s)
{
    for (size_t i = 0; i < AML_STMT_CACHE; i++) {
        if (s->stmts[i].stmt)
            sqlite3_finalize(s->stmts[i].stmt);
        s->stmts[i].stmt = NULL;
        s->stmts[i].sql = NULL;
    }
    s->nstmts = 0;
}

int aml_exec(aml_store *s, const char *sql, aml_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return aml_errf(err, "%s", s->errmsg);
    }
    return 0;
}

int aml_begin(aml_store *s, aml_err *err)
{
    return aml_exec(s, "BEGIN IMMEDIATE", err);
}

int aml_commit(aml_store *s, aml_err *err)
{
    return aml_exec(s, "COMMIT", err);
}

void aml_rollback(aml_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void aml_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

void aml_bind_textn(sqlite3_stmt *st, int i, const char *v, size_t n)
{
    if (v)
        sqlite3_bind_text(st, i, v, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

void aml_bind_int(sqlite3_stmt *st, int i, int64_t v)
{
    sqlite3_bind_int64(st, i, v);
}

void aml_bind_int_opt(sqlite3_stmt *st, int i, int64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

const char *aml_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

void aml_jw_col_text(mcp_jw *w, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, i));
}

void aml_jw_col_int(mcp_jw *w, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_int(w, sqlite3_column_int64(st, i));
}

int aml_step_done(aml_store *s, sqlite3_stmt *st, aml_err *err)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
        sqlite3_reset(st);
        return aml_errf(err, "%s", s->errmsg);
    }
    sqlite3_reset(st);
    return 0;
}

int aml_meta_get(aml_store *s, const char *key, char *out, size_t n)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT value FROM meta WHERE key = ?");
    out[0] = '\0';
    if (!st)
        return -1;
    aml_bind_text(st, 1, key);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    sqlite3_reset(st);
    return found ? 0 : -1;
}

int aml_meta_set(aml_store *s, const char *key, const char *value, aml_err *err)
{
    sqlite3_stmt *st = aml_stmt(s, "INSERT INTO meta(key, value) VALUES (?, ?) "
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

int aml_store_open(aml_store **out, const char *path, unsigned flags, aml_err *err)
{
    pthread_once(&sqlite_once, sqlite_setup);
    int memory = !path || strcmp(path, ":memory:") == 0;
    aml_store *s = calloc(1, sizeof *s);
    if (!s)
        return aml_errf(err, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
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
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- accounts -------------------------------------------------------------- */

int64_t aml_account_no(aml_store *s, const char *account_id)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT acct_no FROM accounts WHERE account_id = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, account_id);
    int64_t no = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return no;
}

void aml_account_id(aml_store *s, int64_t acct_no, char *out, size_t n)
{
    out[0] = '\0';
    sqlite3_stmt *st = aml_stmt(s, "SELECT account_id FROM accounts WHERE acct_no = ?");
    if (!st)
        return;
    aml_bind_int(st, 1, acct_no);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    sqlite3_reset(st);
}
