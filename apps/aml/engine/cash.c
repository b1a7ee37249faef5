/*
 * Structuring-like typologies: amounts shaped around a threshold or a unit.
 *   T01 structuring: cash just below the CTR threshold, over days or split in a day;
 *   T02 funnel account: sub-threshold cash deposited by many people or away from home, moved out fast;
 *   T12 round amounts: large transactions in exact multiples of a unit.
 */
#include "engine/typology.h"

/* ---- T01 structuring ------------------------------------------------------------- */

typedef struct t01_par {
    int64_t ctr, W, band; /* threshold, window (seconds), lower edge of the near-threshold band */
    int64_t N, SD;        /* minimum near-threshold transactions; minimum same-day splits */
} t01_par;

/* The best structuring set found so far. */
typedef struct t01_best {
    int ok, score, dir, variant; /* variant 0 multi-day, 1 same-day */
    size_t *pick;                /* the set's rows (indexes into the cash rows) */
    size_t npick;
    int64_t sum;
    int locs;
    int ctr_day;    /* multi-day: some day's cash in that direction exceeded the threshold */
    int64_t med_bp; /* multi-day: median amount / threshold, in 1/10000 */
    int inband;     /* same-day: one of them in the near-threshold band */
} t01_best;

/* Cash rows of every account of the customer, inside the window, in time order. */
static cash_row *t01_cash_rows(eng *e, const acct_view *v, size_t *np)
{
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
            eng_load_cash(e, v->siblings[s], e->from, e->to, &rows, &n, &cap);
    aml_sort(rows, n, sizeof *rows, cmp_cash);
    *np = n;
    return rows;
}

/* Distinct locations among near[i, j) (each compared with the 64 before it). */
static int t01_locations(const cash_row *rows, const size_t *near, size_t i, size_t j)
{
    int locs = 0;
    for (size_t k = i; k < j; k++) {
        int seen = 0;
        for (size_t q = k > i + 64 ? k - 64 : i; q < k; q++)
            seen |= rows[near[q]].location == rows[near[k]].location;
        locs += !seen && rows[near[k]].location;
    }
    return locs;
}

/* Median of amount / threshold over near[i, j), in 1/10000. */
static double t01_median_ratio(const cash_row *rows, const size_t *near, size_t i, size_t j, int64_t ctr)
{
    int64_t ratios[4096];
    size_t nr = 0;
    for (size_t k = i; k < j && nr < 4096; k++)
        ratios[nr++] = rows[near[k]].usd * 10000 / ctr;
    return eng_median_i64(ratios, nr) / 10000.0;
}

/* A CTR was due on a day of [span0, span1 + 1 day] whose cash total in this direction exceeded the threshold. */
static int t01_ctr_day(const cash_row *rows, size_t n, int dir, int64_t span0, int64_t span1, int64_t ctr)
{
    int64_t lastday = INT64_MIN, daytotal = 0;
    int ctr_day = 0;
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
    return ctr_day;
}

/* T01b: the densest windows of near-threshold transactions near[0, nn) in direction dir. */
static void t01_multi_day(const cash_row *rows, size_t n, const size_t *near, size_t nn, int dir, const t01_par *p,
                          t01_best *best, int64_t *max_near)
{
    size_t j = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < nn; i++) {
        if (j < i) {
            j = i;
            sum = 0;
        }
        while (j < nn && rows[near[j]].at - rows[near[i]].at <= p->W)
            sum += rows[near[j++]].usd;
        int64_t cnt = (int64_t)(j - i);
        if (cnt > *max_near)
            *max_near = cnt;
        if (cnt >= p->N && sum > p->ctr) {
            int locs = t01_locations(rows, near, i, j);
            double med = t01_median_ratio(rows, near, i, j, p->ctr);
            int ctr_day = t01_ctr_day(rows, n, dir, aml_day_start(rows[near[i]].at), rows[near[j - 1]].at, p->ctr);
            int score = 50 + (int)fmin(24, 6 * (double)(cnt - p->N)) +
                        (int)fmin(15, 5 * (double)(locs > 1 ? locs - 1 : 0)) + (med >= 0.95 ? 10 : 0) +
                        (ctr_day ? 0 : 5);
            if (!best->ok || score > best->score || (score == best->score && sum > best->sum)) {
                best->ok = 1;
                best->score = score;
                best->dir = dir;
                best->variant = 0;
                best->npick = 0;
                for (size_t k = i; k < j; k++)
                    best->pick[best->npick++] = near[k];
                best->sum = sum;
                best->locs = locs;
                best->ctr_day = ctr_day;
                best->med_bp = llround(med * 10000);
            }
        }
        sum -= rows[near[i]].usd;
    }
}

/* T01a: business days with cash in direction dir split below the threshold, adding up to more than it. */
static void t01_same_day(const cash_row *rows, size_t n, int dir, const t01_par *p, t01_best *best)
{
    for (size_t i = 0; i < n;) {
        int64_t d0 = aml_day_start(rows[i].at);
        size_t k = i;
        int64_t dsum = 0, cnt = 0;
        int inband = 0, locs = 0;
        size_t start = i;
        while (k < n && aml_day_start(rows[k].at) == d0) {
            if (rows[k].dir == dir && rows[k].usd < p->ctr) {
                dsum += rows[k].usd;
                cnt++;
                inband |= rows[k].usd >= p->band;
                int seen = 0;
                for (size_t q = start; q < k; q++)
                    seen |= rows[q].dir == dir && rows[q].usd < p->ctr && rows[q].location == rows[k].location;
                locs += !seen && rows[k].location;
            }
            k++;
        }
        if (cnt >= p->SD && dsum > p->ctr && (inband || locs >= 2)) {
            int score = 50 + (locs >= 2 ? 10 : 0) + (int)fmin(15, 5 * (double)(cnt - p->SD)) + (inband ? 5 : 0);
            if (!best->ok || score > best->score) {
                best->ok = 1;
                best->score = score;
                best->dir = dir;
                best->variant = 1;
                best->inband = inband;
                best->npick = 0;
                for (size_t q = start; q < k; q++)
                    if (rows[q].dir == dir && rows[q].usd < p->ctr)
                        best->pick[best->npick++] = q;
                best->sum = dsum;
                best->locs = locs;
            }
        }
        i = k;
    }
}

/* The matched set: evidence, metrics, score components and explanation. */
static void t01_write_match(fbuild *b, const cash_row *rows, const t01_best *best, const t01_par *p,
                            aml_finding *out)
{
    const char *dirw = best->dir == DIR_OUT ? "withdrawals" : "deposits";
    int64_t lo = INT64_MAX, hi = 0, cnt = (int64_t)best->npick;
    for (size_t k = 0; k < best->npick; k++) {
        const cash_row *c = &rows[best->pick[k]];
        lo = c->usd < lo ? c->usd : lo;
        hi = c->usd > hi ? c->usd : hi;
        fb_ev_cash(b, c, AML_ROLE_TRIGGER);
    }
    const cash_row *first = &rows[best->pick[0]], *last = &rows[best->pick[best->npick - 1]];
    snprintf(out->variant, sizeof out->variant, "%s", best->variant ? "same_day_split" : "multi_day_near_threshold");
    fb_str(b, "variant", out->variant);
    fb_str(b, "direction", best->dir == DIR_OUT ? "withdrawal" : "deposit");
    fb_int(b, "transactionCount", cnt);
    fb_int(b, "totalMinor", best->sum);
    fb_int(b, "distinctLocations", best->locs);
    fb_date(b, "from", first->at);
    fb_date(b, "to", last->at);
    if (best->variant == 0) {
        double med = (double)best->med_bp / 10000.0;
        fb_dbl(b, "medianRatioToThreshold", med);
        fb_bool(b, "ctrTriggered", best->ctr_day);
        fb_comp(b, 50, "%lld cash %s in [%s, %s) within %lld days", (long long)cnt, dirw, usd(p->band).s,
                usd(p->ctr).s, (long long)(p->W / AML_DAY));
        fb_comp(b, (int)fmin(24, 6 * (double)(cnt - p->N)), "%lld transactions beyond the minimum of %lld",
                (long long)(cnt - p->N), (long long)p->N);
        fb_comp(b, (int)fmin(15, 5 * (double)(best->locs > 1 ? best->locs - 1 : 0)), "%d distinct locations",
                best->locs);
        fb_comp(b, med >= 0.95 ? 10 : 0, "median amount >= 0.95 x threshold");
        fb_comp(b, best->ctr_day ? 0 : 5, "no currency transaction report was triggered");
        char locs[64] = "";
        if (best->locs > 1)
            snprintf(locs, sizeof locs, " at %d different locations", best->locs);
        fb_explain(b,
                   "Between %s and %s the customer made %lld cash %s of %s-%s (total %s)%s; each was below "
                   "the %s reporting threshold%s.",
                   day(first->at).s, day(last->at).s, (long long)cnt, dirw, usd(lo).s, usd(hi).s, usd(best->sum).s,
                   locs, usd(p->ctr).s, best->ctr_day ? "" : " and no daily total triggered a currency transaction report");
    } else {
        fb_comp(b, 50, "%lld same-day cash %s each below %s totalling more than it", (long long)cnt, dirw,
                usd(p->ctr).s);
        fb_comp(b, best->locs >= 2 ? 10 : 0, "%d different locations on the same day", best->locs);
        fb_comp(b, (int)fmin(15, 5 * (double)(cnt - p->SD)), "%lld transactions beyond the minimum",
                (long long)(cnt - p->SD));
        fb_comp(b, best->inband ? 5 : 0, "one of them in the near-threshold band [%s, %s)", usd(p->band).s,
                usd(p->ctr).s);
        fb_explain(b,
                   "On %s the customer made %lld cash %s of %s-%s, together %s, each below the %s threshold "
                   "(%d %s).",
                   day(first->at).s, (long long)cnt, dirw, usd(lo).s, usd(hi).s, usd(best->sum).s, usd(p->ctr).s,
                   best->locs, plural(best->locs, "location", "locations"));
    }
    /* The component list decides the score; keep it equal to the one compared above. */
    fb_finish(b, AML_MATCHED);
}

/* T01: structuring, over all accounts of the customer. */
void t01_structuring(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T01, v->acct);
    t01_par p;
    p.ctr = PI(e, AML_T01, P01_CTR);
    p.W = PI(e, AML_T01, P01_WINDOW) * AML_DAY;
    p.band = (int64_t)llround((double)p.ctr * P(e, AML_T01, P01_BAND));
    p.N = PI(e, AML_T01, P01_MIN_NEAR);
    p.SD = PI(e, AML_T01, P01_SAME_DAY_MIN);
    size_t n = 0;
    cash_row *rows = t01_cash_rows(e, v, &n);
    t01_best best;
    memset(&best, 0, sizeof best);
    size_t *near = malloc((n ? n : 1) * sizeof *near);
    best.pick = malloc((n ? n : 1) * sizeof *best.pick);
    int64_t max_near = 0;
    int ncash_dir[3] = {0};
    for (int dir = DIR_IN; dir <= DIR_OUT && near && best.pick; dir++) {
        size_t nn = 0;
        for (size_t i = 0; i < n; i++) {
            if (rows[i].dir != dir)
                continue;
            ncash_dir[dir]++;
            if (rows[i].usd >= p.band && rows[i].usd < p.ctr)
                near[nn++] = i;
        }
        t01_multi_day(rows, n, near, nn, dir, &p, &best, &max_near);
        t01_same_day(rows, n, dir, &p, &best);
    }
    fb_str(&b, "account", v->id);
    fb_int(&b, "accountsConsidered", (int64_t)v->nsib);
    fb_int(&b, "cashDeposits", ncash_dir[DIR_IN]);
    fb_int(&b, "cashWithdrawals", ncash_dir[DIR_OUT]);
    if (best.ok && best.pick) {
        t01_write_match(&b, rows, &best, &p, out);
    } else {
        fb_int(&b, "maxNearThresholdInWindow", max_near);
        fb_explain(&b,
                   "No structuring pattern on %s: at most %lld cash transactions in [%s, %s) within any %lld-day "
                   "window (%lld needed), and no business day with cash split below %s adding up to more than it.",
                   v->id, (long long)max_near, usd(p.band).s, usd(p.ctr).s, (long long)(p.W / AML_DAY), (long long)p.N,
                   usd(p.ctr).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(near);
    free(best.pick);
    free(rows);
}

/* ---- T02 funnel account ---------------------------------------------------------- */

typedef struct t02_par {
    int64_t ctr, W, K, D, L, H; /* threshold, window, deposits, depositors, out-of-region locations, hours */
    double R;                    /* share moved out */
} t02_par;

/* A window of deposits dep[i, j) and what left the account after them. */
typedef struct t02_win {
    size_t i, j;
    int64_t in, outsum;
    int conductors, oor;
    double ratio, lag_med;
} t02_win;

/* Sub-threshold cash deposits in the window; *any_detail: some carry a depositor or a location. */
static cash_row *t02_deposits(eng *e, const acct_view *v, int64_t ctr, size_t *nd, int *any_detail)
{
    cash_row *dep = malloc((v->ncash ? v->ncash : 1) * sizeof *dep);
    *nd = 0;
    *any_detail = 0;
    for (size_t i = 0; dep && i < v->ncash; i++) {
        const cash_row *c = &v->cash[i];
        if (c->dir == DIR_IN && c->at >= e->from && c->usd < ctr) {
            dep[(*nd)++] = *c;
            *any_detail |= c->conductor || c->location;
        }
    }
    return dep;
}

/* Out-flows within H hours after any of the deposits dep[i, j), each counted once; with their lags. */
static int64_t t02_outflow(eng *e, const acct_view *v, const cash_row *dep, size_t i, size_t j, int64_t H,
                           int64_t *lags, size_t *nl)
{
    int64_t outsum = 0;
    *nl = 0;
    const etx *tx = v->tx;
    for (size_t t = lower_at(tx, v->ntx, dep[i].at); t < v->ntx && tx[t].at <= dep[j - 1].at + H * AML_HOUR; t++) {
        if (tx[t].dir != DIR_OUT)
            continue;
        int64_t lag = -1;
        for (size_t k = i; k < j; k++)
            if (within(e, dep[k].at, tx[t].at, H))
                lag = tx[t].at - dep[k].at;
        if (lag >= 0) {
            outsum += tx[t].usd;
            if (*nl < 256)
                lags[(*nl)++] = lag;
        }
    }
    return outsum;
}

/* The window dep[i, j): its depositors, out-of-region locations and out-flow. */
static void t02_window(eng *e, const acct_view *v, const cash_row *dep, size_t i, size_t j, const t02_par *p,
                       t02_win *w)
{
    memset(w, 0, sizeof *w);
    w->i = i;
    w->j = j;
    for (size_t k = i; k < j; k++) {
        w->in += dep[k].usd;
        int seen_c = 0, seen_l = 0;
        for (size_t q = i; q < k; q++) {
            seen_c |= dep[q].conductor == dep[k].conductor;
            seen_l |= dep[q].location == dep[k].location;
        }
        w->conductors += !seen_c && dep[k].conductor;
        if (!seen_l && dep[k].location && dep[k].region && v->home_region && dep[k].region != v->home_region)
            w->oor++;
    }
    int64_t lags[256];
    size_t nl;
    w->outsum = t02_outflow(e, v, dep, i, j, p->H, lags, &nl);
    w->ratio = w->in ? (double)w->outsum / (double)w->in : 0;
    w->lag_med = eng_median_i64(lags, nl) / 3600.0;
}

static int t02_score(const t02_win *w, const t02_par *p)
{
    return 50 + (int)fmin(15, 5 * (double)(w->conductors > p->D ? w->conductors - p->D : 0)) +
           (int)fmin(15, 5 * (double)(w->oor > p->L ? w->oor - p->L : 0)) + (w->ratio >= 0.95 ? 10 : 0) +
           (w->lag_med <= 24 ? 5 : 0);
}

static void t02_write_match(fbuild *b, eng *e, const acct_view *v, const cash_row *dep, const t02_win *w,
                            const t02_par *p)
{
    const etx *tx = v->tx;
    for (size_t k = w->i; k < w->j; k++)
        fb_ev_cash(b, &dep[k], AML_ROLE_TRIGGER);
    for (size_t t = lower_at(tx, v->ntx, dep[w->i].at); t < v->ntx && tx[t].at <= dep[w->j - 1].at + p->H * AML_HOUR;
         t++) {
        if (tx[t].dir != DIR_OUT)
            continue;
        for (size_t k = w->i; k < w->j; k++)
            if (within(e, dep[k].at, tx[t].at, p->H)) {
                fb_ev(b, &tx[t], AML_ROLE_TRIGGER);
                break;
            }
    }
    int64_t n = (int64_t)(w->j - w->i);
    fb_int(b, "deposits", n);
    fb_int(b, "depositedMinor", w->in);
    fb_int(b, "outflowMinor", w->outsum);
    fb_dbl(b, "outflowRatio", w->ratio);
    fb_int(b, "distinctConductors", w->conductors);
    fb_int(b, "outOfRegionLocations", w->oor);
    fb_dbl(b, "medianHoursToOutflow", w->lag_med);
    fb_str(b, "homeRegion", eng_interned(&e->strs, v->home_region));
    fb_comp(b, 50, "%lld sub-threshold cash deposits by several people or away from home, %.0f%% moved out within %lld h",
            (long long)n, w->ratio * 100, (long long)p->H);
    fb_comp(b, (int)fmin(15, 5 * (double)(w->conductors > p->D ? w->conductors - p->D : 0)), "%d distinct depositors",
            w->conductors);
    fb_comp(b, (int)fmin(15, 5 * (double)(w->oor > p->L ? w->oor - p->L : 0)), "%d out-of-region locations", w->oor);
    fb_comp(b, w->ratio >= 0.95 ? 10 : 0, "95%% or more of the deposits moved out");
    fb_comp(b, w->lag_med <= 24 ? 5 : 0, "median time to out-flow within 24 h");
    fb_explain(b,
               "Between %s and %s, %lld cash deposits below %s (total %s) were made into %s by %d different "
               "depositors at %d locations outside the account's home region; %s (%.0f%%) left the account within "
               "%lld hours of the deposits.",
               day(dep[w->i].at).s, day(dep[w->j - 1].at).s, (long long)n, usd(p->ctr).s, usd(w->in).s, v->id,
               w->conductors, w->oor, usd(w->outsum).s, w->ratio * 100, (long long)p->H);
    fb_finish(b, AML_MATCHED);
}

/* T02: funnel account / multi-depositor cash. */
void t02_funnel(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T02, v->acct);
    t02_par p = {PI(e, AML_T02, P02_CTR), PI(e, AML_T02, P02_WINDOW) * AML_DAY, PI(e, AML_T02, P02_MIN_DEPOSITS),
                 PI(e, AML_T02, P02_MIN_CONDUCTORS), PI(e, AML_T02, P02_MIN_OOR_LOCATIONS),
                 PI(e, AML_T02, P02_OUT_HOURS), P(e, AML_T02, P02_MIN_OUT_RATIO)};
    size_t nd;
    int any_detail;
    cash_row *dep = t02_deposits(e, v, p.ctr, &nd, &any_detail);
    fb_str(&b, "account", v->id);
    fb_int(&b, "subThresholdCashDeposits", (int64_t)nd);
    if (!dep || nd < (size_t)p.K) {
        fb_explain(&b, "%s received %lld sub-threshold cash %s in the window (%lld needed for a funnel pattern).",
                   v->id, (long long)nd, plural((int64_t)nd, "deposit", "deposits"), (long long)p.K);
        fb_finish(&b, AML_NOT_MATCHED);
        free(dep);
        return;
    }
    t02_win best, w;
    int best_ok = 0, best_score = 0;
    int partial_ok = 0; /* count and out-flow met; conductor/location facts unknown */
    double best_ratio_seen = 0;
    size_t j = 0;
    for (size_t i = 0; i < nd; i++) {
        if (j < i)
            j = i;
        while (j < nd && dep[j].at - dep[i].at <= p.W)
            j++;
        if ((int64_t)(j - i) < p.K)
            continue;
        t02_window(e, v, dep, i, j, &p, &w);
        if (w.ratio > best_ratio_seen)
            best_ratio_seen = w.ratio;
        int people = w.conductors >= p.D || w.oor >= p.L;
        if (w.ratio >= p.R && !people && !any_detail)
            partial_ok = 1;
        if (w.ratio < p.R || !people)
            continue;
        int score = t02_score(&w, &p);
        if (!best_ok || score > best_score || (score == best_score && w.in > best.in)) {
            best_ok = 1;
            best_score = score;
            best = w;
        }
    }
    if (best_ok) {
        t02_write_match(&b, e, v, dep, &best, &p);
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
                   v->id, (long long)p.D, (long long)p.L, p.R * 100, (long long)p.H);
        fb_finish(&b, AML_NOT_MATCHED);
    }
    free(dep);
}

/* ---- T12 round amounts ----------------------------------------------------------- */

/* T12's original amounts of an account's transactions of ?4 USD cents or more (also sent ahead by load.c). */
const char eng_sql_t12_amounts[] =
    "SELECT txn_no, amount_minor, currency FROM transactions "
    "WHERE from_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND amount_base_minor >= ?4 UNION ALL "
    "SELECT txn_no, amount_minor, currency FROM transactions "
    "WHERE to_acct = ?1 AND booked_at BETWEEN ?2 AND ?3 AND amount_base_minor >= ?4";

/* A transaction's amount in its own currency and that currency's exponent. */
typedef struct orig_amt {
    int64_t amt;
    int exp;
} orig_amt;

/*
 * The original amounts of the account's window transactions of mina USD cents or more, in one query for both
 * directions (one round trip on PostgreSQL instead of one per transaction), keyed by txn_no in idx (index + 1).
 */
static int t12_amounts(eng *e, const acct_view *v, int64_t mina, orig_amt **out, imap *idx)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    aml_st *st = aml_stmt(e->s, eng_sql_t12_amounts);
    if (!st || imap_init(idx, 64))
        return -1;
    aml_bind_int(st, 1, v->acct);
    aml_bind_int(st, 2, e->from);
    aml_bind_int(st, 3, e->to);
    aml_bind_int(st, 4, mina);
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            orig_amt *na = realloc(*out, nc * sizeof *na);
            if (!na)
                break;
            *out = na;
            cap = nc;
        }
        const char *cur = aml_col_text(st, 2);
        const aml_currency *c = aml_currency_find(cur, strlen(cur));
        (*out)[n] = (orig_amt){aml_col_int(st, 1), c ? c->exponent : 2};
        int64_t *slot = imap_slot(idx, aml_col_int(st, 0));
        if (!slot)
            break;
        *slot = (int64_t)++n;
    }
    aml_reset(st);
    return rc == AML_DONE ? 0 : -1;
}

/* Transactions of the window in [mina, ...) whose amount in their own currency is a multiple of `unit`
 * (USD cents, scaled to the currency's minor units): their index, original amount and wire flag. */
static size_t t12_round(eng *e, const acct_view *v, int64_t mina, int64_t unit, size_t *rd, int64_t *orig, int *wire)
{
    size_t n = 0;
    orig_amt *am = NULL;
    imap idx = {0};
    if (t12_amounts(e, v, mina, &am, &idx)) {
        free(am);
        imap_free(&idx);
        return 0;
    }
    for (size_t i = v->w0; i < v->w1; i++) {
        int64_t k;
        if (v->tx[i].usd < mina || !imap_get(&idx, v->tx[i].no, &k))
            continue;
        int64_t amt = am[k - 1].amt, u = unit;
        for (int x = 2; x < am[k - 1].exp; x++)
            u *= 10;
        for (int x = am[k - 1].exp; x < 2; x++)
            u /= 10;
        if (u > 0 && amt % u == 0) {
            orig[n] = amt;
            wire[n] = v->tx[i].ch == CH_WIRE;
            rd[n++] = i;
        }
    }
    free(am);
    imap_free(&idx);
    return n;
}

/* The window of W seconds with the most round transactions (then the largest sum): rd[*bi, *bj). */
static int64_t t12_best_window(const acct_view *v, const size_t *rd, size_t n, int64_t W, size_t *bi, size_t *bj,
                               int64_t *bsum)
{
    size_t j = 0;
    int64_t sum = 0, bcount = 0;
    *bi = *bj = 0;
    *bsum = 0;
    for (size_t i = 0; i < n; i++) {
        if (j < i) {
            j = i;
            sum = 0;
        }
        while (j < n && v->tx[rd[j]].at - v->tx[rd[i]].at <= W)
            sum += v->tx[rd[j++]].usd;
        int64_t c = (int64_t)(j - i);
        if (c > bcount || (c == bcount && sum > *bsum)) {
            bcount = c;
            *bsum = sum;
            *bi = i;
            *bj = j;
        }
        sum -= v->tx[rd[i]].usd;
    }
    return bcount;
}

/* T12: large round amounts, judged in the transaction's own currency. */
void t12_round_amounts(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T12, v->acct);
    fb_str(&b, "account", v->id);
    int64_t W = PI(e, AML_T12, P12_WINDOW) * AML_DAY, mina = PI(e, AML_T12, P12_MIN_AMOUNT);
    int64_t unit = PI(e, AML_T12, P12_ROUND_UNIT), N = PI(e, AML_T12, P12_MIN_COUNT);
    int64_t mint = PI(e, AML_T12, P12_MIN_TOTAL);
    size_t cnt = v->w1 - v->w0;
    size_t *rd = malloc((cnt ? cnt : 1) * sizeof *rd);
    int64_t *orig = malloc((cnt ? cnt : 1) * sizeof *orig);
    int *wire = malloc((cnt ? cnt : 1) * sizeof *wire);
    if (!rd || !orig || !wire) {
        free(rd);
        free(orig);
        free(wire);
        fb_oom(&b);
        return;
    }
    size_t n = t12_round(e, v, mina, unit, rd, orig, wire), bi, bj;
    int64_t bsum, bcount = t12_best_window(v, rd, n, W, &bi, &bj, &bsum);
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
