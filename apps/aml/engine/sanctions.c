/*
 * T15 sanctions and PEP exposure: the account's customers and the external
 * counterparties it transacted with in the window, screened against the
 * store's current lists (screen/), hits reviewed and dismissed as false
 * (dismissScreeningHit) left out.
 *
 * The screener holds the process's shared index (built once per list
 * versions, read-only) and, per thread, a search scratch and a cache of
 * answers by query (name, birth date, country, type, threshold): in a scan
 * batch a counterparty paid by a thousand accounts is screened once. An
 * answer is a function of the query and the index alone, so the cache
 * changes nothing but the time taken; dismissals are looked up in the store
 * on every hit, since a reviewer may dismiss one between two runs.
 */
#include "engine/typology.h"
#include "screen/lists.h"

#define SCR_HITS 4            /* hits kept per query (the best, by score then id) */
#define SCR_CACHE_MAX 65536   /* answers cached before the cache starts over */
#define T15_MAX_HITS 32       /* hits listed per account */

/* A cached answer. */
typedef struct scr_entry {
    char *key;                /* the query as text; NULL: free slot */
    char *norm;               /* the normalised name (the dismissals' subject) */
    int nh;                   /* hits at or above the threshold, at most SCR_HITS */
    uint32_t ent[SCR_HITS];   /* entity numbers in the index */
    double score[SCR_HITS];
} scr_entry;

struct aml_screener {
    const aml_screening *sc;     /* the shared index; NULL when no list is loaded */
    aml_sc_scratch *scratch;     /* made on the first search */
    char key[AML_LISTS_KEY_MAX]; /* the list versions */
    scr_entry *tab;              /* open addressing, cap a power of two */
    size_t cap, n;
};

int aml_screener_new(aml_store *s, aml_screener **out, aml_err *err)
{
    aml_screener *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return aml_errf(err, "out of memory");
    if (aml_lists_key(s, r->key, err)) {
        free(r);
        return -1;
    }
    if (r->key[0] && !(r->sc = aml_screening_acquire(s, r->key, err))) {
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

static void cache_clear(aml_screener *r)
{
    for (size_t i = 0; i < r->cap; i++) {
        free(r->tab[i].key);
        free(r->tab[i].norm);
    }
    free(r->tab);
    r->tab = NULL;
    r->cap = r->n = 0;
}

void aml_screener_free(aml_screener *r)
{
    if (!r)
        return;
    cache_clear(r);
    aml_sc_scratch_free(r->scratch);
    aml_screening_release(r->sc);
    free(r);
}

const char *eng_screener_key(const eng *e)
{
    return e->scr ? e->scr->key : "";
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of key: its entry, or the free slot it would go to. NULL when the table cannot grow. */
static scr_entry *cache_slot(aml_screener *r, const char *key)
{
    if (r->n >= SCR_CACHE_MAX)
        cache_clear(r);
    if ((r->n + 1) * 2 > r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        scr_entry *nt = calloc(cap, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t i = 0; i < r->cap; i++) {
            if (!r->tab[i].key)
                continue;
            size_t h = (size_t)fnv(r->tab[i].key) & (cap - 1);
            while (nt[h].key)
                h = (h + 1) & (cap - 1);
            nt[h] = r->tab[i];
        }
        free(r->tab);
        r->tab = nt;
        r->cap = cap;
    }
    size_t h = (size_t)fnv(key) & (r->cap - 1);
    while (r->tab[h].key && strcmp(r->tab[h].key, key) != 0)
        h = (h + 1) & (r->cap - 1);
    return &r->tab[h];
}

/* One party to screen. */
typedef struct t15party {
    int64_t acct;       /* the counterparty's acct_no; 0 for a customer */
    char key[160];      /* "customer:<id>" or "account:<id>" */
    char name[256];
    char dob[32], country[64];
    int schema;         /* aml_sc_schema */
} t15party;

static void party_query(const t15party *p, double threshold, aml_sc_query *q)
{
    memset(q, 0, sizeof *q);
    q->name = p->name;
    q->schema = p->schema;
    q->birth_date = p->dob[0] ? p->dob : NULL;
    q->country = p->country[0] ? p->country : NULL;
    q->threshold = threshold;
}

/* Screens a party, or finds the answer cached. *out: the answer, NULL when the name has nothing to
 * screen. @return 0, or -1 when out of memory. */
static int screen_party(aml_screener *r, const t15party *p, double threshold, const scr_entry **out)
{
    char key[600];
    snprintf(key, sizeof key, "%d|%.4f|%s|%s|%s", p->schema, threshold, p->name, p->dob, p->country);
    *out = NULL;
    scr_entry *slot = cache_slot(r, key);
    if (!slot)
        return -1;
    if (!slot->key) {
        if (!r->scratch && !(r->scratch = aml_sc_scratch_new(r->sc->ix)))
            return -1;
        aml_sc_query q;
        party_query(p, threshold, &q);
        aml_sc_hit hits[SCR_HITS];
        int n = aml_sc_search(r->sc->ix, r->scratch, &q, hits, SCR_HITS);
        scr_entry x = {0};
        if (!(x.key = aml_strdup(key)) ||
            (n >= 0 && !(x.norm = aml_strdup(aml_sc_scratch_query(r->scratch)->text)))) {
            free(x.key);
            return -1;
        }
        for (int i = 0; i < n && i < SCR_HITS; i++) {
            x.ent[x.nh] = hits[i].ent;
            x.score[x.nh++] = hits[i].score;
        }
        *slot = x;
        r->n++;
    }
    *out = slot->norm ? slot : NULL;
    return 0;
}

/* ---- the parties of an account --------------------------------------------------------- */

typedef struct t15set {
    t15party *p;
    size_t n, cap, max;
    size_t ncust;       /* customers first, then counterparties */
    int capped;         /* maxParties reached */
} t15set;

static t15party *set_add(t15set *ps)
{
    if (ps->n == ps->max) {
        ps->capped = 1;
        return NULL;
    }
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 16;
        t15party *np = realloc(ps->p, cap * sizeof *np);
        if (!np)
            return NULL;
        ps->p = np;
        ps->cap = cap;
    }
    t15party *p = &ps->p[ps->n];
    memset(p, 0, sizeof *p);
    return p;
}

/* The account's customers, by customer id. */
static int load_customers(eng *e, const acct_view *v, t15set *ps)
{
    aml_st *st = aml_stmt(e->s, "SELECT c.customer_id, c.full_name, c.date_of_birth, c.country, c.customer_type "
                                "FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
                                "WHERE p.acct_no = ? ORDER BY c.customer_id");
    if (!st)
        return -1;
    aml_bind_int(st, 1, v->acct);
    t15party *p;
    while (aml_step(st) == AML_ROW && (p = set_add(ps)) != NULL) {
        snprintf(p->key, sizeof p->key, "customer:%s", aml_col_text(st, 0));
        snprintf(p->name, sizeof p->name, "%s", aml_col_text(st, 1));
        snprintf(p->dob, sizeof p->dob, "%s", aml_col_text(st, 2));
        snprintf(p->country, sizeof p->country, "%s", aml_col_text(st, 3));
        p->schema = strcmp(aml_col_text(st, 4), "individual") ? AML_SC_LEGALENTITY : AML_SC_PERSON;
        ps->n += p->name[0] != '\0';
    }
    aml_reset(st);
    ps->ncust = ps->n;
    return 0;
}

/* One counterparty account: added when it is external and has a holder name. */
static int add_counterparty(eng *e, int64_t acct, t15set *ps)
{
    aml_st *st = aml_stmt(e->s, "SELECT account_id, holder_name, country, is_internal FROM accounts "
                                "WHERE acct_no = ?");
    if (!st)
        return -1;
    aml_bind_int(st, 1, acct);
    if (aml_step(st) == AML_ROW && !aml_col_int(st, 3) && !aml_col_null(st, 1) && aml_col_text(st, 1)[0]) {
        t15party *p = set_add(ps);
        if (p) {
            p->acct = acct;
            snprintf(p->key, sizeof p->key, "account:%s", aml_col_text(st, 0));
            snprintf(p->name, sizeof p->name, "%s", aml_col_text(st, 1));
            snprintf(p->country, sizeof p->country, "%s", aml_col_null(st, 2) ? "" : aml_col_text(st, 2));
            p->schema = AML_SC_ANY;
            ps->n++;
        }
    }
    aml_reset(st);
    return 0;
}

/* The window's counterparties other than the customer's own accounts, by acct_no. */
static int load_counterparties(eng *e, const acct_view *v, t15set *ps)
{
    aml_ivec cps = {0};
    for (size_t i = v->w0; i < v->w1; i++)
        if (v->tx[i].cp && !is_sibling(v, v->tx[i].cp) && aml_ivec_push(&cps, v->tx[i].cp)) {
            free(cps.v);
            return -1;
        }
    aml_ivec_uniq(&cps);
    int rc = 0;
    for (size_t i = 0; i < cps.n && !rc && !ps->capped; i++)
        rc = add_counterparty(e, cps.v[i], ps);
    free(cps.v);
    return rc;
}

/* ---- the finding ----------------------------------------------------------------------- */

/* A hit kept: a party and an entity of the index. */
typedef struct t15hit {
    size_t party;
    uint32_t ent;
    double score;
    const char *norm;
} t15hit;

typedef struct t15run {
    t15set ps;
    t15hit hits[T15_MAX_HITS];
    int nhits, more, dismissed;
    double thr;
} t15run;

/* Screens every party; hits not dismissed are kept (a party's best first). */
static int screen_all(eng *e, t15run *r)
{
    aml_screener *scr = e->scr;
    for (size_t i = 0; i < r->ps.n; i++) {
        const scr_entry *x;
        if (screen_party(scr, &r->ps.p[i], r->thr, &x)) {
            e->oom = 1;
            return -1;
        }
        for (int k = 0; x && k < x->nh; k++) {
            const char *list = scr->sc->lists[aml_sc_entity_list(scr->sc->ix, x->ent[k])];
            if (aml_lists_dismissed(e->s, x->norm, list, aml_sc_entity_id(scr->sc->ix, x->ent[k]))) {
                r->dismissed++;
                continue;
            }
            if (r->nhits == T15_MAX_HITS) {
                r->more++;
                continue;
            }
            r->hits[r->nhits++] = (t15hit){i, x->ent[k], x->score[k], x->norm};
        }
    }
    return 0;
}

/* The transactions with a party in the window (all of them for a customer), as evidence. */
static void party_evidence(fbuild *b, const acct_view *v, const t15party *p, int64_t *count, int64_t *amount)
{
    *count = *amount = 0;
    for (size_t i = v->w0; i < v->w1; i++) {
        if (p->acct && v->tx[i].cp != p->acct)
            continue;
        (*count)++;
        *amount += v->tx[i].usd;
        if (b)
            fb_ev(b, &v->tx[i], AML_ROLE_TRIGGER);
    }
}

/* The list version an entity was loaded with. */
static void entity_version(eng *e, const char *list, const char *id, fbuild *b)
{
    aml_st *st = aml_stmt(e->s, "SELECT v.version_id, v.file_sha256 FROM screening_entities x JOIN "
                                "screening_list_versions v ON v.version_id = x.version_id "
                                "WHERE x.list_name = ? AND x.entity_id = ?");
    if (!st)
        return;
    aml_bind_text(st, 1, list);
    aml_bind_text(st, 2, id);
    if (aml_step(st) == AML_ROW) {
        fb_int(b, "listVersion", aml_col_int(st, 0));
        fb_str(b, "listSha256", aml_col_text(st, 1));
    }
    aml_reset(st);
}

/* The explanations of a hit: the party screened again, so the scratch holds its query. */
static void hit_explain(eng *e, const t15run *r, const t15hit *h, fbuild *b)
{
    aml_screener *scr = e->scr;
    aml_sc_query q;
    party_query(&r->ps.p[h->party], r->thr, &q);
    aml_sc_hit hits[SCR_HITS];
    int n = aml_sc_search(scr->sc->ix, scr->scratch, &q, hits, SCR_HITS);
    mcp_jw_key(&b->mw, "explanations");
    for (int i = 0; i < n && i < SCR_HITS; i++)
        if (hits[i].ent == h->ent) {
            aml_sc_explain(scr->sc->ix, scr->scratch, &hits[i], &b->mw);
            return;
        }
    mcp_jw_object_begin(&b->mw);
    mcp_jw_object_end(&b->mw);
}

/* One hits[] entry of the metrics (full runs only). */
static void hit_write(eng *e, const acct_view *v, const t15run *r, const t15hit *h, fbuild *b)
{
    const aml_screening *sc = e->scr->sc;
    const t15party *p = &r->ps.p[h->party];
    const char *list = sc->lists[aml_sc_entity_list(sc->ix, h->ent)], *id = aml_sc_entity_id(sc->ix, h->ent);
    int64_t count, amount;
    party_evidence(NULL, v, p, &count, &amount);
    mcp_jw_object_begin(&b->mw);
    fb_str(b, "party", p->key);
    fb_str(b, "role", p->acct ? "counterparty" : "customer");
    fb_str(b, "name", p->name);
    fb_str(b, "normalizedName", h->norm);
    fb_str(b, "entityId", id);
    fb_str(b, "caption", aml_sc_entity_caption(sc->ix, h->ent));
    fb_str(b, "schema", aml_sc_schema_name(aml_sc_entity_schema(sc->ix, h->ent)));
    fb_str(b, "list", list);
    entity_version(e, list, id, b);
    fb_dbl(b, "score", (double)(int64_t)(h->score * 1000 + 0.5) / 1000);
    fb_int(b, "transactions", count);
    fb_int(b, "amountMinor", amount);
    hit_explain(e, r, h, b);
    mcp_jw_object_end(&b->mw);
}

static void t15_metrics(eng *e, const acct_view *v, const t15run *r, fbuild *b)
{
    fb_int(b, "partiesScreened", (int64_t)r->ps.n);
    fb_int(b, "customersScreened", (int64_t)r->ps.ncust);
    fb_int(b, "counterpartiesScreened", (int64_t)(r->ps.n - r->ps.ncust));
    fb_bool(b, "partiesCapped", r->ps.capped);
    fb_int(b, "listEntities", (int64_t)aml_sc_index_entities(e->scr->sc->ix));
    fb_dbl(b, "threshold", r->thr);
    fb_int(b, "dismissedHits", r->dismissed);
    fb_int(b, "hitsNotListed", r->more);
    if (e->lean)
        return;
    mcp_jw_key(&b->mw, "hits");
    mcp_jw_array_begin(&b->mw);
    for (int i = 0; i < r->nhits; i++)
        hit_write(e, v, r, &r->hits[i], b);
    mcp_jw_array_end(&b->mw);
}

/* The strongest hit: the highest score, then the first party, then the entity id. */
static const t15hit *best_hit(const eng *e, const t15run *r)
{
    const t15hit *best = &r->hits[0];
    for (int i = 1; i < r->nhits; i++) {
        const t15hit *h = &r->hits[i];
        if (h->score > best->score ||
            (h->score == best->score && (h->party < best->party ||
                                         (h->party == best->party &&
                                          strcmp(aml_sc_entity_id(e->scr->sc->ix, h->ent),
                                                 aml_sc_entity_id(e->scr->sc->ix, best->ent)) < 0))))
            best = h;
    }
    return best;
}

static void t15_matched(eng *e, const acct_view *v, const t15run *r, fbuild *b)
{
    const aml_screening *sc = e->scr->sc;
    const t15hit *best = best_hit(e, r);
    int64_t count = 0, amount = 0;
    for (int i = 0; i < r->nhits; i++) { /* each hit party's transactions once */
        int dup = 0;
        for (int k = 0; k < i; k++)
            dup |= r->hits[k].party == r->hits[i].party;
        if (!dup) {
            int64_t c, u;
            party_evidence(b, v, &r->ps.p[r->hits[i].party], &c, &u);
            count += c;
            amount += u;
        }
    }
    const t15party *p = &r->ps.p[best->party];
    const char *list = sc->lists[aml_sc_entity_list(sc->ix, best->ent)];
    fb_comp(b, (int)llround(best->score * 100), "%s \"%.40s\" matches %.40s (list %.20s), score %.2f",
            p->acct ? "counterparty" : "customer", p->name, aml_sc_entity_caption(sc->ix, best->ent), list,
            best->score);
    fb_explain(b,
               "The %s \"%s\" of %s matches %s (%s, list %s) with screening score %.2f at threshold %.2f; %lld "
               "transaction(s) for %s involve the matching part%s in the window.%s",
               p->acct ? "counterparty" : "customer", p->name, v->id, aml_sc_entity_caption(sc->ix, best->ent),
               aml_sc_entity_id(sc->ix, best->ent), list, best->score, r->thr, (long long)count, usd(amount).s,
               r->nhits > 1 ? "ies" : "y",
               r->nhits > 1 ? " Further hits are listed in the metrics; review each, and dismiss a false one with "
                              "dismissScreeningHit."
                            : " Review it; dismiss a false hit with dismissScreeningHit.");
    fb_finish(b, AML_MATCHED);
}

/* T15: the account's customers and window counterparties against the loaded lists. */
void t15_sanctions(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T15, v->acct);
    fb_str(&b, "account", v->id);
    if (!e->scr || !e->scr->sc) {
        fb_missing(&b, "screening_entities", NULL);
        fb_explain(&b, "not evaluable: no screening lists loaded (mcp-server-aml lists import).");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    t15run r;
    memset(&r, 0, sizeof r);
    r.thr = P(e, AML_T15, P15_THRESHOLD);
    r.ps.max = (size_t)PI(e, AML_T15, P15_MAX_PARTIES);
    if (load_customers(e, v, &r.ps) || load_counterparties(e, v, &r.ps) || screen_all(e, &r)) {
        free(r.ps.p);
        fb_explain(&b, "not evaluated: %s", e->oom ? "out of memory" : aml_errmsg(e->s));
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    t15_metrics(e, v, &r, &b);
    if (r.nhits) {
        t15_matched(e, v, &r, &b);
    } else {
        fb_explain(&b, "%zu part%s of %s (%zu customer%s, %zu counterpart%s in the window) screened against %zu "
                       "listed entities: no match at or above %.2f%s.",
                   r.ps.n, r.ps.n == 1 ? "y" : "ies", v->id, r.ps.ncust, plural((int64_t)r.ps.ncust, "", "s"),
                   r.ps.n - r.ps.ncust, r.ps.n - r.ps.ncust == 1 ? "y" : "ies",
                   aml_sc_index_entities(e->scr->sc->ix), r.thr,
                   r.dismissed ? " (hits reviewed and dismissed as false are left out)" : "");
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(r.ps.p);
}
