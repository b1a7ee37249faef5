/*
 * Money trails and case graphs (trail.h): a breadth-first walk over
 * aggregated transfers, bounded in nodes, edges, fan and rows read, with
 * what does not fit folded into "n other accounts" nodes.
 */
#include "engine/trail.h"

#include <stdlib.h>
#include <string.h>

/* ---- growing the graph ------------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 32;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int node_find(const aml_trail *t, int kind, int64_t acct)
{
    for (size_t i = 0; i < t->nnodes; i++)
        if (t->nodes[i].kind == kind && t->nodes[i].acct == acct)
            return (int)i;
    return -1;
}

static int edge_find(const aml_trail *t, int src, int dst)
{
    for (size_t i = 0; i < t->nedges; i++)
        if (t->edges[i].src == src && t->edges[i].dst == dst)
            return (int)i;
    return -1;
}

/* Adds a node; its id is filled in later (accounts) or here (others). @return its index or -1. */
static int node_add(aml_trail *t, int kind, int64_t acct, int hop)
{
    if (grow((void **)&t->nodes, &t->capn, t->nnodes, sizeof *t->nodes))
        return -1;
    aml_trail_node *n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->acct = acct;
    n->hop = hop;
    n->arrive = t->o.from;
    n->leave = t->o.to;
    return (int)t->nnodes++;
}

static int edge_add(aml_trail *t, int src, int dst, int hop)
{
    if (grow((void **)&t->edges, &t->cape, t->nedges, sizeof *t->edges))
        return -1;
    aml_trail_edge *e = &t->edges[t->nedges];
    memset(e, 0, sizeof *e);
    e->src = src;
    e->dst = dst;
    e->hop = hop;
    if (hop > t->hops_reached)
        t->hops_reached = hop;
    return (int)t->nedges++;
}

/* Adds one transaction to an edge's aggregate (rows arrive by booking time). */
static void edge_put(aml_trail_edge *e, int64_t no, int64_t at, int64_t usd)
{
    if (!e->count || at < e->first)
        e->first = at;
    if (!e->count || at > e->last)
        e->last = at;
    e->usd += usd;
    e->count++;
    if (e->ntxn < AML_TRAIL_EDGE_TXNS)
        e->txn[e->ntxn++] = (aml_trail_txn){no, at, usd, ""};
}

/* ---- one account, one direction ---------------------------------------------------- */

typedef struct row {
    int64_t cp, at, usd, no;
} row;

typedef struct cand {
    int64_t cp, usd, count, first, last;
    size_t at; /* first row in the sorted rows */
} cand;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->cp != y->cp)
        return x->cp < y->cp ? -1 : 1;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->usd != y->usd)
        return x->usd > y->usd ? -1 : 1;
    return x->cp < y->cp ? -1 : x->cp > y->cp;
}

static const char sql_out[] = "SELECT to_acct, booked_at, amount_base_minor, txn_no FROM transactions "
                              "WHERE from_acct = ?1 AND booked_at >= ?2 AND booked_at <= ?3 AND to_acct IS NOT NULL "
                              "AND to_acct <> ?1 ORDER BY booked_at, txn_no LIMIT ?4";
static const char sql_in[] = "SELECT from_acct, booked_at, amount_base_minor, txn_no FROM transactions "
                             "WHERE to_acct = ?1 AND booked_at >= ?2 AND booked_at <= ?3 AND from_acct IS NOT NULL "
                             "AND from_acct <> ?1 ORDER BY booked_at, txn_no LIMIT ?4";

/* Reads the transfers of node x in direction d into rows (sorted by counterparty, time). */
static int read_rows(aml_store *s, aml_trail *t, const aml_trail_node *x, unsigned d, row **out, size_t *n,
                     aml_err *err)
{
    aml_st *st = aml_stmt(s, d == AML_TRAIL_FORWARD ? sql_out : sql_in);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    int64_t lo = t->o.from, hi = t->o.to;
    if (d == AML_TRAIL_FORWARD && x->arrive > lo)
        lo = x->arrive;
    if (d == AML_TRAIL_BACKWARD && x->leave < hi)
        hi = x->leave;
    aml_bind_int(st, 1, x->acct);
    aml_bind_int(st, 2, lo);
    aml_bind_int(st, 3, hi);
    aml_bind_int(st, 4, AML_TRAIL_MAX_ROWS + 1);
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    while (aml_step(st) == AML_ROW) {
        if (*n == AML_TRAIL_MAX_ROWS) {
            t->rows_capped = 1;
            break;
        }
        if (grow((void **)out, &cap, *n, sizeof **out)) {
            aml_reset(st);
            return aml_errf(err, "out of memory");
        }
        (*out)[(*n)++] = (row){aml_col_int(st, 0), aml_col_int(st, 1), aml_col_int(st, 2),
                               aml_col_int(st, 3)};
    }
    aml_reset(st);
    aml_sort(*out, *n, sizeof **out, row_cmp);
    return 0;
}

/* Groups sorted rows by counterparty. */
static cand *group_rows(const row *r, size_t n, size_t *nc, int64_t *total)
{
    cand *c = malloc((n ? n : 1) * sizeof *c);
    *nc = 0;
    *total = 0;
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        *total += r[i].usd;
        if (!*nc || c[*nc - 1].cp != r[i].cp)
            c[(*nc)++] = (cand){r[i].cp, 0, 0, r[i].at, r[i].at, i};
        cand *k = &c[*nc - 1];
        k->usd += r[i].usd;
        k->count++;
        k->last = r[i].at;
    }
    aml_sort(c, *nc, sizeof *c, cand_cmp);
    return c;
}

/* Folds a candidate into the "n other accounts" node of x in direction d. */
static int fold_into(aml_trail *t, int xi, unsigned d, const cand *k, const char *why)
{
    aml_trail_fold *f = NULL;
    for (size_t i = 0; i < t->nfolds; i++)
        if (t->folds[i].at == xi && t->folds[i].direction == d)
            f = &t->folds[i];
    if (!f) {
        int fi = node_add(t, AML_NODE_FOLDED, t->nodes[xi].acct, t->nodes[xi].hop + 1);
        if (fi < 0 || grow((void **)&t->folds, &t->capf, t->nfolds, sizeof *t->folds))
            return -1;
        int ei = d == AML_TRAIL_FORWARD ? edge_add(t, xi, fi, t->nodes[xi].hop + 1)
                                        : edge_add(t, fi, xi, t->nodes[xi].hop + 1);
        if (ei < 0)
            return -1;
        f = &t->folds[t->nfolds++];
        memset(f, 0, sizeof *f);
        f->node = fi;
        f->at = xi;
        f->direction = d;
        f->why = why;
        t->nodes[fi].dirs = d;
    }
    f->accounts++;
    f->usd += k->usd;
    f->count += k->count;
    t->nodes[f->node].folded = f->accounts;
    int ei = d == AML_TRAIL_FORWARD ? edge_find(t, f->at, f->node) : edge_find(t, f->node, f->at);
    aml_trail_edge *e = &t->edges[ei];
    if (!e->count || k->first < e->first)
        e->first = k->first;
    if (!e->count || k->last > e->last)
        e->last = k->last;
    e->usd += k->usd;
    e->count += k->count;
    return 0;
}

/* Expands node xi in direction d: its counterparties become nodes of the next hop. */
static int expand(aml_store *s, aml_trail *t, int xi, unsigned d, aml_err *err)
{
    row *r;
    size_t n, nc;
    if (read_rows(s, t, &t->nodes[xi], d, &r, &n, err))
        return -1;
    int64_t total;
    cand *c = group_rows(r, n, &nc, &total);
    if (!c) {
        free(r);
        return aml_errf(err, "out of memory");
    }
    int hop = t->nodes[xi].hop + 1, fan = 0, rc = 0;
    for (size_t i = 0; i < nc && !rc; i++) {
        const cand *k = &c[i];
        if (k->usd < t->o.min_amount || (double)k->usd < t->o.min_share * (double)total)
            continue;
        int yi = node_find(t, AML_NODE_ACCOUNT, k->cp);
        int src = d == AML_TRAIL_FORWARD ? xi : yi, dst = d == AML_TRAIL_FORWARD ? yi : xi;
        if (yi >= 0 && edge_find(t, src, dst) >= 0)
            continue;
        const char *why = fan >= t->o.max_fan                      ? "fan"
                          : yi < 0 && (int)t->nnodes >= t->o.max_nodes ? "nodes"
                          : (int)t->nedges >= t->o.max_edges       ? "edges"
                                                                   : NULL;
        if (why) {
            rc = fold_into(t, xi, d, k, why);
            continue;
        }
        fan++;
        if (yi < 0) {
            if ((yi = node_add(t, AML_NODE_ACCOUNT, k->cp, hop)) < 0) {
                rc = -1;
                break;
            }
            t->nodes[yi].arrive = k->first;
            t->nodes[yi].leave = k->last;
            if (d == AML_TRAIL_FORWARD)
                dst = yi;
            else
                src = yi;
        }
        t->nodes[yi].dirs |= d;
        int ei = edge_add(t, src, dst, hop);
        if (ei < 0) {
            rc = -1;
            break;
        }
        for (size_t j = k->at; j < k->at + (size_t)k->count; j++)
            edge_put(&t->edges[ei], r[j].no, r[j].at, r[j].usd);
    }
    free(c);
    free(r);
    return rc ? aml_errf(err, "out of memory") : 0;
}

/* ---- details ----------------------------------------------------------------------- */

static void copy_text(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n) {
        l = n - 1;
        while (l > 0 && ((unsigned char)src[l] & 0xC0) == 0x80)
            l--;
    }
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static int node_details(aml_store *s, aml_trail *t, aml_trail_node *x, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT account_id, is_internal, holder_name, COALESCE(institution_name, bank_id), "
                                   "country, status FROM accounts WHERE acct_no = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(st, 1, x->acct);
    if (aml_step(st) == AML_ROW) {
        copy_text(x->holder, sizeof x->holder, aml_col_text(st, 2));
        copy_text(x->bank, sizeof x->bank, aml_col_text(st, 3));
        copy_text(x->country, sizeof x->country, aml_col_text(st, 4));
        x->internal = (int)aml_col_int(st, 1);
        if (!strcmp(aml_col_text(st, 5), "dormant"))
            x->flags |= AML_FLAG_DORMANT;
        char acct_id[80];
        copy_text(acct_id, sizeof acct_id, aml_col_text(st, 0));
        if (x->kind == AML_NODE_ACCOUNT)
            snprintf(x->id, sizeof x->id, "%s", acct_id);
        else if (x->kind == AML_NODE_CASH)
            snprintf(x->id, sizeof x->id, "cash:%.70s", acct_id);
        else
            snprintf(x->id, sizeof x->id, "fold:%.66s:%s", acct_id, x->dirs == AML_TRAIL_FORWARD ? "out" : "in");
    }
    aml_reset(st);
    if (x->kind != AML_NODE_ACCOUNT)
        return 0;
    st = aml_stmt(s, "SELECT c.full_name, c.pep, c.risk_rating FROM account_parties p JOIN customers c "
                     "ON c.customer_id = p.customer_id WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(st, 1, x->acct);
    while (aml_step(st) == AML_ROW) {
        if (!x->holder[0])
            copy_text(x->holder, sizeof x->holder, aml_col_text(st, 0));
        if ((int)aml_col_int(st, 1))
            x->flags |= AML_FLAG_PEP;
        if (!strcmp(aml_col_text(st, 2), "high"))
            x->flags |= AML_FLAG_HIGH_RISK;
    }
    aml_reset(st);
    if (x->country[0]) {
        char day[11] = "9999-12-31";
        if (t->o.to && t->o.to < INT64_MAX)
            aml_fmt_date(t->o.to, day);
        st = aml_stmt(s, "SELECT list_name FROM jurisdiction_lists WHERE country = ?1 AND effective_from <= ?2 "
                         "AND (effective_to IS NULL OR effective_to > ?2)");
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_text(st, 1, x->country);
        aml_bind_text(st, 2, day);
        while (aml_step(st) == AML_ROW) {
            const char *l = aml_col_text(st, 0);
            x->flags |= !strcmp(l, "fatf_call_for_action") ? AML_FLAG_FATF_CALL : AML_FLAG_FATF_MONITOR;
        }
        aml_reset(st);
    }
    st = aml_stmt(s, "SELECT case_id FROM case_accounts WHERE acct_no = ? ORDER BY case_id LIMIT 4");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_int(st, 1, x->acct);
    size_t k = 0;
    while (aml_step(st) == AML_ROW) {
        const char *id = aml_col_text(st, 0);
        if (k + strlen(id) + 2 >= sizeof x->cases)
            break;
        k += (size_t)snprintf(x->cases + k, sizeof x->cases - k, "%s%s", k ? "," : "", id);
        x->flags |= AML_FLAG_IN_CASE;
    }
    aml_reset(st);
    return 0;
}

/* ---- the walk -------------------------------------------------------------------------- */

static void defaults(aml_trail_opts *o)
{
    if (!o->direction)
        o->direction = AML_TRAIL_BOTH;
    if (o->max_hops <= 0)
        o->max_hops = 3;
    if (o->max_hops > AML_TRAIL_MAX_HOPS)
        o->max_hops = AML_TRAIL_MAX_HOPS;
    if (!o->to)
        o->to = INT64_MAX;
    if (o->max_nodes <= 0)
        o->max_nodes = 60;
    if (o->max_edges <= 0)
        o->max_edges = 150;
    if (o->max_fan <= 0)
        o->max_fan = 12;
}

static int add_cash(aml_store *s, aml_trail *t, int xi, aml_err *err);

/* The transaction ids (txn_ref, or "#<txn_no>") of the listed transactions of edges from `first` on. */
static int resolve_ids(aml_store *s, aml_trail *t, size_t first, aml_err *err)
{
    aml_st *st = aml_stmt(s, "SELECT txn_ref FROM transactions WHERE txn_no = ?");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    for (size_t i = first; i < t->nedges; i++)
        for (int k = 0; k < t->edges[i].ntxn; k++) {
            aml_trail_txn *x = &t->edges[i].txn[k];
            if (x->id[0])
                continue;
            aml_bind_int(st, 1, x->no);
            if (aml_step(st) == AML_ROW && !aml_col_null(st, 0))
                copy_text(x->id, sizeof x->id, aml_col_text(st, 0));
            else
                snprintf(x->id, sizeof x->id, "#%lld", (long long)x->no);
            aml_reset(st);
        }
    return 0;
}

int aml_trail_build(aml_store *s, const aml_trail_opts *o, aml_trail *t, aml_err *err)
{
    memset(t, 0, sizeof *t);
    t->o = *o;
    defaults(&t->o);
    for (size_t i = 0; i < o->nstarts; i++) {
        if (node_find(t, AML_NODE_ACCOUNT, o->starts[i]) >= 0)
            continue;
        int xi = node_add(t, AML_NODE_ACCOUNT, o->starts[i], 0);
        if (xi < 0)
            return aml_errf(err, "out of memory");
        t->nodes[xi].focus = 1;
        t->nodes[xi].dirs = t->o.direction;
    }
    size_t nfocus = t->nnodes;
    for (int hop = 0; hop < t->o.max_hops; hop++) {
        size_t n = t->nnodes; /* nodes added now belong to the next hop */
        for (unsigned d = AML_TRAIL_FORWARD; d <= AML_TRAIL_BACKWARD; d <<= 1)
            for (size_t i = 0; i < n; i++)
                if (t->nodes[i].kind == AML_NODE_ACCOUNT && t->nodes[i].hop == hop && (t->nodes[i].dirs & d) &&
                    expand(s, t, (int)i, d, err))
                    return -1;
    }
    if (t->o.cash)
        for (size_t i = 0; i < nfocus; i++)
            if (add_cash(s, t, (int)i, err))
                return -1;
    for (size_t i = 0; i < t->nnodes; i++)
        if (node_details(s, t, &t->nodes[i], err))
            return -1;
    return resolve_ids(s, t, 0, err);
}

void aml_trail_free(aml_trail *t)
{
    free(t->nodes);
    free(t->edges);
    free(t->folds);
    memset(t, 0, sizeof *t);
}

/* ---- case graphs ------------------------------------------------------------------------ */

/* Cash in and out of a focus account in the window: one "cash" node, an edge each way. */
static int add_cash(aml_store *s, aml_trail *t, int xi, aml_err *err)
{
    static const char *const sql[2] = {
        "SELECT txn_no, booked_at, amount_base_minor FROM transactions WHERE to_acct = ?1 AND from_acct IS NULL "
        "AND booked_at >= ?2 AND booked_at <= ?3 ORDER BY booked_at, txn_no LIMIT ?4",
        "SELECT txn_no, booked_at, amount_base_minor FROM transactions WHERE from_acct = ?1 AND to_acct IS NULL "
        "AND booked_at >= ?2 AND booked_at <= ?3 ORDER BY booked_at, txn_no LIMIT ?4"};
    for (int k = 0; k < 2; k++) {
        aml_st *st = aml_stmt(s, sql[k]);
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(s));
        aml_bind_int(st, 1, t->nodes[xi].acct);
        aml_bind_int(st, 2, t->o.from);
        aml_bind_int(st, 3, t->o.to);
        aml_bind_int(st, 4, AML_TRAIL_MAX_ROWS);
        int ei = -1;
        while (aml_step(st) == AML_ROW) {
            if (ei < 0) {
                int ci = node_find(t, AML_NODE_CASH, t->nodes[xi].acct);
                if (ci < 0 && (ci = node_add(t, AML_NODE_CASH, t->nodes[xi].acct, 1)) < 0)
                    break;
                if ((ei = k == 0 ? edge_add(t, ci, xi, 1) : edge_add(t, xi, ci, 1)) < 0)
                    break;
            }
            edge_put(&t->edges[ei], aml_col_int(st, 0), aml_col_int(st, 1),
                     aml_col_int(st, 2));
        }
        aml_reset(st);
    }
    return 0;
}

/* The node of an evidence endpoint: the account (added when missing), or the cash node of `other`. */
static int evidence_node(aml_trail *t, int64_t acct, int64_t other)
{
    if (!acct) {
        int ci = node_find(t, AML_NODE_CASH, other);
        if (ci < 0 && (ci = node_add(t, AML_NODE_CASH, other, 1)) >= 0)
            t->nodes[ci].dirs = AML_TRAIL_BOTH;
        return ci;
    }
    int i = node_find(t, AML_NODE_ACCOUNT, acct);
    if (i < 0 && (i = node_add(t, AML_NODE_ACCOUNT, acct, 2)) >= 0)
        t->nodes[i].dirs = AML_TRAIL_BOTH;
    return i;
}

/* Marks (or adds) the edges of the transfers a matched finding cited. */
static int mark_evidence(aml_store *s, aml_trail *t, const char *assessment_id, aml_err *err)
{
    /* The typology list is read as a set: the order of its items does not matter. */
#define EVIDENCE_SQL(AGG)                                                                                          \
    "SELECT fe.txn_no, " AGG ", MIN(x.from_acct), MIN(x.to_acct), MIN(x.booked_at), "                           \
    "MIN(x.amount_base_minor) FROM assessment_findings af JOIN finding_evidence fe "                               \
    "ON fe.assessment_id = af.assessment_id AND fe.typology_id = af.typology_id "                                  \
    "JOIN transactions x ON x.txn_no = fe.txn_no WHERE af.assessment_id = ? AND af.status = 'matched' "          \
    "GROUP BY fe.txn_no ORDER BY MIN(x.booked_at), fe.txn_no"
    static const char sql_sqlite[] = EVIDENCE_SQL("group_concat(af.typology_id, ',')");
    static const char sql_pg[] = EVIDENCE_SQL("string_agg(af.typology_id, ',')");
#undef EVIDENCE_SQL
    aml_st *st = aml_stmt(s, aml_store_backend(s) == AML_BACKEND_PG ? sql_pg : sql_sqlite);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    aml_bind_text(st, 1, assessment_id);
    int rc = 0;
    while (!rc && aml_step(st) == AML_ROW) {
        int64_t no = aml_col_int(st, 0), fa = aml_col_int(st, 2), ta = aml_col_int(st, 3);
        unsigned mask = 0;
        const char *list = aml_col_text(st, 1);
        for (const char *p = list; *p;) {
            size_t l = strcspn(p, ",");
            int ti = aml_typology_index(p, l);
            if (ti >= 0)
                mask |= 1u << ti;
            p += l + (p[l] == ',');
        }
        if (!mask || (!fa && !ta))
            continue;
        int src = evidence_node(t, fa, ta), dst = evidence_node(t, ta, fa);
        if (src < 0 || dst < 0 || src == dst) {
            rc = src < 0 || dst < 0 ? -1 : 0;
            continue;
        }
        int ei = edge_find(t, src, dst);
        if (ei < 0) {
            if ((ei = edge_add(t, src, dst, t->nodes[src].hop > t->nodes[dst].hop ? t->nodes[src].hop
                                                                                 : t->nodes[dst].hop)) < 0) {
                rc = -1;
                continue;
            }
            edge_put(&t->edges[ei], no, aml_col_int(st, 4), aml_col_int(st, 5));
        }
        t->edges[ei].typologies |= mask;
        t->matched |= mask;
    }
    aml_reset(st);
    return rc ? aml_errf(err, "out of memory") : 0;
}

int aml_case_graph(aml_store *s, const char *case_id, aml_trail *t, aml_err *err)
{
    memset(t, 0, sizeof *t);
    aml_case c;
    int rc = aml_case_load(s, case_id, &c, err);
    if (rc)
        return rc;
    aml_trail_opts o;
    memset(&o, 0, sizeof o);
    o.starts = c.accts;
    o.nstarts = c.naccts;
    o.direction = AML_TRAIL_BOTH;
    o.max_hops = 1;
    o.from = c.from;
    o.to = c.to;
    o.max_nodes = 40;
    o.max_edges = 120;
    o.max_fan = 10;
    o.cash = 1;
    if (aml_trail_build(s, &o, t, err)) {
        aml_case_free(&c);
        return -1;
    }
    char f[11], to[11];
    aml_fmt_date(c.from, f);
    aml_fmt_date(c.to, to);
    snprintf(t->title, sizeof t->title, "Case %s: fund flow %s to %s", c.case_id, f, to);
    aml_st *st = aml_stmt(s, "SELECT last_assessment_id FROM cases WHERE case_id = ?");
    char aid[80] = "";
    if (st) {
        aml_bind_text(st, 1, c.case_id);
        if (aml_step(st) == AML_ROW)
            copy_text(aid, sizeof aid, aml_col_text(st, 0));
        aml_reset(st);
    }
    aml_case_free(&c);
    size_t before = t->nnodes;
    if (aid[0] && mark_evidence(s, t, aid, err))
        return -1;
    for (size_t i = before; i < t->nnodes; i++)
        if (node_details(s, t, &t->nodes[i], err))
            return -1;
    return resolve_ids(s, t, 0, err);
}

/* ---- JSON and text ------------------------------------------------------------------------- */

static const char *kind_name(int kind)
{
    return kind == AML_NODE_FOLDED ? "folded" : kind == AML_NODE_CASH ? "cash" : "account";
}

static void write_flags(mcp_jw *w, unsigned f)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{AML_FLAG_PEP, "pep"},
                 {AML_FLAG_HIGH_RISK, "high_risk_customer"},
                 {AML_FLAG_FATF_CALL, "fatf_call_for_action"},
                 {AML_FLAG_FATF_MONITOR, "fatf_increased_monitoring"},
                 {AML_FLAG_DORMANT, "dormant"},
                 {AML_FLAG_IN_CASE, "in_case"}};
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (f & names[i].bit)
            mcp_jw_string(w, names[i].name);
    mcp_jw_array_end(w);
}

static void jw_str_or_null(mcp_jw *w, const char *key, const char *v)
{
    mcp_jw_key(w, key);
    if (v && v[0])
        mcp_jw_string(w, v);
    else
        mcp_jw_null(w);
}

static void node_label(const aml_trail *t, const aml_trail_node *n, char *out, size_t cap)
{
    if (n->kind == AML_NODE_FOLDED)
        snprintf(out, cap, "%d other account%s", n->folded, n->folded == 1 ? "" : "s");
    else if (n->kind == AML_NODE_CASH)
        snprintf(out, cap, "Cash (%s)", t->nodes[node_find(t, AML_NODE_ACCOUNT, n->acct)].id);
    else
        snprintf(out, cap, "%s", n->id);
}

static void write_node(const aml_trail *t, const aml_trail_node *n, mcp_jw *w)
{
    char label[160];
    node_label(t, n, label, sizeof label);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "id");
    mcp_jw_string(w, n->id);
    mcp_jw_key(w, "kind");
    mcp_jw_string(w, kind_name(n->kind));
    mcp_jw_key(w, "label");
    mcp_jw_string(w, label);
    mcp_jw_key(w, "hop");
    mcp_jw_int(w, n->hop);
    mcp_jw_key(w, "focus");
    mcp_jw_bool(w, n->focus);
    if (n->kind == AML_NODE_ACCOUNT) {
        jw_str_or_null(w, "holder", n->holder);
        jw_str_or_null(w, "bank", n->bank);
        jw_str_or_null(w, "country", n->country);
        mcp_jw_key(w, "internal");
        mcp_jw_bool(w, n->internal);
        mcp_jw_key(w, "riskFlags");
        write_flags(w, n->flags);
        mcp_jw_key(w, "cases");
        mcp_jw_array_begin(w);
        for (const char *p = n->cases; *p;) {
            size_t l = strcspn(p, ",");
            mcp_jw_stringn(w, p, l);
            p += l + (p[l] == ',');
        }
        mcp_jw_array_end(w);
    } else if (n->kind == AML_NODE_FOLDED) {
        mcp_jw_key(w, "accounts");
        mcp_jw_int(w, n->folded);
    }
    mcp_jw_object_end(w);
}

static void write_edge(const aml_trail *t, size_t i, mcp_jw *w)
{
    const aml_trail_edge *e = &t->edges[i];
    char id[24], d1[11], d2[11];
    snprintf(id, sizeof id, "e%zu", i + 1);
    aml_fmt_date(e->first, d1);
    aml_fmt_date(e->last, d2);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "id");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "from");
    mcp_jw_string(w, t->nodes[e->src].id);
    mcp_jw_key(w, "to");
    mcp_jw_string(w, t->nodes[e->dst].id);
    mcp_jw_key(w, "amountUsdMinor");
    mcp_jw_int(w, e->usd);
    mcp_jw_key(w, "count");
    mcp_jw_int(w, e->count);
    mcp_jw_key(w, "firstDate");
    mcp_jw_string(w, d1);
    mcp_jw_key(w, "lastDate");
    mcp_jw_string(w, d2);
    mcp_jw_key(w, "hop");
    mcp_jw_int(w, e->hop);
    mcp_jw_key(w, "typologies");
    mcp_jw_array_begin(w);
    for (int k = 0; k < AML_NTYP; k++)
        if (e->typologies & (1u << k))
            mcp_jw_string(w, aml_catalog()[k].id);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "transactions");
    mcp_jw_array_begin(w);
    for (int k = 0; k < e->ntxn; k++) {
        char when[21];
        aml_fmt_time(e->txn[k].at, when);
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "txnId");
        mcp_jw_string(w, e->txn[k].id);
        mcp_jw_key(w, "bookedAt");
        mcp_jw_string(w, when);
        mcp_jw_key(w, "amountUsdMinor");
        mcp_jw_int(w, e->txn[k].usd);
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
    mcp_jw_key(w, "transactionsTruncated");
    mcp_jw_bool(w, e->count > e->ntxn && t->nodes[e->src].kind != AML_NODE_FOLDED &&
                       t->nodes[e->dst].kind != AML_NODE_FOLDED);
    mcp_jw_object_end(w);
}

static const char *dir_name(unsigned d)
{
    return d == AML_TRAIL_FORWARD ? "forward" : d == AML_TRAIL_BACKWARD ? "backward" : "both";
}

static void write_limits(const aml_trail *t, mcp_jw *w)
{
    mcp_jw_key(w, "limits");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "maxNodes");
    mcp_jw_int(w, t->o.max_nodes);
    mcp_jw_key(w, "maxEdges");
    mcp_jw_int(w, t->o.max_edges);
    mcp_jw_key(w, "maxFan");
    mcp_jw_int(w, t->o.max_fan);
    mcp_jw_key(w, "maxRowsPerAccount");
    mcp_jw_int(w, AML_TRAIL_MAX_ROWS);
    mcp_jw_key(w, "transactionsPerEdge");
    mcp_jw_int(w, AML_TRAIL_EDGE_TXNS);
    mcp_jw_key(w, "rowsCapped");
    mcp_jw_bool(w, t->rows_capped);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "folded");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < t->nfolds; i++) {
        const aml_trail_fold *f = &t->folds[i];
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "node");
        mcp_jw_string(w, t->nodes[f->node].id);
        mcp_jw_key(w, "at");
        mcp_jw_string(w, t->nodes[f->at].id);
        mcp_jw_key(w, "direction");
        mcp_jw_string(w, f->direction == AML_TRAIL_FORWARD ? "out" : "in");
        mcp_jw_key(w, "accounts");
        mcp_jw_int(w, f->accounts);
        mcp_jw_key(w, "amountUsdMinor");
        mcp_jw_int(w, f->usd);
        mcp_jw_key(w, "transactionCount");
        mcp_jw_int(w, f->count);
        mcp_jw_key(w, "reason");
        mcp_jw_string(w, !strcmp(f->why, "fan")     ? "more counterparties than maxFan: the smallest were folded"
                         : !strcmp(f->why, "nodes") ? "the node cap was reached"
                                                    : "the edge cap was reached");
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
}

void aml_trail_write(const aml_trail *t, mcp_jw *w)
{
    char d1[11], d2[11];
    mcp_jw_object_begin(w);
    if (t->title[0]) {
        mcp_jw_key(w, "title");
        mcp_jw_string(w, t->title);
    }
    mcp_jw_key(w, "roots");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < t->nnodes; i++)
        if (t->nodes[i].focus)
            mcp_jw_string(w, t->nodes[i].id);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "direction");
    mcp_jw_string(w, dir_name(t->o.direction));
    mcp_jw_key(w, "maxHops");
    mcp_jw_int(w, t->o.max_hops);
    mcp_jw_key(w, "hopsReached");
    mcp_jw_int(w, t->hops_reached);
    mcp_jw_key(w, "window");
    mcp_jw_object_begin(w);
    aml_fmt_date(t->o.from, d1);
    mcp_jw_key(w, "from");
    if (t->o.from > 0)
        mcp_jw_string(w, d1);
    else
        mcp_jw_null(w);
    mcp_jw_key(w, "to");
    if (t->o.to < INT64_MAX) {
        aml_fmt_date(t->o.to, d2);
        mcp_jw_string(w, d2);
    } else {
        mcp_jw_null(w);
    }
    mcp_jw_object_end(w);
    mcp_jw_key(w, "minAmountUsdMinor");
    mcp_jw_int(w, t->o.min_amount);
    mcp_jw_key(w, "minShare");
    mcp_jw_double(w, t->o.min_share);
    mcp_jw_key(w, "nodes");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < t->nnodes; i++)
        write_node(t, &t->nodes[i], w);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "edges");
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < t->nedges; i++)
        write_edge(t, i, w);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "matchedTypologies");
    mcp_jw_array_begin(w);
    for (int k = 0; k < AML_NTYP; k++)
        if (t->matched & (1u << k))
            mcp_jw_string(w, aml_catalog()[k].id);
    mcp_jw_array_end(w);
    write_limits(t, w);
    mcp_jw_object_end(w);
}

static int edge_by_amount(const void *a, const void *b, void *ud)
{
    const aml_trail *t = ud;
    const aml_trail_edge *x = &t->edges[*(const size_t *)a], *y = &t->edges[*(const size_t *)b];
    if (x->usd != y->usd)
        return x->usd > y->usd ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

void aml_trail_text(const aml_trail *t, mcp_buf *b)
{
    size_t accounts = 0;
    for (size_t i = 0; i < t->nnodes; i++)
        accounts += t->nodes[i].kind == AML_NODE_ACCOUNT;
    if (t->title[0])
        aml_buf_printf(b, "%s.\n", t->title);
    aml_buf_printf(b, "%zu accounts, %zu aggregated flows, %d hop%s deep (direction %s, at most %d).\n", accounts,
                   t->nedges, t->hops_reached, t->hops_reached == 1 ? "" : "s", dir_name(t->o.direction),
                   t->o.max_hops);
    size_t *ord = malloc((t->nedges ? t->nedges : 1) * sizeof *ord);
    if (!ord)
        return;
    for (size_t i = 0; i < t->nedges; i++)
        ord[i] = i;
    qsort_r(ord, t->nedges, sizeof *ord, edge_by_amount, (void *)t);
    size_t shown = t->nedges < 15 ? t->nedges : 15;
    if (shown)
        aml_buf_printf(b, "Largest flows:\n");
    for (size_t k = 0; k < shown; k++) {
        const aml_trail_edge *e = &t->edges[ord[k]];
        char amt[48], d1[11], d2[11], l1[160], l2[160];
        aml_fmt_usd(e->usd, amt, sizeof amt);
        aml_fmt_date(e->first, d1);
        aml_fmt_date(e->last, d2);
        node_label(t, &t->nodes[e->src], l1, sizeof l1);
        node_label(t, &t->nodes[e->dst], l2, sizeof l2);
        aml_buf_printf(b, "- %s -> %s: %s in %lld transaction%s, %s to %s%s\n", l1, l2, amt, (long long)e->count,
                       e->count == 1 ? "" : "s", d1, d2, e->typologies ? " (typology evidence)" : "");
    }
    if (t->nedges > shown)
        aml_buf_printf(b, "... and %zu smaller flows (all in structuredContent).\n", t->nedges - shown);
    free(ord);
    for (size_t i = 0; i < t->nfolds; i++) {
        const aml_trail_fold *f = &t->folds[i];
        char amt[48];
        aml_fmt_usd(f->usd, amt, sizeof amt);
        aml_buf_printf(b, "Folded: %d other account%s %s %s (%s in %lld transactions): %s.\n", f->accounts,
                       f->accounts == 1 ? "" : "s", f->direction == AML_TRAIL_FORWARD ? "paid by" : "paying",
                       t->nodes[f->at].id, amt, (long long)f->count,
                       !strcmp(f->why, "fan") ? "smallest counterparties beyond maxFan" : "graph size cap");
    }
    if (t->rows_capped)
        aml_buf_printf(b, "An account had more than %d transactions in one direction: only the first were read.\n",
                       AML_TRAIL_MAX_ROWS);
}
