/*
 * The typology engine (see engine.h). Layout of this file:
 *   1. small containers (int64 hash map, string interner)
 *   2. loading: an account's transactions through the covering indexes,
 *      its cash details, KYC, and the neighbours of the graph searches
 *   3. the finding builder (metrics JSON, score breakdown, evidence)
 *   4. T01-T14, one function each, in catalog order
 *   5. running a case and writing findings
 *
 * Amounts are USD cents (amount_base_minor); times are seconds. Every loop
 * walks arrays sorted by (booked_at, txn_no), and every graph search counts
 * its work against the maxExpansions/maxEdgesPerNode bounds, so results are
 * a function of the data and parameters alone.
 */
#include "engine.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. containers ------------------------------------------------------- */

#define EMPTY_KEY INT64_MIN

/* Open-addressing map int64 -> int64 (no deletion; counts may drop to 0). */
typedef struct imap {
    int64_t *keys, *vals;
    size_t cap, n;
} imap;

static int imap_init(imap *m, size_t hint)
{
    size_t cap = 16;
    while (cap < hint * 2)
        cap <<= 1;
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->cap = cap;
    m->n = 0;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = m->vals = NULL;
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        m->keys[i] = EMPTY_KEY;
    return 0;
}

static void imap_free(imap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
}

static size_t ihash(int64_t k, size_t cap)
{
    uint64_t x = (uint64_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static int imap_grow(imap *m)
{
    imap n;
    if (imap_init(&n, m->cap))
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == EMPTY_KEY)
            continue;
        size_t h = ihash(m->keys[i], n.cap);
        while (n.keys[h] != EMPTY_KEY)
            h = (h + 1) & (n.cap - 1);
        n.keys[h] = m->keys[i];
        n.vals[h] = m->vals[i];
        n.n++;
    }
    imap_free(m);
    *m = n;
    return 0;
}

/* Pointer to the value slot of k, inserting it with 0 when absent; NULL on OOM. */
static int64_t *imap_slot(imap *m, int64_t k)
{
    if ((m->n + 1) * 2 > m->cap && imap_grow(m))
        return NULL;
    size_t h = ihash(k, m->cap);
    while (m->keys[h] != EMPTY_KEY && m->keys[h] != k)
        h = (h + 1) & (m->cap - 1);
    if (m->keys[h] == EMPTY_KEY) {
        m->keys[h] = k;
        m->vals[h] = 0;
        m->n++;
    }
    return &m->vals[h];
}

static int imap_get(const imap *m, int64_t k, int64_t *v)
{
    if (!m->cap)
        return 0;
    size_t h = ihash(k, m->cap);
    while (m->keys[h] != EMPTY_KEY) {
        if (m->keys[h] == k) {
            if (v)
                *v = m->vals[h];
            return 1;
        }
        h = (h + 1) & (m->cap - 1);
    }
    return 0;
}

/* String interner: equal strings get equal small ids (1-based, 0 = none). */
typedef struct interner {
    char **strs;
    size_t n, cap;
    imap index; /* hash -> first id with that hash (collisions chained by scan) */
} interner;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h & 0x7fffffffffffffffull;
}

static int intern(interner *in, const char *s)
{
    if (!s || !*s)
        return 0;
    if (!in->index.cap && imap_init(&in->index, 64))
        return 0;
    uint64_t h = fnv1a(s);
    /* Linear probe over hash+k keys keeps collisions distinct without chains. */
    for (int64_t k = (int64_t)h;; k = (k + 1) & 0x7fffffffffffffffll) {
        int64_t id;
        if (!imap_get(&in->index, k, &id)) {
            if (in->n == in->cap) {
                size_t nc = in->cap ? in->cap * 2 : 64;
                char **ns = realloc(in->strs, nc * sizeof *ns);
                if (!ns)
                    return 0;
                in->strs = ns;
                in->cap = nc;
            }
            char *copy = aml_strdup(s);
            int64_t *slot = imap_slot(&in->index, k);
            if (!copy || !slot) {
                free(copy);
                return 0;
            }
            in->strs[in->n++] = copy;
            *slot = (int64_t)in->n;
            return (int)in->n;
        }
        if (strcmp(in->strs[id - 1], s) == 0)
            return (int)id;
    }
}

static const char *interned(const interner *in, int id)
{
    return id > 0 && (size_t)id <= in->n ? in->strs[id - 1] : "";
}

static void interner_free(interner *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->strs[i]);
    free(in->strs);
    imap_free(&in->index);
    memset(in, 0, sizeof *in);
}

/* ---- 2. loading ------------------------------------------------------------ */

enum { CH_CASH, CH_WIRE, CH_ACH, CH_CHECK, CH_CARD, CH_INTERNAL, CH_CRYPTO, CH_OTHER };
enum { DIR_IN = 1, DIR_OUT = 2 };

static int channel_of(const unsigned char *t)
{
    if (!t)
        return CH_OTHER;
    switch (t[0]) {
    case 'c':
        if (t[1] == 'a')
            return t[2] == 's' ? CH_CASH : CH_CARD;
        return t[1] == 'h' ? CH_CHECK : CH_CRYPTO;
    case 'w': return CH_WIRE;
    case 'a': return CH_ACH;
    case 'i': return CH_INTERNAL;
    default: return CH_OTHER;
    }
}

/* A transaction as seen from one account (or a graph edge). */
typedef struct etx {
    int64_t no;       /* txn_no */
    int64_t at;       /* booked_at */
    int64_t cp;       /* counterparty acct_no, 0 for cash without one */
    int64_t usd;      /* USD cents */
    unsigned char dir; /* DIR_IN / DIR_OUT relative to the account */
    unsigned char ch;  /* CH_* */
} etx;

/* A cash transaction with its details. */
typedef struct cash_row {
    int64_t no, at, acct, usd;
    unsigned char dir;
    int conductor, location, region; /* interned, 0 = unknown */
} cash_row;

/* One focus account, loaded. */
typedef struct acct_view {
    int64_t acct;
    char id[128];
    int internal;
    int has_opened;
    int64_t opened_at;
    int has_opening_deposit;
    int64_t opening_deposit;
    int home_region;          /* interned */
    char country[8];
    /* Customers (primary first). */
    char cust_ids[8][64];
    size_t ncust;
    char cust_name[160];      /* primary customer's name */
    int has_kyc;
    int64_t exp_cash, exp_volume;
    int has_exp_cash, has_exp_volume;
    int cash_intensive;
    int entity;
    char occupation[64];
    int64_t *siblings;        /* acct_nos of the customers' accounts (incl. this), ascending */
    size_t nsib;
    etx *tx;                  /* [load_from, to], ascending (at, no) */
    size_t ntx;
    size_t w0, w1;            /* the review window inside tx: [w0, w1) */
    int64_t *prev_cp_at;      /* per tx: previous contact with the same counterparty, or INT64_MIN */
    unsigned char *known;     /* per tx: the counterparty was dealt with before the window opened */
    cash_row *cash;           /* cash rows of this account, [load_from, to] */
    size_t ncash;
    int64_t load_from;
} acct_view;

/* Neighbour edges for the graph searches. */
typedef struct gnode {
    etx *out, *in;
    size_t nout, nin;
    int out_loaded, in_loaded;
} gnode;

typedef struct jrow {
    char list[32], country[8];
    int64_t from, to; /* effective [from, to); to = INT64_MAX when open */
} jrow;

typedef struct fxrow {
    char cur[8];
    int64_t date, num, den;
} fxrow;

struct party;

typedef struct eng {
    aml_store *s;
    struct party *pc[3];      /* T08: the focus account's parties per direction (cached) */
    size_t pc_n[3];
    int pc_have[3];
    const void *pc_view;      /* the account view they belong to */
    const aml_params *p;
    int64_t from, to;
    int daygran;              /* the store holds day-precision timestamps */
    aml_sha256 data_hash;
    unsigned char hbuf[8184];  /* rows not yet fed to the digest */
    size_t hlen;
    int64_t edges_read;
    interner strs;
    imap gidx;                /* acct_no -> index into gnodes + 1 */
    gnode *gnodes;
    size_t ngnodes, capgnodes;
    size_t expansions;        /* neighbour loads so far (bounded) */
    jrow *jl;
    size_t njl;
    imap listed;              /* acct_no -> 1 for accounts in a listed country */
    int any_country;          /* some account has a country at all */
    int any_trade_docs;       /* the store holds trade documents */
    fxrow *fx;
    size_t nfx;
    int oom;
} eng;

static double P(const eng *e, int t, int i)
{
    return e->p->v[t][i];
}

static int64_t PI(const eng *e, int t, int i)
{
    return (int64_t)llround(e->p->v[t][i]);
}

static int cmp_etx(const void *a, const void *b)
{
    const etx *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static int cmp_cash(const void *a, const void *b)
{
    const cash_row *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Feeds a transaction read to the data digest, little-endian (no, at, usd), in 8 KiB batches:
 * one digest update per row would cost more than reading the row. */
static void hash_row(eng *e, const etx *t)
{
    if (e->hlen + 24 > sizeof e->hbuf) {
        aml_sha256_update(&e->data_hash, e->hbuf, e->hlen);
        e->hlen = 0;
    }
    unsigned char *b = e->hbuf + e->hlen;
    int64_t v[3] = {t->no, t->at, t->usd};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 8; i++)
            b[k * 8 + i] = (unsigned char)((uint64_t)v[k] >> (8 * i));
    e->hlen += 24;
    e->edges_read++;
}

static const char *const sql_out =
    "SELECT txn_no, booked_at, to_acct, amount_base_minor, channel FROM transactions "
    "WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 LIMIT ?4";
static const char *const sql_in =
    "SELECT txn_no, booked_at, from_acct, amount_base_minor, channel FROM transactions "
    "WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 LIMIT ?4";

/* Appends the edges of `acct` in one direction; self-transfers are skipped. */
static int load_edges(eng *e, int64_t acct, int dir, int64_t from, int64_t to, int64_t limit, etx **arr,
                      size_t *n, size_t *cap)
{
    sqlite3_stmt *st = aml_stmt(e->s, dir == DIR_OUT ? sql_out : sql_in);
    if (!st)
        return -1;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, from);
    aml_bind_int(st, 3, to);
    aml_bind_int(st, 4, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t cp = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 2);
        if (cp == acct)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            etx *na = realloc(*arr, nc * sizeof *na);
            if (!na) {
                sqlite3_reset(st);
                e->oom = 1;
                return -1;
            }
            *arr = na;
            *cap = nc;
        }
        etx *t = &(*arr)[(*n)++];
        t->no = sqlite3_column_int64(st, 0);
        t->at = sqlite3_column_int64(st, 1);
        t->cp = cp;
        t->usd = sqlite3_column_int64(st, 3);
        t->ch = (unsigned char)channel_of(sqlite3_column_text(st, 4));
        t->dir = (unsigned char)dir;
        hash_row(e, t);
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int load_cash(eng *e, int64_t acct, int64_t from, int64_t to, cash_row **arr, size_t *n, size_t *cap)
{
    static const char *const sql =
        "SELECT txn_no, booked_at, from_acct, to_acct, amount_base_minor, conductor_id, location_id, "
        "location_region FROM transactions WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash' "
        "UNION ALL "
        "SELECT txn_no, booked_at, from_acct, to_acct, amount_base_minor, conductor_id, location_id, "
        "location_region FROM transactions WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash'";
    sqlite3_stmt *st = aml_stmt(e->s, sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, from);
    aml_bind_int(st, 3, to);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t fa = sqlite3_column_int64(st, 2), ta = sqlite3_column_int64(st, 3);
        if (fa == ta)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 32;
            cash_row *na = realloc(*arr, nc * sizeof *na);
            if (!na) {
                sqlite3_reset(st);
                e->oom = 1;
                return -1;
            }
            *arr = na;
            *cap = nc;
        }
        cash_row *c = &(*arr)[(*n)++];
        c->no = sqlite3_column_int64(st, 0);
        c->at = sqlite3_column_int64(st, 1);
        c->acct = acct;
        c->usd = sqlite3_column_int64(st, 4);
        c->dir = ta == acct ? DIR_IN : DIR_OUT;
        c->conductor = intern(&e->strs, (const char *)sqlite3_column_text(st, 5));
        c->location = intern(&e->strs, (const char *)sqlite3_column_text(st, 6));
        c->region = intern(&e->strs, (const char *)sqlite3_column_text(st, 7));
    }
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int64_t parse_date_col(sqlite3_stmt *st, int i, int *ok)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    int64_t v = 0;
    *ok = t && aml_parse_time(t, strlen(t), &v, NULL) == 0;
    return v;
}

/*
 * Orders the account's transactions by (booked_at, txn_no). tx[0, nout) and
 * tx[nout, n) each come from an index scan, already ordered by time: merge
 * them, then order the (short) runs of equal times by txn_no.
 */
static int merge_by_time(etx *tx, size_t nout, size_t n)
{
    etx *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    size_t a = 0, b = nout, k = 0;
    while (a < nout && b < n)
        tmp[k++] = tx[b].at < tx[a].at ? tx[b++] : tx[a++];
    while (a < nout)
        tmp[k++] = tx[a++];
    while (b < n)
        tmp[k++] = tx[b++];
    for (size_t r = 0; r < n;) {
        size_t z = r + 1;
        while (z < n && tmp[z].at == tmp[r].at)
            z++;
        if (z - r > 1)
            aml_sort(tmp + r, z - r, sizeof *tmp, cmp_etx);
        r = z;
    }
    memcpy(tx, tmp, n * sizeof *tx);
    free(tmp);
    return 0;
}

/* Details of the account's cash transactions (conductor, location, region), by rowid. */
static int load_cash_details(eng *e, acct_view *v, aml_err *err)
{
    size_t n = 0;
    for (size_t k = 0; k < v->ntx; k++)
        n += v->tx[k].ch == CH_CASH;
    if (!n)
        return 0;
    v->cash = malloc(n * sizeof *v->cash);
    if (!v->cash)
        return aml_errf(err, "out of memory");
    sqlite3_stmt *st = aml_stmt(e->s, "SELECT conductor_id, location_id, location_region FROM transactions "
                                      "WHERE txn_no = ?");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    for (size_t k = 0; k < v->ntx; k++) {
        const etx *t = &v->tx[k];
        if (t->ch != CH_CASH)
            continue;
        cash_row *c = &v->cash[v->ncash++];
        memset(c, 0, sizeof *c);
        c->no = t->no;
        c->at = t->at;
        c->acct = v->acct;
        c->usd = t->usd;
        c->dir = t->dir;
        sqlite3_reset(st);
        aml_bind_int(st, 1, t->no);
        if (sqlite3_step(st) == SQLITE_ROW) {
            c->conductor = intern(&e->strs, (const char *)sqlite3_column_text(st, 0));
            c->location = intern(&e->strs, (const char *)sqlite3_column_text(st, 1));
            c->region = intern(&e->strs, (const char *)sqlite3_column_text(st, 2));
        }
    }
    sqlite3_reset(st);
    return 0;
}

static int load_view(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    memset(v, 0, sizeof *v);
    v->acct = acct;
    sqlite3_stmt *st = aml_stmt(e->s, "SELECT account_id, is_internal, opened_at, opening_deposit_minor, "
                                      "home_region, country FROM accounts WHERE acct_no = ?");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    aml_bind_int(st, 1, acct);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return aml_errf(err, "account #%lld is missing", (long long)acct);
    }
    snprintf(v->id, sizeof v->id, "%s", aml_col_text(st, 0));
    v->internal = sqlite3_column_int(st, 1);
    v->opened_at = parse_date_col(st, 2, &v->has_opened);
    v->has_opening_deposit = sqlite3_column_type(st, 3) != SQLITE_NULL;
    v->opening_deposit = sqlite3_column_int64(st, 3);
    v->home_region = intern(&e->strs, (const char *)sqlite3_column_text(st, 4));
    snprintf(v->country, sizeof v->country, "%s", aml_col_text(st, 5));
    sqlite3_reset(st);

    /* Customers: primary role first, then by id. */
    st = aml_stmt(e->s, "SELECT c.customer_id, c.full_name, c.customer_type, c.occupation, c.cash_intensive, "
                        "c.expected_monthly_cash_minor, c.expected_monthly_volume_minor "
                        "FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
                        "WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    aml_bind_int(st, 1, acct);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (v->ncust < 8) {
            int dup = 0;
            for (size_t k = 0; k < v->ncust; k++)
                dup |= strcmp(v->cust_ids[k], aml_col_text(st, 0)) == 0;
            if (!dup)
                snprintf(v->cust_ids[v->ncust++], sizeof v->cust_ids[0], "%s", aml_col_text(st, 0));
        }
        if (v->ncust == 1 && !v->cust_name[0]) {
            snprintf(v->cust_name, sizeof v->cust_name, "%s", aml_col_text(st, 1));
            v->entity = strcmp(aml_col_text(st, 2), "entity") == 0;
            snprintf(v->occupation, sizeof v->occupation, "%s", aml_col_text(st, 3));
            v->cash_intensive = sqlite3_column_int(st, 4);
            v->has_exp_cash = sqlite3_column_type(st, 5) != SQLITE_NULL;
            v->exp_cash = sqlite3_column_int64(st, 5);
            v->has_exp_volume = sqlite3_column_type(st, 6) != SQLITE_NULL;
            v->exp_volume = sqlite3_column_int64(st, 6);
            v->has_kyc = v->has_exp_cash || v->has_exp_volume;
        }
    }
    sqlite3_reset(st);

    /* Accounts of the same customers. */
    size_t cap = 0;
    st = aml_stmt(e->s, "SELECT DISTINCT p2.acct_no FROM account_parties p1 JOIN account_parties p2 "
                        "ON p2.customer_id = p1.customer_id WHERE p1.acct_no = ?");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    aml_bind_int(st, 1, acct);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (v->nsib == cap) {
            cap = cap ? cap * 2 : 8;
            int64_t *ns = realloc(v->siblings, cap * sizeof *ns);
            if (!ns) {
                sqlite3_reset(st);
                return aml_errf(err, "out of memory");
            }
            v->siblings = ns;
        }
        v->siblings[v->nsib++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_reset(st);
    if (v->nsib == 0) {
        v->siblings = malloc(sizeof *v->siblings);
        if (!v->siblings)
            return aml_errf(err, "out of memory");
        v->siblings[v->nsib++] = acct;
    }
    aml_sort(v->siblings, v->nsib, sizeof *v->siblings, cmp_i64);

    /* History reaches back far enough for every look-back parameter. */
    int64_t back = (int64_t)fmax(fmax(P(e, AML_T13, P13_KNOWN_LOOKBACK), P(e, AML_T03, P03_NEW_LOOKBACK)),
                                 P(e, AML_T04, P03_NEW_LOOKBACK));
    int64_t from = e->from - back * AML_DAY;
    int64_t t11 = e->to - (PI(e, AML_T11, P11_PERIOD) +
                           (int64_t)fmax(P(e, AML_T11, P11_BASELINE_DAYS), P(e, AML_T11, P11_SPIKE_DAYS))) *
                              AML_DAY;
    if (t11 < from)
        from = t11;
    v->load_from = from;
    size_t tcap = 0;
    if (load_edges(e, acct, DIR_OUT, from, e->to, -1, &v->tx, &v->ntx, &tcap))
        return aml_errf(err, "loading transactions of %s: %s", v->id, e->oom ? "out of memory" : e->s->errmsg);
    size_t nout = v->ntx;
    if (load_edges(e, acct, DIR_IN, from, e->to, -1, &v->tx, &v->ntx, &tcap))
        return aml_errf(err, "loading transactions of %s: %s", v->id, e->oom ? "out of memory" : e->s->errmsg);
    if (merge_by_time(v->tx, nout, v->ntx))
        return aml_errf(err, "out of memory");
    size_t i = 0;
    while (i < v->ntx && v->tx[i].at < e->from)
        i++;
    v->w0 = i;
    v->w1 = v->ntx;

    /* One pass over the counterparties: the previous contact with each (for "new" and
     * "known" tests), and whether the first contact came before the window. */
    v->prev_cp_at = malloc((v->ntx ? v->ntx : 1) * sizeof *v->prev_cp_at);
    v->known = calloc(v->ntx ? v->ntx : 1, 1);
    int64_t *firstt = malloc((v->ntx ? v->ntx : 1) * sizeof *firstt), *lastt = malloc((v->ntx ? v->ntx : 1) * sizeof *lastt);
    imap idx;
    if (!v->prev_cp_at || !v->known || !firstt || !lastt || imap_init(&idx, v->ntx / 2 + 64)) {
        free(firstt);
        free(lastt);
        return aml_errf(err, "out of memory");
    }
    int64_t ncp = 0;
    for (size_t k = 0; k < v->ntx; k++) {
        v->prev_cp_at[k] = INT64_MIN;
        if (!v->tx[k].cp)
            continue;
        int64_t *slot = imap_slot(&idx, v->tx[k].cp);
        if (!slot) {
            imap_free(&idx);
            free(firstt);
            free(lastt);
            return aml_errf(err, "out of memory");
        }
        int64_t c;
        if (!*slot) {
            c = ncp++;
            *slot = c + 1;
            firstt[c] = v->tx[k].at;
        } else {
            c = *slot - 1;
            v->prev_cp_at[k] = lastt[c];
        }
        lastt[c] = v->tx[k].at;
        v->known[k] = firstt[c] < e->from;
    }
    imap_free(&idx);
    free(firstt);
    free(lastt);
    return load_cash_details(e, v, err);
}

static void view_free(acct_view *v)
{
    free(v->siblings);
    free(v->tx);
    free(v->prev_cp_at);
    free(v->known);
    free(v->cash);
    memset(v, 0, sizeof *v);
}

static int is_sibling(const acct_view *v, int64_t acct)
{
    return bsearch(&acct, v->siblings, v->nsib, sizeof *v->siblings, cmp_i64) != NULL;
}

/* Index of the first transaction at or after t. */
static size_t lower_at(const etx *tx, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tx[mid].at < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Neighbour edges, loaded once per run and bounded. NULL when the bound is hit. */
static gnode *neighbour(eng *e, int64_t acct, int dir, int64_t max_exp, int64_t max_edges, int *capped)
{
    int64_t idx;
    gnode *g;
    if (imap_get(&e->gidx, acct, &idx)) {
        g = &e->gnodes[idx - 1];
    } else {
        if ((int64_t)e->expansions >= max_exp) {
            *capped = 1;
            return NULL;
        }
        if (e->ngnodes == e->capgnodes) {
            size_t nc = e->capgnodes ? e->capgnodes * 2 : 64;
            gnode *ng = realloc(e->gnodes, nc * sizeof *ng);
            if (!ng) {
                e->oom = 1;
                return NULL;
            }
            e->gnodes = ng;
            e->capgnodes = nc;
        }
        int64_t *slot = imap_slot(&e->gidx, acct);
        if (!slot) {
            e->oom = 1;
            return NULL;
        }
        g = &e->gnodes[e->ngnodes++];
        memset(g, 0, sizeof *g);
        *slot = (int64_t)e->ngnodes;
    }
    int *loaded = dir == DIR_OUT ? &g->out_loaded : &g->in_loaded;
    if (!*loaded) {
        if ((int64_t)e->expansions >= max_exp) {
            *capped = 1;
            return NULL;
        }
        e->expansions++;
        size_t cap = 0;
        etx **arr = dir == DIR_OUT ? &g->out : &g->in;
        size_t *n = dir == DIR_OUT ? &g->nout : &g->nin;
        if (load_edges(e, acct, dir, e->from, e->to, max_edges, arr, n, &cap))
            return NULL;
        if ((int64_t)*n >= max_edges)
            *capped = 1;
        aml_sort(*arr, *n, sizeof **arr, cmp_etx);
        *loaded = 1;
    }
    return g;
}

/* ---- 3. the finding builder ------------------------------------------------ */

typedef struct comp {
    char what[112];
    int pts;
} comp;

typedef struct fbuild {
    aml_finding *f;
    mcp_buf mb;
    mcp_jw mw;
    comp comps[16];
    int ncomps;
    aml_evidence *ev;
    size_t nev, cap;
    int64_t ev_total;
    eng *e;
} fbuild;

static void fb_init(fbuild *b, eng *e, aml_finding *f, int typ, int64_t acct)
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

static void fb_int(fbuild *b, const char *k, int64_t v)
{
    mcp_jw_key(&b->mw, k);
    mcp_jw_int(&b->mw, v);
}

static double round4(double x)
{
    if (!isfinite(x))
        return 0;
    return round(x * 10000.0) / 10000.0;
}

static void fb_dbl(fbuild *b, const char *k, double v)
{
    mcp_jw_key(&b->mw, k);
    mcp_jw_double(&b->mw, round4(v));
}

static void fb_str(fbuild *b, const char *k, const char *v)
{
    mcp_jw_key(&b->mw, k);
    mcp_jw_string(&b->mw, v);
}

static void fb_date(fbuild *b, const char *k, int64_t t)
{
    char d[11];
    aml_fmt_date(t, d);
    fb_str(b, k, d);
}

static void fb_bool(fbuild *b, const char *k, int v)
{
    mcp_jw_key(&b->mw, k);
    mcp_jw_bool(&b->mw, v);
}

static void fb_comp(fbuild *b, int pts, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void fb_comp(fbuild *b, int pts, const char *fmt, ...)
{
    if (b->ncomps == 16 || pts == 0)
        return;
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

static void fb_ev(fbuild *b, const etx *t, int role)
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

static void fb_ev_cash(fbuild *b, const cash_row *c, int role)
{
    etx t = {c->no, c->at, 0, c->usd, c->dir, CH_CASH};
    fb_ev(b, &t, role);
}

static void fb_explain(fbuild *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void fb_explain(fbuild *b, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(b->f->explanation);
    b->f->explanation = aml_strdup(buf);
}

static void fb_missing(fbuild *b, const char *a, const char *c)
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


/* Closes the metrics, computes the score and orders the evidence. */
static void fb_finish(fbuild *b, int status)
{
    aml_finding *f = b->f;
    f->status = status;
    int score = 0;
    if (status == AML_MATCHED) {
        for (int i = 0; i < b->ncomps; i++)
            score += b->comps[i].pts;
        score = score > 100 ? 100 : score < 0 ? 0 : score;
    }
    f->score = score;
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
    /* Evidence: ordered, one entry per transaction (trigger wins over context). */
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
    mcp_jw_object_end(&b->mw);
    f->ev = b->ev;
    f->nev = k;
    f->amount_usd = 0;
    f->first_at = f->last_at = 0;
    for (size_t i = 0; i < k; i++) {
        if (f->ev[i].role != AML_ROLE_TRIGGER)
            continue;
        f->amount_usd += f->ev[i].usd;
        if (!f->first_at || f->ev[i].at < f->first_at)
            f->first_at = f->ev[i].at;
        if (f->ev[i].at > f->last_at)
            f->last_at = f->ev[i].at;
    }
    if (mcp_jw_finish(&b->mw) == MCP_OK)
        f->metrics_json = aml_strndup(b->mb.data, b->mb.len);
    else
        f->metrics_json = aml_strdup("{}");
    mcp_buf_cleanup(&b->mb);
    if (!f->explanation)
        f->explanation = aml_strdup("");
    b->ev = NULL;
}

static void finding_clear(aml_finding *f)
{
    free(f->explanation);
    free(f->metrics_json);
    free(f->missing_json);
    free(f->ev);
    memset(f, 0, sizeof *f);
}

/* Discards a builder that will not be used (its finding is cleared). */
static void fb_discard(fbuild *b)
{
    mcp_buf_cleanup(&b->mb);
    free(b->ev);
    b->ev = NULL;
    finding_clear(b->f);
}

/* Formatting helpers for explanations. */
typedef struct money {
    char s[48];
} money;

static money usd(int64_t cents)
{
    money m;
    aml_fmt_usd(cents, m.s, sizeof m.s);
    return m;
}

typedef struct dstr {
    char s[11];
} dstr;

static dstr day(int64_t t)
{
    dstr d;
    aml_fmt_date(t, d.s);
    return d;
}

static const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* Hours between two times, honouring day-granular data (a same-day pair counts as within a day). */
static int within(const eng *e, int64_t t0, int64_t t1, int64_t hours)
{
    if (e->daygran) {
        int64_t days = (hours + 23) / 24;
        return t1 >= t0 && t1 - t0 <= days * AML_DAY;
    }
    return t1 > t0 && t1 - t0 <= hours * AML_HOUR;
}

/* Strictly later, or the same day on day-granular data. */
static int later(const eng *e, int64_t t0, int64_t t1)
{
    return e->daygran ? t1 >= t0 : t1 > t0;
}

static double median_i64(int64_t *a, size_t n)
{
    if (!n)
        return 0;
    aml_sort(a, n, sizeof *a, cmp_i64);
    return n % 2 ? (double)a[n / 2] : ((double)a[n / 2 - 1] + (double)a[n / 2]) / 2.0;
}

static double cv_of(const int64_t *a, size_t n)
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

/* ---- 4. typologies --------------------------------------------------------- */

/* T01: structuring, over all accounts of the customer. */
static void t01(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T01, v->acct);
    int64_t ctr = PI(e, AML_T01, P01_CTR), W = PI(e, AML_T01, P01_WINDOW) * AML_DAY;
    int64_t band = (int64_t)llround((double)ctr * P(e, AML_T01, P01_BAND));
    int64_t N = PI(e, AML_T01, P01_MIN_NEAR), SD = PI(e, AML_T01, P01_SAME_DAY_MIN);

    /* Cash rows of every account of the customer, inside the window. */
    cash_row *rows = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < v->ncash; i++) {
        if (v->cash[i].at < e->from)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            cash_row *nr = realloc(rows, cap * sizeof *nr);
            if (!nr)
                break;
            rows = nr;
        }
        rows[n++] = v->cash[i];
    }
    for (size_t s = 0; s < v->nsib; s++)
        if (v->siblings[s] != v->acct)
            load_cash(e, v->siblings[s], e->from, e->to, &rows, &n, &cap);
    aml_sort(rows, n, sizeof *rows, cmp_cash);

    struct best {
        int ok, score, dir, variant; /* variant 0 multi-day, 1 same-day */
        size_t i, j;                  /* rows of the chosen set, by index list */
        size_t *idx;
        size_t nidx;
        int64_t sum;
        int locs;
    } best = {0};
    size_t *near = malloc((n ? n : 1) * sizeof *near);
    size_t *pick = malloc((n ? n : 1) * sizeof *pick);
    int64_t max_near_count = 0;
    int ncash_dir[3] = {0};
    for (int dir = DIR_IN; dir <= DIR_OUT && near && pick; dir++) {
        size_t nn = 0;
        for (size_t i = 0; i < n; i++) {
            if (rows[i].dir != dir)
                continue;
            ncash_dir[dir]++;
            if (rows[i].usd >= band && rows[i].usd < ctr)
                near[nn++] = i;
        }
        /* T01b: the densest window of near-threshold transactions. */
        size_t j = 0;
        int64_t sum = 0;
        for (size_t i = 0; i < nn; i++) {
            if (j < i) {
                j = i;
                sum = 0;
            }
            while (j < nn && rows[near[j]].at - rows[near[i]].at <= W)
                sum += rows[near[j++]].usd;
            int64_t cnt = (int64_t)(j - i);
            if (cnt > max_near_count)
                max_near_count = cnt;
            if (cnt >= N && sum > ctr) {
                /* Score this window. */
                int locs = 0;
                int64_t lastday = INT64_MIN;
                int ctr_day = 0;
                int64_t ratios[4096];
                size_t nr = 0;
                for (size_t k = i; k < j; k++) {
                    int seen = 0;
                    for (size_t q = k > i + 64 ? k - 64 : i; q < k; q++)
                        seen |= rows[near[q]].location == rows[near[k]].location;
                    locs += !seen && rows[near[k]].location;
                    if (nr < 4096)
                        ratios[nr++] = rows[near[k]].usd * 10000 / ctr;
                }
                /* A CTR was due on a day whose cash total in this direction exceeded the threshold. */
                int64_t span0 = aml_day_start(rows[near[i]].at), span1 = rows[near[j - 1]].at;
                int64_t daytotal = 0;
                for (size_t k = 0; k < n; k++) {
                    if (rows[k].dir != dir || rows[k].at < span0 || rows[k].at > span1 + AML_DAY)
                        continue;
                    int64_t d0 = aml_day_start(rows[k].at);
                    if (d0 != lastday) {
                        daytotal = 0;
                        lastday = d0;
                    }
                    daytotal += rows[k].usd;
                    if (daytotal > ctr)
                        ctr_day = 1;
                }
                double med = median_i64(ratios, nr) / 10000.0;
                int score = 50 + (int)fmin(24, 6 * (double)(cnt - N)) + (int)fmin(15, 5 * (double)(locs > 1 ? locs - 1 : 0)) +
                            (med >= 0.95 ? 10 : 0) + (ctr_day ? 0 : 5);
                if (!best.ok || score > best.score || (score == best.score && sum > best.sum)) {
                    best.ok = 1;
                    best.score = score;
                    best.dir = dir;
                    best.variant = 0;
                    best.nidx = 0;
                    for (size_t k = i; k < j; k++)
                        pick[best.nidx++] = near[k];
                    best.sum = sum;
                    best.locs = locs;
                    best.i = (size_t)ctr_day;
                    best.j = (size_t)llround(med * 10000);
                }
            }
            sum -= rows[near[i]].usd;
        }
        /* T01a: same-day splits. */
        for (size_t i = 0; i < n;) {
            int64_t d0 = aml_day_start(rows[i].at);
            size_t k = i;
            int64_t dsum = 0, cnt = 0;
            int inband = 0, locs = 0;
            size_t start = i;
            while (k < n && aml_day_start(rows[k].at) == d0) {
                if (rows[k].dir == dir && rows[k].usd < ctr) {
                    dsum += rows[k].usd;
                    cnt++;
                    inband |= rows[k].usd >= band;
                    int seen = 0;
                    for (size_t q = start; q < k; q++)
                        seen |= rows[q].dir == dir && rows[q].usd < ctr && rows[q].location == rows[k].location;
                    locs += !seen && rows[k].location;
                }
                k++;
            }
            if (cnt >= SD && dsum > ctr && (inband || locs >= 2)) {
                int score = 50 + (locs >= 2 ? 10 : 0) + (int)fmin(15, 5 * (double)(cnt - SD)) + (inband ? 5 : 0);
                if (!best.ok || score > best.score) {
                    best.ok = 1;
                    best.score = score;
                    best.dir = dir;
                    best.variant = 1;
                    best.nidx = 0;
                    for (size_t q = start; q < k; q++)
                        if (rows[q].dir == dir && rows[q].usd < ctr)
                            pick[best.nidx++] = q;
                    best.sum = dsum;
                    best.locs = locs;
                }
            }
            i = k;
        }
    }
    fb_str(&b, "account", v->id);
    fb_int(&b, "accountsConsidered", (int64_t)v->nsib);
    fb_int(&b, "cashDeposits", ncash_dir[DIR_IN]);
    fb_int(&b, "cashWithdrawals", ncash_dir[DIR_OUT]);
    const char *dirw = best.dir == DIR_OUT ? "withdrawals" : "deposits";
    if (best.ok && pick) {
        int64_t lo = INT64_MAX, hi = 0;
        for (size_t k = 0; k < best.nidx; k++) {
            const cash_row *c = &rows[pick[k]];
            lo = c->usd < lo ? c->usd : lo;
            hi = c->usd > hi ? c->usd : hi;
            fb_ev_cash(&b, c, AML_ROLE_TRIGGER);
        }
        const cash_row *first = &rows[pick[0]], *last = &rows[pick[best.nidx - 1]];
        snprintf(out->variant, sizeof out->variant, "%s", best.variant ? "same_day_split" : "multi_day_near_threshold");
        fb_str(&b, "variant", out->variant);
        fb_str(&b, "direction", best.dir == DIR_OUT ? "withdrawal" : "deposit");
        fb_int(&b, "transactionCount", (int64_t)best.nidx);
        fb_int(&b, "totalMinor", best.sum);
        fb_int(&b, "distinctLocations", best.locs);
        fb_date(&b, "from", first->at);
        fb_date(&b, "to", last->at);
        if (best.variant == 0) {
            fb_dbl(&b, "medianRatioToThreshold", (double)best.j / 10000.0);
            fb_bool(&b, "ctrTriggered", (int)best.i);
            fb_comp(&b, 50, "%lld cash %s in [%s, %s) within %lld days", (long long)best.nidx, dirw, usd(band).s,
                    usd(ctr).s, (long long)(W / AML_DAY));
            fb_comp(&b, (int)fmin(24, 6 * (double)((int64_t)best.nidx - N)), "%lld transactions beyond the minimum of %lld",
                    (long long)((int64_t)best.nidx - N), (long long)N);
            fb_comp(&b, (int)fmin(15, 5 * (double)(best.locs > 1 ? best.locs - 1 : 0)), "%d distinct locations",
                    best.locs);
            fb_comp(&b, (double)best.j / 10000.0 >= 0.95 ? 10 : 0, "median amount >= 0.95 x threshold");
            fb_comp(&b, best.i ? 0 : 5, "no currency transaction report was triggered");
            char locs[64] = "";
            if (best.locs > 1)
                snprintf(locs, sizeof locs, " at %d different locations", best.locs);
            fb_explain(&b,
                       "Between %s and %s the customer made %lld cash %s of %s-%s (total %s)%s; each was below "
                       "the %s reporting threshold%s.",
                       day(first->at).s, day(last->at).s, (long long)best.nidx, dirw, usd(lo).s, usd(hi).s,
                       usd(best.sum).s, locs, usd(ctr).s,
                       best.i ? "" : " and no daily total triggered a currency transaction report");
        } else {
            fb_comp(&b, 50, "%lld same-day cash %s each below %s totalling more than it", (long long)best.nidx, dirw,
                    usd(ctr).s);
            fb_comp(&b, best.locs >= 2 ? 10 : 0, "%d different locations on the same day", best.locs);
            fb_comp(&b, (int)fmin(15, 5 * (double)((int64_t)best.nidx - SD)), "%lld transactions beyond the minimum",
                    (long long)((int64_t)best.nidx - SD));
            fb_explain(&b,
                       "On %s the customer made %lld cash %s of %s-%s, together %s, each below the %s threshold "
                       "(%d %s).",
                       day(first->at).s, (long long)best.nidx, dirw, usd(lo).s, usd(hi).s, usd(best.sum).s, usd(ctr).s,
                       best.locs, plural(best.locs, "location", "locations"));
        }
        /* The component list decides the score; keep it equal to the one compared above. */
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_int(&b, "maxNearThresholdInWindow", max_near_count);
        fb_explain(&b,
                   "No structuring pattern on %s: at most %lld cash transactions in [%s, %s) within any %lld-day "
                   "window (%lld needed), and no business day with cash split below %s adding up to more than it.",
                   v->id, (long long)max_near_count, usd(band).s, usd(ctr).s, (long long)(W / AML_DAY), (long long)N,
                   usd(ctr).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(near);
    free(pick);
    free(rows);
}

/* T02: funnel account / multi-depositor cash. */
static void t02(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T02, v->acct);
    int64_t ctr = PI(e, AML_T02, P02_CTR), W = PI(e, AML_T02, P02_WINDOW) * AML_DAY;
    int64_t K = PI(e, AML_T02, P02_MIN_DEPOSITS), D = PI(e, AML_T02, P02_MIN_CONDUCTORS);
    int64_t L = PI(e, AML_T02, P02_MIN_OOR_LOCATIONS), H = PI(e, AML_T02, P02_OUT_HOURS);
    double R = P(e, AML_T02, P02_MIN_OUT_RATIO);

    /* Sub-threshold cash deposits in the window. */
    size_t nd = 0;
    cash_row *dep = malloc((v->ncash ? v->ncash : 1) * sizeof *dep);
    int any_detail = 0;
    for (size_t i = 0; dep && i < v->ncash; i++) {
        const cash_row *c = &v->cash[i];
        if (c->dir == DIR_IN && c->at >= e->from && c->usd < ctr) {
            dep[nd++] = *c;
            any_detail |= c->conductor || c->location;
        }
    }
    fb_str(&b, "account", v->id);
    fb_int(&b, "subThresholdCashDeposits", (int64_t)nd);
    if (!dep || nd < (size_t)K) {
        fb_explain(&b, "%s received %lld sub-threshold cash %s in the window (%lld needed for a funnel pattern).",
                   v->id, (long long)nd, plural((int64_t)nd, "deposit", "deposits"), (long long)K);
        fb_finish(&b, AML_NOT_MATCHED);
        free(dep);
        return;
    }
    const etx *tx = v->tx;
    struct {
        int ok, score, conductors, oor;
        size_t i, j;
        int64_t in, outsum;
        double ratio, lag_med;
    } best = {0};
    int partial_ok = 0; /* count and out-flow met; conductor/location facts unknown */
    double best_ratio_seen = 0;
    size_t j = 0;
    for (size_t i = 0; i < nd; i++) {
        if (j < i)
            j = i;
        while (j < nd && dep[j].at - dep[i].at <= W)
            j++;
        if ((int64_t)(j - i) < K)
            continue;
        int64_t in = 0;
        int conductors = 0, oor = 0;
        for (size_t k = i; k < j; k++) {
            in += dep[k].usd;
            int seen_c = 0, seen_l = 0;
            for (size_t q = i; q < k; q++) {
                seen_c |= dep[q].conductor == dep[k].conductor;
                seen_l |= dep[q].location == dep[k].location;
            }
            conductors += !seen_c && dep[k].conductor;
            if (!seen_l && dep[k].location && dep[k].region && v->home_region && dep[k].region != v->home_region)
                oor++;
        }
        /* Out-flows within H hours after any of the deposits, each counted once. */
        int64_t outsum = 0;
        int64_t lags[256];
        size_t nl = 0;
        size_t t0 = lower_at(tx, v->ntx, dep[i].at);
        for (size_t t = t0; t < v->ntx && tx[t].at <= dep[j - 1].at + H * AML_HOUR; t++) {
            if (tx[t].dir != DIR_OUT)
                continue;
            int64_t lag = -1;
            for (size_t k = i; k < j; k++)
                if (within(e, dep[k].at, tx[t].at, H))
                    lag = tx[t].at - dep[k].at;
            if (lag >= 0) {
                outsum += tx[t].usd;
                if (nl < 256)
                    lags[nl++] = lag;
            }
        }
        double ratio = in ? (double)outsum / (double)in : 0;
        if (ratio > best_ratio_seen)
            best_ratio_seen = ratio;
        int people = conductors >= D || oor >= L;
        if (ratio >= R && !people && !any_detail)
            partial_ok = 1;
        if (ratio < R || !people)
            continue;
        double lag_med = median_i64(lags, nl) / 3600.0;
        int score = 50 + (int)fmin(15, 5 * (double)(conductors > D ? conductors - D : 0)) +
                    (int)fmin(15, 5 * (double)(oor > L ? oor - L : 0)) + (ratio >= 0.95 ? 10 : 0) + (lag_med <= 24 ? 5 : 0);
        if (!best.ok || score > best.score || (score == best.score && in > best.in)) {
            best.ok = 1;
            best.score = score;
            best.i = i;
            best.j = j;
            best.in = in;
            best.outsum = outsum;
            best.ratio = ratio;
            best.conductors = conductors;
            best.oor = oor;
            best.lag_med = lag_med;
        }
    }
    if (best.ok) {
        for (size_t k = best.i; k < best.j; k++)
            fb_ev_cash(&b, &dep[k], AML_ROLE_TRIGGER);
        size_t t0 = lower_at(tx, v->ntx, dep[best.i].at);
        for (size_t t = t0; t < v->ntx && tx[t].at <= dep[best.j - 1].at + H * AML_HOUR; t++) {
            if (tx[t].dir != DIR_OUT)
                continue;
            for (size_t k = best.i; k < best.j; k++)
                if (within(e, dep[k].at, tx[t].at, H)) {
                    fb_ev(&b, &tx[t], AML_ROLE_TRIGGER);
                    break;
                }
        }
        int64_t n = (int64_t)(best.j - best.i);
        fb_int(&b, "deposits", n);
        fb_int(&b, "depositedMinor", best.in);
        fb_int(&b, "outflowMinor", best.outsum);
        fb_dbl(&b, "outflowRatio", best.ratio);
        fb_int(&b, "distinctConductors", best.conductors);
        fb_int(&b, "outOfRegionLocations", best.oor);
        fb_dbl(&b, "medianHoursToOutflow", best.lag_med);
        fb_str(&b, "homeRegion", interned(&e->strs, v->home_region));
        fb_comp(&b, 50, "%lld sub-threshold cash deposits by several people or away from home, %.0f%% moved out within %lld h",
                (long long)n, best.ratio * 100, (long long)H);
        fb_comp(&b, (int)fmin(15, 5 * (double)(best.conductors > D ? best.conductors - D : 0)), "%d distinct depositors",
                best.conductors);
        fb_comp(&b, (int)fmin(15, 5 * (double)(best.oor > L ? best.oor - L : 0)), "%d out-of-region locations", best.oor);
        fb_comp(&b, best.ratio >= 0.95 ? 10 : 0, "95%% or more of the deposits moved out");
        fb_comp(&b, best.lag_med <= 24 ? 5 : 0, "median time to out-flow within 24 h");
        fb_explain(&b,
                   "Between %s and %s, %lld cash deposits below %s (total %s) were made into %s by %d different "
                   "depositors at %d locations outside the account's home region; %s (%.0f%%) left the account within "
                   "%lld hours of the deposits.",
                   day(dep[best.i].at).s, day(dep[best.j - 1].at).s, (long long)n, usd(ctr).s, usd(best.in).s, v->id,
                   best.conductors, best.oor, usd(best.outsum).s, best.ratio * 100, (long long)H);
        fb_finish(&b, AML_MATCHED);
    } else if (partial_ok) {
        fb_missing(&b, "transactions.conductor_id", "transactions.location_id");
        fb_explain(&b,
                   "%s received enough sub-threshold cash deposits that quickly left the account, but the deposits "
                   "carry no depositor or location, so a funnel pattern can be neither confirmed nor ruled out.",
                   v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
    } else {
        fb_dbl(&b, "bestOutflowRatio", best_ratio_seen);
        fb_explain(&b,
                   "No funnel pattern on %s: its sub-threshold cash deposits did not come from %lld or more "
                   "depositors or %lld out-of-region locations with %.0f%% moved out within %lld hours.",
                   v->id, (long long)D, (long long)L, R * 100, (long long)H);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(dep);
}

/* Sliding-window distinct counts: for anchor i, items [i, end[i]) fall within W of it. */
typedef struct slide {
    size_t *end;
    int64_t *distinct;
    int64_t *sum;
} slide;

static int slide_run(const int64_t *at, const int64_t *key, const int64_t *amt, size_t n, int64_t W, slide *s)
{
    s->end = malloc((n ? n : 1) * sizeof *s->end);
    s->distinct = malloc((n ? n : 1) * sizeof *s->distinct);
    s->sum = malloc((n ? n : 1) * sizeof *s->sum);
    imap m;
    if (!s->end || !s->distinct || !s->sum || imap_init(&m, n + 1))
        return -1;
    size_t j = 0;
    int64_t distinct = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        while (j < n && at[j] - at[i] <= W) {
            int64_t *c = imap_slot(&m, key[j]);
            if (!c) {
                imap_free(&m);
                return -1;
            }
            if ((*c)++ == 0)
                distinct++;
            sum += amt[j];
            j++;
        }
        s->end[i] = j;
        s->distinct[i] = distinct;
        s->sum[i] = sum;
        int64_t *c = imap_slot(&m, key[i]);
        if (c && --(*c) == 0)
            distinct--;
        sum -= amt[i];
    }
    imap_free(&m);
    return 0;
}

static void slide_free(slide *s)
{
    free(s->end);
    free(s->distinct);
    free(s->sum);
}

/* T03 / T04: fan-in and fan-out, mirror images. */
static void fan(eng *e, const acct_view *v, int typ, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, typ, v->acct);
    int dir = typ == AML_T03 ? DIR_IN : DIR_OUT;
    int64_t W = PI(e, typ, P03_WINDOW) * AML_DAY, N = PI(e, typ, P03_MIN_PARTIES);
    int64_t minTotal = PI(e, typ, P03_MIN_TOTAL), look = PI(e, typ, P03_NEW_LOOKBACK) * AML_DAY;
    int64_t minxfer = PI(e, typ, P03_MIN_TRANSFER);
    const char *party = dir == DIR_IN ? "senders" : "beneficiaries";
    size_t n = 0;
    size_t cnt = v->w1 - v->w0;
    size_t *idx = malloc((cnt ? cnt : 1) * sizeof *idx);
    int64_t *at = calloc(cnt ? cnt : 1, sizeof *at), *key = calloc(cnt ? cnt : 1, sizeof *key),
            *amt = calloc(cnt ? cnt : 1, sizeof *amt);
    slide sl = {0};
    if (!idx || !at || !key || !amt)
        goto done;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != dir || !t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < minxfer ||
            is_sibling(v, t->cp))
            continue; /* card purchases are payments for goods, not account-to-account transfers */
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - look)
            continue; /* a known counterparty */
        idx[n] = i;
        at[n] = t->at;
        key[n] = t->cp;
        amt[n] = t->usd;
        n++;
    }
    if (slide_run(at, key, amt, n, W, &sl))
        goto done;
    size_t bi = SIZE_MAX;
    int64_t maxd = 0;
    for (size_t i = 0; i < n; i++) {
        if (sl.distinct[i] > maxd)
            maxd = sl.distinct[i];
        if (sl.distinct[i] >= N && sl.sum[i] >= minTotal &&
            (bi == SIZE_MAX || sl.distinct[i] > sl.distinct[bi] ||
             (sl.distinct[i] == sl.distinct[bi] && sl.sum[i] > sl.sum[bi])))
            bi = i;
    }
    fb_str(&b, "account", v->id);
    if (bi == SIZE_MAX) {
        fb_int(&b, "maxNewCounterpartiesInWindow", maxd);
        fb_explain(&b,
                   "No %s on %s: at most %lld new %s within any %lld-day window (%lld needed, with at least %s in "
                   "total).",
                   dir == DIR_IN ? "fan-in" : "fan-out", v->id, (long long)maxd, party, (long long)(W / AML_DAY),
                   (long long)N, usd(minTotal).s);
        fb_finish(&b, AML_NOT_MATCHED);
        goto done;
    }
    {
        size_t end = sl.end[bi];
        int64_t total = sl.sum[bi], parties = sl.distinct[bi];
        int64_t first = at[bi], last = at[end - 1];
        for (size_t k = bi; k < end; k++)
            fb_ev(&b, &v->tx[idx[k]], AML_ROLE_TRIGGER);
        double cv = cv_of(amt + bi, end - bi);
        /* Distinct banks of the counterparties. */
        int banks = 0;
        char bank_seen[8][32];
        for (size_t k = bi; k < end && banks < 8; k++) {
            sqlite3_stmt *st = aml_stmt(e->s, "SELECT bank_id FROM accounts WHERE acct_no = ?");
            if (!st)
                break;
            aml_bind_int(st, 1, key[k]);
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
                const char *bk = aml_col_text(st, 0);
                int seen = 0;
                for (int q = 0; q < banks; q++)
                    seen |= strcmp(bank_seen[q], bk) == 0;
                if (!seen)
                    snprintf(bank_seen[banks++], sizeof bank_seen[0], "%s", bk);
            }
            sqlite3_reset(st);
        }
        /* Fan-in: forwarded afterwards; fan-out: funded shortly before. */
        int64_t D = PI(e, typ, P03_FORWARD_DAYS) * AML_DAY, flow = 0;
        double need = P(e, typ, P03_FORWARD_RATIO);
        if (dir == DIR_IN) {
            for (size_t t = lower_at(v->tx, v->ntx, first); t < v->ntx && v->tx[t].at <= last + D; t++)
                if (v->tx[t].dir == DIR_OUT && later(e, first, v->tx[t].at)) {
                    flow += v->tx[t].usd;
                    fb_ev(&b, &v->tx[t], AML_ROLE_CONTEXT);
                }
        } else {
            for (size_t t = lower_at(v->tx, v->ntx, first - D); t < v->ntx && v->tx[t].at <= first; t++)
                if (v->tx[t].dir == DIR_IN) {
                    flow += v->tx[t].usd;
                    fb_ev(&b, &v->tx[t], AML_ROLE_CONTEXT);
                }
        }
        int flowed = (double)flow >= need * (double)total;
        fb_int(&b, dir == DIR_IN ? "distinctOriginators" : "distinctBeneficiaries", parties);
        fb_int(&b, "totalMinor", total);
        fb_int(&b, "transactions", (int64_t)(end - bi));
        fb_dbl(&b, "amountCv", cv);
        fb_int(&b, "distinctBanks", banks);
        fb_int(&b, dir == DIR_IN ? "forwardedMinor" : "fundedByRecentInflowsMinor", flow);
        fb_date(&b, "from", first);
        fb_date(&b, "to", last);
        fb_comp(&b, 50, "%lld new %s within %lld days, total %s", (long long)parties, party, (long long)(W / AML_DAY),
                usd(total).s);
        fb_comp(&b, (int)fmin(20, 2 * (double)(parties - N)), "%lld %s beyond the minimum", (long long)(parties - N),
                party);
        fb_comp(&b, cv <= P(e, typ, P03_SIMILAR_CV) ? 10 : 0, "similar amounts (coefficient of variation %.2f)", cv);
        fb_comp(&b, banks >= 2 ? 5 : 0, "%d different banks", banks);
        fb_comp(&b, flowed ? 10 : 0, dir == DIR_IN ? "inflow forwarded within %lld days" : "funded by inflows within %lld days",
                (long long)(D / AML_DAY));
        if (dir == DIR_IN)
            fb_explain(&b,
                       "Between %s and %s, %s received %lld payments totalling %s from %lld different accounts that "
                       "had no prior relationship with it%s.",
                       day(first).s, day(last).s, v->id, (long long)(end - bi), usd(total).s, (long long)parties,
                       flowed ? "; most of the money was sent on within days" : "");
        else
            fb_explain(&b,
                       "Between %s and %s, %s sent %lld payments totalling %s to %lld different accounts it had not "
                       "paid before%s.",
                       day(first).s, day(last).s, v->id, (long long)(end - bi), usd(total).s, (long long)parties,
                       flowed ? "; the money had arrived in the account only days earlier" : "");
        fb_finish(&b, AML_MATCHED);
    }
done:
    if (!out->metrics_json) { /* out of memory before a result was built */
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
    }
    slide_free(&sl);
    free(idx);
    free(at);
    free(key);
    free(amt);
}

/* T05: rapid movement of funds. Each debit is attributed to the open credits
 * that precede it within exitHours, newest first (what just came in is what
 * passes through), each credit absorbing at most ratioHigh times its amount. */
static void t05(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T05, v->acct);
    int64_t minc = PI(e, AML_T05, P05_MIN_CREDIT), H = PI(e, AML_T05, P05_EXIT_HOURS);
    int64_t W = PI(e, AML_T05, P05_WINDOW) * AML_DAY, minm = PI(e, AML_T05, P05_MIN_MATCHED);
    double lo = P(e, AML_T05, P05_RATIO_LOW), hi = P(e, AML_T05, P05_RATIO_HIGH);
    double maxbal = P(e, AML_T05, P05_MAX_BALANCE_CHANGE);
    size_t cnt = v->w1 - v->w0;
    size_t *cred = malloc((cnt ? cnt : 1) * sizeof *cred), *stack = malloc((cnt ? cnt : 1) * sizeof *stack);
    int64_t *exitv = calloc(cnt ? cnt : 1, sizeof *exitv), *lag = malloc((cnt ? cnt : 1) * sizeof *lag);
    int64_t *pair_c = malloc((cnt ? cnt : 1) * sizeof *pair_c), *pair_d = malloc((cnt ? cnt : 1) * sizeof *pair_d);
    int64_t *pin = malloc((cnt + 1) * sizeof *pin), *pout = malloc((cnt + 1) * sizeof *pout);
    int64_t *pmc = malloc((cnt + 1) * sizeof *pmc), *pex = malloc((cnt + 1) * sizeof *pex);
    size_t nc = 0, npairs = 0, lo_i = 0, top = 0;
    fb_str(&b, "account", v->id);
    if (!cred || !stack || !exitv || !lag || !pair_c || !pair_d || !pin || !pout || !pmc || !pex)
        goto oom;
    pin[0] = pout[0] = 0;
    /*
     * Open credits live on a stack, newest on top: a debit takes from the top
     * down (what just came in is what passes through), exhausted credits are
     * popped, and the walk stops at the first credit older than exitHours
     * (everything below it is older still). Each credit is pushed and popped
     * once, so the whole pass is linear.
     */
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        size_t k = i - v->w0;
        pin[k + 1] = pin[k] + (t->dir == DIR_IN ? t->usd : 0);
        pout[k + 1] = pout[k] + (t->dir == DIR_OUT ? t->usd : 0);
        if (t->dir == DIR_IN) {
            if (t->usd >= minc) {
                lag[nc] = -1;
                cred[nc] = i;
                stack[top++] = nc;
                nc++;
            }
            continue;
        }
        if (t->cp && v->known[i])
            continue; /* paying a long-standing payee (rent, payroll) is not moving funds on */
        int64_t rem = t->usd;
        size_t sp = top;
        while (sp > lo_i && rem > 0) {
            size_t c = stack[sp - 1];
            const etx *ct = &v->tx[cred[c]];
            if (!later(e, ct->at, t->at) || ct->at == t->at) {
                sp--; /* booked with the debit: not before it */
                continue;
            }
            if (!within(e, ct->at, t->at, H))
                break; /* too old, and so is everything below */
            int64_t capv = (int64_t)((double)ct->usd * hi) - exitv[c];
            if (capv > 0) {
                int64_t take = rem < capv ? rem : capv;
                exitv[c] += take;
                rem -= take;
                if (lag[c] < 0)
                    lag[c] = t->at - ct->at;
                if (npairs < cnt) {
                    pair_c[npairs] = (int64_t)c;
                    pair_d[npairs++] = (int64_t)i;
                }
                capv -= take;
            }
            if (capv <= 0 && sp == top) {
                top--; /* exhausted, on top: gone for good */
                sp = top;
            } else {
                sp--;
            }
        }
        /* Drop credits that have expired at the bottom. */
        while (lo_i < top && !within(e, v->tx[cred[stack[lo_i]]].at, t->at, H) &&
               v->tx[cred[stack[lo_i]]].at < t->at)
            lo_i++;
    }
    {
        /* A credit passed through when at least ratioLow of it left within exitHours. */
#define PASSED(z) (exitv[z] > 0 && (double)exitv[z] >= lo * (double)v->tx[cred[z]].usd)
        pmc[0] = pex[0] = 0;
        for (size_t z = 0; z < nc; z++) {
            int p = PASSED(z);
            pmc[z + 1] = pmc[z] + (p ? v->tx[cred[z]].usd : 0);
            pex[z + 1] = pex[z] + (p ? exitv[z] : 0);
        }
        /* Windows anchored at each passed credit, summed with prefix sums. */
        size_t best = SIZE_MAX, best_end = 0, z = 0;
        int64_t best_mc = 0, best_ex = 0, best_net = 0, seen_mc = 0;
        double seen_ratio = 0;
        for (size_t a = 0; a < nc; a++) {
            int64_t t0 = v->tx[cred[a]].at;
            if (z < a)
                z = a;
            while (z < nc && v->tx[cred[z]].at - t0 <= W)
                z++;
            if (!PASSED(a))
                continue;
            int64_t mc = pmc[z] - pmc[a], ex = pex[z] - pex[a];
            size_t k0 = cred[a] - v->w0, k1 = lower_at(v->tx, v->ntx, t0 + W + 1) - v->w0;
            int64_t net = (pin[k1] - pin[k0]) - (pout[k1] - pout[k0]);
            double ratio = mc ? (double)ex / (double)mc : 0;
            if (mc > seen_mc) {
                seen_mc = mc;
                seen_ratio = ratio;
            }
            /* "Little balance left" is judged on the matched flows: unrelated credits in the
             * same window (a salary) would otherwise block the rule. The account's net change
             * over the window is reported as a metric. */
            if (mc >= minm && ratio >= lo && ratio <= hi && (double)llabs(mc - ex) <= maxbal * (double)mc &&
                mc > best_mc) {
                best = a;
                best_end = z;
                best_mc = mc;
                best_ex = ex;
                best_net = net;
            }
        }
        if (best == SIZE_MAX) {
            fb_int(&b, "largestMatchedCreditsMinor", seen_mc);
            fb_dbl(&b, "debitToCreditRatio", seen_ratio);
            fb_explain(&b,
                       "No pass-through on %s: credits of %s or more followed by debits within %lld hours reached "
                       "at most %s in a %lld-day window (%s needed, with %.0f-%.0f%% leaving and little balance "
                       "left).",
                       v->id, usd(minc).s, (long long)H, usd(seen_mc).s, (long long)(W / AML_DAY), usd(minm).s,
                       lo * 100, hi * 100);
            fb_finish(&b, AML_NOT_MATCHED);
        } else {
            int64_t lags[512];
            size_t nl = 0, ncred = 0;
            for (size_t q = best; q < best_end; q++) {
                if (!PASSED(q))
                    continue;
                ncred++;
                fb_ev(&b, &v->tx[cred[q]], AML_ROLE_TRIGGER);
                if (nl < 512)
                    lags[nl++] = lag[q];
            }
            for (size_t p = 0; p < npairs; p++)
                if ((size_t)pair_c[p] >= best && (size_t)pair_c[p] < best_end && PASSED(pair_c[p]))
                    fb_ev(&b, &v->tx[pair_d[p]], AML_ROLE_TRIGGER);
            double med = median_i64(lags, nl) / 3600.0;
            double ratio = (double)best_ex / (double)best_mc;
            fb_int(&b, "matchedCreditsMinor", best_mc);
            fb_int(&b, "exitDebitsMinor", best_ex);
            fb_dbl(&b, "debitToCreditRatio", ratio);
            fb_int(&b, "accountNetChangeMinor", best_net);
            fb_int(&b, "retainedMinor", best_mc - best_ex);
            fb_int(&b, "matchedCredits", (int64_t)ncred);
            fb_dbl(&b, "medianHoursToExit", med);
            fb_comp(&b, 50, "%s credited and %.0f%% debited within %lld h", usd(best_mc).s, ratio * 100, (long long)H);
            fb_comp(&b, med <= 24 ? 10 : 0, "median exit within 24 h (%.1f h)", med);
            fb_comp(&b, ratio >= 0.9 && ratio <= 1.05 ? 10 : 0, "90-105%% of the credits passed through");
            fb_comp(&b, (int)fmin(15, 3 * (double)(ncred > 2 ? ncred - 2 : 0)), "%zu matched credits", ncred);
            fb_comp(&b, best_mc >= 5 * minm ? 10 : 0, "at least 5 x the minimum amount");
            fb_explain(&b,
                       "Between %s and %s, %zu credits totalling %s reached %s and %s (%.0f%%) left again within %lld "
                       "hours (median %.1f hours); %s of it stayed in the account.",
                       day(v->tx[cred[best]].at).s, day(v->tx[cred[best_end - 1]].at).s, ncred, usd(best_mc).s, v->id,
                       usd(best_ex).s, ratio * 100, (long long)H, med, usd(best_mc - best_ex).s);
            fb_finish(&b, AML_MATCHED);
        }
    }
#undef PASSED
    goto done;
oom:
    fb_explain(&b, "not evaluated: out of memory");
    fb_finish(&b, AML_NOT_EVALUABLE);
done:
    free(cred);
    free(stack);
    free(exitv);
    free(lag);
    free(pair_c);
    free(pair_d);
    free(pin);
    free(pout);
    free(pmc);
    free(pex);
}

static int occupation_vulnerable(const char *occ)
{
    static const char *const words[] = {"student", "unemployed", "retired", NULL};
    char low[64];
    size_t i = 0;
    for (; occ[i] && i < sizeof low - 1; i++)
        low[i] = (char)((occ[i] >= 'A' && occ[i] <= 'Z') ? occ[i] + 32 : occ[i]);
    low[i] = '\0';
    for (int k = 0; words[k]; k++)
        if (strstr(low, words[k]))
            return 1;
    return 0;
}

/* T06: money mule. Inflow groups (inflows with no out-flow between them) and
 * the out-flows that follow within exitHours, before the next inflow. */
static void t06(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T06, v->acct);
    fb_str(&b, "account", v->id);
    if (!v->has_opened) {
        fb_missing(&b, "accounts.opened_at", NULL);
        fb_explain(&b, "The opening date of %s is not recorded, so the money-mule test (a new account) cannot run.",
                   v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    int64_t maxage = PI(e, AML_T06, P06_MAX_AGE) * AML_DAY, H = PI(e, AML_T06, P06_EXIT_HOURS);
    double lo = P(e, AML_T06, P06_FWD_LOW), hi = P(e, AML_T06, P06_FWD_HIGH);
    int64_t minin = PI(e, AML_T06, P06_MIN_INFLOW), mint = PI(e, AML_T06, P06_MIN_TOTAL);
    int64_t total = 0, groups = 0, first_at = 0;
    int orig = 0, foreign_or_cash = 0;
    int64_t origs[64];
    size_t norig = 0;
    int64_t seen_groups = 0;
    double best_ratio = 0;
    size_t i = v->w0;
    while (i < v->w1) {
        const etx *t = &v->tx[i];
        if (!(t->dir == DIR_IN && t->ch != CH_CASH && t->cp && t->usd >= minin)) {
            i++;
            continue;
        }
        /* A group: qualifying inflows until the first out-flow. */
        size_t g0 = i, g1 = i;
        int64_t in = 0, last_in = t->at;
        while (g1 < v->w1 && v->tx[g1].dir == DIR_IN) {
            const etx *u = &v->tx[g1];
            if (u->ch != CH_CASH && u->cp && u->usd >= minin) {
                in += u->usd;
                last_in = u->at;
            }
            g1++;
        }
        int64_t outsum = 0;
        size_t o = g1;
        for (; o < v->w1; o++) {
            const etx *u = &v->tx[o];
            if (u->dir == DIR_IN && u->ch != CH_CASH && u->cp && u->usd >= minin)
                break;
            if (u->dir == DIR_OUT && within(e, last_in, u->at, H))
                outsum += u->usd;
            if (u->at > last_in + H * AML_HOUR + (e->daygran ? AML_DAY : 0))
                break;
        }
        double ratio = in ? (double)outsum / (double)in : 0;
        seen_groups++;
        if (fabs(ratio - 0.9) < fabs(best_ratio - 0.9))
            best_ratio = ratio;
        int age_ok = groups > 0 || v->tx[g0].at - v->opened_at <= maxage;
        if (ratio >= lo && ratio <= hi && age_ok) {
            if (!groups)
                first_at = v->tx[g0].at;
            groups++;
            total += in;
            for (size_t k = g0; k < o; k++) {
                const etx *u = &v->tx[k];
                if (u->dir == DIR_IN && !(u->ch != CH_CASH && u->cp && u->usd >= minin))
                    continue;
                if (u->dir == DIR_OUT && !within(e, last_in, u->at, H))
                    continue;
                fb_ev(&b, u, AML_ROLE_TRIGGER);
                if (u->dir == DIR_IN && !is_sibling(v, u->cp)) {
                    int seen = 0;
                    for (size_t q = 0; q < norig; q++)
                        seen |= origs[q] == u->cp;
                    if (!seen && norig < 64)
                        origs[norig++] = u->cp;
                }
                if (u->dir == DIR_OUT && u->ch == CH_CASH)
                    foreign_or_cash = 1;
                if (u->dir == DIR_OUT && u->ch != CH_CASH && u->cp && !foreign_or_cash) {
                    sqlite3_stmt *st = aml_stmt(e->s, "SELECT country, is_internal FROM accounts WHERE acct_no = ?");
                    if (st) {
                        aml_bind_int(st, 1, u->cp);
                        if (sqlite3_step(st) == SQLITE_ROW) {
                            const char *c = aml_col_text(st, 0);
                            if (c[0] && v->country[0] && strcmp(c, v->country) != 0)
                                foreign_or_cash = 1;
                        }
                        sqlite3_reset(st);
                    }
                }
            }
        }
        i = o > g1 ? o : g1;
    }
    orig = (int)norig;
    int64_t age_days = first_at ? (first_at - v->opened_at) / AML_DAY : 0;
    fb_date(&b, "openedAt", v->opened_at);
    if (groups && total >= mint) {
        int small_open = v->has_opening_deposit && v->opening_deposit <= 10000;
        int vuln = occupation_vulnerable(v->occupation);
        fb_int(&b, "accountAgeDaysAtFirstMatch", age_days);
        fb_int(&b, "matchedGroups", groups);
        fb_int(&b, "matchedInflowMinor", total);
        fb_int(&b, "distinctOriginators", orig);
        if (v->has_opening_deposit)
            fb_int(&b, "openingDepositMinor", v->opening_deposit);
        fb_comp(&b, 50, "account %lld days old; %lld inflow %s forwarded %.0f-%.0f%% within %lld h", (long long)age_days,
                (long long)groups, plural(groups, "group", "groups"), lo * 100, hi * 100, (long long)H);
        fb_comp(&b, small_open ? 10 : 0, "opened with a deposit of at most $100.00");
        fb_comp(&b, orig >= 3 ? 10 : 0, "%d unrelated originators", orig);
        fb_comp(&b, foreign_or_cash ? 10 : 0, "funds left in cash or to a foreign account");
        fb_comp(&b, vuln ? 10 : 0, "occupation commonly recruited as a mule (%s)", v->occupation);
        fb_comp(&b, (int)fmin(15, 5 * (double)(groups - 1)), "%lld further groups", (long long)(groups - 1));
        fb_explain(&b,
                   "%s was opened on %s; %lld days later it began receiving transfers (%s in %lld %s), and each time "
                   "%.0f-%.0f%% of the amount was sent on within %lld hours, the rest staying in the account.",
                   v->id, day(v->opened_at).s, (long long)age_days, usd(total).s, (long long)groups,
                   plural(groups, "batch", "batches"), lo * 100, hi * 100, (long long)H);
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_int(&b, "inflowGroups", seen_groups);
        fb_dbl(&b, "closestForwardRatio", best_ratio);
        fb_explain(&b,
                   "No money-mule pattern on %s (opened %s): no inflow of %s or more was followed within %lld hours by "
                   "out-flows of %.0f-%.0f%% of it while the account was under %lld days old, for %s in total.",
                   v->id, day(v->opened_at).s, usd(minin).s, (long long)H, lo * 100, hi * 100,
                   (long long)(maxage / AML_DAY), usd(mint).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* T07: temporal cycles back to the focus account, bounded depth-first search. */
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
    gnode *g = neighbour(c->e, node, DIR_OUT, c->maxexp, c->maxedges, &c->capped);
    if (!g)
        return;
    size_t nout = g->nout;
    etx *outs = g->out; /* stable: only this node's array, not the node table */
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
        g = neighbour(c->e, node, DIR_OUT, c->maxexp, c->maxedges, &c->capped);
        if (!g)
            return;
        outs = g->out;
        nout = g->nout;
    }
}

static void t07(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T07, v->acct);
    cycsearch *c = calloc(1, sizeof *c);
    fb_str(&b, "account", v->id);
    if (!c) {
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
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
        double minhop = 1e9;
        for (int k = 1; k < c->best_len; k++)
            minhop = fmin(minhop, (double)c->best[k].usd / (double)c->best[k - 1].usd);
        int64_t span = c->best[c->best_len - 1].at - c->best[0].at;
        for (int k = 0; k < c->best_len; k++)
            fb_ev(&b, &c->best[k], AML_ROLE_TRIGGER);
        for (int k = 0; k < c->nctx; k++)
            fb_ev(&b, &c->ctx[k], AML_ROLE_CONTEXT);
        fb_int(&b, "hops", c->best_len);
        fb_int(&b, "cyclesFound", c->ncycles);
        fb_dbl(&b, "retention", c->best_ret);
        fb_dbl(&b, "minHopRetention", minhop);
        fb_dbl(&b, "spanDays", (double)span / AML_DAY);
        mcp_jw_key(&b.mw, "path");
        mcp_jw_array_begin(&b.mw);
        char id[128];
        aml_account_id(e->s, v->acct, id, sizeof id);
        mcp_jw_string(&b.mw, id);
        for (int k = 0; k < c->best_len; k++) {
            aml_account_id(e->s, c->best[k].cp, id, sizeof id);
            mcp_jw_string(&b.mw, id);
        }
        mcp_jw_array_end(&b.mw);
        fb_comp(&b, 50, "a %d-hop cycle returning %.0f%% of the amount within %lld days", c->best_len,
                c->best_ret * 100, (long long)(c->W / AML_DAY));
        fb_comp(&b, c->best_len >= 3 ? 10 : 0, "3 or more hops");
        fb_comp(&b, minhop >= 0.85 ? 10 : 0, "each hop kept at least 85%%");
        fb_comp(&b, span <= 10 * AML_DAY ? 10 : 0, "closed within 10 days");
        fb_comp(&b, (int)fmin(15, 5 * (double)(c->ncycles - 1)), "%d further cycles", c->ncycles - 1);
        fb_explain(&b,
                   "On %s, %s sent %s that passed through %d other %s and came back to it as %s on %s (%.0f%% of the "
                   "original amount, %.1f days later).",
                   day(c->best[0].at).s, v->id, usd(c->best[0].usd).s, c->best_len - 1,
                   plural(c->best_len - 1, "account", "accounts"), usd(c->best[c->best_len - 1].usd).s,
                   day(c->best[c->best_len - 1].at).s, c->best_ret * 100, (double)span / AML_DAY);
        fb_finish(&b, AML_MATCHED);
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

/* T08 helpers: the focus account's transfer counterparties, grouped. */
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

static size_t parties_of(const acct_view *v, int dir, int64_t minedge, int64_t look, party **out);

/* The focus account's parties per direction, computed once per account (T08 asks several times). */
static size_t parties_cached(eng *e, const acct_view *v, int dir, int64_t minedge, int64_t look, party **out)
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
        e->pc_n[dir] = parties_of(v, dir, minedge, look, &e->pc[dir]);
        e->pc_have[dir] = 1;
    }
    *out = e->pc[dir];
    return e->pc_n[dir];
}

static size_t parties_of(const acct_view *v, int dir, int64_t minedge, int64_t look, party **out)
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
            /* Layers are built from new relationships: skip a counterparty already dealt with. */
            if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - look) {
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

typedef struct rec {
    int64_t key;  /* the far account (sink, source, beneficiary ...) */
    int64_t mid;  /* the intermediary's index in the party list */
    int64_t sum;  /* what flowed between them */
} rec;

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->mid < y->mid ? -1 : x->mid > y->mid;
}

/* Sums rec entries with the same (key, mid) in place; returns the new count. */
static size_t rec_merge(rec *r, size_t n)
{
    aml_sort(r, n, sizeof *r, cmp_rec);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && r[k - 1].key == r[i].key && r[k - 1].mid == r[i].mid)
            r[k - 1].sum += r[i].sum;
        else
            r[k++] = r[i];
    }
    return k;
}

typedef struct t08res {
    int ok, score;
    const char *variant, *role;
    fbuild b;
    aml_finding f;
} t08res;

static int rec_push(rec **r, size_t *n, size_t *cap, rec x)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        rec *nr = realloc(*r, nc * sizeof *nr);
        if (!nr)
            return -1;
        *r = nr;
        *cap = nc;
    }
    (*r)[(*n)++] = x;
    return 0;
}

static void account_list(eng *e, mcp_jw *w, const char *key, const int64_t *accts, size_t n)
{
    mcp_jw_key(w, key);
    mcp_jw_array_begin(w);
    for (size_t i = 0; i < n && i < 50; i++) {
        char id[128];
        aml_account_id(e->s, accts[i], id, sizeof id);
        mcp_jw_string(w, id);
    }
    mcp_jw_array_end(w);
}

/* Scatter-gather with the focus account as source (dir OUT) or sink (dir IN). */
static void t08_sg(eng *e, const acct_view *v, int dir, t08res *r, int *capped)
{
    int64_t minedge = PI(e, AML_T08, P08_MIN_EDGE), H = PI(e, AML_T08, P08_FWD_HOURS);
    int64_t maxexp = PI(e, AML_T08, P08_MAX_EXPANSIONS), maxedges = PI(e, AML_T08, P08_MAX_EDGES);
    int64_t need = PI(e, AML_T08, P08_MIN_INTERMEDIATES);
    double ratio = P(e, AML_T08, P08_FWD_RATIO);
    party *ps;
    size_t np = parties_cached(e, v, dir, minedge, PI(e, AML_T08, P08_NEW_LOOKBACK) * AML_DAY, &ps);
    rec *rs = NULL;
    size_t nr = 0, cr = 0;
    for (size_t i = 0; i < np; i++) {
        gnode *g = neighbour(e, ps[i].acct, dir, maxexp, maxedges, capped);
        if (!g) {
            if (*capped)
                break;
            continue;
        }
        const etx *xs = dir == DIR_OUT ? g->out : g->in;
        size_t nx = dir == DIR_OUT ? g->nout : g->nin;
        for (size_t k = 0; k < nx; k++) {
            const etx *x = &xs[k];
            if (!x->cp || x->cp == v->acct || x->cp == ps[i].acct)
                continue;
            int ok = dir == DIR_OUT ? within(e, ps[i].first, x->at, H) || (x->at > ps[i].first && x->at <= ps[i].last + H * AML_HOUR)
                                    : within(e, x->at, ps[i].first, H);
            if (ok && rec_push(&rs, &nr, &cr, (rec){x->cp, (int64_t)i, x->usd}))
                break;
        }
    }
    nr = rec_merge(rs, nr);
    /* For each far account, the intermediaries that passed on enough. */
    size_t best0 = 0, best1 = 0;
    int64_t bestn = 0, bestsum = 0;
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        int64_t cnt = 0, sum = 0;
        for (; j < nr && rs[j].key == rs[i].key; j++) {
            const party *q = &ps[rs[j].mid];
            int ok = dir == DIR_OUT ? (double)rs[j].sum >= ratio * (double)q->sum
                                    : (double)q->sum >= ratio * (double)rs[j].sum;
            if (ok) {
                cnt++;
                sum += rs[j].sum;
            } else {
                rs[j].mid = -1 - rs[j].mid; /* mark as not passing */
            }
        }
        if (cnt > bestn || (cnt == bestn && sum > bestsum)) {
            bestn = cnt;
            bestsum = sum;
            best0 = i;
            best1 = j;
        }
        i = j;
    }
    r->variant = "scatter_gather";
    r->role = dir == DIR_OUT ? "source" : "sink";
    if (bestn >= need) {
        fbuild *b = &r->b;
        int64_t far = rs[best0].key;
        int64_t mids[64];
        size_t nm = 0;
        int64_t sent = 0, passed = 0, maxlag = 0;
        for (size_t j = best0; j < best1; j++) {
            if (rs[j].mid < 0)
                continue;
            const party *q = &ps[rs[j].mid];
            if (nm < 64)
                mids[nm++] = q->acct;
            sent += q->sum;
            passed += rs[j].sum;
            for (size_t t = v->w0; t < v->w1; t++)
                if (v->tx[t].cp == q->acct && v->tx[t].dir == dir && v->tx[t].usd >= minedge && v->tx[t].ch != CH_CASH)
                    fb_ev(b, &v->tx[t], AML_ROLE_TRIGGER);
            gnode *g = neighbour(e, q->acct, dir, maxexp, maxedges, capped);
            const etx *xs = g ? (dir == DIR_OUT ? g->out : g->in) : NULL;
            size_t nx = g ? (dir == DIR_OUT ? g->nout : g->nin) : 0;
            for (size_t k = 0; k < nx; k++) {
                const etx *x = &xs[k];
                int ok = dir == DIR_OUT ? within(e, q->first, x->at, H) || (x->at > q->first && x->at <= q->last + H * AML_HOUR)
                                        : within(e, x->at, q->first, H);
                if (x->cp == far && ok) {
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
        r->score = 50 + (int)fmin(15, 5 * (double)(bestn - need)) + (maxlag <= 48 * AML_HOUR ? 10 : 0) + (pr >= 0.9 ? 10 : 0);
        fb_comp(b, 50, "%lld intermediaries between %s and %s, each passing on %.0f%%+ within %lld h", (long long)bestn,
                dir == DIR_OUT ? v->id : farid, dir == DIR_OUT ? farid : v->id, ratio * 100, (long long)H);
        fb_comp(b, (int)fmin(15, 5 * (double)(bestn - need)), "%lld intermediaries beyond the minimum", (long long)(bestn - need));
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
    free(rs);
}

/* Gather-scatter with the focus account as the hub: an inbound run followed by an outbound run. */
static void t08_gs(eng *e, const acct_view *v, t08res *r)
{
    int64_t minedge = PI(e, AML_T08, P08_MIN_EDGE), W = PI(e, AML_T08, P08_WINDOW) * AML_DAY;
    int64_t need = PI(e, AML_T08, P08_MIN_BRANCHES);
    double ratio = P(e, AML_T08, P08_FWD_RATIO);
    size_t n = 0;
    size_t *q = malloc((v->w1 - v->w0 + 1) * sizeof *q);
    r->variant = "gather_scatter";
    r->role = "hub";
    if (!q)
        return;
    int64_t look = PI(e, AML_T08, P08_NEW_LOOKBACK) * AML_DAY;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (!t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < minedge || is_sibling(v, t->cp))
            continue;
        /* Known counterparties (regular payees and payers) are not part of a new structure; a
         * repeat within the pattern itself is (its previous contact lies inside the window). */
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] < e->from && v->prev_cp_at[i] >= t->at - look)
            continue;
        q[n++] = i;
    }
    size_t bi0 = 0, bi1 = 0, bo1 = 0;
    int64_t best = 0, bin = 0, bout = 0, borig = 0, bben = 0;
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
            while (o1 > in1 + 1 && v->tx[q[o1 - 1]].at - v->tx[q[in1]].at > W)
                o1--;
            size_t s = in0;
            while (s < in1 && v->tx[q[o1 - 1]].at - v->tx[q[s]].at > W)
                s++;
            int64_t in = 0, outv = 0, orig = 0, ben = 0;
            for (size_t k = s; k < o1; k++) {
                const etx *t = &v->tx[q[k]];
                int seen = 0;
                for (size_t z = k > s + 256 ? k - 256 : s; z < k; z++)
                    seen |= v->tx[q[z]].cp == t->cp && v->tx[q[z]].dir == t->dir;
                if (t->dir == DIR_IN) {
                    in += t->usd;
                    orig += !seen;
                } else {
                    outv += t->usd;
                    ben += !seen;
                }
            }
            if (orig >= need && ben >= need && (double)outv >= ratio * (double)in && orig + ben > best) {
                best = orig + ben;
                bi0 = s;
                bi1 = in1;
                bo1 = o1;
                bin = in;
                bout = outv;
                borig = orig;
                bben = ben;
            }
        }
        i = out1 > in1 ? out1 : in1;
    }
    if (best) {
        fbuild *b = &r->b;
        for (size_t k = bi0; k < bo1; k++)
            fb_ev(b, &v->tx[q[k]], AML_ROLE_TRIGGER);
        int64_t span = v->tx[q[bo1 - 1]].at - v->tx[q[bi0]].at;
        double fr = bin ? (double)bout / (double)bin : 0;
        fb_str(b, "variant", "gather_scatter");
        fb_str(b, "role", "hub");
        fb_int(b, "originators", borig);
        fb_int(b, "beneficiaries", bben);
        fb_int(b, "inboundMinor", bin);
        fb_int(b, "outboundMinor", bout);
        fb_dbl(b, "outToInRatio", fr);
        fb_dbl(b, "spanDays", (double)span / AML_DAY);
        int extra = (int)(borig + bben - 2 * need);
        r->score = 50 + (int)fmin(15, 3 * (double)extra) + (fr >= 0.9 ? 10 : 0) + (span <= 7 * AML_DAY ? 10 : 0);
        fb_comp(b, 50, "%lld originators paid in, then %lld beneficiaries were paid out", (long long)borig, (long long)bben);
        fb_comp(b, (int)fmin(15, 3 * (double)extra), "%d parties beyond the minimum", extra);
        fb_comp(b, fr >= 0.9 ? 10 : 0, "90%%+ of the inflow paid out");
        fb_comp(b, span <= 7 * AML_DAY ? 10 : 0, "all within 7 days");
        fb_explain(b,
                   "Between %s and %s, %s collected %s from %lld accounts and then paid %s (%.0f%%) out to %lld other "
                   "accounts (gather-scatter).",
                   day(v->tx[q[bi0]].at).s, day(v->tx[q[bo1 - 1]].at).s, v->id, usd(bin).s, (long long)borig,
                   usd(bout).s, fr * 100, (long long)bben);
        (void)bi1;
        r->ok = 1;
    }
    free(q);
}

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
    gnode *g = neighbour(c->e, c->nodes[depth], DIR_OUT, c->maxexp, c->maxedges, &c->capped);
    if (!g)
        return;
    etx *outs = g->out;
    size_t nout = g->nout;
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
        g = neighbour(c->e, c->nodes[depth], DIR_OUT, c->maxexp, c->maxedges, &c->capped);
        if (!g)
            return;
        outs = g->out;
        nout = g->nout;
    }
}

static void t08_chain(eng *e, const acct_view *v, t08res *r, int *capped)
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
    c->maxexp = PI(e, AML_T08, P08_MAX_EXPANSIONS);
    c->maxedges = PI(e, AML_T08, P08_MAX_EDGES);
    c->target = PI(e, AML_T08, P08_CHAIN_HOPS);
    int64_t minedge = PI(e, AML_T08, P08_MIN_EDGE);
    etx best[12];
    int best_len = 0;
    for (size_t i = v->w0; i < v->w1 && best_len < c->target + 2; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != DIR_OUT || !t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < minedge ||
            is_sibling(v, t->cp))
            continue;
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] < e->from &&
            v->prev_cp_at[i] >= t->at - PI(e, AML_T08, P08_NEW_LOOKBACK) * AML_DAY)
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
    *capped |= c->capped;
    if (best_len >= c->target) {
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
    free(c);
}

/* Stack (dir OUT: focus is an originator, layers after it) and bipartite
 * (both directions): sets of accounts all paying the same set of accounts. */
static void t08_layers(eng *e, const acct_view *v, int stack, int dir, t08res *r, int *capped)
{
    int64_t minedge = PI(e, AML_T08, P08_MIN_EDGE), H = PI(e, AML_T08, P08_FWD_HOURS);
    int64_t maxexp = PI(e, AML_T08, P08_MAX_EXPANSIONS), maxedges = PI(e, AML_T08, P08_MAX_EDGES);
    int64_t hubmax = PI(e, AML_T08, P08_HUB_MAX_IN);
    double ratio = P(e, AML_T08, P08_FWD_RATIO);
    r->variant = stack ? "stack" : "bipartite";
    r->role = stack ? "originator" : (dir == DIR_OUT ? "originator" : "beneficiary");
    party *ps;
    size_t np = parties_cached(e, v, dir, minedge, PI(e, AML_T08, P08_NEW_LOOKBACK) * AML_DAY, &ps);
    rec *rs = NULL;
    size_t nr = 0, cr = 0;
    int odir = dir == DIR_OUT ? DIR_IN : DIR_OUT; /* bipartite looks back at the other side */
    for (size_t i = 0; i < np && i < 64; i++) {
        gnode *g = neighbour(e, ps[i].acct, stack ? DIR_OUT : odir, maxexp, maxedges, capped);
        if (!g) {
            if (*capped)
                break;
            continue;
        }
        const etx *xs = stack ? g->out : (odir == DIR_OUT ? g->out : g->in);
        size_t nx = stack ? g->nout : (odir == DIR_OUT ? g->nout : g->nin);
        if (!stack) {
            /* A counterparty dealing with too many accounts is a merchant or a payroll hub. */
            imap seen;
            if (imap_init(&seen, nx + 1))
                continue;
            for (size_t k = 0; k < nx; k++)
                imap_slot(&seen, xs[k].cp);
            size_t deg = seen.n;
            imap_free(&seen);
            if ((int64_t)deg > hubmax)
                continue;
        }
        for (size_t k = 0; k < nx; k++) {
            const etx *x = &xs[k];
            if (!x->cp || x->cp == v->acct || x->cp == ps[i].acct || x->usd < minedge)
                continue;
            if (stack && !(within(e, ps[i].first, x->at, H) || (x->at > ps[i].first && x->at <= ps[i].last + H * AML_HOUR)))
                continue;
            if (rec_push(&rs, &nr, &cr, (rec){x->cp, (int64_t)i, x->usd}))
                break;
        }
    }
    nr = rec_merge(rs, nr);
    /* rs: (far account, intermediary/co-party index, amount). For a stack the far
     * accounts are beneficiaries of the intermediaries; for a bipartite they are
     * the other members of the focus account's side. */
    size_t nmid = np < 64 ? np : 64;
    int64_t *fwd = calloc(nmid + 1, sizeof *fwd);
    int *mid_far = calloc(nmid + 1, sizeof *mid_far);
    int64_t farlist[64], midlist[64];
    size_t nfar = 0, nmidsel = 0;
    if (!fwd || !mid_far)
        goto done;
    if (stack) {
        for (size_t i = 0; i < nr; i++)
            fwd[rs[i].mid] += rs[i].sum;
    }
    /* Far accounts linked to at least two qualifying intermediaries / focus-side counterparties. */
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        int links = 0;
        for (; j < nr && rs[j].key == rs[i].key; j++)
            if (!stack || (double)fwd[rs[j].mid] >= ratio * (double)ps[rs[j].mid].sum)
                links++;
        if (links >= 2 && nfar < 64) {
            farlist[nfar++] = rs[i].key;
            for (size_t k = i; k < j; k++)
                if (!stack || (double)fwd[rs[k].mid] >= ratio * (double)ps[rs[k].mid].sum)
                    mid_far[rs[k].mid]++;
        }
        i = j;
    }
    for (size_t m = 0; m < nmid; m++)
        if (mid_far[m] >= (stack ? 2 : 1) && nmidsel < 64)
            midlist[nmidsel++] = (int64_t)m;
    /* Stack: >= 2 intermediaries each paying >= 2 shared beneficiaries.
     * Bipartite: >= 2 focus-side counterparties each linked to >= 2 other
     * members on the focus account's side (a complete 2x2 core or larger). */
    if (nmidsel >= 2 && nfar >= (stack ? 2u : 1u)) {
        fbuild *b = &r->b;
        int64_t ids[64];
        int64_t total = 0;
        for (size_t k = 0; k < nmidsel; k++) {
            const party *q = &ps[midlist[k]];
            ids[k] = q->acct;
            for (size_t t = v->w0; t < v->w1; t++)
                if (v->tx[t].cp == q->acct && v->tx[t].dir == dir && v->tx[t].usd >= minedge && v->tx[t].ch != CH_CASH) {
                    fb_ev(b, &v->tx[t], AML_ROLE_TRIGGER);
                    total += v->tx[t].usd;
                }
            gnode *g = neighbour(e, q->acct, stack ? DIR_OUT : odir, maxexp, maxedges, capped);
            const etx *xs = g ? (stack || odir == DIR_OUT ? g->out : g->in) : NULL;
            size_t nx = g ? (stack || odir == DIR_OUT ? g->nout : g->nin) : 0;
            for (size_t z = 0; z < nx; z++)
                for (size_t f = 0; f < nfar; f++)
                    if (xs[z].cp == farlist[f] && xs[z].usd >= minedge) {
                        fb_ev(b, &xs[z], AML_ROLE_TRIGGER);
                        break;
                    }
        }
        fb_str(b, "variant", r->variant);
        fb_str(b, "role", r->role);
        fb_int(b, "totalMinor", total);
        if (stack) {
            account_list(e, &b->mw, "intermediaryAccounts", ids, nmidsel);
            account_list(e, &b->mw, "beneficiaryAccounts", farlist, nfar);
            r->score = 50 + (nmidsel >= 3 ? 10 : 0) + (nfar >= 3 ? 10 : 0);
            fb_comp(b, 50, "%zu intermediaries each passing on %.0f%%+ to %zu shared beneficiaries", nmidsel,
                    ratio * 100, nfar);
            fb_comp(b, nmidsel >= 3 ? 10 : 0, "3 or more intermediaries");
            fb_comp(b, nfar >= 3 ? 10 : 0, "3 or more shared beneficiaries");
            fb_explain(b,
                       "%s paid %s to %zu accounts which, within %lld hours, each paid on to the same %zu accounts: "
                       "a layered (stacked) transfer structure.",
                       v->id, usd(total).s, nmidsel, (long long)H, nfar);
        } else {
            account_list(e, &b->mw, dir == DIR_OUT ? "beneficiaryAccounts" : "originatorAccounts", ids, nmidsel);
            account_list(e, &b->mw, dir == DIR_OUT ? "coOriginatorAccounts" : "coBeneficiaryAccounts", farlist, nfar);
            int members = (int)(nmidsel + nfar + 1);
            r->score = 50 + (int)fmin(20, 5 * (double)(members - 5 > 0 ? members - 5 : 0));
            fb_comp(b, 50, "%d accounts paying each other all-to-all across two groups", members);
            fb_comp(b, (int)fmin(20, 5 * (double)(members - 5 > 0 ? members - 5 : 0)), "%d members beyond five",
                    members - 5);
            fb_explain(b,
                       "%s and %zu other %s each %s the same %zu accounts (%s involving %s): a bipartite structure "
                       "of transfers between two groups of accounts.",
                       v->id, nfar, plural((int64_t)nfar, "account", "accounts"),
                       dir == DIR_OUT ? "paid" : "received money from", nmidsel,
                       dir == DIR_OUT ? "payments" : "receipts", usd(total).s);
        }
        r->ok = 1;
    }
done:
    free(fwd);
    free(mid_far);
    free(rs);
}

static void t08(eng *e, const acct_view *v, aml_finding *out)
{
    /* Variants in order of specificity: the first of equal score wins. */
    t08res res[6];
    memset(res, 0, sizeof res);
    int capped = 0;
    size_t before = e->expansions;
    e->expansions = 0;
    for (int k = 0; k < 6; k++)
        fb_init(&res[k].b, e, &res[k].f, AML_T08, v->acct);
    t08_layers(e, v, 1, DIR_OUT, &res[0], &capped);
    t08_layers(e, v, 0, DIR_OUT, &res[1], &capped);
    t08_layers(e, v, 0, DIR_IN, &res[2], &capped);
    t08_sg(e, v, DIR_OUT, &res[3], &capped);
    t08_sg(e, v, DIR_IN, &res[4], &capped);
    t08_gs(e, v, &res[5]);
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
        t08_chain(e, v, &chainr, &capped);
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
    if (!w) {
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
}

/* T09: exposure to listed jurisdictions (lists are dated rows, loaded per run). */
static const jrow *listed_at(const eng *e, int64_t acct, int64_t at, int64_t *country_id)
{
    int64_t cid;
    if (!imap_get(&e->listed, acct, &cid))
        return NULL;
    const char *c = interned(&e->strs, (int)cid);
    const jrow *best = NULL;
    for (size_t i = 0; i < e->njl; i++) {
        const jrow *j = &e->jl[i];
        if (strcmp(j->country, c) != 0 || at < j->from || at >= j->to)
            continue;
        if (!best || strcmp(j->list, "fatf_call_for_action") == 0)
            best = j;
    }
    if (country_id)
        *country_id = cid;
    return best;
}

static void t09(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T09, v->acct);
    fb_str(&b, "account", v->id);
    if (!e->njl) {
        fb_missing(&b, "jurisdiction_lists", NULL);
        fb_explain(&b, "No jurisdiction lists are loaded, so exposure to high-risk jurisdictions cannot be assessed.");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    if (!e->any_country) {
        fb_missing(&b, "accounts.country", NULL);
        fb_explain(&b, "No account in the store has a country, so counterparty jurisdictions are unknown.");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    int64_t W = PI(e, AML_T09, P09_WINDOW) * AML_DAY, mina = PI(e, AML_T09, P09_MIN_AGGREGATE);
    size_t cnt = v->w1 - v->w0, n = 0;
    size_t *fl = malloc((cnt ? cnt : 1) * sizeof *fl);
    const jrow **why = malloc((cnt ? cnt : 1) * sizeof *why);
    if (!fl || !why) {
        free(fl);
        free(why);
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    for (size_t i = v->w0; i < v->w1; i++) {
        const jrow *j = v->tx[i].cp ? listed_at(e, v->tx[i].cp, v->tx[i].at, NULL) : NULL;
        if (j) {
            why[n] = j;
            fl[n++] = i;
        }
    }
    size_t bi = 0, bj = 0;
    int64_t bsum = 0;
    size_t j = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (j < i) {
            j = i;
            sum = 0;
        }
        while (j < n && v->tx[fl[j]].at - v->tx[fl[i]].at <= W)
            sum += v->tx[fl[j++]].usd;
        if (sum > bsum) {
            bsum = sum;
            bi = i;
            bj = j;
        }
        sum -= v->tx[fl[i]].usd;
    }
    fb_int(&b, "flaggedTransactions", (int64_t)n);
    if (n && bsum >= mina) {
        int cfa = 0, in = 0, outd = 0;
        char countries[64] = "";
        mcp_jw_key(&b.mw, "listsUsed");
        mcp_jw_array_begin(&b.mw);
        const jrow *seen[16];
        int nseen = 0;
        for (size_t k = bi; k < bj; k++) {
            const etx *t = &v->tx[fl[k]];
            fb_ev(&b, t, AML_ROLE_TRIGGER);
            cfa |= strcmp(why[k]->list, "fatf_call_for_action") == 0;
            in |= t->dir == DIR_IN;
            outd |= t->dir == DIR_OUT;
            int dup = 0;
            for (int q = 0; q < nseen; q++)
                dup |= seen[q] == why[k];
            if (!dup && nseen < 16) {
                seen[nseen++] = why[k];
                mcp_jw_object_begin(&b.mw);
                mcp_jw_key(&b.mw, "list");
                mcp_jw_string(&b.mw, why[k]->list);
                mcp_jw_key(&b.mw, "country");
                mcp_jw_string(&b.mw, why[k]->country);
                char d[11];
                aml_fmt_date(why[k]->from, d);
                mcp_jw_key(&b.mw, "effectiveFrom");
                mcp_jw_string(&b.mw, d);
                mcp_jw_object_end(&b.mw);
                size_t l = strlen(countries);
                if (!strstr(countries, why[k]->country))
                    snprintf(countries + l, sizeof countries - l, "%s%s", l ? ", " : "", why[k]->country);
            }
        }
        mcp_jw_array_end(&b.mw);
        int64_t nt = (int64_t)(bj - bi);
        int base = (int)(cfa ? PI(e, AML_T09, P09_CFA_SCORE) : PI(e, AML_T09, P09_IM_SCORE));
        fb_int(&b, "exposureMinor", bsum);
        fb_str(&b, "countries", countries);
        fb_comp(&b, base, "%s on the FATF %s list", countries, cfa ? "call-for-action" : "increased-monitoring");
        fb_comp(&b, (int)fmin(15, 5 * (double)(nt - 1)), "%lld further transactions", (long long)(nt - 1));
        fb_comp(&b, in && outd ? 5 : 0, "funds both sent and received");
        fb_explain(&b,
                   "Between %s and %s, %s %s %s in %lld %s with accounts in %s, %s on the FATF %s list at the "
                   "time.",
                   day(v->tx[fl[bi]].at).s, day(v->tx[fl[bj - 1]].at).s, v->id,
                   in && outd ? "exchanged" : in ? "received" : "sent", usd(bsum).s, (long long)nt,
                   plural(nt, "transaction", "transactions"), countries, nseen > 1 ? "jurisdictions" : "a jurisdiction",
                   cfa ? "high-risk (call for action)" : "increased monitoring");
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_int(&b, "maxExposureMinor", bsum);
        fb_explain(&b,
                   "%s had %s with accounts in FATF-listed jurisdictions within any %lld-day window (%s needed).",
                   v->id, n ? usd(bsum).s : "no transactions", (long long)(W / AML_DAY), usd(mina).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(fl);
    free(why);
}

/* Latest activity of an account strictly before t (INT64_MIN when none). Two single-table
 * queries, so that SQLite answers each max() with one index seek. */
static int64_t last_activity_before(eng *e, int64_t acct, int64_t t)
{
    static const char *const sql[2] = {
        "SELECT max(booked_at) FROM transactions WHERE from_acct = ?1 AND booked_at < ?2",
        "SELECT max(booked_at) FROM transactions WHERE to_acct = ?1 AND booked_at < ?2"};
    int64_t r = INT64_MIN;
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st = aml_stmt(e->s, sql[k]);
        if (!st)
            return INT64_MIN;
        aml_bind_int(st, 1, acct);
        aml_bind_int(st, 2, t);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
            sqlite3_column_int64(st, 0) > r)
            r = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
    }
    return r;
}

static int64_t volume_between(eng *e, int64_t acct, int64_t a, int64_t z)
{
    static const char *const sql =
        "SELECT total(s) FROM (SELECT total(amount_base_minor) AS s FROM transactions WHERE from_acct = ?1 AND "
        "booked_at BETWEEN ?2 AND ?3 UNION ALL SELECT total(amount_base_minor) FROM transactions WHERE to_acct = ?1 "
        "AND booked_at BETWEEN ?2 AND ?3)";
    sqlite3_stmt *st = aml_stmt(e->s, sql);
    if (!st)
        return 0;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, a);
    aml_bind_int(st, 3, z);
    int64_t r = sqlite3_step(st) == SQLITE_ROW ? (int64_t)sqlite3_column_double(st, 0) : 0;
    sqlite3_reset(st);
    return r;
}

/* T10: dormancy followed by sudden activity. */
static void t10(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T10, v->acct);
    fb_str(&b, "account", v->id);
    int64_t D = PI(e, AML_T10, P10_DORMANT_DAYS) * AML_DAY, R = PI(e, AML_T10, P10_REACT_DAYS) * AML_DAY;
    int64_t mint = PI(e, AML_T10, P10_MIN_TOTAL);
    double mult = P(e, AML_T10, P10_PRIOR_MULTIPLE);
    if (v->w0 == v->w1) {
        fb_explain(&b, "%s had no transactions in the window.", v->id);
        fb_finish(&b, AML_NOT_MATCHED);
        return;
    }
    int64_t maxgap = 0;
    int unknown = 0;
    struct {
        int ok, score;
        size_t i, end;
        int64_t prev, gap, total, prior_monthly;
        int from_open;
    } best = {0};
    for (size_t i = v->w0; i < v->w1; i++) {
        int64_t prev;
        int from_open = 0;
        if (i > 0) {
            prev = v->tx[i - 1].at;
        } else {
            prev = last_activity_before(e, v->acct, v->load_from);
            if (prev == INT64_MIN) {
                if (!v->has_opened) {
                    unknown = 1;
                    continue;
                }
                prev = v->opened_at;
                from_open = 1;
            }
        }
        int64_t gap = v->tx[i].at - prev;
        if (gap > maxgap)
            maxgap = gap;
        if (gap < D)
            continue;
        size_t end = lower_at(v->tx, v->ntx, v->tx[i].at + R + 1);
        int64_t total = 0;
        for (size_t k = i; k < end; k++)
            total += v->tx[k].usd;
        int64_t prior = from_open ? 0 : volume_between(e, v->acct, prev - 90 * AML_DAY, prev) / 3;
        int ok = total >= mint || (prior > 0 && (double)total >= mult * (double)prior);
        if (!ok)
            continue;
        int score = 50 + (gap >= 365 * AML_DAY ? 15 : 0) + (total >= 5 * mint ? 10 : 0);
        if (!best.ok || score > best.score) {
            best.ok = 1;
            best.score = score;
            best.i = i;
            best.end = end;
            best.prev = prev;
            best.gap = gap;
            best.total = total;
            best.prior_monthly = prior;
            best.from_open = from_open;
        }
    }
    fb_int(&b, "longestGapDays", maxgap / AML_DAY);
    if (best.ok) {
        int64_t in = 0, outv = 0;
        for (size_t k = best.i; k < best.end; k++) {
            fb_ev(&b, &v->tx[k], AML_ROLE_TRIGGER);
            if (v->tx[k].dir == DIR_IN)
                in += v->tx[k].usd;
            else
                outv += v->tx[k].usd;
        }
        int drained = in > 0 && (double)outv >= 0.8 * (double)in;
        fb_date(&b, best.from_open ? "openedAt" : "lastActivity", best.prev);
        fb_int(&b, "dormantDays", best.gap / AML_DAY);
        fb_date(&b, "reactivatedAt", v->tx[best.i].at);
        fb_int(&b, "reactivationTotalMinor", best.total);
        fb_int(&b, "creditsMinor", in);
        fb_int(&b, "debitsMinor", outv);
        fb_int(&b, "priorMonthlyAverageMinor", best.prior_monthly);
        fb_comp(&b, 50, "%lld days without activity, then %s within %lld days", (long long)(best.gap / AML_DAY),
                usd(best.total).s, (long long)(R / AML_DAY));
        fb_comp(&b, best.gap >= 365 * AML_DAY ? 15 : 0, "dormant for more than a year");
        fb_comp(&b, best.total >= 5 * mint ? 10 : 0, "at least 5 x the minimum amount");
        fb_comp(&b, drained ? 10 : 0, "80%%+ of the credits left again");
        fb_explain(&b,
                   "%s had no activity from %s%s until %s (%lld days); within %lld days it then moved %s (%s in, %s "
                   "out).",
                   v->id, day(best.prev).s, best.from_open ? " (its opening)" : "", day(v->tx[best.i].at).s,
                   (long long)(best.gap / AML_DAY), (long long)(R / AML_DAY), usd(best.total).s, usd(in).s,
                   usd(outv).s);
        fb_finish(&b, AML_MATCHED);
    } else if (unknown && maxgap < D) {
        fb_missing(&b, "accounts.opened_at", "transactions before the window");
        fb_explain(&b,
                   "%s has no recorded activity or opening date before the window, so whether it was dormant cannot "
                   "be determined.",
                   v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
    } else {
        fb_explain(&b,
                   "No dormant-account reactivation on %s: the longest inactive period before activity in the window "
                   "was %lld days (%lld needed, followed by %s or more).",
                   v->id, (long long)(maxgap / AML_DAY), (long long)(D / AML_DAY), usd(mint).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* T11: the last `periodDays` of the window against KYC and the customer's own history. */
static void t11(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T11, v->acct);
    fb_str(&b, "account", v->id);
    int64_t Pd = PI(e, AML_T11, P11_PERIOD) * AML_DAY, B = PI(e, AML_T11, P11_BASELINE_DAYS) * AML_DAY;
    int64_t SB = PI(e, AML_T11, P11_SPIKE_DAYS) * AML_DAY, minamt = PI(e, AML_T11, P11_MIN_AMOUNT);
    double cm = P(e, AML_T11, P11_CASH_MULT), vm = P(e, AML_T11, P11_VOLUME_MULT);
    double spike = P(e, AML_T11, P11_SPIKE_MULT), share = P(e, AML_T11, P11_CASH_SHARE);
    int64_t hist_need = PI(e, AML_T11, P11_MIN_HISTORY) * AML_DAY;
    int64_t p0 = e->to - Pd, b0 = p0 - B;
    int64_t first_seen = v->ntx ? v->tx[0].at : INT64_MAX;
    int history = first_seen != INT64_MAX && first_seen <= p0 - hist_need;
    if (!history && v->ntx && v->load_from <= p0 - hist_need) {
        /* Older history than what was loaded counts too. */
        history = last_activity_before(e, v->acct, p0 - hist_need + 1) != INT64_MIN;
    }
    if (!v->has_kyc && !history) {
        fb_missing(&b, "customers.expected_monthly_volume_minor", "90 days of account history");
        fb_explain(&b,
                   "%s has no KYC activity profile and less than %lld days of history, so activity cannot be compared "
                   "with what is expected.",
                   v->id, (long long)(hist_need / AML_DAY));
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    int64_t cash_now = 0, cred_now = 0, cash_base = 0, max_prior = 0, big = 0;
    size_t big_i = SIZE_MAX;
    for (size_t i = 0; i < v->ntx; i++) {
        const etx *t = &v->tx[i];
        if (t->at > p0 && t->at <= e->to) {
            if (t->dir == DIR_IN) {
                cred_now += t->usd;
                if (t->ch == CH_CASH)
                    cash_now += t->usd;
            }
            if (t->usd > big) {
                big = t->usd;
                big_i = i;
            }
        } else if (t->at > b0 && t->at <= p0 && t->dir == DIR_IN && t->ch == CH_CASH) {
            cash_base += t->usd;
        }
        if (t->at > p0 - SB && t->at <= p0 && t->usd > max_prior)
            max_prior = t->usd;
    }
    double months = (double)B / (30.0 * AML_DAY);
    int64_t base_monthly = history ? (int64_t)((double)cash_base / months) : 0;
    int64_t exp_cash = v->has_exp_cash ? v->exp_cash : 0;
    int64_t cash_ref = base_monthly > exp_cash ? base_monthly : exp_cash;
    int a = cash_now >= minamt && (v->has_exp_cash || history) && (double)cash_now >= cm * (double)cash_ref;
    int bb = v->has_exp_volume && cred_now >= minamt && (double)cred_now >= vm * (double)v->exp_volume;
    int c = history && big >= minamt && max_prior > 0 && (double)big > spike * (double)max_prior;
    double cash_share = cred_now ? (double)cash_now / (double)cred_now : 0;
    int d = !v->cash_intensive && cred_now >= minamt && cash_share >= share;
    fb_date(&b, "periodFrom", p0);
    fb_date(&b, "periodTo", e->to);
    fb_int(&b, "creditsMinor", cred_now);
    fb_int(&b, "cashCreditsMinor", cash_now);
    if (v->has_exp_volume)
        fb_int(&b, "kycExpectedMonthlyVolumeMinor", v->exp_volume);
    if (v->has_exp_cash)
        fb_int(&b, "kycExpectedMonthlyCashMinor", v->exp_cash);
    fb_int(&b, "historicalMonthlyCashMinor", base_monthly);
    fb_int(&b, "largestPriorTransactionMinor", max_prior);
    fb_bool(&b, "cashIntensiveBusiness", v->cash_intensive);
    if (a || bb) {
        double ratio_v = v->has_exp_volume && v->exp_volume ? (double)cred_now / (double)v->exp_volume : 0;
        double ratio_c = cash_ref ? (double)cash_now / (double)cash_ref : 0;
        double ratio = fmax(ratio_v, ratio_c);
        for (size_t i = 0; i < v->ntx; i++) {
            const etx *t = &v->tx[i];
            if (t->at > p0 && t->at <= e->to && t->dir == DIR_IN && (bb || t->ch == CH_CASH) && t->usd >= minamt / 10)
                fb_ev(&b, t, AML_ROLE_TRIGGER);
        }
        if (c && big_i != SIZE_MAX)
            fb_ev(&b, &v->tx[big_i], AML_ROLE_TRIGGER);
        fb_dbl(&b, "ratioToExpected", ratio);
        fb_comp(&b, 50, bb ? "credits %.1f x the KYC expected monthly volume" : "cash credits %.1f x the expected level",
                bb ? ratio_v : ratio_c);
        fb_comp(&b, a && bb ? 10 : 0, "both cash and total volume out of profile");
        fb_comp(&b, ratio >= 5 ? 10 : 0, "5 x or more");
        fb_comp(&b, ratio >= 10 ? 10 : 0, "10 x or more");
        fb_comp(&b, c ? 10 : 0, "a single transaction over %.1f x the largest of the prior %lld days", spike,
                (long long)(SB / AML_DAY));
        fb_comp(&b, d ? 10 : 0, "%.0f%% of credits in cash for a business that is not cash-intensive", cash_share * 100);
        if (bb)
            fb_explain(&b,
                       "In the 30 days to %s, %s received %s, %.1f times the %s a month the customer's profile "
                       "(%s) leads one to expect.",
                       day(e->to).s, v->id, usd(cred_now).s, ratio_v, usd(v->exp_volume).s,
                       v->occupation[0] ? v->occupation : "no stated occupation");
        else
            fb_explain(&b,
                       "In the 30 days to %s, %s received %s in cash, %.1f times the expected monthly cash of %s.",
                       day(e->to).s, v->id, usd(cash_now).s, ratio_c, usd(cash_ref).s);
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_explain(&b,
                   "Activity on %s in the 30 days to %s (%s credited, %s of it cash) is within %.0f x of the expected "
                   "level.",
                   v->id, day(e->to).s, usd(cred_now).s, usd(cash_now).s, fmin(cm, vm));
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* T12: large round amounts, judged in the transaction's own currency. */
static void t12(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T12, v->acct);
    fb_str(&b, "account", v->id);
    int64_t W = PI(e, AML_T12, P12_WINDOW) * AML_DAY, mina = PI(e, AML_T12, P12_MIN_AMOUNT);
    int64_t unit = PI(e, AML_T12, P12_ROUND_UNIT), N = PI(e, AML_T12, P12_MIN_COUNT);
    int64_t mint = PI(e, AML_T12, P12_MIN_TOTAL);
    size_t cnt = v->w1 - v->w0, n = 0;
    size_t *rd = malloc((cnt ? cnt : 1) * sizeof *rd);
    int64_t *orig = malloc((cnt ? cnt : 1) * sizeof *orig);
    int *wire = malloc((cnt ? cnt : 1) * sizeof *wire);
    if (!rd || !orig || !wire) {
        free(rd);
        free(orig);
        free(wire);
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    for (size_t i = v->w0; i < v->w1; i++) {
        if (v->tx[i].usd < mina)
            continue;
        sqlite3_stmt *st = aml_stmt(e->s, "SELECT amount_minor, currency FROM transactions WHERE txn_no = ?");
        if (!st)
            break;
        aml_bind_int(st, 1, v->tx[i].no);
        if (sqlite3_step(st) == SQLITE_ROW) {
            int64_t amt = sqlite3_column_int64(st, 0);
            const char *cur = aml_col_text(st, 1);
            const aml_currency *c = aml_currency_find(cur, strlen(cur));
            int exp = c ? c->exponent : 2;
            int64_t u = unit;
            for (int k = 2; k < exp; k++)
                u *= 10;
            for (int k = exp; k < 2; k++)
                u /= 10;
            if (u > 0 && amt % u == 0) {
                orig[n] = amt;
                wire[n] = v->tx[i].ch == CH_WIRE;
                rd[n++] = i;
            }
        }
        sqlite3_reset(st);
    }
    size_t bi = 0, bj = 0, j = 0;
    int64_t bsum = 0, sum = 0, bcount = 0;
    for (size_t i = 0; i < n; i++) {
        if (j < i) {
            j = i;
            sum = 0;
        }
        while (j < n && v->tx[rd[j]].at - v->tx[rd[i]].at <= W)
            sum += v->tx[rd[j++]].usd;
        int64_t c = (int64_t)(j - i);
        if (c > bcount || (c == bcount && sum > bsum)) {
            bcount = c;
            bsum = sum;
            bi = i;
            bj = j;
        }
        sum -= v->tx[rd[i]].usd;
    }
    fb_int(&b, "roundTransactions", (int64_t)n);
    if (bcount >= N && bsum >= mint) {
        int repeated = 0, wires = 0;
        for (size_t k = bi; k < bj; k++) {
            fb_ev(&b, &v->tx[rd[k]], AML_ROLE_TRIGGER);
            wires += wire[k];
            for (size_t q = bi; q < k; q++)
                repeated |= orig[q] == orig[k];
        }
        fb_int(&b, "inWindow", bcount);
        fb_int(&b, "totalMinor", bsum);
        fb_bool(&b, "repeatedAmounts", repeated);
        fb_int(&b, "wires", wires);
        fb_comp(&b, 50, "%lld transactions of %s+ in multiples of %s within %lld days", (long long)bcount, usd(mina).s,
                usd(unit).s, (long long)(W / AML_DAY));
        fb_comp(&b, repeated ? 10 : 0, "identical amounts repeated");
        fb_comp(&b, wires ? 10 : 0, "sent or received by wire");
        fb_comp(&b, (int)fmin(15, 5 * (double)(bcount - N)), "%lld beyond the minimum", (long long)(bcount - N));
        fb_explain(&b,
                   "Between %s and %s, %s had %lld transactions in exact multiples of %s, each %s or more, totalling %s%s.",
                   day(v->tx[rd[bi]].at).s, day(v->tx[rd[bj - 1]].at).s, v->id, (long long)bcount, usd(unit).s,
                   usd(mina).s, usd(bsum).s, repeated ? ", several of the same amount" : "");
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_int(&b, "maxInWindow", bcount);
        fb_explain(&b,
                   "No round-amount pattern on %s: at most %lld transactions of %s+ in multiples of %s within %lld "
                   "days (%lld and %s in total needed).",
                   v->id, (long long)bcount, usd(mina).s, usd(unit).s, (long long)(W / AML_DAY), (long long)N,
                   usd(mint).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(rd);
    free(orig);
    free(wire);
}

/* T13: credits from payers who are neither account holders nor known counterparties. */
static void t13(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T13, v->acct);
    fb_str(&b, "account", v->id);
    int64_t W = PI(e, AML_T13, P13_WINDOW) * AML_DAY, look = PI(e, AML_T13, P13_KNOWN_LOOKBACK) * AML_DAY;
    int64_t N = PI(e, AML_T13, P13_MIN_PAYERS);
    double minshare = P(e, AML_T13, P13_MIN_SHARE);
    int64_t mincred = PI(e, AML_T13, P13_MIN_CREDIT);
    /* Whether a payer is known needs history: an opening date, or activity before the window. */
    if (!v->has_opened && (!v->ntx || v->tx[0].at >= e->from) && last_activity_before(e, v->acct, v->load_from) == INT64_MIN) {
        fb_missing(&b, "accounts.opened_at", "transactions before the window");
        fb_explain(&b,
                   "%s has no opening date and no activity before the window, so known counterparties cannot be told "
                   "from new ones.",
                   v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    /* Conductors of cash credits, by txn_no. */
    imap cond, lastc;
    size_t cnt = v->w1 - v->w0;
    size_t *u = malloc((cnt ? cnt : 1) * sizeof *u);
    int64_t *at = calloc(cnt ? cnt : 1, sizeof *at), *key = calloc(cnt ? cnt : 1, sizeof *key),
            *amt = calloc(cnt ? cnt : 1, sizeof *amt), *pin = calloc(cnt + 1, sizeof *pin);
    slide sl = {0};
    size_t n = 0;
    if (!u || !at || !key || !amt || !pin || imap_init(&cond, v->ncash + 1)) {
        free(u);
        free(at);
        free(key);
        free(amt);
        free(pin);
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    if (imap_init(&lastc, 16)) {
        imap_free(&cond);
        free(u);
        free(at);
        free(key);
        free(amt);
        free(pin);
        fb_explain(&b, "not evaluated: out of memory");
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    int party_cond[8];
    for (size_t k = 0; k < v->ncust; k++)
        party_cond[k] = intern(&e->strs, v->cust_ids[k]);
    for (size_t i = 0; i < v->ncash; i++) {
        const cash_row *c = &v->cash[i];
        if (c->dir == DIR_IN && c->conductor) {
            int64_t *s = imap_slot(&cond, c->no);
            if (s)
                *s = c->conductor;
        }
    }
    pin[0] = 0;
    size_t k0 = 0;
    for (size_t i = 0; i < v->ntx; i++) {
        const etx *t = &v->tx[i];
        int64_t payer = 0, prev = INT64_MIN;
        if (t->dir == DIR_IN && t->usd >= mincred && t->ch != CH_CARD) {
            int64_t cid;
            if (t->cp) {
                payer = t->cp;
                prev = v->prev_cp_at[i];
            } else if (t->ch == CH_CASH && imap_get(&cond, t->no, &cid)) {
                int own = 0;
                for (size_t k = 0; k < v->ncust; k++)
                    own |= party_cond[k] == cid;
                payer = own ? 0 : -cid;
                if (payer) {
                    int64_t *s = imap_slot(&lastc, payer);
                    if (s) {
                        if (*s)
                            prev = *s - 1;
                        *s = t->at + 1;
                    }
                }
            }
        }
        if (i < v->w0)
            continue;
        pin[k0 + 1] = pin[k0] + (t->dir == DIR_IN ? t->usd : 0);
        k0++;
        if (!payer || (payer > 0 && is_sibling(v, payer)))
            continue;
        if (prev != INT64_MIN && prev >= t->at - look)
            continue;
        u[n] = i;
        at[n] = t->at;
        key[n] = payer;
        amt[n] = t->usd;
        n++;
    }
    imap_free(&cond);
    imap_free(&lastc);
    size_t bi = SIZE_MAX;
    double bshare = 0, seen_share = 0;
    int64_t bcred = 0, seen_payers = 0;
    if (!slide_run(at, key, amt, n, W, &sl)) {
        for (size_t i = 0; i < n; i++) {
            size_t a0 = u[i] - v->w0, a1 = lower_at(v->tx, v->ntx, at[i] + W + 1) - v->w0;
            int64_t cred = pin[a1] - pin[a0];
            double sh = cred ? (double)sl.sum[i] / (double)cred : 0;
            if (sl.distinct[i] > seen_payers) {
                seen_payers = sl.distinct[i];
                seen_share = sh;
            }
            if (sl.distinct[i] >= N && sh >= minshare &&
                (bi == SIZE_MAX || sl.distinct[i] > sl.distinct[bi] || (sl.distinct[i] == sl.distinct[bi] && sh > bshare))) {
                bi = i;
                bshare = sh;
                bcred = cred;
            }
        }
    }
    if (bi != SIZE_MAX) {
        size_t end = sl.end[bi];
        int64_t payers = sl.distinct[bi], val = sl.sum[bi];
        int cash = 0;
        for (size_t k = bi; k < end; k++) {
            fb_ev(&b, &v->tx[u[k]], AML_ROLE_TRIGGER);
            cash |= key[k] < 0;
        }
        fb_int(&b, "unknownPayers", payers);
        fb_int(&b, "fromUnknownPayersMinor", val);
        fb_int(&b, "creditsInWindowMinor", bcred);
        fb_dbl(&b, "valueShare", bshare);
        fb_bool(&b, "includesCashDepositors", cash);
        fb_comp(&b, 50, "%lld unknown payers, %.0f%% of the credits", (long long)payers, bshare * 100);
        fb_comp(&b, (int)fmin(20, 5 * (double)(payers - N)), "%lld payers beyond the minimum", (long long)(payers - N));
        fb_comp(&b, bshare >= 0.6 ? 10 : 0, "60%%+ of the credits");
        fb_explain(&b,
                   "Between %s and %s, %s (%.0f%% of the money credited to %s) came from %lld payers%s who are "
                   "neither holders of the account nor counterparties seen in the previous %lld days.",
                   day(at[bi]).s, day(at[end - 1]).s, usd(val).s, bshare * 100, v->id, (long long)payers,
                   cash ? ", some of them depositing cash," : "", (long long)(look / AML_DAY));
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_int(&b, "maxUnknownPayers", seen_payers);
        fb_dbl(&b, "theirShare", seen_share);
        fb_explain(&b,
                   "No third-party payment pattern on %s: at most %lld unknown payers within any %lld-day window "
                   "(%lld needed, making up %.0f%% of credits).",
                   v->id, (long long)seen_payers, (long long)(W / AML_DAY), (long long)N, minshare * 100);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    slide_free(&sl);
    free(u);
    free(at);
    free(key);
    free(amt);
    free(pin);
}

static int64_t fx_usd(const eng *e, int64_t minor, const char *cur, int64_t at)
{
    const aml_currency *c = aml_currency_find(cur, strlen(cur));
    int exp = c ? c->exponent : 2;
    const fxrow *best = NULL;
    for (size_t i = 0; i < e->nfx; i++)
        if (strcmp(e->fx[i].cur, cur) == 0 && e->fx[i].date <= at && (!best || e->fx[i].date > best->date))
            best = &e->fx[i];
    if (!best)
        return -1;
    return aml_to_usd_minor(minor, exp, best->num, best->den);
}

static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = (char)(*a >= 'A' && *a <= 'Z' ? *a + 32 : *a), y = (char)(*b >= 'A' && *b <= 'Z' ? *b + 32 : *b);
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* Holder name of an account: its primary customer, or the external holder name. */
static void holder_name(eng *e, int64_t acct, char *out, size_t n)
{
    out[0] = '\0';
    sqlite3_stmt *st = aml_stmt(e->s, "SELECT coalesce((SELECT c.full_name FROM account_parties p JOIN customers c "
                                      "ON c.customer_id = p.customer_id WHERE p.acct_no = a.acct_no ORDER BY "
                                      "p.role <> 'primary', c.customer_id LIMIT 1), a.holder_name, '') "
                                      "FROM accounts a WHERE a.acct_no = ?");
    if (!st)
        return;
    aml_bind_int(st, 1, acct);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    sqlite3_reset(st);
}

/* T14: trade documents against the payments that settle them. */
static void t14(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T14, v->acct);
    fb_str(&b, "account", v->id);
    if (!e->any_trade_docs) {
        fb_missing(&b, "trade_documents", NULL);
        fb_explain(&b, "No trade documents are linked to the transactions of %s in the window.", v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    static const char *const sql =
        "SELECT d.doc_id, t.txn_no, t.booked_at, t.from_acct, t.to_acct, t.amount_base_minor, d.invoice_amount_minor, "
        "d.currency, d.buyer_name, d.seller_name FROM trade_documents d JOIN transactions t ON t.txn_no = d.txn_no "
        "WHERE t.to_acct = ?1 AND t.booked_at BETWEEN ?2 AND ?3 "
        "UNION ALL "
        "SELECT d.doc_id, t.txn_no, t.booked_at, t.from_acct, t.to_acct, t.amount_base_minor, d.invoice_amount_minor, "
        "d.currency, d.buyer_name, d.seller_name FROM trade_documents d JOIN transactions t ON t.txn_no = d.txn_no "
        "WHERE t.from_acct = ?1 AND t.booked_at BETWEEN ?2 AND ?3 ORDER BY 2, 1";
    sqlite3_stmt *st = aml_stmt(e->s, sql);
    if (!st) {
        fb_explain(&b, "not evaluated: %s", e->s->errmsg);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    double thr = P(e, AML_T14, P14_MISMATCH);
    aml_bind_int(st, 1, v->acct);
    aml_bind_int(st, 2, e->from);
    aml_bind_int(st, 3, e->to);
    int64_t docs = 0, flagged = 0, wrongparty = 0, pay_total = 0, inv_total = 0;
    double maxmis = 0;
    mcp_jw_key(&b.mw, "documents");
    mcp_jw_array_begin(&b.mw);
    while (sqlite3_step(st) == SQLITE_ROW) {
        docs++;
        int64_t no = sqlite3_column_int64(st, 1), at = sqlite3_column_int64(st, 2);
        int64_t fa = sqlite3_column_int64(st, 3), ta = sqlite3_column_int64(st, 4);
        int64_t paid = sqlite3_column_int64(st, 5);
        int64_t inv = fx_usd(e, sqlite3_column_int64(st, 6), aml_col_text(st, 7), at);
        char buyer[160], seller[160], other[160];
        snprintf(buyer, sizeof buyer, "%s", aml_col_text(st, 8));
        snprintf(seller, sizeof seller, "%s", aml_col_text(st, 9));
        char docid[80];
        snprintf(docid, sizeof docid, "%s", aml_col_text(st, 0));
        int incoming = ta == v->acct;
        /* The counterparty should be the other party to the invoice. */
        holder_name(e, incoming ? fa : ta, other, sizeof other);
        const char *expect = incoming ? buyer : seller;
        int pm = expect[0] && other[0] && !name_eq(expect, other);
        double mis = inv > 0 ? fabs((double)(paid - inv)) / (double)inv : 0;
        int f = mis > thr || pm;
        if (mis > maxmis)
            maxmis = mis;
        pay_total += paid;
        inv_total += inv > 0 ? inv : 0;
        flagged += f;
        wrongparty += pm;
        etx t = {no, at, incoming ? fa : ta, paid, (unsigned char)(incoming ? DIR_IN : DIR_OUT), CH_WIRE};
        fb_ev(&b, &t, f ? AML_ROLE_TRIGGER : AML_ROLE_CONTEXT);
        mcp_jw_object_begin(&b.mw);
        mcp_jw_key(&b.mw, "docId");
        mcp_jw_string(&b.mw, docid);
        mcp_jw_key(&b.mw, "invoiceUsdMinor");
        mcp_jw_int(&b.mw, inv);
        mcp_jw_key(&b.mw, "paidUsdMinor");
        mcp_jw_int(&b.mw, paid);
        mcp_jw_key(&b.mw, "mismatch");
        mcp_jw_double(&b.mw, round4(mis));
        mcp_jw_key(&b.mw, "payerIsNotInvoicedParty");
        mcp_jw_bool(&b.mw, pm);
        mcp_jw_object_end(&b.mw);
        if (docs >= 200)
            break;
    }
    sqlite3_reset(st);
    mcp_jw_array_end(&b.mw);
    fb_int(&b, "tradeDocuments", docs);
    if (!docs) {
        fb_missing(&b, "trade_documents", NULL);
        fb_explain(&b, "No trade documents are linked to the transactions of %s in the window.", v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    fb_int(&b, "flaggedDocuments", flagged);
    fb_dbl(&b, "maxMismatch", maxmis);
    fb_int(&b, "paymentsMinor", pay_total);
    fb_int(&b, "invoicesMinor", inv_total);
    if (flagged) {
        fb_comp(&b, 50, "%lld payment(s) differ from the invoice by more than %.0f%% or come from another party",
                (long long)flagged, thr * 100);
        fb_comp(&b, (int)fmin(20, 10 * (double)(flagged - 1)), "%lld further documents", (long long)(flagged - 1));
        fb_comp(&b, maxmis >= 0.5 ? 10 : 0, "a difference of 50%% or more");
        fb_comp(&b, wrongparty ? 10 : 0, "paid by or to someone other than the invoiced party");
        fb_explain(&b,
                   "%lld of %lld trade payments on %s did not match their invoices (payments %s against invoices of "
                   "%s; largest difference %.0f%%)%s.",
                   (long long)flagged, (long long)docs, v->id, usd(pay_total).s, usd(inv_total).s, maxmis * 100,
                   wrongparty ? "; some were settled by a party other than the one invoiced" : "");
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_explain(&b, "All %lld trade payments on %s match their invoices within %.0f%% and the invoiced parties.",
                   (long long)docs, v->id, thr * 100);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* ---- 5. running a case ----------------------------------------------------- */

typedef void (*typology_fn)(eng *e, const acct_view *v, aml_finding *out);

static void t03(eng *e, const acct_view *v, aml_finding *out)
{
    fan(e, v, AML_T03, out);
}

static void t04(eng *e, const acct_view *v, aml_finding *out)
{
    fan(e, v, AML_T04, out);
}

static const typology_fn typologies[AML_NTYP] = {t01, t02, t03, t04, t05, t06, t07,
                                                 t08, t09, t10, t11, t12, t13, t14};

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

static int load_context(eng *e, aml_err *err)
{
    char v[16];
    e->daygran = aml_meta_get(e->s, "data.day_precision", v, sizeof v) == 0 && strcmp(v, "1") == 0;
    sqlite3_stmt *st = aml_stmt(e->s, "SELECT list_name, country, effective_from, effective_to FROM jurisdiction_lists "
                                      "ORDER BY list_name, country, effective_from");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (e->njl == cap) {
            cap = cap ? cap * 2 : 16;
            jrow *n = realloc(e->jl, cap * sizeof *n);
            if (!n) {
                sqlite3_reset(st);
                return aml_errf(err, "out of memory");
            }
            e->jl = n;
        }
        jrow *j = &e->jl[e->njl++];
        snprintf(j->list, sizeof j->list, "%s", aml_col_text(st, 0));
        snprintf(j->country, sizeof j->country, "%s", aml_col_text(st, 1));
        int ok;
        j->from = parse_date_col(st, 2, &ok);
        if (!ok)
            j->from = INT64_MIN;
        j->to = parse_date_col(st, 3, &ok);
        if (!ok)
            j->to = INT64_MAX;
    }
    sqlite3_reset(st);
    if (imap_init(&e->listed, 64) || imap_init(&e->gidx, 256))
        return aml_errf(err, "out of memory");
    st = aml_stmt(e->s, "SELECT acct_no, country FROM accounts WHERE country IN (SELECT country FROM jurisdiction_lists)");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t *slot = imap_slot(&e->listed, sqlite3_column_int64(st, 0));
        if (slot)
            *slot = intern(&e->strs, aml_col_text(st, 1));
    }
    sqlite3_reset(st);
    st = aml_stmt(e->s, "SELECT 1 FROM accounts WHERE country IS NOT NULL LIMIT 1");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    e->any_country = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
    st = aml_stmt(e->s, "SELECT 1 FROM trade_documents LIMIT 1");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    e->any_trade_docs = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_reset(st);
    st = aml_stmt(e->s, "SELECT currency, rate_date, usd_num, usd_den FROM fx_rates ORDER BY currency, rate_date");
    if (!st)
        return aml_errf(err, "%s", e->s->errmsg);
    cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (e->nfx == cap) {
            cap = cap ? cap * 2 : 32;
            fxrow *n = realloc(e->fx, cap * sizeof *n);
            if (!n) {
                sqlite3_reset(st);
                return aml_errf(err, "out of memory");
            }
            e->fx = n;
        }
        fxrow *f = &e->fx[e->nfx++];
        snprintf(f->cur, sizeof f->cur, "%s", aml_col_text(st, 0));
        int ok;
        f->date = parse_date_col(st, 1, &ok);
        f->num = sqlite3_column_int64(st, 2);
        f->den = sqlite3_column_int64(st, 3);
    }
    sqlite3_reset(st);
    return 0;
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
    imap_free(&e->listed);
    free(e->jl);
    free(e->fx);
    interner_free(&e->strs);
    if (e->data_hash.ctx) {
        char dummy[65];
        aml_sha256_final(&e->data_hash, dummy);
    }
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
    memset(out, 0, sizeof *out);
    out->params = *p;
    out->mask = mask & AML_ALL_TYPOLOGIES;
    eng e;
    memset(&e, 0, sizeof e);
    e.s = s;
    e.p = &out->params;
    e.from = cs->from;
    e.to = cs->to;
    if (aml_sha256_init(&e.data_hash) || load_context(&e, err)) {
        eng_free(&e);
        return err && err->msg[0] ? -1 : aml_errf(err, "cannot start the engine");
    }
    int rc = 0;
    for (size_t a = 0; a < cs->naccts && !rc; a++) {
        acct_view v;
        int64_t l0 = aml_mono_ns();
        if (load_view(&e, cs->accts[a], &v, err)) {
            view_free(&v);
            rc = -1;
            break;
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
            typologies[t](&e, &v, &f);
            if (prof)
                fprintf(stderr, "  %s %.2f ms\n", aml_catalog()[t].code, (double)(aml_mono_ns() - t0) / 1e6);
            aml_finding *cur = &out->f[t];
            int better = !cur->metrics_json || status_rank(f.status) > status_rank(cur->status) ||
                         (f.status == cur->status && f.score > cur->score);
            char seen[128];
            variants_union(seen, sizeof seen, cur->variants, f.variants);
            if (better) {
                finding_clear(cur);
                *cur = f;
            } else {
                finding_clear(&f);
            }
            snprintf(cur->variants, sizeof cur->variants, "%s", seen);
        }
        view_free(&v);
        for (int d = 0; d < 3; d++) {
            free(e.pc[d]);
            e.pc[d] = NULL;
            e.pc_have[d] = 0;
        }
        e.pc_view = NULL;
        if (e.oom) {
            rc = aml_errf(err, "out of memory while assessing");
            break;
        }
    }
    out->edges_read = e.edges_read;
    aml_sha256_update(&e.data_hash, e.hbuf, e.hlen);
    aml_sha256_final(&e.data_hash, out->data_sha);
    eng_free(&e);
    if (rc) {
        aml_assessment_free(out);
        return -1;
    }
    for (int t = 0; t < AML_NTYP; t++) {
        if (!(out->mask & (1u << t)))
            continue;
        if (!out->f[t].metrics_json) { /* no focus account at all */
            out->f[t].typ = t;
            out->f[t].status = AML_NOT_EVALUABLE;
            out->f[t].metrics_json = aml_strdup("{\"scoreBreakdown\":[],\"evidenceCount\":0}");
            out->f[t].explanation = aml_strdup("The case has no focus account to evaluate.");
            out->f[t].missing_json = aml_strdup("[\"case_accounts\"]");
        }
        aml_finding *ft = &out->f[t];
        if (ft->status == AML_MATCHED && cs->naccts > 1 && ft->variants[0] && strchr(ft->variants, ',')) {
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
    char seed[512], h[65];
    snprintf(seed, sizeof seed, "%s|%s|%u|%s|%s|%s|%s", cs->case_id ? cs->case_id : "", kind, out->mask,
             out->params_sha, out->data_sha, AML_ENGINE_VERSION, AML_CATALOG_VERSION);
    aml_sha256_hex(seed, strlen(seed), h);
    snprintf(out->assessment_id, sizeof out->assessment_id, "asm_%.24s", h);
    return 0;
}

void aml_assessment_free(aml_assessment *a)
{
    if (!a)
        return;
    for (int t = 0; t < AML_NTYP; t++)
        finding_clear(&a->f[t]);
}

void aml_txn_id(aml_store *s, int64_t txn_no, char *out, size_t n)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT txn_ref FROM transactions WHERE txn_no = ?");
    out[0] = '\0';
    if (st) {
        aml_bind_int(st, 1, txn_no);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            snprintf(out, n, "%s", aml_col_text(st, 0));
        sqlite3_reset(st);
    }
    if (!out[0])
        snprintf(out, n, "#%lld", (long long)txn_no);
}

int aml_evidence_write(aml_store *s, mcp_jw *w, int64_t txn_no, int role, int64_t focus)
{
    static const char *const sql =
        "SELECT t.txn_ref, t.booked_at, t.amount_minor, t.currency, t.amount_base_minor, t.channel, t.from_acct, "
        "t.to_acct, fa.account_id, ta.account_id, t.location_id, t.time_precision FROM transactions t "
        "LEFT JOIN accounts fa ON fa.acct_no = t.from_acct LEFT JOIN accounts ta ON ta.acct_no = t.to_acct "
        "WHERE t.txn_no = ?";
    sqlite3_stmt *st = aml_stmt(s, sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, txn_no);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return -1;
    }
    char id[96], when[21];
    if (sqlite3_column_type(st, 0) != SQLITE_NULL)
        snprintf(id, sizeof id, "%s", aml_col_text(st, 0));
    else
        snprintf(id, sizeof id, "#%lld", (long long)txn_no);
    aml_fmt_time(sqlite3_column_int64(st, 1), when);
    int64_t fa = sqlite3_column_int64(st, 6), ta = sqlite3_column_int64(st, 7);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "txnId");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "role");
    mcp_jw_string(w, role == AML_ROLE_TRIGGER ? "trigger" : "context");
    mcp_jw_key(w, "bookedAt");
    mcp_jw_string(w, when);
    mcp_jw_key(w, "timePrecision");
    mcp_jw_string(w, aml_col_text(st, 11));
    mcp_jw_key(w, "amountMinor");
    mcp_jw_int(w, sqlite3_column_int64(st, 2));
    mcp_jw_key(w, "currency");
    mcp_jw_string(w, aml_col_text(st, 3));
    mcp_jw_key(w, "amountUsdMinor");
    mcp_jw_int(w, sqlite3_column_int64(st, 4));
    mcp_jw_key(w, "channel");
    mcp_jw_string(w, aml_col_text(st, 5));
    mcp_jw_key(w, "direction");
    mcp_jw_string(w, ta == focus && fa != focus ? "in" : fa == focus && ta != focus ? "out" : "related");
    mcp_jw_key(w, "fromAccountId");
    if (sqlite3_column_type(st, 8) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, 8));
    mcp_jw_key(w, "toAccountId");
    if (sqlite3_column_type(st, 9) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, 9));
    mcp_jw_key(w, "locationId");
    if (sqlite3_column_type(st, 10) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, 10));
    mcp_jw_object_end(w);
    sqlite3_reset(st);
    return 0;
}

void aml_finding_write(aml_store *s, mcp_jw *w, const aml_assessment *a, int typ)
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
        char id[128];
        aml_account_id(s, f->focus_acct, id, sizeof id);
        mcp_jw_key(w, "accountId");
        mcp_jw_string(w, id);
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
        aml_evidence_write(s, w, f->ev[i].no, f->ev[i].role, f->focus_acct);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "sarCategory");
    aml_sar_category_write(w, typ, 0);
    mcp_jw_object_end(w);
}
