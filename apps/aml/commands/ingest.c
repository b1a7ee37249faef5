/*
 * Ingest and the importers: see ingest.h.
 *
 * Speed: a bulk load into an empty transactions table drops the two
 * account/time indexes at the start and rebuilds them (one sort each) at
 * commit, which is several times faster than maintaining them row by row.
 * DDL is transactional in SQLite, so a failed import restores them too.
 */
#include "commands/ingest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- string -> int64 map (account ids) -------------------------------------- */

typedef struct smap {
    char **keys;
    int64_t *vals;
    uint32_t *hashes;
    uint32_t *lens;
    size_t cap, n;
} smap;

static uint32_t shash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int smap_grow(smap *m)
{
    size_t nc = m->cap ? m->cap * 2 : 1024;
    char **nk = calloc(nc, sizeof *nk);
    int64_t *nv = malloc(nc * sizeof *nv);
    uint32_t *nh = malloc(nc * sizeof *nh), *nl = malloc(nc * sizeof *nl);
    if (!nk || !nv || !nh || !nl) {
        free(nk);
        free(nv);
        free(nh);
        free(nl);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t h = m->hashes[i] & (nc - 1);
        while (nk[h])
            h = (h + 1) & (nc - 1);
        nk[h] = m->keys[i];
        nv[h] = m->vals[i];
        nh[h] = m->hashes[i];
        nl[h] = m->lens[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    free(m->lens);
    m->keys = nk;
    m->vals = nv;
    m->hashes = nh;
    m->lens = nl;
    m->cap = nc;
    return 0;
}

static int64_t *smap_find(smap *m, const char *k, size_t n)
{
    if (!m->cap)
        return NULL;
    uint32_t hv = shash(k, n);
    size_t h = hv & (m->cap - 1);
    while (m->keys[h]) {
        if (m->hashes[h] == hv && m->lens[h] == n && memcmp(m->keys[h], k, n) == 0)
            return &m->vals[h];
        h = (h + 1) & (m->cap - 1);
    }
    return NULL;
}

static int smap_put(smap *m, const char *k, size_t n, int64_t v)
{
    if ((m->n + 1) * 2 > m->cap && smap_grow(m))
        return -1;
    uint32_t hv = shash(k, n);
    size_t h = hv & (m->cap - 1);
    while (m->keys[h])
        h = (h + 1) & (m->cap - 1);
    m->keys[h] = aml_strndup(k, n);
    if (!m->keys[h])
        return -1;
    m->vals[h] = v;
    m->hashes[h] = hv;
    m->lens[h] = (uint32_t)n;
    m->n++;
    return 0;
}

static void smap_free(smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    free(m->lens);
    memset(m, 0, sizeof *m);
}

/* ---- the ingest ---------------------------------------------------------------- */

typedef struct fxr {
    char cur[8];
    int64_t date, num, den;
} fxr;

/* What the ingest knows of one account, by acct_no (numbers are dense: the ingest gives them, max + 1). */
typedef struct acct_cov {
    int64_t first_at; /* its earliest booked_at in this ingest (when touched) */
    uint8_t internal; /* one of the bank's accounts: coverage is recorded for it */
    uint8_t touched;  /* a transaction of this ingest involves it */
} acct_cov;

/* Rows of one table in PostgreSQL's binary COPY format, waiting to be sent (bulk; see crow_begin). */
typedef struct crows {
    mcp_buf b;  /* encoded rows, without the format's header and trailer */
    size_t row; /* where the row being encoded starts in b */
    int failed; /* an append of that row failed (out of memory) */
} crows;

struct aml_ingest {
    aml_store *s;
    int was_wal;           /* the store was in WAL mode: back to it after the load */
    aml_ingest_opts o;
    smap accts;            /* account_id -> acct_no */
    acct_cov *cov;         /* by acct_no: internal flag and first activity in this ingest */
    size_t ncov;           /* entries in cov (acct_no < ncov) */
    int64_t next_acct;     /* next acct_no to assign */
    fxr *fx;
    size_t nfx, capfx;
    int dropped_indexes;   /* rebuild tx_from/tx_to at commit */
    int dropped_acct_keys; /* bulk into an empty accounts table too: rebuild its keys and index at commit */
    int day_precision;     /* some row had day precision */
    int64_t min_at;        /* its earliest booked_at */
    int declared;          /* coverage records were given */
    int bulk;              /* PostgreSQL into an empty transactions table: rows through COPY (bulk_*) */
    int copying;           /* bulk: the COPY into transactions is open */
    int row_savepoints;    /* PostgreSQL row by row with skip_bad: each row's statement under a savepoint */
    int64_t next_txn;      /* bulk: the next txn_no */
    crows txb;             /* bulk: transaction rows not sent yet */
    crows custb, acctb, partyb; /* bulk: rows of the small tables, stored at the next flush */
    smap custs;            /* bulk: customer ids stored or pending */
    smap links;            /* bulk: "acct_no customer role" of pending and stored parties of this ingest */
    smap refs;             /* bulk: txn_refs of this ingest (the table was empty) */
    aml_ingest_stats st;
    int64_t t0;
};

static const char *const sql_index_from =
    "CREATE INDEX tx_from ON transactions(from_acct, booked_at, to_acct, amount_base_minor, channel)";
static const char *const sql_index_to =
    "CREATE INDEX tx_to ON transactions(to_acct, booked_at, from_acct, amount_base_minor, channel)";
/*
 * PostgreSQL, a bulk load into an empty accounts table as well: its key, unique account id and country index
 * are dropped and built at commit like the transactions' (three index entries a row, the account ids in
 * random order, cost its COPY more than the rows). The import gives every acct_no and keeps account ids
 * unique in memory (accts), so nothing the constraints would refuse arrives meanwhile.
 */
static const char *const sql_acct_keys_drop =
    "ALTER TABLE accounts DROP CONSTRAINT accounts_pkey, DROP CONSTRAINT accounts_account_id_key; "
    "DROP INDEX accounts_country";
static const char *const sql_acct_keys_add =
    "ALTER TABLE accounts ADD CONSTRAINT accounts_pkey PRIMARY KEY (acct_no), "
    "ADD CONSTRAINT accounts_account_id_key UNIQUE (account_id); "
    "CREATE INDEX accounts_country ON accounts(country)";

/* Makes room for acct_no `no` in the coverage array and records whether the account is the bank's. */
static int cov_add(aml_ingest *in, int64_t no, int internal)
{
    if (no < 0)
        return -1;
    if ((size_t)no >= in->ncov) {
        size_t n = in->ncov ? in->ncov : 1024;
        while (n <= (size_t)no)
            n *= 2;
        acct_cov *c = realloc(in->cov, n * sizeof *c);
        if (!c)
            return -1;
        memset(c + in->ncov, 0, (n - in->ncov) * sizeof *c);
        in->cov = c;
        in->ncov = n;
    }
    in->cov[no].internal = internal != 0;
    return 0;
}

/* A transaction of this ingest at `at` involves account `no` (0: none). */
static void cov_touch(aml_ingest *in, int64_t no, int64_t at)
{
    if (no <= 0 || (size_t)no >= in->ncov)
        return;
    acct_cov *c = &in->cov[no];
    if (!c->touched || at < c->first_at)
        c->first_at = at;
    c->touched = 1;
}

static void ingest_free(aml_ingest *in)
{
    mcp_buf_cleanup(&in->txb.b);
    mcp_buf_cleanup(&in->custb.b);
    mcp_buf_cleanup(&in->acctb.b);
    mcp_buf_cleanup(&in->partyb.b);
    smap_free(&in->custs);
    smap_free(&in->links);
    smap_free(&in->refs);
    smap_free(&in->accts);
    free(in->cov);
    free(in->fx);
    free(in);
}

static int load_fx(aml_ingest *in, aml_err *err)
{
    aml_st *st = aml_stmt(in->s, "SELECT currency, rate_date, usd_num, usd_den FROM fx_rates");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    while (aml_step(st) == AML_ROW) {
        if (in->nfx == in->capfx) {
            in->capfx = in->capfx ? in->capfx * 2 : 32;
            fxr *n = realloc(in->fx, in->capfx * sizeof *n);
            if (!n) {
                aml_reset(st);
                return aml_errf(err, "out of memory");
            }
            in->fx = n;
        }
        fxr *f = &in->fx[in->nfx++];
        snprintf(f->cur, sizeof f->cur, "%s", aml_col_text(st, 0));
        const char *d = aml_col_text(st, 1);
        if (aml_parse_time(d, strlen(d), &f->date, NULL))
            f->date = INT64_MIN;
        f->num = aml_col_int(st, 2);
        f->den = aml_col_int(st, 3);
    }
    aml_reset(st);
    return 0;
}

/*
 * Bulk load on PostgreSQL (the transactions table was empty at the start):
 * transactions stream through one COPY with txn_no given here (max + 1, as
 * SQLite's rowid; the table is locked against other writers); customers,
 * accounts and party links, which arrive interleaved with them (an account is
 * created when a transaction first names it), wait in memory as COPY text and
 * are stored at the next flush (the PostgreSQL schema, like SQLite's with
 * foreign_keys off, has no REFERENCES, so the order does not matter).
 * Uniqueness the database would check row by row (customer ids,
 * links, txn_refs) is checked in memory so a bad row gets the same error
 * as on SQLite. Any other record first flushes everything (bulk_flush).
 * DDL is transactional in PostgreSQL: a failed import keeps nothing.
 */
static const char sql_copy_txn[] =
    "COPY transactions(txn_no, txn_ref, booked_at, time_precision, from_acct, to_acct, amount_minor, currency, "
    "amount_base_minor, amount_received_minor, currency_received, channel, txn_type, conductor_id, location_id, "
    "location_region, location_country, counterparty_name, memo, gt_is_laundering, gt_label, gt_attempt_id) "
    "FROM STDIN (FORMAT binary)";
static const char sql_copy_cust[] =
    "COPY customers(customer_id, customer_type, full_name, first_name, last_name, date_of_birth, country, "
    "occupation, naics_code, region, city, risk_rating, pep, onboarded_at, cash_intensive, "
    "expected_monthly_cash_minor, expected_monthly_volume_minor, declared_annual_income_minor, source_dataset) "
    "FROM STDIN (FORMAT binary)";
static const char sql_copy_acct[] =
    "COPY accounts(acct_no, account_id, is_internal, bank_id, institution_name, account_type, currency, status, "
    "opened_at, opening_deposit_minor, home_branch_id, home_region, country, holder_name) FROM STDIN (FORMAT binary)";
static const char sql_copy_party[] = "COPY account_parties(acct_no, customer_id, role) FROM STDIN (FORMAT binary)";

#define BULK_SEND (1u << 20) /* transaction rows are sent in blocks of about this many bytes */

static int bulk_start(aml_ingest *in, aml_err *err)
{
    if (aml_exec(in->s, "SET LOCAL maintenance_work_mem = '256MB'", err))
        return -1;
    /* The ids and links already stored: the database would refuse them again in the COPY. */
    aml_st *st = aml_stmt(in->s, "SELECT customer_id, '' FROM customers UNION ALL "
                                 "SELECT CAST(acct_no AS TEXT) || ' ' || customer_id || ' ' || role, 'l' "
                                 "FROM account_parties");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    int rc;
    while ((rc = aml_step(st)) == AML_ROW) {
        const char *id = aml_col_text(st, 0);
        if (smap_put(aml_col_text(st, 1)[0] ? &in->links : &in->custs, id, strlen(id), 1)) {
            aml_reset(st);
            return aml_errf(err, "out of memory");
        }
    }
    aml_reset(st);
    if (rc != AML_DONE)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    in->bulk = 1;
    in->next_txn = 1;
    return 0;
}

/*
 * PostgreSQL's binary COPY format (bulk): a header, then each row as its field count (int16) and each field
 * as its length (int32, -1 for NULL) and bytes, then a trailer (int16 -1); integers big-endian. Every
 * integer column of the schema is bigint (8 bytes) and every other one text, so values go as they are
 * stored: the server neither parses digits nor unescapes text, and the client formats nothing. A text
 * value ends at a NUL byte (text cannot hold one; the CSV reader refuses such fields anyway).
 */
static const char copy_header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', '\377', '\r', '\n', '\0'};
static const char copy_trailer[2] = {'\377', '\377'};

static void put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static void cput(crows *r, const void *p, size_t n)
{
    if (mcp_buf_append(&r->b, p, n) != MCP_OK)
        r->failed = 1;
}

/* Starts a row of n fields. */
static void crow_begin(crows *r, int n)
{
    unsigned char h[2];
    r->row = r->b.len;
    r->failed = 0;
    put_be(h, (uint64_t)n, 2);
    cput(r, h, 2);
}

/* A text field: a string, or NULL. */
static void cf(crows *r, const char *v)
{
    unsigned char h[4];
    size_t n = v ? strlen(v) : 0;
    if (n > INT32_MAX) {
        r->failed = 1;
        return;
    }
    put_be(h, v ? (uint64_t)n : 0xffffffffu, 4);
    cput(r, h, 4);
    if (n)
        cput(r, v, n);
}

/* A bigint field, NULL when not present. */
static void cfi(crows *r, int64_t v, int present)
{
    unsigned char f[12];
    if (!present) {
        cf(r, NULL);
        return;
    }
    put_be(f, 8, 4);
    put_be(f + 4, (uint64_t)v, 8);
    cput(r, f, 12);
}

/* Ends a row; one that could not be encoded whole is taken out again and fails. */
static int crow(crows *r, aml_err *err)
{
    if (!r->failed)
        return 0;
    r->b.len = r->row;
    if (r->b.data)
        r->b.data[r->row] = '\0';
    r->failed = 0;
    return aml_errf(err, "out of memory");
}

/* Opens a binary COPY (sql) and sends the format's header. */
static int copy_open(aml_ingest *in, const char *sql, aml_err *err)
{
    if (aml_copy_begin(in->s, sql, err))
        return -1;
    if (aml_copy_put(in->s, copy_header, sizeof copy_header, err)) {
        aml_copy_abort(in->s, "send failed");
        return -1;
    }
    return 0;
}

/* Sends the rows of r and the trailer, and ends the open COPY; r is emptied either way. */
static int copy_close(aml_ingest *in, crows *r, aml_err *err)
{
    int rc = aml_copy_put(in->s, r->b.data ? r->b.data : "", r->b.len, err) ||
             aml_copy_put(in->s, copy_trailer, sizeof copy_trailer, err);
    mcp_buf_reset(&r->b);
    if (rc) {
        aml_copy_abort(in->s, "send failed");
        return -1;
    }
    return aml_copy_end(in->s, err);
}

/* Stores the rows of r with one COPY (sql). */
static int bulk_copy(aml_ingest *in, const char *sql, crows *r, aml_err *err)
{
    if (!r->b.len)
        return 0;
    if (copy_open(in, sql, err)) {
        mcp_buf_reset(&r->b);
        return -1;
    }
    return copy_close(in, r, err);
}

/* Ends the transactions COPY and stores the pending customers, accounts and links (in that order). */
static int bulk_flush(aml_ingest *in, aml_err *err)
{
    if (!in->bulk)
        return 0;
    if (in->copying) {
        in->copying = 0;
        if (copy_close(in, &in->txb, err))
            return -1;
    }
    return bulk_copy(in, sql_copy_cust, &in->custb, err) || bulk_copy(in, sql_copy_acct, &in->acctb, err) ||
                   bulk_copy(in, sql_copy_party, &in->partyb, err)
               ? -1
               : 0;
}

/* At commit: everything stored. */
static int bulk_finish(aml_ingest *in, aml_err *err)
{
    if (!in->bulk)
        return 0;
    return bulk_flush(in, err);
}

int aml_ingest_begin(aml_ingest **out, aml_store *s, const aml_ingest_opts *o, aml_err *err)
{
    aml_ingest *in = calloc(1, sizeof *in);
    if (!in)
        return aml_errf(err, "out of memory");
    in->s = s;
    if (o)
        in->o = *o;
    in->t0 = aml_mono_ns();
    /*
     * A bulk load writes every page once: with a rollback journal, which for
     * new pages journals almost nothing, instead of the WAL, which would
     * write (and checksum) each page twice. Still one atomic transaction.
     * Fails harmlessly (stays WAL) when another connection has the file open.
     */
    int lite = aml_store_backend(s) == AML_BACKEND_SQLITE;
    if (lite && !aml_store_is_memory(s)) {
        aml_st *jm = aml_stmt(s, "PRAGMA journal_mode = TRUNCATE");
        if (jm && aml_step(jm) == AML_ROW)
            in->was_wal = strcmp(aml_col_text(jm, 0), "truncate") == 0;
        if (jm)
            aml_reset(jm);
    }
    if (aml_begin(s, err)) {
        if (in->was_wal)
            aml_exec(s, "PRAGMA journal_mode = WAL", NULL);
        free(in);
        return -1;
    }
    if (lite)
        aml_exec(s, "PRAGMA cache_size = -262144", NULL);
    aml_st *st = aml_stmt(s, "SELECT acct_no, account_id, is_internal FROM accounts");
    if (!st)
        goto fail;
    while (aml_step(st) == AML_ROW) {
        const char *id = aml_col_text(st, 1);
        int64_t no = aml_col_int(st, 0);
        if (smap_put(&in->accts, id, strlen(id), no) || cov_add(in, no, (int)aml_col_int(st, 2))) {
            aml_reset(st);
            aml_errf(err, "out of memory");
            goto fail_msg;
        }
        if (no >= in->next_acct)
            in->next_acct = no + 1;
    }
    aml_reset(st);
    if (!in->next_acct)
        in->next_acct = 1;
    /* PostgreSQL: other writers wait so that "empty" stays true and txn_no ours (readers too, once the bulk
     * load's DROP INDEX and DROP TRIGGER hold the tables). */
    if (!lite && aml_exec(s, "LOCK TABLE transactions IN EXCLUSIVE MODE", err))
        goto fail_msg;
    st = aml_stmt(s, "SELECT 1 FROM transactions LIMIT 1");
    if (!st)
        goto fail;
    int empty = aml_step(st) != AML_ROW;
    aml_reset(st);
    if (empty) {
        if (aml_exec(s, "DROP INDEX IF EXISTS tx_from; DROP INDEX IF EXISTS tx_to", err))
            goto fail_msg;
        in->dropped_indexes = 1;
        if (!lite && (bulk_start(in, err) || aml_bulk_keys(s, 1, err)))
            goto fail_msg;
        if (!lite && !in->accts.n) {
            if (aml_exec(s, sql_acct_keys_drop, err))
                goto fail_msg;
            in->dropped_acct_keys = 1;
        }
    }
    in->row_savepoints = !lite && !in->bulk && in->o.skip_bad;
    if (load_fx(in, err))
        goto fail_msg;
    *out = in;
    return 0;
fail:
    aml_errf(err, "%s", aml_errmsg(s));
fail_msg:
    aml_rollback(s);
    if (in->was_wal)
        aml_exec(s, "PRAGMA journal_mode = WAL", NULL);
    ingest_free(in);
    return -1;
}

static int reindex(aml_ingest *in, aml_err *err)
{
    if (!in->dropped_indexes)
        return 0;
    if (bulk_flush(in, err)) /* every row stored first */
        return -1;
    /* SQLite: the sorter behind CREATE INDEX may use helper threads. */
    int lite = aml_store_backend(in->s) == AML_BACKEND_SQLITE;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char pragma[48];
    snprintf(pragma, sizeof pragma, "PRAGMA threads = %ld", cpus > 1 ? (cpus > 8 ? 8 : cpus) : 0);
    if (lite)
        aml_exec(in->s, pragma, NULL);
    int rc = aml_exec(in->s, sql_index_from, err) || aml_exec(in->s, sql_index_to, err) ||
             (in->dropped_acct_keys && aml_exec(in->s, sql_acct_keys_add, err)) ||
             (in->bulk && aml_bulk_keys(in->s, 0, err));
    if (lite)
        aml_exec(in->s, "PRAGMA threads = 0", NULL);
    if (rc)
        return -1;
    in->dropped_indexes = 0;
    in->dropped_acct_keys = 0;
    return 0;
}

void aml_ingest_abort(aml_ingest *in)
{
    if (!in)
        return;
    if (in->copying)
        aml_copy_abort(in->s, "import aborted");
    aml_rollback(in->s);
    if (aml_store_backend(in->s) == AML_BACKEND_SQLITE)
        aml_exec(in->s, "PRAGMA cache_size = -65536", NULL);
    if (in->was_wal)
        aml_exec(in->s, "PRAGMA journal_mode = WAL", NULL);
    ingest_free(in);
}

static int resolve(aml_ingest *in, const char *id, int64_t *out, aml_err *err);
static int insert_txn(aml_ingest *in, const aml_txn_rec *t, const char *code, int64_t base, int64_t from, int64_t to,
                      int64_t *no, aml_err *err);
static int bulk_txn(aml_ingest *in, const aml_txn_rec *t, const char *code, int64_t base, int64_t from, int64_t to,
                    int64_t *no, aml_err *err);
static int step(aml_ingest *in, aml_st *st, const char *what, const char *id, aml_err *err);

/*
 * Observation coverage of the internal accounts this ingest touched: from the import's earliest
 * transaction, each account's first one, or the declared time; merged with earlier imports of the
 * same source (the earliest wins). Accounts with a declared coverage record keep it. The first
 * activity of each account was kept in memory as the rows arrived: one row per account here.
 */
static const char *const basis_names[] = {"import_start", "first_activity", "declared"}; /* by AML_HISTORY_* */

/* Where the observation of a touched account starts, by the ingest's history mode. */
static int64_t observed_from(const aml_ingest *in, const acct_cov *c)
{
    switch (in->o.history_mode) {
    case AML_HISTORY_FIRST_ACTIVITY: return c->first_at;
    case AML_HISTORY_DECLARED: return in->o.history_from;
    default: return in->min_at;
    }
}

static const char *basis_name(const aml_ingest *in)
{
    int m = in->o.history_mode;
    return basis_names[m == AML_HISTORY_FIRST_ACTIVITY || m == AML_HISTORY_DECLARED ? m : AML_HISTORY_IMPORT_START];
}

/* SQLite: one prepared INSERT per account. */
static int coverage_lite(aml_ingest *in, aml_err *err)
{
    static const char *const sql =
        "INSERT INTO coverage(acct_no, source, observed_from, basis) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT(acct_no, source) DO UPDATE SET observed_from = CASE WHEN excluded.observed_from < "
        "coverage.observed_from THEN excluded.observed_from ELSE coverage.observed_from END WHERE ?5 = 0";
    for (size_t no = 1; no < in->ncov; no++) {
        const acct_cov *c = &in->cov[no];
        if (!c->touched || !c->internal)
            continue;
        aml_st *st = aml_stmt(in->s, sql);
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(in->s));
        aml_bind_int(st, 1, (int64_t)no);
        aml_bind_text(st, 2, in->o.source ? in->o.source : "import");
        aml_bind_int(st, 3, observed_from(in, c));
        aml_bind_static(st, 4, basis_name(in));
        aml_bind_int(st, 5, in->declared);
        if (aml_step_done(in->s, st, err))
            return -1;
    }
    return 0;
}

/* PostgreSQL: the rows through COPY into a temporary table, merged by one INSERT ... SELECT. */
static int coverage_pg(aml_ingest *in, aml_err *err)
{
    static const char *const sql =
        "INSERT INTO coverage(acct_no, source, observed_from, basis) SELECT acct_no, CAST(?1 AS TEXT), "
        "observed_from, CAST(?2 AS TEXT) FROM aml_coverage_in ORDER BY acct_no "
        "ON CONFLICT(acct_no, source) DO UPDATE SET observed_from = CASE WHEN excluded.observed_from < "
        "coverage.observed_from THEN excluded.observed_from ELSE coverage.observed_from END WHERE ?3 = 0";
    crows b = {0};
    int rc = 0;
    for (size_t no = 1; no < in->ncov && !rc; no++) {
        const acct_cov *c = &in->cov[no];
        if (c->touched && c->internal) {
            crow_begin(&b, 2);
            cfi(&b, (int64_t)no, 1);
            cfi(&b, observed_from(in, c), 1);
            rc = crow(&b, err);
        }
    }
    if (!rc && b.b.len) {
        rc = aml_exec(in->s, "CREATE TEMPORARY TABLE aml_coverage_in (acct_no bigint, observed_from bigint) "
                             "ON COMMIT DROP", err) ||
             bulk_copy(in, "COPY aml_coverage_in FROM STDIN (FORMAT binary)", &b, err);
        aml_st *st = rc ? NULL : aml_prepare(in->s, sql);
        if (!rc && !st)
            rc = aml_errf(err, "%s", aml_errmsg(in->s));
        if (st) {
            aml_bind_text(st, 1, in->o.source ? in->o.source : "import");
            aml_bind_text(st, 2, basis_name(in));
            aml_bind_int(st, 3, in->declared);
            rc = aml_step_done(in->s, st, err) || aml_exec(in->s, "DROP TABLE aml_coverage_in", err);
        }
        aml_finalize(st);
    }
    mcp_buf_cleanup(&b.b);
    return rc ? -1 : 0;
}

/*
 * Observation coverage of the internal accounts this ingest touched: from the import's earliest
 * transaction, each account's first one, or the declared time; merged with earlier imports of the
 * same source (the earliest wins). Accounts with a declared coverage record keep it. The first
 * activity of each account was kept in memory as the rows arrived: one row per account here.
 */
static int record_coverage(aml_ingest *in, aml_err *err)
{
    if (!in->st.transactions)
        return 0;
    return aml_store_backend(in->s) == AML_BACKEND_SQLITE ? coverage_lite(in, err) : coverage_pg(in, err);
}

int aml_ingest_coverage(aml_ingest *in, const char *account_id, int64_t from, aml_err *err)
{
    int64_t no;
    if (resolve(in, account_id, &no, err) || bulk_flush(in, err))
        return -1;
    aml_st *st = aml_stmt(in->s, "INSERT INTO coverage(acct_no, source, observed_from, basis) "
                                       "VALUES (?, ?, ?, 'declared') ON CONFLICT(acct_no, source) DO UPDATE "
                                       "SET observed_from = excluded.observed_from, basis = 'declared'");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_int(st, 1, no);
    aml_bind_text(st, 2, in->o.source ? in->o.source : "import");
    aml_bind_int(st, 3, from);
    in->declared = 1;
    return step(in, st, "coverage", account_id, err);
}

int aml_ingest_commit(aml_ingest *in, aml_ingest_stats *stats, aml_err *err)
{
    int rc = 0;
    if (getenv("AML_PROFILE")) /* diagnostics on stderr: how long the rows took before the index rebuild */
        fprintf(stderr, "aml: rows loaded after %.2f s\n", (double)(aml_mono_ns() - in->t0) / 1e9);
    if (bulk_finish(in, err) || record_coverage(in, err) || reindex(in, err) ||
        (in->bulk && aml_exec(in->s, "ANALYZE transactions, accounts, customers, account_parties", err)) ||
        (in->day_precision && aml_meta_set(in->s, "data.day_precision", "1", err)) || aml_commit(in->s, err)) {
        aml_rollback(in->s);
        rc = -1;
    }
    if (aml_store_backend(in->s) == AML_BACKEND_SQLITE)
        aml_exec(in->s, "PRAGMA cache_size = -65536", NULL);
    if (in->was_wal)
        aml_exec(in->s, "PRAGMA journal_mode = WAL", NULL);
    in->st.seconds = (double)(aml_mono_ns() - in->t0) / 1e9;
    if (stats)
        *stats = in->st;
    ingest_free(in);
    return rc;
}

/* Runs an INSERT ... RETURNING of one integer key into *no. */
/*
 * PostgreSQL row by row with --skip-bad-rows: a statement the database
 * refuses would abort the whole transaction, so each row's statement runs
 * under a savepoint, rolled back alone when it fails (as a failed
 * statement on SQLite undoes only itself). Two more round trips per row,
 * only then.
 */
static void row_savepoint(aml_ingest *in)
{
    if (in->row_savepoints)
        aml_exec(in->s, "SAVEPOINT aml_row", NULL);
}

static void row_savepoint_end(aml_ingest *in, int ok)
{
    if (!in->row_savepoints)
        return;
    if (!ok)
        aml_exec(in->s, "ROLLBACK TO SAVEPOINT aml_row", NULL);
    aml_exec(in->s, "RELEASE SAVEPOINT aml_row", NULL);
}

/* The error of a failed row statement (read before the savepoint is rolled back). */
static int step_failed(aml_ingest *in, const char *what, const char *id, aml_err *err)
{
    if (aml_err_unique(in->s))
        aml_errf(err, "%s '%.80s' already exists", what, id ? id : "");
    else
        aml_errf(err, "%s '%.80s': %s", what, id ? id : "", aml_errmsg(in->s));
    row_savepoint_end(in, 0);
    return -1;
}

static int step_id(aml_ingest *in, aml_st *st, const char *what, const char *id, int64_t *no, aml_err *err)
{
    row_savepoint(in);
    int rc = aml_step(st);
    if (rc == AML_ROW) {
        *no = aml_col_int(st, 0);
        rc = aml_step(st);
    }
    aml_reset(st);
    if (rc != AML_DONE)
        return step_failed(in, what, id, err);
    row_savepoint_end(in, 1);
    return 0;
}

static int step(aml_ingest *in, aml_st *st, const char *what, const char *id, aml_err *err)
{
    row_savepoint(in);
    int rc = aml_step(st);
    aml_reset(st);
    if (rc != AML_DONE)
        return step_failed(in, what, id, err);
    row_savepoint_end(in, 1);
    return 0;
}

static int valid_date(const char *d)
{
    int64_t t;
    return !d || aml_parse_time(d, strlen(d), &t, NULL) == 0;
}

static int bulk_customer(aml_ingest *in, const aml_customer_rec *c, aml_err *err)
{
    size_t n = strlen(c->customer_id);
    if (smap_find(&in->custs, c->customer_id, n))
        return aml_errf(err, "customer '%.80s' already exists", c->customer_id);
    crows *b = &in->custb;
    crow_begin(b, 19);
    cf(b, c->customer_id);
    cf(b, c->customer_type ? c->customer_type : "individual");
    cf(b, c->full_name);
    cf(b, c->first_name);
    cf(b, c->last_name);
    cf(b, c->date_of_birth);
    cf(b, c->country);
    cf(b, c->occupation);
    cf(b, c->naics_code);
    cf(b, c->region);
    cf(b, c->city);
    cf(b, c->risk_rating);
    cfi(b, c->pep, 1);
    cf(b, c->onboarded_at);
    cfi(b, c->cash_intensive, 1);
    cfi(b, c->expected_monthly_cash.v, c->expected_monthly_cash.has);
    cfi(b, c->expected_monthly_volume.v, c->expected_monthly_volume.has);
    cfi(b, c->declared_annual_income.v, c->declared_annual_income.has);
    cf(b, c->source_dataset ? c->source_dataset : in->o.source);
    if (crow(b, err) || smap_put(&in->custs, c->customer_id, n, 1))
        return aml_errf(err, "out of memory");
    in->st.customers++;
    return 0;
}

static int bulk_account(aml_ingest *in, const aml_account_rec *a, int64_t no, aml_err *err)
{
    crows *b = &in->acctb;
    crow_begin(b, 14);
    cfi(b, no, 1);
    cf(b, a->account_id);
    cfi(b, a->is_internal, 1);
    cf(b, a->bank_id);
    cf(b, a->institution_name);
    cf(b, a->account_type);
    cf(b, a->currency ? a->currency : "USD");
    cf(b, a->status ? a->status : "active");
    cf(b, a->opened_at);
    cfi(b, a->opening_deposit.v, a->opening_deposit.has);
    cf(b, a->home_branch_id);
    cf(b, a->home_region);
    cf(b, a->country);
    cf(b, a->holder_name);
    return crow(b, err);
}

/* Values the database's CHECK constraints allow, checked here so a bad row fails alone on either store. */
static int one_of(const char *v, const char *const *allowed)
{
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(v, allowed[i]) == 0)
            return 1;
    return 0;
}

static const char *const customer_types[] = {"individual", "entity", NULL};
static const char *const risk_ratings[] = {"low", "medium", "high", NULL};
static const char *const account_states[] = {"active", "dormant", "closed", NULL};
static const char *const party_roles[] = {"primary", "joint", "signatory", "beneficial_owner", NULL};

int aml_ingest_customer(aml_ingest *in, const aml_customer_rec *c, aml_err *err)
{
    if (!c->customer_id || !*c->customer_id)
        return aml_errf(err, "customer: customer_id is required");
    if (!c->full_name || !*c->full_name)
        return aml_errf(err, "customer '%.80s': full_name is required", c->customer_id);
    if (!valid_date(c->date_of_birth) || !valid_date(c->onboarded_at))
        return aml_errf(err, "customer '%.80s': a date is not YYYY-MM-DD", c->customer_id);
    if ((c->customer_type && !one_of(c->customer_type, customer_types)) ||
        (c->risk_rating && !one_of(c->risk_rating, risk_ratings)))
        return aml_errf(err, "customer '%.80s': customer_type is individual or entity, risk_rating low, medium or high",
                        c->customer_id);
    if (in->bulk)
        return bulk_customer(in, c, err);
    aml_st *st = aml_stmt(in->s,
                                "INSERT INTO customers(customer_id, customer_type, full_name, first_name, last_name, "
                                "date_of_birth, country, occupation, naics_code, region, city, risk_rating, pep, "
                                "onboarded_at, cash_intensive, expected_monthly_cash_minor, "
                                "expected_monthly_volume_minor, declared_annual_income_minor, source_dataset) "
                                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, c->customer_id);
    aml_bind_text(st, 2, c->customer_type ? c->customer_type : "individual");
    aml_bind_text(st, 3, c->full_name);
    aml_bind_text(st, 4, c->first_name);
    aml_bind_text(st, 5, c->last_name);
    aml_bind_text(st, 6, c->date_of_birth);
    aml_bind_text(st, 7, c->country);
    aml_bind_text(st, 8, c->occupation);
    aml_bind_text(st, 9, c->naics_code);
    aml_bind_text(st, 10, c->region);
    aml_bind_text(st, 11, c->city);
    aml_bind_text(st, 12, c->risk_rating);
    aml_bind_int(st, 13, c->pep);
    aml_bind_text(st, 14, c->onboarded_at);
    aml_bind_int(st, 15, c->cash_intensive);
    aml_bind_int_opt(st, 16, c->expected_monthly_cash.v, c->expected_monthly_cash.has);
    aml_bind_int_opt(st, 17, c->expected_monthly_volume.v, c->expected_monthly_volume.has);
    aml_bind_int_opt(st, 18, c->declared_annual_income.v, c->declared_annual_income.has);
    aml_bind_text(st, 19, c->source_dataset ? c->source_dataset : in->o.source);
    if (step(in, st, "customer", c->customer_id, err))
        return -1;
    in->st.customers++;
    return 0;
}

int aml_ingest_account(aml_ingest *in, const aml_account_rec *a, int64_t *acct_no, aml_err *err)
{
    if (!a->account_id || !*a->account_id)
        return aml_errf(err, "account: account_id is required");
    size_t n = strlen(a->account_id);
    int64_t *have = smap_find(&in->accts, a->account_id, n);
    if (have) {
        if (acct_no)
            *acct_no = *have;
        return 0;
    }
    if (!valid_date(a->opened_at))
        return aml_errf(err, "account '%.80s': opened_at is not a date", a->account_id);
    if (a->status && !one_of(a->status, account_states))
        return aml_errf(err, "account '%.80s': status is active, dormant or closed", a->account_id);
    int64_t no = in->next_acct;
    if (in->bulk) {
        if (bulk_account(in, a, no, err))
            return -1;
        goto stored;
    }
    aml_st *st = aml_stmt(in->s, "INSERT INTO accounts(acct_no, account_id, is_internal, bank_id, "
                                       "institution_name, account_type, currency, status, opened_at, "
                                       "opening_deposit_minor, home_branch_id, home_region, country, holder_name) "
                                       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_int(st, 1, no);
    aml_bind_text(st, 2, a->account_id);
    aml_bind_int(st, 3, a->is_internal);
    aml_bind_text(st, 4, a->bank_id);
    aml_bind_text(st, 5, a->institution_name);
    aml_bind_text(st, 6, a->account_type);
    aml_bind_text(st, 7, a->currency ? a->currency : "USD");
    aml_bind_text(st, 8, a->status ? a->status : "active");
    aml_bind_text(st, 9, a->opened_at);
    aml_bind_int_opt(st, 10, a->opening_deposit.v, a->opening_deposit.has);
    aml_bind_text(st, 11, a->home_branch_id);
    aml_bind_text(st, 12, a->home_region);
    aml_bind_text(st, 13, a->country);
    aml_bind_text(st, 14, a->holder_name);
    if (step(in, st, "account", a->account_id, err))
        return -1;
stored:
    if (smap_put(&in->accts, a->account_id, n, no) || cov_add(in, no, a->is_internal))
        return aml_errf(err, "out of memory");
    in->next_acct++;
    in->st.accounts++;
    if (acct_no)
        *acct_no = no;
    return 0;
}

static int bulk_party(aml_ingest *in, int64_t no, const char *customer_id, const char *role, aml_err *err)
{
    char key[256];
    int k = snprintf(key, sizeof key, "%lld %s %s", (long long)no, customer_id ? customer_id : "", role);
    if (!customer_id || !smap_find(&in->custs, customer_id, strlen(customer_id)) || k >= (int)sizeof key ||
        smap_find(&in->links, key, (size_t)k))
        return aml_errf(err, "party: unknown customer '%.80s' (or a duplicate link)", customer_id ? customer_id : "");
    crows *b = &in->partyb;
    crow_begin(b, 3);
    cfi(b, no, 1);
    cf(b, customer_id);
    cf(b, role);
    return crow(b, err) || smap_put(&in->links, key, (size_t)k, 1) ? aml_errf(err, "out of memory") : 0;
}

int aml_ingest_party(aml_ingest *in, const char *account_id, const char *customer_id, const char *role, aml_err *err)
{
    int64_t *no = account_id ? smap_find(&in->accts, account_id, strlen(account_id)) : NULL;
    if (!no)
        return aml_errf(err, "party: unknown account '%.80s'", account_id ? account_id : "");
    if (role && !one_of(role, party_roles))
        return aml_errf(err, "party '%.80s': role is primary, joint, signatory or beneficial_owner",
                        customer_id ? customer_id : "");
    if (in->bulk)
        return bulk_party(in, *no, customer_id, role ? role : "primary", err);
    aml_st *st = aml_stmt(in->s, "INSERT INTO account_parties(acct_no, customer_id, role) "
                                       "SELECT ?1, CAST(?2 AS TEXT), CAST(?3 AS TEXT) "
                                       "WHERE EXISTS (SELECT 1 FROM customers WHERE customer_id = ?2) "
                                       "ON CONFLICT DO NOTHING");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_int(st, 1, *no);
    aml_bind_text(st, 2, customer_id);
    aml_bind_text(st, 3, role ? role : "primary");
    if (step(in, st, "party", customer_id, err))
        return -1;
    if (aml_changes(in->s) == 0)
        return aml_errf(err, "party: unknown customer '%.80s' (or a duplicate link)", customer_id ? customer_id : "");
    return 0;
}

/* 1 when the customer is stored (or, bulk, pending). */
static int customer_known(aml_ingest *in, const char *id)
{
    if (in->bulk)
        return smap_find(&in->custs, id, strlen(id)) != NULL;
    aml_st *st = aml_stmt(in->s, "SELECT 1 FROM customers WHERE customer_id = ?");
    int exists = 0;
    if (st) {
        aml_bind_text(st, 1, id);
        exists = aml_step(st) == AML_ROW;
        aml_reset(st);
    }
    return exists;
}

static int resolve(aml_ingest *in, const char *id, int64_t *out, aml_err *err)
{
    if (!id || !*id) {
        *out = 0;
        return 0;
    }
    int64_t *no = smap_find(&in->accts, id, strlen(id));
    if (no) {
        *out = *no;
        return 0;
    }
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    a.account_id = id;
    a.is_internal = 0;
    return aml_ingest_account(in, &a, out, err);
}

/* The record's strings live until the statement has run: no copies. */
static void bind_static(aml_st *st, int i, const char *v)
{
    aml_bind_static(st, i, v);
}

static const char *const channels[] = {"cash", "wire", "ach", "check", "card", "internal", "crypto", "other", NULL};
static const char *const precisions[] = {"second", "minute", "day"};

static int64_t base_amount(aml_ingest *in, const aml_currency *c, const char *code, int64_t minor, int64_t at)
{
    const fxr *best = NULL;
    for (size_t i = 0; i < in->nfx; i++)
        if (strcmp(in->fx[i].cur, code) == 0 && in->fx[i].date <= at && (!best || in->fx[i].date > best->date))
            best = &in->fx[i];
    if (!best)
        return -1;
    return aml_to_usd_minor(minor, c ? c->exponent : 2, best->num, best->den);
}

int aml_ingest_txn(aml_ingest *in, const aml_txn_rec *t, int64_t *txn_no, aml_err *err)
{
    if (t->txn_ref && t->txn_ref[0] == '#')
        return aml_errf(err, "transaction id '%.80s' may not start with '#'", t->txn_ref);
    if (t->amount_minor < 0)
        return aml_errf(err, "negative amount");
    int ch_ok = 0;
    for (int i = 0; channels[i]; i++)
        ch_ok |= t->channel && strcmp(t->channel, channels[i]) == 0;
    if (!ch_ok)
        return aml_errf(err, "unknown channel '%.40s'", t->channel ? t->channel : "");
    if ((!t->from_account || !*t->from_account) && (!t->to_account || !*t->to_account))
        return aml_errf(err, "a transaction needs a from or a to account");
    const char *code = t->currency ? t->currency : "USD";
    const aml_currency *c = aml_currency_find(code, strlen(code));
    int64_t base = base_amount(in, c, code, t->amount_minor, t->booked_at);
    if (base < 0)
        return aml_errf(err, "no FX rate for currency '%.16s' on that date", code);
    int64_t from = t->from_no, to = t->to_no;
    if ((!from && resolve(in, t->from_account, &from, err)) || (!to && resolve(in, t->to_account, &to, err)))
        return -1;
    int64_t no = 0;
    if (in->bulk ? bulk_txn(in, t, code, base, from, to, &no, err) : insert_txn(in, t, code, base, from, to, &no, err))
        return -1;
    if (txn_no)
        *txn_no = no;
    cov_touch(in, from, t->booked_at);
    cov_touch(in, to, t->booked_at);
    if (in->st.transactions == 0 || t->booked_at < in->min_at)
        in->min_at = t->booked_at;
    if (t->precision == AML_PREC_DAY)
        in->day_precision = 1;
    in->st.transactions++;
    return 0;
}

/* One transaction row through the INSERT statement. */
static int insert_txn(aml_ingest *in, const aml_txn_rec *t, const char *code, int64_t base, int64_t from, int64_t to,
                      int64_t *no, aml_err *err)
{
    aml_st *st = aml_stmt(in->s,
                                "INSERT INTO transactions(txn_ref, booked_at, time_precision, from_acct, to_acct, "
                                "amount_minor, currency, amount_base_minor, amount_received_minor, currency_received, "
                                "channel, txn_type, conductor_id, location_id, location_region, location_country, "
                                "counterparty_name, memo, gt_is_laundering, gt_label, gt_attempt_id) "
                                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING txn_no");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    bind_static(st, 1, t->txn_ref);
    aml_bind_int(st, 2, t->booked_at);
    aml_bind_static(st, 3, precisions[t->precision < 0 || t->precision > 2 ? 0 : t->precision]);
    aml_bind_int_opt(st, 4, from, from != 0);
    aml_bind_int_opt(st, 5, to, to != 0);
    aml_bind_int(st, 6, t->amount_minor);
    bind_static(st, 7, code);
    aml_bind_int(st, 8, base);
    aml_bind_int_opt(st, 9, t->amount_received.v, t->amount_received.has);
    bind_static(st, 10, t->currency_received);
    aml_bind_static(st, 11, t->channel);
    bind_static(st, 12, t->txn_type);
    bind_static(st, 13, t->conductor_id);
    bind_static(st, 14, t->location_id);
    bind_static(st, 15, t->location_region);
    bind_static(st, 16, t->location_country);
    bind_static(st, 17, t->counterparty_name);
    bind_static(st, 18, t->memo);
    aml_bind_int_opt(st, 19, t->gt_is_laundering.v, t->gt_is_laundering.has);
    bind_static(st, 20, t->gt_label);
    bind_static(st, 21, t->gt_attempt_id);
    return step_id(in, st, "transaction", t->txn_ref, no, err);
}

/* One transaction row into the open COPY (bulk), opening it first; sent in blocks of BULK_SEND bytes. */
static int bulk_txn(aml_ingest *in, const aml_txn_rec *t, const char *code, int64_t base, int64_t from, int64_t to,
                    int64_t *no, aml_err *err)
{
    if (t->txn_ref && smap_find(&in->refs, t->txn_ref, strlen(t->txn_ref)))
        return aml_errf(err, "transaction '%.80s' already exists", t->txn_ref);
    if (!in->copying) {
        if (copy_open(in, sql_copy_txn, err))
            return -1;
        in->copying = 1;
    }
    crows *b = &in->txb;
    crow_begin(b, 22);
    cfi(b, in->next_txn, 1);
    cf(b, t->txn_ref);
    cfi(b, t->booked_at, 1);
    cf(b, precisions[t->precision < 0 || t->precision > 2 ? 0 : t->precision]);
    cfi(b, from, from != 0);
    cfi(b, to, to != 0);
    cfi(b, t->amount_minor, 1);
    cf(b, code);
    cfi(b, base, 1);
    cfi(b, t->amount_received.v, t->amount_received.has);
    cf(b, t->currency_received);
    cf(b, t->channel);
    cf(b, t->txn_type);
    cf(b, t->conductor_id);
    cf(b, t->location_id);
    cf(b, t->location_region);
    cf(b, t->location_country);
    cf(b, t->counterparty_name);
    cf(b, t->memo);
    cfi(b, t->gt_is_laundering.v, t->gt_is_laundering.has);
    cf(b, t->gt_label);
    cf(b, t->gt_attempt_id);
    if (crow(b, err) || (t->txn_ref && smap_put(&in->refs, t->txn_ref, strlen(t->txn_ref), 1)))
        return aml_errf(err, "out of memory");
    if (b->b.len >= BULK_SEND) {
        int rc = aml_copy_put(in->s, b->b.data, b->b.len, err);
        mcp_buf_reset(&b->b);
        if (rc)
            return -1;
    }
    *no = in->next_txn++;
    return 0;
}

int aml_ingest_trade(aml_ingest *in, const aml_trade_rec *t, aml_err *err)
{
    if (bulk_flush(in, err))
        return -1;
    if (!t->doc_id || !t->txn_ref)
        return aml_errf(err, "trade: doc_id and txn_id are required");
    if (t->invoice_amount_minor < 0)
        return aml_errf(err, "trade '%.80s': negative invoice amount", t->doc_id);
    aml_st *st = aml_stmt(in->s, "INSERT INTO trade_documents(doc_id, txn_no, buyer_name, seller_name, "
                                       "invoice_amount_minor, currency, goods_description, hs_code, origin_country, "
                                       "destination_country) SELECT ?1, txn_no, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 "
                                       "FROM transactions WHERE txn_ref = ?2");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, t->doc_id);
    aml_bind_text(st, 2, t->txn_ref);
    aml_bind_text(st, 3, t->buyer_name);
    aml_bind_text(st, 4, t->seller_name);
    aml_bind_int(st, 5, t->invoice_amount_minor);
    aml_bind_text(st, 6, t->currency ? t->currency : "USD");
    aml_bind_text(st, 7, t->goods_description);
    aml_bind_text(st, 8, t->hs_code);
    aml_bind_text(st, 9, t->origin_country);
    aml_bind_text(st, 10, t->destination_country);
    if (step(in, st, "trade document", t->doc_id, err))
        return -1;
    if (aml_changes(in->s) == 0)
        return aml_errf(err, "trade '%.80s': unknown transaction '%.80s'", t->doc_id, t->txn_ref);
    in->st.trades++;
    return 0;
}

int aml_ingest_case(aml_ingest *in, const aml_case_rec *c, aml_err *err)
{
    if (bulk_flush(in, err))
        return -1;
    if (!c->case_id || !*c->case_id || strlen(c->case_id) > 64)
        return aml_errf(err, "case: case_id is required (at most 64 characters)");
    if (c->window_to < c->window_from)
        return aml_errf(err, "case '%.64s': window ends before it starts", c->case_id);
    if (!valid_date(c->detection_date))
        return aml_errf(err, "case '%.64s': detection_date is not a date", c->case_id);
    aml_st *st = aml_stmt(in->s, "INSERT INTO cases(case_id, title, status, priority, origin, opened_at, "
                                       "detection_date, window_from, window_to) VALUES (?,?,?,?,?,?,?,?,?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, c->case_id);
    aml_bind_text(st, 2, c->title ? c->title : c->case_id);
    aml_bind_text(st, 3, c->status ? c->status : "open");
    aml_bind_text(st, 4, c->priority);
    aml_bind_text(st, 5, c->origin);
    aml_bind_text(st, 6, c->opened_at);
    aml_bind_text(st, 7, c->detection_date);
    aml_bind_int(st, 8, c->window_from);
    aml_bind_int(st, 9, c->window_to);
    if (step(in, st, "case", c->case_id, err))
        return -1;
    for (size_t i = 0; i < c->naccounts; i++) {
        int64_t *no = smap_find(&in->accts, c->accounts[i], strlen(c->accounts[i]));
        if (!no)
            return aml_errf(err, "case '%.64s': unknown account '%.80s'", c->case_id, c->accounts[i]);
        st = aml_stmt(in->s, "INSERT INTO case_accounts(case_id, acct_no) VALUES (?, ?) ON CONFLICT DO NOTHING");
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(in->s));
        aml_bind_text(st, 1, c->case_id);
        aml_bind_int(st, 2, *no);
        if (step(in, st, "case account", c->accounts[i], err))
            return -1;
    }
    in->st.cases++;
    return 0;
}

int aml_ingest_truth(aml_ingest *in, const aml_truth_rec *t, aml_err *err)
{
    if (bulk_flush(in, err))
        return -1;
    aml_st *st = aml_stmt(in->s, "INSERT INTO gt_instances(instance_id, typology_id, kind, variant, case_id, "
                                       "overlap) VALUES (?,?,?,?,?,?)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, t->instance_id);
    aml_bind_text(st, 2, t->typology_id);
    aml_bind_text(st, 3, t->kind);
    aml_bind_text(st, 4, t->variant);
    aml_bind_text(st, 5, t->case_id);
    aml_bind_text(st, 6, t->overlap ? t->overlap : "");
    if (step(in, st, "truth", t->instance_id, err))
        return -1;
    for (size_t i = 0; i < t->naccounts; i++) {
        int64_t *no = smap_find(&in->accts, t->accounts[i], strlen(t->accounts[i]));
        if (!no)
            continue;
        st = aml_stmt(in->s, "INSERT INTO gt_accounts(instance_id, acct_no) VALUES (?, ?) ON CONFLICT DO NOTHING");
        if (!st)
            return aml_errf(err, "%s", aml_errmsg(in->s));
        aml_bind_text(st, 1, t->instance_id);
        aml_bind_int(st, 2, *no);
        if (step(in, st, "truth account", t->accounts[i], err))
            return -1;
    }
    in->st.truths++;
    return 0;
}

int aml_ingest_fx(aml_ingest *in, const char *currency, const char *date, int64_t num, int64_t den, const char *source,
                  aml_err *err)
{
    int64_t d;
    if (!currency || !date || aml_parse_time(date, strlen(date), &d, NULL) || num <= 0 || den <= 0)
        return aml_errf(err, "fx: currency, a rate_date and positive usd_num/usd_den are required");
    if (bulk_flush(in, err))
        return -1;
    aml_st *st = aml_stmt(in->s, "INSERT INTO fx_rates(currency, rate_date, usd_num, usd_den, source) "
                                       "VALUES (?,?,?,?,?) ON CONFLICT(currency, rate_date) DO UPDATE SET "
                                       "usd_num = excluded.usd_num, usd_den = excluded.usd_den, "
                                       "source = excluded.source");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, currency);
    aml_bind_text(st, 2, date);
    aml_bind_int(st, 3, num);
    aml_bind_int(st, 4, den);
    aml_bind_text(st, 5, source);
    if (step(in, st, "fx rate", currency, err))
        return -1;
    if (in->nfx == in->capfx) {
        in->capfx = in->capfx ? in->capfx * 2 : 32;
        fxr *n = realloc(in->fx, in->capfx * sizeof *n);
        if (!n)
            return aml_errf(err, "out of memory");
        in->fx = n;
    }
    fxr *f = &in->fx[in->nfx++];
    snprintf(f->cur, sizeof f->cur, "%s", currency);
    f->date = d;
    f->num = num;
    f->den = den;
    return 0;
}

int aml_ingest_jurisdiction(aml_ingest *in, const char *list, const char *country, const char *from, const char *to,
                            const char *url, aml_err *err)
{
    if (!valid_date(from) || !valid_date(to) || !from)
        return aml_errf(err, "jurisdiction: effective dates must be YYYY-MM-DD");
    if (bulk_flush(in, err))
        return -1;
    aml_st *st = aml_stmt(in->s, "INSERT INTO jurisdiction_lists(list_name, country, effective_from, "
                                       "effective_to, source_url) VALUES (?,?,?,?,?) "
                                       "ON CONFLICT(list_name, country, effective_from) DO UPDATE SET "
                                       "effective_to = excluded.effective_to, source_url = excluded.source_url");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(in->s));
    aml_bind_text(st, 1, list);
    aml_bind_text(st, 2, country);
    aml_bind_text(st, 3, from);
    aml_bind_text(st, 4, to);
    aml_bind_text(st, 5, url);
    return step(in, st, "jurisdiction", country, err);
}

/* ---- importers ------------------------------------------------------------------- */

const char *const aml_native_headers[] = {
    "# mcp-server-aml native CSV v1: the first column names the record type; empty fields are NULL;",
    "# times are ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ), amounts integer minor units.",
    "#customer,customer_id,customer_type,full_name,first_name,last_name,date_of_birth,country,occupation,"
    "naics_code,region,city,risk_rating,pep,onboarded_at,cash_intensive,expected_monthly_cash_minor,"
    "expected_monthly_volume_minor,declared_annual_income_minor",
    "#account,account_id,is_internal,bank_id,institution_name,account_type,currency,status,opened_at,"
    "opening_deposit_minor,home_branch_id,home_region,country,holder_name",
    "#party,account_id,customer_id,role",
    "#txn,txn_id,booked_at,time_precision,from_account_id,to_account_id,amount_minor,currency,channel,txn_type,"
    "conductor_id,location_id,location_region,location_country,counterparty_name,memo,gt_is_laundering,gt_label,"
    "gt_attempt_id",
    "#trade,doc_id,txn_id,buyer_name,seller_name,invoice_amount_minor,currency,goods_description,hs_code,"
    "origin_country,destination_country",
    "#case,case_id,title,status,priority,origin,opened_at,detection_date,window_from,window_to,focus_account_ids",
    "#truth,instance_id,typology_id,kind,variant,case_id,overlap,account_ids",
    "#coverage,account_id,observed_from",
    "#fx,currency,rate_date,usd_num,usd_den,source",
    "#jurisdiction,list_name,country,effective_from,effective_to,source_url",
    NULL,
};

int aml_format_parse(const char *name, aml_format *out)
{
    if (strcmp(name, "native") == 0)
        *out = AML_FMT_NATIVE;
    else if (strcmp(name, "amlworld") == 0)
        *out = AML_FMT_AMLWORLD;
    else if (strcmp(name, "amlsim") == 0)
        *out = AML_FMT_AMLSIM;
    else
        return -1;
    return 0;
}

/* The current record's fields as NUL-terminated strings (empty -> NULL). */
typedef struct rowstr {
    char *buf;
    size_t cap;
    const char *f[AML_CSV_MAX_FIELDS];
    size_t n;
} rowstr;

static int rowstr_load(rowstr *r, const aml_csv *c)
{
    size_t need = 0;
    for (size_t i = 0; i < c->nfields; i++)
        need += c->fields[i].n + 1;
    if (need > r->cap) {
        char *nb = realloc(r->buf, need);
        if (!nb)
            return -1;
        r->buf = nb;
        r->cap = need;
    }
    char *p = r->buf;
    for (size_t i = 0; i < c->nfields; i++) {
        memcpy(p, c->fields[i].p, c->fields[i].n);
        p[c->fields[i].n] = '\0';
        r->f[i] = c->fields[i].n ? p : NULL;
        p += c->fields[i].n + 1;
    }
    for (size_t i = c->nfields; i < AML_CSV_MAX_FIELDS; i++)
        r->f[i] = NULL;
    r->n = c->nfields;
    return 0;
}

static int opt_int(const char *s, aml_opt_int *o)
{
    o->has = 0;
    o->v = 0;
    if (!s)
        return 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end)
        return -1;
    o->has = 1;
    o->v = v;
    return 0;
}

static int req_int(const char *s, int64_t *v)
{
    aml_opt_int o;
    if (!s || opt_int(s, &o))
        return -1;
    *v = o.v;
    return 0;
}

static int parse_ts(const char *s, int64_t *t, int *prec)
{
    return !s || aml_parse_time(s, strlen(s), t, prec);
}

/* Splits "a;b;c" into up to 64 pointers inside a copy. */
static size_t split_list(const char *s, char *copy, size_t ncopy, const char **out)
{
    size_t n = 0;
    if (!s)
        return 0;
    snprintf(copy, ncopy, "%s", s);
    for (char *p = copy; *p && n < 64;) {
        out[n++] = p;
        char *semi = strchr(p, ';');
        if (!semi)
            break;
        *semi = '\0';
        p = semi + 1;
    }
    return n;
}

/* ---- the native format: one function per record type (f: the fields after the type) ---- */

static int native_customer(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_customer_rec c;
    memset(&c, 0, sizeof c);
    c.customer_id = f[0];
    c.customer_type = f[1];
    c.full_name = f[2];
    c.first_name = f[3];
    c.last_name = f[4];
    c.date_of_birth = f[5];
    c.country = f[6];
    c.occupation = f[7];
    c.naics_code = f[8];
    c.region = f[9];
    c.city = f[10];
    c.risk_rating = f[11];
    c.pep = f[12] && strcmp(f[12], "1") == 0;
    c.onboarded_at = f[13];
    c.cash_intensive = f[14] && strcmp(f[14], "1") == 0;
    if (opt_int(f[15], &c.expected_monthly_cash) || opt_int(f[16], &c.expected_monthly_volume) ||
        opt_int(f[17], &c.declared_annual_income))
        return aml_errf(err, "customer: an amount is not an integer");
    return aml_ingest_customer(in, &c, err);
}

static int native_account(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    a.account_id = f[0];
    a.is_internal = !f[1] || strcmp(f[1], "0") != 0;
    a.bank_id = f[2];
    a.institution_name = f[3];
    a.account_type = f[4];
    a.currency = f[5];
    a.status = f[6];
    a.opened_at = f[7];
    if (opt_int(f[8], &a.opening_deposit))
        return aml_errf(err, "account: opening_deposit_minor is not an integer");
    a.home_branch_id = f[9];
    a.home_region = f[10];
    a.country = f[11];
    a.holder_name = f[12];
    if (a.account_id && smap_find(&in->accts, a.account_id, strlen(a.account_id)))
        return aml_errf(err, "account '%.80s' already exists", a.account_id);
    return aml_ingest_account(in, &a, NULL, err);
}

static int native_party(aml_ingest *in, const char *const *f, aml_err *err)
{
    return aml_ingest_party(in, f[0], f[1], f[2], err);
}

static int native_txn(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_txn_rec t;
    memset(&t, 0, sizeof t);
    t.txn_ref = f[0];
    if (parse_ts(f[1], &t.booked_at, NULL))
        return aml_errf(err, "txn: booked_at is not a timestamp");
    t.precision = !f[2] || strcmp(f[2], "second") == 0 ? AML_PREC_SECOND
                  : strcmp(f[2], "minute") == 0       ? AML_PREC_MINUTE
                  : strcmp(f[2], "day") == 0          ? AML_PREC_DAY
                                                      : -1;
    if (t.precision < 0)
        return aml_errf(err, "txn: time_precision must be second, minute or day");
    t.from_account = f[3];
    t.to_account = f[4];
    if (req_int(f[5], &t.amount_minor))
        return aml_errf(err, "txn: amount_minor is not an integer");
    t.currency = f[6];
    t.channel = f[7];
    t.txn_type = f[8];
    t.conductor_id = f[9];
    t.location_id = f[10];
    t.location_region = f[11];
    t.location_country = f[12];
    t.counterparty_name = f[13];
    t.memo = f[14];
    if (opt_int(f[15], &t.gt_is_laundering))
        return aml_errf(err, "txn: gt_is_laundering is not an integer");
    t.gt_label = f[16];
    t.gt_attempt_id = f[17];
    return aml_ingest_txn(in, &t, NULL, err);
}

static int native_coverage(aml_ingest *in, const char *const *f, aml_err *err)
{
    int64_t at;
    if (!f[0] || !*f[0])
        return aml_errf(err, "coverage: account_id is empty");
    if (parse_ts(f[1], &at, NULL))
        return aml_errf(err, "coverage: observed_from is not a timestamp");
    return aml_ingest_coverage(in, f[0], at, err);
}

static int native_trade(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_trade_rec t;
    memset(&t, 0, sizeof t);
    t.doc_id = f[0];
    t.txn_ref = f[1];
    t.buyer_name = f[2];
    t.seller_name = f[3];
    if (req_int(f[4], &t.invoice_amount_minor))
        return aml_errf(err, "trade: invoice_amount_minor is not an integer");
    t.currency = f[5];
    t.goods_description = f[6];
    t.hs_code = f[7];
    t.origin_country = f[8];
    t.destination_country = f[9];
    return aml_ingest_trade(in, &t, err);
}

static int native_case(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_case_rec c;
    memset(&c, 0, sizeof c);
    c.case_id = f[0];
    c.title = f[1];
    c.status = f[2];
    c.priority = f[3];
    c.origin = f[4];
    c.opened_at = f[5];
    c.detection_date = f[6];
    if (parse_ts(f[7], &c.window_from, NULL) || parse_ts(f[8], &c.window_to, NULL))
        return aml_errf(err, "case: window_from/window_to are not timestamps");
    if (!c.opened_at)
        return aml_errf(err, "case: opened_at is required");
    char copy[4096];
    const char *accts[64];
    c.naccounts = split_list(f[9], copy, sizeof copy, accts);
    c.accounts = accts;
    return aml_ingest_case(in, &c, err);
}

static int native_truth(aml_ingest *in, const char *const *f, aml_err *err)
{
    aml_truth_rec t;
    memset(&t, 0, sizeof t);
    t.instance_id = f[0];
    t.typology_id = f[1];
    t.kind = f[2];
    t.variant = f[3];
    t.case_id = f[4];
    t.overlap = f[5];
    char copy[4096];
    const char *accts[64];
    t.naccounts = split_list(f[6], copy, sizeof copy, accts);
    t.accounts = accts;
    return aml_ingest_truth(in, &t, err);
}

static int native_fx(aml_ingest *in, const char *const *f, aml_err *err)
{
    int64_t num, den;
    if (req_int(f[2], &num) || req_int(f[3], &den))
        return aml_errf(err, "fx: usd_num/usd_den are not integers");
    return aml_ingest_fx(in, f[0], f[1], num, den, f[4], err);
}

static int native_jurisdiction(aml_ingest *in, const char *const *f, aml_err *err)
{
    return aml_ingest_jurisdiction(in, f[0], f[1], f[2], f[3], f[4], err);
}

/* The record types of the native format (aml_native_headers) and the fields each needs. */
static const struct {
    const char *type;
    size_t nfields;
    int (*fn)(aml_ingest *in, const char *const *f, aml_err *err);
} native_types[] = {
    {"customer", 18, native_customer}, {"account", 13, native_account}, {"party", 3, native_party},
    {"txn", 18, native_txn},           {"trade", 10, native_trade},     {"case", 10, native_case},
    {"truth", 7, native_truth},        {"fx", 5, native_fx},            {"jurisdiction", 5, native_jurisdiction},
    {"coverage", 2, native_coverage},
};

static int native_row(aml_ingest *in, const rowstr *r, aml_err *err)
{
    const char *type = r->f[0];
    size_t nf = r->n ? r->n - 1 : 0;
    for (size_t i = 0; i < sizeof native_types / sizeof native_types[0]; i++) {
        if (strcmp(type, native_types[i].type) != 0)
            continue;
        if (nf < native_types[i].nfields)
            return aml_errf(err, "%s record needs %d fields, has %zu", type, (int)native_types[i].nfields, nf);
        return native_types[i].fn(in, r->f + 1, err);
    }
    return aml_errf(err, "unknown record type '%.32s'", type);
}

typedef struct importer {
    aml_ingest *in;
    const aml_ingest_opts *o;
    FILE *report;
    uint64_t bad;
    aml_progress prog;
    uint64_t total_bytes, done_bytes;
    /* AMLSim: alert id -> alert type, from alert_* files. */
    smap alerts;
    char **alert_types;
    size_t nalert_types;
} importer;

/* A bad row: reported; skipped or fatal per the options. @return 0 to go on, -1 to stop. */
static int bad_row(importer *im, const char *path, uint64_t line, const char *msg, aml_err *err)
{
    im->bad++;
    if (!im->o->skip_bad)
        return aml_errf(err, "%s:%llu: %s (nothing was imported; --skip-bad-rows skips bad rows)", path,
                        (unsigned long long)line, msg);
    if (im->report && im->bad <= 1000)
        fprintf(im->report, "%s:%llu: skipped: %s\n", path, (unsigned long long)line, msg);
    im->in->st.skipped++;
    return 0;
}

/* The caller's on_progress: nonzero cancels the import. */
static int cancel_requested(importer *im, uint64_t done, aml_err *err)
{
    if (im->o->on_progress && im->o->on_progress(im->o->progress_ud, done, im->total_bytes))
        return aml_errf(err, "the import was cancelled (nothing was imported)");
    return 0;
}

/* Every 4,096 rows: the progress bar and the caller's on_progress. @return -1 when cancelled. */
static int tick(importer *im, const aml_csv *c, aml_err *err)
{
    if ((im->in->st.rows & 4095) != 0)
        return 0;
    aml_progress_update(&im->prog, im->done_bytes + c->bytes_read);
    return cancel_requested(im, im->done_bytes + c->bytes_read, err);
}

/* A bad row whose message is in err (read before bad_row writes err). */
static int bad_row_err(importer *im, const char *path, uint64_t line, aml_err *err)
{
    char m[sizeof err->msg];
    snprintf(m, sizeof m, "%s", err->msg);
    return bad_row(im, path, line, m, err);
}

/*
 * The next record of c as strings in r: 1 with one, 0 at the end of the
 * file, -1 to stop (a bad row that fails the import). A malformed record,
 * or one without `nfields` fields when nfields > 0, is a bad row.
 */
static int next_row(importer *im, aml_csv *c, rowstr *r, size_t nfields, const char *path, aml_err *err)
{
    int k;
    while ((k = aml_csv_next(c, err)) != 0) {
        if (k > 0 && nfields && c->nfields != nfields) {
            char m[48];
            snprintf(m, sizeof m, "expected %zu fields", nfields);
            if (bad_row(im, path, c->line, m, err))
                return -1;
            continue;
        }
        if (k < 0 || rowstr_load(r, c)) {
            if (bad_row_err(im, path, c->line, err))
                return -1;
            continue;
        }
        return 1;
    }
    return 0;
}

static int import_native(importer *im, FILE *f, const char *path, aml_err *err)
{
    aml_csv c;
    rowstr r;
    memset(&r, 0, sizeof r);
    if (aml_csv_open(&c, f))
        return aml_errf(err, "out of memory");
    int rc = 0, k;
    while ((k = aml_csv_next(&c, err)) != 0) {
        if (k < 0) {
            if ((rc = bad_row_err(im, path, c.line, err)))
                break;
            continue;
        }
        if (c.nfields == 0 || (c.nfields == 1 && c.fields[0].n == 0) || (c.fields[0].n && c.fields[0].p[0] == '#'))
            continue;
        im->in->st.rows++;
        if ((rc = tick(im, &c, err)))
            break;
        if (rowstr_load(&r, &c)) {
            rc = aml_errf(err, "out of memory");
            break;
        }
        if (!r.f[0]) {
            if ((rc = bad_row(im, path, c.line, "missing record type", err)))
                break;
            continue;
        }
        aml_err e2 = {{0}};
        if (native_row(im->in, &r, &e2) && (rc = bad_row(im, path, c.line, e2.msg, err)))
            break;
    }
    im->done_bytes += c.bytes_read;
    aml_csv_close(&c);
    free(r.buf);
    return rc;
}

/* AMLworld: "10" or "010" -> "10"; the account id is "AMLW:<bank>:<account>". */
static size_t amlworld_id(char *out, size_t n, const aml_csv_field *bank, const aml_csv_field *acct)
{
    size_t i = 0;
    while (i + 1 < bank->n && bank->p[i] == '0')
        i++;
    size_t bl = bank->n - i, need = 5 + bl + 1 + acct->n;
    if (need + 1 > n || bl == 0 || acct->n == 0)
        return 0;
    memcpy(out, "AMLW:", 5);
    memcpy(out + 5, bank->p + i, bl);
    out[5 + bl] = ':';
    memcpy(out + 6 + bl, acct->p, acct->n);
    out[need] = '\0';
    return need;
}

static const char *amlworld_channel(const aml_csv_field *f)
{
    static const struct {
        const char *name, *ch;
    } map[] = {{"Cash", "cash"},           {"Wire", "wire"},      {"ACH", "ach"},
               {"Cheque", "check"},        {"Credit Card", "card"}, {"Bitcoin", "crypto"},
               {"Reinvestment", "internal"}, {NULL, NULL}};
    for (int i = 0; map[i].name; i++)
        if (strlen(map[i].name) == f->n && memcmp(map[i].name, f->p, f->n) == 0)
            return map[i].ch;
    return "other";
}

static int64_t acct_of(importer *im, const char *id, size_t n, const aml_csv_field *bank, aml_err *err)
{
    int64_t *have = smap_find(&im->in->accts, id, n);
    if (have)
        return *have;
    char bk[32];
    snprintf(bk, sizeof bk, "%.*s", (int)(bank->n < 30 ? bank->n : 30), bank->p);
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    char idz[128];
    snprintf(idz, sizeof idz, "%.*s", (int)n, id);
    a.account_id = idz;
    a.is_internal = 1;
    a.bank_id = bk;
    int64_t no = 0;
    if (aml_ingest_account(im->in, &a, &no, err))
        return -1;
    return no;
}

/* Parses one AMLworld transaction row (11 fields) into a txn record. */
static int amlworld_txn(importer *im, const aml_csv *c, aml_txn_rec *t, char *from, char *to, char *cur,
                        char *rcur, char *type, aml_err *err)
{
    if (c->nfields != 11)
        return aml_errf(err, "expected 11 fields, found %zu", c->nfields);
    memset(t, 0, sizeof *t);
    if (aml_parse_time(c->fields[0].p, c->fields[0].n, &t->booked_at, NULL))
        return aml_errf(err, "timestamp '%.*s' is not YYYY/MM/DD HH:MM", (int)(c->fields[0].n > 40 ? 40 : c->fields[0].n),
                        c->fields[0].p);
    t->precision = AML_PREC_MINUTE;
    if (!amlworld_id(from, 128, &c->fields[1], &c->fields[2]) || !amlworld_id(to, 128, &c->fields[3], &c->fields[4]))
        return aml_errf(err, "bad account");
    const aml_currency *pc = aml_currency_find(c->fields[8].p, c->fields[8].n);
    const aml_currency *rc = aml_currency_find(c->fields[6].p, c->fields[6].n);
    if (!pc || !rc)
        return aml_errf(err, "unknown currency '%.*s'", (int)(pc ? c->fields[6].n : c->fields[8].n) % 40,
                        pc ? c->fields[6].p : c->fields[8].p);
    if (aml_parse_amount(c->fields[7].p, c->fields[7].n, pc->exponent, &t->amount_minor) ||
        aml_parse_amount(c->fields[5].p, c->fields[5].n, rc->exponent, &t->amount_received.v))
        return aml_errf(err, "amount is not a number");
    if (t->amount_minor < 0 || t->amount_received.v < 0)
        return aml_errf(err, "negative amount");
    t->amount_received.has = 1;
    memcpy(cur, pc->code, strlen(pc->code) + 1);
    memcpy(rcur, rc->code, strlen(rc->code) + 1);
    t->currency = cur;
    t->currency_received = rcur;
    t->channel = amlworld_channel(&c->fields[9]);
    size_t tl = c->fields[9].n < 31 ? c->fields[9].n : 31;
    memcpy(type, c->fields[9].p, tl);
    type[tl] = '\0';
    t->txn_type = type;
    t->from_account = from;
    t->to_account = to;
    if (c->fields[10].n == 1 && (c->fields[10].p[0] == '0' || c->fields[10].p[0] == '1')) {
        t->gt_is_laundering.has = 1;
        t->gt_is_laundering.v = c->fields[10].p[0] == '1';
    }
    (void)im;
    return 0;
}

static int import_amlworld_trans(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    char from[128], to[128], cur[8], rcur[8], type[32];
    int k;
    while ((k = aml_csv_next(c, err)) != 0) {
        if (k < 0) {
            if (bad_row_err(im, path, c->line, err))
                return -1;
            continue;
        }
        if (c->nfields == 1 && c->fields[0].n == 0)
            continue;
        im->in->st.rows++;
        if (tick(im, c, err))
            return -1;
        aml_txn_rec t;
        aml_err e2 = {{0}};
        if (amlworld_txn(im, c, &t, from, to, cur, rcur, type, &e2) ||
            (t.from_no = acct_of(im, from, strlen(from), &c->fields[1], &e2)) < 0 ||
            (t.to_no = acct_of(im, to, strlen(to), &c->fields[3], &e2)) < 0 || aml_ingest_txn(im->in, &t, NULL, &e2)) {
            if (bad_row(im, path, c->line, e2.msg, err))
                return -1;
        }
    }
    return 0;
}

/* An AMLworld accounts row (Bank Name, Bank ID, Account Number, Entity ID, Entity Name): the account,
 * and its entity as a customer (created once: an entity owns many accounts). */
static int amlworld_account_row(importer *im, const aml_csv *c, const rowstr *r, aml_err *err)
{
    char id[160], cust[160];
    aml_csv_field bank = c->fields[1], acct = c->fields[2];
    amlworld_id(id, sizeof id, &bank, &acct);
    snprintf(cust, sizeof cust, "AMLW-ENT:%s", r->f[3] ? r->f[3] : "");
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    a.account_id = id;
    a.is_internal = 1;
    a.bank_id = r->f[1];
    a.institution_name = r->f[0];
    a.holder_name = r->f[4];
    aml_customer_rec cu;
    memset(&cu, 0, sizeof cu);
    cu.customer_id = cust;
    cu.full_name = r->f[4] ? r->f[4] : cust;
    cu.customer_type = r->f[4] && (strstr(r->f[4], "Corporation") || strstr(r->f[4], "Partnership") ||
                                   strstr(r->f[4], "Sole Proprietorship"))
                           ? "entity"
                           : "individual";
    cu.source_dataset = "amlworld";
    int64_t no;
    if (aml_ingest_account(im->in, &a, &no, err))
        return -1;
    int exists = customer_known(im->in, cust);
    if (!exists && aml_ingest_customer(im->in, &cu, err))
        return -1;
    return aml_ingest_party(im->in, id, cust, "primary", err);
}

static int import_amlworld_accounts(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    rowstr r;
    memset(&r, 0, sizeof r);
    int k, rc = 0;
    while ((k = next_row(im, c, &r, 5, path, err)) > 0) {
        im->in->st.rows++;
        aml_err e2 = {{0}};
        if (amlworld_account_row(im, c, &r, &e2) && (rc = bad_row(im, path, c->line, e2.msg, err)))
            break;
    }
    free(r.buf);
    return rc ? rc : k;
}

/* "BEGIN LAUNDERING ATTEMPT - FAN-OUT:  Max 16-degree Fan-Out": the label between the dash and the colon. */
static void attempt_label(const char *p, size_t n, char *label, size_t cap)
{
    const char *dash = memchr(p, '-', n);
    const char *s0 = dash ? dash + 1 : p + n;
    while (s0 < p + n && *s0 == ' ')
        s0++;
    size_t l = (size_t)(p + n - s0);
    const char *colon = memchr(s0, ':', l);
    if (colon)
        l = (size_t)(colon - s0);
    while (l && s0[l - 1] == ' ')
        l--;
    snprintf(label, cap, "%.*s", (int)(l < cap - 1 ? l : cap - 1), s0);
}

/* Labels the first unlabelled imported transaction equal to t (accounts, time, amount) with the
 * attempt. @return 1 labelled, 0 not found, -1 on a store error. */
static int label_txn(importer *im, const aml_txn_rec *t, const char *label, const char *attempt, aml_err *err)
{
    if (bulk_flush(im->in, err))
        return -1;
    int64_t *fa = smap_find(&im->in->accts, t->from_account, strlen(t->from_account));
    int64_t *ta = smap_find(&im->in->accts, t->to_account, strlen(t->to_account));
    aml_st *st = aml_stmt(im->in->s,
                                "UPDATE transactions SET gt_label = ?1, gt_attempt_id = ?2, gt_is_laundering = 1 "
                                "WHERE txn_no = (SELECT txn_no FROM transactions WHERE from_acct = ?3 AND "
                                "booked_at = ?4 AND to_acct = ?5 AND amount_minor = ?6 AND gt_attempt_id IS NULL "
                                "ORDER BY txn_no LIMIT 1)");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(im->in->s));
    aml_bind_text(st, 1, label);
    aml_bind_text(st, 2, attempt);
    aml_bind_int(st, 3, fa ? *fa : -1);
    aml_bind_int(st, 4, t->booked_at);
    aml_bind_int(st, 5, ta ? *ta : -1);
    aml_bind_int(st, 6, t->amount_minor);
    int rc = aml_step(st);
    aml_reset(st);
    if (rc != AML_DONE)
        return aml_errf(err, "%s", aml_errmsg(im->in->s));
    return aml_changes(im->in->s) == 1;
}

/* Patterns.txt: label the matching imported transactions with the attempt. */
static int import_amlworld_patterns(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    if (reindex(im->in, err))
        return -1;
    char label[64] = "", attempt[256] = "";
    uint64_t n_attempt = 0;
    char from[128], to[128], cur[8], rcur[8], type[32];
    int k;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    while ((k = aml_csv_next(c, err)) != 0) {
        if (k < 0) {
            if (bad_row_err(im, path, c->line, err))
                return -1;
            continue;
        }
        if (c->nfields == 0 || (c->nfields == 1 && c->fields[0].n == 0))
            continue;
        const char *p = c->fields[0].p;
        size_t n = c->fields[0].n;
        if (n >= 24 && memcmp(p, "BEGIN LAUNDERING ATTEMPT", 24) == 0) {
            attempt_label(p, n, label, sizeof label);
            snprintf(attempt, sizeof attempt, "%s#%llu", base, (unsigned long long)++n_attempt);
            continue;
        }
        if (n >= 22 && memcmp(p, "END LAUNDERING ATTEMPT", 22) == 0) {
            label[0] = '\0';
            continue;
        }
        aml_txn_rec t;
        aml_err e2 = {{0}};
        const char *why = NULL;
        int found = 0;
        if (!label[0])
            why = "transaction outside a BEGIN/END LAUNDERING ATTEMPT block";
        else if (amlworld_txn(im, c, &t, from, to, cur, rcur, type, &e2))
            why = e2.msg;
        else if ((found = label_txn(im, &t, label, attempt, err)) < 0)
            return -1;
        else if (found)
            im->in->st.labels++;
        else
            why = "pattern transaction not found among the imported transactions";
        if (why && bad_row(im, path, c->line, why, err))
            return -1;
    }
    return 0;
}

/* AMLSim outputs: columns are found by header name (their order differs between parameter sets). */
static int col(const aml_csv *c, const char *name)
{
    for (size_t i = 0; i < c->nfields; i++) {
        size_t n = strlen(name);
        if (c->fields[i].n == n && strncasecmp(c->fields[i].p, name, n) == 0)
            return (int)i;
    }
    return -1;
}

static const char *fld(const rowstr *r, int i)
{
    return i >= 0 && (size_t)i < r->n ? r->f[i] : NULL;
}

static void amlsim_id(char *out, size_t n, const char *raw)
{
    snprintf(out, n, "AMLSIM:%s", raw ? raw : "");
}

/* Column indexes of an AMLSim accounts file (-1: absent). */
typedef struct sim_acct_cols {
    int id, first, last, name, open, dep, bank, state, country, branch, birth, city, type;
} sim_acct_cols;

/* A date field as YYYY-MM-DD into out ("" when absent or not a date); returns out or NULL. */
static const char *sim_date(const char *v, char *out)
{
    int64_t t;
    out[0] = '\0';
    if (v && aml_parse_time(v, strlen(v), &t, NULL) == 0)
        aml_fmt_date(t, out);
    return out[0] ? out : NULL;
}

/* An AMLSim account row: the account, its holder as a customer, and the link between them. */
static int amlsim_account_row(importer *im, const rowstr *r, const sim_acct_cols *ci, aml_err *err)
{
    char id[128], cust[128], name[256], opened[16], dob[16];
    amlsim_id(id, sizeof id, fld(r, ci->id));
    snprintf(cust, sizeof cust, "AMLSIM-C:%s", fld(r, ci->id));
    const char *fn = fld(r, ci->first), *ln = fld(r, ci->last);
    if (fn || ln)
        snprintf(name, sizeof name, "%s%s%s", fn ? fn : "", fn && ln ? " " : "", ln ? ln : "");
    else
        snprintf(name, sizeof name, "%s", fld(r, ci->name) ? fld(r, ci->name) : cust);
    aml_account_rec a;
    memset(&a, 0, sizeof a);
    a.account_id = id;
    a.is_internal = 1;
    a.bank_id = fld(r, ci->bank);
    a.opened_at = sim_date(fld(r, ci->open), opened);
    a.home_region = fld(r, ci->state);
    a.country = fld(r, ci->country);
    a.home_branch_id = fld(r, ci->branch);
    a.account_type = fld(r, ci->type);
    const char *dep = fld(r, ci->dep);
    if (dep && aml_parse_amount(dep, strlen(dep), 2, &a.opening_deposit.v) == 0)
        a.opening_deposit.has = 1;
    aml_customer_rec cu;
    memset(&cu, 0, sizeof cu);
    cu.customer_id = cust;
    cu.full_name = name;
    cu.first_name = fn;
    cu.last_name = ln;
    cu.region = fld(r, ci->state);
    cu.city = fld(r, ci->city);
    cu.country = fld(r, ci->country);
    cu.date_of_birth = sim_date(fld(r, ci->birth), dob);
    cu.source_dataset = "amlsim";
    if (aml_ingest_account(im->in, &a, NULL, err) || aml_ingest_customer(im->in, &cu, err))
        return -1;
    return aml_ingest_party(im->in, id, cust, "primary", err);
}

static int import_amlsim_accounts(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    sim_acct_cols ci = {col(c, "acct_id"), col(c, "first_name"), col(c, "last_name"), col(c, "dsply_nm"),
                        col(c, "open_dt"), col(c, "initial_deposit"), col(c, "bank_id"), col(c, "state"),
                        col(c, "country"), col(c, "branch_id"), col(c, "birth_date"), col(c, "city"), col(c, "type")};
    if (ci.id < 0)
        return aml_errf(err, "%s: no acct_id column", path);
    rowstr r;
    memset(&r, 0, sizeof r);
    int k, rc = 0;
    while ((k = next_row(im, c, &r, 0, path, err)) > 0) {
        if (!fld(&r, ci.id))
            continue;
        im->in->st.rows++;
        aml_err e2 = {{0}};
        if (amlsim_account_row(im, &r, &ci, &e2) && (rc = bad_row(im, path, c->line, e2.msg, err)))
            break;
    }
    free(r.buf);
    return rc ? rc : k;
}

static int import_amlsim_alerts(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    int ci_id = col(c, "alert_id"), ci_type = col(c, "alert_type");
    if (ci_id < 0 || ci_type < 0)
        return aml_errf(err, "%s: no alert_id/alert_type columns", path);
    rowstr r;
    memset(&r, 0, sizeof r);
    int k;
    while ((k = aml_csv_next(c, err)) > 0) {
        if (rowstr_load(&r, c) || !fld(&r, ci_id) || !fld(&r, ci_type))
            continue;
        const char *aid = fld(&r, ci_id);
        if (smap_find(&im->alerts, aid, strlen(aid)))
            continue;
        char **nt = realloc(im->alert_types, (im->nalert_types + 1) * sizeof *nt);
        if (!nt) {
            free(r.buf);
            return aml_errf(err, "out of memory");
        }
        im->alert_types = nt;
        im->alert_types[im->nalert_types] = aml_strdup(fld(&r, ci_type));
        if (smap_put(&im->alerts, aid, strlen(aid), (int64_t)im->nalert_types++)) {
            free(r.buf);
            return aml_errf(err, "out of memory");
        }
    }
    free(r.buf);
    return k < 0 ? bad_row_err(im, path, c->line, err) : 0;
}

/* Column indexes of an AMLSim transactions file (-1: absent). */
typedef struct sim_txn_cols {
    int id, orig, bene, type, amt, ts, sar, alert;
} sim_txn_cols;

/* Who pays whom: the account is the originator of a CASH-IN and the branch its beneficiary
 * (CashInModel.java), and the other way round for a CASH-OUT. */
static void amlsim_parties(aml_txn_rec *t, const char *type, const char *orig, const char *bene, char *from,
                           char *to, char *loc)
{
    if (strcmp(type, "CASH-IN") == 0) {
        t->channel = "cash";
        amlsim_id(to, 128, orig);
        snprintf(loc, 64, "%s", bene ? bene : "");
    } else if (strcmp(type, "CASH-OUT") == 0) {
        t->channel = "cash";
        amlsim_id(from, 128, bene);
        snprintf(loc, 64, "%s", orig ? orig : "");
    } else {
        t->channel = strcmp(type, "WIRE") == 0 ? "wire" : strcmp(type, "CHECK") == 0 ? "check"
                                                        : strcmp(type, "DEPOSIT") == 0 ? "cash"
                                                        : strcmp(type, "CREDIT") == 0  ? "other"
                                                                                       : "wire";
        amlsim_id(from, 128, orig);
        amlsim_id(to, 128, bene);
    }
}

/* An AMLSim transaction row; *bad says the row's amount or time could not be read. */
static int amlsim_txn_row(importer *im, const rowstr *r, const sim_txn_cols *ci, int *bad, aml_err *err)
{
    char ref[96], from[128] = "", to[128] = "", loc[64] = "";
    snprintf(ref, sizeof ref, "AMLSIM:%s", fld(r, ci->id));
    const char *type = fld(r, ci->type) ? fld(r, ci->type) : "TRANSFER";
    aml_txn_rec t;
    memset(&t, 0, sizeof t);
    t.txn_ref = ref;
    t.txn_type = type;
    t.precision = AML_PREC_DAY;
    t.currency = "USD";
    amlsim_parties(&t, type, fld(r, ci->orig), fld(r, ci->bene), from, to, loc);
    t.from_account = from[0] ? from : NULL;
    t.to_account = to[0] ? to : NULL;
    t.location_id = loc[0] ? loc : NULL;
    const char *amt = fld(r, ci->amt), *ts = fld(r, ci->ts);
    if (!amt || aml_parse_amount(amt, strlen(amt), 2, &t.amount_minor) || !ts ||
        aml_parse_time(ts, strlen(ts), &t.booked_at, NULL)) {
        *bad = 1;
        return -1;
    }
    t.booked_at = aml_day_start(t.booked_at);
    const char *sar = fld(r, ci->sar), *alert = fld(r, ci->alert);
    if (sar) {
        t.gt_is_laundering.has = 1;
        t.gt_is_laundering.v = strcasecmp(sar, "true") == 0 || strcmp(sar, "1") == 0;
    }
    if (alert && strcmp(alert, "-1") != 0) {
        t.gt_attempt_id = alert;
        int64_t *ti = smap_find(&im->alerts, alert, strlen(alert));
        t.gt_label = ti ? im->alert_types[*ti] : NULL;
    }
    return aml_ingest_txn(im->in, &t, NULL, err);
}

static int import_amlsim_txns(importer *im, aml_csv *c, const char *path, aml_err *err)
{
    sim_txn_cols ci = {col(c, "tran_id"), col(c, "orig_acct"),      col(c, "bene_acct"), col(c, "tx_type"),
                       col(c, "base_amt"), col(c, "tran_timestamp"), col(c, "is_sar"),    col(c, "alert_id")};
    if (ci.id < 0 || ci.orig < 0 || ci.bene < 0 || ci.amt < 0 || ci.ts < 0)
        return aml_errf(err, "%s: missing one of tran_id, orig_acct, bene_acct, base_amt, tran_timestamp", path);
    rowstr r;
    memset(&r, 0, sizeof r);
    int k, rc = 0;
    while ((k = next_row(im, c, &r, 0, path, err)) > 0) {
        if (!fld(&r, ci.id))
            continue;
        im->in->st.rows++;
        if ((rc = tick(im, c, err)))
            break;
        aml_err e2 = {{0}};
        int bad = 0;
        if (amlsim_txn_row(im, &r, &ci, &bad, &e2) &&
            (rc = bad_row(im, path, c->line, bad ? "bad base_amt or tran_timestamp" : e2.msg, err)))
            break;
    }
    free(r.buf);
    return rc ? rc : k;
}

/* What a file is, from its first line. */
typedef enum fkind {
    FK_NATIVE, FK_AW_TRANS, FK_AW_ACCOUNTS, FK_AW_PATTERNS, FK_SIM_ACCOUNTS, FK_SIM_ALERTS, FK_SIM_TXNS, FK_UNKNOWN
} fkind;

static fkind sniff(aml_format fmt, const aml_csv *c)
{
    if (fmt == AML_FMT_NATIVE)
        return FK_NATIVE;
    if (fmt == AML_FMT_AMLWORLD) {
        if (c->nfields == 11 && aml_csv_eq(c, 0, "Timestamp") && aml_csv_eq(c, 1, "From Bank"))
            return FK_AW_TRANS;
        if (c->nfields == 5 && aml_csv_eq(c, 0, "Bank Name"))
            return FK_AW_ACCOUNTS;
        if (c->nfields >= 1 && c->fields[0].n >= 24 && memcmp(c->fields[0].p, "BEGIN LAUNDERING ATTEMPT", 24) == 0)
            return FK_AW_PATTERNS;
        return FK_UNKNOWN;
    }
    /* alert_transactions.csv also has tran_id and orig_acct: test for alerts first. */
    if (col(c, "alert_id") >= 0 && col(c, "alert_type") >= 0)
        return FK_SIM_ALERTS;
    if (col(c, "tran_id") >= 0 && col(c, "orig_acct") >= 0)
        return FK_SIM_TXNS;
    if (col(c, "acct_id") >= 0)
        return FK_SIM_ACCOUNTS;
    return FK_UNKNOWN;
}

/* Import order: reference data before the rows that use it, labels last. */
static int kind_rank(fkind k)
{
    switch (k) {
    case FK_AW_ACCOUNTS:
    case FK_SIM_ACCOUNTS: return 0;
    case FK_SIM_ALERTS: return 1;
    case FK_NATIVE:
    case FK_AW_TRANS:
    case FK_SIM_TXNS: return 2;
    case FK_AW_PATTERNS: return 3;
    default: return 4;
    }
}

/* What each file is: sniffed before anything is written, so that a wrong file fails first. */
static int sniff_files(importer *im, aml_format fmt, const char *const *paths, size_t npaths, fkind *kinds,
                       aml_err *err)
{
    for (size_t i = 0; i < npaths; i++) {
        FILE *f = fopen(paths[i], "rb");
        if (!f)
            return aml_errf(err, "%s: cannot open: %s", paths[i], strerror(errno));
        struct stat sb;
        if (fstat(fileno(f), &sb) == 0)
            im->total_bytes += (uint64_t)sb.st_size;
        aml_csv c;
        aml_err e2 = {{0}};
        kinds[i] = FK_UNKNOWN;
        if (aml_csv_open(&c, f) == 0) {
            if (aml_csv_next(&c, &e2) > 0)
                kinds[i] = sniff(fmt, &c);
            aml_csv_close(&c);
        }
        fclose(f);
        if (kinds[i] == FK_UNKNOWN)
            return aml_errf(err, "%s: not a recognised %s file (check --format)", paths[i],
                            fmt == AML_FMT_AMLWORLD ? "AMLworld" : "AMLSim");
    }
    return 0;
}

/* Imports one file of a known kind. */
static int import_file(importer *im, fkind kind, const char *path, aml_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return aml_errf(err, "%s: cannot open: %s", path, strerror(errno));
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    int rc = 0;
    if (kind == FK_NATIVE) {
        rc = import_native(im, f, path, err);
        fclose(f);
        return rc;
    }
    aml_csv c;
    if (aml_csv_open(&c, f)) {
        fclose(f);
        return aml_errf(err, "out of memory");
    }
    if (kind != FK_AW_PATTERNS)
        aml_csv_next(&c, err); /* the header */
    else
        c.pos = 0;
    switch (kind) {
    case FK_AW_TRANS: rc = import_amlworld_trans(im, &c, path, err); break;
    case FK_AW_ACCOUNTS: rc = import_amlworld_accounts(im, &c, path, err); break;
    case FK_AW_PATTERNS: rc = import_amlworld_patterns(im, &c, path, err); break;
    case FK_SIM_ACCOUNTS: rc = import_amlsim_accounts(im, &c, path, err); break;
    case FK_SIM_ALERTS: rc = import_amlsim_alerts(im, &c, path, err); break;
    case FK_SIM_TXNS: rc = import_amlsim_txns(im, &c, path, err); break;
    default: break;
    }
    im->done_bytes += c.bytes_read;
    aml_csv_close(&c);
    fclose(f);
    return rc;
}

int aml_import(aml_store *s, aml_format fmt, const char *const *paths, size_t npaths, const aml_ingest_opts *o,
               FILE *report, aml_ingest_stats *stats, aml_err *err)
{
    importer im;
    memset(&im, 0, sizeof im);
    aml_ingest_opts def;
    memset(&def, 0, sizeof def);
    im.o = o ? o : &def;
    im.report = report;
    fkind *kinds = calloc(npaths ? npaths : 1, sizeof *kinds);
    if (!kinds)
        return aml_errf(err, "out of memory");
    if (sniff_files(&im, fmt, paths, npaths, kinds, err) || aml_ingest_begin(&im.in, s, im.o, err)) {
        free(kinds);
        return -1;
    }
    aml_progress_start(&im.prog, "importing", im.total_bytes);
    if (!im.o->progress)
        im.prog.enabled = 0;
    int rc = 0;
    for (int rank = 0; rank <= 3 && !rc; rank++)
        for (size_t i = 0; i < npaths && !rc; i++)
            if (kind_rank(kinds[i]) == rank)
                rc = import_file(&im, kinds[i], paths[i], err);
    aml_progress_end(&im.prog);
    if (!rc)
        rc = cancel_requested(&im, im.total_bytes, err);
    if (rc)
        aml_ingest_abort(im.in);
    else
        rc = aml_ingest_commit(im.in, stats, err);
    smap_free(&im.alerts);
    for (size_t i = 0; i < im.nalert_types; i++)
        free(im.alert_types[i]);
    free(im.alert_types);
    free(kinds);
    return rc;
}

int aml_import_files(aml_store *s, const char *format, const char *const *paths, size_t npaths,
                     int (*on_progress)(void *ud, uint64_t done, uint64_t total), void *ud,
                     aml_import_counts *out, aml_err *err)
{
    aml_format fmt;
    if (!format || aml_format_parse(format, &fmt))
        return aml_errf(err, "unknown format '%s' (native, amlworld or amlsim)", format ? format : "");
    aml_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.source = format;
    o.on_progress = on_progress;
    o.progress_ud = ud;
    aml_ingest_stats st;
    memset(&st, 0, sizeof st);
    if (aml_import(s, fmt, paths, npaths, &o, NULL, &st, err))
        return -1;
    out->rows = st.rows;
    out->transactions = st.transactions;
    out->accounts = st.accounts;
    out->customers = st.customers;
    return 0;
}
