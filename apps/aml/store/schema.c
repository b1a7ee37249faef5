/*
 * The SQLite schema of the case store and its migrations (see store.h):
 * migration i takes PRAGMA user_version i to i + 1, in its own transaction.
 * The list is append-only: never edit a shipped migration, add the next.
 */
#include "store/store_internal.h"

#include <string.h>

/* The triggers that make table t append-only (name their prefix), raising msg; pg_schema.c has PostgreSQL's. */
#define APPEND_ONLY(t, name, msg)                                                                                  \
    "CREATE TRIGGER " name "_no_update BEFORE UPDATE ON " t "\n"                                                     \
    "  BEGIN SELECT RAISE(ABORT, '" msg "'); END;\n"                                                                \
    "CREATE TRIGGER " name "_no_delete BEFORE DELETE ON " t "\n"                                                     \
    "  BEGIN SELECT RAISE(ABORT, '" msg "'); END;\n"

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
    APPEND_ONLY("audit_log", "audit", "audit_log is append-only"),
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
        aml_st *st = aml_stmt(s, "INSERT INTO fx_rates(currency, rate_date, usd_num, usd_den, source) "
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
        aml_st *st = aml_stmt(s, "INSERT INTO jurisdiction_lists(list_name, country, effective_from, "
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

/*
 * Migration 2: operator settings (store/config.h), e.g. the filer details
 * of a FinCEN SAR (`filer.*`), with who set each one and when.
 */
static const char *const migration_2[] = {
    "CREATE TABLE settings (\n"
    "  key TEXT PRIMARY KEY, value TEXT NOT NULL,\n"
    "  set_by TEXT NOT NULL, set_at TEXT NOT NULL) WITHOUT ROWID;\n",
    NULL,
};

/*
 * Migration 3: observation coverage. Per internal account and data source,
 * the time from which the store holds the account's complete history
 * (docs/aml.md "Observation coverage"): the engine never reads time before
 * it as inactivity, and calls a counterparty new only after a warm-up of
 * observed history. `basis`: import_start (the earliest transaction of the
 * import that brought the account), first_activity (the account's own
 * first transaction in it), declared (--history-from, or a coverage record
 * of the data). A store that already holds transactions gets, for each
 * internal account, its earliest stored transaction ('migrated').
 */
static const char *const migration_3[] = {
    "CREATE TABLE coverage (\n"
    "  acct_no INTEGER NOT NULL REFERENCES accounts(acct_no),\n"
    "  source TEXT NOT NULL,\n"
    "  observed_from INTEGER NOT NULL,\n"
    "  basis TEXT NOT NULL CHECK (basis = 'import_start' OR basis = 'first_activity' OR basis = 'declared'\n"
    "    OR basis = 'migrated'),\n"
    "  PRIMARY KEY (acct_no, source)) WITHOUT ROWID;\n",
    "INSERT INTO coverage(acct_no, source, observed_from, basis)\n"
    "  SELECT x.acct, 'migrated', min(x.at), 'migrated' FROM\n"
    "  (SELECT from_acct AS acct, booked_at AS at FROM transactions WHERE from_acct IS NOT NULL\n"
    "   UNION ALL SELECT to_acct, booked_at FROM transactions WHERE to_acct IS NOT NULL) x\n"
    "  JOIN accounts a ON a.acct_no = x.acct WHERE a.is_internal = 1 GROUP BY x.acct;\n",
    /* What each scan flagged, per account and typology (and the case it went to): the alert volume
     * and its quality can be measured after the fact (eval), and an alert traced to its run. */
    "CREATE TABLE scan_matches (\n"
    "  run_id INTEGER NOT NULL REFERENCES scan_runs(run_id),\n"
    "  acct_no INTEGER NOT NULL REFERENCES accounts(acct_no),\n"
    "  typology_id TEXT NOT NULL, score INTEGER NOT NULL, case_id TEXT,\n"
    "  PRIMARY KEY (run_id, acct_no, typology_id)) WITHOUT ROWID;\n",
    NULL,
};

/*
 * Migration 4: the case workflow (engine/workflow.h). case_workflow holds
 * each case's state (open, in_review, pending_approval, closed), assignee,
 * disposition with its rationale, the SAR filed, and who requested and who
 * reviewed the closure; a case without a row is in the state its status
 * implies. case_events is the case's own append-only history of workflow
 * steps (the audit log holds them too).
 */
static const char *const migration_4[] = {
    "CREATE TABLE case_workflow (\n"
    "  case_id TEXT PRIMARY KEY REFERENCES cases(case_id),\n"
    "  state TEXT NOT NULL CHECK (state IN ('open','in_review','pending_approval','closed')),\n"
    "  assignee TEXT,\n"
    "  disposition TEXT CHECK (disposition IN ('false_positive','confirmed_suspicious','inconclusive')),\n"
    "  rationale TEXT, sar_id TEXT,\n"
    "  requested_by TEXT, requested_at TEXT,\n"
    "  reviewed_by TEXT, reviewed_at TEXT, review_comment TEXT,\n"
    "  updated_at TEXT NOT NULL) WITHOUT ROWID;\n"
    "CREATE INDEX case_workflow_state ON case_workflow(state);\n",
    "CREATE TABLE case_events (\n"
    "  event_id INTEGER PRIMARY KEY,\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,\n"
    "  from_state TEXT, to_state TEXT, detail TEXT);\n"
    "CREATE INDEX case_events_case ON case_events(case_id, event_id);\n"
    APPEND_ONLY("case_events", "case_events", "case_events is append-only"),
    NULL,
};

/*
 * Migration 5: alert suppressions (engine/suppress.h). A reviewed account
 * and typology (a pattern), or account and counterparty (a pair), found not
 * suspicious: the scan does not alert on it until the date, inclusive. Rows
 * are never changed or removed: a suppression ends by its date, and the
 * table is the record of who suppressed what, why and until when.
 */
static const char *const migration_5[] = {
    "CREATE TABLE suppressions (\n"
    "  suppression_id INTEGER PRIMARY KEY,\n"
    "  acct_no INTEGER NOT NULL REFERENCES accounts(acct_no),\n"
    "  counterparty_acct INTEGER REFERENCES accounts(acct_no),\n"
    "  typology_id TEXT,\n"
    "  until TEXT NOT NULL, reason TEXT NOT NULL,\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  created_by TEXT NOT NULL, created_at TEXT NOT NULL,\n"
    "  CHECK (counterparty_acct IS NOT NULL OR typology_id IS NOT NULL));\n"
    "CREATE INDEX suppressions_acct ON suppressions(acct_no, until);\n"
    APPEND_ONLY("suppressions", "suppressions", "suppressions are append-only"),
    NULL,
};

/*
 * Migration 6: sanctions and PEP screening lists (docs/aml.md,
 * "Screening"). A list holds the entities of its newest version only
 * (an import replaces them); every version loaded stays in
 * screening_list_versions with the file's digest. Entities keep their
 * FollowTheMoney properties as JSON. A reviewed false hit (subject x
 * entity) is remembered in screening_dismissals so it is not raised
 * again; the audit log records the same with who and why. screenCase
 * keeps its hits per case in screening_findings with their evidence
 * (the explained result).
 */
static const char *const migration_6[] = {
    "CREATE TABLE screening_list_versions (\n"
    "  version_id INTEGER PRIMARY KEY,\n"
    "  list_name TEXT NOT NULL,\n"
    "  format TEXT NOT NULL CHECK (format IN ('ftm','csv')),\n"
    "  source_name TEXT NOT NULL,\n"
    "  file_sha256 TEXT NOT NULL,\n"
    "  loaded_at TEXT NOT NULL,\n"
    "  entities INTEGER NOT NULL,\n"
    "  skipped INTEGER NOT NULL\n"
    ");\n",
    "CREATE INDEX screening_list_versions_name ON screening_list_versions(list_name, version_id);\n",
    "CREATE TABLE screening_entities (\n"
    "  entity_no INTEGER PRIMARY KEY,\n"
    "  list_name TEXT NOT NULL,\n"
    "  entity_id TEXT NOT NULL,\n"
    "  schema TEXT NOT NULL,\n"
    "  caption TEXT NOT NULL,\n"
    "  properties TEXT NOT NULL,\n"
    "  version_id INTEGER NOT NULL REFERENCES screening_list_versions(version_id),\n"
    "  UNIQUE (list_name, entity_id)\n"
    ");\n",
    "CREATE TABLE screening_dismissals (\n"
    "  dismissal_id INTEGER PRIMARY KEY,\n"
    "  subject TEXT NOT NULL,\n"
    "  list_name TEXT NOT NULL,\n"
    "  entity_id TEXT NOT NULL,\n"
    "  actor TEXT NOT NULL,\n"
    "  reason TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL,\n"
    "  UNIQUE (subject, list_name, entity_id)\n"
    ");\n",
    "CREATE TABLE screening_findings (\n"
    "  finding_id INTEGER PRIMARY KEY,\n"
    "  case_id TEXT NOT NULL REFERENCES cases(case_id),\n"
    "  subject TEXT NOT NULL,\n"
    "  subject_name TEXT NOT NULL,\n"
    "  list_name TEXT NOT NULL,\n"
    "  entity_id TEXT NOT NULL,\n"
    "  score REAL NOT NULL,\n"
    "  evidence TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL,\n"
    "  created_by TEXT NOT NULL,\n"
    "  UNIQUE (case_id, subject, list_name, entity_id)\n"
    ");\n",
    NULL,
};

/*
 * Migration 7: a scan in account batches (docs/aml.md, "Parallel and
 * distributed scans"). A scan job fixes its window, its high-water marks
 * and its accounts, split into batches; threads (--jobs) and processes
 * (--worker) claim batches with a lease (claimed_by, lease_until: unix
 * seconds of the database's clock; attempts fences a late finisher whose
 * lease was taken over), evaluate them and keep each batch's matches
 * (scan_batch_matches: typology mask, scores, linked accounts) with the
 * batch marked done in one transaction. A cancelled or killed scan keeps
 * its finished batches: the next scan of the window resumes the job. Once
 * every batch is done one process makes the cases from all the matches in
 * account order, records the scan_runs row and marks the job done.
 */
static const char *const migration_7[] = {
    "CREATE TABLE scan_jobs (\n"
    "  job_id INTEGER PRIMARY KEY,\n"
    "  window_from INTEGER NOT NULL, window_to INTEGER NOT NULL,\n"
    "  since_txn_no INTEGER NOT NULL, max_txn_no INTEGER NOT NULL,\n"
    "  detection_date TEXT NOT NULL,\n"
    "  state TEXT NOT NULL CHECK (state IN ('running','done')),\n"
    "  batches INTEGER NOT NULL, accounts INTEGER NOT NULL,\n"
    "  created_at TEXT NOT NULL, finished_at TEXT,\n"
    "  run_id INTEGER REFERENCES scan_runs(run_id)\n"
    ");\n"
    "CREATE UNIQUE INDEX scan_jobs_running ON scan_jobs(window_from, window_to) WHERE state = 'running';\n",
    "CREATE TABLE scan_batches (\n"
    "  job_id INTEGER NOT NULL REFERENCES scan_jobs(job_id),\n"
    "  batch_no INTEGER NOT NULL,\n"
    "  accounts TEXT NOT NULL,\n"
    "  n_accounts INTEGER NOT NULL,\n"
    "  state TEXT NOT NULL CHECK (state IN ('pending','claimed','done')),\n"
    "  claimed_by TEXT, lease_until INTEGER, attempts INTEGER NOT NULL DEFAULT 0,\n"
    "  accounts_evaluated INTEGER, accounts_matched INTEGER, finished_at TEXT,\n"
    "  PRIMARY KEY (job_id, batch_no)\n"
    ");\n",
    "CREATE TABLE scan_batch_matches (\n"
    "  job_id INTEGER NOT NULL REFERENCES scan_jobs(job_id),\n"
    "  acct_no INTEGER NOT NULL,\n"
    "  batch_no INTEGER NOT NULL,\n"
    "  mask INTEGER NOT NULL, scores TEXT NOT NULL, links TEXT NOT NULL,\n"
    "  PRIMARY KEY (job_id, acct_no)\n"
    ");\n",
    NULL,
};

typedef struct migration {
    const char *const *sql;                  /* DDL statements, NULL-terminated */
    int (*seed)(aml_store *s, aml_err *err); /* data, or NULL */
} migration;

/* migrations[i] takes user_version i to i + 1. Append only; never edit a shipped one. */
static const migration migrations[AML_SCHEMA_VERSION] = {
    {migration_1, seed_1},
    {migration_2, NULL},
    {migration_3, NULL},
    {migration_4, NULL},
    {migration_5, NULL},
    {migration_6, NULL},
    {migration_7, NULL},
};

int aml_store_seed(aml_store *s, int version, aml_err *err)
{
    if (version < 1 || version > AML_SCHEMA_VERSION)
        return aml_errf(err, "no schema version %d", version);
    const migration *m = &migrations[version - 1];
    return m->seed ? m->seed(s, err) : 0;
}

int aml_store_migrate(aml_store *s, int64_t from, aml_err *err)
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
            aml_store_finalize_all(s); /* statements may reference tables the rollback removed */
            return aml_errf(err, "schema migration %d -> %d failed: %s", (int)v, (int)(v + 1), why);
        }
        if (aml_commit(s, err))
            return -1;
    }
    return 0;
}
