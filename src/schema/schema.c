/*
 * JSON Schema compiler and validator (2020-12 by default, draft-07 when
 * `$schema` says so): mcp_schema_new and mcp_schema_free, and how the
 * layer works. schema_internal.h lists the files and the types they share.
 *
 * How it works
 *
 *   Compile (this file, schema_resolve.c, schema_compile.c, schema_plan.c).
 *   The schema (and every registry document it refers to) is first
 *   deep-copied into documents the compiled schema owns, so nothing borrowed
 *   outlives the call. A discovery walk then visits every subschema position
 *   the dialect defines (keyword aware, so `$id` inside `enum` or inside an
 *   unknown keyword is not an identifier), computing each one's base URI and
 *   schema resource, and indexing resource URIs and anchors. Each subschema
 *   gets one `node`, keyed by its JSON value, so a schema reached twice (or
 *   recursively) is compiled once. Nodes are compiled from a worklist, not by
 *   recursion: a node's keyword list holds direct pointers to the nodes of its
 *   subschemas and `$ref` targets, and cycles are just pointers. Once every
 *   node is compiled, each is finished: keyword path tokens, the constant
 *   parts of its messages, the plan of a flat object.
 *
 *   Validate (schema_validate.c, schema_apply.c, schema_check.c). A node is
 *   a short list of keywords (type checks first, applicators later,
 *   `unevaluated*` last), each tagged with the instance types it looks at,
 *   so a keyword that does not apply costs one test. Paths for the report
 *   are linked lists living on the C stack; they are turned into strings only
 *   when a violation is reported, so a valid instance costs no allocation.
 *   Annotations for `unevaluatedProperties` and `unevaluatedItems` are
 *   bitsets over the instance's members, kept only below a node that has
 *   such a keyword.
 *
 *   Sub-evaluations whose failure does not make the whole instance invalid
 *   (`anyOf`/`oneOf` branches, `not`, `if`, `contains`, `propertyNames`) run
 *   in quiet mode: yes/no, no report, stop at the first failure. When such a
 *   keyword does fail, the branches are evaluated again with reporting on,
 *   so the report says why each alternative was rejected.
 *
 *   Fast paths (bench/schema measures them against ajv). The node kinds
 *   most tool schemas are made of are evaluated without the general
 *   interpreter: leaves (value checks only), flat objects (type, required,
 *   min/maxProperties, properties, additionalProperties) and `{"$ref": ...}`
 *   wrappers. They always run quietly first; only when one fails and a
 *   report is wanted is it evaluated again with reporting on (v_node, or
 *   v_flat_report for a flat node), with the step count rewound, so every
 *   path does the same work in the same order and meets the same limits.
 *
 *   A flat node whose member schemas are all simple leaves or booleans
 *   (the usual tool input schema) gets a plan at compile time (fplan,
 *   lfast): its members are looked up once, `required` is a bit mask over
 *   the `properties` entries, string enums are sets, integer bounds are one
 *   range, and the steps every member can take are known in advance, so
 *   when they fit under the limits the loop checks none (it still counts
 *   them exactly). Everything such a plan checks is free of side effects
 *   but for its step count, which is why its order may differ from the
 *   keyword list's where nothing can tell. run() takes it for a flat root
 *   without setting up a validation context at all (schema_flat.c).
 *
 *   Short anchored patterns of ASCII classes are matched without PCRE2
 *   (which still compiles them, so both agree on what is valid; fuzz builds
 *   check every such match against PCRE2); fixed-length ones eight bytes at
 *   a time (schema_regex.c). A report is put together in the call's own
 *   storage and copied into one allocation at the end: a valid value
 *   allocates nothing, an invalid one (usually) once. The constant parts of
 *   messages (the allowed values, the declared properties, the types
 *   wanted, keyword path tokens) are made at compile time (schema_report.c,
 *   schema_plan.c).
 *
 *   The validator's hot helpers (v_child, v_leaf, the value checks, the
 *   byte comparisons) are static inline in schema_internal.h, so they are
 *   inlined in every file that uses them, as when all of this was one file.
 */
#include "mcp/schema.h"
#include "util/abi.h"
#include "util/util.h"
#include "json/json_internal.h"
#include "schema/schema_internal.h"

void mcp_schema_free(mcp_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncodes; i++)
        pcre2_code_free(s->codes[i]);
    mcp_free(s->codes);
    pcre2_match_data *md = atomic_load(&s->md_cache);
    pcre2_match_data_free(md);
    pcre2_match_context_free(s->mctx);
    pcre2_general_context_free(s->gctx);
    for (size_t i = 0; i < s->ndocs; i++)
        mcp_json_doc_free(s->docs[i]);
    mcp_free(s->docs);
    mcp_free(s->resv);
    mcp__ar_free(&s->ar);
    mcp_free(s);
}

/*
 * The discovery walk of the root document: every subschema gets its node,
 * and every node of the document is queued, used or not, so a broken
 * `$ref` anywhere in it is reported now.
 */
static mcp_status discover(comp *c, const mcp_json *root, const char *base, unsigned dialect)
{
    mcp_status st = mcp__walk(c, root, base, NULL, dialect, V_ALL_2020, 0, 1, 1);
    if (!st && c->loc.nomem)
        st = mcp__comp_nomem(c);
    if (st)
        return st;
    c->s->root = mcp__map_get(c, root);
    /* Document order (not the table's, which follows addresses) makes the
       error reported for a schema with several the same on every run. */
    for (node *x = c->chead; x; x = x->cnext)
        if (x->res->in_root_doc)
            mcp__enqueue(c, x);
    return MCP_OK;
}

/*
 * The compile pipeline once the options are read: PCRE2 contexts, the
 * document copy, the discovery walk, the worklist of nodes, the dynamic
 * anchors, finishing every node, and a match block up front.
 */
static mcp_status compile_schema(comp *c, const mcp_json *schema, const char *base_uri,
                                 unsigned dialect)
{
    mcp_schema *s = c->s;
    mcp_json_doc *d = NULL;
    const char *base = "";
    mcp_status st = mcp__re_contexts(c);
    if (!st)
        st = mcp__copy_doc(&d, schema, c->err);
    if (!st)
        st = mcp__own_doc(c, d);
    if (!st && base_uri) {
        base = mcp__ar_strndup(&s->ar, base_uri, mcp__uri_nofrag_len(base_uri));
        if (!base)
            st = mcp__comp_nomem(c);
    }
    if (!st)
        st = discover(c, mcp_json_doc_root(d), base, dialect);
    while (!st && c->qhead) {
        node *n = c->qhead;
        c->qhead = n->qnext;
        if (!c->qhead)
            c->qtail = NULL;
        st = mcp__compile_node(c, n);
    }
    if (!st)
        st = mcp__link_dynamic(c);
    for (node *x = c->chead; x && !st; x = x->cnext)
        st = mcp__finish_node(c, x);
    if (!st && s->ncodes) {
        /* One match block up front, so a validation on one thread allocates
           nothing for patterns; concurrent calls make their own. */
        pcre2_match_data *md = pcre2_match_data_create(1, s->gctx);
        if (!md)
            st = mcp__comp_nomem(c);
        else
            atomic_store(&s->md_cache, md);
    }
    return st;
}

mcp_status mcp_schema_new_sized(mcp_schema **out, const mcp_json *schema, const mcp_schema_opts *opts,
                                size_t opts_size, mcp_error *err)
{
    mcp_schema_opts o;
    mcp_status ost = MCP__OPTS_IN(mcp_schema_opts, &o, opts, opts_size, err);
    if (ost)
        return ost;
    if (!out || !schema)
        return mcp__fail_at(err, MCP_ERR_INVALID_ARG, NULL, "out and schema are required");
    if (o.default_dialect > MCP_SCHEMA_DIALECT_DRAFT7 || o.max_depth > MCP_SCHEMA_LIMIT_MAX_DEPTH ||
        o.max_eval_depth > MCP_SCHEMA_LIMIT_MAX_EVAL_DEPTH)
        return mcp__fail_at(err, MCP_ERR_INVALID_ARG, NULL, "schema option out of range");
    mcp_json_type t = mcp_json_typeof(schema);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return mcp__fail_at(err, MCP_ERR_SCHEMA, "",
                            "a schema must be an object or a boolean, not %s",
                            mcp_json_type_name(t));

    mcp_schema *s = (mcp_schema *)mcp__calloc(1, sizeof(*s));
    if (!s)
        return mcp__fail_at(err, MCP_ERR_NOMEM, NULL, "out of memory compiling the schema");
    atomic_init(&s->md_cache, NULL);
    s->max_steps = o.max_steps ? o.max_steps : MCP_SCHEMA_DEFAULT_MAX_STEPS;
    s->max_eval_depth = o.max_eval_depth ? o.max_eval_depth : MCP_SCHEMA_DEFAULT_MAX_EVAL_DEPTH;
    s->max_errors = o.max_errors ? o.max_errors : MCP_SCHEMA_DEFAULT_MAX_ERRORS;
    s->format_assert = (o.flags & MCP_SCHEMA_FORMAT_ASSERT) != 0;

    comp c;
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.reg = o.registry;
    c.err = err;
    c.max_depth = o.max_depth ? o.max_depth : MCP_SCHEMA_DEFAULT_MAX_DEPTH;
    c.max_nodes = o.max_nodes ? o.max_nodes : MCP_SCHEMA_DEFAULT_MAX_NODES;
    c.loc_prefix = "";
    sb_dyn(&c.loc);

    mcp_status st = compile_schema(&c, schema, o.base_uri,
                                   o.default_dialect == MCP_SCHEMA_DIALECT_DRAFT7 ? D_7 : D_2020);
    mcp_free(c.map);
    mcp_free(c.ids);
    sb_release(&c.loc);
    if (st) {
        if (st == MCP_ERR_INTERNAL)
            mcp__fail_at(err, st, NULL, "internal error compiling the schema");
        mcp_schema_free(s);
        return st;
    }
    *out = s;
    return MCP_OK;
}
