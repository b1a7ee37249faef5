/*
 * The hash-chained audit log (see store.h): every entry's hash covers the
 * previous entry's hash and its own length-prefixed fields, so altering,
 * re-hashing or deleting a row breaks the chain where it happened.
 */
#include "store/pg_conn.h"
#include "store/store.h"

#include <string.h>

#define GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
/* AML_PG_LOCK_AUDIT (pg_conn.h) as SQL text. */
#define AUDIT_LOCK "4705500959009144834"
_Static_assert(AML_PG_LOCK_AUDIT == 4705500959009144834LL, "AUDIT_LOCK is AML_PG_LOCK_AUDIT");

/* The highest sequence number ever given (rows cut from the end leave it ahead of the last row). */
static const char sql_head_lite[] = "SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'";
static const char sql_head_pg[] = "SELECT seq FROM audit_head";

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

int aml_audit_append(aml_store *s, const aml_audit_entry *e, aml_err *err)
{
    int own = !aml_in_tx(s);
    if (own && aml_begin(s, err))
        return -1;
    int pg = aml_store_backend(s) == AML_BACKEND_PG;
    /* PostgreSQL: writers on other connections take turns on the chain's head (SQLite's write lock does it there). */
    if (pg && aml_exec(s, "SELECT pg_advisory_xact_lock(" AUDIT_LOCK ")", err))
        goto fail_msg;
    char prev[65] = GENESIS;
    int64_t seq = 1;
    aml_st *st = aml_stmt(s, "SELECT seq, entry_hash FROM audit_log ORDER BY seq DESC LIMIT 1");
    if (!st)
        goto fail;
    if (aml_step(st) == AML_ROW) {
        seq = aml_col_int(st, 0) + 1;
        snprintf(prev, sizeof prev, "%s", aml_col_text(st, 1));
    }
    aml_reset(st);
    /* AUTOINCREMENT never reuses a number: take the next one from sqlite_sequence (PostgreSQL: audit_head). */
    st = aml_stmt(s, pg ? sql_head_pg : sql_head_lite);
    if (!st)
        goto fail;
    if (aml_step(st) == AML_ROW && aml_col_int(st, 0) + 1 > seq)
        seq = aml_col_int(st, 0) + 1;
    aml_reset(st);
    char at[21], hash[65];
    aml_fmt_time(aml_now(), at);
    entry_hash(prev, seq, at, e->actor, e->action, e->case_id, e->request_sha256, e->response_sha256,
               e->outcome, e->detail, hash);
    st = aml_stmt(s, "INSERT INTO audit_log(seq, at, actor, action, case_id, request_sha256, response_sha256, "
                     "outcome, detail, prev_hash, entry_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        goto fail;
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
        goto fail_msg;
    if (pg) {
        st = aml_stmt(s, "INSERT INTO audit_head(single, seq) VALUES (true, ?) "
                         "ON CONFLICT(single) DO UPDATE SET seq = excluded.seq");
        if (!st)
            goto fail;
        aml_bind_int(st, 1, seq);
        if (aml_step_done(s, st, err))
            goto fail_msg;
    }
    if (own && aml_commit(s, err))
        goto fail_msg;
    return 0;
fail:
    aml_errf(err, "audit log: %s", aml_errmsg(s));
fail_msg:
    if (own)
        aml_rollback(s);
    return -1;
}

int aml_audit_verify(aml_store *s, FILE *out, int64_t *bad_seq, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT seq, at, actor, action, case_id, request_sha256, response_sha256, "
                                   "outcome, detail, prev_hash, entry_hash FROM audit_log ORDER BY seq");
    if (!st)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    char prev[65] = GENESIS;
    int64_t expect = 1, n = 0, bad = 0;
    const char *why = NULL;
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        int64_t seq = aml_col_int(st, 0);
        const char *cols[11];
        for (int i = 1; i < 11; i++)
            cols[i] = aml_col_null(st, i) ? NULL : aml_col_text(st, i);
        char h[65];
        entry_hash(prev, seq, cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], h);
        if (seq != expect) {
            bad = expect;
            why = "rows are missing before this point (sequence gap)";
        } else if (!cols[9] || strcmp(cols[9], prev) != 0) {
            bad = seq;
            why = "prev_hash does not match the previous entry";
        } else if (!cols[10] || strcmp(cols[10], h) != 0) {
            bad = seq;
            why = "entry_hash does not match the row's contents (the row was altered)";
        }
        if (bad)
            break;
        snprintf(prev, sizeof prev, "%s", cols[10]);
        expect = seq + 1;
        n++;
    }
    aml_reset(st);
    if (rc != AML_ROW && rc != AML_DONE)
        return aml_errf(err, "audit log: %s", aml_errmsg(s));
    if (!bad) {
        /* Rows cut from the end leave sqlite_sequence ahead of the last row. */
        aml_st *q = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG ? sql_head_pg : sql_head_lite);
        if (q && aml_step(q) == AML_ROW && aml_col_int(q, 0) >= expect) {
            bad = expect;
            why = "rows are missing at the end of the log";
        }
        if (q)
            aml_reset(q);
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
