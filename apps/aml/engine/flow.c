/*
 * Flow typologies: who pays the account and where the money goes next.
 *   T03 fan-in / T04 fan-out: many new counterparties in a short window;
 *   T05 rapid movement: credits leaving again within hours;
 *   T06 money mule: a new account forwarding most of each inflow;
 *   T13 third-party payments: credits from payers who are neither holders nor known counterparties.
 */
#include "engine/typology.h"

/* ---- sliding windows ------------------------------------------------------------- */

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

/* Candidate transactions of a window search: their index in the view, time, key and amount. */
typedef struct cands {
    size_t *idx;
    int64_t *at, *key, *amt;
    size_t n;
} cands;

static int cands_alloc(cands *c, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->idx = malloc((cap ? cap : 1) * sizeof *c->idx);
    c->at = calloc(cap ? cap : 1, sizeof *c->at);
    c->key = calloc(cap ? cap : 1, sizeof *c->key);
    c->amt = calloc(cap ? cap : 1, sizeof *c->amt);
    return c->idx && c->at && c->key && c->amt ? 0 : -1;
}

static void cands_push(cands *c, size_t i, int64_t at, int64_t key, int64_t amt)
{
    c->idx[c->n] = i;
    c->at[c->n] = at;
    c->key[c->n] = key;
    c->amt[c->n] = amt;
    c->n++;
}

static void cands_free(cands *c)
{
    free(c->idx);
    free(c->at);
    free(c->key);
    free(c->amt);
}

/* ---- T03 fan-in / T04 fan-out ------------------------------------------------------ */

/* Transfers in direction dir from or to new counterparties (not the customer's own accounts).
 * @return how many transfers could not be judged: too little observed history before them. */
static size_t fan_candidates(eng *e, const acct_view *v, int typ, int dir, cands *c)
{
    int64_t look = PI(e, typ, P03_NEW_LOOKBACK) * AML_DAY, minxfer = PI(e, typ, P03_MIN_TRANSFER);
    int64_t warm = PI(e, typ, P03_WARMUP);
    size_t unjudged = 0;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != dir || !t->cp || t->ch == CH_CASH || t->ch == CH_CARD || t->usd < minxfer ||
            is_sibling(v, t->cp))
            continue; /* card purchases are payments for goods, not account-to-account transfers */
        if (v->prev_cp_at[i] != INT64_MIN && v->prev_cp_at[i] >= t->at - look)
            continue; /* a known counterparty */
        if (!observed_for(v, t->at, warm)) {
            unjudged++; /* "new" needs a warm-up of observed history */
            continue;
        }
        cands_push(c, i, t->at, t->cp, t->usd);
    }
    return unjudged;
}

/* Distinct banks of the counterparties c->key[bi, end) (at most 8); on PostgreSQL read in one statement. */
static int fan_banks(eng *e, const cands *c, size_t bi, size_t end)
{
    int banks = 0;
    char bank_seen[8][32];
    aml_acct_map m;
    aml_acct_map_init(&m, e->s, AML_ACCT_BANK);
    aml_acct_map_load(&m, c->key + bi, end > bi ? end - bi : 0);
    for (size_t k = bi; k < end && banks < 8; k++) {
        const char *bk = aml_acct_map_get(&m, c->key[k]);
        if (!bk)
            continue;
        int seen = 0;
        for (int q = 0; q < banks; q++)
            seen |= strcmp(bank_seen[q], bk) == 0;
        if (!seen)
            snprintf(bank_seen[banks++], sizeof bank_seen[0], "%s", bk);
    }
    aml_acct_map_cleanup(&m);
    return banks;
}

/* Fan-in: what was forwarded afterwards; fan-out: what funded it shortly before (context evidence). */
static int64_t fan_flow(fbuild *b, eng *e, const acct_view *v, int dir, int64_t first, int64_t last, int64_t D)
{
    int64_t flow = 0;
    if (dir == DIR_IN) {
        for (size_t t = lower_at(v->tx, v->ntx, first); t < v->ntx && v->tx[t].at <= last + D; t++)
            if (v->tx[t].dir == DIR_OUT && later(e, first, v->tx[t].at)) {
                flow += v->tx[t].usd;
                fb_ev(b, &v->tx[t], AML_ROLE_CONTEXT);
            }
    } else {
        for (size_t t = lower_at(v->tx, v->ntx, first - D); t < v->ntx && v->tx[t].at <= first; t++)
            if (v->tx[t].dir == DIR_IN) {
                flow += v->tx[t].usd;
                fb_ev(b, &v->tx[t], AML_ROLE_CONTEXT);
            }
    }
    return flow;
}

/* The window anchored at bi. */
static void fan_write_match(fbuild *b, eng *e, const acct_view *v, int typ, const cands *c, const slide *sl,
                            size_t bi)
{
    int dir = typ == AML_T03 ? DIR_IN : DIR_OUT;
    const char *party = dir == DIR_IN ? "senders" : "beneficiaries";
    int64_t W = PI(e, typ, P03_WINDOW) * AML_DAY, N = PI(e, typ, P03_MIN_PARTIES);
    size_t end = sl->end[bi];
    int64_t total = sl->sum[bi], parties = sl->distinct[bi];
    int64_t first = c->at[bi], last = c->at[end - 1];
    for (size_t k = bi; k < end; k++)
        fb_ev(b, &v->tx[c->idx[k]], AML_ROLE_TRIGGER);
    double cv = eng_cv_of(c->amt + bi, end - bi);
    int banks = fan_banks(e, c, bi, end);
    int64_t D = PI(e, typ, P03_FORWARD_DAYS) * AML_DAY;
    int64_t flow = fan_flow(b, e, v, dir, first, last, D);
    int flowed = (double)flow >= P(e, typ, P03_FORWARD_RATIO) * (double)total;
    fb_int(b, dir == DIR_IN ? "distinctOriginators" : "distinctBeneficiaries", parties);
    fb_int(b, "totalMinor", total);
    fb_int(b, "transactions", (int64_t)(end - bi));
    fb_dbl(b, "amountCv", cv);
    fb_int(b, "distinctBanks", banks);
    fb_int(b, dir == DIR_IN ? "forwardedMinor" : "fundedByRecentInflowsMinor", flow);
    fb_date(b, "from", first);
    fb_date(b, "to", last);
    fb_comp(b, 50, "%lld new %s within %lld days, total %s", (long long)parties, party, (long long)(W / AML_DAY),
            usd(total).s);
    fb_comp(b, (int)fmin(20, 2 * (double)(parties - N)), "%lld %s beyond the minimum", (long long)(parties - N), party);
    fb_comp(b, cv <= P(e, typ, P03_SIMILAR_CV) ? 10 : 0, "similar amounts (coefficient of variation %.2f)", cv);
    fb_comp(b, banks >= 2 ? 5 : 0, "%d different banks", banks);
    fb_comp(b, flowed ? 10 : 0, dir == DIR_IN ? "inflow forwarded within %lld days" : "funded by inflows within %lld days",
            (long long)(D / AML_DAY));
    if (dir == DIR_IN)
        fb_explain(b,
                   "Between %s and %s, %s received %lld payments totalling %s from %lld different accounts that "
                   "had no prior relationship with it%s.",
                   day(first).s, day(last).s, v->id, (long long)(end - bi), usd(total).s, (long long)parties,
                   flowed ? "; most of the money was sent on within days" : "");
    else
        fb_explain(b,
                   "Between %s and %s, %s sent %lld payments totalling %s to %lld different accounts it had not "
                   "paid before%s.",
                   day(first).s, day(last).s, v->id, (long long)(end - bi), usd(total).s, (long long)parties,
                   flowed ? "; the money had arrived in the account only days earlier" : "");
    fb_finish(b, AML_MATCHED);
}

/* T03 / T04: fan-in and fan-out, mirror images. */
static void fan(eng *e, const acct_view *v, int typ, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, typ, v->acct);
    int dir = typ == AML_T03 ? DIR_IN : DIR_OUT;
    int64_t W = PI(e, typ, P03_WINDOW) * AML_DAY, N = PI(e, typ, P03_MIN_PARTIES);
    int64_t minTotal = PI(e, typ, P03_MIN_TOTAL);
    cands c;
    slide sl = {0};
    if (cands_alloc(&c, v->w1 - v->w0))
        goto done;
    size_t unjudged = fan_candidates(e, v, typ, dir, &c);
    if (slide_run(c.at, c.key, c.amt, c.n, W, &sl))
        goto done;
    size_t bi = SIZE_MAX;
    int64_t maxd = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (sl.distinct[i] > maxd)
            maxd = sl.distinct[i];
        if (sl.distinct[i] >= N && sl.sum[i] >= minTotal &&
            (bi == SIZE_MAX || sl.distinct[i] > sl.distinct[bi] ||
             (sl.distinct[i] == sl.distinct[bi] && sl.sum[i] > sl.sum[bi])))
            bi = i;
    }
    fb_str(&b, "account", v->id);
    if (bi != SIZE_MAX) {
        fan_write_match(&b, e, v, typ, &c, &sl, bi);
    } else if (unjudged && !c.n) {
        eng_short_history(&b, v, v->tx[v->w1 - 1].at, PI(e, typ, P03_WARMUP),
                          dir == DIR_IN ? "senders" : "beneficiaries");
    } else {
        fb_int(&b, "maxNewCounterpartiesInWindow", maxd);
        fb_explain(&b,
                   "No %s on %s: at most %lld new %s within any %lld-day window (%lld needed, with at least %s in "
                   "total).",
                   dir == DIR_IN ? "fan-in" : "fan-out", v->id, (long long)maxd,
                   dir == DIR_IN ? "senders" : "beneficiaries", (long long)(W / AML_DAY), (long long)N,
                   usd(minTotal).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
done:
    if (!out->metrics_json) /* out of memory before a result was built */
        fb_oom(&b);
    slide_free(&sl);
    cands_free(&c);
}

void t03_fan_in(eng *e, const acct_view *v, aml_finding *out)
{
    fan(e, v, AML_T03, out);
}

void t04_fan_out(eng *e, const acct_view *v, aml_finding *out)
{
    fan(e, v, AML_T04, out);
}

/* ---- T05 rapid movement ----------------------------------------------------------- */

typedef struct t05_par {
    int64_t minc, H, W, minm; /* minimum credit, exit hours, window, minimum matched total */
    int64_t warm;             /* observed days before a payee can be new */
    double lo, hi, maxbal;    /* pass-through ratio bounds, balance change allowed */
} t05_par;

/* Credits of the window and the debits attributed to them. */
typedef struct t05_state {
    size_t cnt;         /* transactions in the window */
    size_t *cred;       /* credits >= minc: index in the view */
    size_t nc;
    size_t *stack;      /* open credits, newest on top */
    int64_t *exitv;     /* per credit: debits attributed to it */
    int64_t *lag;       /* per credit: time to its first debit, -1 */
    int64_t *pair_c, *pair_d; /* (credit, debit index) of each attribution */
    size_t npairs;
    int64_t *pin, *pout; /* prefix sums of credits and debits over the window */
    int64_t *pmc, *pex;  /* prefix sums over passed credits: amount, exits */
} t05_state;

static int t05_alloc(t05_state *s, size_t cnt)
{
    memset(s, 0, sizeof *s);
    s->cnt = cnt;
    size_t c1 = cnt ? cnt : 1;
    s->cred = malloc(c1 * sizeof *s->cred);
    s->stack = malloc(c1 * sizeof *s->stack);
    s->exitv = calloc(c1, sizeof *s->exitv);
    s->lag = malloc(c1 * sizeof *s->lag);
    s->pair_c = malloc(c1 * sizeof *s->pair_c);
    s->pair_d = malloc(c1 * sizeof *s->pair_d);
    s->pin = malloc((cnt + 1) * sizeof *s->pin);
    s->pout = malloc((cnt + 1) * sizeof *s->pout);
    s->pmc = malloc((cnt + 1) * sizeof *s->pmc);
    s->pex = malloc((cnt + 1) * sizeof *s->pex);
    return s->cred && s->stack && s->exitv && s->lag && s->pair_c && s->pair_d && s->pin && s->pout && s->pmc &&
                   s->pex
               ? 0
               : -1;
}

static void t05_free(t05_state *s)
{
    free(s->cred);
    free(s->stack);
    free(s->exitv);
    free(s->lag);
    free(s->pair_c);
    free(s->pair_d);
    free(s->pin);
    free(s->pout);
    free(s->pmc);
    free(s->pex);
}

/* Attributes the debit i to the open credits on the stack, newest first; returns the index of the
 * lowest credit still open. */
static size_t t05_debit(eng *e, const acct_view *v, t05_state *s, const t05_par *p, size_t i, size_t *top,
                        size_t lo_i)
{
    const etx *t = &v->tx[i];
    int64_t rem = t->usd;
    size_t sp = *top;
    while (sp > lo_i && rem > 0) {
        size_t c = s->stack[sp - 1];
        const etx *ct = &v->tx[s->cred[c]];
        if (!later(e, ct->at, t->at) || ct->at == t->at) {
            sp--; /* booked with the debit: not before it */
            continue;
        }
        if (!within(e, ct->at, t->at, p->H))
            break; /* too old, and so is everything below */
        int64_t capv = (int64_t)((double)ct->usd * p->hi) - s->exitv[c];
        if (capv > 0) {
            int64_t take = rem < capv ? rem : capv;
            s->exitv[c] += take;
            rem -= take;
            if (s->lag[c] < 0)
                s->lag[c] = t->at - ct->at;
            if (s->npairs < s->cnt) {
                s->pair_c[s->npairs] = (int64_t)c;
                s->pair_d[s->npairs++] = (int64_t)i;
            }
            capv -= take;
        }
        if (capv <= 0 && sp == *top) {
            (*top)--; /* exhausted, on top: gone for good */
            sp = *top;
        } else {
            sp--;
        }
    }
    /* Drop credits that have expired at the bottom. */
    while (lo_i < *top && !within(e, v->tx[s->cred[s->stack[lo_i]]].at, t->at, p->H) &&
           v->tx[s->cred[s->stack[lo_i]]].at < t->at)
        lo_i++;
    return lo_i;
}

/*
 * Open credits live on a stack, newest on top: a debit takes from the top
 * down (what just came in is what passes through), exhausted credits are
 * popped, and the walk stops at the first credit older than exitHours
 * (everything below it is older still). Each credit is pushed and popped
 * once, so the whole pass is linear.
 */
static void t05_attribute(eng *e, const acct_view *v, t05_state *s, const t05_par *p)
{
    size_t lo_i = 0, top = 0;
    s->pin[0] = s->pout[0] = 0;
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        size_t k = i - v->w0;
        s->pin[k + 1] = s->pin[k] + (t->dir == DIR_IN ? t->usd : 0);
        s->pout[k + 1] = s->pout[k] + (t->dir == DIR_OUT ? t->usd : 0);
        if (t->dir == DIR_IN) {
            /* Transfers only: cash placed and moved on is T02's funnel, and a shop's takings paying
             * its suppliers are its trade (the Prism and Oracle scenarios are funds-transfer flows). */
            if (t->usd >= p->minc && t->ch != CH_CASH) {
                s->lag[s->nc] = -1;
                s->cred[s->nc] = i;
                s->stack[top++] = s->nc;
                s->nc++;
            }
            continue;
        }
        if (t->cp && (v->known[i] || !observed_for(v, t->at, p->warm)))
            continue; /* paying a long-standing payee (rent, payroll) is not moving funds on; nor can a
                       * payee be told new before a warm-up of observed history */
        lo_i = t05_debit(e, v, s, p, i, &top, lo_i);
    }
}

/* A credit passed through when at least ratioLow of it left within exitHours. */
static int t05_passed(const acct_view *v, const t05_state *s, size_t z, double lo)
{
    return s->exitv[z] > 0 && (double)s->exitv[z] >= lo * (double)v->tx[s->cred[z]].usd;
}

/* The best window of passed credits. */
typedef struct t05_best {
    size_t a, end; /* credits [a, end); a = SIZE_MAX when none */
    int64_t mc, ex, net;
    int64_t seen_mc;  /* the largest matched amount of any window */
    double seen_ratio; /* its debit/credit ratio */
} t05_best;

/* Windows anchored at each passed credit, summed with prefix sums. */
static void t05_windows(const acct_view *v, t05_state *s, const t05_par *p, t05_best *r)
{
    memset(r, 0, sizeof *r);
    r->a = SIZE_MAX;
    s->pmc[0] = s->pex[0] = 0;
    for (size_t z = 0; z < s->nc; z++) {
        int ok = t05_passed(v, s, z, p->lo);
        s->pmc[z + 1] = s->pmc[z] + (ok ? v->tx[s->cred[z]].usd : 0);
        s->pex[z + 1] = s->pex[z] + (ok ? s->exitv[z] : 0);
    }
    size_t z = 0;
    for (size_t a = 0; a < s->nc; a++) {
        int64_t t0 = v->tx[s->cred[a]].at;
        if (z < a)
            z = a;
        while (z < s->nc && v->tx[s->cred[z]].at - t0 <= p->W)
            z++;
        if (!t05_passed(v, s, a, p->lo))
            continue;
        int64_t mc = s->pmc[z] - s->pmc[a], ex = s->pex[z] - s->pex[a];
        size_t k0 = s->cred[a] - v->w0, k1 = lower_at(v->tx, v->ntx, t0 + p->W + 1) - v->w0;
        int64_t net = (s->pin[k1] - s->pin[k0]) - (s->pout[k1] - s->pout[k0]);
        double ratio = mc ? (double)ex / (double)mc : 0;
        if (mc > r->seen_mc) {
            r->seen_mc = mc;
            r->seen_ratio = ratio;
        }
        /* "Little balance left" is judged on the matched flows: unrelated credits in the
         * same window (a salary) would otherwise block the rule. The account's net change
         * over the window is reported as a metric. */
        if (mc >= p->minm && ratio >= p->lo && ratio <= p->hi && (double)llabs(mc - ex) <= p->maxbal * (double)mc &&
            mc > r->mc) {
            r->a = a;
            r->end = z;
            r->mc = mc;
            r->ex = ex;
            r->net = net;
        }
    }
}

static void t05_write_match(fbuild *b, const acct_view *v, const t05_state *s, const t05_par *p, const t05_best *r)
{
    int64_t lags[512];
    size_t nl = 0, ncred = 0;
    for (size_t q = r->a; q < r->end; q++) {
        if (!t05_passed(v, s, q, p->lo))
            continue;
        ncred++;
        fb_ev(b, &v->tx[s->cred[q]], AML_ROLE_TRIGGER);
        if (nl < 512)
            lags[nl++] = s->lag[q];
    }
    for (size_t k = 0; k < s->npairs; k++)
        if ((size_t)s->pair_c[k] >= r->a && (size_t)s->pair_c[k] < r->end && t05_passed(v, s, (size_t)s->pair_c[k], p->lo))
            fb_ev(b, &v->tx[s->pair_d[k]], AML_ROLE_TRIGGER);
    double med = eng_median_i64(lags, nl) / 3600.0;
    double ratio = (double)r->ex / (double)r->mc;
    fb_int(b, "matchedCreditsMinor", r->mc);
    fb_int(b, "exitDebitsMinor", r->ex);
    fb_dbl(b, "debitToCreditRatio", ratio);
    fb_int(b, "accountNetChangeMinor", r->net);
    fb_int(b, "retainedMinor", r->mc - r->ex);
    fb_int(b, "matchedCredits", (int64_t)ncred);
    fb_dbl(b, "medianHoursToExit", med);
    fb_comp(b, 50, "%s credited and %.0f%% debited within %lld h", usd(r->mc).s, ratio * 100, (long long)p->H);
    fb_comp(b, med <= 24 ? 10 : 0, "median exit within 24 h (%.1f h)", med);
    fb_comp(b, ratio >= 0.9 && ratio <= 1.05 ? 10 : 0, "90-105%% of the credits passed through");
    fb_comp(b, (int)fmin(15, 3 * (double)(ncred > 2 ? ncred - 2 : 0)), "%zu matched credits", ncred);
    fb_comp(b, r->mc >= 5 * p->minm ? 10 : 0, "at least 5 x the minimum amount");
    fb_explain(b,
               "Between %s and %s, %zu credits totalling %s reached %s and %s (%.0f%%) left again within %lld "
               "hours (median %.1f hours); %s of it stayed in the account.",
               day(v->tx[s->cred[r->a]].at).s, day(v->tx[s->cred[r->end - 1]].at).s, ncred, usd(r->mc).s, v->id,
               usd(r->ex).s, ratio * 100, (long long)p->H, med, usd(r->mc - r->ex).s);
    fb_finish(b, AML_MATCHED);
}

/* T05: rapid movement of funds. Each debit is attributed to the open credits
 * that precede it within exitHours, newest first (what just came in is what
 * passes through), each credit absorbing at most ratioHigh times its amount. */
void t05_rapid_movement(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T05, v->acct);
    t05_par p = {PI(e, AML_T05, P05_MIN_CREDIT),       PI(e, AML_T05, P05_EXIT_HOURS),
                 PI(e, AML_T05, P05_WINDOW) * AML_DAY, PI(e, AML_T05, P05_MIN_MATCHED),
                 PI(e, AML_T05, P05_WARMUP),           P(e, AML_T05, P05_RATIO_LOW),
                 P(e, AML_T05, P05_RATIO_HIGH),        P(e, AML_T05, P05_MAX_BALANCE_CHANGE)};
    t05_state s;
    int bad = t05_alloc(&s, v->w1 - v->w0);
    fb_str(&b, "account", v->id);
    if (bad) {
        fb_oom(&b);
        t05_free(&s);
        return;
    }
    t05_attribute(e, v, &s, &p);
    t05_best r;
    t05_windows(v, &s, &p, &r);
    if (r.a == SIZE_MAX) {
        fb_int(&b, "largestMatchedCreditsMinor", r.seen_mc);
        fb_dbl(&b, "debitToCreditRatio", r.seen_ratio);
        fb_explain(&b,
                   "No pass-through on %s: credits of %s or more followed by debits within %lld hours reached "
                   "at most %s in a %lld-day window (%s needed, with %.0f-%.0f%% leaving and little balance "
                   "left).",
                   v->id, usd(p.minc).s, (long long)p.H, usd(r.seen_mc).s, (long long)(p.W / AML_DAY), usd(p.minm).s,
                   p.lo * 100, p.hi * 100);
        fb_finish(&b, AML_NOT_MATCHED);
    } else {
        t05_write_match(&b, v, &s, &p, &r);
    }
    t05_free(&s);
}

/* ---- T06 money mule -------------------------------------------------------------------- */

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

typedef struct t06_par {
    int64_t maxage, H, minin, mint; /* account age, exit hours, minimum inflow, minimum total */
    double lo, hi;                  /* share forwarded */
} t06_par;

/* What the matched groups add up to. */
typedef struct t06_acc {
    int64_t total, groups, first_at, seen_groups;
    int foreign_or_cash;
    int64_t origs[64];
    size_t norig;
    double best_ratio; /* the forward ratio closest to 0.9 */
} t06_acc;

static int t06_qualifies(const etx *u, const t06_par *p)
{
    return u->dir == DIR_IN && u->ch != CH_CASH && u->cp && u->usd >= p->minin;
}

/* The counterparty of an out-flow is an account in another country than the focus account's. */
static int t06_foreign(eng *e, const acct_view *v, int64_t cp)
{
    int foreign = 0;
    aml_st *st = aml_stmt(e->s, "SELECT country, is_internal FROM accounts WHERE acct_no = ?");
    if (st) {
        aml_bind_int(st, 1, cp);
        if (aml_step(st) == AML_ROW) {
            const char *c = aml_col_text(st, 0);
            if (c[0] && v->country[0] && strcmp(c, v->country) != 0)
                foreign = 1;
        }
        aml_reset(st);
    }
    return foreign;
}

/* A matched group's transactions tx[g0, o): evidence, originators, where the money went. */
static void t06_take(fbuild *b, eng *e, const acct_view *v, const t06_par *p, size_t g0, size_t o, int64_t last_in,
                     t06_acc *acc)
{
    for (size_t k = g0; k < o; k++) {
        const etx *u = &v->tx[k];
        if (u->dir == DIR_IN && !t06_qualifies(u, p))
            continue;
        if (u->dir == DIR_OUT && !within(e, last_in, u->at, p->H))
            continue;
        fb_ev(b, u, AML_ROLE_TRIGGER);
        if (u->dir == DIR_IN && !is_sibling(v, u->cp)) {
            int seen = 0;
            for (size_t q = 0; q < acc->norig; q++)
                seen |= acc->origs[q] == u->cp;
            if (!seen && acc->norig < 64)
                acc->origs[acc->norig++] = u->cp;
        }
        if (u->dir == DIR_OUT && u->ch == CH_CASH)
            acc->foreign_or_cash = 1;
        if (u->dir == DIR_OUT && u->ch != CH_CASH && u->cp && !acc->foreign_or_cash && t06_foreign(e, v, u->cp))
            acc->foreign_or_cash = 1;
    }
}

/* The inflow group starting at tx[i] (qualifying inflows with no out-flow between them) and the
 * out-flows that follow within exitHours, before the next inflow; returns where to go on. */
static size_t t06_group(fbuild *b, eng *e, const acct_view *v, const t06_par *p, size_t i, t06_acc *acc)
{
    size_t g0 = i, g1 = i;
    int64_t in = 0, last_in = v->tx[i].at;
    while (g1 < v->w1 && v->tx[g1].dir == DIR_IN) {
        const etx *u = &v->tx[g1];
        if (t06_qualifies(u, p)) {
            in += u->usd;
            last_in = u->at;
        }
        g1++;
    }
    int64_t outsum = 0;
    size_t o = g1;
    for (; o < v->w1; o++) {
        const etx *u = &v->tx[o];
        if (t06_qualifies(u, p))
            break;
        if (u->dir == DIR_OUT && within(e, last_in, u->at, p->H))
            outsum += u->usd;
        if (u->at > last_in + p->H * AML_HOUR + (e->daygran ? AML_DAY : 0))
            break;
    }
    double ratio = in ? (double)outsum / (double)in : 0;
    acc->seen_groups++;
    if (fabs(ratio - 0.9) < fabs(acc->best_ratio - 0.9))
        acc->best_ratio = ratio;
    int age_ok = acc->groups > 0 || v->tx[g0].at - v->opened_at <= p->maxage;
    if (ratio >= p->lo && ratio <= p->hi && age_ok) {
        if (!acc->groups)
            acc->first_at = v->tx[g0].at;
        acc->groups++;
        acc->total += in;
        t06_take(b, e, v, p, g0, o, last_in, acc);
    }
    return o > g1 ? o : g1;
}

static void t06_write_match(fbuild *b, const acct_view *v, const t06_par *p, const t06_acc *acc, int64_t age_days)
{
    int orig = (int)acc->norig;
    int small_open = v->has_opening_deposit && v->opening_deposit <= 10000;
    int vuln = occupation_vulnerable(v->occupation);
    fb_int(b, "accountAgeDaysAtFirstMatch", age_days);
    fb_int(b, "matchedGroups", acc->groups);
    fb_int(b, "matchedInflowMinor", acc->total);
    fb_int(b, "distinctOriginators", orig);
    if (v->has_opening_deposit)
        fb_int(b, "openingDepositMinor", v->opening_deposit);
    fb_comp(b, 50, "account %lld days old; %lld inflow %s forwarded %.0f-%.0f%% within %lld h", (long long)age_days,
            (long long)acc->groups, plural(acc->groups, "group", "groups"), p->lo * 100, p->hi * 100, (long long)p->H);
    fb_comp(b, small_open ? 10 : 0, "opened with a deposit of at most $100.00");
    fb_comp(b, orig >= 3 ? 10 : 0, "%d unrelated originators", orig);
    fb_comp(b, acc->foreign_or_cash ? 10 : 0, "funds left in cash or to a foreign account");
    fb_comp(b, vuln ? 10 : 0, "occupation commonly recruited as a mule (%s)", v->occupation);
    fb_comp(b, (int)fmin(15, 5 * (double)(acc->groups - 1)), "%lld further groups", (long long)(acc->groups - 1));
    fb_explain(b,
               "%s was opened on %s; %lld days later it began receiving transfers (%s in %lld %s), and each time "
               "%.0f-%.0f%% of the amount was sent on within %lld hours, the rest staying in the account.",
               v->id, day(v->opened_at).s, (long long)age_days, usd(acc->total).s, (long long)acc->groups,
               plural(acc->groups, "batch", "batches"), p->lo * 100, p->hi * 100, (long long)p->H);
    fb_finish(b, AML_MATCHED);
}

/* T06: money mule. Inflow groups (inflows with no out-flow between them) and
 * the out-flows that follow within exitHours, before the next inflow. */
void t06_money_mule(eng *e, const acct_view *v, aml_finding *out)
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
    t06_par p = {PI(e, AML_T06, P06_MAX_AGE) * AML_DAY, PI(e, AML_T06, P06_EXIT_HOURS), PI(e, AML_T06, P06_MIN_INFLOW),
                 PI(e, AML_T06, P06_MIN_TOTAL), P(e, AML_T06, P06_FWD_LOW), P(e, AML_T06, P06_FWD_HIGH)};
    t06_acc acc;
    memset(&acc, 0, sizeof acc);
    size_t i = v->w0;
    while (i < v->w1) {
        if (!t06_qualifies(&v->tx[i], &p))
            i++;
        else
            i = t06_group(&b, e, v, &p, i, &acc);
    }
    int64_t age_days = acc.first_at ? (acc.first_at - v->opened_at) / AML_DAY : 0;
    fb_date(&b, "openedAt", v->opened_at);
    if (acc.groups && acc.total >= p.mint) {
        t06_write_match(&b, v, &p, &acc, age_days);
    } else {
        fb_int(&b, "inflowGroups", acc.seen_groups);
        fb_dbl(&b, "closestForwardRatio", acc.best_ratio);
        fb_explain(&b,
                   "No money-mule pattern on %s (opened %s): no inflow of %s or more was followed within %lld hours by "
                   "out-flows of %.0f-%.0f%% of it while the account was under %lld days old, for %s in total.",
                   v->id, day(v->opened_at).s, usd(p.minin).s, (long long)p.H, p.lo * 100, p.hi * 100,
                   (long long)(p.maxage / AML_DAY), usd(p.mint).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* ---- T13 third-party payments --------------------------------------------------------- */

typedef struct t13_par {
    int64_t W, look, N, mincred; /* window, known-counterparty look-back, minimum payers, minimum credit */
    double minshare;             /* minimum share of the credits */
    int64_t warm;                /* observed days before a payer can be unknown */
    int64_t mintotal;            /* from unknown payers, at least */
} t13_par;

/* The payers of credits in the window who are neither account holders nor known counterparties:
 * a counterparty account (> 0) or the conductor of a cash deposit (< 0, minus its interned id). */
typedef struct t13_payers {
    cands c;
    int64_t *pin;    /* prefix sums of credits over the window */
    size_t unjudged; /* credits from payers not judged: too little observed history before them */
} t13_payers;

/* Conductors of the cash credits, by txn_no. */
static int t13_conductors(const acct_view *v, imap *cond)
{
    if (imap_init(cond, v->ncash + 1))
        return -1;
    for (size_t i = 0; i < v->ncash; i++) {
        const cash_row *c = &v->cash[i];
        if (c->dir == DIR_IN && c->conductor) {
            int64_t *s = imap_slot(cond, c->no);
            if (s)
                *s = c->conductor;
        }
    }
    return 0;
}

/* The payer of credit tx[i] (0 when none or one of the holders) and the time of its previous credit. */
static int64_t t13_payer(const acct_view *v, size_t i, const imap *cond, imap *lastc, const int *party_cond,
                         int64_t mincred, int64_t *prev)
{
    const etx *t = &v->tx[i];
    int64_t payer = 0, cid;
    *prev = INT64_MIN;
    if (!(t->dir == DIR_IN && t->usd >= mincred && t->ch != CH_CARD))
        return 0;
    if (t->cp) {
        *prev = v->prev_cp_at[i];
        return t->cp;
    }
    if (t->ch == CH_CASH && imap_get(cond, t->no, &cid)) {
        int own = 0;
        for (size_t k = 0; k < v->ncust; k++)
            own |= party_cond[k] == cid;
        payer = own ? 0 : -cid;
        if (payer) {
            int64_t *s = imap_slot(lastc, payer);
            if (s) {
                if (*s)
                    *prev = *s - 1;
                *s = t->at + 1;
            }
        }
    }
    return payer;
}

/*
 * The payer of credit tx[i] pays the account again a month later (25-35 days) within 10% of the
 * amount: a regular income (salary, pension, rent) starting, which is not a third-party payment
 * however new the payer. The scan judges a window after the fact, so the later credit is known.
 */
static int t13_recurring(const acct_view *v, size_t i)
{
    const etx *t = &v->tx[i];
    for (size_t k = lower_at(v->tx, v->ntx, t->at + 25 * AML_DAY); k < v->ntx && v->tx[k].at <= t->at + 35 * AML_DAY;
         k++) {
        const etx *u = &v->tx[k];
        if (u->dir == DIR_IN && u->cp == t->cp && llabs(u->usd - t->usd) * 10 <= t->usd)
            return 1;
    }
    return 0;
}

/* Collects the unknown payers of the window (the whole history is walked, so that a cash depositor
 * seen before the window counts as known). */
static int t13_collect(eng *e, const acct_view *v, const t13_par *p, t13_payers *py)
{
    imap cond, lastc;
    if (t13_conductors(v, &cond))
        return -1;
    if (imap_init(&lastc, 16)) {
        imap_free(&cond);
        return -1;
    }
    int party_cond[8];
    for (size_t k = 0; k < v->ncust; k++)
        party_cond[k] = eng_intern(&e->strs, v->cust_ids[k]);
    py->pin[0] = 0;
    size_t k0 = 0;
    for (size_t i = 0; i < v->ntx; i++) {
        const etx *t = &v->tx[i];
        int64_t prev, payer = t13_payer(v, i, &cond, &lastc, party_cond, p->mincred, &prev);
        if (i < v->w0)
            continue;
        py->pin[k0 + 1] = py->pin[k0] + (t->dir == DIR_IN ? t->usd : 0);
        k0++;
        if (!payer || (payer > 0 && is_sibling(v, payer)))
            continue;
        if (prev != INT64_MIN && prev >= t->at - p->look)
            continue;
        if (!observed_for(v, t->at, p->warm)) {
            py->unjudged++; /* "unknown" needs a warm-up of observed history */
            continue;
        }
        if (payer > 0 && t13_recurring(v, i))
            continue; /* a new employer, pension or tenant: regular income, not a third party */
        cands_push(&py->c, i, t->at, payer, t->usd);
    }
    imap_free(&cond);
    imap_free(&lastc);
    return 0;
}

/* The window with the most unknown payers (then the largest share of the credits). */
typedef struct t13_best {
    size_t bi; /* SIZE_MAX when none */
    double bshare, seen_share;
    int64_t bcred, seen_payers;
} t13_best;

static void t13_windows(const acct_view *v, const t13_par *p, const t13_payers *py, const slide *sl, t13_best *r)
{
    const cands *c = &py->c;
    for (size_t i = 0; i < c->n; i++) {
        size_t a0 = c->idx[i] - v->w0, a1 = lower_at(v->tx, v->ntx, c->at[i] + p->W + 1) - v->w0;
        int64_t cred = py->pin[a1] - py->pin[a0];
        double sh = cred ? (double)sl->sum[i] / (double)cred : 0;
        if (sl->distinct[i] > r->seen_payers) {
            r->seen_payers = sl->distinct[i];
            r->seen_share = sh;
        }
        if (sl->distinct[i] >= p->N && sh >= p->minshare && sl->sum[i] >= p->mintotal &&
            (r->bi == SIZE_MAX || sl->distinct[i] > sl->distinct[r->bi] ||
             (sl->distinct[i] == sl->distinct[r->bi] && sh > r->bshare))) {
            r->bi = i;
            r->bshare = sh;
            r->bcred = cred;
        }
    }
}

static void t13_write_match(fbuild *b, const acct_view *v, const t13_par *p, const cands *c, const slide *sl,
                            const t13_best *r)
{
    size_t end = sl->end[r->bi];
    int64_t payers = sl->distinct[r->bi], val = sl->sum[r->bi];
    int cash = 0;
    for (size_t k = r->bi; k < end; k++) {
        fb_ev(b, &v->tx[c->idx[k]], AML_ROLE_TRIGGER);
        cash |= c->key[k] < 0;
    }
    fb_int(b, "unknownPayers", payers);
    fb_int(b, "fromUnknownPayersMinor", val);
    fb_int(b, "creditsInWindowMinor", r->bcred);
    fb_dbl(b, "valueShare", r->bshare);
    fb_bool(b, "includesCashDepositors", cash);
    fb_comp(b, 50, "%lld unknown payers, %.0f%% of the credits", (long long)payers, r->bshare * 100);
    fb_comp(b, (int)fmin(20, 5 * (double)(payers - p->N)), "%lld payers beyond the minimum",
            (long long)(payers - p->N));
    fb_comp(b, r->bshare >= 0.6 ? 10 : 0, "60%%+ of the credits");
    fb_explain(b,
               "Between %s and %s, %s (%.0f%% of the money credited to %s) came from %lld payers%s who are "
               "neither holders of the account nor counterparties seen in the previous %lld days.",
               day(c->at[r->bi]).s, day(c->at[end - 1]).s, usd(val).s, r->bshare * 100, v->id, (long long)payers,
               cash ? ", some of them depositing cash," : "", (long long)(p->look / AML_DAY));
    fb_finish(b, AML_MATCHED);
}

/* Whether a payer is known needs history: an opening date, or activity before the window. */
static int t13_no_history(eng *e, const acct_view *v)
{
    return !v->has_opened && (!v->ntx || v->tx[0].at >= e->from) &&
           eng_first_activity(e, v->acct) >= v->load_from;
}

/* T13: credits from payers who are neither account holders nor known counterparties. */
void t13_third_party(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T13, v->acct);
    fb_str(&b, "account", v->id);
    t13_par p = {PI(e, AML_T13, P13_WINDOW) * AML_DAY, PI(e, AML_T13, P13_KNOWN_LOOKBACK) * AML_DAY,
                 PI(e, AML_T13, P13_MIN_PAYERS), PI(e, AML_T13, P13_MIN_CREDIT), P(e, AML_T13, P13_MIN_SHARE),
                 PI(e, AML_T13, P13_WARMUP), PI(e, AML_T13, P13_MIN_TOTAL)};
    if (t13_no_history(e, v)) {
        fb_missing(&b, "accounts.opened_at", "transactions before the window");
        fb_explain(&b,
                   "%s has no opening date and no activity before the window, so known counterparties cannot be told "
                   "from new ones.",
                   v->id);
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    size_t cnt = v->w1 - v->w0;
    t13_payers py;
    py.unjudged = 0;
    slide sl = {0};
    int bad = cands_alloc(&py.c, cnt);
    py.pin = calloc(cnt + 1, sizeof *py.pin);
    if (bad || !py.pin || t13_collect(e, v, &p, &py)) {
        fb_oom(&b);
        cands_free(&py.c);
        free(py.pin);
        return;
    }
    t13_best r = {SIZE_MAX, 0, 0, 0, 0};
    if (!slide_run(py.c.at, py.c.key, py.c.amt, py.c.n, p.W, &sl))
        t13_windows(v, &p, &py, &sl, &r);
    if (r.bi != SIZE_MAX) {
        t13_write_match(&b, v, &p, &py.c, &sl, &r);
    } else if (py.unjudged && !py.c.n) {
        eng_short_history(&b, v, v->tx[v->w1 - 1].at, p.warm, "payers");
    } else {
        fb_int(&b, "maxUnknownPayers", r.seen_payers);
        fb_dbl(&b, "theirShare", r.seen_share);
        fb_explain(&b,
                   "No third-party payment pattern on %s: at most %lld unknown payers within any %lld-day window "
                   "(%lld needed, making up %.0f%% of credits and at least %s).",
                   v->id, (long long)r.seen_payers, (long long)(p.W / AML_DAY), (long long)p.N, p.minshare * 100,
                   usd(p.mintotal).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    slide_free(&sl);
    cands_free(&py.c);
    free(py.pin);
}
