/*
 * mcp-server-aml: the command line. Serving is the default; the
 * subcommands build and inspect case stores.
 *
 *   mcp-server-aml [--db FILE] [--http [HOST:]PORT] [--metrics [HOST:]PORT] [--transcript FILE] [--actor NAME] [--pool N]
 *                  [--import-dir DIR]
 *   mcp-server-aml import --db FILE --format native|amlworld|amlsim [--skip-bad-rows] [--history-from DATE|first-activity] PATH...
 *   mcp-server-aml gen [--seed N] [--customers N] [--days N] [--inject T01,...] [--instances N]
 *                      [--lookalikes N] [--start DATE] [--format native|amlworld] (--out FILE | --db FILE)
 *   mcp-server-aml scan [--db FILE|URI] [--from DATE] [--to DATE] [--detected DATE] [--jobs N] [--batch N]
 *                       [--lease SECONDS] [--worker] [--status]
 *   mcp-server-aml assess [--db FILE] CASE-ID
 *   mcp-server-aml graph [--db FILE] CASE-ID --out FILE.png|.svg|.dot|.cyjs|.graphml
 *   mcp-server-aml eval [--db FILE]
 *   mcp-server-aml audit verify [--db FILE]
 *   mcp-server-aml lists import --db FILE --format ftm|csv --list NAME PATH
 *   mcp-server-aml lists show [--db FILE]
 *
 * stdout carries protocol frames when serving, reports otherwise; every
 * diagnostic goes to stderr. Exit status: 0 ok, 1 failure, 2 usage or
 * an unusable database.
 */
#include "commands/eval.h"
#include "commands/filing.h"
#include "commands/gen.h"
#include "commands/ingest.h"
#include "engine/scan.h"
#include "engine/trail.h"
#include "screen/lists.h"
#include "tools/tools.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage:\n"
    "  mcp-server-aml [--db FILE] [--http [HOST:]PORT [AUTH] [LIMITS]] [--transcript FILE] [--actor NAME]\n"
    "                 [--pool N] [--metrics [HOST:]PORT] [--import-dir DIR]\n"
    "      serve MCP over stdio (without --db: an in-memory demo store); --pool N: connections to the\n"
    "      store lent to tool calls (default: the number of cores; one for the in-memory store); over\n"
    "      HTTP with OAuth when AUTH options are given (tools need aml.read, aml.assess or aml.sar;\n"
    "      the audit log records the token's subject); --metrics [HOST:]PORT serves Prometheus metrics\n"
    "      at GET /metrics there; --import-dir DIR adds the tool importTransactions, which imports\n"
    "      files under DIR only (at most 4 GiB a call):\n" MCP_AUTH_ARGS_HELP
    "      LIMITS (HTTP; docs/http.md, \"Limits\"):\n"
    "        --trust-proxy ADDR[,ADDR]  reverse proxies whose X-Forwarded-For names the client\n"
    "        --max-queue-bytes N        unsent SSE bytes per request (default 1 MiB)\n"
    "        --max-replay-bytes N       events kept per stream for Last-Event-ID (default 256 KiB)\n"
    "        --max-buffer-bytes N       response bytes the whole server holds (default 32 MiB)\n"
    "  mcp-server-aml import --db FILE --format native|amlworld|amlsim [--skip-bad-rows] [--history-from DATE|first-activity] PATH...\n"
    "  mcp-server-aml gen [--seed N] [--customers N] [--days N] [--inject T01,T03,...] [--instances N]\n"
    "                     [--lookalikes N] [--start YYYY-MM-DD] [--format native|amlworld]\n"
    "                     (--out FILE | --db FILE)\n"
    "  mcp-server-aml scan [--db FILE|URI] [--from DATE] [--to DATE] [--detected DATE] [--jobs N]\n"
    "                      [--batch N] [--lease SECONDS] [--worker] [--status]\n"
    "      scan in account batches kept in the store (an interrupted scan resumes); --jobs threads\n"
    "      (default: the CPUs, at most 8; a worker: 1); --worker joins the running scan or starts one;\n"
    "      --status shows the scan jobs' progress\n"
    "  mcp-server-aml assess [--db FILE] CASE-ID  print a case assessment (assessCase) as JSON\n"
    "  mcp-server-aml graph [--db FILE] CASE-ID --out FILE.png|.svg|.dot|.cyjs|.graphml\n"
    "                                           draw the case's fund flow (caseGraph) or export it\n"
    "  mcp-server-aml eval [--db FILE]          detection quality against the ground truth\n"
    "  mcp-server-aml audit verify [--db FILE]  check the hash chain of the audit log\n"
    "  mcp-server-aml config set|unset|list --db FILE [KEY [VALUE]]  operator settings (filer.* for SAR XML)\n"
    "  mcp-server-aml sar [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]  draft a SAR\n"
    "  mcp-server-aml lists import --db FILE --format ftm|csv --list NAME PATH\n"
    "      load a sanctions / PEP list version (FollowTheMoney JSON lines or the screening CSV)\n"
    "  mcp-server-aml lists show [--db FILE]   the screening lists and their versions as JSON\n";

static int die_usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "mcp-server-aml: %s\n", msg);
    fputs(usage, stderr);
    return 2;
}

/* Value of an option at argv[*i] ("--x V"); advances *i. */
static const char *optval(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "mcp-server-aml: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* An HTTP limit option: 0, or 1 after saying what is wrong. */
static int http_limit(aml_serve_opts *so, const char *name, const char *v)
{
    if (!strcmp(name, "--trust-proxy")) {
        so->trust_proxy = v;
        return 0;
    }
    size_t *field = !strcmp(name, "--max-queue-bytes")    ? &so->max_queue_bytes
                    : !strcmp(name, "--max-replay-bytes") ? &so->max_replay_bytes
                    : !strcmp(name, "--max-buffer-bytes") ? &so->max_buffer_bytes
                                                          : NULL;
    char *end = NULL;
    unsigned long long n = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
    if (!field) {
        fprintf(stderr, "mcp-server-aml: unknown option %s\n", name);
        return 1;
    }
    if (!end || *end || n == 0 || n > (1ull << 40)) {
        fprintf(stderr, "mcp-server-aml: %s takes a byte count from 1 to 2^40\n", name);
        return 1;
    }
    *field = (size_t)n;
    return 0;
}


static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_date_opt(const char *s, int end_of_day, int64_t *out)
{
    int prec;
    if (aml_parse_time(s, strlen(s), out, &prec))
        return -1;
    if (prec == AML_PREC_DAY && end_of_day)
        *out += AML_DAY - 1;
    return 0;
}

static int open_store(const char *db, unsigned flags, aml_store **s)
{
    aml_err err = {{0}};
    if (aml_store_open(s, db, flags, &err)) {
        fprintf(stderr, "mcp-server-aml: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static void audit_cli(aml_store *s, const char *action, const char *detail, int ok)
{
    char user[64], digest[65];
    const char *u = getenv("USER");
    snprintf(user, sizeof user, "cli:%s", u && *u ? u : "unknown");
    aml_sha256_hex(detail, strlen(detail), digest);
    aml_audit_entry e = {user, action, NULL, digest, NULL, ok ? "ok" : "error", detail};
    aml_err err;
    if (aml_audit_append(s, &e, &err))
        fprintf(stderr, "mcp-server-aml: warning: %s\n", err.msg);
}

/* ---- import --------------------------------------------------------------------------- */

static int cmd_import(int argc, char **argv)
{
    const char *db = NULL, *fmt = NULL;
    aml_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.progress = 1;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t np = 0;
    if (!paths)
        return 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (!(db = optval(argc, argv, &i)))
                goto usage;
        } else if (strcmp(argv[i], "--format") == 0) {
            if (!(fmt = optval(argc, argv, &i)))
                goto usage;
        } else if (strcmp(argv[i], "--skip-bad-rows") == 0) {
            o.skip_bad = 1;
        } else if (strcmp(argv[i], "--history-from") == 0) {
            const char *v = optval(argc, argv, &i);
            if (!v)
                goto usage;
            if (strcmp(v, "first-activity") == 0) {
                o.history_mode = AML_HISTORY_FIRST_ACTIVITY;
            } else if (aml_parse_time(v, strlen(v), &o.history_from, NULL) == 0) {
                o.history_mode = AML_HISTORY_DECLARED;
            } else {
                fprintf(stderr, "mcp-server-aml: --history-from takes a date (YYYY-MM-DD) or first-activity\n");
                goto usage;
            }
        } else if (strcmp(argv[i], "--fail-on-bad-row") == 0) {
            o.skip_bad = 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "mcp-server-aml: unknown option %s\n", argv[i]);
            goto usage;
        } else {
            paths[np++] = argv[i];
        }
    }
    aml_format f;
    if (!db || !fmt || !np || aml_format_parse(fmt, &f)) {
        fprintf(stderr, "mcp-server-aml: import needs --db, --format native|amlworld|amlsim and files\n");
        goto usage;
    }
    o.source = fmt;
    aml_store *s;
    int rc = open_store(db, AML_OPEN_CREATE, &s);
    if (rc) {
        free(paths);
        return rc;
    }
    aml_ingest_stats st;
    aml_err err = {{0}};
    int64_t t0 = aml_mono_ns();
    rc = aml_import(s, f, paths, np, &o, stderr, &st, &err);
    char detail[256];
    if (rc) {
        fprintf(stderr, "mcp-server-aml: import failed: %s\n", err.msg);
        snprintf(detail, sizeof detail, "import %s: failed", fmt);
        audit_cli(s, "cli.import", detail, 0);
    } else {
        double secs = (double)(aml_mono_ns() - t0) / 1e9;
        printf("imported %llu rows in %.2f s (%.0f rows/s): %llu transactions, %llu accounts, %llu customers, "
               "%llu cases, %llu labelled, %llu skipped\n",
               (unsigned long long)st.rows, secs, secs > 0 ? (double)st.rows / secs : 0.0,
               (unsigned long long)st.transactions, (unsigned long long)st.accounts, (unsigned long long)st.customers,
               (unsigned long long)st.cases, (unsigned long long)st.labels, (unsigned long long)st.skipped);
        snprintf(detail, sizeof detail, "import %s: %llu rows, %llu skipped", fmt, (unsigned long long)st.rows,
                 (unsigned long long)st.skipped);
        audit_cli(s, "cli.import", detail, 1);
    }
    aml_store_close(s);
    free(paths);
    return rc ? 1 : 0;
usage:
    free(paths);
    return die_usage(NULL);
}

/* ---- gen ------------------------------------------------------------------------------ */

static int parse_inject(const char *s, unsigned *mask)
{
    *mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "all") == 0) {
            *mask = AML_GEN_TYPOLOGIES;
            continue;
        }
        if (strcmp(tok, "none") == 0)
            continue;
        int t = aml_typology_index(tok, strlen(tok));
        if (t < 0 || !(AML_GEN_TYPOLOGIES & (1u << t)))
            return -1; /* unknown, or T15 (it depends on loaded lists, not on generated activity) */
        *mask |= 1u << t;
    }
    return 0;
}

static int cmd_gen(int argc, char **argv)
{
    aml_gen_opts o;
    aml_gen_defaults(&o);
    const char *out = NULL, *db = NULL, *fmt = "native";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        long n;
        if (strcmp(a, "--out") == 0 || strcmp(a, "--db") == 0 || strcmp(a, "--format") == 0 ||
            strcmp(a, "--start") == 0 || strcmp(a, "--inject") == 0 || strcmp(a, "--seed") == 0 ||
            strcmp(a, "--customers") == 0 || strcmp(a, "--days") == 0 || strcmp(a, "--instances") == 0 ||
            strcmp(a, "--lookalikes") == 0) {
            if (!(v = optval(argc, argv, &i)))
                return die_usage(NULL);
        } else {
            fprintf(stderr, "mcp-server-aml: unknown option %s\n", a);
            return die_usage(NULL);
        }
        if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "--db") == 0)
            db = v;
        else if (strcmp(a, "--format") == 0)
            fmt = v;
        else if (strcmp(a, "--start") == 0)
            o.start = v;
        else if (strcmp(a, "--inject") == 0) {
            if (parse_inject(v, &o.inject))
                return die_usage("--inject takes typology ids like T01,T03 (or all)");
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            o.seed = strtoull(v, &end, 10);
            if (!*v || *end)
                return die_usage("--seed takes a number");
        } else if (parse_int(v, a[2] == 'l' ? 0 : 1, 10000000, &n)) {
            fprintf(stderr, "mcp-server-aml: %s takes a positive number\n", a);
            return die_usage(NULL);
        } else if (strcmp(a, "--customers") == 0)
            o.customers = (int)n;
        else if (strcmp(a, "--days") == 0)
            o.days = (int)n;
        else if (strcmp(a, "--instances") == 0)
            o.instances = (int)n;
        else
            o.lookalikes = (int)n;
    }
    if (strcmp(fmt, "native") != 0 && strcmp(fmt, "amlworld") != 0)
        return die_usage("--format is native or amlworld");
    o.amlworld = strcmp(fmt, "amlworld") == 0;
    if ((!out) == (!db))
        return die_usage("gen needs exactly one of --out FILE or --db FILE");
    if (db && o.amlworld)
        return die_usage("--format amlworld writes files: use --out (then import them)");
    aml_gen_stats st;
    aml_err err = {{0}};
    int rc;
    if (db) {
        aml_store *s;
        if ((rc = open_store(db, AML_OPEN_CREATE, &s)))
            return rc;
        rc = aml_gen_store(s, &o, &st, &err);
        audit_cli(s, "cli.gen", rc ? "gen: failed" : "gen: ok", !rc);
        aml_store_close(s);
    } else if (o.amlworld) {
        char acc[4096], pat[4096];
        rc = aml_gen_amlworld(out, &o, &st, acc, pat, sizeof acc, &err);
        if (!rc)
            fprintf(stderr, "wrote %s, %s, %s\n", out, acc, pat);
    } else {
        FILE *f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
        if (!f) {
            fprintf(stderr, "mcp-server-aml: cannot write %s\n", out);
            return 1;
        }
        rc = aml_gen_native(f, &o, &st, &err);
        if (f != stdout && fclose(f) != 0 && !rc)
            rc = aml_errf(&err, "cannot write %s", out);
    }
    if (rc) {
        fprintf(stderr, "mcp-server-aml: gen failed: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr,
            "generated seed %llu: %llu customers, %llu accounts, %llu transactions (%llu laundering), %llu cases, "
            "%llu injected instances, %llu look-alikes\n",
            (unsigned long long)o.seed, (unsigned long long)st.customers, (unsigned long long)st.accounts,
            (unsigned long long)st.transactions, (unsigned long long)st.laundering_rows, (unsigned long long)st.cases,
            (unsigned long long)st.instances, (unsigned long long)st.lookalikes);
    return 0;
}

/* ---- scan, eval, audit --------------------------------------------------------------------- */

static int store_for(const char *db, unsigned flags, aml_store **s)
{
    if (db)
        return open_store(db, flags, s);
    aml_err err = {{0}};
    if (aml_demo_store(s, &err)) {
        fprintf(stderr, "mcp-server-aml: demo store: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* --jobs, --batch, --lease, --max-batches: 0 when taken, -1 when not one of them, 2 on a bad value. */
static int scan_int_opt(const char *a, const char *v, aml_scan_opts *o)
{
    static const struct {
        const char *name;
        long lo, hi;
        size_t off;
    } opts[] = {
        {"--jobs", 1, AML_SCAN_JOBS_MAX, offsetof(aml_scan_opts, jobs)},
        {"--batch", 1, AML_SCAN_BATCH_MAX, offsetof(aml_scan_opts, batch)},
        {"--lease", 1, 86400, offsetof(aml_scan_opts, lease)},
        {"--max-batches", 1, 1000000000, offsetof(aml_scan_opts, max_batches)},
    };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        if (strcmp(a, opts[k].name))
            continue;
        long n;
        if (parse_int(v, opts[k].lo, opts[k].hi, &n)) {
            fprintf(stderr, "mcp-server-aml: %s takes a number from %ld to %ld\n", a, opts[k].lo, opts[k].hi);
            return 2;
        }
        *(int *)(void *)((char *)o + opts[k].off) = (int)n;
        return 0;
    }
    return -1;
}

/* The options of scan; 0, or the exit status of a usage error. */
static int scan_args(int argc, char **argv, aml_scan_opts *o, const char **db, int *status)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--worker") == 0 || strcmp(a, "--status") == 0) {
            *(a[2] == 'w' ? &o->worker : status) = 1;
            continue;
        }
        if (!(v = optval(argc, argv, &i)))
            return die_usage(NULL);
        int taken = scan_int_opt(a, v, o);
        int64_t t;
        if (taken >= 0) {
            if (taken)
                return die_usage(NULL);
        } else if (strcmp(a, "--db") == 0) {
            *db = v;
        } else if (strcmp(a, "--detected") == 0) {
            if (parse_date_opt(v, 0, &t))
                return die_usage("--detected takes YYYY-MM-DD");
            o->detected = v;
        } else if (strcmp(a, "--from") && strcmp(a, "--to")) {
            fprintf(stderr, "mcp-server-aml: unknown option %s\n", a);
            return die_usage(NULL);
        } else if (parse_date_opt(v, strcmp(a, "--to") == 0, &t)) {
            return die_usage("--from/--to take YYYY-MM-DD or a timestamp");
        } else if (strcmp(a, "--from") == 0)
            o->from = t;
        else
            o->to = t;
    }
    if ((o->from || o->to) && (!o->from || !o->to || o->to < o->from))
        return die_usage("give both --from and --to, in order");
    return 0;
}

/* Default --jobs: a plain scan uses every CPU (at most 8); a worker is one unit of a shared scan. */
static int default_jobs(const aml_scan_opts *o)
{
    if (o->worker)
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

static int cmd_scan_status(aml_store *s)
{
    aml_err err = {{0}};
    int rc = aml_scan_status(s, stdout, &err);
    if (rc)
        fprintf(stderr, "mcp-server-aml: scan --status: %s\n", err.msg);
    aml_store_close(s);
    return rc ? 1 : 0;
}

static int cmd_scan(int argc, char **argv)
{
    const char *db = NULL;
    aml_scan_opts o;
    memset(&o, 0, sizeof o);
    o.progress = 1;
    o.actor = "scan";
    int status = 0;
    int rc = scan_args(argc, argv, &o, &db, &status);
    if (rc)
        return rc;
    o.db = db;
    if (!o.jobs)
        o.jobs = default_jobs(&o);
    aml_store *s;
    rc = store_for(db, 0, &s);
    if (rc)
        return rc;
    if (status)
        return cmd_scan_status(s);
    aml_err err = {{0}};
    aml_scan_stats st;
    rc = aml_scan(s, &o, stdout, &st, &err);
    if (rc)
        fprintf(stderr, "mcp-server-aml: scan failed: %s\n", err.msg);
    char detail[200];
    snprintf(detail, sizeof detail, "scan: job %lld, %lld accounts (%lld here), %lld cases opened, %lld updated%s",
             (long long)st.job_id, (long long)st.accounts_evaluated, (long long)st.accounts_here,
             (long long)st.cases_opened, (long long)st.cases_updated, st.stopped ? ", stopped" : "");
    audit_cli(s, o.worker ? "cli.scan.worker" : "cli.scan", detail, !rc);
    aml_store_close(s);
    return rc ? 1 : 0;
}

static int cmd_eval(int argc, char **argv)
{
    const char *db = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (!(db = optval(argc, argv, &i)))
                return die_usage(NULL);
        } else {
            return die_usage("eval takes --db FILE");
        }
    }
    aml_store *s;
    int rc = store_for(db, AML_OPEN_READONLY, &s);
    if (rc)
        return rc;
    aml_err err = {{0}};
    rc = aml_eval(s, stdout, &err);
    if (rc < 0)
        fprintf(stderr, "mcp-server-aml: eval failed: %s\n", err.msg);
    aml_store_close(s);
    return rc ? 1 : 0;
}

static int cmd_audit(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[2], "verify") != 0)
        return die_usage("audit takes: verify [--db FILE]");
    const char *db = NULL;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (!(db = optval(argc, argv, &i)))
                return die_usage(NULL);
        } else {
            return die_usage("audit verify takes --db FILE");
        }
    }
    aml_store *s;
    int rc = store_for(db, AML_OPEN_READONLY | AML_OPEN_CHECK, &s);
    if (rc)
        return rc;
    aml_err err = {{0}};
    int64_t bad = 0;
    rc = aml_audit_verify(s, stdout, &bad, &err);
    if (rc < 0)
        fprintf(stderr, "mcp-server-aml: audit verify: %s\n", err.msg);
    aml_store_close(s);
    return rc == 0 ? 0 : 1;
}

static int cmd_assess(int argc, char **argv)
{
    const char *db = NULL, *id = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0) {
            if (!(db = optval(argc, argv, &i)))
                return die_usage(NULL);
        } else if (!id && argv[i][0] != '-') {
            id = argv[i];
        } else {
            return die_usage("assess takes [--db FILE] CASE-ID");
        }
    }
    if (!id)
        return die_usage("assess takes [--db FILE] CASE-ID");
    aml_store *s;
    int rc = store_for(db, AML_OPEN_READONLY, &s);
    if (rc)
        return rc;
    aml_err err = {{0}};
    aml_case c;
    int lr = aml_case_load(s, id, &c, &err);
    if (lr) {
        fprintf(stderr, "mcp-server-aml: %s\n", lr > 0 ? "no such case" : err.msg);
        aml_store_close(s);
        return 1;
    }
    aml_params p;
    aml_params_default(&p);
    aml_case_spec cs = {c.case_id, c.accts, c.naccts, c.from, c.to, NULL};
    aml_assessment a;
    if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, &err)) {
        fprintf(stderr, "mcp-server-aml: %s\n", err.msg);
        rc = 1;
    } else {
        aml_recommendation r;
        aml_recommend(s, &c, &a, &r);
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        aml_assessment_write(s, &w, &c, &a, "case", &r);
        if (mcp_jw_finish(&w) == MCP_OK)
            printf("%s\n", b.data);
        mcp_buf_cleanup(&b);
        aml_assessment_free(&a);
    }
    aml_case_free(&c);
    aml_store_close(s);
    return rc;
}

static int cmd_graph(int argc, char **argv)
{
    const char *db = NULL, *id = NULL, *out = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0 || strcmp(argv[i], "--out") == 0) {
            const char *v = optval(argc, argv, &i);
            if (!v)
                return die_usage(NULL);
            *(argv[i - 1][2] == 'd' ? &db : &out) = v;
        } else if (!id && argv[i][0] != '-') {
            id = argv[i];
        } else {
            return die_usage("graph takes [--db FILE] CASE-ID --out FILE");
        }
    }
    int format = out ? aml_draw_format(out) : -1;
    if (!id || !out)
        return die_usage("graph takes [--db FILE] CASE-ID --out FILE");
    if (format < 0)
        return die_usage("--out must end in .png, .svg, .dot, .cyjs (Cytoscape JSON) or .graphml");
    aml_store *s;
    int rc = store_for(db, AML_OPEN_READONLY, &s);
    if (rc)
        return rc;
    aml_err err = {{0}};
    aml_trail t;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    int64_t t0 = aml_mono_ns();
    int gr = aml_case_graph(s, id, &t, &err);
    if (gr || aml_draw(&t, format, &b, &err)) {
        fprintf(stderr, "mcp-server-aml: %s\n", gr > 0 ? "no such case" : err.msg);
        rc = 1;
    } else {
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
            fprintf(stderr, "mcp-server-aml: cannot write %s\n", out);
            rc = 1;
        } else {
            fprintf(stderr, "%s: %zu bytes, %zu nodes, %zu edges, %.1f ms\n", out, b.len, t.nnodes, t.nedges,
                    (double)(aml_mono_ns() - t0) / 1e6);
        }
    }
    mcp_buf_cleanup(&b);
    aml_trail_free(&t);
    aml_store_close(s);
    return rc;
}

/* ---- lists ---------------------------------------------------------------------------------- */

static int lists_import(aml_store *s, const char *fmt, const char *list, const char *path)
{
    aml_list_stats st;
    aml_err err = {{0}};
    char detail[256];
    int64_t t0 = aml_mono_ns();
    if (aml_lists_import(s, list, fmt, path, &st, &err)) {
        fprintf(stderr, "mcp-server-aml: lists import: %s\n", err.msg);
        snprintf(detail, sizeof detail, "lists import %s %s: failed", list, fmt);
        audit_cli(s, "cli.lists.import", detail, 0);
        return 1;
    }
    printf("list %s version %lld: %llu entities (%llu of other schemata left out, %llu skipped) in %.2f s, "
           "sha256 %s\n",
           list, (long long)st.version_id, (unsigned long long)st.entities, (unsigned long long)st.other,
           (unsigned long long)st.skipped, (double)(aml_mono_ns() - t0) / 1e9, st.sha256);
    snprintf(detail, sizeof detail, "lists import %s %s: version %lld, %llu entities, sha256 %.16s", list, fmt,
             (long long)st.version_id, (unsigned long long)st.entities, st.sha256);
    audit_cli(s, "cli.lists.import", detail, 1);
    return 0;
}

static int cmd_lists(int argc, char **argv)
{
    const char *db = NULL, *fmt = NULL, *list = NULL, *path = NULL;
    int import = argc >= 3 && !strcmp(argv[2], "import");
    if (argc < 3 || (!import && strcmp(argv[2], "show")))
        return die_usage("lists takes: import --db FILE --format ftm|csv --list NAME PATH, or show [--db FILE]");
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--db") ? &db : !strcmp(a, "--format") ? &fmt : !strcmp(a, "--list") ? &list : NULL;
        if (slot) {
            if (!(*slot = optval(argc, argv, &i)))
                return die_usage(NULL);
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "mcp-server-aml: unknown option %s\n", a);
            return die_usage(NULL);
        } else if (!path && import) {
            path = a;
        } else {
            return die_usage("lists import takes one file");
        }
    }
    if (import && (!db || !fmt || !list || !path))
        return die_usage("lists import needs --db FILE, --format ftm|csv, --list NAME and a file");
    aml_store *s;
    int rc = import ? open_store(db, AML_OPEN_CREATE, &s) : store_for(db, 0, &s);
    if (rc)
        return rc;
    if (import) {
        rc = lists_import(s, fmt, list, path);
    } else {
        mcp_buf b;
        mcp_jw w;
        aml_err err = {{0}};
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        if (aml_lists_show(s, &w, &err) || mcp_jw_finish(&w) != MCP_OK) {
            fprintf(stderr, "mcp-server-aml: lists show: %s\n", err.msg);
            rc = 1;
        } else {
            printf("%s\n", b.data);
        }
        mcp_buf_cleanup(&b);
    }
    aml_store_close(s);
    return rc;
}

/* ---- serve ---------------------------------------------------------------------------------- */

/*
 * The demo bank (no --db) is built on a thread of its own while the server
 * already answers: server/discover, initialize and tools/list need no
 * store, and a client's discover probe must not time out on a busy
 * machine (seconds under ASan). The builder holds the pool's only
 * connection (an in-memory store is a pool of one) until the bank is in,
 * so the first tool call waits for it in aml_app_acquire.
 */
typedef struct demo_build {
    aml_pool *pool;
    aml_store *s; /* the pool's connection, borrowed by the builder */
    pthread_t tid;
    int started;
    atomic_int done; /* the builder gave the connection back */
} demo_build;

static void *demo_main(void *arg)
{
    demo_build *d = arg;
    aml_err err = {{0}};
    if (aml_demo_fill(d->s, &err)) {
        /* As when the bank was built before serving: without it the server has nothing to serve. */
        fprintf(stderr, "mcp-server-aml: demo store: %s\n", err.msg);
        fflush(stderr);
        _exit(1);
    }
    aml_pool_release(d->pool, d->s);
    atomic_store(&d->done, 1);
    return NULL;
}

/* An empty in-memory store as a pool of one, borrowed by a thread that fills it with the demo bank. */
static int serve_demo(aml_app *app, demo_build *d)
{
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, NULL, AML_OPEN_CREATE, &err) || aml_pool_new(&app->pool, s, NULL, 0, 1, &err)) {
        fprintf(stderr, "mcp-server-aml: demo store: %s\n", err.msg);
        return 1;
    }
    app->store = aml_pool_first(app->pool);
    d->pool = app->pool;
    d->s = aml_pool_acquire(app->pool);
    if (pthread_create(&d->tid, NULL, demo_main, d))
        demo_main(d); /* no thread: build it here, as before */
    else
        d->started = 1;
    return 0;
}

/*
 * The store the server answers from, as a pool of `size` connections
 * (0: one per core, as many as the server's tool workers), so tool calls
 * on different workers read in parallel (store/pool.h). Without `db`, the
 * demo bank, built meanwhile (serve_demo).
 */
static int serve_pool(const char *db, long size, aml_app *app, demo_build *demo)
{
    if (!db)
        return serve_demo(app, demo);
    aml_store *first;
    int rc = store_for(db, AML_OPEN_CHECK, &first);
    if (rc)
        return rc;
    if (size <= 0) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        size = ncpu > 0 ? ncpu : 2;
    }
    aml_err err = {{0}};
    if (aml_pool_new(&app->pool, first, db, 0, (unsigned)size, &err)) {
        fprintf(stderr, "mcp-server-aml: connection pool: %s\n", err.msg);
        return 1;
    }
    app->store = aml_pool_first(app->pool);
    return 0;
}

/* --import-dir DIR: importTransactions reads files under DIR's real path (tools/jobs_tools.c). 0 or -1. */
static int import_dir(const char *dir, char *real, aml_app *app)
{
    struct stat sb;
    if (!realpath(dir, real) || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "mcp-server-aml: --import-dir %s: not a folder\n", dir);
        return -1;
    }
    app->import_dir = real;
    app->import = aml_import_files;
    return 0;
}

static int cmd_serve(int argc, char **argv)
{
    const char *db = NULL;
    aml_serve_opts so;
    memset(&so, 0, sizeof so);
    aml_app app;
    memset(&app, 0, sizeof app);
    app.actor = "stdio-client";
    long pool = 0;
    char import_real[PATH_MAX];
    mcp_auth_opts auth;
    memset(&auth, 0, sizeof auth);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf("mcp-server-aml %s (engine %s, catalog %s, libmcp %s)\n", MCP_VERSION_STRING, AML_ENGINE_VERSION,
                   AML_CATALOG_VERSION, mcp_version());
            return 0;
        }
        int used = 0;
        if (mcp_auth_parse_arg(&auth, a, i + 1 < argc ? argv[i + 1] : NULL, &used) == MCP_OK && used) {
            i += used - 1;
            so.auth = &auth;
            continue;
        }
        if (!strncmp(a, "--auth-", 7) || !strcmp(a, "--resource-url")) {
            fprintf(stderr, "mcp-server-aml: %s needs a value\n", a);
            return die_usage(NULL);
        }
        const char *v;
        if (!strncmp(a, "--max-", 6) || !strcmp(a, "--trust-proxy")) {
            if (!(v = optval(argc, argv, &i)) || http_limit(&so, a, v))
                return die_usage(NULL);
            continue;
        }
        if (strcmp(a, "--db") && strcmp(a, "--http") && strcmp(a, "--transcript") && strcmp(a, "--actor") &&
            strcmp(a, "--pool") && strcmp(a, "--metrics") && strcmp(a, "--import-dir")) {
            fprintf(stderr, "mcp-server-aml: unknown option or command %s\n", a);
            return die_usage(NULL);
        }
        if (!(v = optval(argc, argv, &i)))
            return die_usage(NULL);
        if (strcmp(a, "--db") == 0)
            db = v;
        else if (strcmp(a, "--http") == 0)
            so.http = v;
        else if (strcmp(a, "--transcript") == 0)
            so.transcript = v;
        else if (strcmp(a, "--pool") == 0 && parse_int(v, 1, AML_POOL_MAX, &pool))
            return die_usage("--pool takes a number of connections, 1 to 256");
        else if (strcmp(a, "--metrics") == 0)
            so.metrics = v;
        else if (strcmp(a, "--actor") == 0)
            app.actor = v;
        else if (strcmp(a, "--import-dir") == 0 && import_dir(v, import_real, &app))
            return die_usage(NULL);
    }
    if ((so.trust_proxy || so.max_queue_bytes || so.max_replay_bytes || so.max_buffer_bytes) && !so.http) {
        fprintf(stderr, "mcp-server-aml: --trust-proxy and --max-*-bytes need --http\n");
        return die_usage(NULL);
    }
    if (so.auth && !so.http) {
        fprintf(stderr, "mcp-server-aml: --auth-* options need --http (stdio has no tokens)\n");
        return die_usage(NULL);
    }
    static demo_build demo; /* static: a builder still running at exit finds it */
    int rc = serve_pool(db, pool, &app, &demo);
    if (rc)
        return rc;
    rc = aml_serve(&app, &so);
    if (demo.started && !atomic_load(&demo.done))
        return rc; /* the input ended before the bank was in: no call needs it, exit without it */
    if (demo.started)
        pthread_join(demo.tid, NULL);
    aml_pool_free(app.pool);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "import") == 0)
        return cmd_import(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "gen") == 0)
        return cmd_gen(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "scan") == 0)
        return cmd_scan(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "eval") == 0)
        return cmd_eval(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "audit") == 0)
        return cmd_audit(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "lists") == 0)
        return cmd_lists(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "assess") == 0)
        return cmd_assess(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "graph") == 0)
        return cmd_graph(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "config") == 0)
        return aml_cmd_config(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "sar") == 0)
        return aml_cmd_sar(argc, argv);
    return cmd_serve(argc, argv);
}
