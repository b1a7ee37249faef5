/*
 * The typology engine (see engine.h): runs the typologies over a case's
 * focus accounts and keeps, per typology, the strongest finding.
 *
 * Where things are:
 *   typology.h   what a typology sees (the run, the account view, the finding builder)
 *   load.c       loading an account's transactions, customers and graph neighbours
 *   finding.c    the finding builder and the JSON of findings and evidence
 *   cash.c       T01 structuring, T02 funnel account, T12 round amounts
 *   flow.c       T03 fan-in, T04 fan-out, T05 rapid movement, T06 money mule, T13 third-party payments
 *   graph.c      T07 cycle, T08 layering
 *   profile.c    T10 dormant account reactivated, T11 activity inconsistent with the profile
 *   exposure.c   T09 high-risk jurisdiction, T14 trade-based money laundering
 *   sanctions.c  T15 sanctions and PEP exposure (screening against the loaded lists)
 *
 * Every loop walks arrays sorted by (booked_at, txn_no), and every graph
 * search counts its work against the maxExpansions/maxEdgesPerNode bounds,
 * so results are a function of the data and parameters alone.
 */
#include "engine/typology.h"
#include "screen/lists.h"

/* The typologies in catalog order (table-driven dispatch). */
static const typology_fn typologies[AML_NTYP] = {
    t01_structuring, t02_funnel,   t03_fan_in,       t04_fan_out, t05_rapid_movement,
    t06_money_mule,  t07_cycle,    t08_layering,     t09_jurisdiction, t10_dormant,
    t11_profile,     t12_round_amounts, t13_third_party, t14_trade, t15_sanctions};

/* ---- the run's reference data ------------------------------------------------------ */

static const char sql_jl[] = "SELECT list_name, country, effective_from, effective_to FROM jurisdiction_lists "
                             "ORDER BY list_name, country, effective_from";
static const char sql_listed[] = "SELECT acct_no, country FROM accounts WHERE country IN "
                                 "(SELECT country FROM jurisdiction_lists) ORDER BY acct_no";
static const char sql_any_country[] = "SELECT 1 FROM accounts WHERE country IS NOT NULL LIMIT 1";
static const char sql_any_docs[] = "SELECT 1 FROM trade_documents LIMIT 1";
static const char sql_fx[] = "SELECT currency, rate_date, usd_num, usd_den FROM fx_rates ORDER BY currency, rate_date";

/* The context's queries, sent ahead together (aml_prefetch: one round trip on PostgreSQL for all five). */
static void send_context_queries(eng *e)
{
    static const char *const sql[] = {sql_jl, sql_listed, sql_any_country, sql_any_docs, sql_fx};
    if (aml_store_backend(e->s) != AML_BACKEND_PG)
        return;
    for (size_t k = 0; k < sizeof sql / sizeof *sql; k++)
        aml_prefetch(aml_stmt(e->s, sql[k]));
}

/* Dated jurisdiction list entries. */
static int load_jurisdictions(eng *e, aml_err *err)
{
    aml_st *st = aml_stmt(e->s, sql_jl);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    size_t cap = 0;
    while (aml_step(st) == AML_ROW) {
        if (e->njl == cap) {
            cap = cap ? cap * 2 : 16;
            jrow *n = realloc(e->jl, cap * sizeof *n);
            if (!n) {
                aml_reset(st);
                return aml_errf(err, "out of memory");
            }
            e->jl = n;
        }
        jrow *j = &e->jl[e->njl++];
        snprintf(j->list, sizeof j->list, "%s", aml_col_text(st, 0));
        snprintf(j->country, sizeof j->country, "%s", aml_col_text(st, 1));
        int ok;
        j->from = eng_date_col(st, 2, &ok);
        if (!ok)
            j->from = INT64_MIN;
        j->to = eng_date_col(st, 3, &ok);
        if (!ok)
            j->to = INT64_MAX;
    }
    aml_reset(st);
    return 0;
}

/* Accounts in a country that is on some list, and whether the store has countries and trade documents. */
static int load_flags(eng *e, aml_err *err)
{
    aml_st *st = aml_stmt(e->s, sql_listed);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    while (aml_step(st) == AML_ROW) {
        int64_t *slot = imap_slot(&e->listed, aml_col_int(st, 0));
        if (slot)
            *slot = eng_intern(&e->strs, aml_col_text(st, 1));
    }
    aml_reset(st);
    st = aml_stmt(e->s, sql_any_country);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    e->any_country = aml_step(st) == AML_ROW;
    aml_reset(st);
    st = aml_stmt(e->s, sql_any_docs);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    e->any_trade_docs = aml_step(st) == AML_ROW;
    aml_reset(st);
    return 0;
}

/* Dated FX rates (T14 converts invoices with them). */
static int load_fx(eng *e, aml_err *err)
{
    aml_st *st = aml_stmt(e->s, sql_fx);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    size_t cap = 0;
    while (aml_step(st) == AML_ROW) {
        if (e->nfx == cap) {
            cap = cap ? cap * 2 : 32;
            fxrow *n = realloc(e->fx, cap * sizeof *n);
            if (!n) {
                aml_reset(st);
                return aml_errf(err, "out of memory");
            }
            e->fx = n;
        }
        fxrow *f = &e->fx[e->nfx++];
        snprintf(f->cur, sizeof f->cur, "%s", aml_col_text(st, 0));
        int ok;
        f->date = eng_date_col(st, 1, &ok);
        f->num = aml_col_int(st, 2);
        f->den = aml_col_int(st, 3);
    }
    aml_reset(st);
    return 0;
}

static int load_context(eng *e, aml_err *err)
{
    char v[16];
    send_context_queries(e);
    e->daygran = aml_meta_get(e->s, "data.day_precision", v, sizeof v) == 0 && strcmp(v, "1") == 0;
    if (load_jurisdictions(e, err))
        return -1;
    if (imap_init(&e->listed, 64) || imap_init(&e->gidx, 256))
        return aml_errf(err, "out of memory");
    if (load_flags(e, err))
        return -1;
    return load_fx(e, err);
}

struct aml_engine_ctx {
    eng e; /* only the context is loaded */
};

/*
 * A run over a context loaded once (aml_engine_ctx): its reference data is shared, read-only, and its
 * interned countries are interned again in the same order, so every id is the one a run of its own would give.
 */
static int share_context(eng *e, const aml_engine_ctx *c, aml_err *err)
{
    const eng *x = &c->e;
    e->shared = 1;
    e->daygran = x->daygran;
    e->jl = x->jl;
    e->njl = x->njl;
    e->listed = x->listed;
    e->any_country = x->any_country;
    e->any_trade_docs = x->any_trade_docs;
    e->fx = x->fx;
    e->nfx = x->nfx;
    if (imap_init(&e->gidx, 256))
        return aml_errf(err, "out of memory");
    for (size_t i = 0; i < x->strs.n; i++)
        if (eng_intern(&e->strs, x->strs.strs[i]) != (int)i + 1)
            return aml_errf(err, "out of memory");
    return 0;
}

static void eng_free(eng *e);

int aml_engine_ctx_load(aml_store *s, aml_engine_ctx **out, aml_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return aml_errf(err, "out of memory");
    (*out)->e.s = s;
    if (load_context(&(*out)->e, err)) {
        aml_prefetch_end(s);
        aml_engine_ctx_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

void aml_engine_ctx_free(aml_engine_ctx *c)
{
    if (!c)
        return;
    eng_free(&c->e);
    free(c);
}

static void eng_free(eng *e)
{
    for (int d = 0; d < 3; d++)
        free(e->pc[d]);
    for (size_t i = 0; i < e->ngnodes; i++) {
        free(e->gnodes[i].out);
        free(e->gnodes[i].in);
    }
    free(e->gnodes);
    imap_free(&e->gidx);
    eng_ahead_free(e);
    if (!e->shared) {
        imap_free(&e->listed);
        free(e->jl);
        free(e->fx);
    }
    eng_interner_free(&e->strs);
    if (e->scr_own)
        aml_screener_free(e->scr);
    if (e->data_hash.ctx) {
        char dummy[65];
        aml_sha256_final(&e->data_hash, dummy);
    }
}

/* ---- running a case -------------------------------------------------------------- */

/* Comma-list union of two variant lists, first list's order first. */
static void variants_union(char *out, size_t n, const char *a, const char *b)
{
    snprintf(out, n, "%s", a);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s", b);
    for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ",")) {
        size_t l = strlen(tok), k = strlen(out);
        const char *p = out;
        int have = 0;
        while ((p = strstr(p, tok)) != NULL) {
            if ((p == out || p[-1] == ',') && (p[l] == '\0' || p[l] == ','))
                have = 1;
            p += l;
        }
        if (!have && k + l + 2 < n)
            snprintf(out + k, n - k, "%s%s", k ? "," : "", tok);
    }
}

static int status_rank(int s)
{
    return s == AML_MATCHED ? 2 : s == AML_NOT_EVALUABLE ? 1 : 0;
}

/* Keeps the stronger of the current finding of a typology and f (matched over not evaluable over
 * not matched, then the higher score), and the union of their variants. */
static void keep_stronger(aml_finding *cur, aml_finding *f)
{
    int better = !cur->metrics_json || status_rank(f->status) > status_rank(cur->status) ||
                 (f->status == cur->status && f->score > cur->score);
    char seen[128];
    variants_union(seen, sizeof seen, cur->variants, f->variants);
    if (better) {
        eng_finding_clear(cur);
        *cur = *f;
    } else {
        eng_finding_clear(f);
    }
    snprintf(cur->variants, sizeof cur->variants, "%s", seen);
}

/* Runs the typologies of the mask over one focus account. */
static int run_account(eng *e, int64_t acct, aml_assessment *out, aml_err *err)
{
    acct_view v;
    int64_t l0 = aml_mono_ns();
    if (eng_load_view(e, acct, &v, err)) {
        eng_view_free(&v);
        aml_prefetch_end(e->s);
        return -1;
    }
    int prof = getenv("AML_PROFILE") != NULL; /* per-typology timings on stderr */
    if (prof)
        fprintf(stderr, "  load %.2f ms (%zu transactions)\n", (double)(aml_mono_ns() - l0) / 1e6, v.ntx);
    for (int t = 0; t < AML_NTYP; t++) {
        if (!(out->mask & (1u << t)))
            continue;
        aml_finding f;
        memset(&f, 0, sizeof f);
        int64_t t0 = prof ? aml_mono_ns() : 0;
        typologies[t](e, &v, &f);
        if (prof)
            fprintf(stderr, "  %s %.2f ms\n", aml_catalog()[t].code, (double)(aml_mono_ns() - t0) / 1e6);
        keep_stronger(&out->f[t], &f);
    }
    eng_view_free(&v);
    aml_prefetch_end(e->s); /* what was sent ahead and not used */
    for (int d = 0; d < 3; d++) {
        free(e->pc[d]);
        e->pc[d] = NULL;
        e->pc_have[d] = 0;
    }
    e->pc_view = NULL;
    if (e->oom)
        return aml_errf(err, "out of memory while assessing");
    return 0;
}

/* A typology with no focus account at all, and the variants of a multi-account case in the metrics. */
static void complete_finding(aml_finding *ft, int t, size_t naccts)
{
    if (!ft->metrics_json) {
        ft->typ = t;
        ft->status = AML_NOT_EVALUABLE;
        ft->metrics_json = aml_strdup("{\"scoreBreakdown\":[],\"evidenceCount\":0}");
        ft->explanation = aml_strdup("The case has no focus account to evaluate.");
        ft->missing_json = aml_strdup("[\"case_accounts\"]");
    }
    if (ft->status == AML_MATCHED && naccts > 1 && ft->variants[0] && strchr(ft->variants, ',')) {
        /* Record every variant the case's accounts matched, not only the best account's. */
        size_t ml = strlen(ft->metrics_json);
        char *nm = malloc(ml + sizeof ft->variants + 32);
        if (nm && ml > 1) {
            snprintf(nm, ml + sizeof ft->variants + 32, "%.*s,\"variantsInCase\":\"%s\"}", (int)(ml - 1),
                     ft->metrics_json, ft->variants);
            free(ft->metrics_json);
            ft->metrics_json = nm;
        } else {
            free(nm);
        }
    }
}

/* Counts, case score, risk level, outcome and the assessment id. */
static void summarize(const aml_case_spec *cs, const char *kind, const char *lists_key, aml_assessment *out)
{
    for (int t = 0; t < AML_NTYP; t++) {
        if (!(out->mask & (1u << t)))
            continue;
        complete_finding(&out->f[t], t, cs->naccts);
        if (out->f[t].status == AML_MATCHED) {
            out->matched++;
            if (out->f[t].score > out->case_score)
                out->case_score = out->f[t].score;
        } else if (out->f[t].status == AML_NOT_EVALUABLE) {
            out->not_evaluable++;
        }
    }
    out->risk_level = aml_risk_level(out->case_score);
    out->outcome = out->matched ? "typologies_matched" : out->not_evaluable ? "partial_not_evaluable"
                                                                             : "no_typology_matched";
    aml_params_sha256(&out->params, out->params_sha);
    char seed[600], h[65];
    /* T15's answer depends on the lists loaded: their versions enter the id. */
    snprintf(seed, sizeof seed, "%s|%s|%u|%s|%s|%s|%s|%s", cs->case_id ? cs->case_id : "", kind, out->mask,
             out->params_sha, out->data_sha, AML_ENGINE_VERSION, AML_CATALOG_VERSION, lists_key);
    aml_sha256_hex(seed, strlen(seed), h);
    snprintf(out->assessment_id, sizeof out->assessment_id, "asm_%.24s", h);
}

const char *aml_status_name(int status)
{
    return status == AML_MATCHED ? "matched" : status == AML_NOT_EVALUABLE ? "not_evaluable" : "not_matched";
}

const char *aml_risk_level(int score)
{
    return score >= 70 ? "high" : score >= 40 ? "medium" : "low";
}

int aml_engine_run(aml_store *s, const aml_case_spec *cs, const aml_params *p, unsigned mask, const char *kind,
                   aml_assessment *out, aml_err *err)
{
    return aml_engine_run_ctx(s, NULL, cs, p, mask, kind, out, err);
}

static int run_ctx(aml_store *s, const aml_engine_ctx *ctx, const aml_case_spec *cs, const aml_params *p,
                   unsigned mask, const char *kind, aml_assessment *out, aml_err *err);

/*
 * A run whose connection was lost (aml_store_resets changed) is not trusted, whether it failed or not: a
 * read that failed may have looked like no rows, or made a later step fail with a misleading message
 * ("account #N is missing"). Its error says what happened.
 */
int aml_engine_run_ctx(aml_store *s, const aml_engine_ctx *ctx, const aml_case_spec *cs, const aml_params *p,
                       unsigned mask, const char *kind, aml_assessment *out, aml_err *err)
{
    int64_t resets = aml_store_resets(s);
    int rc = run_ctx(s, ctx, cs, p, mask, kind, out, err);
    if (aml_store_resets(s) == resets)
        return rc;
    if (!rc)
        aml_assessment_free(out);
    return aml_errf(err, "the connection to the case store was lost during the run (%s)", aml_errmsg(s));
}

static int run_ctx(aml_store *s, const aml_engine_ctx *ctx, const aml_case_spec *cs, const aml_params *p,
                   unsigned mask, const char *kind, aml_assessment *out, aml_err *err)
{
    memset(out, 0, sizeof *out);
    out->params = *p;
    out->mask = mask & AML_ALL_TYPOLOGIES;
    eng e;
    memset(&e, 0, sizeof e);
    e.s = s;
    e.p = &out->params;
    e.from = cs->from;
    e.to = cs->to;
    e.lean = kind && strcmp(kind, "scan") == 0;
    e.mask = out->mask;
    if (out->mask & (1u << AML_T15)) {
        e.scr = cs->screener;
        if (!e.scr && aml_screener_new(s, &e.scr, err)) {
            eng_free(&e);
            return -1;
        }
        e.scr_own = !cs->screener;
    }
    if (aml_sha256_init(&e.data_hash) || (ctx ? share_context(&e, ctx, err) : load_context(&e, err))) {
        aml_prefetch_end(s);
        eng_free(&e);
        return err && err->msg[0] ? -1 : aml_errf(err, "cannot start the engine");
    }
    int rc = 0;
    for (size_t a = 0; a < cs->naccts && !rc; a++)
        rc = run_account(&e, cs->accts[a], out, err);
    out->edges_read = e.edges_read;
    aml_sha256_update(&e.data_hash, e.hbuf, e.hlen);
    aml_sha256_final(&e.data_hash, out->data_sha);
    char lists_key[AML_LISTS_KEY_MAX];
    snprintf(lists_key, sizeof lists_key, "%s", eng_screener_key(&e));
    eng_free(&e);
    if (rc) {
        aml_assessment_free(out);
        return -1;
    }
    summarize(cs, kind, lists_key, out);
    return 0;
}

void aml_assessment_free(aml_assessment *a)
{
    if (!a)
        return;
    for (int t = 0; t < AML_NTYP; t++)
        eng_finding_clear(&a->f[t]);
}
