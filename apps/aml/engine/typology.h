/*
 * Inside the typology engine: what a typology function sees. Private to the
 * engine's files (engine.c, load.c, finding.c and the typology families
 * cash.c, flow.c, graph.c, profile.c, exposure.c); the rest of the program
 * uses engine.h.
 *
 *   - containers: an int64 hash map and a string interner;
 *   - eng: one run over a case (store, parameters, window, the data digest,
 *     graph neighbours loaded so far, jurisdiction lists, FX rates);
 *   - acct_view: one focus account, loaded (load.c): its transactions sorted
 *     by (booked_at, txn_no), counterparty history, cash details, KYC;
 *   - fbuild: the finding builder (finding.c): metrics JSON, the score as a
 *     list of components, evidence;
 *   - the typology functions, one per catalog entry.
 *
 * Amounts are USD cents (amount_base_minor); times are seconds.
 */
#ifndef AML_TYPOLOGY_H
#define AML_TYPOLOGY_H

#include "engine/engine.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- containers (load.c) ------------------------------------------------ */

#define EMPTY_KEY INT64_MIN

/* Open-addressing map int64 -> int64 (no deletion; counts may drop to 0). */
typedef struct imap {
    int64_t *keys, *vals;
    size_t cap, n;
} imap;

int imap_init(imap *m, size_t hint);
void imap_free(imap *m);
int imap_grow(imap *m);

static inline size_t ihash(int64_t k, size_t cap)
{
    uint64_t x = (uint64_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

/* Pointer to the value slot of k, inserting it with 0 when absent; NULL on OOM. */
static inline int64_t *imap_slot(imap *m, int64_t k)
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

static inline int imap_get(const imap *m, int64_t k, int64_t *v)
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

int eng_intern(interner *in, const char *s);
const char *eng_interned(const interner *in, int id);
void eng_interner_free(interner *in);

/* ---- transactions and accounts as the engine sees them ------------------ */

enum { CH_CASH, CH_WIRE, CH_ACH, CH_CHECK, CH_CARD, CH_INTERNAL, CH_CRYPTO, CH_OTHER };
enum { DIR_IN = 1, DIR_OUT = 2 };

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
    unsigned char *known;     /* per tx: first contact before the window, or T05 knownPayeeDays or more before */
    cash_row *cash;           /* cash rows of this account, [load_from, to] */
    size_t ncash;
    int64_t load_from;
    int64_t obs_from;         /* complete history from here (coverage table), INT64_MIN when unrecorded */
    int life_observed;        /* opened on or after obs_from: the account's whole life is in the store */
} acct_view;

/* Neighbour edges for the graph searches. */
typedef struct gnode {
    etx *out, *in;
    size_t nout, nin;
    int out_loaded, in_loaded;
} gnode;

/* Neighbour edges read ahead on PostgreSQL (eng_neighbours_ahead), kept until eng_neighbour asks for them. */
typedef struct ahead_edges {
    int64_t acct;   /* the account */
    int dir;        /* DIR_OUT or DIR_IN */
    int64_t limit;  /* the row limit they were read with */
    etx *rows;      /* in the statement's order, self-transfers left out, not yet digested (malloc) */
    size_t n;       /* rows */
} ahead_edges;

/* A dated jurisdiction list entry. */
typedef struct jrow {
    char list[32], country[8];
    int64_t from, to; /* effective [from, to); to = INT64_MAX when open */
} jrow;

/* A dated FX rate: 1 major unit = num/den USD. */
typedef struct fxrow {
    char cur[8];
    int64_t date, num, den;
} fxrow;

struct party;

/* One engine run over a case. */
#define ENG_LAST_MEMO 8 /* answers of eng_last_activity_before remembered per run */

typedef struct eng {
    aml_store *s;
    struct party *pc[3];      /* T08: the focus account's parties per direction (cached, graph.c) */
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
    ahead_edges *ahead;       /* neighbour edges read ahead and not used yet (PostgreSQL) */
    size_t nahead, capahead;
    jrow *jl;
    size_t njl;
    imap listed;              /* acct_no -> 1 for accounts in a listed country */
    int any_country;          /* some account has a country at all */
    int any_trade_docs;       /* the store holds trade documents */
    fxrow *fx;
    size_t nfx;
    int oom;
    int lean;                 /* the scan's first pass: no metrics, explanations or data digest */
    struct {
        int64_t acct, t, r;
    } last[ENG_LAST_MEMO];    /* eng_last_activity_before's last answers */
    size_t nlast, last_next;
    int shared;               /* jl, fx and listed belong to an aml_engine_ctx */
    unsigned mask;            /* the typologies that run */
    int first_have;           /* eng_first_activity's last answer: */
    int64_t first_acct, first_at;
    aml_screener *scr;        /* T15's screening (NULL when T15 is not run) */
    int scr_own;              /* made by this run, freed with it */
} eng;

/* A parameter of typology t, as a real or rounded to an integer. */
static inline double P(const eng *e, int t, int i)
{
    return e->p->v[t][i];
}

static inline int64_t PI(const eng *e, int t, int i)
{
    return (int64_t)llround(e->p->v[t][i]);
}

static inline int cmp_etx(const void *a, const void *b)
{
    const etx *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static inline int cmp_cash(const void *a, const void *b)
{
    const cash_row *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static inline int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the first transaction at or after t. */
static inline size_t lower_at(const etx *tx, size_t n, int64_t t)
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

/* acct belongs to one of the view's customers. */
static inline int is_sibling(const acct_view *v, int64_t acct)
{
    return bsearch(&acct, v->siblings, v->nsib, sizeof *v->siblings, cmp_i64) != NULL;
}

/*
 * Observation coverage (docs/aml.md "Observation coverage"): at time `at`, the store holds at
 * least `days` of the account's history before it, or its whole life. Unrecorded coverage (stores
 * written without it) counts as observed, as before coverage existed.
 */
static inline int observed_for(const acct_view *v, int64_t at, int64_t days)
{
    return v->obs_from == INT64_MIN || v->life_observed || at - v->obs_from >= days * AML_DAY;
}

/* Days of history observed before `at` (for "not evaluable" messages). */
static inline int64_t observed_days(const acct_view *v, int64_t at)
{
    return v->obs_from == INT64_MIN ? -1 : at > v->obs_from ? (at - v->obs_from) / AML_DAY : 0;
}

/* Hours between two times, honouring day-granular data (a same-day pair counts as within a day). */
static inline int within(const eng *e, int64_t t0, int64_t t1, int64_t hours)
{
    if (e->daygran) {
        int64_t days = (hours + 23) / 24;
        return t1 >= t0 && t1 - t0 <= days * AML_DAY;
    }
    return t1 > t0 && t1 - t0 <= hours * AML_HOUR;
}

/* Strictly later, or the same day on day-granular data. */
static inline int later(const eng *e, int64_t t0, int64_t t1)
{
    return e->daygran ? t1 >= t0 : t1 > t0;
}

/* ---- loading (load.c) --------------------------------------------------- */

/* A date column as seconds; *ok = 0 when NULL or not a date. */
int64_t eng_date_col(aml_st *st, int i, int *ok);
/** Loads a focus account: its row, customers, sibling accounts and history. */
int eng_load_view(eng *e, int64_t acct, acct_view *v, aml_err *err);
void eng_view_free(acct_view *v);
/** Appends the cash transactions of `acct` in [from, to] to *arr (T01: the customer's other accounts). */
int eng_load_cash(eng *e, int64_t acct, int64_t from, int64_t to, cash_row **arr, size_t *n, size_t *cap);
/** Neighbour edges in one direction, loaded once per run and bounded. NULL when the bound is hit. */
gnode *eng_neighbour(eng *e, int64_t acct, int dir, int64_t max_exp, int64_t max_edges, int *capped);
/**
 * On PostgreSQL, reads the edges eng_neighbour would load for the accounts accts[0, n) in direction dir, in
 * one statement (one round trip instead of one per account), and keeps them for it: results, the expansion
 * count and the data digest are as without it (the rows are counted and digested when eng_neighbour takes
 * them). Accounts already loaded or read ahead are left out; at most as many as the expansions left. A
 * no-op on SQLite and on any error.
 */
void eng_neighbours_ahead(eng *e, const int64_t *accts, size_t n, int dir, int64_t max_exp, int64_t max_edges);
/** Frees the edges read ahead (the run's end). */
void eng_ahead_free(eng *e);
/* SQL texts the loader sends ahead for the typologies that run them (cash.c, exposure.c). */
extern const char eng_sql_t12_amounts[];
extern const char eng_sql_t14_docs[];
/** Earliest activity of an account (INT64_MAX when none): "any activity before t" is first < t. */
int64_t eng_first_activity(eng *e, int64_t acct);
/** Latest activity of an account strictly before t (INT64_MIN when none). */
int64_t eng_last_activity_before(eng *e, int64_t acct, int64_t t);

/* ---- the finding builder (finding.c) ------------------------------------ */

typedef struct comp {
    char what[112];
    int pts;
} comp;

typedef struct fbuild {
    aml_finding *f;
    mcp_buf mb;
    mcp_jw mw;    /* the metrics object being written */
    comp comps[16];
    int ncomps;
    aml_evidence *ev;
    size_t nev, cap;
    int64_t ev_total;
    eng *e;
} fbuild;

/* Starts a finding of typology typ about acct, with an open metrics object. */
void fb_init(fbuild *b, eng *e, aml_finding *f, int typ, int64_t acct);
/* Metrics, in the order they are written. */
void fb_int(fbuild *b, const char *k, int64_t v);
void fb_dbl(fbuild *b, const char *k, double v); /* rounded to 4 decimals */
void fb_str(fbuild *b, const char *k, const char *v);
void fb_date(fbuild *b, const char *k, int64_t t);
void fb_bool(fbuild *b, const char *k, int v);
/* A score component: its points count when the finding matches (0 points: left out). */
void fb_comp(fbuild *b, int pts, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Evidence: a transaction with its role (trigger or context). */
void fb_ev(fbuild *b, const etx *t, int role);
void fb_ev_cash(fbuild *b, const cash_row *c, int role);
/* The plain-language explanation. */
void fb_explain(fbuild *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The inputs a not-evaluable finding lacks (b may be NULL). */
void fb_missing(fbuild *b, const char *a, const char *c);
/* Closes the metrics, computes the score and orders the evidence. */
void fb_finish(fbuild *b, int status);
/* Not evaluable for lack of observed history: "N days of history before <at>, M needed" (who: what
 * could not be judged new, e.g. "beneficiaries"). */
void eng_short_history(fbuild *b, const acct_view *v, int64_t at, int64_t need_days, const char *who);
/* "not evaluated: out of memory". */
void fb_oom(fbuild *b);
/* Discards a builder that will not be used (its finding is cleared). */
void fb_discard(fbuild *b);
void eng_finding_clear(aml_finding *f);
double eng_round4(double x);

/* Small statistics for metrics. */
double eng_median_i64(int64_t *a, size_t n); /* sorts a */
double eng_cv_of(const int64_t *a, size_t n);

/* Formatting helpers for explanations. */
typedef struct money {
    char s[48];
} money;

static inline money usd(int64_t cents)
{
    money m;
    aml_fmt_usd(cents, m.s, sizeof m.s);
    return m;
}

typedef struct dstr {
    char s[11];
} dstr;

static inline dstr day(int64_t t)
{
    dstr d;
    aml_fmt_date(t, d.s);
    return d;
}

static inline const char *plural(int64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* ---- the typologies, by family ------------------------------------------ */

typedef void (*typology_fn)(eng *e, const acct_view *v, aml_finding *out);

/* cash.c: amounts shaped around thresholds and units. */
void t01_structuring(eng *e, const acct_view *v, aml_finding *out);
void t02_funnel(eng *e, const acct_view *v, aml_finding *out);
void t12_round_amounts(eng *e, const acct_view *v, aml_finding *out);
/* flow.c: who pays the account and where the money goes next. */
void t03_fan_in(eng *e, const acct_view *v, aml_finding *out);
void t04_fan_out(eng *e, const acct_view *v, aml_finding *out);
void t05_rapid_movement(eng *e, const acct_view *v, aml_finding *out);
void t06_money_mule(eng *e, const acct_view *v, aml_finding *out);
void t13_third_party(eng *e, const acct_view *v, aml_finding *out);
/* graph.c: bounded searches beyond the focus account. */
void t07_cycle(eng *e, const acct_view *v, aml_finding *out);
void t08_layering(eng *e, const acct_view *v, aml_finding *out);
/* profile.c: the account against its own history and KYC profile. */
void t10_dormant(eng *e, const acct_view *v, aml_finding *out);
void t11_profile(eng *e, const acct_view *v, aml_finding *out);
/* exposure.c: the account against reference data (jurisdiction lists, trade documents). */
void t09_jurisdiction(eng *e, const acct_view *v, aml_finding *out);
void t14_trade(eng *e, const acct_view *v, aml_finding *out);
/* sanctions.c: the account's customers and counterparties against the screening lists. */
void t15_sanctions(eng *e, const acct_view *v, aml_finding *out);
/* The lists key of the run's screener ("" when no list is loaded). */
const char *eng_screener_key(const eng *e);

#endif /* AML_TYPOLOGY_H */
