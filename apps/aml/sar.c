/*
 * SAR drafts (see sar.h). The narrative follows FinCEN's guidance as
 * summarised in FFIEC BSA/AML Manual Appendix L: introduction (what, why,
 * total, period, who, accounts, how the case arose), a chronological body
 * with individual dates and amounts, and a conclusion (why filed, amounts,
 * where documentation is kept). Every value printed comes from the store:
 * customer and holder names, account ids, locations, countries, dates and
 * amounts of the evidence transactions, and sums over them; the remaining
 * words are fixed template text. No tables in the narrative: the
 * transaction list goes to the CSV attachment.
 */
#include "sar.h"

#include <stdlib.h>
#include <string.h>

/* One evidence transaction, with what the narrative says about it. */
typedef struct etxn {
    int64_t no, at, usd, amount, from, to;
    char ref[96], cur[8], channel[12], from_id[128], to_id[128], from_name[128], to_name[128], loc[64],
        from_country[8], to_country[8];
    int typ;        /* the finding it came from */
    int focus_side; /* 1 in, 2 out, 0 related */
} etxn;

static int load_txn(aml_store *s, int64_t no, etxn *t)
{
    static const char *const sql =
        "SELECT t.txn_ref, t.booked_at, t.amount_minor, t.currency, t.amount_base_minor, t.channel, t.from_acct, "
        "t.to_acct, fa.account_id, ta.account_id, coalesce(t.location_id, ''), "
        "coalesce((SELECT c.full_name FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
        "WHERE p.acct_no = t.from_acct ORDER BY p.role <> 'primary' LIMIT 1), fa.holder_name, ''), "
        "coalesce((SELECT c.full_name FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
        "WHERE p.acct_no = t.to_acct ORDER BY p.role <> 'primary' LIMIT 1), ta.holder_name, ''), "
        "coalesce(fa.country, ''), coalesce(ta.country, '') "
        "FROM transactions t LEFT JOIN accounts fa ON fa.acct_no = t.from_acct "
        "LEFT JOIN accounts ta ON ta.acct_no = t.to_acct WHERE t.txn_no = ?";
    sqlite3_stmt *st = aml_stmt(s, sql);
    if (!st)
        return -1;
    aml_bind_int(st, 1, no);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->no = no;
    if (sqlite3_column_type(st, 0) != SQLITE_NULL)
        snprintf(t->ref, sizeof t->ref, "%s", aml_col_text(st, 0));
    else
        snprintf(t->ref, sizeof t->ref, "#%lld", (long long)no);
    t->at = sqlite3_column_int64(st, 1);
    t->amount = sqlite3_column_int64(st, 2);
    snprintf(t->cur, sizeof t->cur, "%s", aml_col_text(st, 3));
    t->usd = sqlite3_column_int64(st, 4);
    snprintf(t->channel, sizeof t->channel, "%s", aml_col_text(st, 5));
    t->from = sqlite3_column_int64(st, 6);
    t->to = sqlite3_column_int64(st, 7);
    snprintf(t->from_id, sizeof t->from_id, "%s", aml_col_text(st, 8));
    snprintf(t->to_id, sizeof t->to_id, "%s", aml_col_text(st, 9));
    snprintf(t->loc, sizeof t->loc, "%s", aml_col_text(st, 10));
    snprintf(t->from_name, sizeof t->from_name, "%s", aml_col_text(st, 11));
    snprintf(t->to_name, sizeof t->to_name, "%s", aml_col_text(st, 12));
    snprintf(t->from_country, sizeof t->from_country, "%s", aml_col_text(st, 13));
    snprintf(t->to_country, sizeof t->to_country, "%s", aml_col_text(st, 14));
    sqlite3_reset(st);
    return 0;
}

static int in_case(const aml_case *c, int64_t acct)
{
    for (size_t i = 0; i < c->naccts; i++)
        if (c->accts[i] == acct)
            return 1;
    return 0;
}

/* "$9,800.00", or "EUR 1,000.00 ($1,080.00 at the stored rate)" for other currencies. */
static void amount_text(const etxn *t, char *out, size_t n)
{
    char u[48];
    aml_fmt_usd(t->usd, u, sizeof u);
    if (strcmp(t->cur, "USD") == 0) {
        snprintf(out, n, "%s", u);
        return;
    }
    const aml_currency *c = aml_currency_find(t->cur, strlen(t->cur));
    char a[48];
    aml_fmt_amount(t->amount, c ? c->exponent : 2, a, sizeof a);
    snprintf(out, n, "%s %s (%s at the stored exchange rate)", t->cur, a, u);
}

static const char *channel_words(const char *ch)
{
    if (strcmp(ch, "wire") == 0)
        return "wire transfer";
    if (strcmp(ch, "ach") == 0)
        return "ACH (automated clearing house) transfer";
    if (strcmp(ch, "check") == 0)
        return "check";
    if (strcmp(ch, "internal") == 0)
        return "internal transfer";
    if (strcmp(ch, "crypto") == 0)
        return "virtual currency transfer";
    if (strcmp(ch, "card") == 0)
        return "card payment";
    return "transfer";
}

static void party(const char *id, const char *name, char *out, size_t n)
{
    if (name[0])
        snprintf(out, n, "%s (%s)", id, name);
    else
        snprintf(out, n, "%s", id);
}

/* One sentence about a transaction, relative to the case's accounts. */
static void txn_sentence(const etxn *t, mcp_buf *b)
{
    char when[11], amt[128], from[300], to[300];
    aml_fmt_date(t->at, when);
    amount_text(t, amt, sizeof amt);
    party(t->from_id, t->from_name, from, sizeof from);
    party(t->to_id, t->to_name, to, sizeof to);
    if (strcmp(t->channel, "cash") == 0 && !t->from)
        aml_buf_printf(b, "On %s, %s in cash was deposited into account %s%s%s (%s).", when, amt, t->to_id,
                       t->loc[0] ? " at " : "", t->loc, t->ref);
    else if (strcmp(t->channel, "cash") == 0 && !t->to)
        aml_buf_printf(b, "On %s, %s in cash was withdrawn from account %s%s%s (%s).", when, amt, t->from_id,
                       t->loc[0] ? " at " : "", t->loc, t->ref);
    else
        aml_buf_printf(b, "On %s, account %s sent %s by %s to account %s (%s).", when, from, amt,
                       channel_words(t->channel), to, t->ref);
}

typedef struct strset {
    char items[32][128];
    int n;
} strset;

static void set_add(strset *s, const char *v)
{
    if (!v || !*v)
        return;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->items[i], v) == 0)
            return;
    if (s->n < 32)
        snprintf(s->items[s->n++], sizeof s->items[0], "%s", v);
}

static void set_join(const strset *s, mcp_buf *b, const char *last_sep)
{
    for (int i = 0; i < s->n; i++) {
        if (i)
            aml_buf_puts(b, i == s->n - 1 ? last_sep : ", ");
        aml_buf_puts(b, s->items[i]);
    }
}

static const char *instrument_of(const char *ch)
{
    if (strcmp(ch, "cash") == 0)
        return "U.S. Currency";
    if (strcmp(ch, "check") == 0)
        return "Personal/Business check";
    if (strcmp(ch, "wire") == 0 || strcmp(ch, "ach") == 0 || strcmp(ch, "internal") == 0)
        return "Funds transfer";
    return "Other";
}

static int cmp_etxn(const void *a, const void *b)
{
    const etxn *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->no < y->no ? -1 : x->no > y->no;
}

static void mask_account(const char *id, char *out, size_t n)
{
    size_t l = strlen(id);
    snprintf(out, n, "****%s", l > 4 ? id + l - 4 : id);
}

/* Writes the subjects array (SAR Part I) and collects their names. */
static void subjects_write(aml_store *s, mcp_jw *w, const aml_case *c, int dir_in, int dir_out, strset *names,
                           mcp_buf *who)
{
    mcp_jw_array_begin(w);
    strset seen = {0};
    for (size_t i = 0; i < c->naccts; i++) {
        sqlite3_stmt *st = aml_stmt(s, "SELECT c.customer_id, c.customer_type, c.full_name, c.first_name, c.last_name, "
                                       "c.occupation, c.naics_code, c.onboarded_at, c.date_of_birth, c.region "
                                       "FROM account_parties p JOIN customers c ON c.customer_id = p.customer_id "
                                       "WHERE p.acct_no = ? ORDER BY p.role <> 'primary', c.customer_id");
        if (!st)
            break;
        aml_bind_int(st, 1, c->accts[i]);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *id = aml_col_text(st, 0);
            int dup = 0;
            for (int k = 0; k < seen.n; k++)
                dup |= strcmp(seen.items[k], id) == 0;
            if (dup)
                continue;
            set_add(&seen, id);
            int entity = strcmp(aml_col_text(st, 1), "entity") == 0;
            set_add(names, aml_col_text(st, 2));
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "customerId");
            mcp_jw_string(w, id);
            mcp_jw_key(w, "entityOrIndividual");
            mcp_jw_string(w, entity ? "entity" : "individual");
            if (entity) {
                mcp_jw_key(w, "entityName");
                mcp_jw_string(w, aml_col_text(st, 2));
            } else {
                mcp_jw_key(w, "lastName");
                mcp_jw_string(w, aml_col_text(st, 4));
                mcp_jw_key(w, "firstName");
                mcp_jw_string(w, aml_col_text(st, 3));
            }
            mcp_jw_key(w, "occupation");
            sqlite3_column_type(st, 5) == SQLITE_NULL ? mcp_jw_null(w) : mcp_jw_string(w, aml_col_text(st, 5));
            mcp_jw_key(w, "naics");
            sqlite3_column_type(st, 6) == SQLITE_NULL ? mcp_jw_null(w) : mcp_jw_string(w, aml_col_text(st, 6));
            mcp_jw_key(w, "relationshipToInstitution");
            mcp_jw_string(w, "customer");
            mcp_jw_key(w, "customerSince");
            sqlite3_column_type(st, 7) == SQLITE_NULL ? mcp_jw_null(w) : mcp_jw_string(w, aml_col_text(st, 7));
            mcp_jw_key(w, "accounts");
            mcp_jw_array_begin(w);
            char acc[128], masked[140];
            aml_account_id(s, c->accts[i], acc, sizeof acc);
            mask_account(acc, masked, sizeof masked);
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "accountId");
            mcp_jw_string(w, acc);
            mcp_jw_key(w, "accountNumberMasked");
            mcp_jw_string(w, masked);
            mcp_jw_key(w, "closed");
            mcp_jw_bool(w, 0);
            mcp_jw_object_end(w);
            mcp_jw_array_end(w);
            mcp_jw_key(w, "roleInTransaction");
            mcp_jw_string(w, dir_in && dir_out ? "both" : dir_out ? "purchaser_sender" : "payee_receiver");
            mcp_jw_key(w, "unknownFields");
            mcp_jw_array_begin(w);
            mcp_jw_string(w, "address");
            mcp_jw_string(w, "tin");
            mcp_jw_string(w, "phone");
            mcp_jw_string(w, "identification");
            if (!entity && sqlite3_column_type(st, 8) == SQLITE_NULL)
                mcp_jw_string(w, "date_of_birth");
            mcp_jw_array_end(w);
            mcp_jw_object_end(w);
            /* "Who" for the narrative. */
            if (who->len)
                aml_buf_puts(who, "; ");
            aml_buf_printf(who, "%s, %s", aml_col_text(st, 2), entity ? "a business customer" : "an individual customer");
            if (sqlite3_column_type(st, 5) != SQLITE_NULL)
                aml_buf_printf(who, " (%s: %s)", entity ? "business" : "occupation", aml_col_text(st, 5));
            if (sqlite3_column_type(st, 7) != SQLITE_NULL)
                aml_buf_printf(who, ", a customer since %s", aml_col_text(st, 7));
            aml_buf_printf(who, ", holding account %s", acc);
        }
        sqlite3_reset(st);
    }
    mcp_jw_array_end(w);
}

int aml_sar_build(aml_store *s, const aml_case *c, const aml_assessment *a, const aml_recommendation *r,
                  const char *actor, mcp_jw *w, mcp_buf *text, aml_err *err)
{
    const aml_typology_def *cat = aml_catalog();
    static const char confidentiality[] =
        "SAR information is confidential under 31 U.S.C. 5318(g)(2); do not disclose the existence of this report "
        "to any person involved in the transactions.";
    int64_t prev_version = 0;
    char prev_hash[65] = "", prev_id[96] = "";
    sqlite3_stmt *st = aml_stmt(s, "SELECT version, sar_draft_id, narrative_json FROM sar_drafts WHERE case_id = ? "
                                   "ORDER BY version DESC LIMIT 1");
    if (!st)
        return aml_errf(err, "%s", s->errmsg);
    aml_bind_text(st, 1, c->case_id);
    if (sqlite3_step(st) == SQLITE_ROW) {
        prev_version = sqlite3_column_int64(st, 0);
        snprintf(prev_id, sizeof prev_id, "%s", aml_col_text(st, 1));
        const char *nj = aml_col_text(st, 2);
        aml_sha256_hex(nj, strlen(nj), prev_hash);
    }
    sqlite3_reset(st);

    if (!a->matched) {
        char id[128];
        snprintf(id, sizeof id, "sar_%s_v%lld", c->case_id, (long long)(prev_version + 1));
        char reason[600];
        snprintf(reason, sizeof reason,
                 "No typology matched the data of case %s (assessment %s), so the rule results give no basis for a "
                 "Suspicious Activity Report. An investigator may still file one on other grounds.",
                 c->case_id, a->assessment_id);
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "sarDraftId");
        mcp_jw_string(w, id);
        mcp_jw_key(w, "caseId");
        mcp_jw_string(w, c->case_id);
        mcp_jw_key(w, "assessmentId");
        mcp_jw_string(w, a->assessment_id);
        mcp_jw_key(w, "status");
        mcp_jw_string(w, "not_warranted");
        mcp_jw_key(w, "reason");
        mcp_jw_string(w, reason);
        mcp_jw_key(w, "confidentiality");
        mcp_jw_string(w, confidentiality);
        mcp_jw_key(w, "humanReviewRequired");
        mcp_jw_bool(w, 1);
        mcp_jw_object_end(w);
        aml_buf_printf(text, "SAR not warranted for case %s: %s\n", c->case_id, reason);
        return 0;
    }

    /* Evidence of the matched findings, strongest finding first. */
    int order[AML_NTYP], no = 0;
    for (int t = 0; t < AML_NTYP; t++)
        if (a->f[t].status == AML_MATCHED)
            order[no++] = t;
    for (int i = 1; i < no; i++)
        for (int j = i; j > 0 && a->f[order[j]].score > a->f[order[j - 1]].score; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    size_t ntx = 0;
    for (int i = 0; i < no; i++)
        ntx += a->f[order[i]].nev;
    etxn *tx = calloc(ntx ? ntx : 1, sizeof *tx);
    if (!tx)
        return aml_errf(err, "out of memory");
    size_t k = 0;
    int dir_in = 0, dir_out = 0;
    strset instruments = {0}, locations = {0}, countries = {0}, names = {0};
    int64_t first = 0, last = 0;
    for (int i = 0; i < no; i++) {
        const aml_finding *f = &a->f[order[i]];
        for (size_t e = 0; e < f->nev; e++) {
            if (f->ev[e].role != AML_ROLE_TRIGGER || load_txn(s, f->ev[e].no, &tx[k]))
                continue;
            etxn *t = &tx[k];
            t->typ = order[i];
            t->focus_side = in_case(c, t->to) && !in_case(c, t->from) ? 1 : in_case(c, t->from) && !in_case(c, t->to) ? 2 : 0;
            dir_in |= t->focus_side == 1;
            dir_out |= t->focus_side == 2;
            set_add(&instruments, instrument_of(t->channel));
            set_add(&locations, t->loc);
            if (t->focus_side == 1 && t->from_country[0] && strcmp(t->from_country, "US") != 0)
                set_add(&countries, t->from_country);
            if (t->focus_side == 2 && t->to_country[0] && strcmp(t->to_country, "US") != 0)
                set_add(&countries, t->to_country);
            if (!first || t->at < first)
                first = t->at;
            if (t->at > last)
                last = t->at;
            k++;
        }
    }
    ntx = k;
    char dfrom[11] = "", dto[11] = "", amount[48], detection[16], opened[32];
    if (first) {
        aml_fmt_date(first, dfrom);
        aml_fmt_date(last, dto);
    }
    aml_fmt_usd(r->amount_usd, amount, sizeof amount);
    snprintf(detection, sizeof detection, "%s", c->detection_date);
    snprintf(opened, sizeof opened, "%.10s", c->opened_at);

    /* ---- the narrative ---- */
    mcp_buf intro, concl, who, body_all;
    mcp_buf_init(&intro, 0);
    mcp_buf_init(&concl, 0);
    mcp_buf_init(&who, 0);
    mcp_buf_init(&body_all, 0);
    mcp_buf paras[AML_NTYP];
    for (int i = 0; i < AML_NTYP; i++)
        mcp_buf_init(&paras[i], 0);
    mcp_buf_init(text, text->max);
    /* Subjects are written to the JSON later; collect "who" first with a throwaway writer. */
    {
        mcp_buf tmp;
        mcp_jw tw;
        mcp_buf_init(&tmp, 0);
        mcp_jw_init(&tw, &tmp);
        subjects_write(s, &tw, c, dir_in, dir_out, &names, &who);
        mcp_buf_cleanup(&tmp);
    }
    strset typ_names = {0}, accts = {0};
    for (int i = 0; i < no; i++)
        set_add(&typ_names, cat[order[i]].name);
    for (size_t i = 0; i < c->naccts; i++) {
        char id[128];
        aml_account_id(s, c->accts[i], id, sizeof id);
        set_add(&accts, id);
    }
    aml_buf_printf(&intro, "This initial report concerns suspected ");
    for (int i = 0; i < typ_names.n; i++)
        aml_buf_printf(&intro, "%s%s", i ? (i == typ_names.n - 1 ? " and " : ", ") : "", typ_names.items[i]);
    aml_buf_printf(&intro, " involving %s. Between %s and %s, %s in transactions on account", who.data ? who.data : "the account holder",
                   dfrom, dto, amount);
    aml_buf_printf(&intro, "%s ", accts.n > 1 ? "s" : "");
    set_join(&accts, &intro, " and ");
    aml_buf_printf(&intro, " showed this pattern. The activity was identified by transaction monitoring; case %s was "
                           "opened on %s",
                   c->case_id, opened);
    if (detection[0])
        aml_buf_printf(&intro, " and the facts that may require a report were detected on %s", detection);
    aml_buf_printf(&intro, ". The instruments involved were ");
    set_join(&instruments, &intro, " and ");
    aml_buf_puts(&intro, ".");
    if (locations.n) {
        aml_buf_puts(&intro, " Cash activity took place at ");
        set_join(&locations, &intro, " and ");
        aml_buf_puts(&intro, ".");
    }
    if (countries.n) {
        aml_buf_puts(&intro, " The activity involved accounts held in ");
        set_join(&countries, &intro, " and ");
        aml_buf_puts(&intro, " (country codes).");
    }

    /* Body: one paragraph per matched typology, chronological transactions. */
    size_t budget = AML_SAR_NARRATIVE_MAX - 2500 - intro.len;
    size_t used = 0, listed = 0, omitted = 0;
    mcp_buf cited;
    mcp_buf_init(&cited, 0);
    for (int i = 0; i < no; i++) {
        int t = order[i];
        mcp_buf *p = &paras[i];
        aml_buf_printf(p, "%s (%s). %s This is unusual because %s. The method: %s.", cat[t].name, cat[t].subtype,
                       a->f[t].explanation, cat[t].why, cat[t].how);
        /* This typology's transactions, in time order. */
        etxn *mine = calloc(ntx ? ntx : 1, sizeof *mine);
        size_t nm = 0;
        for (size_t e = 0; mine && e < ntx; e++)
            if (tx[e].typ == t)
                mine[nm++] = tx[e];
        if (mine)
            aml_sort(mine, nm, sizeof *mine, cmp_etxn);
        size_t here = 0;
        for (size_t e = 0; e < nm; e++) {
            mcp_buf sent;
            mcp_buf_init(&sent, 0);
            txn_sentence(&mine[e], &sent);
            if (used + p->len + sent.len + 2 > budget || here >= 40) {
                omitted += nm - e;
                mcp_buf_cleanup(&sent);
                aml_buf_printf(p, " %zu further transactions of this pattern are listed in the attached file.", nm - e);
                break;
            }
            aml_buf_puts(p, " ");
            mcp_buf_append(p, sent.data, sent.len);
            mcp_buf_cleanup(&sent);
            aml_buf_printf(&cited, "%s%s", cited.len ? "\n" : "", mine[e].ref);
            here++;
            listed++;
        }
        used += p->len + 2;
        free(mine);
    }
    char csvname[160];
    snprintf(csvname, sizeof csvname, "%s_transactions.csv", c->case_id);
    aml_buf_printf(&concl, "The institution is filing this report because the activity matched ");
    for (int i = 0; i < no; i++)
        aml_buf_printf(&concl, "%s%s (score %d)", i ? (i == no - 1 ? " and " : ", ") : "", cat[order[i]].name,
                       a->f[order[i]].score);
    aml_buf_printf(&concl,
                   ", with %s involved between %s and %s, and no lawful purpose for it is apparent from the account "
                   "records. The transactions are listed in the attached file %s. Supporting documentation is kept "
                   "with case %s and is available to law enforcement on request. This draft was produced from "
                   "assessment %s and must be reviewed by the Bank Secrecy Act officer before filing.",
                   amount, dfrom, dto, csvname, c->case_id, a->assessment_id);
    /* Assemble. */
    mcp_buf_append(text, intro.data, intro.len);
    for (int i = 0; i < no; i++) {
        aml_buf_puts(text, "\n\n");
        mcp_buf_append(text, paras[i].data, paras[i].len);
    }
    aml_buf_puts(text, "\n\n");
    mcp_buf_append(text, concl.data, concl.len);

    /* Coverage and style checks, on the text as written. */
    const char *nt = text->data ? text->data : "";
    int c_who = names.n > 0 && strstr(nt, names.items[0]) != NULL;
    int c_what = instruments.n > 0;
    int c_when = dfrom[0] && strstr(nt, dfrom) != NULL;
    int c_where = accts.n > 0 && strstr(nt, accts.items[0]) != NULL;
    int c_why = strstr(nt, "This is unusual because") != NULL;
    int c_how = strstr(nt, "The method:") != NULL;
    int no_tables = !strchr(nt, '|') && !strchr(nt, '\t');

    /* Attachment CSV. */
    mcp_buf csv;
    mcp_buf_init(&csv, 1 << 20);
    aml_buf_puts(&csv, "txn_id,date,amount_usd,currency,amount,channel,direction,account,counterparty,location,typology\n");
    size_t rows = 0;
    for (size_t e = 0; e < ntx; e++) {
        const etxn *t = &tx[e];
        char when[21], u[48], am[48];
        aml_fmt_time(t->at, when);
        snprintf(u, sizeof u, "%lld.%02lld", (long long)(t->usd / 100), (long long)(t->usd % 100));
        const aml_currency *cu = aml_currency_find(t->cur, strlen(t->cur));
        int ex = cu ? cu->exponent : 2;
        int64_t sc = 1;
        for (int z = 0; z < ex; z++)
            sc *= 10;
        if (ex)
            snprintf(am, sizeof am, "%lld.%0*lld", (long long)(t->amount / sc), ex, (long long)(t->amount % sc));
        else
            snprintf(am, sizeof am, "%lld", (long long)t->amount);
        const char *acct = t->focus_side == 1 ? t->to_id : t->from_id;
        const char *cp = t->focus_side == 1 ? t->from_id : t->to_id;
        if (aml_buf_printf(&csv, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", t->ref, when, u, t->cur, am, t->channel,
                           t->focus_side == 1 ? "in" : t->focus_side == 2 ? "out" : "related", acct, cp, t->loc,
                           cat[t->typ].id) != MCP_OK)
            break;
        rows++;
    }

    /* Draft identity: a new version only when the content changed. */
    mcp_buf nj;
    mcp_jw njw;
    mcp_buf_init(&nj, 0);
    mcp_jw_init(&njw, &nj);
    mcp_jw_object_begin(&njw);
    mcp_jw_key(&njw, "introduction");
    mcp_jw_stringn(&njw, intro.data ? intro.data : "", intro.len);
    mcp_jw_key(&njw, "body");
    mcp_jw_array_begin(&njw);
    for (int i = 0; i < no; i++)
        mcp_jw_stringn(&njw, paras[i].data ? paras[i].data : "", paras[i].len);
    mcp_jw_array_end(&njw);
    mcp_jw_key(&njw, "conclusion");
    mcp_jw_stringn(&njw, concl.data ? concl.data : "", concl.len);
    mcp_jw_object_end(&njw);
    char hash[65];
    aml_sha256_hex(nj.data ? nj.data : "", nj.len, hash);
    int same = prev_version && strcmp(hash, prev_hash) == 0;
    int64_t version = same ? prev_version : prev_version + 1;
    char id[128];
    if (same)
        snprintf(id, sizeof id, "%s", prev_id);
    else
        snprintf(id, sizeof id, "sar_%s_v%lld", c->case_id, (long long)version);

    /* ---- the structured result ---- */
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "sarDraftId");
    mcp_jw_string(w, id);
    mcp_jw_key(w, "caseId");
    mcp_jw_string(w, c->case_id);
    mcp_jw_key(w, "assessmentId");
    mcp_jw_string(w, a->assessment_id);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, "draft");
    mcp_jw_key(w, "version");
    mcp_jw_int(w, version);
    mcp_jw_key(w, "templateVersion");
    mcp_jw_string(w, AML_SAR_TEMPLATE_VERSION);
    mcp_jw_key(w, "confidentiality");
    mcp_jw_string(w, confidentiality);
    mcp_jw_key(w, "humanReviewRequired");
    mcp_jw_bool(w, 1);
    mcp_jw_key(w, "filing");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "initial");
    mcp_jw_key(w, "priorBsaId");
    mcp_jw_null(w);
    mcp_jw_key(w, "detectionDate");
    detection[0] ? mcp_jw_string(w, detection) : mcp_jw_null(w);
    mcp_jw_key(w, "dueDate");
    r->due_date[0] ? mcp_jw_string(w, r->due_date) : mcp_jw_null(w);
    mcp_jw_key(w, "dueRule");
    mcp_jw_string(w, "30 calendar days from initial detection (60 if no suspect is identified)");
    mcp_jw_key(w, "belowReportingThreshold");
    mcp_jw_bool(w, r->amount_usd < AML_SAR_FLOOR_MINOR);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "subjects");
    {
        strset dummy = {0};
        mcp_buf dw;
        mcp_buf_init(&dw, 0);
        subjects_write(s, w, c, dir_in, dir_out, &dummy, &dw);
        mcp_buf_cleanup(&dw);
    }
    mcp_jw_key(w, "suspiciousActivity");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "amountInvolvedUsd");
    mcp_jw_int(w, (r->amount_usd + 50) / 100);
    mcp_jw_key(w, "dateFrom");
    mcp_jw_string(w, dfrom);
    mcp_jw_key(w, "dateTo");
    mcp_jw_string(w, dto);
    mcp_jw_key(w, "cumulativeAmountUsd");
    mcp_jw_null(w);
    mcp_jw_key(w, "categories");
    mcp_jw_array_begin(w);
    int seen_sub[AML_NTYP], nsub = 0;
    for (int i = 0; i < no; i++) {
        int dup = 0;
        for (int z = 0; z < nsub; z++)
            dup |= cat[seen_sub[z]].subtype_code == cat[order[i]].subtype_code;
        if (dup)
            continue;
        seen_sub[nsub++] = order[i];
        aml_sar_category_write(w, order[i], 1);
    }
    mcp_jw_array_end(w);
    mcp_jw_key(w, "instruments");
    mcp_jw_array_begin(w);
    for (int i = 0; i < instruments.n; i++)
        mcp_jw_string(w, instruments.items[i]);
    mcp_jw_array_end(w);
    mcp_jw_key(w, "products");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "Deposit account");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "narrative");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "text");
    mcp_jw_stringn(w, text->data ? text->data : "", text->len);
    mcp_jw_key(w, "characters");
    mcp_jw_int(w, (int64_t)text->len);
    mcp_jw_key(w, "limit");
    mcp_jw_int(w, AML_SAR_NARRATIVE_MAX);
    mcp_jw_key(w, "sections");
    mcp_jw_raw(w, nj.data, nj.len);
    mcp_jw_key(w, "coverage");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "who");
    mcp_jw_bool(w, c_who);
    mcp_jw_key(w, "what");
    mcp_jw_bool(w, c_what);
    mcp_jw_key(w, "when");
    mcp_jw_bool(w, c_when);
    mcp_jw_key(w, "where");
    mcp_jw_bool(w, c_where);
    mcp_jw_key(w, "why");
    mcp_jw_bool(w, c_why);
    mcp_jw_key(w, "how");
    mcp_jw_bool(w, c_how);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "styleChecks");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "noTablesInNarrative");
    mcp_jw_bool(w, no_tables);
    mcp_jw_key(w, "individualDatesAndAmounts");
    mcp_jw_bool(w, listed > 0);
    mcp_jw_key(w, "transactionsListed");
    mcp_jw_int(w, (int64_t)listed);
    mcp_jw_key(w, "transactionsInAttachmentOnly");
    mcp_jw_int(w, (int64_t)omitted);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "attachmentCsv");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "filename");
    mcp_jw_string(w, csvname);
    mcp_jw_key(w, "rows");
    mcp_jw_int(w, (int64_t)rows);
    mcp_jw_key(w, "bytes");
    mcp_jw_int(w, (int64_t)csv.len);
    mcp_jw_key(w, "content");
    mcp_jw_stringn(w, csv.data ? csv.data : "", csv.len);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "evidenceCited");
    mcp_jw_array_begin(w);
    for (char *p = cited.data; p && *p;) {
        char *nl = strchr(p, '\n');
        mcp_jw_stringn(w, p, nl ? (size_t)(nl - p) : strlen(p));
        p = nl ? nl + 1 : p + strlen(p);
    }
    mcp_jw_array_end(w);
    mcp_jw_key(w, "sources");
    mcp_jw_array_begin(w);
    mcp_jw_string(w, "FinCEN Guidance on Preparing a Complete & Sufficient SAR Narrative (Nov 2003)");
    mcp_jw_string(w, "FFIEC BSA/AML Examination Manual, Appendix L (SAR quality guidance)");
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);

    /* Store the draft (a new row only for new content). */
    int rc = 0;
    if (!same) {
        char now[21];
        aml_fmt_time(aml_now(), now);
        mcp_buf cats;
        mcp_jw cw;
        mcp_buf_init(&cats, 0);
        mcp_jw_init(&cw, &cats);
        mcp_jw_array_begin(&cw);
        for (int z = 0; z < nsub; z++)
            aml_sar_category_write(&cw, seen_sub[z], 1);
        mcp_jw_array_end(&cw);
        int own = sqlite3_get_autocommit(s->db);
        if (own && aml_begin(s, err))
            rc = -1;
        if (!rc && prev_version) {
            st = aml_stmt(s, "UPDATE sar_drafts SET status = 'superseded' WHERE case_id = ? AND status = 'draft'");
            if (!st)
                rc = aml_errf(err, "%s", s->errmsg);
            else {
                aml_bind_text(st, 1, c->case_id);
                rc = aml_step_done(s, st, err);
            }
        }
        if (!rc) {
            st = aml_stmt(s, "INSERT INTO sar_drafts(sar_draft_id, case_id, assessment_id, version, filing_type, "
                             "status, amount_involved_usd, activity_from, activity_to, categories_json, narrative_text, "
                             "narrative_json, attachment_csv, filing_due_date, created_at, created_by, result_json) "
                             "VALUES (?,?,?,?,'initial','draft',?,?,?,?,?,?,?,?,?,?,?)");
            if (!st)
                rc = aml_errf(err, "%s", s->errmsg);
            else {
                aml_bind_text(st, 1, id);
                aml_bind_text(st, 2, c->case_id);
                aml_bind_text(st, 3, a->assessment_id);
                aml_bind_int(st, 4, version);
                aml_bind_int(st, 5, (r->amount_usd + 50) / 100);
                aml_bind_text(st, 6, dfrom);
                aml_bind_text(st, 7, dto);
                aml_bind_textn(st, 8, cats.data ? cats.data : "[]", cats.data ? cats.len : 2);
                aml_bind_textn(st, 9, text->data ? text->data : "", text->len);
                aml_bind_textn(st, 10, nj.data ? nj.data : "{}", nj.data ? nj.len : 2);
                aml_bind_textn(st, 11, csv.data ? csv.data : "", csv.len);
                aml_bind_text(st, 12, r->due_date[0] ? r->due_date : NULL);
                aml_bind_text(st, 13, now);
                aml_bind_text(st, 14, actor);
                aml_bind_textn(st, 15, nj.data ? nj.data : "{}", nj.data ? nj.len : 2);
                rc = aml_step_done(s, st, err);
            }
        }
        if (own) {
            if (rc)
                aml_rollback(s);
            else if (aml_commit(s, err))
                rc = -1;
        }
        mcp_buf_cleanup(&cats);
    }
    /* The text block: a short header, then the narrative. */
    {
        mcp_buf hdr;
        mcp_buf_init(&hdr, 0);
        aml_buf_printf(&hdr, "SAR draft %s for case %s (DRAFT for human review; confidential). Amount involved %s, "
                             "%s to %s. File by %s.\n\n",
                       id, c->case_id, amount, dfrom, dto, r->due_date[0] ? r->due_date : "(set the detection date)");
        mcp_buf_append(&hdr, text->data, text->len);
        mcp_buf_cleanup(text);
        *text = hdr;
    }
    mcp_buf_cleanup(&nj);
    mcp_buf_cleanup(&csv);
    mcp_buf_cleanup(&cited);
    mcp_buf_cleanup(&intro);
    mcp_buf_cleanup(&concl);
    mcp_buf_cleanup(&who);
    mcp_buf_cleanup(&body_all);
    for (int i = 0; i < AML_NTYP; i++)
        mcp_buf_cleanup(&paras[i]);
    free(tx);
    return rc;
}
