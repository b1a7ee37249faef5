/*
 * Screening tools of mcp-server-aml (docs/aml.md, "Screening"):
 * screenEntity (one name against the loaded sanctions / PEP lists, a
 * result shaped like yente's /match), screenCase (the case's subjects and
 * counterparties, hits kept as screening findings with their evidence)
 * and dismissScreeningHit (a reviewed false hit not raised again, who
 * and why in the audit log).
 *
 * The index is built from the store on first use and rebuilt when a
 * list version is loaded. Like the other tools: a connection for the
 * whole call, an audit entry per call. The index and its scratch are
 * shared, so screening calls take turns on them (scr.mu); screenCase and
 * dismissScreeningHit write, and hold the write lock for the whole call.
 */
#include "screen/lists.h"
#include "tools/tools.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Shared by the three tools (freed with the last of them). */
typedef struct scr {
    aml_app *app;
    aml_screening sc;
    aml_sc_scratch *scratch;
    pthread_mutex_t mu; /* one screening call at a time uses sc and scratch */
    int refs;
} scr;

static void scr_unref(void *p)
{
    scr *s = p;
    if (--s->refs > 0)
        return;
    aml_sc_scratch_free(s->scratch);
    aml_screening_free(&s->sc);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

typedef struct sctx {
    scr *s;
    aml_store *db; /* the call's connection */
    int writing;   /* the write lock is held */
    mcp_call *call;
    char req_sha[65], resp_sha[65];
    char case_id[AML_CASE_ID_MAX + 1];
    const char *outcome;
    char detail[256];
    mcp_buf out, text;
    mcp_jw w;
} sctx;

static void sctx_begin(sctx *c, scr *s, mcp_call *call, const mcp_json *args)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->call = call;
    c->outcome = "ok";
    aml_args_sha256(args, c->req_sha);
    mcp_buf_init(&c->out, 0);
    mcp_buf_init(&c->text, 0);
    mcp_jw_init(&c->w, &c->out);
    c->db = aml_app_acquire(s->app);
    pthread_mutex_lock(&s->mu);
}

/* Takes the write lock for the rest of the call. */
static void sctx_write(sctx *c)
{
    if (!c->writing)
        aml_app_write_lock(c->s->app, c->db);
    c->writing = 1;
}

static const char *actor(const sctx *c)
{
    const char *subject = mcp_call_subject(c->call);
    return aml_app_actor(c->s->app, subject);
}

static mcp_status sctx_end(sctx *c, mcp_status st)
{
    char action[64];
    snprintf(action, sizeof action, "tool.%s", mcp_call_tool_name(c->call));
    aml_audit_entry e = {actor(c), action, c->case_id[0] ? c->case_id : NULL, c->req_sha,
                         c->resp_sha[0] ? c->resp_sha : NULL, st == MCP_OK ? c->outcome : "error",
                         c->detail[0] ? c->detail : NULL};
    char dt[AML_AUDIT_DETAIL_MAX];
    e.detail = aml_audit_detail(e.detail, mcp_call_trace(c->call, NULL), dt, sizeof dt);
    aml_err err;
    sctx_write(c);
    if (aml_audit_append(c->db, &e, &err))
        mcp_call_log(c->call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(c->s->app);
    pthread_mutex_unlock(&c->s->mu);
    aml_app_release(c->s->app, c->db);
    mcp_buf_cleanup(&c->out);
    mcp_buf_cleanup(&c->text);
    return st;
}

static mcp_status sfail(sctx *c, const char *msg)
{
    c->outcome = "error";
    return mcp_call_error(c->call, "%s", msg);
}

/* Sends the structured result and the text block. */
static mcp_status send(sctx *c)
{
    mcp_status st = mcp_jw_finish(&c->w);
    if (st != MCP_OK)
        return st;
    aml_sha256_hex(c->out.data, c->out.len, c->resp_sha);
    st = mcp_call_structured(c->call, c->out.data, c->out.len);
    if (st == MCP_OK)
        st = mcp_call_text(c->call, c->text.data ? c->text.data : "", NULL);
    return st;
}

/* The index, (re)built when a list version was loaded since. */
static int ensure_index(sctx *c)
{
    scr *s = c->s;
    int64_t v = aml_lists_version(c->db);
    if (v <= 0) {
        sfail(c, "No screening list is loaded: load one with 'mcp-server-aml lists import --db FILE --format "
                 "ftm|csv --list NAME PATH' (OpenSanctions' FollowTheMoney export, or the screening CSV).");
        snprintf(c->detail, sizeof c->detail, "no lists");
        return -1;
    }
    if (s->sc.ix && s->sc.version == v)
        return 0;
    aml_sc_scratch_free(s->scratch);
    s->scratch = NULL;
    aml_screening_free(&s->sc);
    aml_err err = {{0}};
    if (aml_screening_load(c->db, &s->sc, &err) || !(s->scratch = aml_sc_scratch_new(s->sc.ix))) {
        char msg[600];
        snprintf(msg, sizeof msg, "The screening index could not be built: %s", err.msg);
        sfail(c, msg);
        return -1;
    }
    return 0;
}

/* ---- one screening ------------------------------------------------------------------------ */

typedef struct sq {
    aml_sc_query q;
    const char *ids[AML_SC_MAX_IDS];
    uint16_t lists[64];
    double cutoff;
    int limit;
} sq;

/* Fills the query from tool arguments; -1 after a tool error. */
static int query_args(sctx *c, const mcp_json *args, sq *x)
{
    memset(x, 0, sizeof *x);
    x->q.name = mcp_json_str(mcp_json_get(args, "name"), NULL);
    x->q.schema = aml_sc_schema_parse(mcp_json_str(mcp_json_get(args, "schema"), NULL));
    x->q.birth_date = mcp_json_str(mcp_json_get(args, "birthDate"), NULL);
    x->q.country = mcp_json_str(mcp_json_get(args, "nationality"), NULL);
    if (!x->q.country)
        x->q.country = mcp_json_str(mcp_json_get(args, "country"), NULL);
    const char *g = mcp_json_str(mcp_json_get(args, "gender"), NULL);
    x->q.gender = g && (g[0] == 'm' || g[0] == 'f') ? g[0] : 0;
    const mcp_json *ids = mcp_json_get(args, "identifiers");
    for (size_t i = 0; i < mcp_json_len(ids) && x->q.nids < AML_SC_MAX_IDS; i++)
        if (mcp_json_str(mcp_json_at(ids, i), NULL))
            x->ids[x->q.nids++] = mcp_json_str(mcp_json_at(ids, i), NULL);
    x->q.ids = x->ids;
    const mcp_json *th = mcp_json_get(args, "threshold"), *cu = mcp_json_get(args, "cutoff");
    x->q.threshold = th ? mcp_json_number(th) : AML_SC_DEFAULT_THRESHOLD;
    x->cutoff = cu ? mcp_json_number(cu) : (x->q.threshold < 0.5 ? x->q.threshold : 0.5);
    if (x->cutoff > x->q.threshold)
        x->cutoff = x->q.threshold;
    x->limit = mcp_json_get(args, "limit") ? (int)mcp_json_int(mcp_json_get(args, "limit")) : 5;
    const mcp_json *ls = mcp_json_get(args, "lists");
    for (size_t i = 0; i < mcp_json_len(ls) && i < 64; i++) {
        const char *name = mcp_json_str(mcp_json_at(ls, i), NULL);
        int no = name ? aml_screening_list_no(&c->s->sc, name) : -1;
        if (no < 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "Unknown list '%.64s': 'mcp-server-aml lists show' names the loaded lists.",
                     name ? name : "");
            sfail(c, msg);
            return -1;
        }
        x->lists[x->q.nlists++] = (uint16_t)no;
    }
    if (x->q.nlists)
        x->q.lists = x->lists;
    return 0;
}

/* One result object: yente's fields plus the list and a dismissal. */
static void write_result(sctx *c, const aml_sc_hit *h, double threshold, const char *subject, int *match)
{
    const aml_screening *sc = &c->s->sc;
    aml_store *st = c->db;
    const char *list = sc->lists[aml_sc_entity_list(sc->ix, h->ent)];
    int64_t user = aml_sc_entity_user(sc->ix, h->ent);
    const char *id = aml_sc_entity_id(sc->ix, h->ent);
    int dismissed = aml_lists_dismissed(st, subject, list, id);
    *match = h->score >= threshold && !dismissed;
    mcp_jw *w = &c->w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "id");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "caption");
    mcp_jw_string(w, aml_sc_entity_caption(sc->ix, h->ent));
    mcp_jw_key(w, "schema");
    mcp_jw_string(w, aml_sc_schema_name(aml_sc_entity_schema(sc->ix, h->ent)));
    mcp_jw_key(w, "list");
    mcp_jw_string(w, list);
    mcp_jw_key(w, "properties");
    aml_lists_write_properties(st, user, w);
    mcp_jw_key(w, "score");
    mcp_jw_double(w, (double)(int64_t)(h->score * 1000 + 0.5) / 1000);
    mcp_jw_key(w, "match");
    mcp_jw_bool(w, *match);
    mcp_jw_key(w, "dismissed");
    mcp_jw_bool(w, dismissed);
    mcp_jw_key(w, "explanations");
    aml_sc_explain(sc->ix, c->s->scratch, h, w);
    mcp_jw_object_end(w);
    aml_buf_printf(&c->text, "  %s%.3f %s [%s] %s (%s), matched name \"%s\"%s\n", *match ? "MATCH " : "",
                   h->score, aml_sc_entity_caption(sc->ix, h->ent), aml_sc_schema_name(aml_sc_entity_schema(sc->ix, h->ent)),
                   id, list, aml_sc_name_orig(sc->ix, h->name), dismissed ? " (dismissed as a false hit)" : "");
}

/* Screens one query, writing {"query", "results", "total", "matches"} members into the open object. */
static int screen_one(sctx *c, sq *x, aml_sc_hit *hits, int *nmatch)
{
    aml_sc_query q = x->q;
    q.threshold = x->cutoff;
    int n = aml_sc_search(c->s->sc.ix, c->s->scratch, &q, hits, x->limit);
    if (n < 0)
        return -1;
    const char *norm = aml_sc_scratch_query(c->s->scratch)->text;
    char subject[AML_SC_MAX_NAME];
    snprintf(subject, sizeof subject, "%s", norm);
    mcp_jw *w = &c->w;
    mcp_jw_key(w, "normalizedName");
    mcp_jw_string(w, subject);
    mcp_jw_key(w, "results");
    mcp_jw_array_begin(w);
    *nmatch = 0;
    for (int i = 0; i < n && i < x->limit; i++) {
        int m;
        write_result(c, &hits[i], x->q.threshold, subject, &m);
        *nmatch += m;
    }
    mcp_jw_array_end(w);
    mcp_jw_key(w, "total");
    mcp_jw_int(w, n);
    mcp_jw_key(w, "matches");
    mcp_jw_int(w, *nmatch);
    return n;
}

static mcp_status screen_entity(mcp_call *call, const mcp_json *args, void *ud)
{
    sctx c;
    sctx_begin(&c, ud, call, args);
    sq x;
    if (ensure_index(&c) || query_args(&c, args, &x))
        return sctx_end(&c, MCP_OK);
    aml_sc_hit *hits = calloc((size_t)x.limit, sizeof *hits);
    if (!hits)
        return sctx_end(&c, MCP_ERR_NOMEM);
    mcp_jw *w = &c.w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "query");
    mcp_jw_value(w, args);
    mcp_jw_key(w, "threshold");
    mcp_jw_double(w, x.q.threshold);
    mcp_jw_key(w, "cutoff");
    mcp_jw_double(w, x.cutoff);
    aml_buf_printf(&c.text, "Screening \"%.200s\" against %zu entities of %zu list(s):\n", x.q.name,
                   aml_sc_index_entities(c.s->sc.ix), c.s->sc.nlists);
    int nmatch = 0;
    int n = screen_one(&c, &x, hits, &nmatch);
    mcp_jw_object_end(w);
    free(hits);
    if (n < 0) {
        snprintf(c.detail, sizeof c.detail, "empty name");
        return sctx_end(&c, sfail(&c, "The name has no letters or digits to screen after normalisation (honorifics "
                                      "and legal-form words alone are not a name)."));
    }
    aml_buf_printf(&c.text, "%d result(s) at or above %.2f, %d match(es) at or above the threshold %.2f.%s\n", n,
                   x.cutoff, nmatch, x.q.threshold,
                   nmatch ? " A match is a lead for review, not a finding: check the explanations (dates, "
                            "nationality, the name that matched)."
                          : "");
    snprintf(c.detail, sizeof c.detail, "%d results, %d matches", n, nmatch);
    return sctx_end(&c, send(&c));
}

/* ---- screenCase --------------------------------------------------------------------------- */

typedef struct party {
    char key[160];   /* customer id or account id */
    char name[256];
    char dob[32], country[64];
    int schema;
    const char *role; /* subject | counterparty */
} party;

#define SC_MAX_PARTIES 200

/* The holders of the focus accounts and the named counterparties in the window. */
static size_t case_parties(aml_store *s, const aml_case *cs, party *out)
{
    size_t n = 0;
    for (size_t i = 0; i < cs->naccts && n < SC_MAX_PARTIES; i++) {
        aml_st *st = aml_stmt(s, "SELECT c.customer_id, c.full_name, c.date_of_birth, c.country, "
                                       "c.customer_type FROM account_parties p JOIN customers c ON "
                                       "c.customer_id = p.customer_id WHERE p.acct_no = ? ORDER BY c.customer_id");
        if (!st)
            break;
        aml_bind_int(st, 1, cs->accts[i]);
        while (n < SC_MAX_PARTIES && aml_step(st) == AML_ROW) {
            party *p = &out[n];
            snprintf(p->key, sizeof p->key, "customer:%s", aml_col_text(st, 0));
            snprintf(p->name, sizeof p->name, "%s", aml_col_text(st, 1));
            snprintf(p->dob, sizeof p->dob, "%s", aml_col_text(st, 2));
            snprintf(p->country, sizeof p->country, "%s", aml_col_text(st, 3));
            p->schema = strcmp(aml_col_text(st, 4), "individual") ? AML_SC_LEGALENTITY : AML_SC_PERSON;
            p->role = "subject";
            int dup = 0;
            for (size_t k = 0; k < n; k++)
                dup |= !strcmp(out[k].key, p->key);
            n += !dup && p->name[0];
        }
        aml_reset(st);
        st = aml_stmt(s, "SELECT DISTINCT a.account_id, a.holder_name, a.country FROM transactions t JOIN accounts a "
                         "ON a.acct_no = CASE WHEN t.from_acct = ?1 THEN t.to_acct ELSE t.from_acct END WHERE "
                         "(t.from_acct = ?1 OR t.to_acct = ?1) AND t.booked_at BETWEEN ?2 AND ?3 AND a.is_internal = 0 "
                         "AND a.holder_name IS NOT NULL AND a.holder_name <> '' ORDER BY a.account_id LIMIT 200");
        if (!st)
            break;
        aml_bind_int(st, 1, cs->accts[i]);
        aml_bind_int(st, 2, cs->from);
        aml_bind_int(st, 3, cs->to);
        while (n < SC_MAX_PARTIES && aml_step(st) == AML_ROW) {
            party *p = &out[n];
            snprintf(p->key, sizeof p->key, "account:%s", aml_col_text(st, 0));
            snprintf(p->name, sizeof p->name, "%s", aml_col_text(st, 1));
            p->dob[0] = 0;
            snprintf(p->country, sizeof p->country, "%s", aml_col_text(st, 2));
            p->schema = AML_SC_ANY;
            p->role = "counterparty";
            int dup = 0;
            for (size_t k = 0; k < n; k++)
                dup |= !strcmp(out[k].key, p->key);
            n += !dup;
        }
        aml_reset(st);
    }
    return n;
}

/* Keeps a matched hit as a screening finding of the case (evidence: the result JSON). */
static void record_finding(sctx *c, const party *p, const aml_sc_hit *h)
{
    const aml_screening *sc = &c->s->sc;
    aml_store *s = c->db;
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_sc_explain(sc->ix, c->s->scratch, h, &w);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return;
    }
    char at[32];
    aml_fmt_time(aml_now(), at);
    aml_st *st = aml_stmt(s, "INSERT INTO screening_findings(case_id, subject, subject_name, list_name, "
                                   "entity_id, score, evidence, created_at, created_by) SELECT ?, ?, ?, list_name, "
                                   "entity_id, ?, ?, ?, ? FROM screening_entities WHERE entity_no = ? "
                                   "ON CONFLICT(case_id, subject, list_name, entity_id) DO UPDATE SET "
                                   "score = excluded.score, evidence = excluded.evidence, "
                                   "created_at = excluded.created_at, created_by = excluded.created_by");
    if (st) {
        aml_bind_text(st, 1, c->case_id);
        aml_bind_text(st, 2, p->key);
        aml_bind_text(st, 3, p->name);
        aml_bind_double(st, 4, h->score);
        aml_bind_textn(st, 5, b.data, b.len);
        aml_bind_text(st, 6, at);
        aml_bind_text(st, 7, actor(c));
        aml_bind_int(st, 8, aml_sc_entity_user(sc->ix, h->ent));
        aml_err err;
        if (aml_step_done(s, st, &err))
            mcp_call_log(c->call, MCP_LOG_ERROR, "aml", "screening finding not stored: %s", err.msg);
    }
    mcp_buf_cleanup(&b);
}

static int case_arg(sctx *c, const mcp_json *args, aml_case *cs)
{
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(args, "caseId"), &n);
    aml_err err = {{0}};
    int rc = id && n && n <= AML_CASE_ID_MAX && !memchr(id, '\0', n) ? aml_case_load(c->db, id, cs, &err)
                                                                     : 1;
    if (rc) {
        char msg[700];
        if (rc > 0)
            snprintf(msg, sizeof msg, "Unknown caseId '%.64s': no such case. Use listCases to find case ids.",
                     id ? id : "");
        else
            snprintf(msg, sizeof msg, "The case could not be loaded: %s", err.msg);
        snprintf(c->detail, sizeof c->detail, "unknown case");
        sfail(c, msg);
        return -1;
    }
    snprintf(c->case_id, sizeof c->case_id, "%s", id);
    return 0;
}

static void screen_party(sctx *c, const party *p, sq *x, aml_sc_hit *hits, int *nhits)
{
    x->q.name = p->name;
    x->q.schema = p->schema;
    x->q.birth_date = p->dob[0] ? p->dob : NULL;
    x->q.country = p->country[0] ? p->country : NULL;
    mcp_jw *w = &c->w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "party");
    mcp_jw_string(w, p->key);
    mcp_jw_key(w, "role");
    mcp_jw_string(w, p->role);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, p->name);
    size_t before = c->text.len;
    aml_buf_printf(&c->text, "%s %s \"%s\":\n", p->role, p->key, p->name);
    int nmatch = 0;
    int n = screen_one(c, x, hits, &nmatch);
    mcp_jw_object_end(w);
    if (n <= 0) {
        c->text.len = before; /* parties without results are not listed in the text */
        if (c->text.data)
            c->text.data[before] = 0;
        return;
    }
    for (int i = 0; i < n && i < x->limit; i++) {
        const aml_sc_hit *h = &hits[i];
        const char *list = c->s->sc.lists[aml_sc_entity_list(c->s->sc.ix, h->ent)];
        if (h->score >= x->q.threshold &&
            !aml_lists_dismissed(c->db, aml_sc_scratch_query(c->s->scratch)->text, list,
                                 aml_sc_entity_id(c->s->sc.ix, h->ent))) {
            record_finding(c, p, h);
            (*nhits)++;
        }
    }
}

static mcp_status screen_case(mcp_call *call, const mcp_json *args, void *ud)
{
    sctx c;
    sctx_begin(&c, ud, call, args);
    sctx_write(&c); /* matched hits are kept as findings */
    aml_case cs;
    sq x;
    if (ensure_index(&c) || case_arg(&c, args, &cs))
        return sctx_end(&c, MCP_OK);
    if (query_args(&c, args, &x)) {
        aml_case_free(&cs);
        return sctx_end(&c, MCP_OK);
    }
    party *ps = calloc(SC_MAX_PARTIES, sizeof *ps);
    aml_sc_hit *hits = calloc((size_t)x.limit, sizeof *hits);
    size_t np = ps && hits ? case_parties(c.db, &cs, ps) : 0;
    mcp_jw *w = &c.w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, c.case_id);
    mcp_jw_key(w, "threshold");
    mcp_jw_double(w, x.q.threshold);
    mcp_jw_key(w, "parties");
    mcp_jw_array_begin(w);
    int nhits = 0;
    for (size_t i = 0; i < np; i++)
        screen_party(&c, &ps[i], &x, hits, &nhits);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "screened");
    mcp_jw_int(w, (int64_t)np);
    mcp_jw_key(w, "findings");
    mcp_jw_int(w, nhits);
    mcp_jw_object_end(w);
    aml_buf_printf(&c.text, "Case %s: %zu part%s screened (subjects and named counterparties); %d match%s at or above "
                   "%.2f kept as screening findings of the case.%s\n",
                   c.case_id, np, np == 1 ? "y" : "ies", nhits, nhits == 1 ? "" : "es", x.q.threshold,
                   nhits ? " Review each: dismissScreeningHit records a false hit so it is not raised again." : "");
    snprintf(c.detail, sizeof c.detail, "%zu parties, %d findings", np, nhits);
    free(ps);
    free(hits);
    aml_case_free(&cs);
    return sctx_end(&c, send(&c));
}

/* ---- dismissScreeningHit ------------------------------------------------------------------ */

static mcp_status dismiss_hit(mcp_call *call, const mcp_json *args, void *ud)
{
    sctx c;
    sctx_begin(&c, ud, call, args);
    sctx_write(&c);
    const char *name = mcp_json_str(mcp_json_get(args, "name"), NULL);
    const char *list = mcp_json_str(mcp_json_get(args, "list"), NULL);
    const char *id = mcp_json_str(mcp_json_get(args, "entityId"), NULL);
    const char *reason = mcp_json_str(mcp_json_get(args, "reason"), NULL);
    aml_sc_name nm;
    aml_sc_normalize(name, strlen(name), &nm);
    aml_st *q = aml_stmt(c.db, "SELECT 1 FROM screening_entities WHERE list_name = ? AND entity_id = ?");
    if (!nm.ntok || !q)
        return sctx_end(&c, sfail(&c, "The name has no letters or digits after normalisation."));
    aml_bind_text(q, 1, list);
    aml_bind_text(q, 2, id);
    if (aml_step(q) != AML_ROW) {
        char msg[300];
        snprintf(msg, sizeof msg, "No entity '%.80s' in list '%.64s': give the id and list of a screening result.",
                 id, list);
        return sctx_end(&c, sfail(&c, msg));
    }
    aml_err err = {{0}};
    if (aml_lists_dismiss(c.db, nm.text, list, id, actor(&c), reason, &err))
        return sctx_end(&c, sfail(&c, err.msg));
    mcp_jw *w = &c.w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "normalizedName");
    mcp_jw_string(w, nm.text);
    mcp_jw_key(w, "list");
    mcp_jw_string(w, list);
    mcp_jw_key(w, "entityId");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "dismissedBy");
    mcp_jw_string(w, actor(&c));
    mcp_jw_key(w, "reason");
    mcp_jw_string(w, reason);
    mcp_jw_object_end(w);
    aml_buf_printf(&c.text, "Recorded: \"%s\" is not %s of list %s (%s). Screening will still show it, marked "
                   "dismissed, and will not count or keep it as a match.\n", nm.text, id, list, reason);
    snprintf(c.detail, sizeof c.detail, "why: %.120s; dismissed %.40s/%.60s", reason, list, id);
    return sctx_end(&c, send(&c));
}

/* ---- registration ------------------------------------------------------------------------- */

#define QUERY_PROPS                                                                                                   \
    "\"schema\":{\"enum\":[\"Person\",\"Organization\",\"Company\",\"Vessel\",\"LegalEntity\"]},"                     \
    "\"threshold\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"default\":0.7},"                              \
    "\"cutoff\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},"                                                  \
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"default\":5},"                                   \
    "\"lists\":{\"type\":\"array\",\"maxItems\":64,\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64}}"

static const char screen_entity_in[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":512},"
    "\"birthDate\":{\"type\":\"string\",\"maxLength\":32},"
    "\"nationality\":{\"type\":\"string\",\"maxLength\":64},\"country\":{\"type\":\"string\",\"maxLength\":64},"
    "\"gender\":{\"enum\":[\"male\",\"female\",\"other\"]},"
    "\"identifiers\":{\"type\":\"array\",\"maxItems\":8,\"items\":{\"type\":\"string\",\"maxLength\":64}}," QUERY_PROPS
    "},\"required\":[\"name\"],\"additionalProperties\":false}";

#define RESULTS_SCHEMA                                                                                                \
    "\"normalizedName\":{\"type\":\"string\"},\"total\":{\"type\":\"integer\"},\"matches\":{\"type\":\"integer\"},"  \
    "\"results\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\",\"caption\",\"schema\","    \
    "\"list\",\"properties\",\"score\",\"match\",\"explanations\"],\"properties\":{\"id\":{\"type\":\"string\"},"     \
    "\"caption\":{\"type\":\"string\"},\"schema\":{\"type\":\"string\"},\"list\":{\"type\":\"string\"},"             \
    "\"properties\":{\"type\":\"object\"},\"score\":{\"type\":\"number\"},\"match\":{\"type\":\"boolean\"},"         \
    "\"dismissed\":{\"type\":\"boolean\"},\"explanations\":{\"type\":\"object\"}}}}"

static const char screen_entity_out[] =
    "{\"type\":\"object\",\"required\":[\"results\",\"total\"],\"properties\":{\"query\":{\"type\":\"object\"},"
    "\"threshold\":{\"type\":\"number\"},\"cutoff\":{\"type\":\"number\"}," RESULTS_SCHEMA "}}";

static const char screen_case_in[] =
    "{\"type\":\"object\",\"properties\":{\"caseId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64}," QUERY_PROPS
    "},\"required\":[\"caseId\"],\"additionalProperties\":false}";

static const char screen_case_out[] =
    "{\"type\":\"object\",\"required\":[\"caseId\",\"parties\",\"findings\"],\"properties\":{"
    "\"caseId\":{\"type\":\"string\"},\"threshold\":{\"type\":\"number\"},\"screened\":{\"type\":\"integer\"},"
    "\"findings\":{\"type\":\"integer\"},\"parties\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"party\",\"role\",\"name\",\"results\"],\"properties\":{\"party\":{\"type\":\"string\"},"
    "\"role\":{\"enum\":[\"subject\",\"counterparty\"]},\"name\":{\"type\":\"string\"}," RESULTS_SCHEMA "}}}}}";

static const char dismiss_in[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":512},"
    "\"list\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64},"
    "\"entityId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256},"
    "\"reason\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":500}},"
    "\"required\":[\"name\",\"list\",\"entityId\",\"reason\"],\"additionalProperties\":false}";

static const char dismiss_out[] =
    "{\"type\":\"object\",\"required\":[\"normalizedName\",\"list\",\"entityId\",\"dismissedBy\",\"reason\"],"
    "\"properties\":{\"normalizedName\":{\"type\":\"string\"},\"list\":{\"type\":\"string\"},"
    "\"entityId\":{\"type\":\"string\"},\"dismissedBy\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"}}}";

mcp_status aml_screen_tools_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    static const struct {
        const char *name, *title, *desc, *in, *out;
        mcp_tool_fn fn;
        int read_only;
    } defs[] = {
        {"screenEntity", "Screen a name against sanctions and PEP lists",
         "Screens a person, company, organisation or vessel against the loaded sanctions / PEP lists (FtM or CSV, "
         "'lists import'). Names in any script are transliterated; typing errors, name order, honorifics and legal "
         "forms are tolerated. Results (score >= cutoff, default 0.5) carry the entity's FtM properties, a score, "
         "match (score >= threshold, default 0.70, and not dismissed) and explanations: which entity name matched "
         "which query tokens, each feature's score and weight, and each qualifier (birth date, nationality, gender, "
         "type). A match is a lead for review.",
         screen_entity_in, screen_entity_out, screen_entity, 1},
        {"screenCase", "Screen a case's parties",
         "Screens the case's subjects (holders of its focus accounts, with birth date and country) and the named "
         "external counterparties they transacted with in the review window. Matches at or above the threshold are "
         "kept as screening findings of the case with their evidence (the explanations).",
         screen_case_in, screen_case_out, screen_case, 0},
        {"dismissScreeningHit", "Dismiss a screening hit as a false hit",
         "Records after review that a screening result (list, entityId) is not the party named 'name', with the "
         "reason; the audit log keeps who and why. Later screenings still show the result, marked dismissed, "
         "but do not count it as a match or keep it as a finding.",
         dismiss_in, dismiss_out, dismiss_hit, 0},
    };
    scr *s = calloc(1, sizeof *s);
    if (!s)
        return MCP_ERR_NOMEM;
    s->app = app;
    pthread_mutex_init(&s->mu, NULL);
    s->refs = (int)(sizeof defs / sizeof defs[0]);
    mcp_status st = MCP_OK;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        mcp_tool_def t;
        memset(&t, 0, sizeof t);
        t.name = defs[i].name;
        t.title = defs[i].title;
        t.description = defs[i].desc;
        t.input_schema = defs[i].in;
        t.output_schema = defs[i].out;
        t.read_only_hint = defs[i].read_only ? MCP_HINT_TRUE : MCP_HINT_FALSE;
        t.destructive_hint = MCP_HINT_FALSE;
        t.idempotent_hint = MCP_HINT_TRUE;
        t.open_world_hint = MCP_HINT_FALSE;
        t.handler = defs[i].fn;
        t.user_data = s;
        t.user_data_free = scr_unref;
        t.scopes = defs[i].read_only ? "aml.read" : "aml.assess";
        if (st == MCP_OK)
            st = mcp_server_add_tool(srv, &t, err);
        else
            scr_unref(s); /* the tools not registered give up their reference */
    }
    return st;
}
