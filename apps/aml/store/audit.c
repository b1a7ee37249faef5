/*
 * The hash-chained audit log (see store.h): every entry's hash covers the
 * previous entry's hash and its own length-prefixed fields, so altering,
 * re-hashing or deleting a row breaks the chain where it happened.
 */
#include "store/store.h"

#include <string.h>

#define GENESIS "0000000000000000000000000000000000000000000000000000000000000000"

/* Length-prefixed, so no field value can forge a field boundary. */
static void hash_field(aml_sha256 *h, const char *v)
{
    char len[32];
    size_t n = v ? strlen(v) : 0;
    int k = v ? snprintf(len, sizeof len, "%zu:", n) : snprintf(len, sizeof len, "-:");
    aml_sha256_update(h, len, (size_t)k);
    if (v)
        aml_sha256_update(h, v, n);
}

static void entry_hash(const char *prev, int64_t seq, const char *at, const char *actor, const char *action,
                       const char *case_id, const char *req, const char *resp, const char *outcome,
                       const char *detail, char *out)
{
    aml_sha256 h;
    char seqs[32];
    snprintf(seqs, sizeof seqs, "%lld", (long long)seq);
    aml_sha256_init(&h);
    hash_field(&h, prev);
    hash_field(&h, seqs);
    hash_field(&h, at);
    hash_field(&h, actor);
    hash_field(&h, action);
    hash_field(&h, case_id);
    hash_field(&h, req);
    hash_field(&h, resp);
    hash_field(&h, outcome);
    hash_field(&h, detail);
    aml_sha256_final(&h, out);
}

/*
 * One chain across every writer. SQLite: the write transaction (BEGIN
 * IMMEDIATE) already serialises appends. PostgreSQL: several servers write
 * the same database, so each append takes a transaction-scoped advisory lock
 * on a fixed key (AML_PG_LOCK_AUDIT of store/pg_conn.h, "AML1" then 2)
 * before reading the head; under READ COMMITTED the statements after the
 * lock see the previous holder's committed entry. The lock is held to the
 * end of the transaction: append at the end of a long one.
 */
static const char audit_lock_pg[] = "SELECT pg_advisory_xact_lock(x'414d4c3100000002'::bigint)";
static const char audit_last[] = "SELECT seq, entry_hash FROM audit_log ORDER BY seq DESC LIMIT 1";
/* AUTOINCREMENT's high-water mark: sqlite_sequence, or audit_head (pg_schema.c) kept beside the log. */
static const char audit_hw_lite[] = "SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'";
static const char audit_hw_pg[] = "SELECT seq FROM audit_head";
static const char audit_hw_set_pg[] = "INSERT INTO audit_head(single, seq) VALUES (true, ?) "
                                      "ON CONFLICT (single) DO UPDATE SET seq = excluded.seq";

/* The highest seq ever given (0 when none): 0 or -1. */
static int high_water(aml_store *s, int64_t *hw)
{
    aml_st *st = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG ? audit_hw_pg : audit_hw_lite);
    *hw = 0;
    if (!st)
        return -1;
    int rc = aml_step(st);
    if (rc == AML_ROW)
        *hw = aml_col_int(st, 0);
    aml_reset(st);
    return rc < 0 ? -1 : 0;
}

/* The next seq and the previous hash, under the chain's lock. */
static int chain_head(aml_store *s, int64_t *seq, char prev[65])
{
    int pg = aml_store_backend(s) == AML_BACKEND_PG;
    if (pg) {
        /* The lock and the two reads in one round trip (aml_prefetch): the server runs them in this order,
         * so the reads still come after the lock is granted. */
        aml_prefetch(aml_stmt(s, audit_lock_pg));
        aml_prefetch(aml_stmt(s, audit_last));
        aml_prefetch(aml_stmt(s, audit_hw_pg));
    }
    aml_st *st = pg ? aml_stmt(s, audit_lock_pg) : NULL;
    if (pg && (!st || aml_step(st) < 0))
        return -1;
    if (st)
        aml_reset(st);
    st = aml_stmt(s, audit_last);
    if (!st)
        return -1;
    int rc = aml_step(st);
    *seq = 1;
    if (rc == AML_ROW) {
        *seq = aml_col_int(st, 0) + 1;
        snprintf(prev, 65, "%s", aml_col_text(st, 1));
    }
    aml_reset(st);
    int64_t hw;
    if (rc < 0 || high_water(s, &hw))
        return -1;
    /* AUTOINCREMENT never reuses a number. */
    if (hw + 1 > *seq)
        *seq = hw + 1;
    return 0;
}

static int insert_entry(aml_store *s, const aml_audit_entry *e, int64_t seq, const char *at, const char *prev,
                        const char *hash, aml_err *err)
{
    aml_st *st = aml_stmt(s, "INSERT INTO audit_log(seq, at, actor, action, case_id, request_sha256, "
                             "response_sha256, outcome, detail, prev_hash, entry_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    aml_bind_int(st, 1, seq);
    aml_bind_text(st, 2, at);
    aml_bind_text(st, 3, e->actor);
    aml_bind_text(st, 4, e->action);
    aml_bind_text(st, 5, e->case_id);
    aml_bind_text(st, 6, e->request_sha256);
    aml_bind_text(st, 7, e->response_sha256);
    aml_bind_text(st, 8, e->outcome);
    aml_bind_text(st, 9, e->detail);
    aml_bind_text(st, 10, prev);
    aml_bind_text(st, 11, hash);
    if (aml_step_done(s, st, err))
        return -1;
    if (aml_store_backend(s) != AML_BACKEND_PG)
        return 0;
    st = aml_stmt(s, audit_hw_set_pg);
    if (!st)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    aml_bind_int(st, 1, seq);
    return aml_step_done(s, st, err);
}

int aml_audit_append(aml_store *s, const aml_audit_entry *e, aml_err *err)
{
    int own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        return -1;
    char prev[65] = GENESIS;
    int64_t seq = 1;
    if (chain_head(s, &seq, prev)) {
        aml_errf(err, "audit log: %s", aml_errmsg(s));
        goto fail;
    }
    char at[21], hash[65];
    aml_fmt_time(aml_now(), at);
    entry_hash(prev, seq, at, e->actor, e->action, e->case_id, e->request_sha256, e->response_sha256,
               e->outcome, e->detail, hash);
    if (insert_entry(s, e, seq, at, prev, hash, err))
        goto fail;
    if (own && aml_commit(s, err))
        goto fail;
    return 0;
fail:
    if (own)
        aml_rollback(s);
    return -1;
}

/* Checks one row against the chain so far: 0, or the bad seq with why. */
static int64_t check_row(aml_st *st, int64_t expect, char prev[65], const char **why)
{
    int64_t seq = aml_col_int(st, 0);
    const char *cols[11];
    for (int i = 1; i < 11; i++)
        cols[i] = aml_col_null(st, i) ? NULL : aml_col_text(st, i);
    char h[65];
    entry_hash(prev, seq, cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], h);
    if (seq != expect) {
        *why = "rows are missing before this point (sequence gap)";
        return expect;
    }
    if (!cols[9] || strcmp(cols[9], prev) != 0) {
        *why = "prev_hash does not match the previous entry";
        return seq;
    }
    if (!cols[10] || strcmp(cols[10], h) != 0) {
        *why = "entry_hash does not match the row's contents (the row was altered)";
        return seq;
    }
    snprintf(prev, 65, "%s", cols[10]);
    return 0;
}

int aml_audit_verify(aml_store *s, FILE *out, int64_t *bad_seq, aml_err *err)
{
    /* The high-water mark first: entries appended while the log is read cannot look like a cut tail. */
    int64_t hw = 0;
    if (high_water(s, &hw))
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    aml_st *st = aml_stmt_stream(s, "SELECT seq, at, actor, action, case_id, request_sha256, response_sha256, "
                                    "outcome, detail, prev_hash, entry_hash FROM audit_log ORDER BY seq");
    if (!st)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    char prev[65] = GENESIS;
    int64_t expect = 1, n = 0, bad = 0;
    const char *why = NULL;
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        if ((bad = check_row(st, expect, prev, &why)))
            break;
        expect = aml_col_int(st, 0) + 1;
        n++;
    }
    aml_reset(st);
    if (rc != AML_ROW && rc != AML_DONE)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    if (!bad && hw >= expect) {
        /* Rows cut from the end leave the high-water mark ahead of the last row. */
        bad = expect;
        why = "rows are missing at the end of the log";
    }
    if (bad) {
        if (out)
            fprintf(out, "audit log BROKEN at seq %lld: %s (%lld entries verified before it)\n", (long long)bad,
                    why, (long long)n);
        if (bad_seq)
            *bad_seq = bad;
        return 1;
    }
    if (out)
        fprintf(out, "audit log intact: %lld entries, head hash %s\n", (long long)n, prev);
    return 0;
}
