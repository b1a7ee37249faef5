/*
 * Graph typologies: bounded searches beyond the focus account, over the
 * neighbour edges the run loads (eng_neighbour) within maxExpansions
 * accounts of maxEdgesPerNode edges each.
 *   T07 cycle: money that comes back to the account through other accounts;
 *   T08 layering: scatter-gather, gather-scatter, stacked and bipartite
 *       layers, and chains of quick hops.
 */
#include "engine/typology.h"

/* ---- T07 cycle -------------------------------------------------------------------- */

typedef struct cycsearch {
    eng *e;
    const acct_view *v;
    int64_t maxhops, W, maxexp, maxedges, minamt;
    double minret, growth;
    int capped;
    int64_t steps;
    etx path[9];
    int64_t nodes[9];
    etx best[9];
    int best_len;
    double best_ret;
    int ncycles;
    etx ctx[64];
    int nctx;
} cycsearch;

#define CYC_MAX_STEPS 200000
#define CYC_MAX_FOUND 20

/* Reads ahead the outgoing edges of the counterparties of outs[from, n) paid by `until` (a DFS's next nodes). */
static void next_ahead(eng *e, const etx *outs, size_t from, size_t n, int64_t until, int64_t maxexp,
                       int64_t maxedges)
{
    int64_t cps[128];
    size_t k = 0;
    for (size_t i = from; i < n && outs[i].at <= until && k < 128; i++)
        if (outs[i].cp)
            cps[k++] = outs[i].cp;
    eng_neighbours_ahead(e, cps, k, DIR_OUT, maxexp, maxedges);
}

static void cyc_record(cycsearch *c, int len)
{
    c->ncycles++;
    double ret = (double)c->path[len - 1].usd / (double)c->path[0].usd;
    if (!c->best_len || ret > c->best_ret + 1e-12 || (fabs(ret - c->best_ret) <= 1e-12 && len < c->best_len)) {
        memcpy(c->best, c->path, (size_t)len * sizeof *c->path);
        c->best_len = len;
        c->best_ret = ret;
    }
    for (int k = 0; k < len && c->nctx < 64; k++)
        c->ctx[c->nctx++] = c->path[k];
}

static void cyc_dfs(cycsearch *c, int depth)
{
    /* path[0..depth-1] are taken; the last edge arrived at nodes[depth]. */
    if (c->ncycles >= CYC_MAX_FOUND)
        return;
    const etx *last = &c->path[depth - 1];
    int64_t node = c->nodes[depth];
    gnode *g = eng_neighbour(c->e, node, DIR_OUT, c->maxexp, c->maxedges, &c->capped);
    if (!g)
        return;
    size_t nout = g->nout;
    etx *outs = g->out; /* stable: only this node's array, not the node table */
    if (depth + 1 < c->maxhops)
        next_ahead(c->e, outs, lower_at(outs, nout, last->at), nout, c->path[0].at + c->W, c->maxexp, c->maxedges);
    for (size_t i = lower_at(outs, nout, last->at); i < nout; i++) {
        if (++c->steps > CYC_MAX_STEPS) {
            c->capped = 1;
            return;
        }
        const etx *x = &outs[i];
        if (!later(c->e, last->at, x->at) || x->no == last->no)
            continue;
        if (x->at - c->path[0].at > c->W)
            break;
        if ((double)x->usd < c->minret * (double)last->usd || (double)x->usd > c->growth * (double)last->usd)
            continue;
        c->path[depth] = *x;
        if (x->cp == c->v->acct) {
            if (depth + 1 >= 2)
                cyc_record(c, depth + 1);
            continue;
        }
        if (!x->cp || depth + 1 >= c->maxhops)
            continue;
        int seen = 0;
        for (int k = 0; k <= depth; k++)
            seen |= c->nodes[k] == x->cp;
        if (seen)
            continue;
        c->nodes[depth + 1] = x->cp;
        cyc_dfs(c, depth + 1);
        if (c->ncycles >= CYC_MAX_FOUND)
            return;
        /* A reload may have moved this node's array; refetch it. */
        g = eng_neighbour(c->e, node, DIR_OUT, c->maxexp, c->maxedges, &c->capped);
        if (!g)
            return;
        outs = g->out;
        nout = g->nout;
    }
}

/* The account ids of accts[0, n) (at most 50) as a JSON array under key (on PostgreSQL read in one statement). */
static void account_list(eng *e, mcp_jw *w, const char *key, const int64_t *accts, size_t n)
{
    aml_acct_map ids;
    aml_acct_map_init(&ids, e->s, AML_ACCT_ID);
    aml_acct_map_load(&ids, accts, n < 50 ? n : 50);
    mcp_jw_key(w, key);
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < n && i < 50; i++) {
        const char *id = aml_acct_map_get(&ids, accts[i]);
        mcp_jw_string(w, id ? id : "");
    }
    mcp_jw_array_end(w);
    aml_acct_map_cleanup(&ids);
}

static void t07_write_match(fbuild *b, eng *e, const acct_view *v, const cycsearch *c)
{
    double minhop = 1e9;
    for (int k = 1; k < c->best_len; k++)
        minhop = fmin(minhop, (double)c->best[k].usd / (double)c->best[k - 1].usd);
    int64_t span = c->best[c->best_len - 1].at - c->best[0].at;
    for (int k = 0; k < c->best_len; k++)
        fb_ev(b, &c->best[k], AML_ROLE_TRIGGER);
    for (int k = 0; k < c->nctx; k++)
        fb_ev(b, &c->ctx[k], AML_ROLE_CONTEXT);
    fb_int(b, "hops", c->best_len);
    fb_int(b, "cyclesFound", c->ncycles);
    fb_dbl(b, "retention", c->best_ret);
    fb_dbl(b, "minHopRetention", minhop);
    fb_dbl(b, "spanDays", (double)span / AML_DAY);
    int64_t path[10];
    path[0] = v->acct;
    for (int k = 0; k < c->best_len; k++)
        path[k + 1] = c->best[k].cp;
    account_list(e, &b->mw, "path", path, (size_t)c->best_len + 1);
    fb_comp(b, 50, "a %d-hop cycle returning %.0f%% of the amount within %lld days", c->best_len, c->best_ret * 100,
            (long long)(c->W / AML_DAY));
    fb_comp(b, c->best_len >= 3 ? 10 : 0, "3 or more hops");
    fb_comp(b, minhop >= 0.85 ? 10 : 0, "each hop kept at least 85%%");
    fb_comp(b, span <= 10 * AML_DAY ? 10 : 0, "closed within 10 days");
    fb_comp(b, (int)fmin(15, 5 * (double)(c->ncycles - 1)), "%d further cycles", c->ncycles - 1);
    fb_explain(b,
               "On %s, %s sent %s that passed through %d other %s and came back to it as %s on %s (%.0f%% of the "
               "original amount, %.1f days later).",
               day(c->best[0].at).s, v->id, usd(c->best[0].usd).s, c->best_len - 1,
               plural(c->best_len - 1, "account", "accounts"), usd(c->best[c->best_len - 1].usd).s,
               day(c->best[c->best_len - 1].at).s, c->best_ret * 100, (double)span / AML_DAY);
    fb_finish(b, AML_MATCHED);
}

/* T07: a search from every outgoing transfer of the window, on its own expansion budget. */
void t07_cycle(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T07, v->acct);
    cycsearch *c = calloc(1, sizeof *c);
    fb_str(&b, "account", v->id);
    if (!c) {
        fb_oom(&b);
        return;
    }
    c->e = e;
    c->v = v;
    c->maxhops = PI(e, AML_T07, P07_MAX_HOPS);
    c->W = PI(e, AML_T07, P07_WINDOW) * AML_DAY;
    c->minret = P(e, AML_T07, P07_MIN_RETENTION);
    c->growth = P(e, AML_T07, P07_MAX_GROWTH);
    c->minamt = PI(e, AML_T07, P07_MIN_AMOUNT);
    c->maxexp = PI(e, AML_T07, P07_MAX_EXPANSIONS);
    c->maxedges = PI(e, AML_T07, P07_MAX_EDGES);
    size_t before = e->expansions;
    e->expansions = 0; /* each typology gets its own expansion budget */
    int64_t starts = 0;
    for (size_t i = v->w0; i < v->w1 && c->ncycles < CYC_MAX_FOUND; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != DIR_OUT || !t->cp || t->usd < c->minamt)
            continue;
        starts++;
        c->path[0] = *t;
        c->nodes[0] = v->acct;
        c->nodes[1] = t->cp;
        cyc_dfs(c, 1);
    }
    int64_t explored = (int64_t)e->expansions;
    e->expansions = before;
    fb_int(&b, "startEdges", starts);
    fb_int(&b, "accountsExplored", explored);
    fb_int(&b, "edgesExamined", c->steps);
    fb_bool(&b, "searchComplete", !c->capped);
    if (c->best_len) {
        t07_write_match(&b, e, v, c);
    } else {
        fb_int(&b, "cyclesFound", 0);
        fb_explain(&b,
                   "No directed cycle of 2-%lld hops returning to %s within %lld days with %.0f%% kept per hop%s.",
                   (long long)c->maxhops, v->id, (long long)(c->W / AML_DAY), c->minret * 100,
                   c->capped ? " (search bounded; see searchComplete)" : "");
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(c);
}

/* ---- T08 layering ------------------------------------------------------------------ */

/* T08's parameters. */
typedef struct t08_par {
    int64_t minedge, H, maxexp, maxedges; /* smallest edge, forward hours, search bounds */
    int64_t need, branches, hubmax, look, W;
    int64_t warm; /* observed days before a counterparty can be new */
    double ratio; /* share passed on */
} t08_par;

static void t08_params(eng *e, t08_par *p)
{
    p->minedge = PI(e, AML_T08, P08_MIN_EDGE);
    p->H = PI(e, AML_T08, P08_FWD_HOURS);
    p->maxexp = PI(e, AML_T08, P08_MAX_EXPANSIONS);
    p->maxedges = PI(e, AML_T08, P08_MAX_EDGES);
    p->need = PI(e, AML_T08, P08_MIN_INTERMEDIATES);
    p->branches = PI(e, AML_T08, P08_MIN_BRANCHES);
    p->hubmax = PI(e, AML_T08, P08_HUB_MAX_IN);
    p->look = PI(e, AML_T08, P08_NEW_LOOKBACK) * AML_DAY;
    p->W = PI(e, AML_T08, P08_WINDOW) * AML_DAY;
    p->ratio = P(e, AML_T08, P08_FWD_RATIO);
    p->warm = PI(e, AML_T08, P08_WARMUP);
}

/* One variant's result, built in its own finding until the best is known. */
typedef struct t08res {
    int ok, score;
    const char *variant, *role;
    fbuild b;
    aml_finding f;
} t08res;

/* The focus account's transfer counterparties in one direction, grouped. */
typedef struct party {
    int64_t acct, first, last, sum;
} party;

static int cmp_party(const void *a, const void *b)
{
    const party *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->acct < y->acct ? -1 : x->acct > y->acct;
}

/* New counterparties (layers are built from new relationships), by first contact. */
static size_t parties_of(const acct_view *v, int dir, int64_t minedge, int64_t look, int64_t warm, party **out)
{
    imap m;
    party *p = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (imap_init(&m, 64))
        return 0;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != dir || !t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < minedge ||
            is_sibling(v, t->cp))
            continue;
        int64_t *slot = imap_slot(&m, t->cp);
        if (!slot)
            break;
        if (!*slot) {
            /* Skip a counterparty already dealt with. */
            if ((v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - look) ||
                !observed_for(v, t->at, warm)) {
                *slot = -1;
                continue;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                party *np = realloc(p, cap * sizeof *np);
                if (!np)
                    break;
                p = np;
            }
            p[n] = (party){t->cp, t->at, t->at, 0};
            *slot = (int64_t)++n;
        }
        if (*slot < 0)
            continue;
        party *q = &p[*slot - 1];
        q->last = t->at;
        q->sum += t->usd;
    }
    imap_free(&m);
    if (n)
        aml_sort(p, n, sizeof *p, cmp_party);
    *out = p;
    return n;
}

/* The focus account's parties per direction, computed once per account (T08 asks several times). */
static size_t parties_cached(eng *e, const acct_view *v, int dir, const t08_par *p, party **out)
{
    if (e->pc_view != v) {
        for (int d = 0; d < 3; d++) {
            free(e->pc[d]);
            e->pc[d] = NULL;
            e->pc_have[d] = 0;
        }
        e->pc_view = v;
    }
    if (!e->pc_have[dir]) {
        e->pc_n[dir] = parties_of(v, dir, p->minedge, p->look, p->warm, &e->pc[dir]);
        e->pc_have[dir] = 1;
    }
    *out = e->pc[dir];
    return e->pc_n[dir];
}

/* An edge between an intermediary and a far account. */
typedef struct rec {
    int64_t key;  /* the far account (sink, source, beneficiary ...) */
    int64_t mid;  /* the intermediary's index in the party list */
    int64_t sum;  /* what flowed between them */
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->mid < y->mid ? -1 : x->mid > y->mid;
}

/* Sums rec entries with the same (key, mid) in place. */
static void rec_merge(recs *rs)
{
    rec *r = rs->r;
    aml_sort(r, rs->n, sizeof *r, cmp_rec);
    size_t k = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (k && r[k - 1].key == r[i].key && r[k - 1].mid == r[i].mid)
            r[k - 1].sum += r[i].sum;
        else
            r[k++] = r[i];
    }
    rs->n = k;
}

static int rec_push(recs *rs, rec x)
{
    if (rs->n == rs->cap) {
        size_t nc = rs->cap ? rs->cap * 2 : 64;
        rec *nr = realloc(rs->r, nc * sizeof *nr);
        if (!nr)
            return -1;
        rs->r = nr;
        rs->cap = nc;
    }
    rs->r[rs->n++] = x;
    return 0;
}

/* The neighbour's edges in direction dir (none when it could not be loaded). */
static const etx *edges_of(const gnode *g, int dir, size_t *n)
{
    *n = g ? (dir == DIR_OUT ? g->nout : g->nin) : 0;
    return g ? (dir == DIR_OUT ? g->out : g->in) : NULL;
}

/* Reads ahead the edges of the parties ps[0, n) in direction dir (eng_neighbours_ahead). */
static void parties_ahead(eng *e, const party *ps, size_t n, int dir, int64_t maxexp, int64_t maxedges)
{
    int64_t accts[128];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 128; i++)
        accts[k++] = ps[i].acct;
    eng_neighbours_ahead(e, accts, k, dir, maxexp, maxedges);
}

/* The intermediary q paid on at `at`: within H hours of its first receipt, or before H hours after its last. */
static int passes_on(const eng *e, const party *q, int64_t at, int64_t H)
{
    return within(e, q->first, at, H) || (at > q->first && at <= q->last + H * AML_HOUR);
}

/* Evidence: the focus account's transfers with counterparty q in direction dir; returns their sum. */
static int64_t party_evidence(fbuild *b, const acct_view *v, const party *q, int dir, int64_t minedge)
{
    int64_t total = 0;
    for (size_t t = v->w0; t < v->w1; t++)
        if (v->tx[t].cp == q->acct && v->tx[t].dir == dir && v->tx[t].usd >= minedge && v->tx[t].ch != CH_CASH) {
            fb_ev(b, &v->tx[t], AML_ROLE_TRIGGER);
            total += v->tx[t].usd;
        }
    return total;
}

/* ---- scatter-gather ---- */

/* An intermediary's edge x belongs to a scatter-gather: for a source (dir OUT) it passes the money
 * on in time; for a sink (dir IN) it fed the intermediary within H hours before it paid the focus. */
static int sg_in_time(const eng *e, int dir, const party *q, const etx *x, int64_t H)
{
    return dir == DIR_OUT ? passes_on(e, q, x->at, H) : within(e, x->at, q->first, H);
}

/* The edges of each party to far accounts, in time. */
static void sg_collect(eng *e, const acct_view *v, int dir, const party *ps, size_t np, const t08_par *p, recs *rs,
                       int *capped)
{
    parties_ahead(e, ps, np, dir, p->maxexp, p->maxedges);
    for (size_t i = 0; i < np; i++) {
        gnode *g = eng_neighbour(e, ps[i].acct, dir, p->maxexp, p->maxedges, capped);
        if (!g) {
            if (*capped)
                break;
            continue;
        }
        size_t nx;
        const etx *xs = edges_of(g, dir, &nx);
        for (size_t k = 0; k < nx; k++) {
            const etx *x = &xs[k];
            if (!x->cp || x->cp == v->acct || x->cp == ps[i].acct)
                continue;
            if (sg_in_time(e, dir, &ps[i], x, p->H) && rec_push(rs, (rec){x->cp, (int64_t)i, x->usd}))
                break;
        }
    }
}

/* For each far account, the intermediaries that passed on enough (the others are marked with mid < 0);
 * the far account with the most of them is rs[*best0, *best1). Returns how many passed. */
static int64_t sg_best(recs *rs, const party *ps, int dir, double ratio, size_t *best0, size_t *best1)
{
    rec *r = rs->r;
    int64_t bestn = 0, bestsum = 0;
    *best0 = *best1 = 0;
    for (size_t i = 0; i < rs->n;) {
        size_t j = i;
        int64_t cnt = 0, sum = 0;
        for (; j < rs->n && r[j].key == r[i].key; j++) {
            const party *q = &ps[r[j].mid];
            int ok = dir == DIR_OUT ? (double)r[j].sum >= ratio * (double)q->sum
                                    : (double)q->sum >= ratio * (double)r[j].sum;
            if (ok) {
                cnt++;
                sum += r[j].sum;
            } else {
                r[j].mid = -1 - r[j].mid; /* mark as not passing */
            }
        }
        if (cnt > bestn || (cnt == bestn && sum > bestsum)) {
            bestn = cnt;
            bestsum = sum;
            *best0 = i;
            *best1 = j;
        }
        i = j;
    }
    return bestn;
}

static void sg_write(t08res *r, eng *e, const acct_view *v, int dir, const party *ps, const recs *rs, size_t best0,
                     size_t best1, int64_t bestn, const t08_par *p, int *capped)
{
    fbuild *b = &r->b;
    int64_t far = rs->r[best0].key;
    int64_t mids[64];
    size_t nm = 0;
    int64_t sent = 0, passed = 0, maxlag = 0;
    for (size_t j = best0; j < best1; j++) {
        if (rs->r[j].mid < 0)
            continue;
        const party *q = &ps[rs->r[j].mid];
        if (nm < 64)
            mids[nm++] = q->acct;
        sent += q->sum;
        passed += rs->r[j].sum;
        party_evidence(b, v, q, dir, p->minedge);
        size_t nx;
        const etx *xs = edges_of(eng_neighbour(e, q->acct, dir, p->maxexp, p->maxedges, capped), dir, &nx);
        for (size_t k = 0; k < nx; k++) {
            const etx *x = &xs[k];
            if (x->cp == far && sg_in_time(e, dir, q, x, p->H)) {
                fb_ev(b, x, AML_ROLE_TRIGGER);
                int64_t lag = dir == DIR_OUT ? x->at - q->first : q->first - x->at;
                maxlag = lag > maxlag ? lag : maxlag;
            }
        }
    }
    double pr = dir == DIR_OUT ? (sent ? (double)passed / (double)sent : 0) : (passed ? (double)sent / (double)passed : 0);
    char farid[128];
    aml_account_id(e->s, far, farid, sizeof farid);
    fb_str(b, "variant", "scatter_gather");
    fb_str(b, "role", r->role);
    fb_int(b, "intermediaries", bestn);
    fb_int(b, dir == DIR_OUT ? "sentMinor" : "passedOnMinor", sent);
    fb_int(b, dir == DIR_OUT ? "passedOnMinor" : "sentMinor", passed);
    fb_str(b, dir == DIR_OUT ? "sink" : "source", farid);
    account_list(e, &b->mw, "intermediaryAccounts", mids, nm);
    fb_dbl(b, "forwardedShare", pr);
    fb_dbl(b, "maxHoursInIntermediary", (double)maxlag / 3600.0);
    r->score = 50 + (int)fmin(15, 5 * (double)(bestn - p->need)) + (maxlag <= 48 * AML_HOUR ? 10 : 0) + (pr >= 0.9 ? 10 : 0);
    fb_comp(b, 50, "%lld intermediaries between %s and %s, each passing on %.0f%%+ within %lld h", (long long)bestn,
            dir == DIR_OUT ? v->id : farid, dir == DIR_OUT ? farid : v->id, p->ratio * 100, (long long)p->H);
    fb_comp(b, (int)fmin(15, 5 * (double)(bestn - p->need)), "%lld intermediaries beyond the minimum",
            (long long)(bestn - p->need));
    fb_comp(b, maxlag <= 48 * AML_HOUR ? 10 : 0, "every intermediary passed the money on within 48 h");
    fb_comp(b, pr >= 0.9 ? 10 : 0, "90%%+ of the money reached the %s", dir == DIR_OUT ? "sink" : "focus account");
    if (dir == DIR_OUT)
        fb_explain(b,
                   "%s split %s across %lld accounts, which passed %s (%.0f%%) on to one account, %s, within %.0f "
                   "hours at most (scatter-gather).",
                   v->id, usd(sent).s, (long long)bestn, usd(passed).s, pr * 100, farid, (double)maxlag / 3600.0);
    else
        fb_explain(b,
                   "%s sent %s to %lld accounts, which passed %s (%.0f%%) on to %s within %.0f hours at most "
                   "(scatter-gather).",
                   farid, usd(passed).s, (long long)bestn, usd(sent).s, pr * 100, v->id, (double)maxlag / 3600.0);
    r->ok = 1;
}

/* Scatter-gather with the focus account as source (dir OUT) or sink (dir IN). */
static void t08_sg(eng *e, const acct_view *v, int dir, const t08_par *p, t08res *r, int *capped)
{
    party *ps;
    size_t np = parties_cached(e, v, dir, p, &ps);
    recs rs = {0};
    sg_collect(e, v, dir, ps, np, p, &rs, capped);
    rec_merge(&rs);
    size_t best0, best1;
    int64_t bestn = sg_best(&rs, ps, dir, p->ratio, &best0, &best1);
    r->variant = "scatter_gather";
    r->role = dir == DIR_OUT ? "source" : "sink";
    if (bestn >= p->need)
        sg_write(r, e, v, dir, ps, &rs, best0, best1, bestn, p, capped);
    free(rs.r);
}

/* ---- gather-scatter ---- */

/* The best inbound run followed by an outbound run: q[i0, o1) of the candidates. */
typedef struct gs_best {
    size_t i0, o1;
    int64_t parties, in, out, orig, ben;
} gs_best;

/* Transfers with new counterparties: known ones (regular payees and payers) are not part of a new
 * structure; a repeat within the pattern itself is (its previous contact lies inside the window). */
static size_t gs_candidates(eng *e, const acct_view *v, const t08_par *p, size_t *q)
{
    size_t n = 0;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (!t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < p->minedge || is_sibling(v, t->cp))
            continue;
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - p->look &&
            (v->prev_cp_at[i] < e->from || v->known[i]))
            continue; /* an established counterparty (see T05 warmupDays) */
        if (!observed_for(v, t->at, p->warm))
            continue;
        q[n++] = i;
    }
    return n;
}

/* The runs q[s, in1) inbound and q[in1, o1) outbound: amounts and distinct parties each way. */
static void gs_count(const acct_view *v, const size_t *q, size_t s, size_t o1, gs_best *c)
{
    memset(c, 0, sizeof *c);
    c->i0 = s;
    c->o1 = o1;
    for (size_t k = s; k < o1; k++) {
        const etx *t = &v->tx[q[k]];
        int seen = 0;
        for (size_t z = k > s + 256 ? k - 256 : s; z < k; z++)
            seen |= v->tx[q[z]].cp == t->cp && v->tx[q[z]].dir == t->dir;
        if (t->dir == DIR_IN) {
            c->in += t->usd;
            c->orig += !seen;
        } else {
            c->out += t->usd;
            c->ben += !seen;
        }
    }
    c->parties = c->orig + c->ben;
}

static void gs_search(const acct_view *v, const size_t *q, size_t n, const t08_par *p, gs_best *best)
{
    memset(best, 0, sizeof *best);
    for (size_t i = 0; i < n;) {
        if (v->tx[q[i]].dir != DIR_IN) {
            i++;
            continue;
        }
        size_t in0 = i, in1 = i;
        while (in1 < n && v->tx[q[in1]].dir == DIR_IN)
            in1++;
        size_t out1 = in1;
        while (out1 < n && v->tx[q[out1]].dir == DIR_OUT)
            out1++;
        if (out1 > in1) {
            /* Keep the whole pattern within W: trim the inbound run from the front. */
            size_t o1 = out1;
            while (o1 > in1 + 1 && v->tx[q[o1 - 1]].at - v->tx[q[in1]].at > p->W)
                o1--;
            size_t s = in0;
            while (s < in1 && v->tx[q[o1 - 1]].at - v->tx[q[s]].at > p->W)
                s++;
            gs_best c;
            gs_count(v, q, s, o1, &c);
            if (c.orig >= p->branches && c.ben >= p->branches && (double)c.out >= p->ratio * (double)c.in &&
                c.parties > best->parties)
                *best = c;
        }
        i = out1 > in1 ? out1 : in1;
    }
}

static void gs_write(t08res *r, const acct_view *v, const size_t *q, const gs_best *g, const t08_par *p)
{
    fbuild *b = &r->b;
    for (size_t k = g->i0; k < g->o1; k++)
        fb_ev(b, &v->tx[q[k]], AML_ROLE_TRIGGER);
    int64_t span = v->tx[q[g->o1 - 1]].at - v->tx[q[g->i0]].at;
    double fr = g->in ? (double)g->out / (double)g->in : 0;
    fb_str(b, "variant", "gather_scatter");
    fb_str(b, "role", "hub");
    fb_int(b, "originators", g->orig);
    fb_int(b, "beneficiaries", g->ben);
    fb_int(b, "inboundMinor", g->in);
    fb_int(b, "outboundMinor", g->out);
    fb_dbl(b, "outToInRatio", fr);
    fb_dbl(b, "spanDays", (double)span / AML_DAY);
    int extra = (int)(g->orig + g->ben - 2 * p->branches);
    r->score = 50 + (int)fmin(15, 3 * (double)extra) + (fr >= 0.9 ? 10 : 0) + (span <= 7 * AML_DAY ? 10 : 0);
    fb_comp(b, 50, "%lld originators paid in, then %lld beneficiaries were paid out", (long long)g->orig,
            (long long)g->ben);
    fb_comp(b, (int)fmin(15, 3 * (double)extra), "%d parties beyond the minimum", extra);
    fb_comp(b, fr >= 0.9 ? 10 : 0, "90%%+ of the inflow paid out");
    fb_comp(b, span <= 7 * AML_DAY ? 10 : 0, "all within 7 days");
    fb_explain(b,
               "Between %s and %s, %s collected %s from %lld accounts and then paid %s (%.0f%%) out to %lld other "
               "accounts (gather-scatter).",
               day(v->tx[q[g->i0]].at).s, day(v->tx[q[g->o1 - 1]].at).s, v->id, usd(g->in).s, (long long)g->orig,
               usd(g->out).s, fr * 100, (long long)g->ben);
    r->ok = 1;
}

/* Gather-scatter with the focus account as the hub: an inbound run followed by an outbound run. */
static void t08_gs(eng *e, const acct_view *v, const t08_par *p, t08res *r)
{
    size_t *q = malloc((v->w1 - v->w0 + 1) * sizeof *q);
    r->variant = "gather_scatter";
    r->role = "hub";
    if (!q)
        return;
    size_t n = gs_candidates(e, v, p, q);
    gs_best best;
    gs_search(v, q, n, p, &best);
    if (best.parties)
        gs_write(r, v, q, &best, p);
    free(q);
}

/* ---- chain ---- */

/* A forward chain of hops from the focus account, each passing on most of the money quickly. */
typedef struct chain {
    eng *e;
    const acct_view *v;
    int64_t hours, maxexp, maxedges, target;
    double ratio;
    int capped;
    int64_t steps;
    etx path[12];
    int64_t nodes[12];
    etx best[12];
    int best_len;
} chain;

static void chain_dfs(chain *c, int depth)
{
    if (depth > c->best_len) {
        memcpy(c->best, c->path, (size_t)depth * sizeof *c->path);
        c->best_len = depth;
    }
    if (depth >= c->target + 2 || depth >= 11)
        return;
    const etx *last = &c->path[depth - 1];
    gnode *g = eng_neighbour(c->e, c->nodes[depth], DIR_OUT, c->maxexp, c->maxedges, &c->capped);
    if (!g)
        return;
    etx *outs = g->out;
    size_t nout = g->nout;
    if (depth + 1 < c->target + 2 && depth + 1 < 11)
        next_ahead(c->e, outs, lower_at(outs, nout, last->at), nout, last->at + c->hours * AML_HOUR + AML_DAY,
                   c->maxexp, c->maxedges);
    for (size_t i = lower_at(outs, nout, last->at); i < nout; i++) {
        if (++c->steps > CYC_MAX_STEPS) {
            c->capped = 1;
            return;
        }
        const etx *x = &outs[i];
        if (!within(c->e, last->at, x->at, c->hours)) {
            if (x->at > last->at + c->hours * AML_HOUR + AML_DAY)
                break;
            continue;
        }
        if (!x->cp || x->cp == c->v->acct || (double)x->usd < c->ratio * (double)last->usd)
            continue;
        int seen = 0;
        for (int k = 0; k <= depth; k++)
            seen |= c->nodes[k] == x->cp;
        if (seen)
            continue;
        c->path[depth] = *x;
        c->nodes[depth + 1] = x->cp;
        chain_dfs(c, depth + 1);
        if (c->best_len >= c->target + 2)
            return;
        g = eng_neighbour(c->e, c->nodes[depth], DIR_OUT, c->maxexp, c->maxedges, &c->capped);
        if (!g)
            return;
        outs = g->out;
        nout = g->nout;
    }
}

/* The longest chain from any new outgoing transfer of the window, into best[]; returns its length. */
static int chain_search(chain *c, const t08_par *p, etx *best)
{
    eng *e = c->e;
    const acct_view *v = c->v;
    int best_len = 0;
    for (size_t i = v->w0; i < v->w1 && best_len < c->target + 2; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != DIR_OUT || !t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < p->minedge ||
            is_sibling(v, t->cp))
            continue;
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - p->look &&
            (v->prev_cp_at[i] < e->from || v->known[i]))
            continue; /* an established counterparty (see T05 warmupDays) */
        if (!observed_for(v, t->at, p->warm))
            continue;
        c->path[0] = *t;
        c->nodes[0] = v->acct;
        c->nodes[1] = t->cp;
        c->best_len = 0;
        chain_dfs(c, 1);
        if (c->best_len > best_len) {
            memcpy(best, c->best, (size_t)c->best_len * sizeof *best);
            best_len = c->best_len;
        }
    }
    return best_len;
}

static void chain_write(t08res *r, eng *e, const acct_view *v, const chain *c, const etx *best, int best_len)
{
    fbuild *b = &r->b;
    int64_t maxlag = 0;
    for (int k = 0; k < best_len; k++) {
        fb_ev(b, &best[k], AML_ROLE_TRIGGER);
        if (k)
            maxlag = best[k].at - best[k - 1].at > maxlag ? best[k].at - best[k - 1].at : maxlag;
    }
    double kept = (double)best[best_len - 1].usd / (double)best[0].usd;
    int64_t path[12];
    path[0] = v->acct;
    for (int k = 0; k < best_len; k++)
        path[k + 1] = best[k].cp;
    fb_str(b, "variant", "chain");
    fb_str(b, "role", "origin");
    fb_int(b, "hops", best_len);
    account_list(e, &b->mw, "path", path, (size_t)best_len + 1);
    fb_dbl(b, "finalShare", kept);
    fb_dbl(b, "maxHoursPerHop", (double)maxlag / 3600.0);
    r->score = 50 + (int)fmin(20, 10 * (double)(best_len - c->target)) + (maxlag <= 24 * AML_HOUR ? 10 : 0) +
               (kept >= 0.8 ? 10 : 0);
    fb_comp(b, 50, "a %d-hop chain, each hop passing on %.0f%%+ within %lld h", best_len, c->ratio * 100,
            (long long)c->hours);
    fb_comp(b, (int)fmin(20, 10 * (double)(best_len - c->target)), "%lld hops beyond the minimum",
            (long long)(best_len - c->target));
    fb_comp(b, maxlag <= 24 * AML_HOUR ? 10 : 0, "every hop within 24 h");
    fb_comp(b, kept >= 0.8 ? 10 : 0, "80%%+ of the amount reached the end of the chain");
    fb_explain(b,
               "On %s, %s sent %s that was passed along a chain of %d accounts within %.0f hours per hop, %s "
               "(%.0f%%) reaching the last one on %s.",
               day(best[0].at).s, v->id, usd(best[0].usd).s, best_len, (double)maxlag / 3600.0,
               usd(best[best_len - 1].usd).s, kept * 100, day(best[best_len - 1].at).s);
    r->ok = 1;
}

static void t08_chain(eng *e, const acct_view *v, const t08_par *p, t08res *r, int *capped)
{
    chain *c = calloc(1, sizeof *c);
    r->variant = "chain";
    r->role = "origin";
    if (!c)
        return;
    c->e = e;
    c->v = v;
    c->hours = PI(e, AML_T08, P08_CHAIN_HOURS);
    c->ratio = P(e, AML_T08, P08_CHAIN_RATIO);
    c->maxexp = p->maxexp;
    c->maxedges = p->maxedges;
    c->target = PI(e, AML_T08, P08_CHAIN_HOPS);
    etx best[12];
    int best_len = chain_search(c, p, best);
    *capped |= c->capped;
    if (best_len >= c->target)
        chain_write(r, e, v, c, best, best_len);
    free(c);
}

/* ---- stacked and bipartite layers ---- */

/* A counterparty dealing with too many accounts is a merchant or a payroll hub. */
static int is_hub(const etx *xs, size_t nx, int64_t hubmax)
{
    imap seen;
    if (imap_init(&seen, nx + 1))
        return 1;
    for (size_t k = 0; k < nx; k++)
        imap_slot(&seen, xs[k].cp);
    size_t deg = seen.n;
    imap_free(&seen);
    return (int64_t)deg > hubmax;
}

/* rs: (far account, intermediary/co-party index, amount). For a stack the far accounts are
 * beneficiaries of the intermediaries (paid in time); for a bipartite they are the other members
 * of the focus account's side, found looking back in direction odir. */
static void layers_collect(eng *e, const acct_view *v, int stack, int odir, const party *ps, size_t np,
                           const t08_par *p, recs *rs, int *capped)
{
    parties_ahead(e, ps, np < 64 ? np : 64, stack ? DIR_OUT : odir, p->maxexp, p->maxedges);
    for (size_t i = 0; i < np && i < 64; i++) {
        gnode *g = eng_neighbour(e, ps[i].acct, stack ? DIR_OUT : odir, p->maxexp, p->maxedges, capped);
        if (!g) {
            if (*capped)
                break;
            continue;
        }
        size_t nx;
        const etx *xs = edges_of(g, stack ? DIR_OUT : odir, &nx);
        if (!stack && is_hub(xs, nx, p->hubmax))
            continue;
        for (size_t k = 0; k < nx; k++) {
            const etx *x = &xs[k];
            if (!x->cp || x->cp == v->acct || x->cp == ps[i].acct || x->usd < p->minedge)
                continue;
            if (stack && !passes_on(e, &ps[i], x->at, p->H))
                continue;
            if (rec_push(rs, (rec){x->cp, (int64_t)i, x->usd}))
                break;
        }
    }
}

/* The layers found: intermediaries / focus-side counterparties (by party index) and far accounts. */
typedef struct layers {
    int64_t farlist[64], midlist[64];
    size_t nfar, nmidsel;
} layers;

/* Far accounts linked to at least two qualifying intermediaries / focus-side counterparties, and the
 * parties linked to enough of them. @return -1 out of memory. */
static int layers_select(const recs *rs, const party *ps, size_t np, int stack, double ratio, layers *l)
{
    const rec *r = rs->r;
    size_t nmid = np < 64 ? np : 64;
    int64_t *fwd = calloc(nmid + 1, sizeof *fwd);
    int *mid_far = calloc(nmid + 1, sizeof *mid_far);
    l->nfar = l->nmidsel = 0;
    if (!fwd || !mid_far) {
        free(fwd);
        free(mid_far);
        return -1;
    }
    if (stack)
        for (size_t i = 0; i < rs->n; i++)
            fwd[r[i].mid] += r[i].sum;
    for (size_t i = 0; i < rs->n;) {
        size_t j = i;
        int links = 0;
        for (; j < rs->n && r[j].key == r[i].key; j++)
            if (!stack || (double)fwd[r[j].mid] >= ratio * (double)ps[r[j].mid].sum)
                links++;
        if (links >= 2 && l->nfar < 64) {
            l->farlist[l->nfar++] = r[i].key;
            for (size_t k = i; k < j; k++)
                if (!stack || (double)fwd[r[k].mid] >= ratio * (double)ps[r[k].mid].sum)
                    mid_far[r[k].mid]++;
        }
        i = j;
    }
    for (size_t m = 0; m < nmid; m++)
        if (mid_far[m] >= (stack ? 2 : 1) && l->nmidsel < 64)
            l->midlist[l->nmidsel++] = (int64_t)m;
    free(fwd);
    free(mid_far);
    return 0;
}

/* Metrics, score and explanation of a stack or a bipartite. */
static void layers_describe(t08res *r, eng *e, const acct_view *v, int stack, int dir, const layers *l,
                            const int64_t *ids, int64_t total, const t08_par *p)
{
    fbuild *b = &r->b;
    fb_str(b, "variant", r->variant);
    fb_str(b, "role", r->role);
    fb_int(b, "totalMinor", total);
    if (stack) {
        account_list(e, &b->mw, "intermediaryAccounts", ids, l->nmidsel);
        account_list(e, &b->mw, "beneficiaryAccounts", l->farlist, l->nfar);
        r->score = 50 + (l->nmidsel >= 3 ? 10 : 0) + (l->nfar >= 3 ? 10 : 0);
        fb_comp(b, 50, "%zu intermediaries each passing on %.0f%%+ to %zu shared beneficiaries", l->nmidsel,
                p->ratio * 100, l->nfar);
        fb_comp(b, l->nmidsel >= 3 ? 10 : 0, "3 or more intermediaries");
        fb_comp(b, l->nfar >= 3 ? 10 : 0, "3 or more shared beneficiaries");
        fb_explain(b,
                   "%s paid %s to %zu accounts which, within %lld hours, each paid on to the same %zu accounts: "
                   "a layered (stacked) transfer structure.",
                   v->id, usd(total).s, l->nmidsel, (long long)p->H, l->nfar);
    } else {
        account_list(e, &b->mw, dir == DIR_OUT ? "beneficiaryAccounts" : "originatorAccounts", ids, l->nmidsel);
        account_list(e, &b->mw, dir == DIR_OUT ? "coOriginatorAccounts" : "coBeneficiaryAccounts", l->farlist,
                     l->nfar);
        int members = (int)(l->nmidsel + l->nfar + 1);
        r->score = 50 + (int)fmin(20, 5 * (double)(members - 5 > 0 ? members - 5 : 0));
        fb_comp(b, 50, "%d accounts paying each other all-to-all across two groups", members);
        fb_comp(b, (int)fmin(20, 5 * (double)(members - 5 > 0 ? members - 5 : 0)), "%d members beyond five",
                members - 5);
        fb_explain(b,
                   "%s and %zu other %s each %s the same %zu accounts (%s involving %s): a bipartite structure "
                   "of transfers between two groups of accounts.",
                   v->id, l->nfar, plural((int64_t)l->nfar, "account", "accounts"),
                   dir == DIR_OUT ? "paid" : "received money from", l->nmidsel,
                   dir == DIR_OUT ? "payments" : "receipts", usd(total).s);
    }
    r->ok = 1;
}

/* Evidence of the layers: the focus account's transfers with each selected party, and their edges to
 * the far accounts. */
static void layers_write(t08res *r, eng *e, const acct_view *v, int stack, int dir, int odir, const party *ps,
                         const layers *l, const t08_par *p, int *capped)
{
    int64_t ids[64];
    int64_t total = 0;
    for (size_t k = 0; k < l->nmidsel; k++) {
        const party *q = &ps[l->midlist[k]];
        ids[k] = q->acct;
        total += party_evidence(&r->b, v, q, dir, p->minedge);
        int edir = stack ? DIR_OUT : odir;
        size_t nx;
        const etx *xs = edges_of(eng_neighbour(e, q->acct, edir, p->maxexp, p->maxedges, capped), edir, &nx);
        for (size_t z = 0; z < nx; z++)
            for (size_t f = 0; f < l->nfar; f++)
                if (xs[z].cp == l->farlist[f] && xs[z].usd >= p->minedge) {
                    fb_ev(&r->b, &xs[z], AML_ROLE_TRIGGER);
                    break;
                }
    }
    layers_describe(r, e, v, stack, dir, l, ids, total, p);
}

/* Stack (dir OUT: focus is an originator, layers after it) and bipartite
 * (both directions): sets of accounts all paying the same set of accounts. */
static void t08_layers(eng *e, const acct_view *v, int stack, int dir, const t08_par *p, t08res *r, int *capped)
{
    r->variant = stack ? "stack" : "bipartite";
    r->role = stack ? "originator" : (dir == DIR_OUT ? "originator" : "beneficiary");
    party *ps;
    size_t np = parties_cached(e, v, dir, p, &ps);
    recs rs = {0};
    int odir = dir == DIR_OUT ? DIR_IN : DIR_OUT; /* bipartite looks back at the other side */
    layers_collect(e, v, stack, odir, ps, np, p, &rs, capped);
    rec_merge(&rs);
    layers l;
    /* Stack: >= 2 intermediaries each paying >= 2 shared beneficiaries.
     * Bipartite: >= 2 focus-side counterparties each linked to >= 2 other
     * members on the focus account's side (a complete 2x2 core or larger). */
    if (!layers_select(&rs, ps, np, stack, p->ratio, &l) && l.nmidsel >= 2 && l.nfar >= (stack ? 2u : 1u))
        layers_write(r, e, v, stack, dir, odir, ps, &l, p, capped);
    free(rs.r);
}

/* ---- the variants together ---- */

/* No variant matched: what was searched. */
static void t08_none(eng *e, const acct_view *v, aml_finding *out, int64_t explored, int capped)
{
    fbuild b;
    fb_init(&b, e, out, AML_T08, v->acct);
    fb_str(&b, "account", v->id);
    fb_int(&b, "accountsExplored", explored);
    fb_bool(&b, "searchComplete", !capped);
    fb_explain(&b,
               "No layering structure around %s: no scatter-gather through %lld+ intermediaries, no "
               "gather-scatter with %lld+ parties each side, no stacked or bipartite layers, and no chain of "
               "%lld+ hops passing on %.0f%%+ within %lld hours%s.",
               v->id, (long long)PI(e, AML_T08, P08_MIN_INTERMEDIATES), (long long)PI(e, AML_T08, P08_MIN_BRANCHES),
               (long long)PI(e, AML_T08, P08_CHAIN_HOPS), P(e, AML_T08, P08_CHAIN_RATIO) * 100,
               (long long)PI(e, AML_T08, P08_CHAIN_HOURS), capped ? " (search bounded; see searchComplete)" : "");
    fb_finish(&b, AML_NOT_MATCHED);
}

/* T08: every variant is searched on one expansion budget; the most specific of the best score wins,
 * and the others are named in otherVariantsMatched. */
void t08_layering(eng *e, const acct_view *v, aml_finding *out)
{
    t08_par p;
    t08_params(e, &p);
    /* Variants in order of specificity: the first of equal score wins. */
    t08res res[6];
    memset(res, 0, sizeof res);
    int capped = 0;
    size_t before = e->expansions;
    e->expansions = 0;
    for (int k = 0; k < 6; k++)
        fb_init(&res[k].b, e, &res[k].f, AML_T08, v->acct);
    t08_layers(e, v, 1, DIR_OUT, &p, &res[0], &capped);
    t08_layers(e, v, 0, DIR_OUT, &p, &res[1], &capped);
    t08_layers(e, v, 0, DIR_IN, &p, &res[2], &capped);
    t08_sg(e, v, DIR_OUT, &p, &res[3], &capped);
    t08_sg(e, v, DIR_IN, &p, &res[4], &capped);
    t08_gs(e, v, &p, &res[5]);
    int64_t explored = (int64_t)e->expansions;
    e->expansions = before;
    int best = -1;
    for (int k = 0; k < 6; k++)
        if (res[k].ok && (best < 0 || res[k].score > res[best].score))
            best = k;
    /* A chain is the least specific shape: only searched when nothing else matched. */
    t08res chainr;
    memset(&chainr, 0, sizeof chainr);
    fb_init(&chainr.b, e, &chainr.f, AML_T08, v->acct);
    if (best < 0)
        t08_chain(e, v, &p, &chainr, &capped);
    char others[96] = "";
    for (int k = 0; k < 6; k++)
        if (res[k].ok && k != best) {
            size_t l = strlen(others);
            snprintf(others + l, sizeof others - l, "%s%s", l ? "," : "", res[k].variant);
        }
    t08res *w = best >= 0 ? &res[best] : (chainr.ok ? &chainr : NULL);
    if (w) {
        fb_str(&w->b, "account", v->id);
        fb_str(&w->b, "otherVariantsMatched", others);
        fb_int(&w->b, "accountsExplored", explored);
        fb_bool(&w->b, "searchComplete", !capped);
        snprintf(w->f.variant, sizeof w->f.variant, "%s", w->variant);
        snprintf(w->f.variants, sizeof w->f.variants, "%s%s%s", w->variant, others[0] ? "," : "", others);
        fb_finish(&w->b, AML_MATCHED);
        *out = w->f;
        memset(&w->f, 0, sizeof w->f);
    }
    for (int k = 0; k < 6; k++)
        if (&res[k] != w)
            fb_discard(&res[k].b);
    if (&chainr != w)
        fb_discard(&chainr.b);
    if (!w)
        t08_none(e, v, out, explored, capped);
}
