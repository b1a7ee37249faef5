/*
 * The engine's loading (see typology.h): its containers, a focus account's
 * transactions through the covering indexes, its cash details, customers
 * and KYC, and the neighbours of the graph searches.
 *
 * Every transaction read is fed to the run's data digest (assessment ids
 * and dataSha256 depend on it), in the order it is read.
 */
#include "engine/typology.h"

/* ---- containers ------------------------------------------------------------ */

int imap_init(imap *m, size_t hint)
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

void imap_free(imap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
}

int imap_grow(imap *m)
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


static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h & 0x7fffffffffffffffull;
}

int eng_intern(interner *in, const char *s)
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

const char *eng_interned(const interner *in, int id)
{
    return id > 0 && (size_t)id <= in->n ? in->strs[id - 1] : "";
}

void eng_interner_free(interner *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->strs[i]);
    free(in->strs);
    imap_free(&in->index);
    memset(in, 0, sizeof *in);
}


/* ---- an account's transactions ------------------------------------------------ */

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

/* Feeds a transaction read to the data digest, little-endian (no, at, usd), in 8 KiB batches:
 * one digest update per row would cost more than reading the row. */
static void hash_row(eng *e, const etx *t)
{
    e->edges_read++;
    if (e->lean)
        return;
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
}

static const char sql_last_before[] =
    "SELECT (SELECT max(booked_at) FROM transactions WHERE from_acct = ?1 AND booked_at < ?2), "
    "(SELECT max(booked_at) FROM transactions WHERE to_acct = ?1 AND booked_at < ?2)";

static const char sql_first[] = "SELECT (SELECT min(booked_at) FROM transactions WHERE from_acct = ?1), "
                                "(SELECT min(booked_at) FROM transactions WHERE to_acct = ?1)";

/* The order is the covering index's (SQLite reads it without sorting), spelled out so that
 * PostgreSQL returns the same rows in the same order (the digest and a LIMIT depend on it). */
static const char *const sql_out =
    "SELECT txn_no, booked_at, to_acct, amount_base_minor, channel FROM transactions "
    "WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 "
    "ORDER BY booked_at, to_acct NULLS FIRST, amount_base_minor, channel, txn_no LIMIT ?4";
static const char *const sql_in =
    "SELECT txn_no, booked_at, from_acct, amount_base_minor, channel FROM transactions "
    "WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 "
    "ORDER BY booked_at, from_acct NULLS FIRST, amount_base_minor, channel, txn_no LIMIT ?4";

/* An edge from columns c0.. of an edge statement (txn_no, booked_at, counterparty, amount, channel). */
static void etx_read(aml_st *st, int c0, int64_t cp, int dir, etx *t)
{
    t->no = aml_col_int(st, c0);
    t->at = aml_col_int(st, c0 + 1);
    t->cp = cp;
    t->usd = aml_col_int(st, c0 + 3);
    t->ch = (unsigned char)channel_of((const unsigned char *)aml_col_text(st, c0 + 4));
    t->dir = (unsigned char)dir;
}

/* Appends the edges of `acct` in one direction; self-transfers are skipped. */
static int load_edges(eng *e, int64_t acct, int dir, int64_t from, int64_t to, int64_t limit, etx **arr,
                      size_t *n, size_t *cap)
{
    aml_st *st = aml_stmt(e->s, dir == DIR_OUT ? sql_out : sql_in);
    if (!st)
        return -1;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, from);
    aml_bind_int(st, 3, to);
    aml_bind_int(st, 4, limit < 0 ? INT64_MAX : limit); /* no limit: PostgreSQL refuses SQLite's -1 */
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        int64_t cp = aml_col_null(st, 2) ? 0 : aml_col_int(st, 2);
        if (cp == acct)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            etx *na = realloc(*arr, nc * sizeof *na);
            if (!na) {
                aml_reset(st);
                e->oom = 1;
                return -1;
            }
            *arr = na;
            *cap = nc;
        }
        etx *t = &(*arr)[(*n)++];
        etx_read(st, 0, cp, dir, t);
        hash_row(e, t);
    }
    aml_reset(st);
    return rc == AML_DONE ? 0 : -1;
}

int eng_load_cash(eng *e, int64_t acct, int64_t from, int64_t to, cash_row **arr, size_t *n, size_t *cap)
{
    static const char *const sql =
        "SELECT txn_no, booked_at, from_acct, to_acct, amount_base_minor, conductor_id, location_id, "
        "location_region FROM transactions WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash' "
        "UNION ALL "
        "SELECT txn_no, booked_at, from_acct, to_acct, amount_base_minor, conductor_id, location_id, "
        "location_region FROM transactions WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash'";
    aml_st *st = aml_stmt(e->s, sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, from);
    aml_bind_int(st, 3, to);
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        int64_t fa = aml_col_int(st, 2), ta = aml_col_int(st, 3);
        if (fa == ta)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 32;
            cash_row *na = realloc(*arr, nc * sizeof *na);
            if (!na) {
                aml_reset(st);
                e->oom = 1;
                return -1;
            }
            *arr = na;
            *cap = nc;
        }
        cash_row *c = &(*arr)[(*n)++];
        c->no = aml_col_int(st, 0);
        c->at = aml_col_int(st, 1);
        c->acct = acct;
        c->usd = aml_col_int(st, 4);
        c->dir = ta == acct ? DIR_IN : DIR_OUT;
        c->conductor = eng_intern(&e->strs, aml_col_text(st, 5));
        c->location = eng_intern(&e->strs, aml_col_text(st, 6));
        c->region = eng_intern(&e->strs, aml_col_text(st, 7));
    }
    aml_reset(st);
    return rc == AML_DONE ? 0 : -1;
}

int64_t eng_date_col(aml_st *st, int i, int *ok)
{
    const char *t = aml_col_text(st, i);
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

/* One cash transaction's details as read, before interning. */
typedef struct cash_detail {
    int64_t no;
    char *str[3]; /* conductor, location, region */
} cash_detail;

static void cash_details_free(cash_detail *d, size_t n, imap *idx)
{
    for (size_t k = 0; k < n; k++)
        for (int j = 0; j < 3; j++)
            free(d[k].str[j]);
    free(d);
    imap_free(idx);
}

/*
 * The details of the account's cash transactions in [from, to], in one query for both directions (one round
 * trip on PostgreSQL instead of one per transaction), keyed by txn_no in idx (index + 1).
 */
static const char sql_cash_details[] =
    "SELECT txn_no, conductor_id, location_id, location_region FROM transactions "
    "WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash' UNION ALL "
    "SELECT txn_no, conductor_id, location_id, location_region FROM transactions "
    "WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND channel = 'cash'";

static int read_cash_details(eng *e, int64_t acct, int64_t from, int64_t to, cash_detail **out, size_t *n, imap *idx)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    aml_st *st = aml_stmt(e->s, sql_cash_details);
    if (!st || imap_init(idx, 64))
        return -1;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, from);
    aml_bind_int(st, 3, to);
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            cash_detail *nd = realloc(*out, nc * sizeof *nd);
            if (!nd)
                break;
            *out = nd;
            cap = nc;
        }
        cash_detail *d = &(*out)[*n];
        d->no = aml_col_int(st, 0);
        for (int j = 0; j < 3; j++)
            d->str[j] = aml_strdup(aml_col_text(st, j + 1));
        int64_t *slot = imap_slot(idx, d->no);
        (*n)++;
        if (!slot || !d->str[0] || !d->str[1] || !d->str[2])
            break;
        *slot = (int64_t)*n;
    }
    aml_reset(st);
    return rc == AML_DONE ? 0 : -1;
}

/* Details of the account's cash transactions (conductor, location, region), interned in transaction order. */
static int load_cash_details(eng *e, acct_view *v, aml_err *err)
{
    size_t n = 0, nd = 0;
    for (size_t k = 0; k < v->ntx; k++)
        n += v->tx[k].ch == CH_CASH;
    if (!n)
        return 0;
    v->cash = malloc(n * sizeof *v->cash);
    cash_detail *d = NULL;
    imap idx = {0};
    if (!v->cash || read_cash_details(e, v->acct, v->load_from, e->to, &d, &nd, &idx)) {
        cash_details_free(d, nd, &idx);
        return aml_errf(err, "loading cash details of %s: %s", v->id, v->cash ? aml_errmsg(e->s) : "out of memory");
    }
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
        int64_t i;
        if (imap_get(&idx, t->no, &i)) {
            c->conductor = eng_intern(&e->strs, d[i - 1].str[0]);
            c->location = eng_intern(&e->strs, d[i - 1].str[1]);
            c->region = eng_intern(&e->strs, d[i - 1].str[2]);
        }
    }
    cash_details_free(d, nd, &idx);
    return 0;
}

/* ---- a focus account --------------------------------------------------------- */

/* The account's own row, and where its observed history starts (one statement: one round trip). */
static const char sql_account[] = "SELECT account_id, is_internal, opened_at, opening_deposit_minor, home_region, "
                                  "country, (SELECT min(observed_from) FROM coverage WHERE acct_no = ?1) "
                                  "FROM accounts WHERE acct_no = ?1";

static int load_account_row(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    aml_st *st = aml_stmt(e->s, sql_account);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    aml_bind_int(st, 1, acct);
    if (aml_step(st) != AML_ROW) {
        aml_reset(st);
        return aml_errf(err, "account #%lld is missing", (long long)acct);
    }
    snprintf(v->id, sizeof v->id, "%s", aml_col_text(st, 0));
    v->internal = (int)aml_col_int(st, 1);
    v->opened_at = eng_date_col(st, 2, &v->has_opened);
    v->has_opening_deposit = !aml_col_null(st, 3);
    v->opening_deposit = aml_col_int(st, 3);
    v->home_region = eng_intern(&e->strs, aml_col_text(st, 4));
    snprintf(v->country, sizeof v->country, "%s", aml_col_text(st, 5));
    v->obs_from = aml_col_null(st, 6) ? INT64_MIN : aml_col_int(st, 6);
    aml_reset(st);
    v->life_observed = v->obs_from != INT64_MIN && v->has_opened && v->opened_at >= aml_day_start(v->obs_from);
    return 0;
}

/* Customers: primary role first, then by id; the first one gives the name and the KYC profile. */
static const char sql_customers[] = "SELECT c.customer_id, c.full_name, c.customer_type, c.occupation, "
                                    "c.cash_intensive, c.expected_monthly_cash_minor, c.expected_monthly_volume_minor "
                                    "FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
                                    "WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id";

static int load_customers(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    aml_st *st = aml_stmt(e->s, sql_customers);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    aml_bind_int(st, 1, acct);
    while (aml_step(st) == AML_ROW) {
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
            v->cash_intensive = (int)aml_col_int(st, 4);
            v->has_exp_cash = !aml_col_null(st, 5);
            v->exp_cash = aml_col_int(st, 5);
            v->has_exp_volume = !aml_col_null(st, 6);
            v->exp_volume = aml_col_int(st, 6);
            v->has_kyc = v->has_exp_cash || v->has_exp_volume;
        }
    }
    aml_reset(st);
    return 0;
}

/* Accounts of the same customers (at least the account itself), ascending. */
static const char sql_siblings[] = "SELECT DISTINCT p2.acct_no FROM account_parties p1 JOIN account_parties p2 "
                                   "ON p2.customer_id = p1.customer_id WHERE p1.acct_no = ?";

static int load_siblings(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    size_t cap = 0;
    aml_st *st = aml_stmt(e->s, sql_siblings);
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(e->s));
    aml_bind_int(st, 1, acct);
    while (aml_step(st) == AML_ROW) {
        if (v->nsib == cap) {
            cap = cap ? cap * 2 : 8;
            int64_t *ns = realloc(v->siblings, cap * sizeof *ns);
            if (!ns) {
                aml_reset(st);
                return aml_errf(err, "out of memory");
            }
            v->siblings = ns;
        }
        v->siblings[v->nsib++] = aml_col_int(st, 0);
    }
    aml_reset(st);
    if (v->nsib == 0) {
        v->siblings = malloc(sizeof *v->siblings);
        if (!v->siblings)
            return aml_errf(err, "out of memory");
        v->siblings[v->nsib++] = acct;
    }
    aml_sort(v->siblings, v->nsib, sizeof *v->siblings, cmp_i64);
    return 0;
}

/* The account's transactions from far enough back for every look-back parameter to the window's end. */
static int64_t history_from(const eng *e)
{
    int64_t back = (int64_t)fmax(fmax(P(e, AML_T13, P13_KNOWN_LOOKBACK), P(e, AML_T03, P03_NEW_LOOKBACK)),
                                 P(e, AML_T04, P03_NEW_LOOKBACK));
    int64_t from = e->from - back * AML_DAY;
    int64_t t11 = e->to - (PI(e, AML_T11, P11_PERIOD) +
                           (int64_t)fmax(P(e, AML_T11, P11_BASELINE_DAYS), P(e, AML_T11, P11_SPIKE_DAYS))) *
                              AML_DAY;
    return t11 < from ? t11 : from;
}

static int load_history(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    int64_t from = history_from(e);
    v->load_from = from;
    size_t tcap = 0;
    if (load_edges(e, acct, DIR_OUT, from, e->to, -1, &v->tx, &v->ntx, &tcap))
        return aml_errf(err, "loading transactions of %s: %s", v->id, e->oom ? "out of memory" : aml_errmsg(e->s));
    size_t nout = v->ntx;
    if (load_edges(e, acct, DIR_IN, from, e->to, -1, &v->tx, &v->ntx, &tcap))
        return aml_errf(err, "loading transactions of %s: %s", v->id, e->oom ? "out of memory" : aml_errmsg(e->s));
    if (merge_by_time(v->tx, nout, v->ntx))
        return aml_errf(err, "out of memory");
    size_t i = 0;
    while (i < v->ntx && v->tx[i].at < e->from)
        i++;
    v->w0 = i;
    v->w1 = v->ntx;
    return 0;
}

/* One pass over the counterparties: the previous contact with each (for "new" and
 * "known" tests), and whether the first contact came before the window. */
static int index_counterparties(eng *e, acct_view *v, aml_err *err)
{
    size_t n1 = v->ntx ? v->ntx : 1;
    v->prev_cp_at = malloc(n1 * sizeof *v->prev_cp_at);
    v->known = calloc(n1, 1);
    int64_t *firstt = malloc(n1 * sizeof *firstt), *lastt = malloc(n1 * sizeof *lastt);
    imap idx;
    int rc = -1;
    if (!v->prev_cp_at || !v->known || !firstt || !lastt || imap_init(&idx, v->ntx / 2 + 64)) {
        free(firstt);
        free(lastt);
        return aml_errf(err, "out of memory");
    }
    int64_t ncp = 0, known_after = PI(e, AML_T05, P05_KNOWN_DAYS) * AML_DAY;
    for (size_t k = 0; k < v->ntx; k++) {
        v->prev_cp_at[k] = INT64_MIN;
        if (!v->tx[k].cp)
            continue;
        int64_t *slot = imap_slot(&idx, v->tx[k].cp);
        if (!slot)
            goto done;
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
        v->known[k] = firstt[c] < e->from || firstt[c] <= v->tx[k].at - known_after;
    }
    rc = 0;
done:
    imap_free(&idx);
    free(firstt);
    free(lastt);
    return rc ? aml_errf(err, "out of memory") : 0;
}

/* Sends sql ahead with the account and up to three more integers (n of them). */
static void send_ahead(eng *e, const char *sql, int64_t acct, int n, int64_t a, int64_t b, int64_t c)
{
    aml_st *st = aml_stmt(e->s, sql);
    if (!st)
        return;
    int64_t v[3] = {a, b, c};
    aml_bind_int(st, 1, acct);
    for (int i = 0; i < n; i++)
        aml_bind_int(st, i + 2, v[i]);
    aml_prefetch(st);
}

/*
 * Sends ahead the account's queries whose parameters are known before any is read (aml_prefetch: on
 * PostgreSQL one round trip for all of them instead of one each); each is then run as usual and answered
 * from what was sent ahead. The typologies' among them only when they run.
 */
static void send_view_queries(eng *e, int64_t acct)
{
    if (aml_store_backend(e->s) != AML_BACKEND_PG)
        return;
    int64_t from = history_from(e);
    send_ahead(e, sql_account, acct, 0, 0, 0, 0);
    send_ahead(e, sql_customers, acct, 0, 0, 0, 0);
    send_ahead(e, sql_siblings, acct, 0, 0, 0, 0);
    send_ahead(e, sql_out, acct, 3, from, e->to, INT64_MAX);
    send_ahead(e, sql_in, acct, 3, from, e->to, INT64_MAX);
    send_ahead(e, sql_cash_details, acct, 2, from, e->to, 0);
    if (e->mask & (1u << AML_T12))
        send_ahead(e, eng_sql_t12_amounts, acct, 3, e->from, e->to, PI(e, AML_T12, P12_MIN_AMOUNT));
    if ((e->mask & (1u << AML_T14)) && e->any_trade_docs)
        send_ahead(e, eng_sql_t14_docs, acct, 2, e->from, e->to, 0);
    if (e->mask & (1u << AML_T10))
        send_ahead(e, sql_last_before, acct, 1, from, 0, 0);
    if (e->mask & ((1u << AML_T11) | (1u << AML_T13)))
        send_ahead(e, sql_first, acct, 0, 0, 0, 0);
}

int eng_load_view(eng *e, int64_t acct, acct_view *v, aml_err *err)
{
    send_view_queries(e, acct);
    memset(v, 0, sizeof *v);
    v->acct = acct;
    if (load_account_row(e, acct, v, err) || load_customers(e, acct, v, err) || load_siblings(e, acct, v, err) ||
        load_history(e, acct, v, err) || index_counterparties(e, v, err))
        return -1;
    return load_cash_details(e, v, err);
}

void eng_view_free(acct_view *v)
{
    free(v->siblings);
    free(v->tx);
    free(v->prev_cp_at);
    free(v->known);
    free(v->cash);
    memset(v, 0, sizeof *v);
}

/* ---- beyond the focus account ------------------------------------------------ */

/* The node of acct in the run's neighbour table, added when new (NULL at the expansion bound). */
static gnode *gnode_of(eng *e, int64_t acct, int64_t max_exp, int *capped)
{
    int64_t idx;
    if (imap_get(&e->gidx, acct, &idx))
        return &e->gnodes[idx - 1];
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
    gnode *g = &e->gnodes[e->ngnodes++];
    memset(g, 0, sizeof *g);
    *slot = (int64_t)e->ngnodes;
    return g;
}

/* Both directions' statements for many accounts (PostgreSQL only): per account exactly sql_out's / sql_in's
 * rows, in their order, the accounts in the array's. */
static const char *const sql_out_many =
    "SELECT a.acct, t.txn_no, t.booked_at, t.to_acct, t.amount_base_minor, t.channel "
    "FROM unnest(CAST(?1 AS bigint[])) WITH ORDINALITY AS a(acct, k) CROSS JOIN LATERAL ("
    "SELECT txn_no, booked_at, to_acct, amount_base_minor, channel FROM transactions "
    "WHERE from_acct = a.acct AND booked_at BETWEEN ?2 AND ?3 "
    "ORDER BY booked_at, to_acct NULLS FIRST, amount_base_minor, channel, txn_no LIMIT ?4) t "
    "ORDER BY a.k, t.booked_at, t.to_acct NULLS FIRST, t.amount_base_minor, t.channel, t.txn_no";
static const char *const sql_in_many =
    "SELECT a.acct, t.txn_no, t.booked_at, t.from_acct, t.amount_base_minor, t.channel "
    "FROM unnest(CAST(?1 AS bigint[])) WITH ORDINALITY AS a(acct, k) CROSS JOIN LATERAL ("
    "SELECT txn_no, booked_at, from_acct, amount_base_minor, channel FROM transactions "
    "WHERE to_acct = a.acct AND booked_at BETWEEN ?2 AND ?3 "
    "ORDER BY booked_at, from_acct NULLS FIRST, amount_base_minor, channel, txn_no LIMIT ?4) t "
    "ORDER BY a.k, t.booked_at, t.from_acct NULLS FIRST, t.amount_base_minor, t.channel, t.txn_no";

#define AHEAD_MAX 128 /* accounts per statement read ahead */

/* The edges of acct in direction dir read ahead with this limit, or NULL. */
static ahead_edges *ahead_find(eng *e, int64_t acct, int dir)
{
    for (size_t i = 0; i < e->nahead; i++)
        if (e->ahead[i].acct == acct && e->ahead[i].dir == dir)
            return &e->ahead[i];
    return NULL;
}

/* 1 when eng_neighbour would load acct's edges in direction dir (not loaded, not read ahead). */
static int ahead_wanted(eng *e, int64_t acct, int dir)
{
    int64_t idx;
    if (imap_get(&e->gidx, acct, &idx)) {
        const gnode *g = &e->gnodes[idx - 1];
        if (dir == DIR_OUT ? g->out_loaded : g->in_loaded)
            return 0;
    }
    return ahead_find(e, acct, dir) == NULL;
}

void eng_neighbours_ahead(eng *e, const int64_t *accts, size_t n, int dir, int64_t max_exp, int64_t max_edges)
{
    if (aml_store_backend(e->s) != AML_BACKEND_PG || e->oom)
        return;
    int64_t want[AHEAD_MAX];
    size_t k = 0, left = max_exp > (int64_t)e->expansions ? (size_t)(max_exp - (int64_t)e->expansions) : 0;
    for (size_t i = 0; i < n && k < AHEAD_MAX && k < left; i++) {
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = want[j] == accts[i];
        if (accts[i] && !dup && ahead_wanted(e, accts[i], dir))
            want[k++] = accts[i];
    }
    if (k < 2)
        return; /* one account costs one round trip either way */
    if (e->nahead + k > e->capahead) {
        size_t nc = e->capahead ? e->capahead : 64;
        while (nc < e->nahead + k)
            nc *= 2;
        ahead_edges *na = realloc(e->ahead, nc * sizeof *na);
        if (!na)
            return;
        e->ahead = na;
        e->capahead = nc;
    }
    aml_st *st = aml_stmt(e->s, dir == DIR_OUT ? sql_out_many : sql_in_many);
    if (!st || aml_bind_int_array(st, 1, want, k))
        return;
    aml_bind_int(st, 2, e->from);
    aml_bind_int(st, 3, e->to);
    aml_bind_int(st, 4, max_edges < 0 ? INT64_MAX : max_edges);
    size_t first = e->nahead;
    for (size_t i = 0; i < k; i++)
        e->ahead[e->nahead++] = (ahead_edges){want[i], dir, max_edges, NULL, 0};
    size_t cur = first, cap = 0;
    int rc, ok = 1;
    while (ok && (rc = aml_step(st)) == AML_ROW) {
        int64_t acct = aml_col_int(st, 0);
        while (cur < e->nahead && e->ahead[cur].acct != acct) {
            cur++;
            cap = 0;
        }
        if (cur == e->nahead) {
            ok = 0; /* not in the array's order: keep nothing */
            break;
        }
        ahead_edges *a = &e->ahead[cur];
        int64_t cp = aml_col_null(st, 3) ? 0 : aml_col_int(st, 3);
        if (cp == acct)
            continue;
        if (a->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            etx *nr = realloc(a->rows, nc * sizeof *nr);
            if (!nr) {
                ok = 0;
                break;
            }
            a->rows = nr;
            cap = nc;
        }
        etx_read(st, 1, cp, dir, &a->rows[a->n++]);
    }
    if (!ok || rc != AML_DONE) {
        for (size_t i = first; i < e->nahead; i++)
            free(e->ahead[i].rows);
        e->nahead = first;
    }
    aml_reset(st);
}

void eng_ahead_free(eng *e)
{
    for (size_t i = 0; i < e->nahead; i++)
        free(e->ahead[i].rows);
    free(e->ahead);
    e->ahead = NULL;
    e->nahead = e->capahead = 0;
}

/* Takes the edges read ahead for acct into *arr as load_edges would have read them; 0, or -1 when none. */
static int ahead_take(eng *e, int64_t acct, int dir, int64_t limit, etx **arr, size_t *n)
{
    ahead_edges *a = ahead_find(e, acct, dir);
    if (!a || a->limit != limit)
        return -1;
    *arr = a->rows;
    *n = a->n;
    for (size_t i = 0; i < a->n; i++)
        hash_row(e, &a->rows[i]);
    *a = e->ahead[--e->nahead]; /* the entry goes; its rows now belong to the node */
    return 0;
}

gnode *eng_neighbour(eng *e, int64_t acct, int dir, int64_t max_exp, int64_t max_edges, int *capped)
{
    gnode *g = gnode_of(e, acct, max_exp, capped);
    if (!g)
        return NULL;
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
        if (ahead_take(e, acct, dir, max_edges, arr, n) && load_edges(e, acct, dir, e->from, e->to, max_edges, arr, n, &cap))
            return NULL;
        if ((int64_t)*n >= max_edges)
            *capped = 1;
        aml_sort(*arr, *n, sizeof **arr, cmp_etx);
        *loaded = 1;
    }
    return g;
}

/*
 * Both directions in one statement (one round trip on PostgreSQL); each scalar subquery is a single-table
 * max() that SQLite and PostgreSQL answer with one index seek. The typologies ask the same question several
 * times per account: the last answers are remembered for the run (the data does not change during it).
 */
int64_t eng_last_activity_before(eng *e, int64_t acct, int64_t t)
{
    for (size_t k = 0; k < e->nlast; k++)
        if (e->last[k].acct == acct && e->last[k].t == t)
            return e->last[k].r;
    int64_t r = INT64_MIN;
    aml_st *st = aml_stmt(e->s, sql_last_before);
    if (!st)
        return INT64_MIN;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, t);
    int ok = aml_step(st) == AML_ROW;
    for (int k = 0; ok && k < 2; k++)
        if (!aml_col_null(st, k) && aml_col_int(st, k) > r)
            r = aml_col_int(st, k);
    aml_reset(st);
    if (!ok)
        return r;
    size_t slot = e->nlast < ENG_LAST_MEMO ? e->nlast++ : (e->last_next++ % ENG_LAST_MEMO);
    e->last[slot].acct = acct;
    e->last[slot].t = t;
    e->last[slot].r = r;
    return r;
}

/* The account's earliest transaction (either direction, self-transfers too), INT64_MAX when none; the
 * answer for the last account asked is remembered. */
int64_t eng_first_activity(eng *e, int64_t acct)
{
    if (e->first_have && e->first_acct == acct)
        return e->first_at;
    int64_t r = INT64_MAX;
    aml_st *st = aml_stmt(e->s, sql_first);
    if (!st)
        return r;
    aml_bind_int(st, 1, acct);
    int ok = aml_step(st) == AML_ROW;
    for (int k = 0; ok && k < 2; k++)
        if (!aml_col_null(st, k) && aml_col_int(st, k) < r)
            r = aml_col_int(st, k);
    aml_reset(st);
    if (ok) {
        e->first_have = 1;
        e->first_acct = acct;
        e->first_at = r;
    }
    return r;
}
