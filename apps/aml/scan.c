/*
 * Monitoring scan and evaluations: see scan.h.
 */
#include "scan.h"
#include "gen.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A growable int64 array. */
typedef struct ivec {
    int64_t *v;
    size_t n, cap;
} ivec;

static int ivec_push(ivec *a, int64_t x)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        int64_t *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

static void ivec_uniq(ivec *a)
{
    if (!a->n)
        return;
    aml_sort(a->v, a->n, sizeof *a->v, cmp_i64);
    size_t k = 1;
    for (size_t i = 1; i < a->n; i++)
        if (a->v[i] != a->v[k - 1])
            a->v[k++] = a->v[i];
    a->n = k;
}

static ssize_t ivec_find(const ivec *a, int64_t x)
{
    int64_t *p = bsearch(&x, a->v, a->n, sizeof *a->v, cmp_i64);
    return p ? p - a->v : -1;
}

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
    sqlite3_stmt *st = aml_stmt(s, "SELECT from_acct, to_acct FROM transactions WHERE txn_no = ?");
    if (!st)
        return -1;
    aml_bind_int(st, 1, no);
    int ok = sqlite3_step(st) == SQLITE_ROW;
    if (ok) {
        *from = sqlite3_column_int64(st, 0);
        *to = sqlite3_column_int64(st, 1);
    }
    sqlite3_reset(st);
    return ok ? 0 : -1;
}

static int next_case_id(aml_store *s, char *out, size_t n)
{
    /* Case ids CASE-NNNNN continue the highest number in use. */
    sqlite3_stmt *st = aml_stmt(s, "SELECT max(CAST(substr(case_id, 6) AS INTEGER)) FROM cases "
                                   "WHERE case_id GLOB 'CASE-[0-9]*'");
    if (!st)
        return -1;
    int64_t max = 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        max = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    snprintf(out, n, "CASE-%05lld", (long long)(max + 1));
    return 0;
}

int aml_scan(aml_store *s, const aml_scan_opts *o, FILE *out, aml_scan_stats *stp, aml_err *err)
{
    aml_scan_stats st;
    memset(&st, 0, sizeof st);
    int64_t t0 = aml_mono_ns();
    int64_t from = o->from, to = o->to;
    sqlite3_stmt *q;
    if (!from && !to) {
        q = aml_stmt(s, "SELECT min(booked_at), max(booked_at) FROM transactions");
        if (!q)
            return aml_errf(err, "%s", s->errmsg);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL) {
            from = aml_day_start(sqlite3_column_int64(q, 0));
            to = aml_day_start(sqlite3_column_int64(q, 1)) + AML_DAY - 1;
        }
        sqlite3_reset(q);
        if (!from && !to) {
            if (out)
                fprintf(out, "scan: the store has no transactions\n");
            if (stp)
                *stp = st;
            return 0;
        }
    }
    char detected[16];
    if (o->detected)
        snprintf(detected, sizeof detected, "%s", o->detected);
    else
        aml_fmt_date(to, detected);

    /* Incremental: only accounts touched by transactions newer than the last scan of this window. */
    int64_t since = 0, maxno = 0;
    q = aml_stmt(s, "SELECT max(max_txn_no) FROM scan_runs WHERE window_from = ? AND window_to = ?");
    if (!q)
        return aml_errf(err, "%s", s->errmsg);
    aml_bind_int(q, 1, from);
    aml_bind_int(q, 2, to);
    if (sqlite3_step(q) == SQLITE_ROW)
        since = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    q = aml_stmt(s, "SELECT max(txn_no) FROM transactions");
    if (!q)
        return aml_errf(err, "%s", s->errmsg);
    if (sqlite3_step(q) == SQLITE_ROW)
        maxno = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);

    ivec accts = {0};
    q = aml_stmt(s, "SELECT from_acct, to_acct FROM transactions WHERE txn_no > ? AND booked_at BETWEEN ? AND ?");
    if (!q)
        return aml_errf(err, "%s", s->errmsg);
    aml_bind_int(q, 1, since);
    aml_bind_int(q, 2, from);
    aml_bind_int(q, 3, to);
    while (sqlite3_step(q) == SQLITE_ROW) {
        for (int k = 0; k < 2; k++)
            if (sqlite3_column_type(q, k) != SQLITE_NULL && ivec_push(&accts, sqlite3_column_int64(q, k))) {
                sqlite3_reset(q);
                free(accts.v);
                return aml_errf(err, "out of memory");
            }
        if (accts.n > (1u << 22))
            ivec_uniq(&accts);
    }
    sqlite3_reset(q);
    ivec_uniq(&accts);
    /* Internal accounts only. */
    size_t k = 0;
    for (size_t i = 0; i < accts.n; i++) {
        q = aml_stmt(s, "SELECT is_internal FROM accounts WHERE acct_no = ?");
        if (!q)
            break;
        aml_bind_int(q, 1, accts.v[i]);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0))
            accts.v[k++] = accts.v[i];
        sqlite3_reset(q);
    }
    accts.n = k;

    aml_params p;
    aml_params_default(&p);
    ivec matched = {0};  /* matched accounts, in evaluation order (ascending) */
    ivec *links = NULL;  /* per matched account: (account << 5 | typology) its trigger evidence touches */
    unsigned *masks = NULL;
    size_t capm = 0;
    aml_progress prog;
    aml_progress_start(&prog, "scanning", accts.n);
    if (!o->progress)
        prog.enabled = 0;
    int rc = 0;
    for (size_t i = 0; i < accts.n && !rc; i++) {
        aml_progress_update(&prog, i);
        aml_case_spec cs = {NULL, &accts.v[i], 1, from, to};
        aml_assessment a;
        if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "scan", &a, err)) {
            rc = -1;
            break;
        }
        st.accounts_evaluated++;
        if (a.matched) {
            if (matched.n == capm) {
                capm = capm ? capm * 2 : 64;
                ivec *nl = realloc(links, capm * sizeof *nl);
                unsigned *nm = realloc(masks, capm * sizeof *nm);
                if (nl)
                    links = nl;
                if (nm)
                    masks = nm;
                if (!nl || !nm) {
                    aml_assessment_free(&a);
                    rc = aml_errf(err, "out of memory");
                    break;
                }
            }
            size_t m = matched.n;
            memset(&links[m], 0, sizeof links[m]);
            masks[m] = 0;
            ivec_push(&matched, accts.v[i]);
            for (int t = 0; t < AML_NTYP; t++) {
                if (a.f[t].status != AML_MATCHED)
                    continue;
                masks[m] |= 1u << t;
                st.matched_by_typology[t]++;
                for (size_t e = 0; e < a.f[t].nev; e++) {
                    int64_t fa = 0, ta = 0;
                    if (a.f[t].ev[e].role != AML_ROLE_TRIGGER)
                        continue;
                    if (txn_ends(s, a.f[t].ev[e].no, &fa, &ta) == 0) {
                        if (fa && fa != accts.v[i])
                            ivec_push(&links[m], fa << 5 | t);
                        if (ta && ta != accts.v[i])
                            ivec_push(&links[m], ta << 5 | t);
                    }
                }
            }
            ivec_uniq(&links[m]);
        }
        aml_assessment_free(&a);
    }
    aml_progress_end(&prog);
    st.accounts_matched = (int64_t)matched.n;

    /* Group matched accounts linked through their evidence: a and b join when b is in the
     * trigger evidence of a typology that b matched too (a cycle's members, the source and
     * sink of a scatter-gather). Evidence alone would chain unrelated cases together
     * through shared counterparties such as employers. */
    size_t *parent = malloc((matched.n ? matched.n : 1) * sizeof *parent);
    if (!rc && !parent)
        rc = aml_errf(err, "out of memory");
    for (size_t i = 0; !rc && i < matched.n; i++)
        parent[i] = i;
    for (size_t i = 0; !rc && i < matched.n; i++)
        for (size_t j = 0; j < links[i].n; j++) {
            ssize_t other = ivec_find(&matched, links[i].v[j] >> 5);
            if (other >= 0 && (masks[other] & (1u << (links[i].v[j] & 31))))
                uf_union(parent, i, (size_t)other);
        }
    if (!rc && aml_begin(s, err))
        rc = -1;
    int in_txn = !rc;
    for (size_t root = 0; !rc && root < matched.n; root++) {
        if (uf_find(parent, root) != root)
            continue;
        ivec members = {0};
        unsigned gmask = 0;
        for (size_t i = 0; i < matched.n; i++)
            if (uf_find(parent, i) == root) {
                ivec_push(&members, matched.v[i]);
                gmask |= masks[i];
            }
        /* An open case of any member takes the group. */
        char case_id[AML_CASE_ID_MAX + 1] = "";
        for (size_t i = 0; i < members.n && !case_id[0]; i++) {
            q = aml_stmt(s, "SELECT c.case_id FROM case_accounts ca JOIN cases c ON c.case_id = ca.case_id "
                            "WHERE ca.acct_no = ? AND c.status IN ('open','in_review','escalated') "
                            "ORDER BY c.case_id LIMIT 1");
            if (!q) {
                rc = aml_errf(err, "%s", s->errmsg);
                break;
            }
            aml_bind_int(q, 1, members.v[i]);
            if (sqlite3_step(q) == SQLITE_ROW)
                snprintf(case_id, sizeof case_id, "%s", aml_col_text(q, 0));
            sqlite3_reset(q);
        }
        if (rc) {
            free(members.v);
            break;
        }
        int opened = !case_id[0];
        if (opened) {
            char title[256], first[128];
            next_case_id(s, case_id, sizeof case_id);
            aml_account_id(s, members.v[0], first, sizeof first);
            int tl = snprintf(title, sizeof title, "Monitoring scan: %s%s (", first,
                              members.n > 1 ? " and linked accounts" : "");
            for (int t = 0, c = 0; t < AML_NTYP && tl < (int)sizeof title - 8; t++)
                if (gmask & (1u << t))
                    tl += snprintf(title + tl, sizeof title - (size_t)tl, "%s%s", c++ ? ", " : "", aml_catalog()[t].code);
            snprintf(title + tl, sizeof title - (size_t)tl, ")");
            q = aml_stmt(s, "INSERT INTO cases(case_id, title, status, priority, origin, opened_at, detection_date, "
                            "window_from, window_to) VALUES (?, ?, 'open', 'normal', 'scan', ?, ?, ?, ?)");
            if (!q) {
                rc = aml_errf(err, "%s", s->errmsg);
                free(members.v);
                break;
            }
            aml_bind_text(q, 1, case_id);
            aml_bind_text(q, 2, title);
            aml_bind_text(q, 3, detected);
            aml_bind_text(q, 4, detected);
            aml_bind_int(q, 5, from);
            aml_bind_int(q, 6, to);
            if (aml_step_done(s, q, err)) {
                rc = -1;
                free(members.v);
                break;
            }
            st.cases_opened++;
        } else {
            q = aml_stmt(s, "UPDATE cases SET detection_date = coalesce(detection_date, ?), "
                            "window_from = min(window_from, ?), window_to = max(window_to, ?) WHERE case_id = ?");
            if (!q || (aml_bind_text(q, 1, detected), aml_bind_int(q, 2, from), aml_bind_int(q, 3, to),
                       aml_bind_text(q, 4, case_id), aml_step_done(s, q, err))) {
                rc = q ? -1 : aml_errf(err, "%s", s->errmsg);
                free(members.v);
                break;
            }
            st.cases_updated++;
        }
        for (size_t i = 0; i < members.n; i++) {
            q = aml_stmt(s, "INSERT OR IGNORE INTO case_accounts(case_id, acct_no) VALUES (?, ?)");
            if (!q)
                break;
            aml_bind_text(q, 1, case_id);
            aml_bind_int(q, 2, members.v[i]);
            aml_step_done(s, q, NULL);
        }
        free(members.v);
        /* Assess the case as a whole and store it. */
        aml_case c;
        if (aml_case_load(s, case_id, &c, err)) {
            rc = -1;
            break;
        }
        aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to};
        aml_assessment a;
        if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, err)) {
            aml_case_free(&c);
            rc = -1;
            break;
        }
        aml_recommendation r;
        aml_recommend(s, &c, &a, &r);
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        aml_assessment_write(s, &w, &c, &a, "case", &r);
        if (mcp_jw_finish(&w) != MCP_OK ||
            aml_assessment_store(s, &c, &a, "case", "[\"*\"]", o->actor ? o->actor : "scan", b.data, err))
            rc = err && err->msg[0] ? -1 : aml_errf(err, "cannot write the assessment");
        mcp_buf_cleanup(&b);
        aml_assessment_free(&a);
        aml_case_free(&c);
    }
    if (!rc) {
        char started[21];
        aml_fmt_time(aml_now(), started);
        q = aml_stmt(s, "INSERT INTO scan_runs(window_from, window_to, max_txn_no, started_at, detection_date, "
                        "accounts_evaluated, accounts_matched, cases_opened, cases_updated) VALUES (?,?,?,?,?,?,?,?,?)");
        if (!q)
            rc = aml_errf(err, "%s", s->errmsg);
        else {
            aml_bind_int(q, 1, from);
            aml_bind_int(q, 2, to);
            aml_bind_int(q, 3, maxno);
            aml_bind_text(q, 4, started);
            aml_bind_text(q, 5, detected);
            aml_bind_int(q, 6, st.accounts_evaluated);
            aml_bind_int(q, 7, st.accounts_matched);
            aml_bind_int(q, 8, st.cases_opened);
            aml_bind_int(q, 9, st.cases_updated);
            rc = aml_step_done(s, q, err);
        }
    }
    if (in_txn) {
        if (rc)
            aml_rollback(s);
        else if (aml_commit(s, err))
            rc = -1;
    }
    for (size_t i = 0; i < matched.n; i++)
        free(links[i].v);
    free(links);
    free(masks);
    free(parent);
    free(matched.v);
    free(accts.v);
    st.accounts_skipped = 0;
    st.seconds = (double)(aml_mono_ns() - t0) / 1e9;
    if (!rc && out) {
        char f[11], t[11];
        aml_fmt_date(from, f);
        aml_fmt_date(to, t);
        fprintf(out, "scan %s .. %s: %lld accounts evaluated (new activity since txn #%lld), %lld matched, "
                     "%lld cases opened, %lld updated, %.2f s\n",
                f, t, (long long)st.accounts_evaluated, (long long)since, (long long)st.accounts_matched,
                (long long)st.cases_opened, (long long)st.cases_updated, st.seconds);
        fprintf(out, "%-28s %8s\n", "typology", "accounts");
        for (int i = 0; i < AML_NTYP; i++)
            fprintf(out, "%-28s %8lld\n", aml_catalog()[i].id, (long long)st.matched_by_typology[i]);
    }
    if (stp)
        *stp = st;
    return rc;
}

/* ---- evaluation over generated cases ------------------------------------------------------ */

int aml_eval_cases(aml_store *s, FILE *out, aml_quality q[AML_NTYP], aml_err *err)
{
    memset(q, 0, sizeof(aml_quality) * AML_NTYP);
    typedef struct inst {
        char case_id[AML_CASE_ID_MAX + 1];
        int typ, lookalike;
    } inst;
    inst *ins = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = aml_stmt(s, "SELECT case_id, typology_id, kind FROM gt_instances WHERE case_id IS NOT NULL "
                                   "ORDER BY instance_id");
    if (!st)
        return aml_errf(err, "%s", s->errmsg);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            inst *ni = realloc(ins, cap * sizeof *ni);
            if (!ni) {
                sqlite3_reset(st);
                free(ins);
                return aml_errf(err, "out of memory");
            }
            ins = ni;
        }
        const char *tid = aml_col_text(st, 1);
        snprintf(ins[n].case_id, sizeof ins[n].case_id, "%s", aml_col_text(st, 0));
        ins[n].typ = aml_typology_index(tid, strlen(tid));
        ins[n].lookalike = strcmp(aml_col_text(st, 2), "lookalike") == 0;
        if (ins[n].typ >= 0)
            n++;
    }
    sqlite3_reset(st);
    aml_params p;
    aml_params_default(&p);
    for (size_t i = 0; i < n; i++) {
        aml_case c;
        int lr = aml_case_load(s, ins[i].case_id, &c, err);
        if (lr) {
            if (lr > 0)
                aml_errf(err, "ground truth names unknown case %s", ins[i].case_id);
            free(ins);
            return -1;
        }
        aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to};
        aml_assessment a;
        if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, err)) {
            aml_case_free(&c);
            free(ins);
            return -1;
        }
        int x = ins[i].typ;
        unsigned overlap = ins[i].lookalike ? 0 : aml_gen_overlap(x);
        if (ins[i].lookalike)
            q[x].lookalikes++;
        else
            q[x].injected++;
        for (int t = 0; t < AML_NTYP; t++) {
            int hit = a.f[t].status == AML_MATCHED;
            if (t == x && !ins[i].lookalike) {
                q[t].detected += hit;
                q[t].alerts += hit;
                continue;
            }
            if (!hit)
                continue;
            if (overlap & (1u << t)) {
                q[t].overlap_hits++;
                continue;
            }
            q[t].alerts++;
            q[t].false_pos++;
            if (ins[i].lookalike && t == x)
                q[t].lookalike_hits++;
            if (out && getenv("AML_EVAL_VERBOSE"))
                fprintf(out, "  false alarm: %s matched on %s (%s %s)\n", aml_catalog()[t].code, c.case_id,
                        aml_catalog()[x].code, ins[i].lookalike ? "look-alike" : "instance");
        }
        if (out && getenv("AML_EVAL_VERBOSE") && !ins[i].lookalike && a.f[x].status != AML_MATCHED)
            fprintf(out, "  missed: %s on %s: %s\n", aml_catalog()[x].code, c.case_id, a.f[x].explanation);
        aml_assessment_free(&a);
        aml_case_free(&c);
    }
    free(ins);
    for (int t = 0; t < AML_NTYP; t++) {
        q[t].recall = q[t].injected ? (double)q[t].detected / q[t].injected : 0;
        q[t].precision = q[t].alerts ? (double)(q[t].alerts - q[t].false_pos) / q[t].alerts : 1;
    }
    if (out) {
        fprintf(out, "%-28s %8s %8s %7s %10s %7s %6s %9s %8s\n", "typology", "injected", "detected", "recall",
                "lookalikes", "alerts", "false", "precision", "overlap");
        for (int t = 0; t < AML_NTYP; t++)
            fprintf(out, "%-28s %8d %8d %6.1f%% %10d %7d %6d %8.1f%% %8d\n", aml_catalog()[t].id, q[t].injected,
                    q[t].detected, 100 * q[t].recall, q[t].lookalikes, q[t].alerts, q[t].false_pos, 100 * q[t].precision,
                    q[t].overlap_hits);
        fprintf(out, "(overlap: matches on instances of another typology whose construction also meets this one; "
                     "counted neither way)\n");
    }
    return 0;
}

/* ---- evaluation of AMLworld patterns after a scan ----------------------------------------- */

static const struct {
    const char *pattern;
    int typ;
    const char *variant;
} pattern_map[AML_NPATTERNS] = {
    {"FAN-IN", AML_T03, NULL},
    {"FAN-OUT", AML_T04, NULL},
    {"CYCLE", AML_T07, NULL},
    {"SCATTER-GATHER", AML_T08, "scatter_gather"},
    {"GATHER-SCATTER", AML_T08, "gather_scatter"},
    {"STACK", AML_T08, "stack"},
    {"BIPARTITE", AML_T08, "bipartite"},
};

typedef struct attempt {
    char id[128];
    int pattern; /* index into pattern_map, -1 for unmapped */
    ivec accts;
} attempt;

typedef struct scase {
    char id[AML_CASE_ID_MAX + 1];
    ivec accts;
    unsigned hits; /* bit per pattern_map entry the case's assessment supports */
} scase;

static int variant_ok(const char *metrics, const char *variant)
{
    if (!variant)
        return 1;
    mcp_json_doc *d;
    if (mcp_json_parse(&d, metrics, strlen(metrics), NULL, NULL) != MCP_OK)
        return 0;
    const mcp_json *root = mcp_json_doc_root(d);
    int ok = mcp_json_str_eq(mcp_json_get(root, "variant"), variant);
    static const char *const keys[] = {"otherVariantsMatched", "variantsInCase"};
    for (int k = 0; k < 2 && !ok; k++) {
        const char *others = mcp_json_str(mcp_json_get(root, keys[k]), NULL);
        const char *p = others ? strstr(others, variant) : NULL;
        size_t l = strlen(variant);
        ok = p && (p == others || p[-1] == ',') && (p[l] == '\0' || p[l] == ',');
    }
    mcp_json_doc_free(d);
    return ok;
}

static int intersects(const ivec *a, const ivec *b)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (a->v[i] == b->v[j])
            return 1;
        if (a->v[i] < b->v[j])
            i++;
        else
            j++;
    }
    return 0;
}

int aml_eval_patterns(aml_store *s, FILE *out, aml_pattern_quality q[AML_NPATTERNS], aml_err *err)
{
    memset(q, 0, sizeof(aml_pattern_quality) * AML_NPATTERNS);
    for (int i = 0; i < AML_NPATTERNS; i++)
        q[i].pattern = pattern_map[i].pattern;
    attempt *at = NULL;
    size_t nat = 0, capat = 0;
    sqlite3_stmt *st = aml_stmt(s, "SELECT gt_attempt_id, gt_label, from_acct, to_acct FROM transactions "
                                   "WHERE gt_attempt_id IS NOT NULL AND gt_label IS NOT NULL "
                                   "ORDER BY gt_attempt_id, txn_no");
    if (!st)
        return aml_errf(err, "%s", s->errmsg);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *id = aml_col_text(st, 0);
        if (!nat || strcmp(at[nat - 1].id, id) != 0) {
            if (nat == capat) {
                capat = capat ? capat * 2 : 64;
                attempt *na = realloc(at, capat * sizeof *na);
                if (!na)
                    break;
                at = na;
            }
            attempt *a = &at[nat++];
            memset(a, 0, sizeof *a);
            snprintf(a->id, sizeof a->id, "%s", id);
            a->pattern = -1;
            for (int k = 0; k < AML_NPATTERNS; k++)
                if (strcmp(pattern_map[k].pattern, aml_col_text(st, 1)) == 0)
                    a->pattern = k;
        }
        for (int k = 2; k <= 3; k++)
            if (sqlite3_column_type(st, k) != SQLITE_NULL)
                ivec_push(&at[nat - 1].accts, sqlite3_column_int64(st, k));
    }
    sqlite3_reset(st);
    for (size_t i = 0; i < nat; i++)
        ivec_uniq(&at[i].accts);

    scase *cs = NULL;
    size_t ncs = 0, capcs = 0;
    st = aml_stmt(s, "SELECT case_id, last_assessment_id FROM cases WHERE origin = 'scan' ORDER BY case_id");
    if (!st) {
        free(at);
        return aml_errf(err, "%s", s->errmsg);
    }
    typedef struct pair {
        char c[AML_CASE_ID_MAX + 1], a[40];
    } pair;
    pair *pairs = NULL;
    size_t np = 0, capp = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (np == capp) {
            capp = capp ? capp * 2 : 64;
            pair *nw = realloc(pairs, capp * sizeof *nw);
            if (!nw)
                break;
            pairs = nw;
        }
        snprintf(pairs[np].c, sizeof pairs[np].c, "%s", aml_col_text(st, 0));
        snprintf(pairs[np].a, sizeof pairs[np].a, "%s", aml_col_text(st, 1));
        np++;
    }
    sqlite3_reset(st);
    for (size_t i = 0; i < np; i++) {
        if (ncs == capcs) {
            capcs = capcs ? capcs * 2 : 64;
            scase *nc = realloc(cs, capcs * sizeof *nc);
            if (!nc)
                break;
            cs = nc;
        }
        scase *c = &cs[ncs++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "%s", pairs[i].c);
        st = aml_stmt(s, "SELECT acct_no FROM case_accounts WHERE case_id = ?");
        if (st) {
            aml_bind_text(st, 1, c->id);
            while (sqlite3_step(st) == SQLITE_ROW)
                ivec_push(&c->accts, sqlite3_column_int64(st, 0));
            sqlite3_reset(st);
        }
        ivec_uniq(&c->accts);
        st = aml_stmt(s, "SELECT typology_id, metrics_json FROM assessment_findings WHERE assessment_id = ? "
                         "AND status = 'matched'");
        if (st) {
            aml_bind_text(st, 1, pairs[i].a);
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *tid = aml_col_text(st, 0);
                int t = aml_typology_index(tid, strlen(tid));
                for (int k = 0; k < AML_NPATTERNS; k++)
                    if (pattern_map[k].typ == t && variant_ok(aml_col_text(st, 1), pattern_map[k].variant))
                        c->hits |= 1u << k;
            }
            sqlite3_reset(st);
        }
    }
    free(pairs);
    for (int k = 0; k < AML_NPATTERNS; k++) {
        for (size_t i = 0; i < nat; i++) {
            if (at[i].pattern != k)
                continue;
            q[k].attempts++;
            for (size_t j = 0; j < ncs; j++)
                if ((cs[j].hits & (1u << k)) && intersects(&cs[j].accts, &at[i].accts)) {
                    q[k].detected++;
                    break;
                }
        }
        for (size_t j = 0; j < ncs; j++) {
            if (!(cs[j].hits & (1u << k)))
                continue;
            q[k].alerts++;
            for (size_t i = 0; i < nat; i++)
                if (at[i].pattern == k && intersects(&cs[j].accts, &at[i].accts)) {
                    q[k].true_alerts++;
                    break;
                }
            for (size_t i = 0; i < nat; i++)
                if (intersects(&cs[j].accts, &at[i].accts)) {
                    q[k].laundering_alerts++;
                    break;
                }
        }
        q[k].recall = q[k].attempts ? (double)q[k].detected / q[k].attempts : 0;
        q[k].precision = q[k].alerts ? (double)q[k].true_alerts / q[k].alerts : 0;
    }
    if (out) {
        fprintf(out, "(precision: alerts of that typology/variant whose case covers an attempt of the pattern; "
                     "on laundering: ... of any pattern)\n");
        fprintf(out, "%-16s %-22s %8s %8s %7s %7s %6s %9s %13s\n", "pattern", "typology (variant)", "attempts",
                "detected", "recall", "alerts", "true", "precision", "on laundering");
        for (int k = 0; k < AML_NPATTERNS; k++) {
            char tv[48];
            snprintf(tv, sizeof tv, "%s%s%s%s", aml_catalog()[pattern_map[k].typ].code, pattern_map[k].variant ? " (" : "",
                     pattern_map[k].variant ? pattern_map[k].variant : "", pattern_map[k].variant ? ")" : "");
            fprintf(out, "%-16s %-22s %8d %8d %6.1f%% %7d %6d %8.1f%% %12.1f%%\n", q[k].pattern, tv, q[k].attempts,
                    q[k].detected, 100 * q[k].recall, q[k].alerts, q[k].true_alerts, 100 * q[k].precision,
                    q[k].alerts ? 100.0 * q[k].laundering_alerts / q[k].alerts : 0.0);
        }
    }
    for (size_t i = 0; i < nat; i++)
        free(at[i].accts.v);
    free(at);
    for (size_t j = 0; j < ncs; j++)
        free(cs[j].accts.v);
    free(cs);
    return 0;
}
