/*
 * Exposure typologies: the account's transactions against reference data.
 *   T09 high-risk jurisdiction: counterparties in countries on the FATF lists at the time
 *       (dated rows, loaded once per run);
 *   T14 trade-based money laundering: payments that do not match their invoices.
 */
#include "engine/typology.h"

/* ---- T09 high-risk jurisdiction ------------------------------------------------------- */

/* The list entry that puts acct's country on a list at time `at` (call for action first), or NULL. */
static const jrow *listed_at(const eng *e, int64_t acct, int64_t at)
{
    int64_t cid;
    if (!imap_get(&e->listed, acct, &cid))
        return NULL;
    const char *c = eng_interned(&e->strs, (int)cid);
    const jrow *best = NULL;
    for (size_t i = 0; i < e->njl; i++) {
        const jrow *j = &e->jl[i];
        if (strcmp(j->country, c) != 0 || at < j->from || at >= j->to)
            continue;
        if (!best || strcmp(j->list, "fatf_call_for_action") == 0)
            best = j;
    }
    return best;
}

/* The flagged transactions fl[bi, bj) with the largest sum in a window of W seconds. */
static int64_t t09_best_window(const acct_view *v, const size_t *fl, size_t n, int64_t W, size_t *bi, size_t *bj)
{
    int64_t bsum = 0, sum = 0;
    size_t j = 0;
    *bi = *bj = 0;
    for (size_t i = 0; i < n; i++) {
        if (j < i) {
            j = i;
            sum = 0;
        }
        while (j < n && v->tx[fl[j]].at - v->tx[fl[i]].at <= W)
            sum += v->tx[fl[j++]].usd;
        if (sum > bsum) {
            bsum = sum;
            *bi = i;
            *bj = j;
        }
        sum -= v->tx[fl[i]].usd;
    }
    return bsum;
}

/* One entry of the listsUsed metric. */
static void list_entry(fbuild *b, const jrow *j)
{
    mcp_jw_object_begin(&b->mw);
    mcp_jw_key(&b->mw, "list");
    mcp_jw_string(&b->mw, j->list);
    mcp_jw_key(&b->mw, "country");
    mcp_jw_string(&b->mw, j->country);
    char d[11];
    aml_fmt_date(j->from, d);
    mcp_jw_key(&b->mw, "effectiveFrom");
    mcp_jw_string(&b->mw, d);
    mcp_jw_object_end(&b->mw);
}

static void t09_write_match(fbuild *b, eng *e, const acct_view *v, const size_t *fl, const jrow *const *why,
                            size_t bi, size_t bj, int64_t bsum)
{
    int cfa = 0, in = 0, outd = 0;
    char countries[64] = "";
    mcp_jw_key(&b->mw, "listsUsed");
    mcp_jw_array_begin(&b->mw);
    const jrow *seen[16];
    int nseen = 0;
    for (size_t k = bi; k < bj; k++) {
        const etx *t = &v->tx[fl[k]];
        fb_ev(b, t, AML_ROLE_TRIGGER);
        cfa |= strcmp(why[k]->list, "fatf_call_for_action") == 0;
        in |= t->dir == DIR_IN;
        outd |= t->dir == DIR_OUT;
        int dup = 0;
        for (int q = 0; q < nseen; q++)
            dup |= seen[q] == why[k];
        if (!dup && nseen < 16) {
            seen[nseen++] = why[k];
            list_entry(b, why[k]);
            size_t l = strlen(countries);
            if (!strstr(countries, why[k]->country))
                snprintf(countries + l, sizeof countries - l, "%s%s", l ? ", " : "", why[k]->country);
        }
    }
    mcp_jw_array_end(&b->mw);
    int64_t nt = (int64_t)(bj - bi);
    int base = (int)(cfa ? PI(e, AML_T09, P09_CFA_SCORE) : PI(e, AML_T09, P09_IM_SCORE));
    fb_int(b, "exposureMinor", bsum);
    fb_str(b, "countries", countries);
    fb_comp(b, base, "%s on the FATF %s list", countries, cfa ? "call-for-action" : "increased-monitoring");
    fb_comp(b, (int)fmin(15, 5 * (double)(nt - 1)), "%lld further transactions", (long long)(nt - 1));
    fb_comp(b, in && outd ? 5 : 0, "funds both sent and received");
    fb_explain(b,
               "Between %s and %s, %s %s %s in %lld %s with accounts in %s, %s on the FATF %s list at the "
               "time.",
               day(v->tx[fl[bi]].at).s, day(v->tx[fl[bj - 1]].at).s, v->id,
               in && outd ? "exchanged" : in ? "received" : "sent", usd(bsum).s, (long long)nt,
               plural(nt, "transaction", "transactions"), countries, nseen > 1 ? "jurisdictions" : "a jurisdiction",
               cfa ? "high-risk (call for action)" : "increased monitoring");
    fb_finish(b, AML_MATCHED);
}

/* T09: exposure to listed jurisdictions. */
void t09_jurisdiction(eng *e, const acct_view *v, aml_finding *out)
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
        fb_oom(&b);
        return;
    }
    for (size_t i = v->w0; i < v->w1; i++) {
        const jrow *j = v->tx[i].cp ? listed_at(e, v->tx[i].cp, v->tx[i].at) : NULL;
        if (j) {
            why[n] = j;
            fl[n++] = i;
        }
    }
    size_t bi, bj;
    int64_t bsum = t09_best_window(v, fl, n, W, &bi, &bj);
    fb_int(&b, "flaggedTransactions", (int64_t)n);
    if (n && bsum >= mina) {
        t09_write_match(&b, e, v, fl, why, bi, bj, bsum);
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

/* ---- T14 trade-based money laundering -------------------------------------------------- */

/* An invoice amount in USD cents at the rate in force at `at`; -1 when there is none. */
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
    aml_st *st = aml_stmt(e->s, "SELECT coalesce((SELECT c.full_name FROM account_parties p JOIN customers c "
                                      "ON c.customer_id = p.customer_id WHERE p.acct_no = a.acct_no ORDER BY "
                                      "p.role <> 'primary', c.customer_id LIMIT 1), a.holder_name, '') "
                                      "FROM accounts a WHERE a.acct_no = ?");
    if (!st)
        return;
    aml_bind_int(st, 1, acct);
    if (aml_step(st) == AML_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    aml_reset(st);
}

/* What the trade documents of the window add up to. */
typedef struct t14_sums {
    int64_t docs, flagged, wrongparty, pay_total, inv_total;
    double maxmis;
} t14_sums;

/* One document row: checks it against its payment, adds it to the sums, the evidence and the
 * documents metric. */
static void t14_document(fbuild *b, eng *e, const acct_view *v, aml_st *st, double thr, t14_sums *s)
{
    s->docs++;
    int64_t no = aml_col_int(st, 1), at = aml_col_int(st, 2);
    int64_t fa = aml_col_int(st, 3), ta = aml_col_int(st, 4);
    int64_t paid = aml_col_int(st, 5);
    int64_t inv = fx_usd(e, aml_col_int(st, 6), aml_col_text(st, 7), at);
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
    if (mis > s->maxmis)
        s->maxmis = mis;
    s->pay_total += paid;
    s->inv_total += inv > 0 ? inv : 0;
    s->flagged += f;
    s->wrongparty += pm;
    etx t = {no, at, incoming ? fa : ta, paid, (unsigned char)(incoming ? DIR_IN : DIR_OUT), CH_WIRE};
    fb_ev(b, &t, f ? AML_ROLE_TRIGGER : AML_ROLE_CONTEXT);
    mcp_jw_object_begin(&b->mw);
    mcp_jw_key(&b->mw, "docId");
    mcp_jw_string(&b->mw, docid);
    mcp_jw_key(&b->mw, "invoiceUsdMinor");
    mcp_jw_int(&b->mw, inv);
    mcp_jw_key(&b->mw, "paidUsdMinor");
    mcp_jw_int(&b->mw, paid);
    mcp_jw_key(&b->mw, "mismatch");
    mcp_jw_double(&b->mw, eng_round4(mis));
    mcp_jw_key(&b->mw, "payerIsNotInvoicedParty");
    mcp_jw_bool(&b->mw, pm);
    mcp_jw_object_end(&b->mw);
}

/* T14's trade documents of an account in a window (also sent ahead by load.c). */
const char eng_sql_t14_docs[] =
        "SELECT d.doc_id, t.txn_no, t.booked_at, t.from_acct, t.to_acct, t.amount_base_minor, d.invoice_amount_minor, "
        "d.currency, d.buyer_name, d.seller_name FROM trade_documents d JOIN transactions t ON t.txn_no = d.txn_no "
        "WHERE t.to_acct = ?1 AND t.booked_at BETWEEN ?2 AND ?3 "
        "UNION ALL "
        "SELECT d.doc_id, t.txn_no, t.booked_at, t.from_acct, t.to_acct, t.amount_base_minor, d.invoice_amount_minor, "
        "d.currency, d.buyer_name, d.seller_name FROM trade_documents d JOIN transactions t ON t.txn_no = d.txn_no "
        "WHERE t.from_acct = ?1 AND t.booked_at BETWEEN ?2 AND ?3 ORDER BY 2, 1";

/* The documents metric: the first 200 trade documents of the window, by transaction. @return -1 on a store error. */
static int t14_documents(fbuild *b, eng *e, const acct_view *v, double thr, t14_sums *s)
{
    aml_st *st = aml_stmt(e->s, eng_sql_t14_docs);
    if (!st)
        return -1;
    aml_bind_int(st, 1, v->acct);
    aml_bind_int(st, 2, e->from);
    aml_bind_int(st, 3, e->to);
    mcp_jw_key(&b->mw, "documents");
    mcp_jw_array_begin(&b->mw);
    while (aml_step(st) == AML_ROW) {
        t14_document(b, e, v, st, thr, s);
        if (s->docs >= 200)
            break;
    }
    aml_reset(st);
    mcp_jw_array_end(&b->mw);
    return 0;
}

/* No trade documents: the typology cannot be evaluated. */
static void t14_no_documents(fbuild *b, const acct_view *v)
{
    fb_missing(b, "trade_documents", NULL);
    fb_explain(b, "No trade documents are linked to the transactions of %s in the window.", v->id);
    fb_finish(b, AML_NOT_EVALUABLE);
}

/* T14: trade documents against the payments that settle them. */
void t14_trade(eng *e, const acct_view *v, aml_finding *out)
{
    fbuild b;
    fb_init(&b, e, out, AML_T14, v->acct);
    fb_str(&b, "account", v->id);
    if (!e->any_trade_docs) {
        t14_no_documents(&b, v);
        return;
    }
    double thr = P(e, AML_T14, P14_MISMATCH);
    t14_sums s;
    memset(&s, 0, sizeof s);
    if (t14_documents(&b, e, v, thr, &s)) {
        fb_explain(&b, "not evaluated: %s", aml_errmsg(e->s));
        fb_finish(&b, AML_NOT_EVALUABLE);
        return;
    }
    fb_int(&b, "tradeDocuments", s.docs);
    if (!s.docs) {
        t14_no_documents(&b, v);
        return;
    }
    fb_int(&b, "flaggedDocuments", s.flagged);
    fb_dbl(&b, "maxMismatch", s.maxmis);
    fb_int(&b, "paymentsMinor", s.pay_total);
    fb_int(&b, "invoicesMinor", s.inv_total);
    if (s.flagged) {
        fb_comp(&b, 50, "%lld payment(s) differ from the invoice by more than %.0f%% or come from another party",
                (long long)s.flagged, thr * 100);
        fb_comp(&b, (int)fmin(20, 10 * (double)(s.flagged - 1)), "%lld further documents", (long long)(s.flagged - 1));
        fb_comp(&b, s.maxmis >= 0.5 ? 10 : 0, "a difference of 50%% or more");
        fb_comp(&b, s.wrongparty ? 10 : 0, "paid by or to someone other than the invoiced party");
        fb_explain(&b,
                   "%lld of %lld trade payments on %s did not match their invoices (payments %s against invoices of "
                   "%s; largest difference %.0f%%)%s.",
                   (long long)s.flagged, (long long)s.docs, v->id, usd(s.pay_total).s, usd(s.inv_total).s,
                   s.maxmis * 100, s.wrongparty ? "; some were settled by a party other than the one invoiced" : "");
        fb_finish(&b, AML_MATCHED);
    } else {
        fb_explain(&b, "All %lld trade payments on %s match their invoices within %.0f%% and the invoiced parties.",
                   (long long)s.docs, v->id, thr * 100);
        fb_finish(&b, AML_NOT_MATCHED);
    }
}
