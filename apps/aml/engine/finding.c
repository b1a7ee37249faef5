/*
 * The finding builder (see typology.h) and the JSON of findings and their
 * evidence (see engine.h).
 *
 * A finding's score is the sum of its components, capped at 100; its
 * evidence is ordered by (booked_at, txn_no), one entry per transaction,
 * the first AML_MAX_EVIDENCE of them listed.
 */
#include "engine/typology.h"

#include <stdarg.h>
#include <stddef.h>

/* ---- building a finding ------------------------------------------------------- */

void fb_init(fbuild *b, eng *e, aml_finding *f, int typ, int64_t acct)
{
    memset(b, 0, sizeof *b);
    memset(f, 0, sizeof *f);
    b->f = f;
    b->e = e;
    f->typ = typ;
    f->focus_acct = acct;
    mcp_buf_init(&b->mb, 0);
    mcp_jw_init(&b->mw, &b->mb);
    mcp_jw_object_begin(&b->mw);
}

void fb_int(fbuild *b, const char *k, int64_t v)
{
    if (b->e->lean)
        return;
    mcp_jw_key(&b->mw, k);
    mcp_jw_int(&b->mw, v);
}

double eng_round4(double x)
{
    if (!isfinite(x))
        return 0;
    return round(x * 10000.0) / 10000.0;
}

void fb_dbl(fbuild *b, const char *k, double v)
{
    if (b->e->lean)
        return;
    mcp_jw_key(&b->mw, k);
    mcp_jw_double(&b->mw, eng_round4(v));
}

void fb_str(fbuild *b, const char *k, const char *v)
{
    if (b->e->lean)
        return;
    mcp_jw_key(&b->mw, k);
    mcp_jw_string(&b->mw, v);
}

void fb_date(fbuild *b, const char *k, int64_t t)
{
    char d[11];
    aml_fmt_date(t, d);
    fb_str(b, k, d);
}

void fb_bool(fbuild *b, const char *k, int v)
{
    if (b->e->lean)
        return;
    mcp_jw_key(&b->mw, k);
    mcp_jw_bool(&b->mw, v);
}

void fb_comp(fbuild *b, int pts, const char *fmt, ...)
{
    if (b->ncomps == 16 || pts == 0)
        return;
    if (b->e->lean) {
        b->comps[b->ncomps].what[0] = '\0';
        b->comps[b->ncomps++].pts = pts;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->comps[b->ncomps].what, sizeof b->comps[0].what, fmt, ap);
    va_end(ap);
    b->comps[b->ncomps++].pts = pts;
}

static int cmp_ev(const void *a, const void *b)
{
    const aml_evidence *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->no != y->no)
        return x->no < y->no ? -1 : 1;
    return x->role - y->role;
}

/* Evidence kept while a finding is built: the earliest EV_CAP by (time, txn), via a max-heap
 * once full, so a busy account costs O(n log EV_CAP), not a sort of everything. */
#define EV_CAP 1024

static int ev_less(const aml_evidence *x, const aml_evidence *y)
{
    return cmp_ev(x, y) < 0;
}

static void ev_sift_down(aml_evidence *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && ev_less(&h[m], &h[l]))
            m = l;
        if (r < n && ev_less(&h[m], &h[r]))
            m = r;
        if (m == i)
            return;
        aml_evidence tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

void fb_ev(fbuild *b, const etx *t, int role)
{
    b->ev_total++;
    if (b->nev == EV_CAP) {
        aml_evidence x = {t->at, t->no, t->usd, role};
        if (b->ev_total == EV_CAP + 1)
            for (size_t i = EV_CAP / 2; i-- > 0;)
                ev_sift_down(b->ev, EV_CAP, i);
        if (ev_less(&x, &b->ev[0])) {
            b->ev[0] = x;
            ev_sift_down(b->ev, EV_CAP, 0);
        }
        return;
    }
    if (b->nev == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 16;
        aml_evidence *ne = realloc(b->ev, nc * sizeof *ne);
        if (!ne) {
            b->e->oom = 1;
            return;
        }
        b->ev = ne;
        b->cap = nc;
    }
    aml_evidence *x = &b->ev[b->nev++];
    x->at = t->at;
    x->no = t->no;
    x->usd = t->usd;
    x->role = role;
}

void fb_ev_cash(fbuild *b, const cash_row *c, int role)
{
    etx t = {c->no, c->at, 0, c->usd, c->dir, CH_CASH};
    fb_ev(b, &t, role);
}

void fb_explain(fbuild *b, const char *fmt, ...)
{
    if (b->e->lean)
        return; /* the scan's first pass: only status, score and evidence are read */
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(b->f->explanation);
    b->f->explanation = aml_strdup(buf);
}

void fb_missing(fbuild *b, const char *a, const char *c)
{
    mcp_buf m;
    mcp_jw w;
    mcp_buf_init(&m, 0);
    mcp_jw_init(&w, &m);
    mcp_jw_array_begin(&w);
    if (a)
        mcp_jw_string(&w, a);
    if (c)
        mcp_jw_string(&w, c);
    mcp_jw_array_end(&w);
    free(b->f->missing_json);
    b->f->missing_json = aml_strndup(m.data, m.len);
    mcp_buf_cleanup(&m);
}


/* The score (matched findings only) and its breakdown in the metrics. */
static void write_score(fbuild *b, int status)
{
    int score = 0;
    if (status == AML_MATCHED) {
        for (int i = 0; i < b->ncomps; i++)
            score += b->comps[i].pts;
        score = score > 100 ? 100 : score < 0 ? 0 : score;
    }
    b->f->score = score;
    mcp_jw_key(&b->mw, "scoreBreakdown");
    mcp_jw_array_begin(&b->mw);
    if (status == AML_MATCHED) {
        for (int i = 0; i < b->ncomps; i++) {
            mcp_jw_object_begin(&b->mw);
            mcp_jw_key(&b->mw, "component");
            mcp_jw_string(&b->mw, b->comps[i].what);
            mcp_jw_key(&b->mw, "points");
            mcp_jw_int(&b->mw, b->comps[i].pts);
            mcp_jw_object_end(&b->mw);
        }
    }
    mcp_jw_array_end(&b->mw);
}

/* Evidence: ordered, one entry per transaction (trigger wins over context); returns how many are listed. */
static size_t order_evidence(fbuild *b)
{
    aml_sort(b->ev, b->nev, sizeof *b->ev, cmp_ev);
    size_t k = 0;
    for (size_t i = 0; i < b->nev; i++)
        if (k == 0 || b->ev[k - 1].no != b->ev[i].no)
            b->ev[k++] = b->ev[i];
    b->nev = k;
    mcp_jw_key(&b->mw, "evidenceCount");
    mcp_jw_int(&b->mw, b->ev_total > EV_CAP ? b->ev_total : (int64_t)k);
    if (k > AML_MAX_EVIDENCE || b->ev_total > EV_CAP) {
        mcp_jw_key(&b->mw, "evidenceTruncated");
        mcp_jw_bool(&b->mw, 1);
        k = AML_MAX_EVIDENCE;
    }
    return k;
}

/* Amount and time span of the listed trigger evidence. */
static void trigger_span(aml_finding *f)
{
    f->amount_usd = 0;
    f->first_at = f->last_at = 0;
    for (size_t i = 0; i < f->nev; i++) {
        if (f->ev[i].role != AML_ROLE_TRIGGER)
            continue;
        f->amount_usd += f->ev[i].usd;
        if (!f->first_at || f->ev[i].at < f->first_at)
            f->first_at = f->ev[i].at;
        if (f->ev[i].at > f->last_at)
            f->last_at = f->ev[i].at;
    }
}

void fb_finish(fbuild *b, int status)
{
    aml_finding *f = b->f;
    f->status = status;
    write_score(b, status);
    size_t k = order_evidence(b);
    mcp_jw_object_end(&b->mw);
    f->ev = b->ev;
    f->nev = k;
    trigger_span(f);
    if (mcp_jw_finish(&b->mw) == MCP_OK)
        f->metrics_json = aml_strndup(b->mb.data, b->mb.len);
    else
        f->metrics_json = aml_strdup("{}");
    mcp_buf_cleanup(&b->mb);
    if (!f->explanation)
        f->explanation = aml_strdup("");
    b->ev = NULL;
}

void eng_short_history(fbuild *b, const acct_view *v, int64_t at, int64_t need_days, const char *who)
{
    int64_t have = observed_days(v, at);
    fb_int(b, "observedHistoryDays", have);
    fb_int(b, "historyNeededDays", need_days);
    fb_date(b, "observedFrom", v->obs_from);
    fb_missing(b, "coverage.observed_from", "earlier history");
    fb_explain(b,
               "not evaluable: %lld days of history, %lld needed. The store holds the history of %s only from %s, so "
               "whether its %s were new cannot be told.",
               (long long)have, (long long)need_days, v->id, day(v->obs_from).s, who);
    fb_finish(b, AML_NOT_EVALUABLE);
}

void fb_oom(fbuild *b)
{
    fb_explain(b, "not evaluated: out of memory");
    fb_finish(b, AML_NOT_EVALUABLE);
}

void eng_finding_clear(aml_finding *f)
{
    free(f->explanation);
    free(f->metrics_json);
    free(f->missing_json);
    free(f->ev);
    memset(f, 0, sizeof *f);
}

/* Discards a builder that will not be used (its finding is cleared). */
void fb_discard(fbuild *b)
{
    mcp_buf_cleanup(&b->mb);
    free(b->ev);
    b->ev = NULL;
    eng_finding_clear(b->f);
}

/* ---- small statistics for metrics ------------------------------------------------ */

double eng_median_i64(int64_t *a, size_t n)
{
    if (!n)
        return 0;
    aml_sort(a, n, sizeof *a, cmp_i64);
    return n % 2 ? (double)a[n / 2] : ((double)a[n / 2 - 1] + (double)a[n / 2]) / 2.0;
}

double eng_cv_of(const int64_t *a, size_t n)
{
    if (n < 2)
        return 0;
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        mean += (double)a[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        var += ((double)a[i] - mean) * ((double)a[i] - mean);
    var /= (double)n;
    return mean > 0 ? sqrt(var) / mean : 0;
}


/* ---- findings as JSON ------------------------------------------------------------ */

void aml_txn_id(aml_store *s, int64_t txn_no, char *out, size_t n)
{
    aml_st *st = aml_stmt(s, "SELECT txn_ref FROM transactions WHERE txn_no = ?");
    out[0] = '\0';
    if (st) {
        aml_bind_int(st, 1, txn_no);
        if (aml_step(st) == AML_ROW && !aml_col_null(st, 0))
            snprintf(out, n, "%s", aml_col_text(st, 0));
        aml_reset(st);
    }
    if (!out[0])
        snprintf(out, n, "#%lld", (long long)txn_no);
}

/* The evidence columns: t.txn_no first, then what aml_ev_row holds (texts from column 6 on). */
#define EV_COLS                                                                                                  \
    "SELECT t.txn_no, t.booked_at, t.amount_minor, t.amount_base_minor, t.from_acct, t.to_acct, t.txn_ref, "    \
    "t.currency, t.channel, fa.account_id, ta.account_id, t.location_id, t.time_precision FROM transactions t " \
    "LEFT JOIN accounts fa ON fa.acct_no = t.from_acct LEFT JOIN accounts ta ON ta.acct_no = t.to_acct "
static const char ev_one_sql[] = EV_COLS "WHERE t.txn_no = ?";
static const char ev_many_sql[] = EV_COLS "WHERE t.txn_no = ANY(CAST(? AS bigint[])) ORDER BY t.txn_no";
#define EV_TXT 6 /* the first text column */

/*
 * The current row of an EV_COLS statement into r. `keep`: its texts are
 * copied (r->mem), else they point into the statement until its next step.
 * @return 0, or -1 out of memory.
 */
static int ev_row_read(aml_st *st, aml_ev_row *r, int keep)
{
    size_t len = 0;
    for (int k = 0; keep && k < 7; k++)
        len += strlen(aml_col_text(st, EV_TXT + k)) + 1;
    r->mem = keep ? malloc(len) : NULL;
    if (keep && !r->mem)
        return -1;
    char *p = r->mem;
    r->txn_no = aml_col_int(st, 0);
    r->booked_at = aml_col_int(st, 1);
    r->amount_minor = aml_col_int(st, 2);
    r->usd_minor = aml_col_int(st, 3);
    r->from_acct = aml_col_int(st, 4);
    r->to_acct = aml_col_int(st, 5);
    for (int k = 0; k < 7; k++) {
        const char *t = aml_col_null(st, EV_TXT + k) ? NULL : aml_col_text(st, EV_TXT + k);
        r->txt[k] = t;
        if (t && keep) {
            size_t n = strlen(t) + 1;
            memcpy(p, t, n);
            r->txt[k] = p;
            p += n;
        }
    }
    return 0;
}

static int cmp_ev_row(const void *a, const void *b)
{
    return cmp_i64(&((const aml_ev_row *)a)->txn_no, &((const aml_ev_row *)b)->txn_no);
}

/* The row of txn_no read ahead, or NULL. */
static const aml_ev_row *ev_find(const aml_asm_rows *rows, int64_t txn_no)
{
    aml_ev_row key;
    key.txn_no = txn_no;
    return rows && rows->nev ? bsearch(&key, rows->ev, rows->nev, sizeof *rows->ev, cmp_ev_row) : NULL;
}

/* Every evidence transaction of the assessment, ascending and without repeats, into *out; how many (-1 no memory). */
static ptrdiff_t evidence_nos(const aml_assessment *a, int64_t **out)
{
    size_t n = 0, k = 0;
    for (int t = 0; t < AML_NTYP; t++)
        if (a->mask & (1u << t))
            n += a->f[t].nev;
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (int t = 0; t < AML_NTYP; t++)
        for (size_t i = 0; (a->mask & (1u << t)) && i < a->f[t].nev; i++)
            v[k++] = a->f[t].ev[i].no;
    qsort(v, n, sizeof *v, cmp_i64);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1])
            v[k++] = v[i];
    *out = v;
    return (ptrdiff_t)k;
}

/* Reads the evidence rows of nos[0, n) in one statement (PostgreSQL). */
static void ev_load(aml_store *s, aml_asm_rows *r, const int64_t *nos, size_t n)
{
    aml_st *st = n ? aml_stmt(s, ev_many_sql) : NULL;
    if (!st || aml_bind_int_array(st, 1, nos, n))
        return;
    r->ev = malloc(n * sizeof *r->ev);
    while (r->ev && r->nev < n && aml_step(st) == AML_ROW && ev_row_read(st, &r->ev[r->nev], 1) == 0)
        r->nev++;
    aml_reset(st);
}

void aml_asm_rows_load(aml_store *s, aml_asm_rows *r, const aml_assessment *a, const int64_t *accts, size_t n)
{
    memset(r, 0, sizeof *r);
    aml_acct_map_init(&r->ids, s, AML_ACCT_ID);
    if (aml_store_backend(s) != AML_BACKEND_PG)
        return;
    int64_t *nos;
    ptrdiff_t k = evidence_nos(a, &nos);
    if (k < 0)
        return;
    ev_load(s, r, nos, (size_t)k);
    free(nos);
    int64_t focus[AML_NTYP + 64];
    size_t nf = 0;
    for (size_t i = 0; i < n && nf < 64; i++)
        focus[nf++] = accts[i];
    for (int t = 0; t < AML_NTYP; t++)
        if ((a->mask & (1u << t)) && a->f[t].focus_acct)
            focus[nf++] = a->f[t].focus_acct;
    aml_acct_map_load(&r->ids, focus, nf);
}

void aml_asm_rows_cleanup(aml_asm_rows *r)
{
    for (size_t i = 0; i < r->nev; i++)
        free(r->ev[i].mem);
    free(r->ev);
    r->ev = NULL;
    r->nev = 0;
    aml_acct_map_cleanup(&r->ids);
}

/* A text column as a JSON string, or null. */
static void jw_text_or_null(mcp_jw *w, const char *t)
{
    if (t)
        mcp_jw_string(w, t);
    else
        mcp_jw_null(w);
}

static void ev_row_write(mcp_jw *w, const aml_ev_row *r, int role, int64_t focus)
{
    char id[96], when[21];
    if (r->txt[0])
        snprintf(id, sizeof id, "%s", r->txt[0]);
    else
        snprintf(id, sizeof id, "#%lld", (long long)r->txn_no);
    aml_fmt_time(r->booked_at, when);
    int64_t fa = r->from_acct, ta = r->to_acct;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "txnId");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "role");
    mcp_jw_string(w, role == AML_ROLE_TRIGGER ? "trigger" : "context");
    mcp_jw_key(w, "bookedAt");
    mcp_jw_string(w, when);
    mcp_jw_key(w, "timePrecision");
    mcp_jw_string(w, r->txt[6] ? r->txt[6] : "");
    mcp_jw_key(w, "amountMinor");
    mcp_jw_int(w, r->amount_minor);
    mcp_jw_key(w, "currency");
    mcp_jw_string(w, r->txt[1] ? r->txt[1] : "");
    mcp_jw_key(w, "amountUsdMinor");
    mcp_jw_int(w, r->usd_minor);
    mcp_jw_key(w, "channel");
    mcp_jw_string(w, r->txt[2] ? r->txt[2] : "");
    mcp_jw_key(w, "direction");
    mcp_jw_string(w, ta == focus && fa != focus ? "in" : fa == focus && ta != focus ? "out" : "related");
    mcp_jw_key(w, "fromAccountId");
    jw_text_or_null(w, r->txt[3]);
    mcp_jw_key(w, "toAccountId");
    jw_text_or_null(w, r->txt[4]);
    mcp_jw_key(w, "locationId");
    jw_text_or_null(w, r->txt[5]);
    mcp_jw_object_end(w);
}

int aml_evidence_write(aml_store *s, const aml_asm_rows *rows, mcp_jw *w, int64_t txn_no, int role, int64_t focus)
{
    const aml_ev_row *kept = ev_find(rows, txn_no);
    if (kept) {
        ev_row_write(w, kept, role, focus);
        return 0;
    }
    aml_st *st = aml_stmt(s, ev_one_sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, txn_no);
    aml_ev_row r;
    if (aml_step(st) != AML_ROW || ev_row_read(st, &r, 0)) {
        aml_reset(st);
        return -1;
    }
    ev_row_write(w, &r, role, focus);
    aml_reset(st);
    return 0;
}

void aml_finding_write(aml_store *s, aml_asm_rows *rows, mcp_jw *w, const aml_assessment *a, int typ)
{
    const aml_finding *f = &a->f[typ];
    const aml_typology_def *d = &aml_catalog()[typ];
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "typologyId");
    mcp_jw_string(w, d->id);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, d->name);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, aml_status_name(f->status));
    mcp_jw_key(w, "score");
    mcp_jw_int(w, f->score);
    if (f->variant[0]) {
        mcp_jw_key(w, "variant");
        mcp_jw_string(w, f->variant);
    }
    mcp_jw_key(w, "explanation");
    mcp_jw_string(w, f->explanation ? f->explanation : "");
    if (f->focus_acct) {
        const char *id = rows ? aml_acct_map_get(&rows->ids, f->focus_acct) : NULL;
        char one[128];
        if (!rows)
            aml_account_id(s, f->focus_acct, one, sizeof one);
        mcp_jw_key(w, "accountId");
        mcp_jw_string(w, rows ? (id ? id : "") : one);
    }
    mcp_jw_key(w, "metrics");
    mcp_jw_raw(w, f->metrics_json, strlen(f->metrics_json));
    mcp_jw_key(w, "params");
    aml_params_write(w, &a->params, typ);
    if (f->missing_json) {
        mcp_jw_key(w, "missingInputs");
        mcp_jw_raw(w, f->missing_json, strlen(f->missing_json));
    }
    mcp_jw_key(w, "evidence");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < f->nev; i++)
        aml_evidence_write(s, rows, w, f->ev[i].no, f->ev[i].role, f->focus_acct);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "sarCategory");
    aml_sar_category_write(w, typ, 0);
    mcp_jw_object_end(w);
}
