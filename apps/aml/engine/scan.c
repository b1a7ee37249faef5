/*
 * The monitoring scan: which accounts, evaluating them, and the cases
 * (see scan.h). Jobs, batches and workers are in scan_job.c.
 */
#include "engine/scan_internal.h"
#include "engine/suppress.h"

#include <stdlib.h>
#include <string.h>

/* Up to this many touched accounts are checked one by one; more, in one pass over the internal accounts. */
#define SCAN_LOOKUP_MAX 256

/* Union-find over indexes. */
static size_t uf_find(size_t *parent, size_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void uf_union(size_t *parent, size_t a, size_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b) {
        if (a < b)
            parent[b] = a;
        else
            parent[a] = b;
    }
}

static int txn_ends(aml_store *s, int64_t no, int64_t *from, int64_t *to)
{
    aml_st *st = aml_stmt(s, "SELECT from_acct, to_acct FROM transactions WHERE txn_no = ?");
    if (!st)
        return -1;
    aml_bind_int(st, 1, no);
    int ok = aml_step(st) == AML_ROW;
    if (ok) {
        *from = aml_col_int(st, 0);
        *to = aml_col_int(st, 1);
    }
    aml_reset(st);
    return ok ? 0 : -1;
}

/* Case ids CASE-NNNNN continue the highest number in use. */
static const char next_case_sql_lite[] = "SELECT max(CAST(substr(case_id, 6) AS INTEGER)) FROM cases "
                                         "WHERE case_id GLOB 'CASE-[0-9]*'";
static const char next_case_sql_pg[] = "SELECT max(CAST(substr(case_id, 6) AS bigint)) FROM cases "
                                       "WHERE case_id ~ '^CASE-[0-9]{1,18}$'";

static int next_case_id(aml_store *s, char *out, size_t n)
{
    aml_st *st = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG ? next_case_sql_pg : next_case_sql_lite);
    if (!st)
        return -1;
    int64_t max = 0;
    if (aml_step(st) == AML_ROW)
        max = aml_col_int(st, 0);
    aml_reset(st);
    snprintf(out, n, "CASE-%05lld", (long long)(max + 1));
    return 0;
}

/* ---- which accounts -------------------------------------------------------------------- */

/* The window of the options, or of all the data: 1 when the store has no transactions. */
int scan_window(aml_store *s, const aml_scan_opts *o, scan_run *r, aml_err *err)
{
    r->from = o->from;
    r->to = o->to;
    if (r->from || r->to)
        return 0;
    aml_st *q = aml_stmt(s, "SELECT min(booked_at), max(booked_at) FROM transactions");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    if (aml_step(q) == AML_ROW && !aml_col_null(q, 0)) {
        r->from = aml_day_start(aml_col_int(q, 0));
        r->to = aml_day_start(aml_col_int(q, 1)) + AML_DAY - 1;
    }
    aml_reset(q);
    return !r->from && !r->to ? 1 : 0;
}

/* Incremental: only transactions newer than the last scan of this window count as new. */
int scan_marks(aml_store *s, scan_run *r, aml_err *err)
{
    r->since = r->maxno = 0;
    aml_st *q = aml_stmt(s, "SELECT max(max_txn_no) FROM scan_runs WHERE window_from = ? AND window_to = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, r->from);
    aml_bind_int(q, 2, r->to);
    if (aml_step(q) == AML_ROW)
        r->since = aml_col_int(q, 0);
    aml_reset(q);
    q = aml_stmt(s, "SELECT max(txn_no) FROM transactions");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    if (aml_step(q) == AML_ROW)
        r->maxno = aml_col_int(q, 0);
    aml_reset(q);
    return 0;
}

/* Few accounts: looked up one by one. */
static int keep_internal_each(aml_store *s, aml_ivec *accts, aml_err *err)
{
    size_t k = 0;
    for (size_t i = 0; i < accts->n; i++) {
        aml_st *q = aml_stmt(s, "SELECT is_internal FROM accounts WHERE acct_no = ?");
        if (!q)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_int(q, 1, accts->v[i]);
        if (aml_step(q) == AML_ROW && (int)aml_col_int(q, 0))
            accts->v[k++] = accts->v[i];
        aml_reset(q);
    }
    accts->n = k;
    return 0;
}

/*
 * Keeps the internal accounts of the ascending list. Many accounts: the internal ones are read in one
 * ascending pass and merged with the list (one query instead of one round trip per account on PostgreSQL).
 */
static int keep_internal(aml_store *s, aml_ivec *accts, aml_err *err)
{
    if (accts->n < SCAN_LOOKUP_MAX)
        return keep_internal_each(s, accts, err);
    aml_st *q = aml_stmt_stream(s, "SELECT acct_no FROM accounts WHERE is_internal <> 0 AND acct_no BETWEEN ? AND ? "
                                   "ORDER BY acct_no");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, accts->v[0]);
    aml_bind_int(q, 2, accts->v[accts->n - 1]);
    size_t i = 0, k = 0;
    int rc = AML_DONE;
    while (i < accts->n && (rc = aml_step(q)) == AML_ROW) {
        int64_t a = aml_col_int(q, 0);
        while (i < accts->n && accts->v[i] < a)
            i++;
        if (i < accts->n && accts->v[i] == a)
            accts->v[k++] = accts->v[i++];
    }
    if (i < accts->n && rc != AML_DONE) {
        aml_reset(q);
        return aml_errf(err, "%s", aml_errmsg(s));
    }
    aml_reset(q);
    accts->n = k;
    return 0;
}

/* Internal accounts touched by the new transactions of the window, ascending. */
int scan_touched_accounts(aml_store *s, const scan_run *r, aml_ivec *accts, aml_err *err)
{
    /* Many rows: a cursor on PostgreSQL (the job is created inside a transaction). */
    aml_st *q = aml_stmt_stream(s, "SELECT from_acct, to_acct FROM transactions WHERE txn_no > ? AND booked_at "
                                  "BETWEEN ? AND ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, r->since);
    aml_bind_int(q, 2, r->from);
    aml_bind_int(q, 3, r->to);
    while (aml_step(q) == AML_ROW) {
        for (int k = 0; k < 2; k++)
            if (!aml_col_null(q, k) && aml_ivec_push(accts, aml_col_int(q, k))) {
                aml_reset(q);
                return aml_errf(err, "out of memory");
            }
        if (accts->n > (1u << 22))
            aml_ivec_uniq(accts);
    }
    aml_reset(q);
    aml_ivec_uniq(accts);
    return keep_internal(s, accts, err);
}

/* ---- evaluating them ---------------------------------------------------------------------- */

void scan_matches_free(matches *m)
{
    for (size_t i = 0; i < m->accts.n; i++)
        free(m->links[i].v);
    free(m->links);
    free(m->masks);
    free(m->scores);
    free(m->accts.v);
}

/* Room for one more account in m. */
static int matches_grow(matches *m)
{
    if (m->accts.n < m->cap)
        return 0;
    size_t cap = m->cap ? m->cap * 2 : 64;
    aml_ivec *nl = realloc(m->links, cap * sizeof *nl);
    if (nl)
        m->links = nl;
    unsigned *nm = realloc(m->masks, cap * sizeof *nm);
    if (nm)
        m->masks = nm;
    unsigned char *ns = realloc(m->scores, cap * AML_NTYP);
    if (ns)
        m->scores = ns;
    if (!nl || !nm || !ns)
        return -1;
    m->cap = cap;
    return 0;
}

int scan_match_push(matches *m, int64_t acct, unsigned mask, const unsigned char *scores, const aml_ivec *links)
{
    if (matches_grow(m))
        return -1;
    size_t k = m->accts.n;
    memset(&m->links[k], 0, sizeof m->links[k]);
    if (aml_ivec_push(&m->accts, acct))
        return -1;
    m->masks[k] = mask;
    memcpy(m->scores + k * AML_NTYP, scores, AML_NTYP);
    for (size_t i = 0; links && i < links->n; i++)
        if (aml_ivec_push(&m->links[k], links->v[i]))
            return -1;
    return 0;
}

/* Records a matched account: its typologies, and the other accounts their trigger evidence touches. */
static int record_match(aml_store *s, matches *m, int64_t acct, const aml_assessment *a)
{
    unsigned mask = 0;
    unsigned char scores[AML_NTYP] = {0};
    aml_ivec links = {0};
    for (int t = 0; t < AML_NTYP; t++) {
        if (a->f[t].status != AML_MATCHED)
            continue;
        mask |= 1u << t;
        scores[t] = (unsigned char)a->f[t].score;
        for (size_t e = 0; e < a->f[t].nev; e++) {
            int64_t fa = 0, ta = 0;
            if (a->f[t].ev[e].role != AML_ROLE_TRIGGER)
                continue;
            if (txn_ends(s, a->f[t].ev[e].no, &fa, &ta) == 0) {
                if (fa && fa != acct)
                    aml_ivec_push(&links, fa << 5 | t);
                if (ta && ta != acct)
                    aml_ivec_push(&links, ta << 5 | t);
            }
        }
    }
    aml_ivec_uniq(&links);
    int rc = scan_match_push(m, acct, mask, scores, &links);
    free(links.v);
    return rc;
}

int scan_evaluate(aml_store *s, const scan_run *r, const aml_ivec *accts, aml_screener *scr, matches *m,
                  int64_t *evaluated, aml_err *err)
{
    aml_params p;
    aml_params_default(&p);
    /* One read transaction for the whole batch: outside one, SQLite takes and drops its file locks
     * (fcntl, fstat) around every statement, which cost a third of the scan. A deferred (read)
     * transaction: writers in other threads and processes are not held up. The caller's, when it
     * holds one across batches (scan_job.c). The engine's reference data is read once for the batch
     * (on PostgreSQL each read is a round trip). */
    aml_engine_ctx *ctx = NULL;
    int own = !aml_in_tx(s);
    int rc = own ? aml_exec(s, "BEGIN", err) : 0;
    if (!rc)
        rc = aml_engine_ctx_load(s, &ctx, err);
    for (size_t i = 0; i < accts->n && !rc; i++) {
        aml_case_spec cs = {NULL, &accts->v[i], 1, r->from, r->to, scr};
        aml_assessment a;
        if (aml_engine_run_ctx(s, ctx, &cs, &p, AML_ALL_TYPOLOGIES, "scan", &a, err)) {
            rc = -1;
            break;
        }
        (*evaluated)++;
        aml_suppress_filter(s, accts->v[i], r->detected, &a); /* reviewed and found not suspicious, for a period */
        if (a.matched && record_match(s, m, accts->v[i], &a))
            rc = aml_errf(err, "out of memory");
        aml_assessment_free(&a);
    }
    aml_engine_ctx_free(ctx);
    if (rc)
        aml_rollback(s);
    else if (own && aml_commit(s, err))
        rc = -1;
    return rc;
}

/*
 * Groups matched accounts linked through their evidence: a and b join when b is in the
 * trigger evidence of a typology that b matched too (a cycle's members, the source and
 * sink of a scatter-gather). Evidence alone would chain unrelated cases together
 * through shared counterparties such as employers. @return the union-find parents, or NULL.
 */
static size_t *group_matches(const matches *m)
{
    size_t n = m->accts.n;
    size_t *parent = malloc((n ? n : 1) * sizeof *parent);
    if (!parent)
        return NULL;
    for (size_t i = 0; i < n; i++)
        parent[i] = i;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m->links[i].n; j++) {
            ssize_t other = aml_ivec_find(&m->accts, m->links[i].v[j] >> 5);
            if (other >= 0 && (m->masks[other] & (1u << (m->links[i].v[j] & 31))))
                uf_union(parent, i, (size_t)other);
        }
    return parent;
}

/* ---- cases ------------------------------------------------------------------------------ */

/* An open case of any member takes the group ("" when none). */
static int open_case_of(aml_store *s, const aml_ivec *members, char *case_id, size_t n, aml_err *err)
{
    case_id[0] = '\0';
    for (size_t i = 0; i < members->n && !case_id[0]; i++) {
        aml_st *q = aml_stmt(s, "SELECT c.case_id FROM case_accounts ca JOIN cases c ON c.case_id = ca.case_id "
                                      "WHERE ca.acct_no = ? AND c.status IN ('open','in_review','escalated') "
                                      "ORDER BY c.case_id LIMIT 1");
        if (!q)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_int(q, 1, members->v[i]);
        if (aml_step(q) == AML_ROW)
            snprintf(case_id, n, "%s", aml_col_text(q, 0));
        aml_reset(q);
    }
    return 0;
}

/* A new case for the group, titled after its first account and the typologies it matched. */
static int open_case(aml_store *s, const scan_run *r, const aml_ivec *members, unsigned gmask, char *case_id, size_t n,
                     aml_err *err)
{
    char title[256], first[128];
    next_case_id(s, case_id, n);
    aml_account_id(s, members->v[0], first, sizeof first);
    int tl = snprintf(title, sizeof title, "Monitoring scan: %s%s (", first, members->n > 1 ? " and linked accounts" : "");
    for (int t = 0, c = 0; t < AML_NTYP && tl < (int)sizeof title - 8; t++)
        if (gmask & (1u << t))
            tl += snprintf(title + tl, sizeof title - (size_t)tl, "%s%s", c++ ? ", " : "", aml_catalog()[t].code);
    snprintf(title + tl, sizeof title - (size_t)tl, ")");
    aml_st *q = aml_stmt(s, "INSERT INTO cases(case_id, title, status, priority, origin, opened_at, "
                                  "detection_date, window_from, window_to) VALUES (?, ?, 'open', 'normal', 'scan', "
                                  "?, ?, ?, ?)");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(q, 1, case_id);
    aml_bind_text(q, 2, title);
    aml_bind_text(q, 3, r->detected);
    aml_bind_text(q, 4, r->detected);
    aml_bind_int(q, 5, r->from);
    aml_bind_int(q, 6, r->to);
    return aml_step_done(s, q, err);
}

/* An existing case widens its window to the scan's and keeps its detection date. */
static int update_case(aml_store *s, const scan_run *r, const char *case_id, aml_err *err)
{
    /* SQLite's scalar min/max as CASE (both dialects): a NULL bound stays NULL. */
    aml_st *q = aml_stmt(s, "UPDATE cases SET detection_date = coalesce(detection_date, ?1), "
                            "window_from = CASE WHEN window_from IS NULL OR window_from <= ?2 THEN window_from "
                            "ELSE ?2 END, "
                            "window_to = CASE WHEN window_to IS NULL OR window_to >= ?3 THEN window_to ELSE ?3 END "
                            "WHERE case_id = ?4");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(q, 1, r->detected);
    aml_bind_int(q, 2, r->from);
    aml_bind_int(q, 3, r->to);
    aml_bind_text(q, 4, case_id);
    return aml_step_done(s, q, err);
}

/* The typologies account m->accts.v[i] matched, in scan_matches. */
static int record_matches(aml_store *s, const scan_run *r, const matches *m, size_t i, const char *case_id,
                          aml_err *err)
{
    for (int t = 0; t < AML_NTYP; t++) {
        if (!(m->masks[i] & (1u << t)))
            continue;
        aml_st *q = aml_stmt(s, "INSERT INTO scan_matches(run_id, acct_no, typology_id, score, case_id) "
                                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, acct_no, typology_id) "
                                "DO UPDATE SET score = excluded.score, case_id = excluded.case_id");
        if (!q)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_int(q, 1, r->run_id);
        aml_bind_int(q, 2, m->accts.v[i]);
        aml_bind_text(q, 3, aml_catalog()[t].id);
        aml_bind_int(q, 4, m->scores[i * AML_NTYP + (size_t)t]);
        aml_bind_text(q, 5, case_id);
        if (aml_step_done(s, q, err))
            return -1;
    }
    return 0;
}

/*
 * The queue order of a case the scan opened, so that the riskiest are worked first: urgent from a
 * score of 85, or 70 with three typologies or more (independent indicators corroborating each
 * other); high from 70 (the SAR-filing range of the recommendation); normal from 40; else low.
 * Cases that already existed keep the priority an analyst gave them.
 */
static int rank_case(aml_store *s, const char *case_id, aml_err *err)
{
    aml_st *q = aml_stmt(s, "UPDATE cases SET priority = CASE "
                                  "WHEN case_score >= 85 OR (case_score >= 70 AND (SELECT count(*) FROM case_typologies t "
                                  "WHERE t.case_id = cases.case_id) >= 3) THEN 'urgent' "
                                  "WHEN case_score >= 70 THEN 'high' WHEN case_score >= 40 THEN 'normal' ELSE 'low' END "
                                  "WHERE case_id = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(q, 1, case_id);
    return aml_step_done(s, q, err);
}

/* The group of root: its case opened or updated, its accounts added, the case assessed as a whole. */
static int group_case(aml_store *s, const scan_run *r, const matches *m, size_t *parent, size_t root,
                      const aml_params *p, aml_scan_stats *st, aml_err *err)
{
    aml_ivec members = {0};
    unsigned gmask = 0;
    for (size_t i = 0; i < m->accts.n; i++)
        if (uf_find(parent, i) == root) {
            aml_ivec_push(&members, m->accts.v[i]);
            gmask |= m->masks[i];
        }
    char case_id[AML_CASE_ID_MAX + 1];
    int rc = open_case_of(s, &members, case_id, sizeof case_id, err), opened = 0;
    if (!rc && !case_id[0]) {
        rc = open_case(s, r, &members, gmask, case_id, sizeof case_id, err);
        st->cases_opened += !rc;
        opened = !rc;
    } else if (!rc) {
        rc = update_case(s, r, case_id, err);
        st->cases_updated += !rc;
    }
    for (size_t i = 0; !rc && i < members.n; i++) {
        aml_st *q = aml_stmt(s, "INSERT INTO case_accounts(case_id, acct_no) VALUES (?, ?) "
                                "ON CONFLICT DO NOTHING");
        if (!q)
            break;
        aml_bind_text(q, 1, case_id);
        aml_bind_int(q, 2, members.v[i]);
        aml_step_done(s, q, NULL);
    }
    for (size_t i = 0; !rc && i < m->accts.n; i++)
        if (uf_find(parent, i) == root)
            rc = record_matches(s, r, m, i, case_id, err);
    free(members.v);
    if (rc || aml_case_reassess(s, case_id, p, r->actor, err))
        return -1;
    return opened ? rank_case(s, case_id, err) : 0;
}

/* The run's counts, once its cases are made. */
static int finish_run(aml_store *s, const scan_run *r, const aml_scan_stats *st, aml_err *err)
{
    aml_st *q = aml_stmt(s, "UPDATE scan_runs SET accounts_evaluated = ?, accounts_matched = ?, "
                                  "cases_opened = ?, cases_updated = ? WHERE run_id = ?");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, st->accounts_evaluated);
    aml_bind_int(q, 2, st->accounts_matched);
    aml_bind_int(q, 3, st->cases_opened);
    aml_bind_int(q, 4, st->cases_updated);
    aml_bind_int(q, 5, r->run_id);
    return aml_step_done(s, q, err);
}

/* One row of scan_runs: the high-water mark of the window (counts completed by finish_run). */
static int record_run(aml_store *s, scan_run *r, const aml_scan_stats *st, aml_err *err)
{
    char started[21];
    aml_fmt_time(aml_now(), started);
    aml_st *q = aml_stmt(s, "INSERT INTO scan_runs(window_from, window_to, max_txn_no, started_at, "
                                  "detection_date, accounts_evaluated, accounts_matched, cases_opened, cases_updated) "
                                  "VALUES (?,?,?,?,?,?,?,?,?) RETURNING run_id");
    if (!q)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(q, 1, r->from);
    aml_bind_int(q, 2, r->to);
    aml_bind_int(q, 3, r->maxno);
    aml_bind_text(q, 4, started);
    aml_bind_text(q, 5, r->detected);
    aml_bind_int(q, 6, st->accounts_evaluated);
    aml_bind_int(q, 7, st->accounts_matched);
    aml_bind_int(q, 8, st->cases_opened);
    aml_bind_int(q, 9, st->cases_updated);
    return aml_step_id(s, q, &r->run_id, err);
}

int scan_make_cases(aml_store *s, scan_run *r, const matches *m, aml_scan_stats *st, aml_err *err)
{
    size_t *parent = group_matches(m);
    if (!parent)
        return aml_errf(err, "out of memory");
    aml_params p;
    aml_params_default(&p);
    int rc = record_run(s, r, st, err);
    for (size_t root = 0; !rc && root < m->accts.n; root++)
        if (uf_find(parent, root) == root)
            rc = group_case(s, r, m, parent, root, &p, st, err);
    if (!rc)
        rc = finish_run(s, r, st, err);
    free(parent);
    return rc;
}

void scan_print_summary(FILE *out, const scan_run *r, const aml_scan_stats *st)
{
    char f[11], t[11];
    aml_fmt_date(r->from, f);
    aml_fmt_date(r->to, t);
    fprintf(out, "scan %s .. %s: %lld accounts evaluated (new activity since txn #%lld), %lld matched, "
                 "%lld cases opened, %lld updated, %.2f s\n",
            f, t, (long long)st->accounts_evaluated, (long long)r->since, (long long)st->accounts_matched,
            (long long)st->cases_opened, (long long)st->cases_updated, st->seconds);
    fprintf(out, "%-28s %8s\n", "typology", "accounts");
    for (int i = 0; i < AML_NTYP; i++)
        fprintf(out, "%-28s %8lld\n", aml_catalog()[i].id, (long long)st->matched_by_typology[i]);
}
