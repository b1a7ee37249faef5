/*
 * Long jobs as tools (docs/aml.md, "Long jobs as tasks"): runScan, the
 * monitoring scan (engine/scan.h), and importTransactions, an import of
 * files from the server's --import-dir (aml_app.import). Both may run as
 * tasks (io.modelcontextprotocol/tasks, MCP_TASK_OPTIONAL) or as ordinary
 * calls; both report progress and stop when the call is cancelled.
 *
 * runScan holds the write lock only around the scan's writing
 * transactions (aml_scan_opts.write_lock), so other tool calls are
 * answered between its batches; a cancelled scan keeps the batches it
 * finished and the next runScan or `scan` of the window resumes the job.
 * importTransactions is one transaction under the write lock for its whole
 * run (readers go on; writers wait); cancelled, it keeps nothing.
 */
#include "tools/tools.h"
#include "engine/scan.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *scope_of(const char *tool)
{
    for (const aml_tool_scope *s = aml_tool_scopes(); s->tool; s++)
        if (!strcmp(s->tool, tool))
            return s->scope;
    return NULL;
}

/* The audit row of a call (on the call's connection, under the write lock). */
static void audit(mcp_call *call, aml_app *app, aml_store *s, const char *req, const char *resp, int ok,
                  const char *detail)
{
    const char *subject = mcp_call_subject(call);
    const char *actor = aml_app_actor(app, subject);
    char action[48], dt[AML_AUDIT_DETAIL_MAX];
    snprintf(action, sizeof action, "tool.%s", mcp_call_tool_name(call));
    aml_audit_entry e = {actor, action, NULL, req, resp && resp[0] ? resp : NULL, ok ? "ok" : "error",
                         aml_audit_detail(detail, mcp_call_trace(call, NULL), dt, sizeof dt)};
    aml_err err;
    aml_app_write_lock(app, s);
    if (aml_audit_append(s, &e, &err))
        mcp_call_log(call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(app);
}

/* Sends the structured result in `b` and its text; its digest into resp. */
static mcp_status answer(mcp_call *call, mcp_jw *w, mcp_buf *b, const char *text, char resp[65])
{
    mcp_status st = mcp_jw_finish(w);
    if (st == MCP_OK) {
        aml_sha256_hex(b->data, b->len, resp);
        st = mcp_call_structured(call, b->data, b->len);
    }
    if (st == MCP_OK)
        st = mcp_call_text(call, text, NULL);
    return st;
}

/* ---- runScan ------------------------------------------------------------------------------ */

typedef struct scan_call {
    aml_app *app;
    mcp_call *call;
} scan_call;

/* After each batch: progress ("N of M accounts"), and whether the call was cancelled. */
static int scan_progress(void *ud, int64_t done, int64_t total)
{
    scan_call *sc = ud;
    char msg[96];
    snprintf(msg, sizeof msg, "%lld of %lld accounts scanned", (long long)done, (long long)total);
    mcp_call_progress(sc->call, (double)done, (double)total, msg);
    return mcp_call_is_cancelled(sc->call);
}

static void scan_write_lock(void *ud, aml_store *s, int on)
{
    scan_call *sc = ud;
    if (on)
        aml_app_write_lock(sc->app, s);
    else
        aml_app_write_unlock(sc->app);
}

/* args.from / args.to (YYYY-MM-DD, both or neither) into o; a message on a bad window. */
static const char *scan_window_args(const mcp_json *args, aml_scan_opts *o)
{
    size_t nf = 0, nt = 0;
    const char *f = mcp_json_str(mcp_json_get(args, "from"), &nf), *t = mcp_json_str(mcp_json_get(args, "to"), &nt);
    if (!f && !t)
        return NULL;
    if (!f || !t)
        return "Give both 'from' and 'to' (YYYY-MM-DD), or neither for the window a plain scan uses.";
    int pf, pt;
    if (aml_parse_time(f, nf, &o->from, &pf) || aml_parse_time(t, nt, &o->to, &pt))
        return "'from' and 'to' must be real calendar dates (YYYY-MM-DD).";
    if (pt == AML_PREC_DAY)
        o->to += AML_DAY - 1;
    if (o->from > o->to)
        return "'from' must not be after 'to'.";
    return NULL;
}

static void scan_result(mcp_jw *w, const aml_scan_stats *st)
{
    char f[11] = "", t[11] = "";
    int64_t evaluated = st->made_cases ? st->accounts_evaluated : st->accounts_here;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "jobId");
    mcp_jw_int(w, st->job_id);
    if (st->job_id) {
        aml_fmt_date(st->window_from, f);
        aml_fmt_date(st->window_to, t);
        mcp_jw_key(w, "from");
        mcp_jw_string(w, f);
        mcp_jw_key(w, "to");
        mcp_jw_string(w, t);
    }
    const char *keys[] = {"accountsEvaluated", "accountsMatched", "casesOpened", "casesUpdated", "batches",
                          "batchesHere"};
    int64_t vals[] = {evaluated, st->accounts_matched, st->cases_opened, st->cases_updated, st->batches,
                      st->batches_here};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        mcp_jw_key(w, keys[i]);
        mcp_jw_int(w, vals[i]);
    }
    mcp_jw_key(w, "stopped");
    mcp_jw_bool(w, st->stopped);
    mcp_jw_key(w, "casesMadeHere");
    mcp_jw_bool(w, st->made_cases);
    mcp_jw_key(w, "seconds");
    mcp_jw_double(w, st->seconds);
    mcp_jw_object_end(w);
}

static void scan_text(char *out, size_t n, const aml_scan_stats *st)
{
    if (!st->job_id)
        snprintf(out, n, "The store has no transactions: nothing to scan.");
    else if (st->stopped)
        snprintf(out, n, "Scan job %lld stopped after %lld of %lld batches were done here; the finished batches are "
                         "kept and the next runScan of the window resumes the job.",
                 (long long)st->job_id, (long long)st->batches_here, (long long)st->batches);
    else if (!st->made_cases)
        snprintf(out, n, "Scan job %lld: %lld batches done here; another worker made the job's cases.",
                 (long long)st->job_id, (long long)st->batches_here);
    else
        snprintf(out, n, "Scan job %lld: %lld accounts evaluated, %lld matched; %lld cases opened, %lld updated "
                         "(%.2f s). listCases shows them.",
                 (long long)st->job_id, (long long)st->accounts_evaluated, (long long)st->accounts_matched,
                 (long long)st->cases_opened, (long long)st->cases_updated, st->seconds);
}

static mcp_status run_scan(mcp_call *call, const mcp_json *args, void *ud)
{
    aml_app *app = ud;
    char req[65], resp[65] = "", detail[160], text[400];
    aml_args_sha256(args, req);
    scan_call sc = {app, call};
    aml_scan_opts o;
    memset(&o, 0, sizeof o);
    o.actor = "runScan";
    o.on_batch = scan_progress;
    o.write_lock = scan_write_lock;
    o.ud = &sc;
    const char *bad = scan_window_args(args, &o);
    aml_store *s = aml_app_acquire(app);
    aml_scan_stats st;
    memset(&st, 0, sizeof st);
    aml_err err = {{0}};
    int rc = bad ? -1 : aml_scan(s, &o, NULL, &st, &err);
    mcp_status ms = MCP_OK;
    if (rc) {
        snprintf(detail, sizeof detail, "%s", bad ? "rejected: bad window" : "scan failed");
        ms = bad ? mcp_call_error(call, "%s", bad) : mcp_call_error(call, "The scan failed: %s", err.msg);
    } else {
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        scan_result(&w, &st);
        scan_text(text, sizeof text, &st);
        ms = answer(call, &w, &b, text, resp);
        mcp_buf_cleanup(&b);
        snprintf(detail, sizeof detail, "scan: job %lld, %lld of %lld batches here, %lld cases opened, %lld updated%s",
                 (long long)st.job_id, (long long)st.batches_here, (long long)st.batches, (long long)st.cases_opened,
                 (long long)st.cases_updated, st.stopped ? ", stopped (cancelled)" : "");
    }
    audit(call, app, s, req, resp, !rc && ms == MCP_OK, detail);
    aml_app_release(app, s);
    return ms;
}

/* ---- importTransactions -------------------------------------------------------------------------- */

/* The files of one import, resolved under the import folder. */
typedef struct import_files {
    char *paths[AML_IMPORT_MAX_FILES];
    size_t n;
    uint64_t bytes;
} import_files;

static void files_free(import_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    f->n = 0;
}

/* Whether `real` (a realpath) is `dir` or inside it. */
static int is_under(const char *dir, const char *real)
{
    size_t dl = strlen(dir);
    if (strncmp(real, dir, dl) != 0)
        return 0;
    return real[dl] == '\0' || real[dl] == '/' || (dl == 1 && dir[0] == '/');
}

/* Refuses an absolute path, a '..' part, an empty one. NULL when acceptable, else why. */
static const char *path_shape(const char *rel, size_t n)
{
    if (n == 0 || memchr(rel, '\0', n))
        return "'path' is empty or holds a NUL character.";
    if (rel[0] == '/')
        return "'path' must be relative to the server's import folder (--import-dir), not absolute.";
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 2 && p[0] == '.' && p[1] == '.')
            return "'path' may not contain '..': name a file or folder under the import folder.";
        p += l + (e ? 1 : 0);
    }
    return NULL;
}

/* Adds the regular file `real` (already resolved) to f. NULL, or why not. */
static const char *add_file(import_files *f, const char *real, char *msg, size_t cap)
{
    struct stat sb;
    if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode))
        return "'path' is neither a regular file nor a folder of them.";
    if (f->n == AML_IMPORT_MAX_FILES) {
        snprintf(msg, cap, "The folder holds more than %d files: import at most %d at a time.", AML_IMPORT_MAX_FILES,
                 AML_IMPORT_MAX_FILES);
        return msg;
    }
    f->bytes += (uint64_t)sb.st_size;
    if (f->bytes > AML_IMPORT_MAX_BYTES) {
        snprintf(msg, cap, "The files are over the import limit of %llu bytes (4 GiB): import them in parts.",
                 (unsigned long long)AML_IMPORT_MAX_BYTES);
        return msg;
    }
    f->paths[f->n++] = strdup(real);
    return f->paths[f->n - 1] ? NULL : "out of memory";
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of the folder `real` (names not starting with '.'), each still under dir. */
static const char *add_folder(import_files *f, const char *dir, const char *real, char *msg, size_t cap)
{
    DIR *d = opendir(real);
    if (!d)
        return "'path' names a folder that cannot be read.";
    const char *why = NULL;
    struct dirent *e;
    while (!why && (e = readdir(d))) {
        char joined[PATH_MAX + 256], r[PATH_MAX];
        if (e->d_name[0] == '.')
            continue;
        snprintf(joined, sizeof joined, "%s/%s", real, e->d_name);
        struct stat sb;
        if (!realpath(joined, r) || !is_under(dir, r))
            why = "A file of the folder leaves the import folder (a symbolic link?): refused.";
        else if (stat(r, &sb) == 0 && S_ISREG(sb.st_mode))
            why = add_file(f, r, msg, cap);
    }
    closedir(d);
    if (!why && !f->n)
        why = "The folder holds no files to import.";
    qsort(f->paths, f->n, sizeof f->paths[0], by_name);
    return why;
}

/* Resolves args.path under dir into f: NULL, or why it is refused. */
static const char *resolve(const char *dir, const mcp_json *args, import_files *f, char *msg, size_t cap)
{
    size_t n = 0;
    const char *rel = mcp_json_str(mcp_json_get(args, "path"), &n);
    const char *why = path_shape(rel ? rel : "", rel ? n : 0);
    if (why)
        return why;
    char joined[PATH_MAX + 8], real[PATH_MAX];
    if (strlen(dir) + n + 2 > PATH_MAX)
        return "'path' is too long.";
    snprintf(joined, sizeof joined, "%s/%s", dir, rel);
    if (!realpath(joined, real))
        return errno == ENOENT || errno == ENOTDIR ? "No such file or folder under the import folder."
                                                   : "'path' cannot be resolved under the import folder.";
    if (!is_under(dir, real))
        return "'path' leaves the import folder (through a symbolic link): refused.";
    struct stat sb;
    if (stat(real, &sb) == 0 && S_ISDIR(sb.st_mode))
        return add_folder(f, dir, real, msg, cap);
    return add_file(f, real, msg, cap);
}

/* Progress ("N of M bytes read"), and whether the call was cancelled. */
static int import_progress(void *ud, uint64_t done, uint64_t total)
{
    mcp_call *call = ud;
    char msg[96];
    snprintf(msg, sizeof msg, "%llu of %llu bytes read", (unsigned long long)done, (unsigned long long)total);
    mcp_call_progress(call, (double)done, (double)total, msg);
    return mcp_call_is_cancelled(call);
}

static mcp_status import_answer(mcp_call *call, const char *format, const import_files *f,
                                const aml_import_counts *c, char resp[65])
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "format");
    mcp_jw_string(&w, format);
    mcp_jw_key(&w, "files");
    mcp_jw_int(&w, (int64_t)f->n);
    mcp_jw_key(&w, "bytes");
    mcp_jw_int(&w, (int64_t)f->bytes);
    const char *keys[] = {"rows", "transactions", "accounts", "customers"};
    uint64_t vals[] = {c->rows, c->transactions, c->accounts, c->customers};
    for (size_t i = 0; i < 4; i++) {
        mcp_jw_key(&w, keys[i]);
        mcp_jw_int(&w, (int64_t)vals[i]);
    }
    mcp_jw_object_end(&w);
    char text[300];
    snprintf(text, sizeof text, "Imported %llu rows from %zu file(s): %llu transactions, %llu accounts, %llu "
                                "customers. runScan turns them into cases.",
             (unsigned long long)c->rows, f->n, (unsigned long long)c->transactions,
             (unsigned long long)c->accounts, (unsigned long long)c->customers);
    mcp_status st = answer(call, &w, &b, text, resp);
    mcp_buf_cleanup(&b);
    return st;
}

static mcp_status import_transactions(mcp_call *call, const mcp_json *args, void *ud)
{
    aml_app *app = ud;
    char req[65], resp[65] = "", detail[160], msg[200];
    aml_args_sha256(args, req);
    const char *format = mcp_json_str(mcp_json_get(args, "format"), NULL);
    import_files f;
    memset(&f, 0, sizeof f);
    const char *why = resolve(app->import_dir, args, &f, msg, sizeof msg);
    aml_store *s = aml_app_acquire(app);
    aml_import_counts c;
    memset(&c, 0, sizeof c);
    aml_err err = {{0}};
    int rc = -1;
    if (!why) { /* one transaction: the write lock for the whole import */
        aml_app_write_lock(app, s);
        rc = app->import(s, format, (const char *const *)f.paths, f.n, import_progress, call, &c, &err);
        aml_app_write_unlock(app);
    }
    mcp_status ms;
    if (why) {
        snprintf(detail, sizeof detail, "rejected: %.140s", why);
        ms = mcp_call_error(call, "%s", why);
    } else if (rc) {
        snprintf(detail, sizeof detail, "import %s: %s", format, mcp_call_is_cancelled(call) ? "cancelled" : "failed");
        ms = mcp_call_error(call, "The import failed and kept nothing: %s", err.msg);
    } else {
        snprintf(detail, sizeof detail, "import %s: %zu files, %llu rows", format, f.n, (unsigned long long)c.rows);
        ms = import_answer(call, format, &f, &c, resp);
    }
    audit(call, app, s, req, resp, !why && !rc && ms == MCP_OK, detail);
    aml_app_release(app, s);
    files_free(&f);
    return ms;
}

/* ---- registration ---------------------------------------------------------------------------------- */

static const char run_scan_in[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"from\":{\"type\":\"string\",\"format\":\"date\",\"description\":\"First day of the window (YYYY-MM-DD); "
    "with 'to'. Without both: the window a plain scan uses (all the data).\"},"
    "\"to\":{\"type\":\"string\",\"format\":\"date\",\"description\":\"Last day of the window (YYYY-MM-DD)\"}},"
    "\"additionalProperties\":false}";

static const char run_scan_out[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"jobId\":{\"type\":\"integer\",\"description\":\"The scan job (0: the store has no transactions)\"},"
    "\"from\":{\"type\":\"string\"},\"to\":{\"type\":\"string\"},"
    "\"accountsEvaluated\":{\"type\":\"integer\"},\"accountsMatched\":{\"type\":\"integer\"},"
    "\"casesOpened\":{\"type\":\"integer\"},\"casesUpdated\":{\"type\":\"integer\"},"
    "\"batches\":{\"type\":\"integer\"},\"batchesHere\":{\"type\":\"integer\"},"
    "\"stopped\":{\"type\":\"boolean\",\"description\":\"Cancelled before the job was done; its finished batches "
    "are kept and the next runScan resumes it\"},"
    "\"casesMadeHere\":{\"type\":\"boolean\"},\"seconds\":{\"type\":\"number\"}},"
    "\"required\":[\"jobId\",\"accountsEvaluated\",\"accountsMatched\",\"casesOpened\",\"casesUpdated\","
    "\"stopped\"]}";

static const char import_in[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"format\":{\"type\":\"string\",\"enum\":[\"native\",\"amlworld\",\"amlsim\"]},"
    "\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":1024,\"description\":\"A file, or a folder of "
    "files, relative to the server's import folder\"}},"
    "\"required\":[\"format\",\"path\"],\"additionalProperties\":false}";

static const char import_out[] =
    "{\"type\":\"object\",\"properties\":{\"format\":{\"type\":\"string\"},\"files\":{\"type\":\"integer\"},"
    "\"bytes\":{\"type\":\"integer\"},\"rows\":{\"type\":\"integer\"},\"transactions\":{\"type\":\"integer\"},"
    "\"accounts\":{\"type\":\"integer\"},\"customers\":{\"type\":\"integer\"}},"
    "\"required\":[\"format\",\"files\",\"rows\",\"transactions\"]}";

static mcp_status add(mcp_server *srv, aml_app *app, const char *name, const char *title, const char *desc,
                      const char *in, const char *out, mcp_tool_fn fn, mcp_error *err)
{
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.title = title;
    t.description = desc;
    t.input_schema = in;
    t.output_schema = out;
    t.read_only_hint = MCP_HINT_FALSE;
    t.destructive_hint = MCP_HINT_FALSE;
    t.idempotent_hint = MCP_HINT_FALSE;
    t.open_world_hint = MCP_HINT_FALSE;
    t.task_support = MCP_TASK_OPTIONAL;
    t.handler = fn;
    t.user_data = app;
    t.scopes = scope_of(name);
    return mcp_server_add_tool(srv, &t, err);
}

mcp_status aml_jobs_tools_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    mcp_status st = add(srv, app, "runScan", "Run the monitoring scan",
                        "Runs the monitoring scan over a window (default: all the data, as a plain scan): every "
                        "typology over every internal account with new activity; matching accounts become cases, "
                        "which are assessed. Long: may run as a task (progress: accounts scanned of all). A "
                        "cancelled scan keeps its finished batches and the next runScan resumes it.",
                        run_scan_in, run_scan_out, run_scan, err);
    if (st != MCP_OK || !app->import_dir || !app->import)
        return st;
    return add(srv, app, "importTransactions", "Import transactions",
               "Imports a file, or a folder of files, from the server's import folder in one transaction: format "
               "native (this server's CSV), amlworld (IBM AMLworld) or amlsim (IBM AMLSim). Long: may run as a "
               "task (progress: bytes read). Cancelled or failed, it keeps nothing.",
               import_in, import_out, import_transactions, err);
}
