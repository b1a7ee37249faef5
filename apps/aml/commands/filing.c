/*
 * The filing commands (see filing.h).
 *
 *   mcp-server-aml config set --db FILE KEY VALUE
 *   mcp-server-aml config unset --db FILE KEY
 *   mcp-server-aml config list --db FILE [PREFIX]
 *   mcp-server-aml sar [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]
 *
 * Both are audited like the other commands (cli.config, cli.sar).
 */
#include "commands/filing.h"
#include "commands/gen.h"
#include "engine/sar.h"
#include "store/config.h"

#include <stdlib.h>
#include <string.h>

static int usage_error(const char *msg)
{
    fprintf(stderr,
            "mcp-server-aml: %s\nusage:\n"
            "  mcp-server-aml config set --db FILE KEY VALUE\n"
            "  mcp-server-aml config unset --db FILE KEY\n"
            "  mcp-server-aml config list --db FILE [PREFIX]\n"
            "  mcp-server-aml sar [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]\n",
            msg);
    return 2;
}

static const char *cli_user(char *buf, size_t n)
{
    const char *u = getenv("USER");
    snprintf(buf, n, "cli:%s", u && *u ? u : "unknown");
    return buf;
}

static void audit(aml_store *s, const char *action, const char *case_id, const char *detail, int ok)
{
    char user[80], digest[65];
    aml_sha256_hex(detail, strlen(detail), digest);
    aml_audit_entry e = {cli_user(user, sizeof user), action, case_id, digest, NULL, ok ? "ok" : "error", detail};
    aml_err err;
    if (aml_audit_append(s, &e, &err))
        fprintf(stderr, "mcp-server-aml: warning: %s\n", err.msg);
}

static void print_setting(const char *key, const char *value, const char *by, const char *at, void *ud)
{
    (void)ud;
    printf("%s = %s    (set by %s at %s)\n", key, value, by, at);
}

int aml_cmd_config(int argc, char **argv)
{
    const char *db = NULL, *pos[3] = {NULL, NULL, NULL};
    int npos = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (npos < 2 && (argv[i][0] != '-' || npos == 1))
            pos[npos++] = argv[i];
        else
            return usage_error("config: unexpected argument");
    }
    const char *verb = argc > 2 ? argv[2] : "";
    int set = !strcmp(verb, "set"), unset = !strcmp(verb, "unset"), list = !strcmp(verb, "list");
    if (!db || (!set && !unset && !list) || (set && npos != 2) || (unset && npos != 1) || (list && npos > 1))
        return usage_error("config takes set|unset|list, --db FILE and the key (and value)");
    char msg[300];
    if (set && aml_filer_check(pos[0], pos[1], msg, sizeof msg))
        return usage_error(msg);
    if (unset && aml_filer_check(pos[0], "x", msg, sizeof msg) && strstr(msg, "unknown"))
        return usage_error(msg);
    aml_store *s;
    aml_err err = {{0}};
    if (aml_store_open(&s, db, list ? AML_OPEN_READONLY : 0, &err)) {
        fprintf(stderr, "mcp-server-aml: %s\n", err.msg);
        return 2;
    }
    int rc;
    if (list) {
        rc = aml_config_each(s, pos[0] ? pos[0] : "", print_setting, NULL, &err);
    } else {
        char user[80];
        rc = set ? aml_config_set(s, pos[0], pos[1], cli_user(user, sizeof user), &err)
                 : aml_config_unset(s, pos[0], &err);
        char detail[160];
        snprintf(detail, sizeof detail, "config %s %.64s", verb, pos[0]);
        audit(s, "cli.config", NULL, detail, !rc);
    }
    if (rc)
        fprintf(stderr, "mcp-server-aml: config: %s\n", err.msg);
    aml_store_close(s);
    return rc ? 1 : 0;
}

/* The draft of case c as JSON into out (assessed and recorded as draftSar does). */
static int build_draft(aml_store *s, const aml_case *c, mcp_buf *out, aml_err *err)
{
    aml_params p;
    aml_params_default(&p);
    aml_case_spec cs = {c->case_id, c->accts, c->naccts, c->from, c->to, NULL};
    aml_assessment a;
    if (aml_engine_run(s, &cs, &p, AML_ALL_TYPOLOGIES, "case", &a, err))
        return -1;
    aml_recommendation r;
    aml_recommend(s, c, &a, &r);
    char user[80];
    cli_user(user, sizeof user);
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_buf text;
    mcp_buf_init(&text, 0);
    int rc = aml_assessment_record(s, c, &a, &r, user, err) || aml_sar_build(s, c, &a, &r, user, &w, &text, err);
    if (!rc && mcp_jw_finish(&w) != MCP_OK)
        rc = aml_errf(err, "out of memory");
    mcp_buf_cleanup(&text);
    aml_assessment_free(&a);
    return rc ? -1 : 0;
}

static int write_out(const char *path, const char *data, size_t n)
{
    FILE *f = !path || !strcmp(path, "-") ? stdout : fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "mcp-server-aml: cannot write %s\n", path);
        return 1;
    }
    int bad = fwrite(data, 1, n, f) != n;
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "mcp-server-aml: cannot write %s\n", path ? path : "stdout");
    return bad;
}

/* What the sar command produces from a loaded case: 0, 1 (refused or failed). */
static int sar_for(aml_store *s, const aml_case *c, int xml, const char *out)
{
    aml_err err = {{0}};
    mcp_buf m;
    mcp_buf_init(&m, 0);
    int nmiss = xml ? aml_filer_missing(s, 1, &m) : 0;
    if (nmiss) {
        fprintf(stderr, "mcp-server-aml: cannot draft FinCEN SAR XML: %d filer detail%s missing: %s\n"
                        "set them with: mcp-server-aml config set --db FILE KEY VALUE\n",
                nmiss, nmiss == 1 ? " is" : "s are", m.data ? m.data : "(store error)");
        mcp_buf_cleanup(&m);
        return 1;
    }
    mcp_buf_cleanup(&m);
    mcp_buf json, x;
    mcp_buf_init(&json, 0);
    mcp_buf_init(&x, 0);
    int rc = build_draft(s, c, &json, &err);
    if (!rc && xml)
        rc = aml_fincen_xml(s, json.data, json.len, aml_now(), &x, &err);
    if (rc)
        fprintf(stderr, "mcp-server-aml: sar %s: %s\n", c->case_id, err.msg);
    else if (xml)
        rc = write_out(out, x.data, x.len);
    else {
        aml_buf_puts(&json, "\n");
        rc = write_out(out, json.data, json.len);
    }
    mcp_buf_cleanup(&json);
    mcp_buf_cleanup(&x);
    return rc ? 1 : 0;
}

int aml_cmd_sar(int argc, char **argv)
{
    const char *db = NULL, *id = NULL, *fmt = "json", *out = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--db") || !strcmp(a, "--format") || !strcmp(a, "--out")) && i + 1 < argc) {
            const char *v = argv[++i];
            *(!strcmp(a, "--db") ? &db : !strcmp(a, "--format") ? &fmt : &out) = v;
        } else if (!id && a[0] != '-') {
            id = a;
        } else {
            return usage_error("sar takes [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]");
        }
    }
    if (!id || (strcmp(fmt, "json") && strcmp(fmt, "fincen-xml")))
        return usage_error("sar takes [--db FILE] CASE-ID [--format json|fincen-xml] [--out FILE]");
    aml_store *s;
    aml_err err = {{0}};
    if (db ? aml_store_open(&s, db, AML_OPEN_CHECK, &err) : aml_demo_store(&s, &err)) {
        fprintf(stderr, "mcp-server-aml: %s\n", err.msg);
        return 2;
    }
    aml_case c;
    int lr = aml_case_load(s, id, &c, &err);
    int rc = 1;
    if (lr)
        fprintf(stderr, "mcp-server-aml: %s\n", lr > 0 ? "no such case" : err.msg);
    else
        rc = sar_for(s, &c, !strcmp(fmt, "fincen-xml"), out);
    char detail[120];
    snprintf(detail, sizeof detail, "sar %s: %s", fmt, rc ? "failed" : "ok");
    audit(s, "cli.sar", lr ? NULL : c.case_id, detail, !rc);
    if (!lr)
        aml_case_free(&c);
    aml_store_close(s);
    return rc;
}
