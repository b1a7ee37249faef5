/*
 * Operator settings (see config.h).
 */
#include "store/config.h"

#include <string.h>

int aml_config_get(aml_store *s, const char *key, char *out, size_t n)
{
    aml_st *st = aml_stmt(s, "SELECT value FROM settings WHERE key = ?");
    if (!st)
        return -1;
    aml_bind_text(st, 1, key);
    int rc = aml_step(st);
    if (rc == AML_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    else if (n)
        out[0] = '\0';
    aml_reset(st);
    return rc == AML_ROW ? 1 : rc == AML_DONE ? 0 : -1;
}

int aml_config_set(aml_store *s, const char *key, const char *value, const char *actor, aml_err *err)
{
    aml_st *st = aml_stmt(s, "INSERT INTO settings(key, value, set_by, set_at) VALUES (?, ?, ?, ?) "
                                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value, set_by = excluded.set_by, "
                                   "set_at = excluded.set_at");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    char now[21];
    aml_fmt_time(aml_now(), now);
    aml_bind_text(st, 1, key);
    aml_bind_text(st, 2, value);
    aml_bind_text(st, 3, actor ? actor : "unknown");
    aml_bind_text(st, 4, now);
    return aml_step_done(s, st, err);
}

int aml_config_unset(aml_store *s, const char *key, aml_err *err)
{
    aml_st *st = aml_stmt(s, "DELETE FROM settings WHERE key = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, key);
    return aml_step_done(s, st, err);
}

int aml_config_each(aml_store *s, const char *prefix,
                    void (*fn)(const char *key, const char *value, const char *set_by, const char *set_at, void *ud),
                    void *ud, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT key, value, set_by, set_at FROM settings "
                                   "WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, prefix ? prefix : "");
    int rc;
    while ((rc = aml_step(st)) == AML_ROW)
        fn(aml_col_text(st, 0), aml_col_text(st, 1), aml_col_text(st, 2), aml_col_text(st, 3), ud);
    aml_reset(st);
    return rc == AML_DONE ? 0 : aml_errf(err, "%s", aml_errmsg(s));
}
