/*
 * Applying a node's keywords to an instance: v_node's keyword loop and the
 * applicators, the keywords that apply subschemas, to the instance itself
 * ("in place": `$ref`, `$dynamicRef`, allOf, anyOf, oneOf, not, if/then/else,
 * dependentSchemas, their annotations joining the node's) or to its
 * members and items (properties, patternProperties, additionalProperties,
 * propertyNames, prefixItems, items, contains, unevaluatedItems,
 * unevaluatedProperties). The value checks are in schema_check.c.
 *
 * v_node is a dispatcher: one function per keyword family, each given the
 * node's frame (vframe). The applicators and v_node are one recursion
 * (v_node -> applicator -> v_child -> v_node), so they live together, as
 * static functions of this file called from v_node only, which the
 * compiler is free to inline there.
 *
 * A node is a short list of keywords (type checks first, applicators
 * later, unevaluated* last), each tagged with the instance types it looks
 * at, so a keyword that does not apply costs one test. Paths for the
 * report are linked lists living on the C stack; they are turned into
 * strings only when a violation is reported (schema_report.c), so a valid
 * instance costs no allocation. Annotations for unevaluatedProperties and
 * unevaluatedItems are bitsets over the instance's members (evals), kept
 * only below a node that has such a keyword.
 *
 * Sub-evaluations whose failure does not make the whole instance invalid
 * (`anyOf`/`oneOf` branches, `not`, `if`, `contains`, `propertyNames`) run
 * in quiet mode: yes/no, no report, stop at the first failure. When such a
 * keyword does fail, the branches are evaluated again with reporting on,
 * so the report says why each alternative was rejected.
 *
 * After a failure a keyword goes on only while v_fail_stops() says no (to
 * report more violations); an item or member that failed is still marked
 * evaluated then, as it was looked at.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>

/* The keyword's own path segment, for subschemas and reports that use it. */
#define KSEG(f, k) {(f)->kp, (k)->tok, (k)->nlen + 1, 1}

/* ======================================================================== */
/* Annotations                                                               */

static int ev_init(vctx *c, evals *e, size_t n)
{
    size_t bytes = (n + 7) / 8;
    e->n = n;
    if (bytes <= sizeof(e->local)) {
        e->bits = e->local;
        memset(e->local, 0, sizeof(e->local));
        return 1;
    }
    e->bits = (unsigned char *)mcp__calloc(bytes, 1);
    if (!e->bits) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory during validation");
        return 0;
    }
    return 1;
}

static void ev_free(evals *e)
{
    if (e->bits && e->bits != e->local)
        mcp_free(e->bits);
    e->bits = NULL;
}

static void ev_merge(evals *dst, const evals *src)
{
    size_t bytes = (dst->n + 7) / 8;
    for (size_t i = 0; i < bytes; i++)
        dst->bits[i] |= src->bits[i];
}

/* ======================================================================== */
/* In-place evaluation and `$ref`                                            */

/* Validates an in-place subschema (same instance), keeping its annotations if it passes. */
int mcp__v_inplace(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                   evals *cur, int quiet, const dscope *ds)
{
    if (!cur || n->leaf || n->is_bool)
        return v_child(c, n, iv, ip, kp, quiet, ds);
    if (n->refonly && !c->dyn)
        return mcp__v_refonly(c, n, iv, ip, kp, cur, quiet, ds);
    evals tmp;
    if (!ev_init(c, &tmp, cur->n))
        return 0;
    int ok = mcp__v_node(c, n, iv, ip, kp, &tmp, quiet, ds);
    if (ok)
        ev_merge(cur, &tmp);
    ev_free(&tmp);
    return ok;
}

/*
 * A subschema whose only keyword is `$ref` (the way `$defs` are used),
 * evaluated without a v_node frame of its own: it still counts a step and
 * a nesting level, and its target's annotations pass through, exactly as
 * v_node would do. Not used with $dynamicRef, where entering the node's
 * resource matters to the dynamic scope.
 */
int mcp__v_refonly(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                   evals *cur, int quiet, const dscope *ds)
{
    if (!v_enter(c))
        return 0;
    c->depth++;
    const kw *k = &n->kws[0];
    pseg kseg = {kp, k->tok, k->nlen + 1, 1};
    int ok = mcp__v_inplace(c, k->u.ref.target, iv, ip, &kseg, cur, quiet, ds);
    c->depth--;
    return ok && !c->status;
}

/* `$ref`: its target, in place. */
static int v_ref(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    return mcp__v_inplace(c, k->u.ref.target, f->iv, f->ip, &kseg, f->cur, f->quiet, f->ds);
}

/* `$dynamicRef`: its static target, or the dynamic scope's when it names a dynamic anchor. */
static int v_dynref(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    const node *t = k->u.ref.target;
    if (k->u.ref.dynamic) {
        /* The outermost resource in scope with this dynamic anchor wins. */
        for (const dscope *d = f->ds; d; d = d->up)
            for (size_t i = 0; i < d->res->ndyn; i++)
                if (d->res->dyn[i].name.n == k->u.ref.anchor.n &&
                    memcmp(d->res->dyn[i].name.s, k->u.ref.anchor.s, k->u.ref.anchor.n) == 0)
                    t = d->res->dyn[i].n;
    }
    return mcp__v_inplace(c, t, f->iv, f->ip, &kseg, f->cur, f->quiet, f->ds);
}

/* ======================================================================== */
/* Arrays                                                                    */

/* prefixItems (draft-07: items as an array). */
static int v_prefix(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    size_t len = mcp_json_len(f->iv->v);
    int ok = 1;
    for (size_t i = 0; i < k->u.list.n && i < len; i++) {
        pseg is = {f->ip, NULL, i, 0}, ks = {&kseg, NULL, i, 0};
        ival ci = {mcp_json_at(f->iv->v, i), NULL, 0};
        if (!v_child(c, k->u.list.v[i], &ci, &is, &ks, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
        ev_mark(f->cur, i);
    }
    return ok;
}

/* items (draft-07: additionalItems, or items as one schema): the items from u.items.start on. */
static int v_items(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    size_t len = f->iv->v->len;
    const node *sub = k->u.items.sub;
    int ok = 1;
    for (size_t i = k->u.items.start; i < len; i++) {
        pseg is = {f->ip, NULL, i, 0};
        ival ci = {&j_elems(f->iv->v)[i], NULL, 0};
        if (sub->is_bool && !sub->bool_val) {
            if (!f->quiet)
                mcp__say_no_item(c, &is, f->kp, k);
            return 0;
        }
        if (!v_child(c, sub, &ci, &is, &kseg, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
        ev_mark(f->cur, i);
    }
    return ok;
}

/* contains, with minContains and maxContains: how many items match, quietly. */
static int v_contains(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    size_t len = mcp_json_len(f->iv->v), hits = 0;
    for (size_t i = 0; i < len; i++) {
        pseg is = {f->ip, NULL, i, 0};
        ival ci = {mcp_json_at(f->iv->v, i), NULL, 0};
        int m = v_child(c, k->u.contains.sub, &ci, &is, &kseg, 1, f->ds);
        if (c->status)
            return 0;
        if (m) {
            hits++;
            if (f->n->dialect == D_2020)
                ev_mark(f->cur, i);
            /* Without annotations to collect, stop once the answer is known. */
            if (!f->cur && !k->u.contains.has_max && hits >= k->u.contains.min)
                break;
        }
    }
    if (hits >= k->u.contains.min && !(k->u.contains.has_max && hits > k->u.contains.max))
        return 1;
    if (!f->quiet)
        mcp__say_contains(c, f->ip, f->kp, k, hits);
    return 0;
}

/* ======================================================================== */
/* Objects                                                                   */

/*
 * A member against its `properties` entry e. The usual property schema is
 * a leaf: it is tried before building the paths only a report needs (as
 * v_child does, rewinding the steps before reporting).
 */
static int props_entry(vctx *c, const vframe *f, const propent *e, const ival *ci,
                       const pseg *is)
{
    const node *cn = e->n;
    if (cn->leaf) {
        uint64_t steps = c->steps;
        int pass = v_leaf(c, cn, ci);
        if (!pass && !f->quiet && !c->status) {
            c->steps = steps;
            pseg k2 = {f->kp, e->kptok.s, e->kptok.n, 1};
            pass = mcp__v_node(c, cn, ci, is, &k2, NULL, f->quiet, f->ds);
        }
        return pass;
    }
    pseg k2 = {f->kp, e->kptok.s, e->kptok.n, 1};
    return v_child(c, cn, ci, is, &k2, f->quiet, f->ds);
}

/* A member against every `patternProperties` entry its name matches (*matched set if one does). */
static int props_patterns(vctx *c, const vframe *f, const props *pr, const mcp__member *m,
                          const pseg *is, int *matched)
{
    ival ci = {&m->value, NULL, 0};
    int ok = 1;
    for (size_t p = 0; p < pr->npats; p++) {
        int r = mcp__re_match(c, &pr->pats[p].re, m->key, m->klen);
        if (r < 0)
            return 0;
        if (!r)
            continue;
        *matched = 1;
        pseg k1 = {f->kp, "patternProperties", 17, 0},
             k2 = {&k1, pr->pats[p].re.src.s, pr->pats[p].re.src.n, 0};
        if (!v_child(c, pr->pats[p].n, &ci, is, &k2, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
    }
    return ok;
}

/*
 * properties, patternProperties and additionalProperties, member by
 * member: each member goes to its `properties` entry, to every pattern
 * that matches its name, and to additionalProperties when neither did.
 */
static int v_props(vctx *c, const vframe *f, const kw *k)
{
    const props *pr = k->u.pr;
    size_t cnt = f->iv->v->len, hint = 0;
    const mcp__member *mem = j_members(f->iv->v);
    int ok = 1;
    for (size_t i = 0; i < cnt; i++) {
        size_t kn = mem[i].klen;
        const char *key = mem[i].key;
        ival ci = {&mem[i].value, NULL, 0};
        pseg is = {f->ip, key, kn, 0};
        int matched = 0;
        const propent *e = pr->n ? prop_find(pr, key, kn, &hint) : NULL;
        if (e) {
            matched = 1;
            if (!props_entry(c, f, e, &ci, &is)) {
                ok = 0;
                if (v_fail_stops(c, f))
                    return 0;
            }
        }
        if (pr->npats && !props_patterns(c, f, pr, &mem[i], &is, &matched)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
        if (!matched && pr->add) {
            pseg k1 = {f->kp, "/additionalProperties", 21, 1};
            if (pr->add->is_bool && !pr->add->bool_val) {
                if (!f->quiet)
                    mcp__say_additional(c, &is, f->kp, k, key, kn);
                ok = 0;
                if (v_fail_stops(c, f))
                    return 0;
                continue;
            }
            if (!v_child(c, pr->add, &ci, &is, &k1, f->quiet, f->ds)) {
                ok = 0;
                if (v_fail_stops(c, f))
                    return 0;
            }
            matched = 1;
        }
        if (matched)
            ev_mark(f->cur, i);
    }
    return ok;
}

/* propertyNames: every member name, as a string instance, quietly. */
static int v_propnames(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    size_t cnt = mcp_json_len(f->iv->v);
    int ok = 1;
    for (size_t i = 0; i < cnt; i++) {
        size_t kn;
        const char *key = mcp_json_key_at(f->iv->v, i, &kn);
        ival ci = {NULL, key, kn};
        pseg is = {f->ip, key, kn, 0};
        if (!v_child(c, k->u.sub, &ci, &is, &kseg, 1, f->ds)) {
            if (c->status)
                return 0;
            if (!f->quiet)
                mcp__say_propname(c, f->ip, f->kp, key, kn);
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
    }
    return ok;
}

/* dependentSchemas (and the schema half of draft-07 `dependencies`). */
static int v_depschemas(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    int ok = 1;
    for (size_t i = 0; i < k->u.depsch.n; i++) {
        const depsch *d = &k->u.depsch.v[i];
        if (!j_has(f->iv->v, d->key.s, d->key.n))
            continue;
        pseg ks = {&kseg, d->key.s, d->key.n, 0};
        if (!mcp__v_inplace(c, d->n, f->iv, f->ip, &ks, f->cur, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
    }
    return ok;
}

/* ======================================================================== */
/* In place: allOf, anyOf, oneOf, not, if                                    */

/* allOf: every subschema, in place. */
static int v_allof(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    int ok = 1;
    for (size_t i = 0; i < k->u.list.n; i++) {
        pseg ks = {&kseg, NULL, i, 0};
        if (!mcp__v_inplace(c, k->u.list.v[i], f->iv, f->ip, &ks, f->cur, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
    }
    return ok;
}

/* anyOf and oneOf: the subschemas in place, quietly; the report says why each failed. */
static int v_anyof_oneof(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    size_t hits = 0, first = 0, second = 0;
    for (size_t i = 0; i < k->u.list.n; i++) {
        pseg ks = {&kseg, NULL, i, 0};
        int m = mcp__v_inplace(c, k->u.list.v[i], f->iv, f->ip, &ks, f->cur, 1, f->ds);
        if (c->status)
            return 0;
        if (m) {
            if (hits == 0)
                first = i;
            else if (hits == 1)
                second = i;
            hits++;
            /* anyOf may stop at the first match unless annotations are collected;
               oneOf may stop at the second. */
            if ((k->op == K_ANYOF && !f->cur) || (k->op == K_ONEOF && hits > 1 && !f->cur))
                break;
        }
    }
    if (hits == 0) {
        if (!f->quiet) {
            mcp__say_none_matches(c, f->ip, f->kp, k);
            /* Say why each alternative failed. */
            for (size_t i = 0; i < k->u.list.n && c->report && !c->stop; i++) {
                pseg ks = {&kseg, NULL, i, 0};
                v_child(c, k->u.list.v[i], f->iv, f->ip, &ks, 0, f->ds);
            }
        }
        return 0;
    }
    if (k->op == K_ONEOF && hits > 1) {
        if (!f->quiet)
            mcp__say_oneof_many(c, f->ip, f->kp, k, hits, first, second);
        return 0;
    }
    return 1;
}

/* not: the subschema, quietly, must fail. */
static int v_not(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    int m = v_child(c, k->u.sub, f->iv, f->ip, &kseg, 1, f->ds);
    if (c->status)
        return 0;
    if (!m)
        return 1;
    if (!f->quiet)
        mcp__say_not(c, f->ip, f->kp);
    return 0;
}

/* if, quietly and in place, then `then` or `else`. */
static int v_if(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    /* A lone `if` only matters for the annotations it contributes. */
    if (!k->u.cond.then_ && !k->u.cond.else_ && !f->cur)
        return 1;
    int m = mcp__v_inplace(c, k->u.cond.if_, f->iv, f->ip, &kseg, f->cur, 1, f->ds);
    if (c->status)
        return 0;
    const node *br = m ? k->u.cond.then_ : k->u.cond.else_;
    if (!br)
        return 1;
    pseg ks = {f->kp, m ? "then" : "else", 4, 0};
    return mcp__v_inplace(c, br, f->iv, f->ip, &ks, f->cur, f->quiet, f->ds);
}

/* ======================================================================== */
/* unevaluatedItems, unevaluatedProperties                                  */

/*
 * unevaluatedItems or unevaluatedProperties: the items or members no other
 * keyword of the node evaluated (f->cur), against the keyword's schema.
 */
static int v_unevaluated(vctx *c, const vframe *f, const kw *k)
{
    pseg kseg = KSEG(f, k);
    const mcp_json *v = f->iv->v; /* an array or an object, as k->applies says */
    const mcp__member *mem = k->op == K_UNEV_PROPS ? j_members(v) : NULL;
    const node *sub = k->u.sub;
    int ok = 1;
    for (size_t i = 0; i < v->len; i++) {
        if (ev_has(f->cur, i))
            continue;
        pseg is = mem ? (pseg){f->ip, mem[i].key, mem[i].klen, 0} : (pseg){f->ip, NULL, i, 0};
        ival ci = {mem ? &mem[i].value : &j_elems(v)[i], NULL, 0};
        if (sub->is_bool && !sub->bool_val) {
            if (!f->quiet)
                mcp__say_unevaluated(c, &is, f->kp, k, mem ? mem[i].key : NULL,
                                     mem ? mem[i].klen : 0);
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
            continue;
        }
        if (!v_child(c, sub, &ci, &is, &kseg, f->quiet, f->ds)) {
            ok = 0;
            if (v_fail_stops(c, f))
                return 0;
        }
        ev_mark(f->cur, i);
    }
    return ok;
}

/* ======================================================================== */
/* The keyword loop                                                          */

/* One keyword of a node, by family: 1 when it holds, 0 when it fails. */
static int v_keyword(vctx *c, const vframe *f, const kw *k)
{
    switch (k->op) {
    case K_REF:
        return v_ref(c, f, k);
    case K_DYNREF:
        return v_dynref(c, f, k);
    case K_PREFIX:
        return v_prefix(c, f, k);
    case K_ITEMS:
        return v_items(c, f, k);
    case K_CONTAINS:
        return v_contains(c, f, k);
    case K_PROPS:
        return v_props(c, f, k);
    case K_PROPNAMES:
        return v_propnames(c, f, k);
    case K_DEPSCHEMAS:
        return v_depschemas(c, f, k);
    case K_ALLOF:
        return v_allof(c, f, k);
    case K_ANYOF:
    case K_ONEOF:
        return v_anyof_oneof(c, f, k);
    case K_NOT:
        return v_not(c, f, k);
    case K_IF:
        return v_if(c, f, k);
    case K_UNEV_ITEMS:
    case K_UNEV_PROPS:
        return v_unevaluated(c, f, k);
    default: /* the value checks: type, enum, ..., required, dependentRequired */
        return v_value(c, f, k);
    }
}

/*
 * The keywords of f->n that apply to the instance, in order. A failure
 * ends the loop in quiet mode; otherwise the loop goes on (to report more)
 * until the validation is stopping.
 */
static int v_keywords(vctx *c, const vframe *f)
{
    int ok = 1;
    for (unsigned ki = 0; ki < f->n->nkw; ki++) {
        const kw *k = &f->n->kws[ki];
        if (!(k->applies & f->tb))
            continue;
        if (!v_keyword(c, f, k)) {
            ok = 0;
            if (f->quiet)
                break;
        }
        if (c->stop || c->status)
            return 0;
    }
    return ok;
}

/*
 * A node is a short list of keywords (type checks first, applicators
 * later, unevaluated* last), each tagged with the instance types it looks
 * at, so a keyword that does not apply costs one test. A node with
 * unevaluated* keeps its own set of the members or items evaluated (own),
 * merged into the caller's (ev) when the node holds. The node's resource
 * joins the dynamic scope when $dynamicRef is in use.
 */
int mcp__v_node(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp,
                evals *ev, int quiet, const dscope *ds)
{
    if (n->is_bool) {
        if (n->bool_val)
            return 1;
        if (!quiet)
            mcp__say_false(c, ip, kp);
        return 0;
    }
    if (!v_enter(c))
        return 0;
    c->depth++;
    dscope here;
    if (c->dyn && (!ds || ds->res != n->res)) {
        here.up = ds;
        here.res = n->res;
        ds = &here;
    }
    vframe f = {n, iv, ip, kp, ev, ds, ival_type_bits(iv), quiet};
    evals own;
    own.bits = NULL;
    if (n->uneval & f.tb & (T_OBJ | T_ARR)) {
        if (!ev_init(c, &own, iv->v->len)) {
            c->depth--;
            return 0;
        }
        f.cur = &own;
    }
    int ok = v_keywords(c, &f);
    if (f.cur == &own) {
        if (ok && ev)
            ev_merge(ev, &own);
        ev_free(&own);
    }
    c->depth--;
    return ok && !c->status;
}

