/*
 * The synthetic data generator (see gen.h).
 *
 * Everything is drawn from one xoshiro256** stream seeded by --seed, in a
 * fixed order, so the output is a function of the options. Amounts are USD
 * cents; background amounts always carry cents, so that only injected T12
 * instances (and look-alikes that must fail it) use round amounts.
 *
 * The native bank: recurring monthly flows (salary, rent, pensions, client
 * payments, payroll) start 95 days before the first day, so that regular
 * counterparties are already known when the window opens; everyday flows
 * (cards, cash, ATM, transfers) fill the --days period. Each injected
 * instance gets a subject of its own with ordinary background activity,
 * and the pattern is laid over it near the end of the period; an alert
 * case with a neutral title is opened around it. Look-alikes get the same
 * treatment. The ground truth (gt_instances) records per case which
 * typology was injected and which others the construction also satisfies
 * by definition (aml_gen_overlap), e.g. a funnel account is also a
 * third-party deposit pattern.
 */
#include "commands/gen.h"
#include "engine/fincen.h"
#include "engine/catalog.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the in-memory dataset ----------------------------------------------------- */

enum { GCH_CASH, GCH_WIRE, GCH_ACH, GCH_CHECK, GCH_CARD, GCH_INTERNAL, GCH_CRYPTO, GCH_OTHER };
static const char *const gch_names[] = {"cash", "wire", "ach", "check", "card", "internal", "crypto", "other"};
static const char *const aw_formats[] = {"Cash", "Wire", "ACH", "Cheque", "Credit Card", "Reinvestment", "Bitcoin",
                                         "ACH"};

typedef struct gcust {
    char id[24];
    int entity;
    char name[80], first[32], last[40];
    const char *occ;
    const char *naics;
    const char *region;
    char dob[11];
    int cash_int;
    int64_t exp_cash, exp_vol, income;
    char onboard[11];
} gcust;

typedef struct gacct {
    char id[32];
    int internal;
    const char *bank;
    const char *type;
    char opened[11];
    int has_dep;
    int64_t dep;
    int branch; /* index into branches, -1 */
    const char *country;
    char holder[80];
    int cust;   /* -1 for external accounts without a customer */
    int employer; /* the account paying its salary, -1 */
    int family;   /* the account it sends family transfers to, -1 */
    int aw_bank;
    char aw_acct[12];
    int64_t hist_day; /* internal: the generated history is complete from this day (coverage) */
} gacct;

typedef struct gtx {
    int64_t at;
    int64_t amt;
    int32_t from, to; /* account index, -1 = none (cash) */
    int32_t inst;     /* ground-truth instance, -1 */
    int32_t cond;     /* conductor: customer index (>= 0), person -(k+1), or INT32_MIN */
    int32_t uid;      /* creation order */
    int16_t loc;      /* branch index, -1 */
    uint8_t ch;
    uint8_t cur;      /* AMLworld currency index */
    const char *type;
} gtx;

typedef struct gtrade {
    char doc[16];
    int32_t tx_uid;
    char buyer[80], seller[80];
    int64_t invoice;
    const char *goods, *hs;
    const char *origin, *dest;
} gtrade;

typedef struct gcase {
    char id[24];
    int64_t from, to;
    char detection[11], opened[11];
    int accts[8];
    int naccts;
} gcase;

typedef struct ginst {
    char id[24];
    int typ;
    int lookalike;
    char variant[24];
    int casei;
    int accts[48];
    int naccts;
    const char *awlabel; /* AMLworld pattern name */
    char awdetail[48];
} ginst;

typedef struct gen {
    aml_rng r;
    const aml_gen_opts *o;
    int64_t start;  /* first day, seconds */
    int days;
    gcust *c;
    size_t nc, capc;
    gacct *a;
    size_t na, capa;
    gtx *t;
    size_t nt, capt;
    gtrade *tr;
    size_t ntr, captr;
    gcase *cs;
    size_t ncs, capcs;
    ginst *in;
    size_t nin, capin;
    int oom;
    /* pools */
    int employers[12], merchants[40], landlords[10], utilities[8], pension, acquirer;
    int nperson;
    int ext_seq, cust_seq, acct_seq;
    int64_t quiet_until; /* bg_person: no everyday flows before this day (BG_QUIET) */
    int *bg;          /* accounts of background customers (family transfers go only there) */
    size_t nbg, capbg;
} gen;

#define GROW(arr, n, cap)                                                \
    do {                                                                 \
        if ((n) == (cap)) {                                              \
            size_t nc_ = (cap) ? (cap) * 2 : 256;                        \
            void *np_ = realloc((arr), nc_ * sizeof *(arr));             \
            if (!np_) {                                                  \
                g->oom = 1;                                              \
                return -1;                                               \
            }                                                            \
            (arr) = np_;                                                 \
            (cap) = nc_;                                                 \
        }                                                                \
    } while (0)

/* Regions and branches of the bank. */
static const char *const regions[] = {"CA", "NY", "TX", "FL", "IL", "WA"};
#define NREGIONS 6
#define BR_PER_REGION 3
static const char *branch_id(int b, char *buf, size_t n)
{
    snprintf(buf, n, "BR-%s-%d", regions[b / BR_PER_REGION], b % BR_PER_REGION + 1);
    return buf;
}
static const char *branch_region(int b)
{
    return regions[b / BR_PER_REGION];
}

static const char *const first_names[] = {"James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael",
                                          "Linda", "David", "Elizabeth", "William", "Barbara", "Richard", "Susan",
                                          "Joseph", "Jessica", "Thomas", "Sarah", "Carlos", "Karen", "Daniel",
                                          "Nancy", "Matthew", "Lisa", "Anthony", "Betty", "Mark", "Sandra", "Ahmed",
                                          "Ashley", "Steven", "Kimberly", "Paul", "Emily", "Andrew", "Donna", "Wei",
                                          "Michelle", "Kenji", "Olga"};
static const char *const last_names[] = {"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller",
                                         "Davis", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez",
                                         "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
                                         "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark",
                                         "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
                                         "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores"};
static const char *const company_words[] = {"Harbor", "Summit", "Pioneer", "Atlas", "Cedar", "Beacon", "Granite",
                                            "Maple", "Orion", "Sterling", "Vista", "Redwood", "Keystone", "Liberty",
                                            "Meridian", "Northwind", "Silverline", "Bluewater", "Ironwood", "Crescent"};
static const char *const company_kinds[] = {"Trading", "Logistics", "Supply", "Holdings", "Foods", "Imports",
                                            "Services", "Consulting", "Electronics", "Textiles"};

#define PICK(arr) (arr)[aml_rng_range(&g->r, 0, (int64_t)(sizeof(arr) / sizeof((arr)[0])) - 1)]

static int64_t day_at(gen *g, int64_t day, int h0, int h1)
{
    int64_t sec = aml_rng_range(&g->r, (int64_t)h0 * 3600, (int64_t)h1 * 3600 - 1);
    return g->start + day * AML_DAY + sec;
}

/* Uniform amount in [lo, hi] dollars, always with non-zero cents. */
static int64_t money(gen *g, double lo, double hi)
{
    int64_t v = aml_rng_range(&g->r, (int64_t)(lo * 100), (int64_t)(hi * 100));
    if (v % 100 == 0)
        v += aml_rng_range(&g->r, 1, 99);
    return v;
}

static void date_of(gen *g, int64_t day, char *out)
{
    aml_fmt_date(g->start + day * AML_DAY, out);
}

static int add_cust(gen *g, int entity, const char *occ, int cash_int)
{
    GROW(g->c, g->nc, g->capc);
    gcust *c = &g->c[g->nc];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "C-%05d", ++g->cust_seq);
    c->entity = entity;
    c->occ = occ;
    c->region = PICK(regions);
    if (entity) {
        snprintf(c->name, sizeof c->name, "%s %s %s", PICK(company_words), PICK(company_kinds),
                 aml_rng_chance(&g->r, 0.5) ? "LLC" : "Inc.");
        c->naics = cash_int ? "445110" : "423990";
    } else {
        snprintf(c->first, sizeof c->first, "%s", PICK(first_names));
        snprintf(c->last, sizeof c->last, "%s", PICK(last_names));
        snprintf(c->name, sizeof c->name, "%s %s", c->first, c->last);
        date_of(g, -aml_rng_range(&g->r, 19 * 365, 75 * 365), c->dob);
    }
    c->cash_int = cash_int;
    date_of(g, -aml_rng_range(&g->r, 400, 3000), c->onboard);
    return (int)g->nc++;
}

static int add_acct(gen *g, int cust, int internal, const char *country, int64_t opened_day)
{
    GROW(g->a, g->na, g->capa);
    gacct *a = &g->a[g->na];
    memset(a, 0, sizeof *a);
    a->internal = internal;
    a->cust = cust;
    a->branch = -1;
    a->employer = -1;
    a->family = -1;
    a->hist_day = -95; /* recurring flows start 95 days before the first day */
    a->country = country ? country : "US";
    if (internal) {
        snprintf(a->id, sizeof a->id, "ACC-%06d", 100000 + ++g->acct_seq);
        a->bank = "BANK-001";
        a->type = cust >= 0 && g->c[cust].entity ? "business" : "checking";
        const char *reg = cust >= 0 ? g->c[cust].region : regions[0];
        int ri = 0;
        for (int i = 0; i < NREGIONS; i++)
            if (strcmp(regions[i], reg) == 0)
                ri = i;
        a->branch = ri * BR_PER_REGION + (int)aml_rng_range(&g->r, 0, BR_PER_REGION - 1);
        date_of(g, opened_day, a->opened);
        a->has_dep = 1;
        a->dep = money(g, 50, 2500);
    } else {
        snprintf(a->id, sizeof a->id, "EXT-%05d", ++g->ext_seq);
        static const char *const banks[] = {"BANK-101", "BANK-102", "BANK-103", "BANK-104", "BANK-105", "BANK-106"};
        a->bank = PICK(banks);
        a->type = "external";
    }
    if (cust >= 0)
        snprintf(a->holder, sizeof a->holder, "%s", g->c[cust].name);
    a->aw_bank = (int)aml_rng_range(&g->r, 1, 40);
    snprintf(a->aw_acct, sizeof a->aw_acct, "%08llX%01X", (unsigned long long)(0x80000000ull + (uint64_t)g->na * 7919u),
             (unsigned)(g->na % 16));
    return (int)g->na++;
}

/* An external counterparty with a holder name (a person or a company). */
static int ext_party(gen *g, int company, const char *country)
{
    int k = add_acct(g, -1, 0, country, 0);
    if (k < 0)
        return -1;
    if (company)
        snprintf(g->a[k].holder, sizeof g->a[k].holder, "%s %s %s", PICK(company_words), PICK(company_kinds),
                 aml_rng_chance(&g->r, 0.5) ? "Ltd" : "Corp");
    else
        snprintf(g->a[k].holder, sizeof g->a[k].holder, "%s %s", PICK(first_names), PICK(last_names));
    return k;
}

static int add_tx(gen *g, int64_t at, int from, int to, int64_t amt, int ch, const char *type, int inst)
{
    GROW(g->t, g->nt, g->capt);
    gtx *t = &g->t[g->nt];
    t->at = at;
    t->amt = amt;
    t->from = from;
    t->to = to;
    t->inst = inst;
    t->cond = INT32_MIN;
    t->uid = (int32_t)g->nt;
    t->loc = -1;
    t->ch = (uint8_t)ch;
    t->cur = 0;
    t->type = type;
    return (int)g->nt++;
}

/* A cash deposit (from NULL) or withdrawal (to NULL) at a branch, by a conductor. */
static int cash_tx(gen *g, int64_t at, int acct, int deposit, int64_t amt, int branch, int32_t cond, int inst)
{
    int k = add_tx(g, at, deposit ? -1 : acct, deposit ? acct : -1, amt, GCH_CASH,
                   deposit ? "cash deposit" : "cash withdrawal", inst);
    if (k >= 0) {
        g->t[k].loc = (int16_t)branch;
        g->t[k].cond = cond;
    }
    return k;
}

static int other_branch(gen *g, int home)
{
    for (;;) {
        int b = (int)aml_rng_range(&g->r, 0, NREGIONS * BR_PER_REGION - 1);
        if (b / BR_PER_REGION != home / BR_PER_REGION)
            return b;
    }
}

#define CHECK(x)         \
    do {                 \
        if ((x) < 0)     \
            return -1;   \
    } while (0)

/* ---- background activity ----------------------------------------------------------- */

enum { BG_SALARIED, BG_STUDENT, BG_RETIRED, BG_SHOP, BG_COMPANY, BG_NONE, BG_QUIET, BG_GROWING, BG_FAMILY };

/* A background customer's account: the only ones random people send money to. */
static int internal_random(gen *g)
{
    if (!g->nbg)
        return -1;
    return g->bg[aml_rng_range(&g->r, 0, (int64_t)g->nbg - 1)];
}

/* A salaried, student or retired customer: income and rent monthly, then everyday spending. */
static int bg_person(gen *g, int acct, int kind, int64_t from_day)
{
    gcust *c = &g->c[g->a[acct].cust];
    int days = g->days;
    int home = g->a[acct].branch;
    int32_t self = g->a[acct].cust;
    int src = kind == BG_SALARIED ? g->employers[aml_rng_range(&g->r, 0, 11)]
              : kind == BG_RETIRED ? g->pension
                                   : ext_party(g, 0, "US");
    int64_t pay = kind == BG_SALARIED ? money(g, 2800, 8500) : kind == BG_RETIRED ? money(g, 1500, 3500)
                                                                                   : money(g, 300, 1200);
    g->a[acct].employer = src;
    g->a[acct].family = internal_random(g);
    int landlord = g->landlords[aml_rng_range(&g->r, 0, 9)];
    int64_t rent = kind == BG_STUDENT ? money(g, 400, 900) : money(g, 900, 2600);
    int payday = (int)aml_rng_range(&g->r, 0, 27);
    for (int64_t m = from_day; m < days; m += 30) {
        int64_t d = m + payday;
        if (d >= days)
            break;
        if (add_tx(g, day_at(g, d, 6, 9), src, acct, pay, GCH_ACH, kind == BG_SALARIED ? "payroll" : "benefit", -1) < 0 ||
            add_tx(g, day_at(g, d + aml_rng_range(&g->r, 2, 6) < days ? d + 3 : d, 9, 18), acct, landlord, rent,
                   GCH_ACH, "rent", -1) < 0)
            return -1;
    }
    int64_t spend_hi = kind == BG_STUDENT ? 80 : 180;
    int per_month = kind == BG_STUDENT ? 10 : 18;
    for (int64_t d = g->quiet_until > 0 ? g->quiet_until : 0; d < days; d++) {
        if (aml_rng_chance(&g->r, per_month / 30.0) &&
            add_tx(g, day_at(g, d, 8, 22), acct, g->merchants[aml_rng_range(&g->r, 0, 39)], money(g, 5, (double)spend_hi),
                   GCH_CARD, "card purchase", -1) < 0)
            return -1;
        if (aml_rng_chance(&g->r, 1.5 / 30) && cash_tx(g, day_at(g, d, 8, 22), acct, 0, money(g, 40, 400), home, self, -1) < 0)
            return -1;
        if (aml_rng_chance(&g->r, 1.0 / 30) &&
            add_tx(g, day_at(g, d, 8, 22), acct, g->utilities[aml_rng_range(&g->r, 0, 7)], money(g, 30, 220), GCH_ACH,
                   "utility bill", -1) < 0)
            return -1;
        if (aml_rng_chance(&g->r, 0.8 / 30)) {
            int to = g->a[acct].family;
            if (to >= 0 && to != acct &&
                add_tx(g, day_at(g, d, 8, 22), acct, to, money(g, 50, 600), GCH_INTERNAL, "transfer", -1) < 0)
                return -1;
        }
    }
    c->exp_vol = pay + pay / 4;
    c->exp_cash = 50000;
    c->income = pay * 12;
    return 0;
}

/* A shop: cash takings most days, card settlements weekly, suppliers and staff paid. */
static int bg_shop(gen *g, int acct, int64_t from_day)
{
    gcust *c = &g->c[g->a[acct].cust];
    int days = g->days;
    int home = g->a[acct].branch;
    int32_t self = g->a[acct].cust;
    int suppliers[3];
    int64_t supp_amt[3];
    for (int i = 0; i < 3; i++) {
        suppliers[i] = ext_party(g, 1, "US");
        supp_amt[i] = money(g, 1500, 9000);
    }
    int staff[3];
    for (int i = 0; i < 3; i++)
        staff[i] = ext_party(g, 0, "US");
    int64_t wage = money(g, 1200, 2800);
    for (int64_t d = from_day; d < days; d++) {
        int wd = (int)((d % 7 + 7) % 7);
        if (d >= 0 && wd < 6 && aml_rng_chance(&g->r, 0.85) &&
            cash_tx(g, day_at(g, d, 16, 20), acct, 1, money(g, 1000, 7500), home, self, -1) < 0)
            return -1;
        if (wd == 2 && add_tx(g, day_at(g, d, 3, 6), g->acquirer, acct, money(g, 2000, 9000), GCH_ACH,
                              "card settlement", -1) < 0)
            return -1;
        if (wd == 4) {
            int s = (int)aml_rng_range(&g->r, 0, 2);
            if (add_tx(g, day_at(g, d, 9, 17), acct, suppliers[s], supp_amt[s] + aml_rng_range(&g->r, -20000, 20000),
                       GCH_ACH, "supplier payment", -1) < 0)
                return -1;
        }
        if (((d % 14) + 14) % 14 == 5)
            for (int i = 0; i < 3; i++)
                if (add_tx(g, day_at(g, d, 6, 9), acct, staff[i], wage + i * 1117, GCH_ACH, "payroll", -1) < 0)
                    return -1;
    }
    c->exp_cash = 9000000;
    c->exp_vol = 12000000;
    return 0;
}

/* A company: clients pay invoices by wire, staff are paid monthly. */
static int bg_company(gen *g, int acct, int64_t from_day)
{
    gcust *c = &g->c[g->a[acct].cust];
    int days = g->days;
    int nclients = (int)aml_rng_range(&g->r, 4, 6), nstaff = (int)aml_rng_range(&g->r, 6, 14);
    int clients[6], staff[14];
    int64_t camt[6], wage[14], total = 0;
    for (int i = 0; i < nclients; i++) {
        clients[i] = ext_party(g, 1, "US");
        camt[i] = money(g, 8000, 45000);
        total += camt[i];
    }
    for (int i = 0; i < nstaff; i++) {
        staff[i] = ext_party(g, 0, "US");
        wage[i] = money(g, 2200, 6500);
    }
    int payday = (int)aml_rng_range(&g->r, 0, 27);
    for (int64_t m = from_day; m < days; m += 30) {
        for (int i = 0; i < nclients; i++) {
            int64_t d = m + aml_rng_range(&g->r, 0, 29);
            if (d < days && add_tx(g, day_at(g, d, 8, 18), clients[i], acct, camt[i] + aml_rng_range(&g->r, -50000, 50000),
                                   GCH_WIRE, "invoice payment", -1) < 0)
                return -1;
        }
        int64_t d = m + payday;
        if (d < days)
            for (int i = 0; i < nstaff; i++)
                if (add_tx(g, day_at(g, d, 5, 8), acct, staff[i], wage[i], GCH_ACH, "payroll", -1) < 0)
                    return -1;
    }
    c->exp_vol = total + total / 5;
    c->exp_cash = 100000;
    return 0;
}

/*
 * Look-alikes of the rules that misfired at bank size (issue 17), as ordinary background:
 * a long-standing account whose stored history starts with a quiet spell of 40-80 days
 * (travel, a second bank) and then carries salary, rent and spending as usual; a company whose
 * supplier list grows by one new supplier every 5-9 days; a student supported by two or three
 * relatives every month, plus a birthday gift from a new one.
 */
static int bg_quiet(gen *g, int acct)
{
    int64_t quiet = aml_rng_range(&g->r, 40, 80);
    g->quiet_until = -95 + quiet; /* bg_person's everyday flows start then too */
    int rc = bg_person(g, acct, BG_SALARIED, -95 + quiet);
    g->quiet_until = 0;
    return rc;
}

static int bg_growing(gen *g, int acct, int64_t from_day)
{
    if (bg_company(g, acct, from_day))
        return -1;
    for (int64_t d = aml_rng_range(&g->r, 0, 8); d < g->days; d += aml_rng_range(&g->r, 5, 9)) {
        int supp = ext_party(g, 1, "US");
        CHECK(supp);
        int64_t amt = money(g, 1500, 6000);
        for (int64_t m = d; m < g->days; m += 30) /* then paid monthly */
            CHECK(add_tx(g, day_at(g, m, 9, 17), acct, supp, amt + aml_rng_range(&g->r, -9000, 9000), GCH_ACH,
                         "supplier payment", -1));
    }
    g->c[g->a[acct].cust].exp_vol *= 2;
    return 0;
}

static int bg_family(gen *g, int acct, int64_t from_day)
{
    if (bg_person(g, acct, BG_STUDENT, from_day))
        return -1;
    int n = (int)aml_rng_range(&g->r, 2, 3);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        int rel = ext_party(g, 0, "US");
        CHECK(rel);
        int64_t amt = money(g, 300, 1500);
        total += amt;
        int day = (int)aml_rng_range(&g->r, 0, 27);
        for (int64_t m = from_day; m + day < g->days; m += 30)
            CHECK(add_tx(g, day_at(g, m + day, 8, 20), rel, acct, amt, GCH_ACH, "family support", -1));
    }
    int aunt = ext_party(g, 0, "US");
    CHECK(aunt);
    CHECK(add_tx(g, day_at(g, aml_rng_range(&g->r, 0, g->days - 1), 8, 20), aunt, acct, money(g, 200, 900), GCH_ACH,
                 "gift", -1));
    g->c[g->a[acct].cust].exp_vol += total + total / 4;
    return 0;
}

/* Monthly flows from day `from_day` (may be negative), everyday flows in [0, days). */
static int background(gen *g, int acct, int kind, int64_t from_day)
{
    if (kind == BG_QUIET)
        return bg_quiet(g, acct);
    if (kind == BG_GROWING)
        return bg_growing(g, acct, from_day);
    if (kind == BG_FAMILY)
        return bg_family(g, acct, from_day);
    if (kind == BG_SALARIED || kind == BG_STUDENT || kind == BG_RETIRED)
        return bg_person(g, acct, kind, from_day);
    if (kind == BG_SHOP)
        return bg_shop(g, acct, from_day);
    if (kind == BG_COMPANY)
        return bg_company(g, acct, from_day);
    return 0;
}

static int subject(gen *g, int entity, const char *occ, int kind, int cash_int)
{
    int c = add_cust(g, entity, occ, cash_int);
    if (c < 0)
        return -1;
    int a = add_acct(g, c, 1, "US", -aml_rng_range(&g->r, 400, 3000));
    if (a < 0 || background(g, a, kind, -95))
        return -1;
    return a;
}

/* ---- instances and cases -------------------------------------------------------------- */

static int new_instance(gen *g, int typ, int lookalike, const char *variant)
{
    GROW(g->in, g->nin, g->capin);
    ginst *in = &g->in[g->nin];
    memset(in, 0, sizeof *in);
    snprintf(in->id, sizeof in->id, "%s-%s-%03zu", aml_catalog()[typ].code, lookalike ? "LA" : "IN", g->nin + 1);
    in->typ = typ;
    in->lookalike = lookalike;
    snprintf(in->variant, sizeof in->variant, "%s", variant ? variant : "");
    in->casei = -1;
    return (int)g->nin++;
}

static void inst_acct(gen *g, int inst, int acct)
{
    ginst *in = &g->in[inst];
    for (int i = 0; i < in->naccts; i++)
        if (in->accts[i] == acct)
            return;
    if (in->naccts < 48)
        in->accts[in->naccts++] = acct;
}

/* A new external counterparty (a company or a person) that belongs to the instance. */
static int inst_party(gen *g, int inst, int company)
{
    int m = ext_party(g, company, "US");
    if (m >= 0)
        inst_acct(g, inst, m);
    return m;
}

/* A case around an instance: focus accounts, window in days [d0, d1]. */
static int open_case(gen *g, int inst, const int *focus, int nfocus, int64_t d0, int64_t d1)
{
    GROW(g->cs, g->ncs, g->capcs);
    gcase *c = &g->cs[g->ncs];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "CASE-%04zu", g->ncs + 1);
    if (d0 < -200)
        d0 = -200;
    if (d1 > g->days - 1)
        d1 = g->days - 1;
    c->from = g->start + d0 * AML_DAY;
    c->to = g->start + d1 * AML_DAY + AML_DAY - 1;
    date_of(g, d1 + aml_rng_range(&g->r, 1, 3), c->opened);
    date_of(g, d1 + aml_rng_range(&g->r, 3, 10), c->detection);
    for (int i = 0; i < nfocus && i < 8; i++)
        c->accts[c->naccts++] = focus[i];
    g->in[inst].casei = (int)g->ncs;
    for (int i = 0; i < nfocus; i++)
        inst_acct(g, inst, focus[i]);
    return (int)g->ncs++;
}

/* A case on one focus account. */
static int case_on(gen *g, int inst, int a, int64_t d0, int64_t d1)
{
    int f[1] = {a};
    return open_case(g, inst, f, 1, d0, d1);
}

/* Day the pattern starts: late in the period, with history before it. */
static int64_t pattern_day(gen *g, int span)
{
    int64_t hi = g->days - span - 4, lo = g->days - 45;
    if (lo < 5)
        lo = 5;
    if (hi < lo)
        hi = lo;
    return aml_rng_range(&g->r, lo, hi);
}


/* T01: cash just below the threshold; look-alike: a grocery depositing over it daily (CTRs filed). */
static int inj_t01(gen *g, int la)
{
    if (!la) {
        int same_day = aml_rng_chance(&g->r, 0.3);
        int inst = new_instance(g, AML_T01, 0, same_day ? "same_day_split" : "multi_day_near_threshold");
        CHECK(inst);
        int a = subject(g, 0, "Self-employed contractor", BG_SALARIED, 0);
        CHECK(a);
        int64_t d0 = pattern_day(g, 14);
        int home = g->a[a].branch, n;
        int deposit = aml_rng_chance(&g->r, 0.8);
        int32_t self = g->a[a].cust;
        if (same_day) {
            n = (int)aml_rng_range(&g->r, 2, 3);
            int64_t d = d0 + aml_rng_range(&g->r, 0, 5);
            for (int i = 0; i < n; i++) {
                int b = i == 0 ? home : (home / BR_PER_REGION) * BR_PER_REGION + (home % BR_PER_REGION + i) % BR_PER_REGION;
                CHECK(cash_tx(g, day_at(g, d, 9 + 3 * i, 11 + 3 * i), a, deposit, money(g, 5600, 9400), b, self, inst));
            }
        } else {
            n = (int)aml_rng_range(&g->r, 3, 6);
            int span = (int)aml_rng_range(&g->r, n, 12);
            for (int i = 0; i < n; i++) {
                int b = aml_rng_chance(&g->r, 0.5) ? home : (home / BR_PER_REGION) * BR_PER_REGION + (int)aml_rng_range(&g->r, 0, 2);
                CHECK(cash_tx(g, day_at(g, d0 + (int64_t)i * span / n, 9, 17), a, deposit, money(g, 8150, 9950), b, self, inst));
            }
        }
        CHECK(case_on(g, inst, a, d0 - 5, d0 + 16));
    } else {
        int inst = new_instance(g, AML_T01, 1, "cash_heavy_grocery");
        CHECK(inst);
        int a = subject(g, 1, "Grocery store", BG_SHOP, 1);
        CHECK(a);
        int64_t d0 = pattern_day(g, 21);
        for (int64_t d = d0; d < d0 + 21; d++)
            if (((d % 7) + 7) % 7 < 6)
                CHECK(cash_tx(g, day_at(g, d, 17, 20), a, 1, money(g, 10400, 14000), g->a[a].branch, g->a[a].cust, inst));
        CHECK(case_on(g, inst, a, d0 - 3, d0 + 23));
    }
    return 0;
}

/* T02: third parties deposit cash away from home, money leaves within hours; look-alike: owner deposits own takings. */
static int inj_t02(gen *g, int la)
{
    int inst = new_instance(g, AML_T02, la, la ? "owner_cash_deposits" : "funnel");
    CHECK(inst);
    if (!la) {
        int a = subject(g, 0, aml_rng_chance(&g->r, 0.5) ? "Student" : "Unemployed", BG_STUDENT, 0);
        CHECK(a);
        int64_t d0 = pattern_day(g, 20);
        int n = (int)aml_rng_range(&g->r, 4, 8), people = (int)aml_rng_range(&g->r, 3, 5);
        int32_t pers[5];
        for (int i = 0; i < people; i++)
            pers[i] = -(++g->nperson);
        int b1 = other_branch(g, g->a[a].branch), b2 = other_branch(g, g->a[a].branch);
        while (b2 == b1)
            b2 = other_branch(g, g->a[a].branch);
        int dest = inst_party(g, inst, 1);
        CHECK(dest);
        int64_t d = d0;
        for (int i = 0; i < n; i++) {
            int64_t at = day_at(g, d, 9, 16);
            int64_t amt = money(g, 2000, 7500);
            CHECK(cash_tx(g, at, a, 1, amt, i % 2 ? b1 : b2, pers[i % people], inst));
            int64_t lag = aml_rng_range(&g->r, 4, 40) * AML_HOUR;
            CHECK(add_tx(g, at + lag, a, dest, amt * aml_rng_range(&g->r, 88, 99) / 100, aml_rng_chance(&g->r, 0.7) ? GCH_WIRE : GCH_CHECK,
                         "transfer out", inst));
            d += aml_rng_range(&g->r, 1, 3);
        }
        CHECK(case_on(g, inst, a, d0 - 5, d + 3));
    } else {
        int a = subject(g, 0, "Food truck owner", BG_SALARIED, 1);
        CHECK(a);
        g->c[g->a[a].cust].cash_int = 1;
        int64_t d0 = pattern_day(g, 24);
        int n = (int)aml_rng_range(&g->r, 4, 6);
        int64_t total = 0;
        for (int i = 0; i < n; i++) {
            int64_t amt = money(g, 2000, 7000);
            total += amt;
            CHECK(cash_tx(g, day_at(g, d0 + i * 3, 16, 19), a, 1, amt, g->a[a].branch, g->a[a].cust, inst));
        }
        int supp = ext_party(g, 1, "US");
        CHECK(supp);
        CHECK(add_tx(g, day_at(g, d0 + n * 3 + 10, 9, 17), a, supp, total * 6 / 10 + 37, GCH_ACH, "supplier payment", inst));
        g->c[g->a[a].cust].exp_cash = 3500000;
        CHECK(case_on(g, inst, a, d0 - 3, d0 + n * 3 + 12));
    }
    return 0;
}

/* T03: many new senders into one account, then forwarded; look-alike: a landlord's long-standing tenants. */
static int inj_t03(gen *g, int la)
{
    int inst = new_instance(g, AML_T03, la, la ? "landlord_tenants" : "fan_in");
    CHECK(inst);
    if (!la) {
        int a = subject(g, 0, "Sales representative", BG_SALARIED, 0);
        CHECK(a);
        int64_t d0 = pattern_day(g, 18);
        int n = (int)aml_rng_range(&g->r, 5, 9);
        int span = (int)aml_rng_range(&g->r, 3, 11);
        int64_t total = 0, last = 0;
        for (int i = 0; i < n; i++) {
            int s = inst_party(g, inst, aml_rng_chance(&g->r, 0.3));
            CHECK(s);
            int64_t amt = money(g, 2100, 4900);
            total += amt;
            int64_t at = day_at(g, d0 + (int64_t)i * span / n, 8, 20);
            last = at > last ? at : last;
            CHECK(add_tx(g, at, s, a, amt, aml_rng_chance(&g->r, 0.6) ? GCH_ACH : GCH_WIRE, "transfer in", inst));
        }
        int dest = inst_party(g, inst, 1);
        CHECK(dest);
        CHECK(add_tx(g, last + aml_rng_range(&g->r, 3 * AML_DAY, 6 * AML_DAY), a, dest, total * aml_rng_range(&g->r, 70, 90) / 100 + 13,
                     GCH_WIRE, "wire out", inst));
        CHECK(case_on(g, inst, a, d0 - 5, d0 + span + 8));
    } else {
        int c = add_cust(g, 0, "Landlord", 0);
        CHECK(c);
        int a = add_acct(g, c, 1, "US", -2000);
        CHECK(a);
        CHECK(background(g, a, BG_SALARIED, -95));
        int n = (int)aml_rng_range(&g->r, 5, 8);
        for (int i = 0; i < n; i++) {
            int ten = ext_party(g, 0, "US");
            CHECK(ten);
            int64_t rent = money(g, 1500, 3200);
            int due = (int)aml_rng_range(&g->r, 0, 4);
            for (int64_t m = -95; m < g->days; m += 30)
                if (m + due < g->days)
                    CHECK(add_tx(g, day_at(g, m + due, 7, 20), ten, a, rent, GCH_ACH, "rent", inst));
        }
        int64_t d0 = pattern_day(g, 20);
        CHECK(case_on(g, inst, a, d0 - 10, d0 + 20));
    }
    return 0;
}

/* T04: one account pays many new beneficiaries, funded days before; look-alike: a company's regular payroll. */
static int inj_t04(gen *g, int la)
{
    int inst = new_instance(g, AML_T04, la, la ? "payroll" : "fan_out");
    CHECK(inst);
    if (!la) {
        int a = subject(g, 0, "Consultant", BG_SALARIED, 0);
        CHECK(a);
        int64_t d0 = pattern_day(g, 16);
        int n = (int)aml_rng_range(&g->r, 5, 9);
        int span = (int)aml_rng_range(&g->r, 2, 9);
        int64_t amts[9], total = 0;
        for (int i = 0; i < n; i++) {
            amts[i] = money(g, 2200, 4600);
            total += amts[i];
        }
        int src = inst_party(g, inst, 1);
        CHECK(src);
        CHECK(add_tx(g, day_at(g, d0 - aml_rng_range(&g->r, 1, 4), 8, 12), src, a, total + total / 10 + 29, GCH_WIRE, "wire in", inst));
        for (int i = 0; i < n; i++) {
            int b = inst_party(g, inst, 0);
            CHECK(b);
            CHECK(add_tx(g, day_at(g, d0 + (int64_t)i * span / n, 9, 19), a, b, amts[i], aml_rng_chance(&g->r, 0.5) ? GCH_ACH : GCH_WIRE,
                         "transfer out", inst));
        }
        CHECK(case_on(g, inst, a, d0 - 8, d0 + span + 5));
    } else {
        int a = subject(g, 1, "Software services", BG_COMPANY, 0);
        CHECK(a);
        int64_t d0 = pattern_day(g, 20);
        CHECK(case_on(g, inst, a, d0 - 10, d0 + 20));
    }
    return 0;
}

/* T05: credits leave within hours; look-alike: salary in, rent out three weeks later. */
static int inj_t05(gen *g, int la)
{
    int inst = new_instance(g, AML_T05, la, la ? "salary_and_rent" : "pass_through");
    CHECK(inst);
    int a = subject(g, 0, la ? "Nurse" : "Import agent", BG_SALARIED, 0);
    CHECK(a);
    int64_t d0 = pattern_day(g, 20);
    if (!la) {
        int n = (int)aml_rng_range(&g->r, 2, 4);
        int src = ext_party(g, 1, "US"), dst = ext_party(g, 1, "US");
        CHECK(src);
        CHECK(dst);
        inst_acct(g, inst, src);
        inst_acct(g, inst, dst);
        int64_t d = d0;
        for (int i = 0; i < n; i++) {
            int64_t amt = money(g, 9000, 24000);
            int64_t at = day_at(g, d, 8, 14);
            CHECK(add_tx(g, at, src, a, amt, GCH_WIRE, "wire in", inst));
            CHECK(add_tx(g, at + aml_rng_range(&g->r, 2 * AML_HOUR, 30 * AML_HOUR), a, dst, amt * aml_rng_range(&g->r, 97, 103) / 100 + 11,
                         GCH_WIRE, "wire out", inst));
            d += aml_rng_range(&g->r, 3, 6);
        }
        CHECK(case_on(g, inst, a, d0 - 4, d + 3));
    } else {
        int64_t amt = money(g, 4000, 7000);
        int emp = g->a[a].employer >= 0 ? g->a[a].employer : g->employers[0];
        CHECK(add_tx(g, day_at(g, d0, 6, 8), emp, a, amt, GCH_ACH, "bonus", inst));
        CHECK(add_tx(g, day_at(g, d0 + 20, 9, 17), a, g->landlords[0], amt * 9 / 10 + 3, GCH_ACH, "rent and deposit", inst));
        CHECK(case_on(g, inst, a, d0 - 5, d0 + 24));
    }
    return 0;
}

/* T06: a new account forwards 85-95% of each transfer within hours; look-alike: a new student account paying tuition later. */
static int inj_t06(gen *g, int la)
{
    int inst = new_instance(g, AML_T06, la, la ? "new_student_account" : "mule");
    CHECK(inst);
    int c = add_cust(g, 0, la ? "Student" : (aml_rng_chance(&g->r, 0.5) ? "Student" : "Unemployed"), 0);
    CHECK(c);
    int64_t d0 = pattern_day(g, 16);
    int a = add_acct(g, c, 1, "US", d0 - aml_rng_range(&g->r, 10, 60));
    CHECK(a);
    g->a[a].dep = money(g, 20, 99);
    g->c[c].exp_vol = 150000;
    g->c[c].exp_cash = 20000;
    if (!la) {
        int n = (int)aml_rng_range(&g->r, 2, 4);
        int64_t d = d0;
        static const char *const abroad[] = {"GB", "PL", "RO", "UA", "LT"};
        int dst = ext_party(g, 0, PICK(abroad));
        CHECK(dst);
        inst_acct(g, inst, dst);
        for (int i = 0; i < n; i++) {
            int src = inst_party(g, inst, aml_rng_chance(&g->r, 0.5));
            CHECK(src);
            int64_t amt = money(g, 3000, 9000);
            int64_t at = day_at(g, d, 8, 16);
            CHECK(add_tx(g, at, src, a, amt, aml_rng_chance(&g->r, 0.5) ? GCH_ACH : GCH_WIRE, "transfer in", inst));
            int64_t fwd = amt * aml_rng_range(&g->r, 88, 93) / 100;
            if (aml_rng_chance(&g->r, 0.3))
                CHECK(cash_tx(g, at + aml_rng_range(&g->r, 3, 40) * AML_HOUR, a, 0, fwd, g->a[a].branch, c, inst));
            else
                CHECK(add_tx(g, at + aml_rng_range(&g->r, 3, 40) * AML_HOUR, a, dst, fwd, GCH_WIRE, "wire out", inst));
            d += aml_rng_range(&g->r, 3, 5);
        }
        CHECK(case_on(g, inst, a, d0 - 3, d + 3));
    } else {
        int parent = ext_party(g, 0, "US"), school = ext_party(g, 1, "US");
        CHECK(parent);
        CHECK(school);
        int64_t amt = money(g, 2500, 6000);
        CHECK(add_tx(g, day_at(g, d0, 9, 17), parent, a, amt, GCH_ACH, "transfer in", inst));
        CHECK(add_tx(g, day_at(g, d0 + aml_rng_range(&g->r, 8, 14), 9, 17), a, school, amt * 92 / 100 + 7, GCH_ACH, "tuition", inst));
        CHECK(case_on(g, inst, a, d0 - 3, d0 + 18));
    }
    return 0;
}

/* T07: a loop of transfers back to the origin within weeks; look-alike: a loan repaid after two months. */
static int inj_t07(gen *g, int la)
{
    int inst = new_instance(g, AML_T07, la, la ? "loan_repaid_late" : "cycle");
    CHECK(inst);
    int a = subject(g, 1, "Wholesale trade", BG_SALARIED, 0);
    CHECK(a);
    if (!la) {
        int64_t d0 = pattern_day(g, 22);
        int hops = (int)aml_rng_range(&g->r, 2, 5);
        int64_t amt = money(g, 9000, 40000);
        int64_t at = day_at(g, d0, 9, 12);
        int prev = a;
        for (int h = 0; h < hops; h++) {
            int next = h == hops - 1 ? a : ext_party(g, 1, "US");
            CHECK(next);
            inst_acct(g, inst, next);
            CHECK(add_tx(g, at, prev, next, amt, GCH_WIRE, "wire", inst));
            at += aml_rng_range(&g->r, 20, 100) * AML_HOUR;
            amt = amt * aml_rng_range(&g->r, 88, 97) / 100 + 17;
            prev = next;
        }
        CHECK(case_on(g, inst, a, d0 - 4, (at - g->start) / AML_DAY + 3));
    } else {
        int64_t d0 = g->days - 75 > 5 ? g->days - 75 : 5;
        int friend_ = ext_party(g, 1, "US");
        CHECK(friend_);
        int64_t amt = money(g, 9000, 30000);
        CHECK(add_tx(g, day_at(g, d0, 9, 12), a, friend_, amt, GCH_WIRE, "loan", inst));
        int64_t back = d0 + aml_rng_range(&g->r, 45, 65);
        if (back > g->days - 2)
            back = g->days - 2;
        CHECK(add_tx(g, day_at(g, back, 9, 12), friend_, a, amt + amt / 50, GCH_WIRE, "loan repayment", inst));
        CHECK(case_on(g, inst, a, d0 - 3, back + 2));
    }
    return 0;
}

/* T08: layering shapes; look-alike: a company paying three suppliers that keep the money. */
/* a -> k intermediaries -> sink; returns the last booking time, or -1. */
static int64_t t08_scatter_gather(gen *g, int inst, int a, int64_t t0)
{
    int64_t tend = t0;
    int k = (int)aml_rng_range(&g->r, 3, 6);
    int sink = inst_party(g, inst, 1);
    CHECK(sink);
    for (int i = 0; i < k; i++) {
        int m = inst_party(g, inst, 0);
        CHECK(m);
        int64_t amt = money(g, 3000, 9000), at = t0 + aml_rng_range(&g->r, 0, 36) * AML_HOUR;
        CHECK(add_tx(g, at, a, m, amt, GCH_WIRE, "wire", inst));
        int64_t at2 = at + aml_rng_range(&g->r, 6, 60) * AML_HOUR;
        CHECK(add_tx(g, at2, m, sink, amt * aml_rng_range(&g->r, 88, 97) / 100, GCH_WIRE, "wire", inst));
        tend = at2 > tend ? at2 : tend;
    }
    return tend;
}

/* originators -> a, then a -> beneficiaries */
static int64_t t08_gather_scatter(gen *g, int inst, int a, int64_t t0)
{
    int k = (int)aml_rng_range(&g->r, 3, 6), m = (int)aml_rng_range(&g->r, 3, 6);
    int64_t in = 0, at = t0;
    for (int i = 0; i < k; i++) {
        int o = inst_party(g, inst, aml_rng_chance(&g->r, 0.5));
        CHECK(o);
        int64_t amt = money(g, 3000, 9000);
        in += amt;
        at += aml_rng_range(&g->r, 4, 20) * AML_HOUR;
        CHECK(add_tx(g, at, o, a, amt, GCH_WIRE, "wire in", inst));
    }
    int64_t out = in * aml_rng_range(&g->r, 85, 95) / 100;
    for (int i = 0; i < m; i++) {
        int b = inst_party(g, inst, aml_rng_chance(&g->r, 0.5));
        CHECK(b);
        at += aml_rng_range(&g->r, 3, 20) * AML_HOUR;
        CHECK(add_tx(g, at, a, b, out / m + aml_rng_range(&g->r, 1, 99), GCH_WIRE, "wire out", inst));
    }
    return at;
}

/* a (and 1-2 co-originators) -> 2-3 intermediaries -> 2-3 beneficiaries, all to all */
static int64_t t08_stack(gen *g, int inst, int a, int64_t t0)
{
    int64_t tend = t0;
    int no = (int)aml_rng_range(&g->r, 1, 2), ni = (int)aml_rng_range(&g->r, 2, 3), nb = (int)aml_rng_range(&g->r, 2, 3);
    int orig[3] = {a}, mid[3], ben[3];
    for (int i = 1; i <= no; i++)
        CHECK(orig[i] = inst_party(g, inst, 1));
    for (int i = 0; i < ni; i++)
        CHECK(mid[i] = inst_party(g, inst, 0));
    for (int i = 0; i < nb; i++)
        CHECK(ben[i] = inst_party(g, inst, 1));
    int64_t got[3] = {0};
    for (int o = 0; o <= no; o++)
        for (int i = 0; i < ni; i++) {
            int64_t amt = money(g, 2000, 6000);
            got[i] += amt;
            CHECK(add_tx(g, t0 + aml_rng_range(&g->r, 0, 24) * AML_HOUR, orig[o], mid[i], amt, GCH_WIRE, "wire", inst));
        }
    for (int i = 0; i < ni; i++)
        for (int b = 0; b < nb; b++) {
            int64_t at = t0 + aml_rng_range(&g->r, 30, 70) * AML_HOUR;
            CHECK(add_tx(g, at, mid[i], ben[b], got[i] * aml_rng_range(&g->r, 88, 96) / 100 / nb, GCH_WIRE, "wire", inst));
            tend = at > tend ? at : tend;
        }
    return tend;
}

/* a and 1-3 co-originators each pay the same 2-4 beneficiaries */
static int64_t t08_bipartite(gen *g, int inst, int a, int64_t t0)
{
    int64_t tend = t0;
    int no = (int)aml_rng_range(&g->r, 1, 3), nb = (int)aml_rng_range(&g->r, 2, 4);
    int orig[4] = {a}, ben[4];
    for (int i = 1; i <= no; i++)
        CHECK(orig[i] = inst_party(g, inst, 1));
    for (int i = 0; i < nb; i++)
        CHECK(ben[i] = inst_party(g, inst, 1));
    for (int o = 0; o <= no; o++)
        for (int b = 0; b < nb; b++) {
            int64_t at = t0 + aml_rng_range(&g->r, 0, 9 * 24) * AML_HOUR;
            CHECK(add_tx(g, at, orig[o], ben[b], money(g, 1500, 8000), GCH_WIRE, "wire", inst));
            tend = at > tend ? at : tend;
        }
    return tend;
}

/* a -> m1 -> m2 -> m3 (-> m4) */
static int64_t t08_chain(gen *g, int inst, int a, int64_t t0)
{
    int hops = (int)aml_rng_range(&g->r, 3, 4);
    int src = ext_party(g, 1, "US");
    CHECK(src);
    int64_t amt = money(g, 8000, 30000), at = t0;
    CHECK(add_tx(g, at - aml_rng_range(&g->r, 20, 40) * AML_HOUR, src, a, amt + amt / 20, GCH_WIRE, "wire in", inst));
    int prev = a;
    for (int h = 0; h < hops; h++) {
        int next = inst_party(g, inst, h % 2);
        CHECK(next);
        CHECK(add_tx(g, at, prev, next, amt, GCH_WIRE, "wire", inst));
        at += aml_rng_range(&g->r, 4, 40) * AML_HOUR;
        amt = amt * aml_rng_range(&g->r, 85, 97) / 100;
        prev = next;
    }
    return at;
}

static int inj_t08(gen *g, int la, int variant)
{
    static const char *const names[] = {"scatter_gather", "gather_scatter", "stack", "bipartite", "chain"};
    static int64_t (*const shapes[])(gen *g, int inst, int a, int64_t t0) = {
        t08_scatter_gather, t08_gather_scatter, t08_stack, t08_bipartite, t08_chain};
    int inst = new_instance(g, AML_T08, la, la ? "suppliers" : names[variant % 5]);
    CHECK(inst);
    int a = subject(g, 1, "Holding company", BG_SALARIED, 0);
    CHECK(a);
    int64_t d0 = pattern_day(g, 16);
    int64_t t0 = day_at(g, d0, 8, 11);
    if (la) {
        for (int i = 0; i < 3; i++) {
            int s = ext_party(g, 1, "US");
            CHECK(s);
            CHECK(add_tx(g, t0 + i * AML_DAY, a, s, money(g, 4000, 12000), GCH_WIRE, "supplier payment", inst));
        }
        CHECK(case_on(g, inst, a, d0 - 4, d0 + 10));
        return 0;
    }
    int64_t tend = shapes[variant % 5](g, inst, a, t0);
    CHECK(tend);
    CHECK(case_on(g, inst, a, d0 - 4, (tend - g->start) / AML_DAY + 3));
    return 0;
}

/* T09: transfers with FATF-listed jurisdictions; look-alike: the same with unlisted countries, or below the floor. */
static int inj_t09(gen *g, int la)
{
    static const char *const listed[] = {"IR", "KP", "MM", "CD", "MZ", "TZ"};
    static const char *const clean[] = {"DE", "FR", "JP", "CA", "MX", "GB"};
    int small = la && aml_rng_chance(&g->r, 0.5);
    int inst = new_instance(g, AML_T09, la, la ? (small ? "below_floor" : "unlisted_country") : "listed_country");
    CHECK(inst);
    int a = subject(g, 0, "Import-export agent", BG_SALARIED, 0);
    CHECK(a);
    int64_t d0 = pattern_day(g, 14);
    int n = small ? 1 : (int)aml_rng_range(&g->r, 1, 3);
    const char *country = la && !small ? PICK(clean) : PICK(listed);
    int cp = ext_party(g, 1, country);
    CHECK(cp);
    inst_acct(g, inst, cp);
    int outward = aml_rng_chance(&g->r, 0.5);
    for (int i = 0; i < n; i++) {
        int64_t amt = small ? money(g, 200, 900) : money(g, 3200, 9000);
        if (outward)
            CHECK(add_tx(g, day_at(g, d0 + i * 4, 9, 16), a, cp, amt, GCH_WIRE, "international wire", inst));
        else
            CHECK(add_tx(g, day_at(g, d0 + i * 4, 9, 16), cp, a, amt, GCH_WIRE, "international wire", inst));
    }
    CHECK(case_on(g, inst, a, d0 - 5, d0 + 14));
    return 0;
}

/* T10: years-quiet account moves a large sum; look-alike: a quiet account with a small reactivation. */
static int inj_t10(gen *g, int la)
{
    int inst = new_instance(g, AML_T10, la, la ? "small_reactivation" : "dormant_reactivated");
    CHECK(inst);
    int c = add_cust(g, 0, "Retired", 0);
    CHECK(c);
    int64_t d0 = pattern_day(g, 12);
    int64_t last = d0 - aml_rng_range(&g->r, 200, 500);
    int a = add_acct(g, c, 1, "US", last - aml_rng_range(&g->r, 100, 400));
    CHECK(a);
    g->a[a].hist_day = last - 400; /* its whole life is generated: complete history from before its opening */
    g->c[c].exp_vol = 300000;
    g->c[c].exp_cash = 30000;
    /* Modest history, then silence. */
    for (int i = 0; i < 6; i++) {
        int64_t d = last - 150 + i * 30;
        CHECK(add_tx(g, day_at(g, d, 9, 17), g->pension, a, money(g, 200, 600), GCH_ACH, "benefit", la ? inst : -1));
        CHECK(add_tx(g, day_at(g, d + 2, 9, 17), a, g->merchants[i], money(g, 100, 400), GCH_CARD, "card purchase", la ? inst : -1));
    }
    CHECK(add_tx(g, day_at(g, last, 9, 17), a, g->utilities[0], money(g, 50, 90), GCH_ACH, "utility bill", la ? inst : -1));
    if (!la) {
        int src = ext_party(g, 1, "US"), dst = ext_party(g, 1, "US");
        CHECK(src);
        CHECK(dst);
        inst_acct(g, inst, src);
        inst_acct(g, inst, dst);
        int64_t amt = money(g, 12000, 40000);
        int64_t at = day_at(g, d0, 9, 12);
        CHECK(add_tx(g, at, src, a, amt, GCH_WIRE, "wire in", inst));
        CHECK(add_tx(g, at + aml_rng_range(&g->r, 5, 90) * AML_HOUR, a, dst, amt * aml_rng_range(&g->r, 85, 99) / 100, GCH_WIRE,
                     "wire out", inst));
    } else {
        CHECK(add_tx(g, day_at(g, d0, 9, 12), g->pension, a, money(g, 200, 600), GCH_ACH, "benefit", inst));
        CHECK(cash_tx(g, day_at(g, d0 + 2, 9, 12), a, 0, money(g, 100, 300), g->a[a].branch, c, inst));
    }
    CHECK(case_on(g, inst, a, d0 - 10, d0 + 10));
    return 0;
}

/* T11: a modest profile suddenly receives several times its expected volume; look-alike: a high-volume profile. */
static int inj_t11(gen *g, int la)
{
    int inst = new_instance(g, AML_T11, la, la ? "within_profile" : "profile_exceeded");
    CHECK(inst);
    int a = subject(g, 0, la ? "Surgeon" : "Cashier", BG_SALARIED, 0);
    CHECK(a);
    gcust *c = &g->c[g->a[a].cust];
    /* A relative has sent small amounts every month: a known counterparty. */
    int rel = ext_party(g, 0, "US");
    CHECK(rel);
    for (int64_t m = -95; m < g->days - 40; m += 30)
        CHECK(add_tx(g, day_at(g, m + 10, 9, 17), rel, a, money(g, 50, 250), GCH_ACH, "family transfer", -1));
    int64_t d0 = pattern_day(g, 20);
    int n = (int)aml_rng_range(&g->r, 3, 6);
    int cash = aml_rng_chance(&g->r, 0.3);
    int64_t target = la ? 0 : (c->exp_vol ? c->exp_vol : 600000) * aml_rng_range(&g->r, 5, 9);
    if (la)
        c->exp_vol = 6000000; /* declared: large monthly volume */
    for (int i = 0; i < n; i++) {
        int64_t amt = la ? money(g, 3000, 7000) : target / n + aml_rng_range(&g->r, 1, 9999);
        if (cash && !la && amt >= 750000)
            amt = money(g, 6000, 7400); /* stay below the structuring band */
        if (cash && !la)
            CHECK(cash_tx(g, day_at(g, d0 + i * 3, 9, 17), a, 1, amt, g->a[a].branch, g->a[a].cust, inst));
        else
            CHECK(add_tx(g, day_at(g, d0 + i * 3, 9, 17), rel, a, amt, GCH_WIRE, "family transfer", inst));
    }
    CHECK(case_on(g, inst, a, d0 - 8, d0 + n * 3 + 2));
    return 0;
}

/* T12: large transfers in exact thousands; look-alike: round rent below the floor and two round transfers. */
static int inj_t12(gen *g, int la)
{
    int inst = new_instance(g, AML_T12, la, la ? "few_round_amounts" : "round_amounts");
    CHECK(inst);
    int a = subject(g, 0, "Real estate agent", BG_SALARIED, 0);
    CHECK(a);
    int cp = inst_party(g, inst, 1);
    CHECK(cp);
    int64_t d0 = pattern_day(g, 24);
    int n = la ? 2 : (int)aml_rng_range(&g->r, 3, 5);
    int out = aml_rng_chance(&g->r, 0.6);
    for (int i = 0; i < n; i++) {
        int64_t amt = aml_rng_range(&g->r, 5, 25) * 100000;
        int64_t at = day_at(g, d0 + i * aml_rng_range(&g->r, 2, 6), 9, 16);
        CHECK(out ? add_tx(g, at, a, cp, amt, GCH_WIRE, "wire", inst) : add_tx(g, at, cp, a, amt, GCH_WIRE, "wire", inst));
    }
    if (la)
        CHECK(add_tx(g, day_at(g, d0 + 3, 9, 16), a, g->landlords[1], 200000, GCH_ACH, "rent", inst));
    CHECK(case_on(g, inst, a, d0 - 4, d0 + 26));
    return 0;
}

/* T13: several unrelated payers; look-alike: the same number of long-known payers. */
static int inj_t13(gen *g, int la)
{
    int inst = new_instance(g, AML_T13, la, la ? "known_payers" : "third_party_payers");
    CHECK(inst);
    int a = subject(g, 0, "Retail clerk", BG_SALARIED, 0);
    CHECK(a);
    int64_t d0 = pattern_day(g, 16);
    int n = (int)aml_rng_range(&g->r, 3, 4);
    for (int i = 0; i < n; i++) {
        int p = inst_party(g, inst, aml_rng_chance(&g->r, 0.4));
        CHECK(p);
        if (la)
            for (int64_t m = -95; m < d0 - 5; m += 30)
                CHECK(add_tx(g, day_at(g, m + i, 9, 17), p, a, money(g, 100, 400), GCH_ACH, "transfer in", -1));
        CHECK(add_tx(g, day_at(g, d0 + i * aml_rng_range(&g->r, 1, 4), 9, 17), p, a, money(g, 1200, 3000), GCH_ACH,
                     "transfer in", inst));
    }
    CHECK(case_on(g, inst, a, d0 - 4, d0 + 16));
    return 0;
}

/* T14: trade payments not matching invoices; look-alike: payments that match. */
static int inj_t14(gen *g, int la)
{
    int inst = new_instance(g, AML_T14, la, la ? "invoices_match" : "invoice_mismatch");
    CHECK(inst);
    int a = subject(g, 1, "Electronics exporter", BG_SALARIED, 0);
    CHECK(a);
    int nb = (int)aml_rng_range(&g->r, 2, 3);
    int buyers[3];
    for (int i = 0; i < nb; i++) {
        buyers[i] = ext_party(g, 1, "MX");
        CHECK(buyers[i]);
        inst_acct(g, inst, buyers[i]);
        for (int64_t m = -95; m < g->days - 45; m += 30) /* an established trade relationship */
            CHECK(add_tx(g, day_at(g, m + 5 + i, 9, 17), buyers[i], a, money(g, 3000, 8000), GCH_WIRE, "invoice payment", -1));
    }
    int64_t d0 = pattern_day(g, 20);
    int n = (int)aml_rng_range(&g->r, 2, 4);
    static const char *const goods[] = {"Mobile phones", "Laptop computers", "Televisions", "Memory modules"};
    static const char *const hs[] = {"851713", "847130", "852872", "847330"};
    int odd = (int)aml_rng_range(&g->r, 0, n - 1);
    for (int i = 0; i < n; i++) {
        int b = buyers[i % nb];
        int64_t inv = money(g, 8000, 30000);
        int64_t paid = inv;
        int payer = b;
        if (!la && i == odd) {
            if (aml_rng_chance(&g->r, 0.7))
                paid = inv * aml_rng_range(&g->r, 125, 180) / 100;
            else {
                payer = ext_party(g, 1, "PA");
                CHECK(payer);
                inst_acct(g, inst, payer);
            }
        } else if (la) {
            paid = inv * aml_rng_range(&g->r, 97, 100) / 100;
        }
        int k = add_tx(g, day_at(g, d0 + i * 5, 9, 16), payer, a, paid, GCH_WIRE, "invoice payment", inst);
        CHECK(k);
        if (g->ntr == g->captr) {
            size_t nc = g->captr ? g->captr * 2 : 64;
            gtrade *nt = realloc(g->tr, nc * sizeof *nt);
            if (!nt)
                return -1;
            g->tr = nt;
            g->captr = nc;
        }
        gtrade *d = &g->tr[g->ntr];
        memset(d, 0, sizeof *d);
        snprintf(d->doc, sizeof d->doc, "INV-%05zu", g->ntr + 1);
        d->tx_uid = g->t[k].uid;
        snprintf(d->buyer, sizeof d->buyer, "%s", g->a[b].holder);
        snprintf(d->seller, sizeof d->seller, "%s", g->c[g->a[a].cust].name);
        d->invoice = inv;
        int gi = (int)aml_rng_range(&g->r, 0, 3);
        d->goods = goods[gi];
        d->hs = hs[gi];
        d->origin = "US";
        d->dest = "MX";
        g->ntr++;
    }
    CHECK(case_on(g, inst, a, d0 - 4, d0 + n * 5 + 2));
    return 0;
}

unsigned aml_gen_overlap(int typ)
{
#define B(t) (1u << (t))
    switch (typ) {
    case AML_T01: return B(AML_T11);
    case AML_T02: return B(AML_T01) | B(AML_T05) | B(AML_T11) | B(AML_T13);
    case AML_T03: return B(AML_T11) | B(AML_T13);
    case AML_T04: return B(AML_T05) | B(AML_T11);
    case AML_T05: return B(AML_T11);
    case AML_T06: return B(AML_T05) | B(AML_T11) | B(AML_T13);
    case AML_T07: return B(AML_T08) | B(AML_T11);
    case AML_T08: return B(AML_T03) | B(AML_T04) | B(AML_T05) | B(AML_T11) | B(AML_T13);
    case AML_T09: return B(AML_T11);
    case AML_T10: return B(AML_T05) | B(AML_T11);
    case AML_T11: return 0;
    case AML_T12: return B(AML_T11);
    case AML_T13: return B(AML_T11);
    case AML_T14: return B(AML_T11) | B(AML_T13);
    default: return 0;
    }
#undef B
}

/* ---- building the native bank ------------------------------------------------------------ */

/*
 * A look-alike is legitimate activity, and its customer declared it: the KYC
 * profile covers what the account receives in the last 30 days of the case
 * window (in total and in cash), with a margin.
 */
static void profile_lookalikes(gen *g)
{
    for (size_t i = 0; i < g->nin; i++) {
        const ginst *in = &g->in[i];
        if (!in->lookalike || in->casei < 0)
            continue;
        const gcase *c = &g->cs[in->casei];
        for (int k = 0; k < c->naccts; k++) {
            int a = c->accts[k];
            if (g->a[a].cust < 0)
                continue;
            int64_t cred = 0, cash = 0;
            for (size_t t = 0; t < g->nt; t++) {
                const gtx *x = &g->t[t];
                if (x->to != a || x->from == a || x->at <= c->to - 30 * AML_DAY || x->at > c->to)
                    continue;
                cred += x->amt;
                if (x->ch == GCH_CASH)
                    cash += x->amt;
            }
            gcust *cu = &g->c[g->a[a].cust];
            if (cu->exp_vol < cred + cred / 2)
                cu->exp_vol = cred + cred / 2;
            if (cu->exp_cash < cash + cash / 2)
                cu->exp_cash = cash + cash / 2;
        }
    }
}

static int cmp_tx(const void *a, const void *b)
{
    const gtx *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->uid - y->uid;
}

void aml_gen_defaults(aml_gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->customers = 200;
    o->days = 120;
    o->inject = AML_GEN_TYPOLOGIES;
    o->instances = 2;
    o->lookalikes = -1;
}

static int setup(gen *g, const aml_gen_opts *o)
{
    memset(g, 0, sizeof *g);
    g->o = o;
    aml_rng_seed(&g->r, o->seed);
    g->days = o->days < 10 ? 10 : o->days;
    const char *st = o->start ? o->start : (o->amlworld ? "2022-09-01" : "2025-01-01");
    if (aml_parse_time(st, strlen(st), &g->start, NULL))
        return -1;
    g->start = aml_day_start(g->start);
    return 0;
}

/* The bank's pools of counterparties: employers, merchants, landlords, utilities, pension fund, acquirer. */
static int pools(gen *g)
{
    for (int i = 0; i < 12; i++)
        CHECK(g->employers[i] = ext_party(g, 1, "US"));
    for (int i = 0; i < 40; i++)
        CHECK(g->merchants[i] = ext_party(g, 1, "US"));
    for (int i = 0; i < 10; i++)
        CHECK(g->landlords[i] = ext_party(g, i % 2, "US"));
    for (int i = 0; i < 8; i++)
        CHECK(g->utilities[i] = ext_party(g, 1, "US"));
    CHECK(g->pension = ext_party(g, 1, "US"));
    snprintf(g->a[g->pension].holder, sizeof g->a[0].holder, "State Pension Fund");
    CHECK(g->acquirer = ext_party(g, 1, "US"));
    snprintf(g->a[g->acquirer].holder, sizeof g->a[0].holder, "Card Acquiring Services");
    return 0;
}

/* The background customers, of every kind. */
static int background_customers(gen *g)
{
    for (int i = 0; i < g->o->customers; i++) {
        double u = aml_rng_unit(&g->r);
        int kind = u < 0.60 ? BG_SALARIED : u < 0.70 ? BG_STUDENT : u < 0.80 ? BG_RETIRED : u < 0.92 ? BG_SHOP : BG_COMPANY;
        /* The look-alikes of the misfires at bank size join banks of 1,000 customers or more; smaller
         * banks (the demo, the 60-customer quality test, whose case numbers are cited) keep their bytes. */
        if (g->o->customers >= 1000)
            kind = u < 0.55 ? BG_SALARIED : u < 0.60 ? BG_QUIET : u < 0.66 ? BG_STUDENT : u < 0.70 ? BG_FAMILY
                   : u < 0.80 ? BG_RETIRED : u < 0.92 ? BG_SHOP : u < 0.97 ? BG_COMPANY : BG_GROWING;
        static const char *const jobs[] = {"Teacher", "Nurse", "Engineer", "Accountant", "Driver", "Electrician",
                                           "Pharmacist", "Designer", "Mechanic", "Chef"};
        const char *occ = kind == BG_SALARIED || kind == BG_QUIET      ? PICK(jobs)
                          : kind == BG_STUDENT || kind == BG_FAMILY    ? "Student"
                          : kind == BG_RETIRED                         ? "Retired"
                          : kind == BG_SHOP                            ? "Convenience store"
                                                                       : "Manufacturing";
        int entity = kind == BG_SHOP || kind == BG_COMPANY || kind == BG_GROWING;
        int a = subject(g, entity, occ, kind, kind == BG_SHOP);
        CHECK(a);
        if (g->nbg == g->capbg) {
            size_t nc = g->capbg ? g->capbg * 2 : 256;
            int *nb = realloc(g->bg, nc * sizeof *nb);
            if (!nb)
                return -1;
            g->bg = nb;
            g->capbg = nc;
        }
        g->bg[g->nbg++] = a;
    }
    return 0;
}

/* One injected instance (la = 0) or look-alike (la = 1) of typology t. */
static int inject(gen *g, int t, int la, int *t08v, int *t08l)
{
    switch (t) {
    case AML_T01: return inj_t01(g, la);
    case AML_T02: return inj_t02(g, la);
    case AML_T03: return inj_t03(g, la);
    case AML_T04: return inj_t04(g, la);
    case AML_T05: return inj_t05(g, la);
    case AML_T06: return inj_t06(g, la);
    case AML_T07: return inj_t07(g, la);
    case AML_T08: return inj_t08(g, la, la ? (*t08l)++ : (*t08v)++);
    case AML_T09: return inj_t09(g, la);
    case AML_T10: return inj_t10(g, la);
    case AML_T11: return inj_t11(g, la);
    case AML_T12: return inj_t12(g, la);
    case AML_T13: return inj_t13(g, la);
    default: return inj_t14(g, la);
    }
}

/* Injected instances and look-alikes, interleaved so that case numbers do not reveal the kind. */
static int inject_all(gen *g)
{
    const aml_gen_opts *o = g->o;
    int nla = o->lookalikes < 0 ? o->instances : o->lookalikes;
    int most = o->instances > nla ? o->instances : nla;
    int t08v = 0, t08l = 0;
    for (int k = 0; k < most; k++) {
        for (int t = 0; t < AML_NTYP; t++) {
            if (!(o->inject & (1u << t)))
                continue;
            int order = (int)aml_rng_range(&g->r, 0, 1);
            for (int pass = 0; pass < 2; pass++) {
                int la = pass ^ order;
                if ((la && k >= nla) || (!la && k >= o->instances))
                    continue;
                CHECK(inject(g, t, la, &t08v, &t08l));
            }
        }
    }
    return g->oom ? -1 : 0;
}

/* Case numbers in random order, so that a number says nothing about what was injected. */
static int shuffle_case_ids(gen *g)
{
    int *perm = malloc((g->ncs ? g->ncs : 1) * sizeof *perm);
    if (!perm)
        return -1;
    for (size_t i = 0; i < g->ncs; i++)
        perm[i] = (int)i;
    for (size_t i = g->ncs; i > 1; i--) {
        size_t j = (size_t)aml_rng_range(&g->r, 0, (int64_t)i - 1);
        int tmp = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = tmp;
    }
    for (size_t i = 0; i < g->ncs; i++)
        snprintf(g->cs[i].id, sizeof g->cs[i].id, "CASE-%04d", perm[i] + 1);
    free(perm);
    return 0;
}

static int build_native(gen *g)
{
    if (pools(g) || background_customers(g) || inject_all(g))
        return -1;
    profile_lookalikes(g);
    if (shuffle_case_ids(g))
        return -1;
    aml_sort(g->t, g->nt, sizeof *g->t, cmp_tx);
    return 0;
}

static void gen_free(gen *g)
{
    free(g->bg);
    free(g->c);
    free(g->a);
    free(g->t);
    free(g->tr);
    free(g->cs);
    free(g->in);
}

/* Transaction reference of the sorted transaction at index i. */
static void tx_ref(size_t i, char *out, size_t n)
{
    snprintf(out, n, "TX-%07zu", i + 1);
}

static void overlap_str(int typ, char *out, size_t n)
{
    unsigned m = aml_gen_overlap(typ);
    size_t k = 0;
    out[0] = '\0';
    for (int t = 0; t < AML_NTYP; t++)
        if (m & (1u << t))
            k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s%s", k ? ";" : "", aml_catalog()[t].id);
}

/* ---- writing: records ------------------------------------------------------------------ */

/*
 * The bank leaves the generator as ingest records, once, in one order
 * (customers, accounts, parties, transactions, trade documents, cases,
 * ground truth), to a sink: the store through an ingest (gen --db, the
 * tests' stores, the demo) or the native CSV (gen --out).
 */
typedef struct rec_sink {
    int (*customer)(void *ud, const aml_customer_rec *r, aml_err *err);
    int (*account)(void *ud, const aml_account_rec *r, aml_err *err);
    int (*party)(void *ud, const char *account_id, const char *customer_id, aml_err *err);
    int (*txn)(void *ud, const aml_txn_rec *r, aml_err *err);
    int (*trade)(void *ud, const aml_trade_rec *r, aml_err *err);
    int (*kase)(void *ud, const aml_case_rec *r, aml_err *err);
    int (*truth)(void *ud, const aml_truth_rec *r, aml_err *err);
    void *ud;
    int (*coverage)(void *ud, const char *account_id, int64_t from, aml_err *err);
} rec_sink;

static const char *person_id(int32_t cond, const gen *g, char *buf, size_t n)
{
    if (cond == INT32_MIN)
        return NULL;
    if (cond >= 0)
        return g->c[cond].id;
    snprintf(buf, n, "P-%05d", -cond);
    return buf;
}

static void customer_rec(const gcust *c, aml_customer_rec *r)
{
    memset(r, 0, sizeof *r);
    r->customer_id = c->id;
    r->customer_type = c->entity ? "entity" : "individual";
    r->full_name = c->name;
    r->first_name = c->entity ? NULL : c->first;
    r->last_name = c->entity ? NULL : c->last;
    r->date_of_birth = c->entity ? NULL : c->dob;
    r->country = "US";
    r->occupation = c->occ;
    r->naics_code = c->naics;
    r->region = c->region;
    r->risk_rating = "low";
    r->onboarded_at = c->onboard;
    r->cash_intensive = c->cash_int;
    r->expected_monthly_cash.has = c->exp_cash > 0;
    r->expected_monthly_cash.v = c->exp_cash;
    r->expected_monthly_volume.has = c->exp_vol > 0;
    r->expected_monthly_volume.v = c->exp_vol;
    r->declared_annual_income.has = c->income > 0;
    r->declared_annual_income.v = c->income;
    r->source_dataset = "synthetic";
}

/* br: room for the branch id */
static void account_rec(const gacct *a, char *br, size_t nbr, aml_account_rec *r)
{
    memset(r, 0, sizeof *r);
    r->account_id = a->id;
    r->is_internal = a->internal;
    r->bank_id = a->bank;
    r->institution_name = a->internal ? "Example Community Bank" : NULL;
    r->account_type = a->type;
    r->currency = "USD";
    r->status = "active";
    r->opened_at = a->internal ? a->opened : NULL;
    r->opening_deposit.has = a->internal && a->has_dep;
    r->opening_deposit.v = a->dep;
    r->home_branch_id = a->branch >= 0 ? branch_id(a->branch, br, nbr) : NULL;
    r->home_region = a->branch >= 0 ? branch_region(a->branch) : NULL;
    r->country = a->country;
    r->holder_name = a->holder[0] ? a->holder : NULL;
}

/* The sorted transaction i (ref, pb, lb: room for its reference, conductor and location). */
static void txn_rec(const gen *g, size_t i, char *ref, char *pb, char *lb, aml_txn_rec *r)
{
    const gtx *t = &g->t[i];
    memset(r, 0, sizeof *r);
    tx_ref(i, ref, 24);
    r->txn_ref = ref;
    r->booked_at = t->at;
    r->precision = AML_PREC_SECOND;
    r->from_account = t->from >= 0 ? g->a[t->from].id : NULL;
    r->to_account = t->to >= 0 ? g->a[t->to].id : NULL;
    r->amount_minor = t->amt;
    r->currency = "USD";
    r->channel = gch_names[t->ch];
    r->txn_type = t->type;
    r->conductor_id = person_id(t->cond, g, pb, 24);
    r->location_id = t->loc >= 0 ? branch_id(t->loc, lb, 24) : NULL;
    r->location_region = t->loc >= 0 ? branch_region(t->loc) : NULL;
    r->location_country = t->loc >= 0 ? "US" : NULL;
    r->gt_is_laundering.has = 1;
    r->gt_is_laundering.v = t->inst >= 0 && !g->in[t->inst].lookalike;
    r->gt_attempt_id = t->inst >= 0 ? g->in[t->inst].id : NULL;
    r->gt_label = t->inst >= 0 ? aml_catalog()[g->in[t->inst].typ].id : NULL;
}

static void trade_rec(const gtrade *d, const char *ref, aml_trade_rec *r)
{
    memset(r, 0, sizeof *r);
    r->doc_id = d->doc;
    r->txn_ref = ref;
    r->buyer_name = d->buyer;
    r->seller_name = d->seller;
    r->invoice_amount_minor = d->invoice;
    r->currency = "USD";
    r->goods_description = d->goods;
    r->hs_code = d->hs;
    r->origin_country = d->origin;
    r->destination_country = d->dest;
}

static int emit_accounts(const gen *g, const rec_sink *k, aml_err *err)
{
    char br[24];
    for (size_t i = 0; i < g->na; i++) {
        aml_account_rec r;
        account_rec(&g->a[i], br, sizeof br, &r);
        if (k->account(k->ud, &r, err))
            return -1;
    }
    for (size_t i = 0; i < g->na; i++)
        if (g->a[i].cust >= 0 && k->party(k->ud, g->a[i].id, g->c[g->a[i].cust].id, err))
            return -1;
    return 0;
}

/* Trade documents name their transaction by the reference of its sorted position. */
static int emit_trades(const gen *g, const rec_sink *k, aml_err *err)
{
    size_t *pos = malloc((g->nt ? g->nt : 1) * sizeof *pos);
    if (!pos)
        return aml_errf(err, "out of memory");
    for (size_t i = 0; i < g->nt; i++)
        pos[g->t[i].uid] = i;
    char ref[24];
    int rc = 0;
    for (size_t i = 0; i < g->ntr && !rc; i++) {
        aml_trade_rec r;
        tx_ref(pos[g->tr[i].tx_uid], ref, sizeof ref);
        trade_rec(&g->tr[i], ref, &r);
        rc = k->trade(k->ud, &r, err);
    }
    free(pos);
    return rc;
}

static int emit_cases(const gen *g, const rec_sink *k, aml_err *err)
{
    for (size_t i = 0; i < g->ncs; i++) {
        const gcase *c = &g->cs[i];
        const char *ids[8];
        for (int j = 0; j < c->naccts; j++)
            ids[j] = g->a[c->accts[j]].id;
        char title[128];
        snprintf(title, sizeof title, "Transaction monitoring alert on %s", g->a[c->accts[0]].id);
        aml_case_rec r;
        memset(&r, 0, sizeof r);
        r.case_id = c->id;
        r.title = title;
        r.status = "open";
        r.priority = "normal";
        r.origin = "alert";
        r.opened_at = c->opened;
        r.detection_date = c->detection;
        r.window_from = c->from;
        r.window_to = c->to;
        r.accounts = ids;
        r.naccounts = (size_t)c->naccts;
        if (k->kase(k->ud, &r, err))
            return -1;
    }
    return 0;
}

static int emit_truths(const gen *g, const rec_sink *k, aml_err *err)
{
    for (size_t i = 0; i < g->nin; i++) {
        const ginst *n = &g->in[i];
        const char *ids[48];
        for (int j = 0; j < n->naccts; j++)
            ids[j] = g->a[n->accts[j]].id;
        char ov[256];
        overlap_str(n->typ, ov, sizeof ov);
        aml_truth_rec r;
        memset(&r, 0, sizeof r);
        r.instance_id = n->id;
        r.typology_id = aml_catalog()[n->typ].id;
        r.kind = n->lookalike ? "lookalike" : "injected";
        r.variant = n->variant;
        r.case_id = n->casei >= 0 ? g->cs[n->casei].id : NULL;
        r.overlap = n->lookalike ? "" : ov;
        r.accounts = ids;
        r.naccounts = (size_t)n->naccts;
        if (k->truth(k->ud, &r, err))
            return -1;
    }
    return 0;
}

static int emit(const gen *g, const rec_sink *k, aml_err *err)
{
    for (size_t i = 0; i < g->nc; i++) {
        aml_customer_rec r;
        customer_rec(&g->c[i], &r);
        if (k->customer(k->ud, &r, err))
            return -1;
    }
    if (emit_accounts(g, k, err))
        return -1;
    for (size_t i = 0; i < g->na; i++)
        if (g->a[i].internal && k->coverage(k->ud, g->a[i].id, g->start + g->a[i].hist_day * AML_DAY, err))
            return -1;
    char ref[24], pb[24], lb[24];
    for (size_t i = 0; i < g->nt; i++) {
        aml_txn_rec r;
        txn_rec(g, i, ref, pb, lb, &r);
        if (k->txn(k->ud, &r, err))
            return -1;
    }
    return emit_trades(g, k, err) || emit_cases(g, k, err) || emit_truths(g, k, err) ? -1 : 0;
}

static void fill_stats(const gen *g, aml_gen_stats *st)
{
    if (!st)
        return;
    memset(st, 0, sizeof *st);
    st->customers = g->nc;
    st->accounts = g->na;
    st->transactions = g->nt;
    st->cases = g->ncs;
    for (size_t i = 0; i < g->nin; i++) {
        if (g->in[i].lookalike)
            st->lookalikes++;
        else
            st->instances++;
    }
    for (size_t i = 0; i < g->nt; i++)
        st->laundering_rows += g->t[i].inst >= 0 && !g->in[g->t[i].inst].lookalike;
}

/* Sets up and builds the native bank. */
static int generate(gen *g, const aml_gen_opts *o, aml_err *err)
{
    if (setup(g, o))
        return aml_errf(err, "bad --start date");
    if (build_native(g)) {
        gen_free(g);
        return aml_errf(err, "out of memory while generating");
    }
    return 0;
}

/* ---- the store sink ---- */

static int st_customer(void *ud, const aml_customer_rec *r, aml_err *err)
{
    return aml_ingest_customer(ud, r, err);
}

static int st_account(void *ud, const aml_account_rec *r, aml_err *err)
{
    return aml_ingest_account(ud, r, NULL, err);
}

static int st_party(void *ud, const char *account_id, const char *customer_id, aml_err *err)
{
    return aml_ingest_party(ud, account_id, customer_id, "primary", err);
}

static int st_txn(void *ud, const aml_txn_rec *r, aml_err *err)
{
    return aml_ingest_txn(ud, r, NULL, err);
}

static int st_trade(void *ud, const aml_trade_rec *r, aml_err *err)
{
    return aml_ingest_trade(ud, r, err);
}

static int st_case(void *ud, const aml_case_rec *r, aml_err *err)
{
    return aml_ingest_case(ud, r, err);
}

static int st_truth(void *ud, const aml_truth_rec *r, aml_err *err)
{
    return aml_ingest_truth(ud, r, err);
}

static int st_coverage(void *ud, const char *account_id, int64_t from, aml_err *err)
{
    return aml_ingest_coverage(ud, account_id, from, err);
}

int aml_gen_store(aml_store *s, const aml_gen_opts *o, aml_gen_stats *st, aml_err *err)
{
    gen g;
    if (generate(&g, o, err))
        return -1;
    aml_ingest *in;
    aml_ingest_opts io;
    memset(&io, 0, sizeof io);
    io.source = "synthetic";
    if (aml_ingest_begin(&in, s, &io, err)) {
        gen_free(&g);
        return -1;
    }
    rec_sink k = {st_customer, st_account, st_party, st_txn, st_trade, st_case, st_truth, in, st_coverage};
    if (emit(&g, &k, err)) {
        aml_ingest_abort(in);
        gen_free(&g);
        return -1;
    }
    fill_stats(&g, st);
    gen_free(&g);
    return aml_ingest_commit(in, NULL, err) || aml_filer_set_demo(s, err) ? -1 : 0;
}

/* ---- the native CSV sink (the records of aml_native_headers) ---- */

/* Writes a CSV field, quoting when needed. */
static void csvf(FILE *f, const char *s, int last)
{
    if (s && *s) {
        if (strpbrk(s, ",\"\n\r")) {
            fputc('"', f);
            for (; *s; s++) {
                if (*s == '"')
                    fputc('"', f);
                fputc(*s, f);
            }
            fputc('"', f);
        } else {
            fputs(s, f);
        }
    }
    fputc(last ? '\n' : ',', f);
}

static void csvi(FILE *f, int64_t v, int has, int last)
{
    if (has)
        fprintf(f, "%lld", (long long)v);
    fputc(last ? '\n' : ',', f);
}

/* Account ids joined with ';'. */
static void csv_ids(FILE *f, const char *const *ids, size_t n, int last)
{
    char buf[2048] = "";
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        k += (size_t)snprintf(buf + k, k < sizeof buf ? sizeof buf - k : 0, "%s%s", j ? ";" : "", ids[j]);
    csvf(f, buf, last);
}

static int csv_customer(void *ud, const aml_customer_rec *r, aml_err *err)
{
    FILE *f = ud;
    (void)err;
    fputs("customer,", f);
    csvf(f, r->customer_id, 0);
    csvf(f, r->customer_type, 0);
    csvf(f, r->full_name, 0);
    csvf(f, r->first_name, 0);
    csvf(f, r->last_name, 0);
    csvf(f, r->date_of_birth, 0);
    csvf(f, r->country, 0);
    csvf(f, r->occupation, 0);
    csvf(f, r->naics_code, 0);
    csvf(f, r->region, 0);
    csvf(f, r->city, 0);
    csvf(f, r->risk_rating, 0);
    csvf(f, r->pep ? "1" : "0", 0);
    csvf(f, r->onboarded_at, 0);
    csvf(f, r->cash_intensive ? "1" : "0", 0);
    csvi(f, r->expected_monthly_cash.v, r->expected_monthly_cash.has, 0);
    csvi(f, r->expected_monthly_volume.v, r->expected_monthly_volume.has, 0);
    csvi(f, r->declared_annual_income.v, r->declared_annual_income.has, 1);
    return 0;
}

static int csv_account(void *ud, const aml_account_rec *r, aml_err *err)
{
    FILE *f = ud;
    (void)err;
    fputs("account,", f);
    csvf(f, r->account_id, 0);
    csvf(f, r->is_internal ? "1" : "0", 0);
    csvf(f, r->bank_id, 0);
    csvf(f, r->institution_name, 0);
    csvf(f, r->account_type, 0);
    csvf(f, r->currency, 0);
    csvf(f, r->status, 0);
    csvf(f, r->opened_at, 0);
    csvi(f, r->opening_deposit.v, r->opening_deposit.has, 0);
    csvf(f, r->home_branch_id, 0);
    csvf(f, r->home_region, 0);
    csvf(f, r->country, 0);
    csvf(f, r->holder_name, 1);
    return 0;
}

static int csv_party(void *ud, const char *account_id, const char *customer_id, aml_err *err)
{
    (void)err;
    fprintf(ud, "party,%s,%s,primary\n", account_id, customer_id);
    return 0;
}

static int csv_txn(void *ud, const aml_txn_rec *r, aml_err *err)
{
    static const char *const precisions[] = {"second", "minute", "day"};
    FILE *f = ud;
    char when[21];
    (void)err;
    aml_fmt_time(r->booked_at, when);
    fputs("txn,", f);
    csvf(f, r->txn_ref, 0);
    csvf(f, when, 0);
    csvf(f, precisions[r->precision], 0);
    csvf(f, r->from_account, 0);
    csvf(f, r->to_account, 0);
    csvi(f, r->amount_minor, 1, 0);
    csvf(f, r->currency, 0);
    csvf(f, r->channel, 0);
    csvf(f, r->txn_type, 0);
    csvf(f, r->conductor_id, 0);
    csvf(f, r->location_id, 0);
    csvf(f, r->location_region, 0);
    csvf(f, r->location_country, 0);
    csvf(f, r->counterparty_name, 0);
    csvf(f, r->memo, 0);
    csvi(f, r->gt_is_laundering.v, r->gt_is_laundering.has, 0);
    csvf(f, r->gt_label, 0);
    csvf(f, r->gt_attempt_id, 1);
    return 0;
}

static int csv_trade(void *ud, const aml_trade_rec *r, aml_err *err)
{
    FILE *f = ud;
    (void)err;
    fputs("trade,", f);
    csvf(f, r->doc_id, 0);
    csvf(f, r->txn_ref, 0);
    csvf(f, r->buyer_name, 0);
    csvf(f, r->seller_name, 0);
    csvi(f, r->invoice_amount_minor, 1, 0);
    csvf(f, r->currency, 0);
    csvf(f, r->goods_description, 0);
    csvf(f, r->hs_code, 0);
    csvf(f, r->origin_country, 0);
    csvf(f, r->destination_country, 1);
    return 0;
}

static int csv_case(void *ud, const aml_case_rec *r, aml_err *err)
{
    FILE *f = ud;
    char from[21], to[21];
    (void)err;
    aml_fmt_time(r->window_from, from);
    aml_fmt_time(r->window_to, to);
    fputs("case,", f);
    csvf(f, r->case_id, 0);
    csvf(f, r->title, 0);
    csvf(f, r->status, 0);
    csvf(f, r->priority, 0);
    csvf(f, r->origin, 0);
    csvf(f, r->opened_at, 0);
    csvf(f, r->detection_date, 0);
    csvf(f, from, 0);
    csvf(f, to, 0);
    csv_ids(f, r->accounts, r->naccounts, 1);
    return 0;
}

static int csv_truth(void *ud, const aml_truth_rec *r, aml_err *err)
{
    FILE *f = ud;
    (void)err;
    fputs("truth,", f);
    csvf(f, r->instance_id, 0);
    csvf(f, r->typology_id, 0);
    csvf(f, r->kind, 0);
    csvf(f, r->variant, 0);
    csvf(f, r->case_id, 0);
    csvf(f, r->overlap, 0);
    csv_ids(f, r->accounts, r->naccounts, 1);
    return 0;
}

static int csv_coverage(void *ud, const char *account_id, int64_t from, aml_err *err)
{
    (void)err;
    char t[21];
    aml_fmt_time(from, t);
    fprintf(ud, "coverage,");
    csvf(ud, account_id, 0);
    csvf(ud, t, 1);
    return 0;
}

int aml_gen_native(FILE *f, const aml_gen_opts *o, aml_gen_stats *st, aml_err *err)
{
    gen g;
    if (generate(&g, o, err))
        return -1;
    for (int i = 0; aml_native_headers[i]; i++)
        fprintf(f, "%s\n", aml_native_headers[i]);
    rec_sink k = {csv_customer, csv_account, csv_party, csv_txn, csv_trade, csv_case, csv_truth, f, csv_coverage};
    int rc = emit(&g, &k, err);
    fill_stats(&g, st);
    gen_free(&g);
    if (rc)
        return -1;
    if (ferror(f))
        return aml_errf(err, "write error");
    return 0;
}

/* ---- the AMLworld shape ------------------------------------------------------------------- */

/* Currencies an AMLworld account may hold (index into the util.h table by code). */
static const char *const aw_currencies[] = {"USD", "EUR", "GBP", "CAD", "JPY", "CNY"};

static const aml_currency *aw_cur(int i)
{
    return aml_currency_find(aw_currencies[i], 3);
}

static int aw_tx(gen *g, int64_t at, int from, int to, int64_t usd_cents, int fmt, int inst)
{
    /* The payer's currency: convert the USD amount with the demo rate, keep minute precision. */
    int k = add_tx(g, at - at % 60, from, to, usd_cents, fmt, aw_formats[fmt], inst);
    if (k >= 0)
        g->t[k].cur = g->a[from].aw_bank % 17 == 0 ? (uint8_t)(1 + g->a[from].aw_bank % 5) : 0;
    return k;
}

static int aw_fresh(gen *g)
{
    int k = add_acct(g, -1, 1, NULL, 0);
    if (k >= 0)
        snprintf(g->a[k].holder, sizeof g->a[k].holder, "Individual #%d", k);
    return k;
}

static int aw_member(gen *g, const int *ind, int nind)
{
    return aml_rng_chance(&g->r, 0.5) ? aw_fresh(g) : ind[aml_rng_range(&g->r, 0, nind - 1)];
}

/* A random individual of the bank. */
static int aw_ind(gen *g, const int *ind, int nind)
{
    return ind[aml_rng_range(&g->r, 0, nind - 1)];
}

/* FAN-IN (kind 0) / FAN-OUT (kind 1): one hub and 5-12 counterparties. */
static int aw_fan(gen *g, int inst, int kind, const int *ind, int nind, int64_t t0, int fmt)
{
    int hub = aw_ind(g, ind, nind);
    int n = (int)aml_rng_range(&g->r, 5, 12);
    snprintf(g->in[inst].awdetail, sizeof g->in[inst].awdetail, "Max %d-degree %s", n, kind ? "Fan-Out" : "Fan-In");
    inst_acct(g, inst, hub);
    for (int i = 0; i < n; i++) {
        int m = aw_member(g, ind, nind);
        CHECK(m);
        if (m == hub)
            continue;
        inst_acct(g, inst, m);
        int64_t at = t0 + aml_rng_range(&g->r, 0, 9 * 24) * AML_HOUR;
        int64_t amt = money(g, 2100, 9000);
        CHECK(kind ? aw_tx(g, at, hub, m, amt, fmt, inst) : aw_tx(g, at, m, hub, amt, fmt, inst));
    }
    return 0;
}

/* CYCLE: 2-6 hops back to the first account. */
static int aw_cycle(gen *g, int inst, const int *ind, int nind, int64_t t0, int fmt)
{
    int n = (int)aml_rng_range(&g->r, 2, 6);
    snprintf(g->in[inst].awdetail, sizeof g->in[inst].awdetail, "Max %d hops", n);
    int first = aw_ind(g, ind, nind), prev = first;
    inst_acct(g, inst, first);
    int64_t amt = money(g, 5000, 50000), at = t0;
    for (int h = 0; h < n; h++) {
        int next = h == n - 1 ? first : aw_fresh(g);
        CHECK(next);
        inst_acct(g, inst, next);
        CHECK(aw_tx(g, at, prev, next, amt, fmt, inst));
        at += aml_rng_range(&g->r, 6, 80) * AML_HOUR;
        amt = amt * aml_rng_range(&g->r, 90, 98) / 100;
        prev = next;
    }
    return 0;
}

/* SCATTER-GATHER: a source, 3-6 fresh intermediaries, a sink. */
static int aw_scatter_gather(gen *g, int inst, const int *ind, int nind, int64_t t0, int fmt)
{
    int src = aw_ind(g, ind, nind), sink = aw_member(g, ind, nind);
    CHECK(sink);
    int k = (int)aml_rng_range(&g->r, 3, 6);
    inst_acct(g, inst, src);
    inst_acct(g, inst, sink);
    for (int i = 0; i < k; i++) {
        int m = aw_fresh(g);
        CHECK(m);
        inst_acct(g, inst, m);
        int64_t amt = money(g, 3000, 12000), at = t0 + aml_rng_range(&g->r, 0, 30) * AML_HOUR;
        CHECK(aw_tx(g, at, src, m, amt, fmt, inst));
        CHECK(aw_tx(g, at + aml_rng_range(&g->r, 4, 60) * AML_HOUR, m, sink, amt * aml_rng_range(&g->r, 90, 98) / 100,
                    fmt, inst));
    }
    return 0;
}

/* GATHER-SCATTER: 3-6 originators pay a hub, which pays 3-6 beneficiaries. */
static int aw_gather_scatter(gen *g, int inst, const int *ind, int nind, int64_t t0, int fmt)
{
    int hub = aw_ind(g, ind, nind);
    int k = (int)aml_rng_range(&g->r, 3, 6), m = (int)aml_rng_range(&g->r, 3, 6);
    inst_acct(g, inst, hub);
    int64_t in = 0, at = t0;
    for (int i = 0; i < k; i++) {
        int o = aw_member(g, ind, nind);
        CHECK(o);
        if (o == hub)
            continue;
        inst_acct(g, inst, o);
        int64_t amt = money(g, 3000, 10000);
        in += amt;
        at += aml_rng_range(&g->r, 2, 16) * AML_HOUR;
        CHECK(aw_tx(g, at, o, hub, amt, fmt, inst));
    }
    for (int i = 0; i < m; i++) {
        int b = aw_member(g, ind, nind);
        CHECK(b);
        if (b == hub)
            continue;
        inst_acct(g, inst, b);
        at += aml_rng_range(&g->r, 2, 16) * AML_HOUR;
        CHECK(aw_tx(g, at, hub, b, in * aml_rng_range(&g->r, 85, 95) / 100 / m, fmt, inst));
    }
    return 0;
}

/* The originators of a STACK or a BIPARTITE: a known individual, then members. */
static int aw_originators(gen *g, int inst, const int *ind, int nind, int *orig, int no)
{
    for (int i = 0; i < no; i++) {
        orig[i] = i == 0 ? aw_ind(g, ind, nind) : aw_member(g, ind, nind);
        CHECK(orig[i]);
        inst_acct(g, inst, orig[i]);
    }
    return 0;
}

/* STACK: 2-3 originators -> 2-3 fresh intermediaries -> 2-3 beneficiaries, all to all. */
static int aw_stack(gen *g, int inst, const int *ind, int nind, int64_t t0, int fmt)
{
    int no = (int)aml_rng_range(&g->r, 2, 3), ni = (int)aml_rng_range(&g->r, 2, 3), nb = (int)aml_rng_range(&g->r, 2, 3);
    int orig[3], mid[3], ben[3];
    CHECK(aw_originators(g, inst, ind, nind, orig, no));
    for (int i = 0; i < ni; i++) {
        CHECK(mid[i] = aw_fresh(g));
        inst_acct(g, inst, mid[i]);
    }
    for (int i = 0; i < nb; i++) {
        CHECK(ben[i] = aw_member(g, ind, nind));
        inst_acct(g, inst, ben[i]);
    }
    int64_t got[3] = {0};
    for (int o = 0; o < no; o++)
        for (int i = 0; i < ni; i++) {
            int64_t amt = money(g, 2000, 8000);
            got[i] += amt;
            CHECK(aw_tx(g, t0 + aml_rng_range(&g->r, 0, 24) * AML_HOUR, orig[o], mid[i], amt, fmt, inst));
        }
    for (int i = 0; i < ni; i++)
        for (int b = 0; b < nb; b++)
            CHECK(aw_tx(g, t0 + aml_rng_range(&g->r, 30, 70) * AML_HOUR, mid[i], ben[b],
                        got[i] * aml_rng_range(&g->r, 88, 96) / 100 / nb, fmt, inst));
    return 0;
}

/* BIPARTITE: 2-3 originators each pay the same 2-4 fresh beneficiaries. */
static int aw_bipartite(gen *g, int inst, const int *ind, int nind, int64_t t0, int fmt)
{
    int no = (int)aml_rng_range(&g->r, 2, 3), nb = (int)aml_rng_range(&g->r, 2, 4);
    int orig[3], ben[4];
    CHECK(aw_originators(g, inst, ind, nind, orig, no));
    for (int i = 0; i < nb; i++) {
        CHECK(ben[i] = aw_fresh(g));
        inst_acct(g, inst, ben[i]);
    }
    for (int o = 0; o < no; o++)
        for (int b = 0; b < nb; b++)
            CHECK(aw_tx(g, t0 + aml_rng_range(&g->r, 0, 7 * 24) * AML_HOUR, orig[o], ben[b], money(g, 1500, 8000), fmt,
                        inst));
    return 0;
}

/* One laundering attempt of an AMLworld pattern among the individuals ind[0, nind). */
static int aw_pattern(gen *g, int kind, const int *ind, int nind)
{
    static const char *const labels[] = {"FAN-IN", "FAN-OUT", "CYCLE", "SCATTER-GATHER", "GATHER-SCATTER", "STACK",
                                         "BIPARTITE"};
    static const int typs[] = {AML_T03, AML_T04, AML_T07, AML_T08, AML_T08, AML_T08, AML_T08};
    int inst = new_instance(g, typs[kind], 0, labels[kind]);
    CHECK(inst);
    g->in[inst].awlabel = labels[kind];
    /* After a month of observed history when the period allows (the rules' warm-up before a
     * counterparty can be called new: docs/aml.md "Observation coverage"). */
    int64_t lo = g->days >= 44 ? 30 : 2;
    int64_t d0 = aml_rng_range(&g->r, lo, g->days > 14 ? g->days - 12 : 2);
    int64_t t0 = day_at(g, d0, 0, 24);
    int fmt = aml_rng_chance(&g->r, 0.7) ? GCH_ACH : GCH_WIRE;
    switch (kind) {
    case 0:
    case 1: return aw_fan(g, inst, kind, ind, nind, t0, fmt);
    case 2: return aw_cycle(g, inst, ind, nind, t0, fmt);
    case 3: return aw_scatter_gather(g, inst, ind, nind, t0, fmt);
    case 4: return aw_gather_scatter(g, inst, ind, nind, t0, fmt);
    case 5: return aw_stack(g, inst, ind, nind, t0, fmt);
    default: return aw_bipartite(g, inst, ind, nind, t0, fmt);
    }
}

static int build_amlworld(gen *g)
{
    const aml_gen_opts *o = g->o;
    int n = o->customers < 50 ? 50 : o->customers;
    int nm = n / 20 > 10 ? n / 20 : 10, nu = n / 100 > 5 ? n / 100 : 5, ne = n / 4 > 10 ? n / 4 : 10;
    int ni = n - nm - nu - ne;
    int *ind = malloc((size_t)ni * sizeof *ind), *mer = malloc((size_t)nm * sizeof *mer),
        *uti = malloc((size_t)nu * sizeof *uti), *emp = malloc((size_t)ne * sizeof *emp);
    int rc = -1;
    if (!ind || !mer || !uti || !emp)
        goto done;
    for (int i = 0; i < nm; i++) {
        if ((mer[i] = add_acct(g, -1, 1, NULL, 0)) < 0)
            goto done;
        snprintf(g->a[mer[i]].holder, sizeof g->a[0].holder, "Merchant #%d", i);
    }
    for (int i = 0; i < nu; i++) {
        if ((uti[i] = add_acct(g, -1, 1, NULL, 0)) < 0)
            goto done;
        snprintf(g->a[uti[i]].holder, sizeof g->a[0].holder, "Utility #%d", i);
    }
    for (int i = 0; i < ne; i++) {
        if ((emp[i] = add_acct(g, -1, 1, NULL, 0)) < 0)
            goto done;
        snprintf(g->a[emp[i]].holder, sizeof g->a[0].holder, "Employer #%d Corporation", i);
    }
    for (int i = 0; i < ni; i++)
        if ((ind[i] = aw_fresh(g)) < 0)
            goto done;
    /* Small employers pay a few people each; a few clients pay each employer monthly. */
    for (int i = 0; i < ni; i++) {
        int e = emp[i % ne], a = ind[i];
        int64_t pay = money(g, 1500, 6000);
        int day = (int)aml_rng_range(&g->r, 0, 29);
        for (int64_t d = day; d < g->days; d += 30)
            if (aw_tx(g, day_at(g, d, 0, 6), e, a, pay, GCH_ACH, -1) < 0)
                goto done;
        int u = uti[aml_rng_range(&g->r, 0, nu - 1)];
        int64_t bill = money(g, 30, 150);
        for (int64_t d = aml_rng_range(&g->r, 0, 29); d < g->days; d += 30)
            if (aw_tx(g, day_at(g, d, 0, 24), a, u, bill, GCH_ACH, -1) < 0)
                goto done;
        for (int64_t d = 0; d < g->days; d++) {
            if (aml_rng_chance(&g->r, 0.5) &&
                aw_tx(g, day_at(g, d, 7, 23), a, mer[aml_rng_range(&g->r, 0, nm - 1)], money(g, 5, 300),
                      aml_rng_chance(&g->r, 0.85) ? GCH_CARD : GCH_CASH, -1) < 0)
                goto done;
            if (aml_rng_chance(&g->r, 0.15) && aw_tx(g, day_at(g, d, 0, 24), a, a, money(g, 100, 5000), GCH_INTERNAL, -1) < 0)
                goto done;
            if (aml_rng_chance(&g->r, 0.02) &&
                aw_tx(g, day_at(g, d, 8, 22), a, ind[aml_rng_range(&g->r, 0, ni - 1)], money(g, 50, 2000), GCH_WIRE, -1) < 0)
                goto done;
        }
    }
    for (int i = 0; i < ne; i++) {
        int c1 = emp[(i + 1) % ne], c2 = emp[(i + 7) % ne];
        for (int64_t d = aml_rng_range(&g->r, 0, 29); d < g->days; d += 30)
            if (aw_tx(g, day_at(g, d, 8, 18), c1, emp[i], money(g, 3000, 9000), GCH_WIRE, -1) < 0 ||
                aw_tx(g, day_at(g, d + 2, 8, 18), c2, emp[i], money(g, 3000, 9000), GCH_WIRE, -1) < 0)
                goto done;
    }
    /* Laundering attempts. */
    int kinds[7], nk = 0;
    if (o->inject & (1u << AML_T03))
        kinds[nk++] = 0;
    if (o->inject & (1u << AML_T04))
        kinds[nk++] = 1;
    if (o->inject & (1u << AML_T07))
        kinds[nk++] = 2;
    if (o->inject & (1u << AML_T08))
        for (int k = 3; k <= 6; k++)
            kinds[nk++] = k;
    for (int i = 0; i < o->instances; i++)
        for (int k = 0; k < nk; k++)
            if (aw_pattern(g, kinds[k], ind, ni) < 0)
                goto done;
    if (g->oom)
        goto done;
    aml_sort(g->t, g->nt, sizeof *g->t, cmp_tx);
    rc = 0;
done:
    free(ind);
    free(mer);
    free(uti);
    free(emp);
    return rc;
}

static void aw_amount(int64_t usd_cents, int cur, char *out, size_t n)
{
    const aml_currency *c = aw_cur(cur);
    /* USD cents -> minor units of the currency with the demo rate (den/num). */
    __extension__ typedef __int128 i128;
    i128 v = (i128)usd_cents * c->usd_den;
    for (int i = 2; i < c->exponent; i++)
        v *= 10;
    i128 d = (i128)c->usd_num;
    for (int i = c->exponent; i < 2; i++)
        d *= 10;
    int64_t minor = (int64_t)((v + d / 2) / d);
    int64_t scale = 1;
    for (int i = 0; i < c->exponent; i++)
        scale *= 10;
    if (c->exponent)
        snprintf(out, n, "%lld.%0*lld", (long long)(minor / scale), c->exponent, (long long)(minor % scale));
    else
        snprintf(out, n, "%lld", (long long)minor);
}

static void aw_row(FILE *f, const gen *g, const gtx *t, int pad, int laundering)
{
    int64_t y;
    unsigned m, d;
    aml_civil_from_days(t->at / AML_DAY, &y, &m, &d);
    int64_t sec = t->at % AML_DAY;
    const gacct *fa = &g->a[t->from], *ta = &g->a[t->to];
    int rcur = ta->aw_bank % 17 == 0 ? 1 + ta->aw_bank % 5 : 0;
    char paid[48], recv[48];
    aw_amount(t->amt, t->cur, paid, sizeof paid);
    aw_amount(t->amt, rcur, recv, sizeof recv);
    fprintf(f, "%04d/%02u/%02u %02d:%02d,", (int)y, m, d, (int)(sec / 3600), (int)(sec / 60 % 60));
    if (pad)
        fprintf(f, "%03d,%s,%03d,%s,", fa->aw_bank, fa->aw_acct, ta->aw_bank, ta->aw_acct);
    else
        fprintf(f, "%d,%s,%d,%s,", fa->aw_bank, fa->aw_acct, ta->aw_bank, ta->aw_acct);
    fprintf(f, "%s,%s,%s,%s,%s,%d\n", recv, aw_cur(rcur)->amlworld, paid, aw_cur(t->cur)->amlworld, t->type, laundering);
}

int aml_gen_amlworld(const char *trans_path, const aml_gen_opts *o, aml_gen_stats *st, char *acc_out, char *pat_out,
                     size_t n, aml_err *err)
{
    gen g;
    if (setup(&g, o))
        return aml_errf(err, "bad --start date");
    if (build_amlworld(&g)) {
        gen_free(&g);
        return aml_errf(err, "out of memory while generating");
    }
    size_t l = strlen(trans_path);
    if (l > 10 && strcmp(trans_path + l - 10, "_Trans.csv") == 0) {
        snprintf(acc_out, n, "%.*s_accounts.csv", (int)(l - 10), trans_path);
        snprintf(pat_out, n, "%.*s_Patterns.txt", (int)(l - 10), trans_path);
    } else {
        snprintf(acc_out, n, "%s.accounts.csv", trans_path);
        snprintf(pat_out, n, "%s.patterns.txt", trans_path);
    }
    FILE *ft = fopen(trans_path, "wb"), *fa = fopen(acc_out, "wb"), *fp = fopen(pat_out, "wb");
    if (!ft || !fa || !fp) {
        if (ft)
            fclose(ft);
        if (fa)
            fclose(fa);
        if (fp)
            fclose(fp);
        gen_free(&g);
        return aml_errf(err, "cannot write %s and its companions", trans_path);
    }
    setvbuf(ft, NULL, _IOFBF, 1 << 20);
    fprintf(ft, "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,Amount Paid,"
                "Payment Currency,Payment Format,Is Laundering\n");
    for (size_t i = 0; i < g.nt; i++)
        aw_row(ft, &g, &g.t[i], 0, g.t[i].inst >= 0);
    fprintf(fa, "Bank Name,Bank ID,Account Number,Entity ID,Entity Name\n");
    for (size_t i = 0; i < g.na; i++)
        fprintf(fa, "Bank #%d,%d,%s,E%06zu,%s\n", g.a[i].aw_bank, g.a[i].aw_bank, g.a[i].aw_acct, i,
                g.a[i].holder[0] ? g.a[i].holder : "Unknown");
    for (size_t k = 0; k < g.nin; k++) {
        ginst *in = &g.in[k];
        fprintf(fp, "BEGIN LAUNDERING ATTEMPT - %s:  %s\n", in->awlabel, in->awdetail[0] ? in->awdetail : "synthetic");
        for (size_t i = 0; i < g.nt; i++)
            if (g.t[i].inst == (int32_t)k)
                aw_row(fp, &g, &g.t[i], 1, 1);
        fprintf(fp, "END LAUNDERING ATTEMPT - %s\n\n", in->awlabel);
    }
    int bad = ferror(ft) || ferror(fa) || ferror(fp);
    bad |= fclose(ft) != 0;
    bad |= fclose(fa) != 0;
    bad |= fclose(fp) != 0;
    fill_stats(&g, st);
    gen_free(&g);
    return bad ? aml_errf(err, "write error on %s", trans_path) : 0;
}

/* ---- the demo store ----------------------------------------------------------------------- */

/* The ids of every case, in order. */
static char (*case_ids(aml_store *s, size_t *np))[AML_CASE_ID_MAX + 1]
{
    aml_st *q = aml_stmt(s, "SELECT case_id FROM cases ORDER BY case_id");
    char (*ids)[AML_CASE_ID_MAX + 1] = NULL;
    size_t n = 0, cap = 0;
    while (q && aml_step(q) == AML_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            void *ni = realloc(ids, cap * sizeof *ids);
            if (!ni)
                break;
            ids = ni;
        }
        snprintf(ids[n++], sizeof ids[0], "%s", aml_col_text(q, 0));
    }
    if (q)
        aml_reset(q);
    *np = n;
    return ids;
}

int aml_demo_fill(aml_store *s, aml_err *err)
{
#ifdef AML_TEST_HOOKS
    /* Test hook (tests/cli/test_cli.c): a slow bank. Only in test builds
     * (MCP_TEST_HOOKS); a shipped binary reads no such variable. */
    const char *delay = getenv("AML_TEST_DEMO_DELAY_MS");
    if (delay && atoi(delay) > 0)
        usleep((useconds_t)atoi(delay) * 1000u);
#endif
    aml_gen_opts o;
    aml_gen_defaults(&o);
    o.seed = 20260728;
    o.customers = 60;
    o.days = 120;
    o.instances = 1;
    o.lookalikes = 1;
    if (aml_gen_store(s, &o, NULL, err))
        return -1;
    /* Assess every case once so that listCases shows risk levels out of the box. */
    size_t n;
    char (*ids)[AML_CASE_ID_MAX + 1] = case_ids(s, &n);
    aml_params p;
    aml_params_default(&p);
    int rc = aml_begin(s, err);
    for (size_t i = 0; i < n && !rc; i++)
        rc = aml_case_reassess(s, ids[i], &p, "demo", err);
    free(ids);
    if (!rc)
        rc = aml_commit(s, err);
    else
        aml_rollback(s);
    return rc ? -1 : 0;
}

int aml_demo_store(aml_store **out, aml_err *err)
{
    aml_store *s;
    if (aml_store_open(&s, NULL, AML_OPEN_CREATE, err))
        return -1;
    if (aml_demo_fill(s, err)) {
        aml_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}
