/*
 * The case store: schema and migrations, refusing damaged, foreign and
 * newer files with a clear message, the hash-chained audit log (intact,
 * altered, truncated, protected by triggers), parameterized statements,
 * and the utilities underneath (CSV, time, money, cursors, sorted sets).
 */
#include "amltest.h"

#include <sqlite3.h>

/* Removes a store file and the WAL and shared-memory files SQLite keeps
 * beside it (a read-only open leaves them behind). */
static void remove_db(const char *buf)
{
    unlink(buf);
    char side[600];
    snprintf(side, sizeof side, "%s-wal", buf);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", buf);
    unlink(side);
}

static const char *tmp_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/aml-store-test-%d-%s", (int)getpid(), name);
    remove_db(buf);
    return buf;
}

static int64_t pragma(aml_store *s, const char *sql)
{
    aml_st *st = NULL;
    int64_t v = -1;
    if ((st = aml_prepare(s, sql)) != NULL && aml_step(st) == AML_ROW)
        v = aml_col_int(st, 0);
    aml_finalize(st);
    return v;
}

/* Drops a trigger of audit_log, as someone with database access could. */
static int drop_trigger(aml_store *s, const char *name)
{
    char sql[128];
    snprintf(sql, sizeof sql, "DROP TRIGGER %s%s", name, aml_store_backend(s) == AML_BACKEND_PG ? " ON audit_log" : "");
    aml_err err = {{0}};
    int rc = aml_exec(s, sql, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", sql, err.msg);
    return rc;
}

static void test_migrations(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    if (amltest_pg()) {
        T_EQ_INT(pragma(s, "SELECT version FROM aml_schema"), AML_SCHEMA_VERSION);
        T_EQ_INT(pragma(s, "SELECT application_id FROM aml_schema"), AML_APPLICATION_ID);
        T_TRUE(pragma(s, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()") >= 18);
    } else {
        T_EQ_INT(pragma(s, "PRAGMA user_version"), AML_SCHEMA_VERSION);
        T_EQ_INT(pragma(s, "PRAGMA application_id"), AML_APPLICATION_ID);
        T_TRUE(pragma(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'") >= 18);
    }
    T_TRUE(pragma(s, "SELECT count(*) FROM fx_rates") >= 10);
    T_EQ_INT(pragma(s, "SELECT count(*) FROM jurisdiction_lists WHERE list_name = 'fatf_call_for_action'"), 3);
    aml_store_close(s);
    aml_store_close(NULL);
}

static void test_reopen(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("reopen.db", path, sizeof path);
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_meta_set(s, "k", "v1", &err), 0);
    aml_store_close(s);
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CHECK, &err), 0);
    char v[16];
    T_EQ_INT(aml_meta_get(s, "k", v, sizeof v), 0);
    T_EQ_STR(v, "v1");
    T_EQ_INT(pragma(s, "PRAGMA user_version"), AML_SCHEMA_VERSION);
    aml_store_close(s);
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_READONLY, &err), 0);
    aml_store_close(s);
    remove_db(path);
}

static void test_missing_file(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("missing.db", path, sizeof path);
    aml_store *s = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, 0, &err), -1);
    T_TRUE(strstr(err.msg, path) != NULL);
    T_TRUE(access(path, F_OK) != 0);
}

static void test_garbage_file(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("garbage.db", path, sizeof path);
    FILE *f = fopen(path, "wb");
    T_NOT_NULL(f);
    for (int i = 0; i < 8192; i++)
        fputc((i * 7919 + 13) & 0xff, f);
    fclose(f);
    aml_store *s = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CREATE | AML_OPEN_CHECK, &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    T_TRUE(strstr(err.msg, "not a usable case store") != NULL);
    T_TRUE(strstr(err.msg, "not a database") != NULL);
    remove_db(path);
}

/* A real store with data, then damaged: truncated, or a page overwritten. */
static void make_store(const char *path)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, path, AML_OPEN_CREATE, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.customers = 30;
    o.days = 40;
    o.instances = 1;
    o.lookalikes = 0;
    o.inject = 1u << AML_T01;
    if (aml_gen_store(s, &o, NULL, &err))
        fprintf(stderr, "%s\n", err.msg);
    aml_store_close(s);
}

static void test_damaged_file(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("damaged.db", path, sizeof path);
    make_store(path);
    struct stat sb;
    T_EQ_INT(stat(path, &sb), 0);
    T_TRUE(sb.st_size > 64 * 1024);
    /* Overwrite the middle of the file. */
    FILE *f = fopen(path, "r+b");
    T_NOT_NULL(f);
    fseek(f, sb.st_size / 2, SEEK_SET);
    for (int i = 0; i < 8192; i++)
        fputc(0xA5, f);
    fclose(f);
    aml_store *s = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CHECK, &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    T_TRUE(strstr(err.msg, "damaged") != NULL || strstr(err.msg, "malformed") != NULL);
    /* Truncated to a third. */
    T_EQ_INT(truncate(path, sb.st_size / 3), 0);
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CHECK, &err), -1);
    fprintf(stderr, "  (expected) %s\n", err.msg);
    remove_db(path);
}

static void test_foreign_db(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("foreign.db", path, sizeof path);
    sqlite3 *db;
    T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(db, "CREATE TABLE orders(id INTEGER); INSERT INTO orders VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    aml_store *s = NULL;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CREATE, &err), -1);
    T_TRUE(strstr(err.msg, "not an mcp-server-aml case store") != NULL);
    /* Untouched: no tables of ours were added. */
    T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL);
    sqlite3_step(st);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    T_EQ_INT(n, 1);
    remove_db(path);
}

static void test_newer_schema(void)
{
    if (amltest_pg())
        return; /* about SQLite files; aml.store.pg has the PostgreSQL cases */
    char path[512];
    tmp_path("newer.db", path, sizeof path);
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, path, AML_OPEN_CREATE, &err), 0);
    T_EQ_INT(aml_exec(s, "PRAGMA user_version = 99", &err), 0);
    aml_store_close(s);
    T_EQ_INT(aml_store_open(&s, path, 0, &err), -1);
    T_TRUE(strstr(err.msg, "newer") != NULL);
    remove_db(path);
}

static void append(aml_store *s, int i)
{
    char req[65], detail[32];
    snprintf(detail, sizeof detail, "call %d", i);
    aml_sha256_hex(detail, strlen(detail), req);
    aml_audit_entry e = {"tester", "tool.assessCase", "CASE-0001", req, req, i % 3 ? "ok" : "error", detail};
    aml_err err = {{0}};
    if (aml_audit_append(s, &e, &err))
        fprintf(stderr, "%s\n", err.msg);
}

static void test_audit_intact(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    int64_t bad = 0;
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 0); /* empty log */
    for (int i = 0; i < 6; i++)
        append(s, i);
    T_EQ_INT(pragma(s, "SELECT count(*) FROM audit_log"), 6);
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 0);
    /* The triggers refuse edits and deletions. */
    T_EQ_INT(aml_exec(s, "UPDATE audit_log SET outcome = 'ok' WHERE seq = 3", &err), -1);
    T_TRUE(strstr(err.msg, "append-only") != NULL);
    T_EQ_INT(aml_exec(s, "DELETE FROM audit_log WHERE seq = 6", &err), -1);
    aml_store_close(s);
}

static void test_audit_tampered(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    for (int i = 0; i < 6; i++)
        append(s, i);
    /* Someone with file access drops the trigger and rewrites row 3. */
    T_EQ_INT(drop_trigger(s, "audit_no_update"), 0);
    T_EQ_INT(aml_exec(s, "UPDATE audit_log SET outcome = 'ok', detail = 'nothing' "
                         "WHERE seq = 3",
                      &err),
             0);
    int64_t bad = 0;
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 1);
    T_EQ_INT(bad, 3);
    aml_store_close(s);
}

static void test_audit_rehashed_row(void)
{
    /* Recomputing a row's own hash is not enough: the next row's prev_hash breaks. */
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    for (int i = 0; i < 4; i++)
        append(s, i);
    T_EQ_INT(drop_trigger(s, "audit_no_update"), 0);
    T_EQ_INT(aml_exec(s, "UPDATE audit_log SET entry_hash = "
                         "'0000000000000000000000000000000000000000000000000000000000000001' WHERE seq = 2",
                      &err),
             0);
    int64_t bad = 0;
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 1);
    T_EQ_INT(bad, 2);
    aml_store_close(s);
}

static void test_audit_deleted(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(amltest_open(&s, &err), 0);
    for (int i = 0; i < 5; i++)
        append(s, i);
    T_EQ_INT(drop_trigger(s, "audit_no_delete"), 0);
    T_EQ_INT(aml_exec(s, "DELETE FROM audit_log WHERE seq = 5", &err), 0);
    int64_t bad = 0;
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 1); /* cut from the end */
    T_EQ_INT(bad, 5);
    T_EQ_INT(aml_exec(s, "DELETE FROM audit_log WHERE seq = 2", &err), 0);
    T_EQ_INT(aml_audit_verify(s, NULL, &bad, &err), 1); /* a gap */
    T_EQ_INT(bad, 2);
    aml_store_close(s);
}

static void test_parameterized(void)
{
    static const char hostile[] = "Robert'); DROP TABLE customers; --";
    fx f;
    fx_begin(&f);
    fx_cust(&f, "C'1\"--", hostile, "individual", "\" OR 1=1 --", 100, 10, 0);
    fx_acct(&f, "ACC';DELETE FROM accounts;--", "C'1\"--", 0, "CA", "US", NULL);
    aml_store *s = fx_end(&f);
    T_NOT_NULL(s);
    aml_st *st = aml_stmt(s, "SELECT full_name, occupation FROM customers WHERE customer_id = ?");
    T_NOT_NULL(st);
    aml_bind_text(st, 1, "C'1\"--");
    T_EQ_INT(aml_step(st), AML_ROW);
    T_EQ_STR(aml_col_text(st, 0), hostile);
    T_EQ_STR(aml_col_text(st, 1), "\" OR 1=1 --");
    aml_reset(st);
    T_TRUE(aml_account_no(s, "ACC';DELETE FROM accounts;--") > 0);
    T_EQ_INT(pragma(s, "SELECT count(*) FROM accounts"), 1);
    aml_store_close(s);
}

static void test_csv(void)
{
    static const char text[] = "a,b,c\r\n\"x,1\",\"he said \"\"hi\"\"\",\"multi\nline\"\n,,\nlast,row";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "rb");
    T_NOT_NULL(f);
    aml_csv c;
    aml_err err = {{0}};
    T_EQ_INT(aml_csv_open(&c, f), 0);
    T_EQ_INT(aml_csv_next(&c, &err), 1);
    T_EQ_SIZE(c.nfields, 3);
    T_TRUE(aml_csv_eq(&c, 2, "c"));
    T_EQ_INT(aml_csv_next(&c, &err), 1);
    T_EQ_INT(c.line, 2);
    T_TRUE(aml_csv_eq(&c, 0, "x,1"));
    T_TRUE(aml_csv_eq(&c, 1, "he said \"hi\""));
    T_TRUE(aml_csv_eq(&c, 2, "multi\nline"));
    T_EQ_INT(aml_csv_next(&c, &err), 1);
    T_EQ_INT(c.line, 4);
    T_EQ_SIZE(c.nfields, 3);
    T_EQ_SIZE(c.fields[0].n, 0);
    T_EQ_INT(aml_csv_next(&c, &err), 1);
    T_TRUE(aml_csv_eq(&c, 1, "row"));
    T_EQ_INT(aml_csv_next(&c, &err), 0);
    aml_csv_close(&c);
    fclose(f);
    static const char bad[] = "ok,1\n\"never closed,2\n";
    f = fmemopen((void *)bad, sizeof bad - 1, "rb");
    T_EQ_INT(aml_csv_open(&c, f), 0);
    T_EQ_INT(aml_csv_next(&c, &err), 1);
    T_EQ_INT(aml_csv_next(&c, &err), -1);
    T_TRUE(strstr(err.msg, "line 2") != NULL);
    aml_csv_close(&c);
    fclose(f);
}

static void test_time_money(void)
{
    int64_t t;
    int prec;
    T_EQ_INT(aml_parse_time("2022/09/01 00:20", 16, &t, &prec), 0);
    T_EQ_INT(prec, AML_PREC_MINUTE);
    char buf[48];
    aml_fmt_time(t, buf);
    T_EQ_STR(buf, "2022-09-01T00:20:00Z");
    T_EQ_INT(aml_parse_time("2024-02-29", 10, &t, &prec), 0);
    T_EQ_INT(prec, AML_PREC_DAY);
    T_EQ_INT(aml_parse_time("2023-02-29", 10, &t, NULL), -1);
    T_EQ_INT(aml_parse_time("20170101", 8, &t, NULL), 0);
    aml_fmt_date(t, buf);
    T_EQ_STR(buf, "2017-01-01");
    T_EQ_INT(aml_parse_time("2025-13-01", 10, &t, NULL), -1);
    T_EQ_INT(aml_parse_time("x", 1, &t, NULL), -1);
    int64_t m;
    T_EQ_INT(aml_parse_amount("3697.34", 7, 2, &m), 0);
    T_EQ_INT(m, 369734);
    T_EQ_INT(aml_parse_amount("0.005", 5, 2, &m), 0);
    T_EQ_INT(m, 1);
    T_EQ_INT(aml_parse_amount("12", 2, 8, &m), 0);
    T_EQ_INT(m, 1200000000);
    T_EQ_INT(aml_parse_amount("1e5", 3, 2, &m), -1);
    T_EQ_INT(aml_to_usd_minor(100000, 2, 108, 100), 108000); /* EUR 1,000.00 */
    T_EQ_INT(aml_to_usd_minor(100000000, 8, 60000, 1), 6000000); /* BTC 1.0 */
    aml_fmt_usd(4830000, buf, sizeof buf);
    T_EQ_STR(buf, "$48,300.00");
    aml_fmt_amount(-123456789, 2, buf, sizeof buf);
    T_EQ_STR(buf, "-1,234,567.89");
    T_NOT_NULL(aml_currency_find("US Dollar", 9));
    T_NULL(aml_currency_find("Doubloon", 8));
}

static void test_cursor(void)
{
    char cur[300], back[80];
    aml_cursor_encode("CASE-0042", cur, sizeof cur);
    T_EQ_INT(aml_cursor_decode(cur, back, sizeof back), 0);
    T_EQ_STR(back, "CASE-0042");
    T_EQ_INT(aml_cursor_decode("c1.zz", back, sizeof back), -1);
    T_EQ_INT(aml_cursor_decode("c1.00", back, sizeof back), -1);
    T_EQ_INT(aml_cursor_decode("x", back, sizeof back), -1);
    T_EQ_INT(aml_cursor_decode("'; DROP TABLE cases; --", back, sizeof back), -1);
}

/* aml_ivec_uniq against qsort and a plain dedupe: small (qsort) and large (radix) vectors, negative
 * numbers, the extremes, keys that differ only in a high byte, many duplicates. */
static void test_ivec_uniq(void)
{
    static const size_t sizes[] = {1, 2, 1023, 1024, 5000, 300000};
    uint64_t seed = 42;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        aml_ivec a = {0};
        int64_t *ref = malloc(n * sizeof *ref);
        T_NOT_NULL(ref);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int64_t x;
            switch (i % 5) {
            case 0: x = (int64_t)(seed >> 1) - INT64_MAX / 2; break;           /* anywhere, either sign */
            case 1: x = (int64_t)(seed >> 48) % 997; break;                    /* small, many duplicates */
            case 2: x = -(int64_t)(seed >> 50); break;                         /* small negative */
            case 3: x = (int64_t)((seed >> 60) << 56); break;                  /* only the top byte set */
            default: x = i % 2 ? INT64_MAX : INT64_MIN; break;
            }
            ref[i] = x;
            T_EQ_INT(aml_ivec_push(&a, x), 0);
        }
        qsort(ref, n, sizeof *ref, aml_cmp_i64);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!k || ref[i] != ref[k - 1])
                ref[k++] = ref[i];
        aml_ivec_uniq(&a);
        T_EQ_INT((long long)a.n, (long long)k);
        T_TRUE(memcmp(a.v, ref, k * sizeof *ref) == 0);
        free(ref);
        free(a.v);
    }
}

TEST_MAIN(TEST(test_migrations), TEST(test_reopen), TEST(test_missing_file), TEST(test_garbage_file),
          TEST(test_damaged_file), TEST(test_foreign_db), TEST(test_newer_schema), TEST(test_audit_intact),
          TEST(test_audit_tampered), TEST(test_audit_rehashed_row), TEST(test_audit_deleted),
          TEST(test_parameterized), TEST(test_csv), TEST(test_time_money), TEST(test_cursor),
          TEST(test_ivec_uniq))
