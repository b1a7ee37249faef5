/*
 * The case store on SQLite: opening, migrations, the statement cache and
 * the hash-chained audit log. See store.h.
 */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

/*
 * Migration 1: the whole schema of aml-domain.md section 5, with these
 * deliberate differences (docs/aml.md explains them):
 *  - accounts carry an integer key (acct_no) beside the text account_id,
 *    and transactions reference accounts by it: half the index size, and
 *    integer comparisons in the hot index scans;
 *  - transactions are keyed by an integer txn_no; the source's id, when it
 *    has one, is txn_ref (unique when present);
 *  - booked_at is integer seconds since the epoch (UTC), and
 *    amount_base_minor (USD cents, converted once at import with the stored
 *    FX table) is kept beside the original amount;
 *  - the two account/time indexes cover the columns the typology engine
 *    reads, so loading an account's history never touches the table.
 */
static const char *const migration_1[] = {
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;\n",
    "CREATE TABLE customers (\n"
    "  customer_id TEXT PRIMARY KEY,\n"
    "  customer_type TEXT NOT NULL CHECK (customer_type IN ('individual','entity')),\n"
    "  full_name TEXT NOT NULL,\n"
    "  first_name TEXT, last_name TEXT, date_of_birth TEXT, country TEXT,\n"
    "  occupation TEXT, naics_code TEXT,\n"
    "  address_line TEXT, city TEXT, region TEXT, postal_code TEXT,\n"
    "  risk_rating TEXT CHECK (risk_rating IN ('low','medium','high')),\n"
    "  pep INTEGER NOT NULL DEFAULT 0,\n"
    "  onboarded_at TEXT,\n"
    "  cash_intensive INTEGER NOT NULL DEFAULT 0,\n"
    "  expected_monthly_cash_minor INTEGER,\n"
    "  expected_monthly_volume_minor INTEGER,\n"
    "  declared_annual_income_minor INTEGER,\n"
    "  source_dataset TEXT);\n",
    "CREATE TABLE accounts (\n"
    "  acct_no INTEGER PRIMARY KEY,\n"
    "  account_id TEXT NOT NULL UNIQUE,\n"
    "  is_internal INTEGER NOT NULL DEFAULT 1,\n"
    "  bank_id TEXT, institution_name TEXT, account_type TEXT,\n"
    "  currency TEXT NOT NULL DEFAULT 'USD',\n"
    "  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','dormant','closed')),\n"
    "  opened_at TEXT, closed_at TEXT,\n"
    "  opening_deposit_minor INTEGER,\n"
    "  home_branch_id TEXT, home_region TEXT, country TEXT,\n"
    "  holder_name TEXT);\n"
    "CREATE INDEX accounts_country ON accounts(country);\n",
    "CREATE TABLE account_parties (\n"
    "  acct_no INTEGER NOT NULL REFERENCES accounts(acct_no),\n"
    "  customer_id TEXT NOT NULL REFERENCES customers(customer_id),\n"
    "  role TEXT NOT NULL CHECK (role IN ('primary','joint','signatory','beneficial_owner')),\n"
    "  PRIMARY KEY (acct_no, customer_id, role)) WITHOUT ROWID;\n"
    "CREATE INDEX account_parties_customer ON account_parties(customer_id);\n",
    "CREATE TABLE transactions (\n"
    "  txn_no INTEGER PRIMARY KEY,\n"
    "  txn_ref TEXT,\n"
    "  booked_at INTEGER NOT NULL,\n"
    "  time_precision TEXT NOT NULL DEFAULT 'second'\n"
    "    CHECK (time_precision = 'second' OR time_precision = 'minute' OR time_precision = 'day'),\n"
    "  from_acct INTEGER REFERENCES accounts(acct_no),\n"
    "  to_acct INTEGER REFERENCES accounts(acct_no),\n"
    "  amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),\n"
    "  currency TEXT NOT NULL,\n"
    "  amount_base_minor INTEGER NOT NULL CHECK (amount_base_minor >= 0),\n"
    "  amount_received_minor INTEGER, currency_received TEXT,\n"
    /* Comparisons, not IN (...): SQLite builds an ephemeral table for an IN list on every insert. */
    "  channel TEXT NOT NULL CHECK (channel = 'cash' OR channel = 'wire' OR channel = 'ach' OR channel = 'check'\n"
    "    OR channel = 'card' OR channel = 'internal' OR channel = 'crypto' OR channel = 'other'),\n"
    "  txn_type TEXT, conductor_id TEXT,\n"
    "  location_id TEXT, location_region TEXT, location_country TEXT,\n"
    "  counterparty_name TEXT, memo TEXT,\n"
    "  gt_is_laundering INTEGER, gt_label TEXT, gt_attempt_id TEXT,\n"
    "  CHECK (from_acct IS NOT NULL OR to_acct IS NOT NULL));\n"
    "CREATE INDEX tx_from ON transactions(from_acct, booked_at, to_acct, amount_base_minor, channel);\n"
    "CREATE INDEX tx_to ON transactions(to_acct, booked_at, from_acct, amount_base_minor, channel);\n"
    "CREATE UNIQUE INDEX tx_ref ON transactions(txn_ref) WHERE txn_ref IS NOT NULL;\n",
    "CREATE TABLE fx_rates (\n"
    "  currency TEXT NOT NULL, rate_date TEXT NOT NULL,\n"
    "  usd_num INTEGER NOT NULL CHECK (usd_num > 0), usd_den INTEGER NOT NULL CHECK (usd_den > 0),\n"
    "  source TEXT, PRIMARY KEY (currency, rate_date)) WITHOUT ROWID;\n",
    "CREATE TABLE jurisdiction_lists (\n"
    "  list_name TEXT NOT NULL CHECK (list_name IN ('fatf_call_for_action','fatf_increased_monitoring','internal')),\n"
    "  country TEXT NOT NULL, effective_from TEXT NOT NULL, effective_to TEXT, source_url TEXT,\n"
    "  PRIMARY KEY (list_name, country, effective_from)) WITHOUT ROWID;\n",
    "CREATE TABLE trade_documents (\n"
    "  doc_id TEXT PRIMARY KEY, txn_no INTEGER NOT NULL REFERENCES transactions(txn_no),\n"
    "  buyer_name TEXT, seller_name TEXT,\n"
    "  invoice_amount_minor INTEGER NOT NULL CHECK (invoice_amount_minor >= 0), currency TEXT NOT NULL,\n"
    "  goods_description TEXT, hs_code TEXT, origin_country TEXT, destination_country TEXT);\n"
    "CREATE INDEX trade_documents_txn ON trade_documents(txn_no);\n",
    "CREATE TABLE cases (\n"
    "  case_id TEXT PRIMARY KEY,\n"
    "  title TEXT NOT NULL,\n"
    "  status TEXT NOT NULL DEFAULT 'open'\n"
    "    CHECK (status IN ('open','in_review','escalated','closed_no_action','sar_filed')),\n"
    "  priority TEXT CHECK (priority IN ('low','normal','high','urgent')),\n"
    "  origin TEXT CHECK (origin IN ('alert','manual','referral','fixture','scan')),\n"
    "  opened_at TEXT NOT NULL,\n"
    "  detection_date TEXT,\n"
    "  window_from INTEGER NOT NULL, window_to INTEGER NOT NULL,\n"
    "  risk_level TEXT CHECK (risk_level IN ('low','medium','high')),\n"
    "  case_score INTEGER,\n"
    "  last_assessment_id TEXT);\n",
    "CREATE TABLE case_accounts (\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  acct_no INTEGER NOT NULL REFERENCES accounts(acct_no),\n"
    "  PRIMARY KEY (case_id, acct_no)) WITHOUT ROWID;\n"
    "CREATE INDEX case_accounts_acct ON case_accounts(acct_no);\n",
    "CREATE TABLE case_typologies (\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id), typology_id TEXT NOT NULL,\n"
    "  score INTEGER NOT NULL, PRIMARY KEY (case_id, typology_id)) WITHOUT ROWID;\n"
    "CREATE INDEX case_typologies_typology ON case_typologies(typology_id);\n",
    /* Generator ground truth: for evaluation only, never read by the engine or the tools. */
    "CREATE TABLE gt_instances (\n"
    "  instance_id TEXT PRIMARY KEY, typology_id TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK (kind IN ('injected','lookalike')),\n"
    "  variant TEXT, case_id TEXT, overlap TEXT NOT NULL DEFAULT '') WITHOUT ROWID;\n",
    "CREATE TABLE gt_accounts (\n"
    "  instance_id TEXT NOT NULL, acct_no INTEGER NOT NULL,\n"
    "  PRIMARY KEY (instance_id, acct_no)) WITHOUT ROWID;\n",
    "CREATE TABLE assessments (\n"
    "  assessment_id TEXT PRIMARY KEY,\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  kind TEXT NOT NULL CHECK (kind IN ('typology','case')),\n"
    "  requested_typologies TEXT NOT NULL,\n"
    "  engine_version TEXT NOT NULL, catalog_version TEXT NOT NULL,\n"
    "  params_sha256 TEXT NOT NULL, data_sha256 TEXT NOT NULL,\n"
    "  window_from TEXT NOT NULL, window_to TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL, requested_by TEXT,\n"
    "  outcome TEXT NOT NULL CHECK (outcome IN ('typologies_matched','no_typology_matched','partial_not_evaluable')),\n"
    "  case_score INTEGER NOT NULL, risk_level TEXT NOT NULL,\n"
    "  result_json TEXT NOT NULL);\n"
    "CREATE INDEX assessments_case ON assessments(case_id);\n",
    "CREATE TABLE assessment_findings (\n"
    "  assessment_id TEXT NOT NULL REFERENCES assessments(assessment_id),\n"
    "  typology_id TEXT NOT NULL,\n"
    "  status TEXT NOT NULL CHECK (status IN ('matched','not_matched','not_evaluable')),\n"
    "  score INTEGER NOT NULL, explanation TEXT NOT NULL,\n"
    "  metrics_json TEXT NOT NULL, params_json TEXT NOT NULL,\n"
    "  PRIMARY KEY (assessment_id, typology_id)) WITHOUT ROWID;\n",
    "CREATE TABLE finding_evidence (\n"
    "  assessment_id TEXT NOT NULL, typology_id TEXT NOT NULL,\n"
    "  txn_no INTEGER NOT NULL REFERENCES transactions(txn_no),\n"
    "  ordinal INTEGER NOT NULL, role TEXT NOT NULL CHECK (role IN ('trigger','context')),\n"
    "  PRIMARY KEY (assessment_id, typology_id, txn_no)) WITHOUT ROWID;\n",
    "CREATE TABLE sar_drafts (\n"
    "  sar_draft_id TEXT PRIMARY KEY,\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  assessment_id TEXT NOT NULL REFERENCES assessments(assessment_id),\n"
    "  version INTEGER NOT NULL,\n"
    "  filing_type TEXT NOT NULL CHECK (filing_type IN ('initial','continuing','correct_amend','joint')),\n"
    "  prior_bsa_id TEXT,\n"
    "  status TEXT NOT NULL DEFAULT 'draft'\n"
    "    CHECK (status IN ('draft','in_review','approved','rejected','superseded','not_warranted')),\n"
    "  amount_involved_usd INTEGER, activity_from TEXT, activity_to TEXT, cumulative_amount_usd INTEGER,\n"
    "  categories_json TEXT NOT NULL, narrative_text TEXT NOT NULL, narrative_json TEXT NOT NULL,\n"
    "  attachment_csv TEXT, filing_due_date TEXT,\n"
    "  created_at TEXT NOT NULL, created_by TEXT, reviewed_by TEXT, review_notes TEXT,\n"
    "  result_json TEXT NOT NULL);\n"
    "CREATE INDEX sar_drafts_case ON sar_drafts(case_id, version);\n",
    "CREATE TABLE scan_runs (\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  window_from INTEGER NOT NULL, window_to INTEGER NOT NULL,\n"
    "  max_txn_no INTEGER NOT NULL, started_at TEXT NOT NULL, detection_date TEXT NOT NULL,\n"
    "  accounts_evaluated INTEGER NOT NULL, accounts_matched INTEGER NOT NULL,\n"
    "  cases_opened INTEGER NOT NULL, cases_updated INTEGER NOT NULL);\n",
    "CREATE TABLE audit_log (\n"
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, case_id TEXT,\n"
    "  object_type TEXT, object_id TEXT,\n"
    "  request_sha256 TEXT NOT NULL, response_sha256 TEXT,\n"
    "  outcome TEXT NOT NULL CHECK (outcome IN ('ok','error','denied')),\n"
    "  detail TEXT, prev_hash TEXT NOT NULL, entry_hash TEXT NOT NULL);\n"
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_log\n"
    "  BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;\n"
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_log\n"
    "  BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;\n",
    NULL,
};

/*
 * Seed data of migration 1. The jurisdiction lists are dated data, never
 * code (aml-domain.md T09): this seed is the part of the FATF lists the
 * reference material cites, and must be kept current by loading newer
 * lists (native import, record type "jurisdiction").
 */
typedef struct seed_list {
    const char *list, *country, *from, *url; /* a jurisdiction_lists row */
} seed_list;

static const seed_list seed_lists[] = {
    {"fatf_call_for_action", "KP", "2024-02-23",
     "https://www.fatf-gafi.org/fr/publications/Juridictions-haut-risques-et-sous-surveillance/Call-for-action-february-2024.html"},
    {"fatf_call_for_action", "IR", "2024-02-23",
     "https://www.fatf-gafi.org/fr/publications/Juridictions-haut-risques-et-sous-surveillance/Call-for-action-february-2024.html"},
    {"fatf_call_for_action", "MM", "2022-10-21", "https://www.gif.gov.mo/en/standard/highriskjurisdict.html"},
    {"fatf_increased_monitoring", "CD", "2022-10-21",
     "https://bankingjournal.aba.com/2022/10/international-task-force-updates-lists-of-countries-with-aml-deficiencies/"},
    {"fatf_increased_monitoring", "MZ", "2022-10-21",
     "https://bankingjournal.aba.com/2022/10/international-task-force-updates-lists-of-countries-with-aml-deficiencies/"},
    {"fatf_increased_monitoring", "TZ", "2022-10-21",
     "https://bankingjournal.aba.com/2022/10/international-task-force-updates-lists-of-countries-with-aml-deficiencies/"},
};

static int seed_1(aml_store *s, aml_err *err)
{
    for (const aml_currency *c = aml_currencies(); c->code; c++) {
        sqlite3_stmt *st = aml_stmt(s, "INSERT INTO fx_rates(currency, rate_date, usd_num, usd_den, source) "
                                       "VALUES (?, '2000-01-01', ?, ?, 'demo rate (illustrative, not market data)')");
        if (!st)
            return aml_errf(err, "%s", s->errmsg);
        aml_bind_text(st, 1, c->code);
        aml_bind_int(st, 2, c->usd_num);
        aml_bind_int(st, 3, c->usd_den);
        if (aml_step_done(s, st, err))
            return -1;
    }
    for (size_t i = 0; i < sizeof seed_lists / sizeof seed_lists[0]; i++) {
        sqlite3_stmt *st = aml_stmt(s, "INSERT INTO jurisdiction_lists(list_name, country, effective_from, "
                                       "source_url) VALUES (?, ?, ?, ?)");
        if (!st)
            return aml_errf(err, "%s", s->errmsg);
        aml_bind_text(st, 1, seed_lists[i].list);
        aml_bind_text(st, 2, seed_lists[i].country);
        aml_bind_text(st, 3, seed_lists[i].from);
        aml_bind_text(st, 4, seed_lists[i].url);
        if (aml_step_done(s, st, err))
            return -1;
    }
    return aml_meta_set(s, "schema.created_by", "mcp-server-aml", err);
}

typedef struct migration {
    const char *const *sql;                  /* DDL statements, NULL-terminated */
    int (*seed)(aml_store *s, aml_err *err); /* data, or NULL */
} migration;

/* migrations[i] takes user_version i to i + 1. Append only; never edit a shipped one. */
static const migration migrations[AML_SCHEMA_VERSION] = {
    {migration_1, seed_1},
};

/* ---- connection ------------------------------------------------------------ */

void aml_store_lock(aml_store *s)
{
    pthread_mutex_lock(&s->mu);
}

void aml_store_unlock(aml_store *s)
{
    pthread_mutex_unlock(&s->mu);
}

sqlite3_stmt *aml_stmt(aml_store *s, const char *sql)
{
    size_t h = ((uintptr_t)sql >> 3) % AML_STMT_CACHE;
    for (size_t k = 0; k < AML_STMT_CACHE; k++) {
        aml_stmt_slot *slot = &s->stmts[(h + k) % AML_STMT_CACHE];
        if (slot->sql == sql) {
            sqlite3_reset(slot->stmt);
            sqlite3_clear_bindings(slot->stmt);
            return slot->stmt;
        }
        if (!slot->sql) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
                snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
                sqlite3_finalize(st);
                return NULL;
            }
            slot->sql = sql;
            slot->stmt = st;
            s->nstmts++;
            return st;
        }
    }
    /* Cache full (a bug: there are fewer static statements than slots). */
    snprintf(s->errmsg, sizeof s->errmsg, "statement cache full");
    return NULL;
}

static void finalize_all(aml_store *s)
{
    for (size_t i = 0; i < AML_STMT_CACHE; i++) {
        if (s->stmts[i].stmt)
            sqlite3_finalize(s->stmts[i].stmt);
        s->stmts[i].stmt = NULL;
        s->stmts[i].sql = NULL;
    }
    s->nstmts = 0;
}

int aml_exec(aml_store *s, const char *sql, aml_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return aml_errf(err, "%s", s->errmsg);
    }
    return 0;
}

int aml_begin(aml_store *s, aml_err *err)
{
    return aml_exec(s, "BEGIN IMMEDIATE", err);
}

int aml_commit(aml_store *s, aml_err *err)
{
    return aml_exec(s, "COMMIT", err);
}

void aml_rollback(aml_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void aml_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

void aml_bind_textn(sqlite3_stmt *st, int i, const char *v, size_t n)
{
    if (v)
        sqlite3_bind_text(st, i, v, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

void aml_bind_int(sqlite3_stmt *st, int i, int64_t v)
{
    sqlite3_bind_int64(st, i, v);
}

void aml_bind_int_opt(sqlite3_stmt *st, int i, int64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

const char *aml_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

void aml_jw_col_text(mcp_jw *w, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_string(w, aml_col_text(st, i));
}

void aml_jw_col_int(mcp_jw *w, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        mcp_jw_null(w);
    else
        mcp_jw_int(w, sqlite3_column_int64(st, i));
}

int aml_step_done(aml_store *s, sqlite3_stmt *st, aml_err *err)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
        sqlite3_reset(st);
        return aml_errf(err, "%s", s->errmsg);
    }
    sqlite3_reset(st);
    return 0;
}

int aml_meta_get(aml_store *s, const char *key, char *out, size_t n)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT value FROM meta WHERE key = ?");
    out[0] = '\0';
    if (!st)
        return -1;
    aml_bind_text(st, 1, key);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    sqlite3_reset(st);
    return found ? 0 : -1;
}

int aml_meta_set(aml_store *s, const char *key, const char *value, aml_err *err)
{
    sqlite3_stmt *st = aml_stmt(s, "INSERT INTO meta(key, value) VALUES (?, ?) "
                                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    if (!st)
        return aml_errf(err, "%s", s->errmsg);
    aml_bind_text(st, 1, key);
    aml_bind_text(st, 2, value);
    return aml_step_done(s, st, err);
}

static int pragma_int(aml_store *s, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE)
        snprintf(s->errmsg, sizeof s->errmsg, "%s", sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : -1;
}

static int migrate(aml_store *s, int64_t from, aml_err *err)
{
    for (int64_t v = from; v < AML_SCHEMA_VERSION; v++) {
        const migration *m = &migrations[v];
        const char *const *sql = m->sql;
        int failed = 0;
        for (size_t k = 0; sql && sql[k] && !failed; k++)
            failed = aml_exec(s, sql[k], err);
        if (aml_begin(s, err))
            return -1;
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", (int)(v + 1));
        if (failed || (m->seed && m->seed(s, err)) || aml_exec(s, pragma, err)) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err ? err->msg : "");
            aml_rollback(s);
            finalize_all(s); /* statements may reference tables the rollback removed */
            return aml_errf(err, "schema migration %d -> %d failed: %s", (int)v, (int)(v + 1), why);
        }
        if (aml_commit(s, err))
            return -1;
    }
    return 0;
}

/* SQLite's allocation statistics take a global mutex per malloc; nothing here reads them. */
static pthread_once_t sqlite_once = PTHREAD_ONCE_INIT;
static void sqlite_setup(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int aml_store_open(aml_store **out, const char *path, unsigned flags, aml_err *err)
{
    pthread_once(&sqlite_once, sqlite_setup);
    int memory = !path || strcmp(path, ":memory:") == 0;
    aml_store *s = calloc(1, sizeof *s);
    if (!s)
        return aml_errf(err, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    s->memory = memory;
    int oflags = (flags & AML_OPEN_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    if ((flags & AML_OPEN_CREATE) && !(flags & AML_OPEN_READONLY))
        oflags |= SQLITE_OPEN_CREATE;
    oflags |= SQLITE_OPEN_NOMUTEX; /* aml_store_lock serialises users */
    const char *name = memory ? ":memory:" : path;
    int rc = sqlite3_open_v2(name, &s->db, oflags, NULL);
    if (rc != SQLITE_OK) {
        aml_errf(err, "%s: cannot open the case store: %s", name,
                 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        aml_store_close(s);
        return -1;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);

    /* Reading the header catches a file that is not SQLite at all. */
    int64_t app = 0, ver = 0, ntables = 0;
    if (pragma_int(s, "PRAGMA application_id", &app) || pragma_int(s, "PRAGMA user_version", &ver) ||
        pragma_int(s, "SELECT count(*) FROM sqlite_schema", &ntables)) {
        aml_errf(err, "%s: not a usable case store: %s", name, s->errmsg);
        aml_store_close(s);
        return -1;
    }
    if (app != AML_APPLICATION_ID && (app != 0 || ntables != 0)) {
        aml_errf(err, "%s: is an SQLite database but not an mcp-server-aml case store "
                      "(application_id %lld); refusing to touch it", name, (long long)app);
        aml_store_close(s);
        return -1;
    }
    if ((flags & AML_OPEN_CHECK) && !memory) {
        /* Reads every page once: damage anywhere is reported now, not in the middle of a tool call. */
        sqlite3_stmt *st = NULL;
        char first[200] = "";
        int rc2 = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);
        if (rc2 == SQLITE_OK && (rc2 = sqlite3_step(st)) == SQLITE_ROW)
            snprintf(first, sizeof first, "%s", (const char *)sqlite3_column_text(st, 0));
        if (rc2 != SQLITE_ROW)
            snprintf(first, sizeof first, "%s", sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
        if (strcmp(first, "ok") != 0) {
            aml_errf(err, "%s: the case store is damaged (integrity check: %s); restore it from a backup", name,
                     first);
            aml_store_close(s);
            return -1;
        }
    }
    if (ver > AML_SCHEMA_VERSION) {
        aml_errf(err, "%s: case store schema version %lld was written by a newer mcp-server-aml "
                      "(this one knows up to %d)", name, (long long)ver, AML_SCHEMA_VERSION);
        aml_store_close(s);
        return -1;
    }
    if (!(flags & AML_OPEN_READONLY)) {
        aml_exec(s, "PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;"
                    "PRAGMA cache_size = -65536", NULL);
        if (!memory)
            aml_exec(s, "PRAGMA journal_mode = WAL", NULL);
    }
    if (ver < AML_SCHEMA_VERSION) {
        if (flags & AML_OPEN_READONLY) {
            aml_errf(err, "%s: case store schema version %lld needs an upgrade to %d; open it writable once",
                     name, (long long)ver, AML_SCHEMA_VERSION);
            aml_store_close(s);
            return -1;
        }
        if (app == 0) {
            char sql[64];
            snprintf(sql, sizeof sql, "PRAGMA application_id = %d", AML_APPLICATION_ID);
            if (aml_exec(s, sql, err)) {
                aml_store_close(s);
                return -1;
            }
        }
        if (migrate(s, ver, err)) {
            aml_store_close(s);
            return -1;
        }
    }
    *out = s;
    return 0;
}

void aml_store_close(aml_store *s)
{
    if (!s)
        return;
    finalize_all(s);
    if (s->db)
        sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- accounts -------------------------------------------------------------- */

int64_t aml_account_no(aml_store *s, const char *account_id)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT acct_no FROM accounts WHERE account_id = ?");
    if (!st)
        return 0;
    aml_bind_text(st, 1, account_id);
    int64_t no = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return no;
}

void aml_account_id(aml_store *s, int64_t acct_no, char *out, size_t n)
{
    out[0] = '\0';
    sqlite3_stmt *st = aml_stmt(s, "SELECT account_id FROM accounts WHERE acct_no = ?");
    if (!st)
        return;
    aml_bind_int(st, 1, acct_no);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, n, "%s", aml_col_text(st, 0));
    sqlite3_reset(st);
}

/* ---- audit log ------------------------------------------------------------- */

#define GENESIS "0000000000000000000000000000000000000000000000000000000000000000"

/* Length-prefixed, so no field value can forge a field boundary. */
static void hash_field(aml_sha256 *h, const char *v)
{
    char len[32];
    size_t n = v ? strlen(v) : 0;
    int k = v ? snprintf(len, sizeof len, "%zu:", n) : snprintf(len, sizeof len, "-:");
    aml_sha256_update(h, len, (size_t)k);
    if (v)
        aml_sha256_update(h, v, n);
}

static void entry_hash(const char *prev, int64_t seq, const char *at, const char *actor, const char *action,
                       const char *case_id, const char *req, const char *resp, const char *outcome,
                       const char *detail, char *out)
{
    aml_sha256 h;
    char seqs[32];
    snprintf(seqs, sizeof seqs, "%lld", (long long)seq);
    aml_sha256_init(&h);
    hash_field(&h, prev);
    hash_field(&h, seqs);
    hash_field(&h, at);
    hash_field(&h, actor);
    hash_field(&h, action);
    hash_field(&h, case_id);
    hash_field(&h, req);
    hash_field(&h, resp);
    hash_field(&h, outcome);
    hash_field(&h, detail);
    aml_sha256_final(&h, out);
}

int aml_audit_append(aml_store *s, const aml_audit_entry *e, aml_err *err)
{
    int own = sqlite3_get_autocommit(s->db);
    if (own && aml_begin(s, err))
        return -1;
    char prev[65] = GENESIS;
    int64_t seq = 1;
    sqlite3_stmt *st = aml_stmt(s, "SELECT seq, entry_hash FROM audit_log ORDER BY seq DESC LIMIT 1");
    if (!st)
        goto fail;
    if (sqlite3_step(st) == SQLITE_ROW) {
        seq = sqlite3_column_int64(st, 0) + 1;
        snprintf(prev, sizeof prev, "%s", aml_col_text(st, 1));
    }
    sqlite3_reset(st);
    /* AUTOINCREMENT never reuses a number: take the next one from sqlite_sequence. */
    st = aml_stmt(s, "SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'");
    if (!st)
        goto fail;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) + 1 > seq)
        seq = sqlite3_column_int64(st, 0) + 1;
    sqlite3_reset(st);
    char at[21], hash[65];
    aml_fmt_time(aml_now(), at);
    entry_hash(prev, seq, at, e->actor, e->action, e->case_id, e->request_sha256, e->response_sha256,
               e->outcome, e->detail, hash);
    st = aml_stmt(s, "INSERT INTO audit_log(seq, at, actor, action, case_id, request_sha256, response_sha256, "
                     "outcome, detail, prev_hash, entry_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    if (!st)
        goto fail;
    aml_bind_int(st, 1, seq);
    aml_bind_text(st, 2, at);
    aml_bind_text(st, 3, e->actor);
    aml_bind_text(st, 4, e->action);
    aml_bind_text(st, 5, e->case_id);
    aml_bind_text(st, 6, e->request_sha256);
    aml_bind_text(st, 7, e->response_sha256);
    aml_bind_text(st, 8, e->outcome);
    aml_bind_text(st, 9, e->detail);
    aml_bind_text(st, 10, prev);
    aml_bind_text(st, 11, hash);
    if (aml_step_done(s, st, err))
        goto fail_msg;
    if (own && aml_commit(s, err))
        goto fail_msg;
    return 0;
fail:
    aml_errf(err, "audit log: %s", s->errmsg);
fail_msg:
    if (own)
        aml_rollback(s);
    return -1;
}

int aml_audit_verify(aml_store *s, FILE *out, int64_t *bad_seq, aml_err *err)
{
    sqlite3_stmt *st = aml_stmt(s, "SELECT seq, at, actor, action, case_id, request_sha256, response_sha256, "
                                   "outcome, detail, prev_hash, entry_hash FROM audit_log ORDER BY seq");
    if (!st)
        return aml_errf(err, "audit log: %s", s->errmsg);
    char prev[65] = GENESIS;
    int64_t expect = 1, n = 0, bad = 0;
    const char *why = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0);
        const char *cols[11];
        for (int i = 1; i < 11; i++)
            cols[i] = sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : aml_col_text(st, i);
        char h[65];
        entry_hash(prev, seq, cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], h);
        if (seq != expect) {
            bad = expect;
            why = "rows are missing before this point (sequence gap)";
        } else if (!cols[9] || strcmp(cols[9], prev) != 0) {
            bad = seq;
            why = "prev_hash does not match the previous entry";
        } else if (!cols[10] || strcmp(cols[10], h) != 0) {
            bad = seq;
            why = "entry_hash does not match the row's contents (the row was altered)";
        }
        if (bad)
            break;
        snprintf(prev, sizeof prev, "%s", cols[10]);
        expect = seq + 1;
        n++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return aml_errf(err, "audit log: %s", sqlite3_errmsg(s->db));
    if (!bad) {
        /* Rows cut from the end leave sqlite_sequence ahead of the last row. */
        sqlite3_stmt *q = aml_stmt(s, "SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'");
        if (q && sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) >= expect) {
            bad = expect;
            why = "rows are missing at the end of the log";
        }
        if (q)
            sqlite3_reset(q);
    }
    if (bad) {
        if (out)
            fprintf(out, "audit log BROKEN at seq %lld: %s (%lld entries verified before it)\n", (long long)bad,
                    why, (long long)n);
        if (bad_seq)
            *bad_seq = bad;
        return 1;
    }
    if (out)
        fprintf(out, "audit log intact: %lld entries, head hash %s\n", (long long)n, prev);
    return 0;
}
