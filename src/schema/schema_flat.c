/*
 * Flat objects: the node kind most tool input schemas are (only type,
 * required, min/maxProperties, properties and additionalProperties), run
 * without the general interpreter. A flat node whose member schemas are all
 * leaves with an lfast or booleans has a plan (fplan, schema_plan.c): its
 * members are looked up once, `required` is a bit mask over the
 * `properties` entries, and the steps every member can take are known in
 * advance, so when they fit under the limits the loop checks none (it still
 * counts them exactly). Everything such a plan checks is free of side
 * effects but for its step count, which is why its order may differ from
 * the keyword list's where nothing can tell. run() (schema_validate.c)
 * takes the fast loop for a flat root without a validation context.
 *
 * The fast paths always run quietly first; only when one fails and a
 * report is wanted is the node evaluated again with reporting on
 * (mcp__v_flat_report here, or v_node), with the step count rewound, so
 * every path does the same work in the same order and meets the same limits.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>

/* Most members v_flat's two-pass loop handles (it keeps their entries on the
   stack); larger objects take the general loop. */
#define FLAT_MEMBERS 32

/* ======================================================================== */
/* The fast loop                                                             */

/* The direct matcher on a `pattern` that has one (fuzz builds hold it to PCRE2's answer). */
static SCHEMA_INLINE int re_fast(const regex *re, const char *s, size_t n)
{
    int m = re->fast->blocks ? blocks_match(re->fast, s, n) : mcp__simple_match(re->fast, s, n);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (md) {
        int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, md, NULL);
        if ((rc >= 0 || rc == PCRE2_ERROR_NOMATCH) && (rc >= 0) != m)
            abort();
        pcre2_match_data_free(md);
    }
#endif
    return m;
}

/*
 * One member of the fast loop: does the value pass the leaf (or boolean)
 * schema `f`? Adds the steps it takes to *steps, as v_leaf counts them.
 * Nothing else changes, so a caller may take the steps back.
 */
static SCHEMA_INLINE int lf_ok(const lfast *f, const mcp_json *v, uint64_t *steps)
{
    unsigned tb = json_type_bits[v->type];
    *steps += f->steps;
    if (!types_ok(f->types, tb, v))
        return 0;
    if (!(f->more & tb))
        return 1;
    if (f->en && (tb != T_STR || !senum_has(f->en, (const char *)v->p, v->len)))
        return 0;
    if (tb == T_STR) {
        const char *sv = (const char *)v->p;
        size_t sn = v->len;
        /* Code points <= bytes: no count when the bytes already fit. */
        if (sn > f->maxlen && utf8_count(sv, sn) > f->maxlen)
            return 0;
        if (f->minlen && utf8_count(sv, sn) < f->minlen)
            return 0;
        if (f->re) {
            ++*steps;
            return re_fast(f->re, sv, sn);
        }
        return 1;
    }
    if (tb & T_NUM) {
        if ((tb & T_INT) && f->intlim)
            return v->u.i >= f->lo && v->u.i <= f->hi;
        for (unsigned i = 0; i < f->nnums; i++)
            if (num_fails(&f->nums[i], v))
                return 0;
    }
    return 1;
}

/* The same, out of line, for flat_fast (which tries the hint itself). */
static const propent *prop_find_rest(const props *pr, const char *k, size_t kn, size_t *hint)
{
    return prop_find_scan(pr, k, kn, hint);
}

/*
 * v_flat's fast loop: every member schema is an lfast, and the limits
 * cannot be met (the caller checked the bound). The members are looked up
 * and checked in one pass; `required` is answered at the end from the
 * entries seen, or, when a member fails first, by looking for the required
 * names not seen yet among the members. If `required` fails, the general
 * order would have stopped before any member, so their steps are not kept;
 * else they are added to *stepsp. Returns 1 (valid) or 0; nothing else changes.
 */
int mcp__flat_fast(const fplan *fp, const mcp_json *obj, uint64_t *stepsp)
{
    const mcp__member *mem = j_members(obj);
    size_t cnt = obj->len;
    if (cnt < fp->minp || cnt > fp->maxp)
        return 0;
    for (size_t i = 0; i < fp->nxreq; i++)
        if (!j_has(obj, fp->xreq[i].s, fp->xreq[i].n))
            return 0;
    const props *pr = fp->pr;
    const fent *fe = fp->fe;
    const lfast *addlf = fp->addlf;
    size_t np = pr->n;
    /* The entry after the previous match is tried first (members usually
       come in the schema's order); not with repeated keys (see prop_find). */
    size_t hint = pr->dups ? np : 0;
    uint64_t seen = 0, steps = 0;
    size_t i = 0;
    int ok = 1;
    for (; i < cnt; i++) {
        const mcp__member *m = &mem[i];
        const lfast *f = addlf;
        if (hint < np && fe[hint].n == m->klen && bytes_eq(fe[hint].key, m->key, m->klen)) {
            seen |= (uint64_t)1 << hint;
            f = fe[hint++].lf;
        } else if (np) {
            const propent *e = prop_find_rest(pr, m->key, m->klen, &hint);
            if (e) {
                size_t at = (size_t)(e - pr->ents);
                seen |= (uint64_t)1 << at;
                f = fe[at].lf;
            }
        }
        if (f && !lf_ok(f, &m->value, &steps)) {
            ok = 0;
            break;
        }
    }
    /* The required names no member looked at so far matched: present later? */
    uint64_t missing = fp->reqmask & ~seen;
    for (size_t b = 0; missing; b++, missing >>= 1)
        if ((missing & 1u) && (ok || !j_has(obj, fe[b].key, fe[b].n)))
            return 0;
    *stepsp += steps;
    return ok;
}

/* ======================================================================== */
/* Quiet evaluation                                                          */

/*
 * v_flat with a plan, for at most FLAT_MEMBERS members: each member looked
 * up once (answering `required` from the bit mask), then the members'
 * schemas in member order; the leaves only count their steps when the
 * bound says no limit can be met.
 */
static int flat_planned(vctx *c, const fplan *fp, const mcp_json *obj)
{
    const mcp__member *mem = j_members(obj);
    size_t cnt = obj->len;
    int ok = 1;
    if (cnt < fp->minp || cnt > fp->maxp)
        return 0;
    const props *pr = fp->pr;
    unsigned char which[FLAT_MEMBERS]; /* entry index + 1 of each member, 0: none */
    if (pr) {
        uint64_t seen = 0;
        size_t hint = 0;
        for (size_t i = 0; i < cnt; i++) {
            const propent *e = pr->n ? prop_find(pr, mem[i].key, mem[i].klen, &hint) : NULL;
            size_t at = e ? (size_t)(e - pr->ents) : 0;
            seen |= e ? (uint64_t)1 << at : 0;
            which[i] = (unsigned char)(e ? at + 1 : 0);
        }
        if ((seen & fp->reqmask) != fp->reqmask)
            return 0;
    }
    for (size_t i = 0; i < fp->nxreq; i++)
        if (!j_has(obj, fp->xreq[i].s, fp->xreq[i].n))
            return 0;
    if (!pr)
        return 1;
    c->depth++;
    int checked = !(fp->steps && fp->steps * cnt <= c->max_steps - c->steps &&
                    c->depth < c->max_depth);
    for (size_t i = 0; i < cnt && ok; i++) {
        const node *cn = which[i] ? pr->ents[which[i] - 1].n : pr->add;
        if (!cn)
            continue;
        ival ci = {&mem[i].value, NULL, 0};
        if (cn->leaf)
            ok = v_leaf_at(c, cn, &ci, checked);
        else if (cn->is_bool)
            ok = cn->bool_val;
        else
            ok = v_child(c, cn, &ci, NULL, NULL, 1, NULL);
    }
    c->depth--;
    return ok && !c->status;
}

/* v_flat without a plan (or with too many members): the keywords from ki on, in their order. */
static int flat_general(vctx *c, const node *n, unsigned ki, const mcp_json *obj)
{
    const mcp__member *mem = j_members(obj);
    size_t cnt = obj->len;
    int ok = 1;
    c->depth++;
    for (; ki < n->nkw && ok; ki++) {
        const kw *k = &n->kws[ki];
        switch (k->op) {
        case K_REQUIRED:
            for (size_t i = 0; i < k->u.req.n && ok; i++)
                ok = j_has(obj, k->u.req.names[i].s, k->u.req.names[i].n);
            break;
        case K_MINPROPS:
        case K_MAXPROPS:
            ok = !count_fails(k, cnt);
            break;
        case K_PROPS: { /* without patternProperties */
            const props *pr = k->u.pr;
            size_t hint = 0;
            for (size_t i = 0; i < cnt && ok; i++) {
                const propent *e = pr->n ? prop_find(pr, mem[i].key, mem[i].klen, &hint) : NULL;
                const node *cn = e ? e->n : pr->add;
                if (!cn)
                    continue;
                ival ci = {&mem[i].value, NULL, 0};
                ok = cn->leaf ? v_leaf(c, cn, &ci) : v_child(c, cn, &ci, NULL, NULL, 1, NULL);
            }
            break;
        }
        default: /* K_TYPE is always first (compile_node's order), handled by v_flat */
            break;
        }
    }
    c->depth--;
    return ok && !c->status;
}

/*
 * Quiet evaluation of a flat node (type, required, min/maxProperties,
 * properties, additionalProperties; the shape of most tool input schemas):
 * the same work, order and step accounting as v_node in quiet mode, in one
 * tight loop, with the property schemas that are leaves checked directly.
 * Only used where no annotations are collected and no dynamic scope is kept.
 *
 * With a plan (fplan), every member is looked up once: that answers
 * `required` (a bit mask), and then the members' schemas run in member
 * order. The checks before the members' schemas have no side effects, so
 * doing them in another order changes nothing. When every member schema
 * is a leaf or a boolean, the steps all of them can take are known before
 * the loop; when they fit under max_steps (and one more level fits under
 * max_eval_depth), no leaf can meet a limit, and the leaves only count
 * their steps instead of checking them.
 */
int mcp__v_flat(vctx *c, const node *n, const ival *iv)
{
    if (!v_enter(c))
        return 0;
    unsigned tb = ival_type_bits(iv);
    unsigned ki = 0;
    /* `type` comes first when present; everything after it looks at objects only. */
    if (n->nkw && n->kws[0].op == K_TYPE) {
        if (!type_ok(n->kws[0].u.types, tb, iv))
            return 0;
        ki = 1;
    }
    if (tb != T_OBJ)
        return 1;
    const mcp_json *obj = iv->v;
    size_t cnt = obj->len;
    const fplan *fp = n->fp;
    if (fp && fp->fast && fp->steps * cnt <= c->max_steps - c->steps &&
        c->depth + 1 < c->max_depth)
        return mcp__flat_fast(fp, obj, &c->steps);
    if (fp && cnt <= FLAT_MEMBERS)
        return flat_planned(c, fp, obj);
    return flat_general(c, n, ki, obj);
}

/* ======================================================================== */
/* Reporting                                                                 */

static int report_leaf(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp);

/*
 * The members of a flat node's `properties` keyword k, reporting: each
 * member's lfast is tried first without a frame; one that fails is
 * evaluated again to say why (its leaf by report_leaf, a boolean by
 * v_node), as v_node's own loop does after its quiet attempt.
 */
static int report_members(vctx *c, const vframe *f, const kw *k)
{
    const fplan *fp = f->n->fp;
    const props *pr = k->u.pr;
    size_t cnt = f->iv->v->len, hint = 0;
    const mcp__member *mem = j_members(f->iv->v);
    int ok = 1;
    for (size_t i = 0; i < cnt; i++) {
        size_t kn = mem[i].klen;
        const char *key = mem[i].key;
        const propent *e = pr->n ? prop_find(pr, key, kn, &hint) : NULL;
        const lfast *lf;
        const node *cn;
        if (e) {
            lf = fp->fe[e - pr->ents].lf;
            cn = e->n;
        } else if (pr->add) {
            lf = fp->addlf;
            cn = pr->add;
        } else {
            continue;
        }
        uint64_t steps = 0;
        if (lf_ok(lf, &mem[i].value, &steps)) {
            c->steps += steps;
            continue;
        }
        ival ci = {&mem[i].value, NULL, 0};
        pseg is = {f->ip, key, kn, 0};
        if (!e && cn->is_bool) {
            mcp__say_additional(c, &is, f->kp, k, key, kn);
        } else {
            pseg ks = e ? (pseg){f->kp, e->kptok.s, e->kptok.n, 1}
                        : (pseg){f->kp, "/additionalProperties", 21, 1};
            if (cn->is_bool)
                mcp__v_node(c, cn, &ci, &is, &ks, NULL, 0, NULL);
            else
                report_leaf(c, cn, &ci, &is, &ks);
        }
        ok = 0;
        if (c->stop || c->status)
            return 0;
    }
    return ok;
}

/*
 * The reporting evaluation of a flat node with a fast plan (`members`: its
 * properties go to report_members) or of one of its leaves (not
 * `members`): exactly what v_node does for it (no annotations, not quiet,
 * no dynamic scope), keyword by keyword and member by member. The caller
 * has made sure, as for the fast loop, that no step or depth limit can be
 * met here (flat_report_fits), so none is checked.
 */
static SCHEMA_INLINE int report_node(vctx *c, const node *n, const ival *iv, const pseg *ip,
                                     const pseg *kp, int members)
{
    int ok = 1;
    c->steps++;
    c->depth++;
    vframe f = {n, iv, ip, kp, NULL, NULL, ival_type_bits(iv), 0};
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (!(k->applies & f.tb))
            continue;
        if (!(members && k->op == K_PROPS ? report_members(c, &f, k) : v_value(c, &f, k)))
            ok = 0;
        if (c->stop || c->status) {
            ok = 0;
            break;
        }
    }
    c->depth--;
    return ok && !c->status;
}

/* A leaf with an lfast, a member of a flat node, reporting. */
static int report_leaf(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp)
{
    return report_node(c, n, iv, ip, kp, 0);
}

int mcp__v_flat_report(vctx *c, const node *n, const ival *iv, const pseg *ip, const pseg *kp)
{
    return report_node(c, n, iv, ip, kp, 1);
}
