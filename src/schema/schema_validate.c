/*
 * One validation: run() behind mcp_schema_check and mcp_schema_validate,
 * the call's state (vctx) and its hard failures (limits, memory). run()
 * takes the flat fast loop for the usual tool input schema without setting
 * up a context at all; otherwise it evaluates the root (v_child, v_node in
 * schema_apply.c) and, for a report, puts it together at the end.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>

/* ======================================================================== */
/* The call's state                                                          */

/* Field by field: a memset of the whole context was a measurable share of a
   small validation. */
static void vctx_init(vctx *c, const mcp_schema *s)
{
    c->s = s;
    c->steps = 0;
    c->max_steps = s->max_steps;
    c->depth = 0;
    c->max_depth = s->max_eval_depth;
    c->dyn = s->uses_dynamic;
    c->status = MCP_OK;
    c->stop = 0;
    c->first_only = 0;
    c->report = 0;
    c->truncated = 0;
    c->recs = NULL;
    c->nrec = 0;
    c->reccap = 0;
    c->err = NULL;
    c->have_first = 0;
    c->md = NULL;
}

void mcp__hard_fail(vctx *c, mcp_status st, const char *fmt, ...)
{
    if (c->status)
        return;
    c->status = st;
    if (c->err) {
        va_list ap;
        va_start(ap, fmt);
        mcp__vfail(c->err, st, 0, 0, fmt, ap);
        va_end(ap);
        mcp__tidy_message(c->err);
    }
}

void mcp__v_limit(vctx *c)
{
    if (c->steps > c->max_steps)
        mcp__hard_fail(c, MCP_ERR_LIMIT, "validation needed more than %llu steps",
                       (unsigned long long)c->max_steps);
    else
        mcp__hard_fail(
            c, MCP_ERR_LIMIT,
            "validation nested deeper than %u levels (recursive schema or deep instance)",
            c->max_depth);
}

/* ======================================================================== */
/* One validation                                                            */

/* Returns the call's match block to the schema's one-slot cache. */
static void release_md(vctx *c)
{
    if (!c->md)
        return;
    pcre2_match_data *expected = NULL;
    if (!atomic_compare_exchange_strong(&((mcp_schema *)c->s)->md_cache, &expected, c->md))
        pcre2_match_data_free(c->md);
    c->md = NULL;
}

/*
 * run()'s shortcut for a flat root whose member schemas all have an lfast
 * (the usual tool input schema): what v_child -> v_flat would do in quiet
 * mode at the start of a call (steps 0, depth 0), without a context.
 * Returns 1 (valid), 0 (invalid; nothing was changed, nothing failed hard)
 * or -1 when the limits are too tight for the fast loop's bound.
 */
static int root_fast(const mcp_schema *s, const node *n, const mcp_json *inst)
{
    unsigned tb = json_type_bits[inst->type];
    /* v_flat's first step (max_steps >= 1) and depth (max_eval_depth >= 1) always pass. */
    if (n->nkw && n->kws[0].op == K_TYPE && !types_ok(n->kws[0].u.types, tb, inst))
        return 0;
    if (tb != T_OBJ)
        return 1;
    const fplan *fp = n->fp;
    if (!(fp->steps * (uint64_t)inst->len <= s->max_steps - 1 && 1 < s->max_eval_depth))
        return -1;
    uint64_t steps = 1;
    return mcp__flat_fast(fp, inst, &steps);
}

/*
 * One validation. With `outp`, violations are collected into a report,
 * returned there (NULL when there were none); the caller frees it.
 */
static mcp_status run(const mcp_schema *s, const mcp_json *inst, int quiet, int first_only,
                      mcp_schema_result **outp, mcp_error *err)
{
    const node *root = s->root;
    int known_bad = 0;
    if (root->fp && root->fp->fast && !s->uses_dynamic) {
        int r = root_fast(s, root, inst);
        if (r == 1)
            return MCP_OK;
        if (r == 0 && !outp && !err)
            return MCP_ERR_INVALID;
        /* Invalid, and a report or err wanted: the quiet pass that v_child
           (and, for a check, run itself) would make first has no effect when
           it fails, so the reporting pass starts at once. */
        known_bad = r == 0;
    }
    vctx c;
    vrec recs[VREC_LOCAL];
    char text[VTEXT_LOCAL];
    vctx_init(&c, s);
    c.first_only = first_only;
    c.err = err;
    if (outp) {
        c.report = 1;
        c.recs = recs;
        c.reccap = VREC_LOCAL;
        sb_stack(&c.text, text, sizeof(text));
    }
    ival iv = {inst, NULL, 0};
    int ok;
    if (!known_bad)
        ok = v_child(&c, root, &iv, NULL, NULL, quiet, NULL);
    else if (flat_report_fits(&c, root, &iv))
        ok = mcp__v_flat_report(&c, root, &iv, NULL, NULL);
    else
        ok = mcp__v_node(&c, root, &iv, NULL, NULL, NULL, 0, NULL);
    release_md(&c);
    if (outp) {
        if (!ok && !c.status && c.nrec)
            *outp = mcp__make_report(&c);
        sb_release(&c.text);
        if (c.reccap > VREC_LOCAL)
            mcp_free(c.recs);
    }
    if (c.status)
        return c.status;
    if (ok)
        return MCP_OK;
    if (quiet && err) {
        if (!known_bad) {
            /* The fast pass said no; run again to describe the first violation. */
            vctx_init(&c, s);
            c.first_only = 1;
            c.err = err;
            ok = mcp__v_node(&c, s->root, &iv, NULL, NULL, NULL, 0, NULL);
            release_md(&c);
            if (c.status)
                return c.status;
        }
        if (!c.have_first)
            mcp__fail_at(err, MCP_ERR_INVALID, "", "the value does not match the schema");
    }
    return MCP_ERR_INVALID;
}

mcp_status mcp_schema_check(const mcp_schema *s, const mcp_json *instance, mcp_error *err)
{
    if (!s || !instance)
        return mcp__fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema and instance are required");
    return run(s, instance, 1, 1, NULL, err);
}

mcp_status mcp_schema_validate(const mcp_schema *s, const mcp_json *instance, unsigned flags,
                               mcp_schema_result **out, mcp_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !instance)
        return mcp__fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema and instance are required");
    if (!out)
        return run(s, instance, 0, 1, NULL, err);
    /* The report is made at the end, only for an invalid value. */
    mcp_schema_result *r = NULL;
    mcp_status st = run(s, instance, 0, (flags & MCP_SCHEMA_FIRST_ERROR) != 0, &r, err);
    if (st == MCP_ERR_INVALID && r) {
        *out = r;
        return st;
    }
    mcp_schema_result_free(r);
    if (st == MCP_ERR_INVALID)
        return mcp__fail_at(err, MCP_ERR_INTERNAL, NULL, "validation failed without a violation");
    return st;
}
