/*
 * What is made once every node is compiled, and what it is made from: the
 * keyword path tokens and the constant parts of violation messages (so a
 * report only copies them), the set of a string `enum`, the fast form of a
 * leaf (lfast) and the plan of a flat object (fplan), which the quiet fast
 * paths of schema_flat.c run.
 */
#include "schema/schema_internal.h"

/* ======================================================================== */
/* Keyword tokens and message texts                                          */

/* The keyword path tokens of the keywords compile_node makes (static, so not kept per keyword). */
static const char *const kw_tokens[] = {
    "/$ref",          "/$dynamicRef",      "/type",          "/enum",
    "/const",         "/multipleOf",       "/maximum",       "/exclusiveMaximum",
    "/minimum",       "/exclusiveMinimum", "/maxLength",     "/minLength",
    "/maxItems",      "/minItems",         "/maxProperties", "/minProperties",
    "/pattern",       "/uniqueItems",      "/required",      "/format",
    "/dependentRequired", "/dependencies", "/prefixItems",   "/items",
    "/additionalItems", "/contains",       "/properties",    "/patternProperties",
    "/additionalProperties", "/propertyNames", "/dependentSchemas", "/allOf",
    "/anyOf",         "/oneOf",            "/not",           "/if",
    "/unevaluatedItems", "/unevaluatedProperties"};

/* Keeps the text of a fixed buffer (all w->len bytes) in the arena, as a keyword's message part. */
static mcp_status keep_text(comp *c, const sbuf *w, kw *k)
{
    char *t = mcp__ar_strndup(&c->s->ar, w->p, w->len);
    if (!t)
        return mcp__comp_nomem(c);
    k->text = t;
    k->textn = strlen(t);
    return MCP_OK;
}

/* Gives k its keyword path token: '/' and its name (keyword names are plain words). */
static mcp_status kw_token(comp *c, kw *k)
{
    for (size_t i = 0; i < sizeof(kw_tokens) / sizeof(kw_tokens[0]) && !k->tok; i++)
        if (strcmp(kw_tokens[i] + 1, k->name) == 0)
            k->tok = kw_tokens[i];
    if (k->tok)
        return MCP_OK;
    char *tok = (char *)mcp__ar_alloc(&c->s->ar, k->nlen + 2);
    if (!tok)
        return mcp__comp_nomem(c);
    tok[0] = '/';
    memcpy(tok + 1, k->name, k->nlen + 1);
    k->tok = tok;
    return MCP_OK;
}

/* Gives each `properties` entry its keyword path tokens: "/properties" and the escaped name. */
static mcp_status props_tokens(comp *c, props *pr)
{
    for (size_t i = 0; i < pr->n; i++) {
        sbuf t;
        sb_dyn(&t);
        sb_puts(&t, "/properties");
        mcp__sb_ptr_token(&t, pr->ents[i].key.s, pr->ents[i].key.n);
        if (t.nomem || !(pr->ents[i].kptok.s = mcp__ar_strndup(&c->s->ar, t.p, t.len))) {
            sb_release(&t);
            return mcp__comp_nomem(c);
        }
        pr->ents[i].kptok.n = t.len;
        sb_release(&t);
    }
    return MCP_OK;
}

/*
 * The constant part of k's violation message: for `type` the types wanted,
 * for `enum` the allowed values, for `const` the value, for properties
 * with additionalProperties false the declared names.
 */
static mcp_status kw_text(comp *c, kw *k)
{
    static const char *const names[] = {"null",   "boolean", "integer", "number",
                                        "string", "array",   "object"};
    char buf[200];
    sbuf w;
    if (k->op == K_TYPE) {
        sb_fixed(&w, buf, 96);
        int cnt = 0;
        for (unsigned b = 0; b < 7; b++)
            if (k->u.types & (1u << b)) {
                if (cnt++)
                    sb_puts(&w, " or ");
                sb_puts(&w, names[b]);
            }
    } else if (k->op == K_ENUM) {
        sb_fixed(&w, buf, 200);
        for (size_t i = 0; i < mcp_json_len(k->u.val); i++) {
            if (w.len > 150) {
                sb_puts(&w, ", ...");
                break;
            }
            if (i)
                sb_puts(&w, ", ");
            mcp__put_value(&w, mcp_json_at(k->u.val, i), 40);
        }
    } else if (k->op == K_CONST) {
        sb_fixed(&w, buf, 120);
        mcp__put_value(&w, k->u.val, 80);
    } else if (k->op == K_PROPS && k->u.pr->add && k->u.pr->add->is_bool &&
               !k->u.pr->add->bool_val) {
        sb_fixed(&w, buf, 200);
        mcp__put_allowed(&w, k->u.pr);
    } else {
        return MCP_OK;
    }
    return keep_text(c, &w, k);
}

/* What a keyword's reports need, made once: its token and the constant parts of its messages. */
static mcp_status kw_finish(comp *c, kw *k)
{
    mcp_status st = kw_token(c, k);
    if (st != MCP_OK)
        return st;
    if (k->op == K_PATTERN) {
        /* The message quotes at most 100 bytes of the source, and (as %.*s
           did) nothing from a NUL on. */
        size_t clip = utf8_clip(k->u.re.src.s, k->u.re.src.n, 100);
        const char *z = (const char *)memchr(k->u.re.src.s, '\0', clip);
        k->textn = z ? (size_t)(z - k->u.re.src.s) : clip;
    }
    if (k->op == K_PROPS && (st = props_tokens(c, k->u.pr)) != MCP_OK)
        return st;
    return kw_text(c, k);
}

/* ======================================================================== */
/* String enums and leaves                                                   */

/* The set of an `enum` whose values are all strings; *out stays NULL otherwise. */
mcp_status mcp__make_senum(comp *c, const mcp_json *arr, const senum **out)
{
    size_t n = mcp_json_len(arr);
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (mcp_json_typeof(mcp_json_at(arr, i)) != MCP_JSON_STRING)
            return MCP_OK;
    senum *e = (senum *)mcp__ar_zalloc(&c->s->ar, sizeof(*e));
    if (!e || !(e->v = (sstr *)mcp__ar_alloc(&c->s->ar, (n ? n : 1) * sizeof(sstr))))
        return mcp__comp_nomem(c);
    e->n = n;
    for (size_t i = 0; i < n; i++)
        e->v[i].s = mcp_json_str(mcp_json_at(arr, i), &e->v[i].n);
    if (n > 8) {
        uint32_t size = 16;
        while (size < n * 2)
            size *= 2;
        e->tab = (uint32_t *)mcp__ar_zalloc(&c->s->ar, size * sizeof(uint32_t));
        if (!e->tab)
            return mcp__comp_nomem(c);
        e->mask = size - 1;
        for (size_t i = 0; i < n; i++) {
            uint32_t h = hash_bytes(e->v[i].s, e->v[i].n) & e->mask;
            while (e->tab[h])
                h = (h + 1) & e->mask;
            e->tab[h] = (uint32_t)i + 1;
        }
    }
    *out = e;
    return MCP_OK;
}

/* lfast of the boolean schemas. */
static const lfast lf_true = {T_ANY, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0, 0, NULL, 0};
static const lfast lf_false = {0, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0, 0, NULL, 0};

/*
 * The lfast of a leaf whose keywords all allow one (k: its nk keywords);
 * n->lf stays NULL otherwise.
 */
mcp_status mcp__make_lfast(comp *c, node *n, const kw *k, unsigned nk)
{
    lfast f;
    memset(&f, 0, sizeof(f));
    f.types = n->ltypes;
    f.more = n->lmore;
    f.steps = 1;
    f.maxlen = SIZE_MAX;
    f.intlim = 1;
    f.lo = INT64_MIN;
    f.hi = INT64_MAX;
    int empty = 0;
    for (unsigned i = n->lfirst; i < nk; i++) {
        const kw *x = &k[i];
        switch (x->op) {
        case K_ENUM:
            if (!x->se)
                return MCP_OK;
            f.en = x->se;
            break;
        case K_MULOF:
        case K_MAX:
        case K_XMAX:
        case K_MIN:
        case K_XMIN:
            if (f.nnums && &f.nums[f.nnums] != x)
                return MCP_OK; /* compile_node keeps them together; be sure */
            if (!f.nnums)
                f.nums = x;
            f.nnums++;
            if (x->op == K_MULOF || !x->u.num.is_int) {
                f.intlim = 0;
            } else {
                int64_t m = x->u.num.i;
                if (x->op == K_MIN || x->op == K_XMIN) {
                    if (x->op == K_XMIN && m == INT64_MAX)
                        empty = 1;
                    else if (x->op == K_XMIN)
                        m++;
                    if (m > f.lo)
                        f.lo = m;
                } else {
                    if (x->op == K_XMAX && m == INT64_MIN)
                        empty = 1;
                    else if (x->op == K_XMAX)
                        m--;
                    if (m < f.hi)
                        f.hi = m;
                }
            }
            break;
        case K_MAXLEN:
            f.maxlen = x->u.count;
            break;
        case K_MINLEN:
            f.minlen = x->u.count;
            break;
        case K_PATTERN:
            if (!x->u.re.fast)
                return MCP_OK;
            f.re = &x->u.re;
            break;
        default:
            return MCP_OK;
        }
    }
    if (empty) {
        f.lo = INT64_MAX;
        f.hi = INT64_MIN;
    }
    lfast *p = (lfast *)mcp__ar_alloc(&c->s->ar, sizeof(*p));
    if (!p)
        return mcp__comp_nomem(c);
    *p = f;
    n->lf = p;
    return MCP_OK;
}

/* ======================================================================== */
/* The plan of a flat node                                                   */

/* `required` as a bit mask over the `properties` entries, and the names that are not entries. */
static mcp_status fplan_required(comp *c, fplan *fp, const kw *req)
{
    const props *pr = fp->pr;
    sstr *x = (sstr *)mcp__ar_alloc(&c->s->ar, req->u.req.n * sizeof(sstr));
    if (!x)
        return mcp__comp_nomem(c);
    for (size_t i = 0; i < req->u.req.n; i++) {
        const sstr *r = &req->u.req.names[i];
        /* The entry a lookup finds: with repeated keys, the last one. */
        size_t hit = SIZE_MAX;
        for (size_t j = 0; pr && j < pr->n; j++)
            if (pr->ents[j].key.n == r->n && bytes_eq(pr->ents[j].key.s, r->s, r->n))
                hit = j;
        if (hit != SIZE_MAX)
            fp->reqmask |= (uint64_t)1 << hit;
        else
            x[fp->nxreq++] = *r;
    }
    fp->xreq = x;
    return MCP_OK;
}

/*
 * The member schemas as the fast loop sees them: a bound on the steps of a
 * member (so v_flat can check the limits once for all of them) when no
 * member schema can do more than a leaf, and each one's lfast, the loop
 * being `fast` when every member schema has one (a boolean or a leaf).
 */
static mcp_status fplan_members(comp *c, fplan *fp)
{
    const props *pr = fp->pr;
    unsigned most = 1;
    int bounded = pr != NULL;
    for (size_t i = 0; pr && i <= pr->n; i++) {
        const node *m = i < pr->n ? pr->ents[i].n : pr->add;
        if (!m || m->is_bool)
            continue;
        if (!m->leaf || m->state != N_DONE)
            bounded = 0;
        else if (m->lsteps > most)
            most = m->lsteps;
    }
    fp->steps = bounded ? most : 0;
    if (!pr)
        return MCP_OK;
    fent *fe = (fent *)mcp__ar_alloc(&c->s->ar, (pr->n + 1) * sizeof(*fe));
    if (!fe)
        return mcp__comp_nomem(c);
    fp->fast = 1;
    for (size_t i = 0; i <= pr->n; i++) {
        const node *m = i < pr->n ? pr->ents[i].n : pr->add;
        const lfast *f = NULL;
        if (m && m->is_bool)
            f = m->bool_val ? &lf_true : &lf_false;
        else if (m && m->state == N_DONE && m->leaf)
            f = m->lf;
        if (m && !f)
            fp->fast = 0;
        if (i < pr->n) {
            fe[i].key = pr->ents[i].key.s;
            fe[i].n = pr->ents[i].key.n;
            fe[i].lf = f;
        } else {
            fp->addlf = f;
        }
    }
    fp->fe = fe;
    return MCP_OK;
}

/* The plan of flat node n (none when `properties` has more than 64 entries). */
static mcp_status make_fplan(comp *c, node *n)
{
    mcp_status st;
    fplan *fp = (fplan *)mcp__ar_zalloc(&c->s->ar, sizeof(*fp));
    if (!fp)
        return mcp__comp_nomem(c);
    fp->maxp = SIZE_MAX;
    const kw *req = NULL;
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        const kw *k = &n->kws[ki];
        if (k->op == K_MINPROPS)
            fp->minp = k->u.count;
        else if (k->op == K_MAXPROPS)
            fp->maxp = k->u.count;
        else if (k->op == K_REQUIRED)
            req = k;
        else if (k->op == K_PROPS)
            fp->pr = k->u.pr;
    }
    if (fp->pr && fp->pr->n > 64)
        return MCP_OK; /* no plan: the general loop */
    if (req && (st = fplan_required(c, fp, req)) != MCP_OK)
        return st;
    if ((st = fplan_members(c, fp)) != MCP_OK)
        return st;
    n->fp = fp;
    return MCP_OK;
}

/*
 * Finishes a compiled node once every node is compiled: the constant parts
 * of its violation messages (exactly what the reporting path used to put
 * together at each violation, into buffers of the same sizes, so the cuts
 * are the same), and the plan of a flat node.
 */
mcp_status mcp__finish_node(comp *c, node *n)
{
    if (n->state != N_DONE || n->is_bool)
        return MCP_OK;
    for (unsigned ki = 0; ki < n->nkw; ki++) {
        mcp_status st = kw_finish(c, &n->kws[ki]);
        if (st != MCP_OK)
            return st;
    }
    return n->flat ? make_fplan(c, n) : MCP_OK;
}
