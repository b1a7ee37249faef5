/*
 * Fuzz target: JSON Schema compile + validate.
 *
 * Input layout:  FLAGS SCHEMA [NUL INSTANCE]
 *   FLAGS     one byte: bit 0 MCP_SCHEMA_FORMAT_ASSERT, bit 1 draft-07 as the
 *             default dialect, bit 2 keep at most 2 violations, bit 3 reject
 *             duplicate keys when parsing both texts;
 *   SCHEMA    JSON text of the schema, up to the first NUL byte;
 *   INSTANCE  JSON text of the value to validate; without a NUL the schema
 *             document is validated against itself.
 * (JSON text can never hold a raw NUL, so the split loses nothing.)
 *
 * The schema is compiled with tight limits so that every run stays short.
 * The instance is then checked three ways: mcp_schema_check (yes/no),
 * mcp_schema_validate with MCP_SCHEMA_FIRST_ERROR, and the full
 * mcp_schema_validate. They must agree on valid / invalid / limit, the
 * first violation must be the same in both reports, and each report must
 * write as JSON that parses back with the same strings.
 */
#include "mcp/json.h"
#include "mcp/schema.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Limits small enough that a 4 KiB input cannot make a run slow. */
#define FZ_MAX_DEPTH 32u
#define FZ_MAX_NODES 256u
#define FZ_MAX_STEPS 20000u
#define FZ_MAX_EVAL_DEPTH 64u

static void check_string(const mcp_json *obj, const char *key, const char *want)
{
    size_t n;
    const char *got = mcp_json_str(mcp_json_get(obj, key), &n);
    if (!got || n != strlen(want) || memcmp(got, want, n) != 0)
        abort();
}

/* A report must be well formed and must round-trip through the writer. */
static void check_report(const mcp_schema_result *r, size_t max_errors, int first_only)
{
    if (!r || r->count == 0 || !r->errors)
        abort();
    if (first_only ? r->count != 1 : r->count > max_errors)
        abort();
    if (r->truncated && r->count != max_errors)
        abort();
    for (size_t i = 0; i < r->count; i++) {
        const mcp_schema_error *e = &r->errors[i];
        if (!e->instance_path || !e->keyword_path || !e->message || !e->keyword || !*e->message)
            abort();
        /* The message starts with the offending value's pointer. */
        size_t ipn = strlen(e->instance_path);
        if (ipn && strncmp(e->message, e->instance_path, ipn) != 0)
            abort();
    }

    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    if (mcp_schema_result_write(&w, r) != MCP_OK || mcp_jw_finish(&w) != MCP_OK)
        abort();
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, b.data, b.len, NULL, NULL) != MCP_OK)
        abort();
    const mcp_json *arr = mcp_json_doc_root(d);
    if (mcp_json_typeof(arr) != MCP_JSON_ARRAY || mcp_json_len(arr) != r->count)
        abort();
    for (size_t i = 0; i < r->count; i++) {
        const mcp_json *o = mcp_json_at(arr, i);
        check_string(o, "instancePath", r->errors[i].instance_path);
        check_string(o, "keywordPath", r->errors[i].keyword_path);
        check_string(o, "keyword", r->errors[i].keyword);
        check_string(o, "message", r->errors[i].message);
    }
    mcp_json_doc_free(d);
    mcp_buf_cleanup(&b);
}

static int same_error(const mcp_schema_error *a, const mcp_schema_error *b)
{
    return strcmp(a->instance_path, b->instance_path) == 0 &&
           strcmp(a->keyword_path, b->keyword_path) == 0 && strcmp(a->message, b->message) == 0 &&
           strcmp(a->keyword, b->keyword) == 0;
}

/* err's strings end up in JSON-RPC errors, so they must stay valid UTF-8 when cut to fit. */
static void check_err_text(const mcp_error *err)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    if (mcp_json_quote(&b, err->message, strlen(err->message)) != MCP_OK ||
        mcp_json_quote(&b, err->pointer, strlen(err->pointer)) != MCP_OK)
        abort();
    mcp_buf_cleanup(&b);
}

/* The err detail of an invalid value repeats the first violation (cut to fit). */
static void check_err_matches(const mcp_error *err, const mcp_schema_error *first)
{
    if (err->status != MCP_ERR_INVALID)
        abort();
    check_err_text(err);
    size_t n = strlen(err->pointer);
    if (strncmp(err->pointer, first->instance_path, n) != 0 ||
        (strlen(first->instance_path) < sizeof(err->pointer) && first->instance_path[n] != '\0'))
        abort();
    n = strlen(err->message);
    if (n == 0 || strncmp(err->message, first->message, n) != 0)
        abort();
}

static void run_instance(const mcp_schema *s, const mcp_json *inst, size_t max_errors)
{
    mcp_error e1, e2, e3;
    mcp_schema_result *first = NULL, *full = NULL;

    mcp_status st_check = mcp_schema_check(s, inst, &e1);
    mcp_status st_first = mcp_schema_validate(s, inst, MCP_SCHEMA_FIRST_ERROR, &first, &e2);
    mcp_status st_full = mcp_schema_validate(s, inst, 0, &full, &e3);
    /* Without a report list the first violation goes to err only. */
    mcp_status st_noout = mcp_schema_validate(s, inst, 0, NULL, NULL);

    if (st_check != MCP_OK && st_check != MCP_ERR_INVALID && st_check != MCP_ERR_LIMIT)
        abort();
    /* The yes/no pass and the first-error pass walk the same keywords in the
       same order up to the first violation, so they spend the same steps and
       must give the same answer, limits included. */
    if (st_first != st_check || st_noout != st_check)
        abort();
    /* The full pass goes on after the first violation and may then run out
       of steps; before it, it did exactly what the others did. */
    if (st_check == MCP_ERR_INVALID ? (st_full != MCP_ERR_INVALID && st_full != MCP_ERR_LIMIT)
                                    : st_full != st_check)
        abort();

    if (st_first == MCP_ERR_INVALID) {
        check_report(first, max_errors, 1);
        check_err_matches(&e1, &first->errors[0]);
        check_err_matches(&e2, &first->errors[0]);
    } else if (first) {
        abort();
    }
    if (st_full == MCP_ERR_INVALID) {
        check_report(full, max_errors, 0);
        if (!same_error(&full->errors[0], &first->errors[0]))
            abort();
        check_err_matches(&e3, &full->errors[0]);
    } else if (full) {
        abort();
    }
    if (st_check == MCP_ERR_LIMIT && (e1.status != MCP_ERR_LIMIT || e2.status != MCP_ERR_LIMIT))
        abort();
    if (st_full == MCP_ERR_LIMIT && e3.status != MCP_ERR_LIMIT)
        abort();
    if (st_check == MCP_ERR_LIMIT)
        check_err_text(&e1);
    mcp_schema_result_free(first);
    mcp_schema_result_free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const char *nul = memchr(text, '\0', len);
    size_t slen = nul ? (size_t)(nul - text) : len;

    mcp_json_parse_opts po;
    memset(&po, 0, sizeof(po));
    po.max_depth = 64;
    po.flags = (flags & 8u) ? MCP_JSON_REJECT_DUPLICATES : 0;
    mcp_json_doc *sdoc = NULL, *idoc = NULL;
    if (mcp_json_parse(&sdoc, text, slen, &po, NULL) != MCP_OK)
        return 0;
    if (nul && mcp_json_parse(&idoc, nul + 1, len - slen - 1, &po, NULL) != MCP_OK) {
        mcp_json_doc_free(sdoc);
        return 0;
    }

    mcp_schema_opts o;
    memset(&o, 0, sizeof(o));
    o.flags = (flags & 1u) ? MCP_SCHEMA_FORMAT_ASSERT : 0;
    o.default_dialect = (flags & 2u) ? MCP_SCHEMA_DIALECT_DRAFT7 : MCP_SCHEMA_DIALECT_2020_12;
    o.max_depth = FZ_MAX_DEPTH;
    o.max_nodes = FZ_MAX_NODES;
    o.max_steps = FZ_MAX_STEPS;
    o.max_eval_depth = FZ_MAX_EVAL_DEPTH;
    o.max_errors = (flags & 4u) ? 2 : 0;
    size_t max_errors = o.max_errors ? o.max_errors : MCP_SCHEMA_DEFAULT_MAX_ERRORS;

    mcp_schema *s = NULL;
    mcp_error err;
    mcp_status st = mcp_schema_new(&s, mcp_json_doc_root(sdoc), &o, &err);
    if (st != MCP_OK) {
        if (s || (st != MCP_ERR_SCHEMA && st != MCP_ERR_UNSUPPORTED && st != MCP_ERR_LIMIT))
            abort();
        if (err.status != st || !err.message[0])
            abort();
        check_err_text(&err);
    } else {
        /* The compiled schema must not borrow from the documents it was given. */
        const mcp_json *inst = idoc ? mcp_json_doc_root(idoc) : mcp_json_doc_root(sdoc);
        if (idoc) {
            mcp_json_doc_free(sdoc);
            sdoc = NULL;
        }
        run_instance(s, inst, max_errors);
        mcp_schema_free(s);
    }
    mcp_json_doc_free(sdoc);
    mcp_json_doc_free(idoc);
    return 0;
}
