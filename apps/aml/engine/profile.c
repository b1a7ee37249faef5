/*
 * Profile typologies: the account against its own history and the customer's KYC profile.
 *   T10 dormant account reactivated: a long silence, then sudden volume;
 *   T11 activity inconsistent with the profile: the last period against KYC and history.
 */
#include "engine/typology.h"

/* ---- T10 dormant account reactivated ------------------------------------------------ */

/* Volume (both directions) of an account in [a, z]. */
static int64_t volume_between(eng *e, int64_t acct, int64_t a, int64_t z)
{
    static const char *const sql =
        "SELECT coalesce(sum(v.s), 0) FROM (SELECT sum(amount_base_minor) AS s FROM transactions WHERE from_acct = ?1 "
        "AND booked_at BETWEEN ?2 AND ?3 UNION ALL SELECT sum(amount_base_minor) FROM transactions WHERE to_acct = ?1 "
        "AND booked_at BETWEEN ?2 AND ?3) v";
    aml_st *st = aml_stmt(e->s, sql);
    if (!st)
        return 0;
    aml_bind_int(st, 1, acct);
    aml_bind_int(st, 2, a);
    aml_bind_int(st, 3, z);
    int64_t r = aml_step(st) == AML_ROW ? aml_col_int(st, 0) : 0; /* PostgreSQL: numeric, parsed */
    aml_reset(st);
    return r;
}

typedef struct t10_par {
    int64_t D, R, mint; /* dormant period, reactivation period, minimum total */
    double mult;        /* or this multiple of the prior monthly volume */
} t10_par;

/* The best reactivation: tx[i, end) after a gap since prev. */
typedef struct t10_best {
    int ok, score;
    size_t i, end;
    int64_t prev, gap, total, prior_monthly;
    int from_open;  /* PREV_* */
    int64_t maxgap; /* the longest gap seen */
    int unknown;    /* the first transaction has nothing (observed long enough) before it to measure from */
    int64_t observed; /* then: the observed quiet time before it */
} t10_best;

/* What a gap is measured from. */
enum { PREV_TX, PREV_OPEN, PREV_OBS };

/*
 * Activity before tx[i]: the previous transaction, earlier stored history, the opening date when the
 * account's whole life is observed (or its coverage is unrecorded), else the start of observation: the
 * silence since then is observed, the time before it is not (docs/aml.md "Observation coverage").
 * @return 0, or -1 when there is nothing to measure from.
 */
static int t10_previous(eng *e, const acct_view *v, size_t i, int64_t *prev, int *kind)
{
    *kind = PREV_TX;
    if (i > 0) {
        *prev = v->tx[i - 1].at;
        return 0;
    }
    *prev = eng_last_activity_before(e, v->acct, v->load_from);
    if (*prev != INT64_MIN)
        return 0;
    if (v->has_opened && (v->obs_from == INT64_MIN || v->life_observed)) {
        *prev = v->opened_at;
        *kind = PREV_OPEN;
        return 0;
    }
    if (v->obs_from == INT64_MIN)
        return -1;
    *prev = v->obs_from;
    *kind = PREV_OBS;
    return 0;
}

static void t10_search(eng *e, const acct_view *v, const t10_par *p, t10_best *best)
{
    memset(best, 0, sizeof *best);
    for (size_t i = v->w0; i < v->w1; i++) {
        int64_t prev;
        int kind;
        if (t10_previous(e, v, i, &prev, &kind)) {
            best->unknown = 1;
            continue;
        }
        int64_t gap = v->tx[i].at - prev;
        if (kind == PREV_OBS && gap < p->D) {
            best->unknown = 1; /* quiet for all the observed time, but too little of it to call dormant */
            best->observed = gap;
            continue;
        }
        if (gap > best->maxgap)
            best->maxgap = gap;
        if (gap < p->D)
            continue;
        size_t end = lower_at(v->tx, v->ntx, v->tx[i].at + p->R + 1);
        int64_t total = 0;
        for (size_t k = i; k < end; k++)
            total += v->tx[k].usd;
        int64_t prior = kind != PREV_TX ? 0 : volume_between(e, v->acct, prev - 90 * AML_DAY, prev) / 3;
        int ok = total >= p->mint || (prior > 0 && (double)total >= p->mult * (double)prior);
        if (!ok)
            continue;
        int score = 50 + (gap >= 365 * AML_DAY ? 15 : 0) + (total >= 5 * p->mint ? 10 : 0);
        if (!best->ok || score > best->score) {
            best->ok = 1;
            best->score = score;
            best->i = i;
            best->end = end;
            best->prev = prev;
            best->gap = gap;
            best->total = total;
            best->prior_monthly = prior;
            best->from_open = kind;
        }
    }
}

static void t10_write_match(fbuild *b, const acct_view *v, const t10_par *p, const t10_best *best)
{
    int64_t in = 0, outv = 0;
    for (size_t k = best->i; k < best->end; k++) {
        fb_ev(b, &v->tx[k], AML_ROLE_TRIGGER);
        if (v->tx[k].dir == DIR_IN)
            in += v->tx[k].usd;
        else
            outv += v->tx[k].usd;
    }
    int drained = in > 0 && (double)outv >= 0.8 * (double)in;
    fb_date(b, best->from_open == PREV_OPEN ? "openedAt" : best->from_open == PREV_OBS ? "observedFrom" : "lastActivity",
            best->prev);
    fb_int(b, "dormantDays", best->gap / AML_DAY);
    fb_date(b, "reactivatedAt", v->tx[best->i].at);
    fb_int(b, "reactivationTotalMinor", best->total);
    fb_int(b, "creditsMinor", in);
    fb_int(b, "debitsMinor", outv);
    fb_int(b, "priorMonthlyAverageMinor", best->prior_monthly);
    fb_comp(b, 50, "%lld days without activity, then %s within %lld days", (long long)(best->gap / AML_DAY),
            usd(best->total).s, (long long)(p->R / AML_DAY));
    fb_comp(b, best->gap >= 365 * AML_DAY ? 15 : 0, "dormant for more than a year");
    fb_comp(b, best->total >= 5 * p->mint ? 10 : 0, "at least 5 x the minimum amount");
    fb_comp(b, drained ? 10 : 0, "80%%+ of the credits left again");
    fb_explain(b,
               "%s had no activity from %s%s until %s (%lld days); within %lld days it then moved %s (%s in, %s "
               "out).",
               v->id, day(best->prev).s,
               best->from_open == PREV_OPEN  ? " (its opening)"
               : best->from_open == PREV_OBS ? " (when the store's history of it begins)"
                                             : "",
               day(v->tx[best->i].at).s,
               (long long)(best->gap / AML_DAY), (long long)(p->R / AML_DAY), usd(best->total).s, usd(in).s,
               usd(outv).s);
    fb_finish(b, AML_MATCHED);
}

/* T10: dormancy followed by sudden activity. */
void t10_dormant(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T10, v->acct);
    fb_str(&b, "account", v->id);
    t10_par p = {PI(e, AML_T10, P10_DORMANT_DAYS) * AML_DAY, PI(e, AML_T10, P10_REACT_DAYS) * AML_DAY,
                 PI(e, AML_T10, P10_MIN_TOTAL), P(e, AML_T10, P10_PRIOR_MULTIPLE)};
    if (v->w0 == v->w1) {
        fb_explain(&b, "%s had no transactions in the window.", v->id);
        fb_finish(&b, AML_NOT_MATCHED);
        return;
    }
    t10_best best;
    t10_search(e, v, &p, &best);
    fb_int(&b, "longestGapDays", best.maxgap / AML_DAY);
    if (best.ok) {
        t10_write_match(&b, v, &p, &best);
    } else if (best.unknown && best.maxgap < p.D && v->obs_from != INT64_MIN && !v->life_observed) {
        fb_int(&b, "observedHistoryDays", best.observed / AML_DAY);
        fb_int(&b, "historyNeededDays", p.D / AML_DAY);
        fb_missing(&b, "coverage.observed_from", "earlier history");
        fb_explain(&b,
                   "not evaluable: %lld days of history, %lld needed. The store holds the history of %s only from %s, "
                   "and its first activity came %lld days later: whether it was dormant before cannot be told.",
                   (long long)(best.observed / AML_DAY), (long long)(p.D / AML_DAY), v->id, day(v->obs_from).s,
                   (long long)(best.observed / AML_DAY));
        fb_finish(&b, AML_NOT_EVALUABLE);
    } else if (best.unknown && best.maxgap < p.D) {
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
                   v->id, (long long)(best.maxgap / AML_DAY), (long long)(p.D / AML_DAY), usd(p.mint).s);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}

/* ---- T11 activity inconsistent with the profile -------------------------------------------- */

typedef struct t11_par {
    int64_t Pd, B, SB, minamt, hist_need; /* period, cash baseline, spike look-back, minimum amount, history */
    double cm, vm, spike, share;          /* cash, volume and spike multiples; cash share */
} t11_par;

/* The period (p0, to] against the baseline (b0, p0]. */
typedef struct t11_sums {
    int64_t end, p0, b0; /* the period (p0, end], its baseline (b0, p0] */
    int64_t cash_now, cred_now, cash_base, max_prior, big;
    size_t big_i;
    int history;
} t11_sums;

/* The account has history from at least hist_need before the period (older than what was loaded counts too). */
static int t11_history(eng *e, const acct_view *v, int64_t p0, int64_t hist_need)
{
    int64_t first_seen = v->ntx ? v->tx[0].at : INT64_MAX;
    int history = first_seen != INT64_MAX && first_seen <= p0 - hist_need;
    if (!history && v->ntx && v->load_from <= p0 - hist_need)
        history = eng_first_activity(e, v->acct) < p0 - hist_need + 1;
    return history;
}

static void t11_sum(const acct_view *v, const t11_par *p, t11_sums *s)
{
    s->cash_now = s->cred_now = s->cash_base = s->max_prior = s->big = 0;
    s->big_i = SIZE_MAX;
    for (size_t i = 0; i < v->ntx; i++) {
        const etx *t = &v->tx[i];
        if (t->at > s->p0 && t->at <= s->end) {
            if (t->dir == DIR_IN) {
                s->cred_now += t->usd;
                if (t->ch == CH_CASH)
                    s->cash_now += t->usd;
            }
            if (t->usd > s->big) {
                s->big = t->usd;
                s->big_i = i;
            }
        } else if (t->at > s->b0 && t->at <= s->p0 && t->dir == DIR_IN && t->ch == CH_CASH) {
            s->cash_base += t->usd;
        }
        if (t->at > s->p0 - p->SB && t->at <= s->p0 && t->usd > s->max_prior)
            s->max_prior = t->usd;
    }
}

/* The tests: a cash out of profile, b volume out of profile, c a spike, d cash share. */
typedef struct t11_tests {
    int64_t base_monthly, cash_ref;
    int a, bb, c, d;
    double cash_share;
} t11_tests;

static void t11_test(const acct_view *v, const t11_par *p, const t11_sums *s, t11_tests *r)
{
    double months = (double)p->B / (30.0 * AML_DAY);
    r->base_monthly = s->history ? (int64_t)((double)s->cash_base / months) : 0;
    int64_t exp_cash = v->has_exp_cash ? v->exp_cash : 0;
    r->cash_ref = r->base_monthly > exp_cash ? r->base_monthly : exp_cash;
    r->a = s->cash_now >= p->minamt && (v->has_exp_cash || s->history) &&
           (double)s->cash_now >= p->cm * (double)r->cash_ref;
    r->bb = v->has_exp_volume && s->cred_now >= p->minamt && (double)s->cred_now >= p->vm * (double)v->exp_volume;
    r->c = s->history && s->big >= p->minamt && s->max_prior > 0 && (double)s->big > p->spike * (double)s->max_prior;
    r->cash_share = s->cred_now ? (double)s->cash_now / (double)s->cred_now : 0;
    r->d = !v->cash_intensive && s->cred_now >= p->minamt && r->cash_share >= p->share;
}

static void t11_write_match(fbuild *b, const acct_view *v, const t11_par *p, const t11_sums *s,
                            const t11_tests *r)
{
    double ratio_v = v->has_exp_volume && v->exp_volume ? (double)s->cred_now / (double)v->exp_volume : 0;
    double ratio_c = r->cash_ref ? (double)s->cash_now / (double)r->cash_ref : 0;
    double ratio = fmax(ratio_v, ratio_c);
    for (size_t i = 0; i < v->ntx; i++) {
        const etx *t = &v->tx[i];
        if (t->at > s->p0 && t->at <= s->end && t->dir == DIR_IN && (r->bb || t->ch == CH_CASH) &&
            t->usd >= p->minamt / 10)
            fb_ev(b, t, AML_ROLE_TRIGGER);
    }
    if (r->c && s->big_i != SIZE_MAX)
        fb_ev(b, &v->tx[s->big_i], AML_ROLE_TRIGGER);
    fb_dbl(b, "ratioToExpected", ratio);
    fb_comp(b, 50, r->bb ? "credits %.1f x the KYC expected monthly volume" : "cash credits %.1f x the expected level",
            r->bb ? ratio_v : ratio_c);
    fb_comp(b, r->a && r->bb ? 10 : 0, "both cash and total volume out of profile");
    fb_comp(b, ratio >= 5 ? 10 : 0, "5 x or more");
    fb_comp(b, ratio >= 10 ? 10 : 0, "10 x or more");
    fb_comp(b, r->c ? 10 : 0, "a single transaction over %.1f x the largest of the prior %lld days", p->spike,
            (long long)(p->SB / AML_DAY));
    fb_comp(b, r->d ? 10 : 0, "%.0f%% of credits in cash for a business that is not cash-intensive",
            r->cash_share * 100);
    if (r->bb)
        fb_explain(b,
                   "In the %lld days to %s, %s received %s, %.1f times the %s a month the customer's profile "
                   "(%s) leads one to expect.",
                   (long long)(p->Pd / AML_DAY), day(s->end).s, v->id, usd(s->cred_now).s, ratio_v, usd(v->exp_volume).s,
                   v->occupation[0] ? v->occupation : "no stated occupation");
    else
        fb_explain(b, "In the %lld days to %s, %s received %s in cash, %.1f times the expected monthly cash of %s.",
                   (long long)(p->Pd / AML_DAY), day(s->end).s, v->id, usd(s->cash_now).s, ratio_c, usd(r->cash_ref).s);
    fb_finish(b, AML_MATCHED);
}

static double t11_ratio(const acct_view *v, const t11_sums *s, const t11_tests *r)
{
    double rv = v->has_exp_volume && v->exp_volume ? (double)s->cred_now / (double)v->exp_volume : 0;
    double rc = r->cash_ref ? (double)s->cash_now / (double)r->cash_ref : 0;
    return (r->a || r->bb) ? fmax(rv, rc) + 1e6 : fmax(rv, rc);
}

/*
 * The period to judge: the last `periodDays` of the window, or, when the window is longer (a
 * monitoring scan over months of data), the worst period ending at a credit inside it: out of
 * profile first, then the highest ratio. The ends are credits of at least a tenth of the floor.
 */
static void t11_worst_period(eng *e, const acct_view *v, const t11_par *p, t11_sums *s, t11_tests *r)
{
    t11_sum(v, p, s);
    t11_test(v, p, s, r);
    double best = t11_ratio(v, s, r);
    for (size_t i = v->w0; i < v->w1; i++) {
        const etx *t = &v->tx[i];
        if (t->dir != DIR_IN || t->usd < p->minamt / 10 || t->at - p->Pd < e->from || t->at >= e->to)
            continue;
        t11_sums c = *s;
        c.end = t->at;
        c.p0 = t->at - p->Pd;
        c.b0 = c.p0 - p->B;
        c.history = t11_history(e, v, c.p0, p->hist_need);
        if (!v->has_kyc && !c.history)
            continue;
        t11_sum(v, p, &c);
        t11_tests cr;
        t11_test(v, p, &c, &cr);
        double ratio = t11_ratio(v, &c, &cr);
        if (ratio > best) {
            best = ratio;
            *s = c;
            *r = cr;
        }
    }
}

/* T11: the last `periodDays` of the window (or its worst period) against KYC and the customer's own history. */
void t11_profile(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T11, v->acct);
    fb_str(&b, "account", v->id);
    t11_par p = {PI(e, AML_T11, P11_PERIOD) * AML_DAY,  PI(e, AML_T11, P11_BASELINE_DAYS) * AML_DAY,
                 PI(e, AML_T11, P11_SPIKE_DAYS) * AML_DAY, PI(e, AML_T11, P11_MIN_AMOUNT),
                 PI(e, AML_T11, P11_MIN_HISTORY) * AML_DAY, P(e, AML_T11, P11_CASH_MULT),
                 P(e, AML_T11, P11_VOLUME_MULT),          P(e, AML_T11, P11_SPIKE_MULT),
                 P(e, AML_T11, P11_CASH_SHARE)};
    t11_sums s;
    s.end = e->to;
    s.p0 = e->to - p.Pd;
    s.b0 = s.p0 - p.B;
    s.history = t11_history(e, v, s.p0, p.hist_need);
    if (!v->has_kyc && !s.history) {
        fb_missing(&b, "customers.expected_monthly_volume_minor", "90 days of account history");
        fb_explain(&b,
                   "%s has no KYC activity profile and less than %lld days of history, so activity cannot be compared "
                   "with what is expected.",
                   v->id, (long long)(p.hist_need / AML_DAY));
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    t11_tests r;
    t11_worst_period(e, v, &p, &s, &r);
    fb_date(&b, "periodFrom", s.p0);
    fb_date(&b, "periodTo", s.end);
    fb_int(&b, "creditsMinor", s.cred_now);
    fb_int(&b, "cashCreditsMinor", s.cash_now);
    if (v->has_exp_volume)
        fb_int(&b, "kycExpectedMonthlyVolumeMinor", v->exp_volume);
    if (v->has_exp_cash)
        fb_int(&b, "kycExpectedMonthlyCashMinor", v->exp_cash);
    fb_int(&b, "historicalMonthlyCashMinor", r.base_monthly);
    fb_int(&b, "largestPriorTransactionMinor", s.max_prior);
    fb_bool(&b, "cashIntensiveBusiness", v->cash_intensive);
    if (r.a || r.bb) {
        t11_write_match(&b, v, &p, &s, &r);
    } else {
        fb_explain(&b,
                   "Activity on %s in the %lld days to %s (%s credited, %s of it cash) is within %.0f x of the "
                   "expected level.",
                   v->id, (long long)(p.Pd / AML_DAY), day(s.end).s, usd(s.cred_now).s, usd(s.cash_now).s, fmin(p.cm, p.vm));
        fb_finish(&b, AML_NOT_MATCHED);
    }
}
