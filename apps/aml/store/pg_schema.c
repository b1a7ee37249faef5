/*
 * The PostgreSQL schema of the case store: the migrations of schema.c, same
 * numbers, as PostgreSQL DDL, and how a database is recognised, checked and
 * upgraded (see pg_conn.h and docs/aml.md, "PostgreSQL").
 *
 * Types are chosen so that every query returns the same bytes as on SQLite:
 *  - every INTEGER is bigint, REAL is double precision;
 *  - every text column is text COLLATE "C": comparisons and ORDER BY are
 *    byte order (memcmp), as SQLite's BINARY collation, whatever the
 *    database's locale (a database created with --locale=C or
 *    LC_COLLATE 'C' also gets computed text expressions right);
 *  - an INTEGER PRIMARY KEY takes, when inserted without a value, the
 *    largest key + 1 as SQLite gives a rowid (trigger aml_rowid, under a
 *    per-table advisory transaction lock so concurrent writers do not take
 *    the same number); RETURNING reads it back;
 *  - SQLite's append-only triggers (RAISE(ABORT, ...)) are trigger function
 *    aml_append_only with the same messages, and also refuse TRUNCATE;
 *  - no REFERENCES: SQLite runs with foreign_keys = OFF (store.c), so the
 *    references schema.c declares are documentation there and are not
 *    enforced here either (same accepted data; COPY without a trigger per
 *    row and reference);
 *  - AUTOINCREMENT's high-water mark of the audit log (sqlite_sequence) is
 *    the table audit_head, written in the same transaction as each entry.
 *
 * The database is ours when the table aml_schema (one row: application_id
 * 0x414d4c31 and the schema version, PostgreSQL having no user_version)
 * exists in the current schema. An empty schema is set up; one holding
 * anybody else's tables is refused untouched. Each migration runs in its
 * own transaction holding pg_advisory_xact_lock(AML_PG_LOCK_MIGRATE) and
 * re-reads the version under the lock, so servers starting together on a
 * fresh database run each migration once.
 */
#include "store/pg_conn.h"
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#define T "text COLLATE \"C\""
#define I "bigint"

/* Functions the schema's triggers use. */
static const char pg_functions[] =
    "CREATE FUNCTION aml_append_only() RETURNS trigger LANGUAGE plpgsql AS $f$\n"
    "BEGIN RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = 'restrict_violation'; END $f$;\n"
    "CREATE FUNCTION aml_rowid() RETURNS trigger LANGUAGE plpgsql AS $f$\n"
    "DECLARE next bigint;\n"
    "BEGIN\n"
    "  PERFORM pg_advisory_xact_lock(1095586865, hashtext(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME));\n"
    "  EXECUTE format('SELECT coalesce(max(%I), 0) + 1 FROM %I.%I', TG_ARGV[0], TG_TABLE_SCHEMA, TG_TABLE_NAME)\n"
    "    INTO next;\n"
    "  NEW := jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[0], next));\n"
    "  RETURN NEW;\n"
    "END $f$;\n";

/* The rowid trigger of table t, key column k. */
#define ROWID(t, k)                                                                                                \
    "CREATE TRIGGER " t "_rowid BEFORE INSERT ON " t " FOR EACH ROW WHEN (NEW." k " IS NULL)\n"                   \
    "  EXECUTE FUNCTION aml_rowid('" k "');\n"

/* The append-only triggers of table t, raising msg. */
#define APPEND_ONLY(t, name, msg)                                                                                  \
    "CREATE TRIGGER " name "_no_update BEFORE UPDATE ON " t " FOR EACH ROW EXECUTE FUNCTION aml_append_only('" msg \
    "');\n"                                                                                                        \
    "CREATE TRIGGER " name "_no_delete BEFORE DELETE ON " t " FOR EACH ROW EXECUTE FUNCTION aml_append_only('" msg \
    "');\n"                                                                                                        \
    "CREATE TRIGGER " name "_no_truncate BEFORE TRUNCATE ON " t                                                    \
    " FOR EACH STATEMENT EXECUTE FUNCTION aml_append_only('" msg "');\n"

/* Migration 1 (schema.c has the commentary). */
static const char *const pg_migration_1[] = {
    pg_functions,
    "CREATE TABLE meta (key " T " PRIMARY KEY, value " T " NOT NULL);\n",
    "CREATE TABLE customers (\n"
    "  customer_id " T " PRIMARY KEY,\n"
    "  customer_type " T " NOT NULL CHECK (customer_type IN ('individual','entity')),\n"
    "  full_name " T " NOT NULL,\n"
    "  first_name " T ", last_name " T ", date_of_birth " T ", country " T ",\n"
    "  occupation " T ", naics_code " T ",\n"
    "  address_line " T ", city " T ", region " T ", postal_code " T ",\n"
    "  risk_rating " T " CHECK (risk_rating IN ('low','medium','high')),\n"
    "  pep " I " NOT NULL DEFAULT 0,\n"
    "  onboarded_at " T ",\n"
    "  cash_intensive " I " NOT NULL DEFAULT 0,\n"
    "  expected_monthly_cash_minor " I ",\n"
    "  expected_monthly_volume_minor " I ",\n"
    "  declared_annual_income_minor " I ",\n"
    "  source_dataset " T ");\n",
    "CREATE TABLE accounts (\n"
    "  acct_no " I " PRIMARY KEY,\n"
    "  account_id " T " NOT NULL UNIQUE,\n"
    "  is_internal " I " NOT NULL DEFAULT 1,\n"
    "  bank_id " T ", institution_name " T ", account_type " T ",\n"
    "  currency " T " NOT NULL DEFAULT 'USD',\n"
    "  status " T " NOT NULL DEFAULT 'active' CHECK (status IN ('active','dormant','closed')),\n"
    "  opened_at " T ", closed_at " T ",\n"
    "  opening_deposit_minor " I ",\n"
    "  home_branch_id " T ", home_region " T ", country " T ",\n"
    "  holder_name " T ");\n"
    "CREATE INDEX accounts_country ON accounts(country);\n" ROWID("accounts", "acct_no"),
    "CREATE TABLE account_parties (\n"
    "  acct_no " I " NOT NULL,\n"
    "  customer_id " T " NOT NULL,\n"
    "  role " T " NOT NULL CHECK (role IN ('primary','joint','signatory','beneficial_owner')),\n"
    "  PRIMARY KEY (acct_no, customer_id, role));\n"
    "CREATE INDEX account_parties_customer ON account_parties(customer_id);\n",
    "CREATE TABLE transactions (\n"
    "  txn_no " I " PRIMARY KEY,\n"
    "  txn_ref " T ",\n"
    "  booked_at " I " NOT NULL,\n"
    "  time_precision " T " NOT NULL DEFAULT 'second'\n"
    "    CHECK (time_precision = 'second' OR time_precision = 'minute' OR time_precision = 'day'),\n"
    "  from_acct " I ",\n"
    "  to_acct " I ",\n"
    "  amount_minor " I " NOT NULL CHECK (amount_minor >= 0),\n"
    "  currency " T " NOT NULL,\n"
    "  amount_base_minor " I " NOT NULL CHECK (amount_base_minor >= 0),\n"
    "  amount_received_minor " I ", currency_received " T ",\n"
    "  channel " T " NOT NULL CHECK (channel IN ('cash','wire','ach','check','card','internal','crypto','other')),\n"
    "  txn_type " T ", conductor_id " T ",\n"
    "  location_id " T ", location_region " T ", location_country " T ",\n"
    "  counterparty_name " T ", memo " T ",\n"
    "  gt_is_laundering " I ", gt_label " T ", gt_attempt_id " T ",\n"
    "  CHECK (from_acct IS NOT NULL OR to_acct IS NOT NULL));\n"
    "CREATE INDEX tx_from ON transactions(from_acct, booked_at, to_acct, amount_base_minor, channel);\n"
    "CREATE INDEX tx_to ON transactions(to_acct, booked_at, from_acct, amount_base_minor, channel);\n"
    "CREATE UNIQUE INDEX tx_ref ON transactions(txn_ref) WHERE txn_ref IS NOT NULL;\n" ROWID("transactions",
                                                                                              "txn_no"),
    "CREATE TABLE fx_rates (\n"
    "  currency " T " NOT NULL, rate_date " T " NOT NULL,\n"
    "  usd_num " I " NOT NULL CHECK (usd_num > 0), usd_den " I " NOT NULL CHECK (usd_den > 0),\n"
    "  source " T ", PRIMARY KEY (currency, rate_date));\n",
    "CREATE TABLE jurisdiction_lists (\n"
    "  list_name " T " NOT NULL CHECK (list_name IN ('fatf_call_for_action','fatf_increased_monitoring','internal')),\n"
    "  country " T " NOT NULL, effective_from " T " NOT NULL, effective_to " T ", source_url " T ",\n"
    "  PRIMARY KEY (list_name, country, effective_from));\n",
    "CREATE TABLE trade_documents (\n"
    "  doc_id " T " PRIMARY KEY, txn_no " I " NOT NULL,\n"
    "  buyer_name " T ", seller_name " T ",\n"
    "  invoice_amount_minor " I " NOT NULL CHECK (invoice_amount_minor >= 0), currency " T " NOT NULL,\n"
    "  goods_description " T ", hs_code " T ", origin_country " T ", destination_country " T ");\n"
    "CREATE INDEX trade_documents_txn ON trade_documents(txn_no);\n",
    "CREATE TABLE cases (\n"
    "  case_id " T " PRIMARY KEY,\n"
    "  title " T " NOT NULL,\n"
    "  status " T " NOT NULL DEFAULT 'open'\n"
    "    CHECK (status IN ('open','in_review','escalated','closed_no_action','sar_filed')),\n"
    "  priority " T " CHECK (priority IN ('low','normal','high','urgent')),\n"
    "  origin " T " CHECK (origin IN ('alert','manual','referral','fixture','scan')),\n"
    "  opened_at " T " NOT NULL,\n"
    "  detection_date " T ",\n"
    "  window_from " I " NOT NULL, window_to " I " NOT NULL,\n"
    "  risk_level " T " CHECK (risk_level IN ('low','medium','high')),\n"
    "  case_score " I ",\n"
    "  last_assessment_id " T ");\n",
    "CREATE TABLE case_accounts (\n"
    "  case_id " T " NOT NULL,\n"
    "  acct_no " I " NOT NULL,\n"
    "  PRIMARY KEY (case_id, acct_no));\n"
    "CREATE INDEX case_accounts_acct ON case_accounts(acct_no);\n",
    "CREATE TABLE case_typologies (\n"
    "  case_id " T " NOT NULL, typology_id " T " NOT NULL,\n"
    "  score " I " NOT NULL, PRIMARY KEY (case_id, typology_id));\n"
    "CREATE INDEX case_typologies_typology ON case_typologies(typology_id);\n",
    "CREATE TABLE gt_instances (\n"
    "  instance_id " T " PRIMARY KEY, typology_id " T " NOT NULL,\n"
    "  kind " T " NOT NULL CHECK (kind IN ('injected','lookalike')),\n"
    "  variant " T ", case_id " T ", overlap " T " NOT NULL DEFAULT '');\n",
    "CREATE TABLE gt_accounts (\n"
    "  instance_id " T " NOT NULL, acct_no " I " NOT NULL,\n"
    "  PRIMARY KEY (instance_id, acct_no));\n",
    "CREATE TABLE assessments (\n"
    "  assessment_id " T " PRIMARY KEY,\n"
    "  case_id " T " NOT NULL,\n"
    "  kind " T " NOT NULL CHECK (kind IN ('typology','case')),\n"
    "  requested_typologies " T " NOT NULL,\n"
    "  engine_version " T " NOT NULL, catalog_version " T " NOT NULL,\n"
    "  params_sha256 " T " NOT NULL, data_sha256 " T " NOT NULL,\n"
    "  window_from " T " NOT NULL, window_to " T " NOT NULL,\n"
    "  created_at " T " NOT NULL, requested_by " T ",\n"
    "  outcome " T " NOT NULL CHECK (outcome IN ('typologies_matched','no_typology_matched',"
    "'partial_not_evaluable')),\n"
    "  case_score " I " NOT NULL, risk_level " T " NOT NULL,\n"
    "  result_json " T " NOT NULL);\n"
    "CREATE INDEX assessments_case ON assessments(case_id);\n",
    "CREATE TABLE assessment_findings (\n"
    "  assessment_id " T " NOT NULL,\n"
    "  typology_id " T " NOT NULL,\n"
    "  status " T " NOT NULL CHECK (status IN ('matched','not_matched','not_evaluable')),\n"
    "  score " I " NOT NULL, explanation " T " NOT NULL,\n"
    "  metrics_json " T " NOT NULL, params_json " T " NOT NULL,\n"
    "  PRIMARY KEY (assessment_id, typology_id));\n",
    "CREATE TABLE finding_evidence (\n"
    "  assessment_id " T " NOT NULL, typology_id " T " NOT NULL,\n"
    "  txn_no " I " NOT NULL,\n"
    "  ordinal " I " NOT NULL, role " T " NOT NULL CHECK (role IN ('trigger','context')),\n"
    "  PRIMARY KEY (assessment_id, typology_id, txn_no));\n",
    "CREATE TABLE sar_drafts (\n"
    "  sar_draft_id " T " PRIMARY KEY,\n"
    "  case_id " T " NOT NULL,\n"
    "  assessment_id " T " NOT NULL,\n"
    "  version " I " NOT NULL,\n"
    "  filing_type " T " NOT NULL CHECK (filing_type IN ('initial','continuing','correct_amend','joint')),\n"
    "  prior_bsa_id " T ",\n"
    "  status " T " NOT NULL DEFAULT 'draft'\n"
    "    CHECK (status IN ('draft','in_review','approved','rejected','superseded','not_warranted')),\n"
    "  amount_involved_usd " I ", activity_from " T ", activity_to " T ", cumulative_amount_usd " I ",\n"
    "  categories_json " T " NOT NULL, narrative_text " T " NOT NULL, narrative_json " T " NOT NULL,\n"
    "  attachment_csv " T ", filing_due_date " T ",\n"
    "  created_at " T " NOT NULL, created_by " T ", reviewed_by " T ", review_notes " T ",\n"
    "  result_json " T " NOT NULL);\n"
    "CREATE INDEX sar_drafts_case ON sar_drafts(case_id, version);\n",
    "CREATE TABLE scan_runs (\n"
    "  run_id " I " PRIMARY KEY,\n"
    "  window_from " I " NOT NULL, window_to " I " NOT NULL,\n"
    "  max_txn_no " I " NOT NULL, started_at " T " NOT NULL, detection_date " T " NOT NULL,\n"
    "  accounts_evaluated " I " NOT NULL, accounts_matched " I " NOT NULL,\n"
    "  cases_opened " I " NOT NULL, cases_updated " I " NOT NULL);\n" ROWID("scan_runs", "run_id"),
    "CREATE TABLE audit_log (\n"
    "  seq " I " PRIMARY KEY,\n"
    "  at " T " NOT NULL, actor " T " NOT NULL, action " T " NOT NULL, case_id " T ",\n"
    "  object_type " T ", object_id " T ",\n"
    "  request_sha256 " T " NOT NULL, response_sha256 " T ",\n"
    "  outcome " T " NOT NULL CHECK (outcome IN ('ok','error','denied')),\n"
    "  detail " T ", prev_hash " T " NOT NULL, entry_hash " T " NOT NULL);\n"
    /* AUTOINCREMENT's sqlite_sequence row for the audit log. */
    "CREATE TABLE audit_head (\n"
    "  single boolean PRIMARY KEY DEFAULT true CHECK (single), seq " I " NOT NULL);\n" APPEND_ONLY(
        "audit_log", "audit", "audit_log is append-only"),
    NULL,
};

static const char *const pg_migration_2[] = {
    "CREATE TABLE settings (\n"
    "  key " T " PRIMARY KEY, value " T " NOT NULL,\n"
    "  set_by " T " NOT NULL, set_at " T " NOT NULL);\n",
    NULL,
};

static const char *const pg_migration_3[] = {
    "CREATE TABLE coverage (\n"
    "  acct_no " I " NOT NULL,\n"
    "  source " T " NOT NULL,\n"
    "  observed_from " I " NOT NULL,\n"
    "  basis " T " NOT NULL CHECK (basis IN ('import_start','first_activity','declared','migrated')),\n"
    "  PRIMARY KEY (acct_no, source));\n",
    "INSERT INTO coverage(acct_no, source, observed_from, basis)\n"
    "  SELECT x.acct, 'migrated', min(x.at), 'migrated' FROM\n"
    "  (SELECT from_acct AS acct, booked_at AS at FROM transactions WHERE from_acct IS NOT NULL\n"
    "   UNION ALL SELECT to_acct, booked_at FROM transactions WHERE to_acct IS NOT NULL) x\n"
    "  JOIN accounts a ON a.acct_no = x.acct WHERE a.is_internal = 1 GROUP BY x.acct;\n",
    "CREATE TABLE scan_matches (\n"
    "  run_id " I " NOT NULL,\n"
    "  acct_no " I " NOT NULL,\n"
    "  typology_id " T " NOT NULL, score " I " NOT NULL, case_id " T ",\n"
    "  PRIMARY KEY (run_id, acct_no, typology_id));\n",
    NULL,
};

static const char *const pg_migration_4[] = {
    "CREATE TABLE case_workflow (\n"
    "  case_id " T " PRIMARY KEY,\n"
    "  state " T " NOT NULL CHECK (state IN ('open','in_review','pending_approval','closed')),\n"
    "  assignee " T ",\n"
    "  disposition " T " CHECK (disposition IN ('false_positive','confirmed_suspicious','inconclusive')),\n"
    "  rationale " T ", sar_id " T ",\n"
    "  requested_by " T ", requested_at " T ",\n"
    "  reviewed_by " T ", reviewed_at " T ", review_comment " T ",\n"
    "  updated_at " T " NOT NULL);\n"
    "CREATE INDEX case_workflow_state ON case_workflow(state);\n",
    "CREATE TABLE case_events (\n"
    "  event_id " I " PRIMARY KEY,\n"
    "  case_id " T " NOT NULL,\n"
    "  at " T " NOT NULL, actor " T " NOT NULL, action " T " NOT NULL,\n"
    "  from_state " T ", to_state " T ", detail " T ");\n"
    "CREATE INDEX case_events_case ON case_events(case_id, event_id);\n" ROWID("case_events", "event_id")
        APPEND_ONLY("case_events", "case_events", "case_events is append-only"),
    NULL,
};

static const char *const pg_migration_5[] = {
    "CREATE TABLE suppressions (\n"
    "  suppression_id " I " PRIMARY KEY,\n"
    "  acct_no " I " NOT NULL,\n"
    "  counterparty_acct " I ",\n"
    "  typology_id " T ",\n"
    "  until " T " NOT NULL, reason " T " NOT NULL,\n"
    "  case_id " T " NOT NULL,\n"
    "  created_by " T " NOT NULL, created_at " T " NOT NULL,\n"
    "  CHECK (counterparty_acct IS NOT NULL OR typology_id IS NOT NULL));\n"
    "CREATE INDEX suppressions_acct ON suppressions(acct_no, until);\n" ROWID("suppressions", "suppression_id")
        APPEND_ONLY("suppressions", "suppressions", "suppressions are append-only"),
    NULL,
};

static const char *const pg_migration_6[] = {
    "CREATE TABLE screening_list_versions (\n"
    "  version_id " I " PRIMARY KEY,\n"
    "  list_name " T " NOT NULL,\n"
    "  format " T " NOT NULL CHECK (format IN ('ftm','csv')),\n"
    "  source_name " T " NOT NULL,\n"
    "  file_sha256 " T " NOT NULL,\n"
    "  loaded_at " T " NOT NULL,\n"
    "  entities " I " NOT NULL,\n"
    "  skipped " I " NOT NULL);\n" ROWID("screening_list_versions", "version_id"),
    "CREATE INDEX screening_list_versions_name ON screening_list_versions(list_name, version_id);\n",
    "CREATE TABLE screening_entities (\n"
    "  entity_no " I " PRIMARY KEY,\n"
    "  list_name " T " NOT NULL,\n"
    "  entity_id " T " NOT NULL,\n"
    "  schema " T " NOT NULL,\n"
    "  caption " T " NOT NULL,\n"
    "  properties " T " NOT NULL,\n"
    "  version_id " I " NOT NULL,\n"
    "  UNIQUE (list_name, entity_id));\n" ROWID("screening_entities", "entity_no"),
    "CREATE TABLE screening_dismissals (\n"
    "  dismissal_id " I " PRIMARY KEY,\n"
    "  subject " T " NOT NULL,\n"
    "  list_name " T " NOT NULL,\n"
    "  entity_id " T " NOT NULL,\n"
    "  actor " T " NOT NULL,\n"
    "  reason " T " NOT NULL,\n"
    "  created_at " T " NOT NULL,\n"
    "  UNIQUE (subject, list_name, entity_id));\n" ROWID("screening_dismissals", "dismissal_id"),
    "CREATE TABLE screening_findings (\n"
    "  finding_id " I " PRIMARY KEY,\n"
    "  case_id " T " NOT NULL,\n"
    "  subject " T " NOT NULL,\n"
    "  subject_name " T " NOT NULL,\n"
    "  list_name " T " NOT NULL,\n"
    "  entity_id " T " NOT NULL,\n"
    "  score double precision NOT NULL,\n"
    "  evidence " T " NOT NULL,\n"
    "  created_at " T " NOT NULL,\n"
    "  created_by " T " NOT NULL,\n"
    "  UNIQUE (case_id, subject, list_name, entity_id));\n" ROWID("screening_findings", "finding_id"),
    NULL,
};

/* Migration 7: the scan's jobs and batches (schema.c). */
static const char *const pg_migration_7[] = {
    "CREATE TABLE scan_jobs (\n"
    "  job_id " I " PRIMARY KEY,\n"
    "  window_from " I " NOT NULL, window_to " I " NOT NULL,\n"
    "  since_txn_no " I " NOT NULL, max_txn_no " I " NOT NULL,\n"
    "  detection_date " T " NOT NULL,\n"
    "  state " T " NOT NULL CHECK (state IN ('running','done')),\n"
    "  batches " I " NOT NULL, accounts " I " NOT NULL,\n"
    "  created_at " T " NOT NULL, finished_at " T ",\n"
    "  run_id " I ");\n" ROWID("scan_jobs", "job_id")
    "CREATE UNIQUE INDEX scan_jobs_running ON scan_jobs(window_from, window_to) WHERE state = 'running';\n",
    "CREATE TABLE scan_batches (\n"
    "  job_id " I " NOT NULL,\n"
    "  batch_no " I " NOT NULL,\n"
    "  accounts " T " NOT NULL,\n"
    "  n_accounts " I " NOT NULL,\n"
    "  state " T " NOT NULL CHECK (state IN ('pending','claimed','done')),\n"
    "  claimed_by " T ", lease_until " I ", attempts " I " NOT NULL DEFAULT 0,\n"
    "  accounts_evaluated " I ", accounts_matched " I ", finished_at " T ",\n"
    "  PRIMARY KEY (job_id, batch_no));\n",
    "CREATE TABLE scan_batch_matches (\n"
    "  job_id " I " NOT NULL,\n"
    "  acct_no " I " NOT NULL,\n"
    "  batch_no " I " NOT NULL,\n"
    "  mask " I " NOT NULL, scores " T " NOT NULL, links " T " NOT NULL,\n"
    "  PRIMARY KEY (job_id, acct_no));\n",
    NULL,
};

/* pg_migrations[i] takes version i to i + 1, as schema.c's migrations[i]. Append only. */
static const char *const *const pg_migrations[AML_SCHEMA_VERSION] = {
    pg_migration_1, pg_migration_2, pg_migration_3, pg_migration_4, pg_migration_5, pg_migration_6,
    pg_migration_7,
};

/*
 * A bulk load's rowid triggers and the primary key of transactions: dropped while it gives every key (COPY
 * inserts row by row, not in batches, into a table with a BEFORE ROW trigger; and one index entry a row, with
 * its WAL record, cost more of COPY's time than the tuple itself), created again before its commit
 * (aml_pg_bulk_keys): the key's index by one sort, which checks again that the keys are unique.
 */
static const char *const bulk_keys_sql[2] = {
    "ALTER TABLE transactions ADD CONSTRAINT transactions_pkey PRIMARY KEY (txn_no);\n" ROWID(
        "transactions", "txn_no") ROWID("accounts", "acct_no"),
    "DROP TRIGGER transactions_rowid ON transactions; DROP TRIGGER accounts_rowid ON accounts;\n"
    "ALTER TABLE transactions DROP CONSTRAINT transactions_pkey",
};

int aml_pg_bulk_keys(aml_pg *pg, int given)
{
    return aml_pg_exec(pg, bulk_keys_sql[given ? 1 : 0]);
}

/* ---- opening ------------------------------------------------------------- */

/* What the current schema holds. */
typedef struct pg_probe {
    int ours;          /* aml_schema exists */
    int64_t tables;    /* relations in the current schema */
    int64_t app;       /* aml_schema.application_id */
    int64_t version;   /* aml_schema.version */
    char schema[64];   /* current_schema() */
} pg_probe;

static const char probe_sql[] =
    "SELECT current_schema(),\n"
    "  to_regclass(quote_ident(current_schema()) || '.aml_schema') IS NOT NULL,\n"
    "  (SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n"
    "   WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f'))";

static int probe(aml_pg *pg, pg_probe *p, aml_err *err)
{
    memset(p, 0, sizeof *p);
    PGconn *c = aml_pg_conn(pg);
    PGresult *r = PQexec(c, probe_sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        aml_errf(err, "%s: not a usable case store: %s", aml_pg_name(pg), PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    if (PQgetisnull(r, 0, 0)) {
        PQclear(r);
        return aml_errf(err, "%s: no schema to use (search_path names none that exists)", aml_pg_name(pg));
    }
    snprintf(p->schema, sizeof p->schema, "%s", PQgetvalue(r, 0, 0));
    p->ours = *PQgetvalue(r, 0, 1) == 't';
    p->tables = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
    PQclear(r);
    if (!p->ours)
        return 0;
    r = PQexec(c, "SELECT application_id, version FROM aml_schema");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        aml_errf(err, "%s: the case store's aml_schema table is damaged", aml_pg_name(pg));
        PQclear(r);
        return -1;
    }
    p->app = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    p->version = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    return 0;
}

/* A stranger's database, or a newer schema, is refused untouched. */
static int judge(aml_pg *pg, const pg_probe *p, unsigned flags, aml_err *err)
{
    const char *name = aml_pg_name(pg);
    if (!p->ours && p->tables)
        return aml_errf(err, "%s: is a PostgreSQL database but not an mcp-server-aml case store (schema \"%s\" "
                             "holds %lld tables of something else); refusing to touch it",
                        name, p->schema, (long long)p->tables);
    if (p->ours && p->app != AML_APPLICATION_ID)
        return aml_errf(err, "%s: aml_schema names application %lld, not mcp-server-aml; refusing to touch it", name,
                        (long long)p->app);
    if (p->version > AML_SCHEMA_VERSION)
        return aml_errf(err, "%s: case store schema version %lld was written by a newer mcp-server-aml "
                             "(this one knows up to %d)",
                        name, (long long)p->version, AML_SCHEMA_VERSION);
    if (p->version < AML_SCHEMA_VERSION && (flags & AML_OPEN_READONLY))
        return aml_errf(err, "%s: case store schema version %lld needs an upgrade to %d; open it writable once", name,
                        (long long)p->version, AML_SCHEMA_VERSION);
    return 0;
}

static int exec_all(aml_pg *pg, const char *const *sql)
{
    for (size_t k = 0; sql[k]; k++)
        if (aml_pg_exec(pg, sql[k]))
            return -1;
    return 0;
}

static int set_version(aml_pg *pg, int64_t v)
{
    char sql[160];
    if (v == 1)
        snprintf(sql, sizeof sql,
                 "CREATE TABLE aml_schema (single boolean PRIMARY KEY DEFAULT true CHECK (single), "
                 "application_id bigint NOT NULL, version bigint NOT NULL)");
    else
        snprintf(sql, sizeof sql, "UPDATE aml_schema SET version = %lld", (long long)v);
    if (aml_pg_exec(pg, sql))
        return -1;
    if (v != 1)
        return 0;
    snprintf(sql, sizeof sql, "INSERT INTO aml_schema(application_id, version) VALUES (%d, 1)", AML_APPLICATION_ID);
    return aml_pg_exec(pg, sql);
}

/* One migration under the lock; skipped when another server ran it meanwhile. */
static int migrate_one(aml_pg *pg, int64_t v, unsigned flags, aml_pg_seed_fn seed, void *ud, aml_err *err)
{
    pg_probe p;
    char lock[80];
    snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%lld)", (long long)AML_PG_LOCK_MIGRATE);
    if (aml_pg_begin(pg) || aml_pg_exec(pg, lock))
        goto fail;
    if (probe(pg, &p, err) || judge(pg, &p, flags, err)) {
        aml_pg_rollback(pg);
        return -1;
    }
    if (p.version > v) {
        aml_pg_rollback(pg);
        return 0;
    }
    if (!pg_migrations[v]) {
        aml_pg_rollback(pg);
        return aml_errf(err, "%s: schema migration %d -> %d has no PostgreSQL text (pg_schema.c)", aml_pg_name(pg),
                        (int)v, (int)(v + 1));
    }
    if (exec_all(pg, pg_migrations[v]) || set_version(pg, v + 1))
        goto fail;
    if (seed && seed(ud, (int)(v + 1), err)) {
        aml_pg_rollback(pg);
        return aml_errf(err, "%s: schema migration %d -> %d failed: %s", aml_pg_name(pg), (int)v, (int)(v + 1),
                        err ? err->msg : "");
    }
    if (aml_pg_commit(pg))
        goto fail;
    return 0;
fail:;
    char why[400];
    snprintf(why, sizeof why, "%s", aml_pg_errmsg(pg));
    aml_pg_rollback(pg);
    return aml_errf(err, "%s: schema migration %d -> %d failed: %s", aml_pg_name(pg), (int)v, (int)(v + 1), why);
}

int aml_pg_schema_open(aml_pg *pg, unsigned flags, aml_pg_seed_fn seed, void *ud, aml_err *err)
{
    pg_probe p;
    if (probe(pg, &p, err) || judge(pg, &p, flags, err))
        return -1;
    for (int64_t v = p.version; v < AML_SCHEMA_VERSION; v++)
        if (migrate_one(pg, v, flags, seed, ud, err))
            return -1;
    return 0;
}
