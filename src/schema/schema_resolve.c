/*
 * The compile context and the discovery walk. Before any keyword is
 * compiled, the walk visits every subschema position the dialect defines
 * (keyword aware, so `$id` inside `enum` or inside an unknown keyword is not
 * an identifier), computing each one's base URI and schema resource and
 * indexing resource URIs and anchors; each subschema gets one node, keyed
 * by its JSON value. `$ref` and `$dynamicRef` are resolved here against
 * that index, loading registry documents on first use (never fetching).
 */
#include "schema/schema_internal.h"

#include <stdio.h>

/* ======================================================================== */
/* The compile context                                                       */

mcp_status mcp__comp_nomem(comp *c)
{
    return mcp__fail_at(c->err, MCP_ERR_NOMEM, NULL, "out of memory compiling the schema");
}

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdull;
    x ^= x >> 29;
    return (size_t)x;
}

node *mcp__map_get(const comp *c, const mcp_json *v)
{
    if (!c->mapcap)
        return NULL;
    size_t m = c->mapcap - 1, i = ptr_hash(v) & m;
    while (c->map[i]) {
        if (c->map[i]->src == v)
            return c->map[i];
        i = (i + 1) & m;
    }
    return NULL;
}

static int map_put(comp *c, node *n)
{
    if ((c->nnodes + 1) * 2 > c->mapcap) {
        size_t cap = c->mapcap ? c->mapcap * 2 : 64;
        node **t = (node **)mcp__calloc(cap, sizeof(*t));
        if (!t)
            return 0;
        for (size_t i = 0; i < c->mapcap; i++) {
            node *x = c->map[i];
            if (!x)
                continue;
            size_t j = ptr_hash(x->src) & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = x;
        }
        mcp_free(c->map);
        c->map = t;
        c->mapcap = cap;
    }
    size_t m = c->mapcap - 1, i = ptr_hash(n->src) & m;
    while (c->map[i])
        i = (i + 1) & m;
    c->map[i] = n;
    return 1;
}

static resource *find_resource(const comp *c, const char *uri, size_t n)
{
    for (size_t i = 0; i < c->nids; i++)
        if (strlen(c->ids[i].uri) == n && memcmp(c->ids[i].uri, uri, n) == 0)
            return c->ids[i].r;
    return NULL;
}

static mcp_status add_ident(comp *c, const char *uri, resource *r)
{
    if (find_resource(c, uri, strlen(uri)))
        return MCP_OK; /* first definition wins */
    if (c->nids == c->capids) {
        size_t cap = c->capids ? c->capids * 2 : 16;
        ident *t = (ident *)mcp_realloc(c->ids, cap * sizeof(*t));
        if (!t)
            return mcp__comp_nomem(c);
        c->ids = t;
        c->capids = cap;
    }
    c->ids[c->nids].uri = uri;
    c->ids[c->nids].r = r;
    c->nids++;
    return MCP_OK;
}

static mcp_status add_resource_list(comp *c, resource *r)
{
    mcp_schema *s = c->s;
    if ((s->nres & (s->nres - 1)) == 0) { /* grow at powers of two */
        size_t cap = s->nres ? s->nres * 2 : 8;
        if (cap < 8)
            cap = 8;
        resource **t = (resource **)mcp_realloc(s->resv, cap * sizeof(*t));
        if (!t)
            return mcp__comp_nomem(c);
        s->resv = t;
    }
    s->resv[s->nres++] = r;
    return MCP_OK;
}

static const char *cur_loc(comp *c)
{
    return c->loc.p ? c->loc.p : "";
}

mcp_status mcp__comp_bad(comp *c, const node *n, const char *kwname, mcp_status st, const char *fmt,
                         ...)
{
    if (!c->err)
        return st;
    char msg[MCP_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *loc = n ? n->loc : cur_loc(c);
    char ptr[MCP_ERROR_POINTER_MAX];
    snprintf(ptr, sizeof(ptr), "%s%s%s", loc, kwname ? "/" : "", kwname ? kwname : "");
    /* Long texts are cut to fit; never inside a character (the pointer is
       copied as it is, and err must stay valid UTF-8). */
    msg[mcp__utf8_trim_tail(msg, strlen(msg))] = '\0';
    ptr[mcp__utf8_trim_tail(ptr, strlen(ptr))] = '\0';
    return mcp__fail_at(c->err, st, ptr, "schema %s%s%s: %s", loc[0] ? loc : "(root)",
                        kwname ? "/" : "", kwname ? kwname : "", msg);
}

void mcp__enqueue(comp *c, node *n)
{
    if (n->state != N_NEW)
        return;
    n->state = N_QUEUED;
    n->qnext = NULL;
    if (c->qtail)
        c->qtail->qnext = n;
    else
        c->qhead = n;
    c->qtail = n;
}

/* Adds a document copy to the schema's list of owned documents. */
mcp_status mcp__own_doc(comp *c, mcp_json_doc *d)
{
    mcp_schema *s = c->s;
    if (s->ndocs == s->capdocs) {
        size_t cap = s->capdocs ? s->capdocs * 2 : 4;
        mcp_json_doc **t = (mcp_json_doc **)mcp_realloc(s->docs, cap * sizeof(*t));
        if (!t) {
            mcp_json_doc_free(d);
            return mcp__comp_nomem(c);
        }
        s->docs = t;
        s->capdocs = cap;
    }
    s->docs[s->ndocs++] = d;
    return MCP_OK;
}

/* ======================================================================== */
/* Dialects and vocabularies                                                 */

/* Accepts a URI with or without a trailing empty fragment. */
static int uri_is(const char *u, size_t n, const char *want)
{
    size_t w = strlen(want);
    if (n == w + 1 && u[w] == '#')
        n = w;
    return n == w && memcmp(u, want, w) == 0;
}

static const struct {
    const char *uri;
    unsigned bit;
} vocab_names[] = {
    {"https://json-schema.org/draft/2020-12/vocab/core", V_CORE},
    {"https://json-schema.org/draft/2020-12/vocab/applicator", V_APPLICATOR},
    {"https://json-schema.org/draft/2020-12/vocab/unevaluated", V_UNEVALUATED},
    {"https://json-schema.org/draft/2020-12/vocab/validation", V_VALIDATION},
    {"https://json-schema.org/draft/2020-12/vocab/meta-data", V_META},
    {"https://json-schema.org/draft/2020-12/vocab/format-annotation", V_FORMAT_ANN},
    {"https://json-schema.org/draft/2020-12/vocab/format-assertion", V_FORMAT_ASSERT},
    {"https://json-schema.org/draft/2020-12/vocab/content", V_CONTENT},
};

/*
 * Works out the dialect of a resource root from its `$schema` (or the
 * inherited one when absent). A `$schema` that is neither 2020-12 nor
 * draft-07 may name a registered meta-schema written in 2020-12; its
 * `$vocabulary` then selects the vocabularies.
 */
static mcp_status pick_dialect(comp *c, const mcp_json *v, unsigned *dialect, unsigned *vocab)
{
    const mcp_json *sc = mcp_json_get(v, "$schema");
    if (!sc)
        return MCP_OK;
    size_t n;
    const char *u = mcp_json_str(sc, &n);
    if (!u)
        return mcp__comp_bad(c, NULL, "$schema", MCP_ERR_SCHEMA, "must be a string");
    if (uri_is(u, n, "https://json-schema.org/draft/2020-12/schema")) {
        *dialect = D_2020;
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    if (uri_is(u, n, "http://json-schema.org/draft-07/schema") ||
        uri_is(u, n, "https://json-schema.org/draft-07/schema")) {
        *dialect = D_7;
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    const regent *e = mcp__registry_find(c->reg, u, mcp__uri_nofrag_len(u));
    const mcp_json *meta = e ? mcp_json_doc_root(e->doc) : NULL;
    const mcp_json *msc = mcp_json_get(meta, "$schema");
    size_t mn;
    const char *mu = mcp_json_str(msc, &mn);
    if (!meta || !mu || !uri_is(mu, mn, "https://json-schema.org/draft/2020-12/schema"))
        return mcp__comp_bad(c, NULL, "$schema", MCP_ERR_UNSUPPORTED,
                             "dialect \"%.*s\" is not supported (use 2020-12 or draft-07)",
                             (int)n, u);
    const mcp_json *voc = mcp_json_get(meta, "$vocabulary");
    *dialect = D_2020;
    if (!voc) {
        *vocab = V_ALL_2020;
        return MCP_OK;
    }
    unsigned bits = 0;
    for (size_t i = 0; i < mcp_json_len(voc); i++) {
        size_t kn;
        const char *k = mcp_json_key_at(voc, i, &kn);
        unsigned bit = 0;
        for (size_t j = 0; j < sizeof(vocab_names) / sizeof(vocab_names[0]); j++)
            if (strlen(vocab_names[j].uri) == kn && memcmp(vocab_names[j].uri, k, kn) == 0)
                bit = vocab_names[j].bit;
        if (bit)
            bits |= bit;
        else if (mcp_json_bool(mcp_json_value_at(voc, i)))
            return mcp__comp_bad(c, NULL, "$schema", MCP_ERR_UNSUPPORTED,
                                 "meta-schema requires unsupported vocabulary \"%.*s\"",
                                 (int)kn, k);
    }
    *vocab = bits | V_CORE;
    return MCP_OK;
}

/* ======================================================================== */
/* The discovery walk                                                        */

static mcp_status add_anchor(comp *c, resource *r, const char *name, size_t n, const mcp_json *v,
                             int dynamic)
{
    anchor *a = (anchor *)mcp__ar_zalloc(&c->s->ar, sizeof(*a));
    if (!a)
        return mcp__comp_nomem(c);
    a->name.s = name;
    a->name.n = n;
    a->val = v;
    a->dynamic = dynamic;
    a->next = r->anchors;
    r->anchors = a;
    return MCP_OK;
}

/* Walks the subschemas under keyword `k` of `v`, shaped as the dialect says. */
static mcp_status walk_kw(comp *c, const mcp_json *v, const char *k, int shape, const char *base,
                          resource *res, unsigned dialect, unsigned vocab, unsigned depth,
                          int in_root_doc)
{
    /* shape: 0 = one schema, 1 = object of schemas, 2 = array of schemas,
       3 = one schema or an array of schemas, 4 = object of schemas or arrays. */
    const mcp_json *x = mcp_json_get(v, k);
    if (!x)
        return MCP_OK;
    size_t mark = c->loc.len;
    mcp_status st = MCP_OK;
    mcp__sb_ptr_token(&c->loc, k, strlen(k));
    mcp_json_type t = mcp_json_typeof(x);
    if (shape == 0 || ((shape == 3) && t != MCP_JSON_ARRAY)) {
        st = mcp__walk(c, x, base, res, dialect, vocab, depth + 1, 0, in_root_doc);
    } else if ((shape == 1 || shape == 4) && t == MCP_JSON_OBJECT) {
        for (size_t i = 0; i < mcp_json_len(x) && !st; i++) {
            const mcp_json *m = mcp_json_value_at(x, i);
            if (shape == 4 && mcp_json_typeof(m) == MCP_JSON_ARRAY)
                continue;
            size_t kn, mark2 = c->loc.len;
            const char *key = mcp_json_key_at(x, i, &kn);
            mcp__sb_ptr_token(&c->loc, key, kn);
            st = mcp__walk(c, m, base, res, dialect, vocab, depth + 1, 0, in_root_doc);
            c->loc.len = mark2;
            if (c->loc.p)
                c->loc.p[mark2] = '\0';
        }
    } else if ((shape == 2 || shape == 3) && t == MCP_JSON_ARRAY) {
        for (size_t i = 0; i < mcp_json_len(x) && !st; i++) {
            size_t mark2 = c->loc.len;
            mcp__sb_printf(&c->loc, "/%zu", i);
            st = mcp__walk(c, mcp_json_at(x, i), base, res, dialect, vocab, depth + 1, 0,
                           in_root_doc);
            c->loc.len = mark2;
            if (c->loc.p)
                c->loc.p[mark2] = '\0';
        }
    }
    c->loc.len = mark;
    if (c->loc.p)
        c->loc.p[mark] = '\0';
    return st;
}

/* What a subschema inherits from where the walk is, and a draft-07 anchor its `$id` names. */
typedef struct wpos {
    const char *base;      /* base URI */
    resource *res;         /* schema resource */
    unsigned dialect;      /* D_* */
    unsigned vocab;        /* V_* */
    const char *d7_anchor; /* draft-07 "#name" `$id`: the anchor name, else NULL */
    size_t d7_anchor_n;    /* its length */
} wpos;

/*
 * Reads the `$id` of object v into ids and idn (ids left NULL when it starts no
 * resource): draft-07 ignores an `$id` next to `$ref`, and a fragment-only
 * `$id` is an anchor in draft-07 ("#name") and changes nothing in 2020-12
 * (only an empty fragment is allowed there).
 */
static mcp_status walk_id(comp *c, const mcp_json *v, wpos *p, const char **ids, size_t *idn)
{
    const mcp_json *id = mcp_json_get(v, "$id");
    *ids = mcp_json_str(id, idn);
    if (p->dialect == D_7 && mcp_json_get(v, "$ref"))
        *ids = NULL;
    if (id && !*ids && !(p->dialect == D_7 && mcp_json_get(v, "$ref")))
        return mcp__comp_bad(c, NULL, "$id", MCP_ERR_SCHEMA, "must be a string");
    if (*ids && (*ids)[0] == '#') {
        if (p->dialect == D_7 && *idn > 1 && (*ids)[1] != '/') {
            p->d7_anchor = *ids + 1;
            p->d7_anchor_n = *idn - 1;
        }
        *ids = NULL;
    }
    return MCP_OK;
}

/*
 * Starts the schema resource of v, at a document root (doc_root) or at an
 * `$id` (ids, idn): its URI, dialect and vocabularies, and its identifiers;
 * p then describes the new resource.
 */
static mcp_status walk_resource(comp *c, const mcp_json *v, const char *ids, size_t idn,
                                int doc_root, int in_root_doc, wpos *p)
{
    arena *ar = &c->s->ar;
    mcp_status st;
    sbuf u;
    sb_dyn(&u);
    if (ids)
        mcp__uri_resolve(&u, p->base, ids, idn);
    else
        sb_puts(&u, p->base);
    if (u.nomem) {
        sb_release(&u);
        return mcp__comp_nomem(c);
    }
    const char *raw = u.p ? u.p : "";
    const char *hash = strchr(raw, '#');
    size_t un = hash ? (size_t)(hash - raw) : strlen(raw);
    if (hash && p->dialect == D_7 && hash[1] && hash[1] != '/') {
        p->d7_anchor = ids + (strchr(ids, '#') - ids) + 1;
        p->d7_anchor_n = strlen(p->d7_anchor);
    }
    char *uri = mcp__ar_strndup(ar, raw, un);
    sb_release(&u);
    if (!uri)
        return mcp__comp_nomem(c);
    unsigned nd = p->dialect, nv = p->vocab;
    if (mcp_json_typeof(v) == MCP_JSON_OBJECT && (st = pick_dialect(c, v, &nd, &nv)) != MCP_OK)
        return st;
    resource *r = (resource *)mcp__ar_zalloc(ar, sizeof(*r));
    if (!r)
        return mcp__comp_nomem(c);
    r->uri = uri;
    r->root = v;
    r->dialect = nd;
    r->vocab = nv;
    r->in_root_doc = in_root_doc;
    if ((st = add_resource_list(c, r)) != MCP_OK)
        return st;
    if (doc_root && ids) {
        /* The retrieval URI stays an alias of the document's own `$id`. */
        char *alias = mcp__ar_strndup(ar, p->base, mcp__uri_nofrag_len(p->base));
        if (!alias)
            return mcp__comp_nomem(c);
        if ((st = add_ident(c, alias, r)) != MCP_OK)
            return st;
    }
    if ((st = add_ident(c, uri, r)) != MCP_OK)
        return st;
    p->res = r;
    p->base = uri;
    p->dialect = nd;
    p->vocab = nv;
    return MCP_OK;
}

/* Creates the node of schema value v (of type t) where the walk is. */
static mcp_status new_node(comp *c, const mcp_json *v, mcp_json_type t, const wpos *p,
                           unsigned depth, node **out)
{
    arena *ar = &c->s->ar;
    node *n = (node *)mcp__ar_zalloc(ar, sizeof(*n));
    if (!n)
        return mcp__comp_nomem(c);
    n->src = v;
    n->base = p->base;
    n->res = p->res;
    n->depth = depth;
    n->dialect = (unsigned char)p->dialect;
    if (t == MCP_JSON_BOOL) {
        n->is_bool = 1;
        n->bool_val = (unsigned char)mcp_json_bool(v);
    }
    const char *l = cur_loc(c);
    size_t pl = strlen(c->loc_prefix), ll = strlen(l);
    char *loc = (char *)mcp__ar_alloc(ar, pl + ll + 1);
    if (!loc)
        return mcp__comp_nomem(c);
    memcpy(loc, c->loc_prefix, pl);
    memcpy(loc + pl, l, ll + 1);
    n->loc = loc;
    if (!map_put(c, n))
        return mcp__comp_nomem(c);
    c->nnodes++;
    if (c->ctail)
        c->ctail->cnext = n;
    else
        c->chead = n;
    c->ctail = n;
    *out = n;
    return MCP_OK;
}

/* Registers the anchors node n (schema object v) defines. */
static mcp_status walk_anchors(comp *c, const mcp_json *v, node *n, const wpos *p)
{
    mcp_status st;
    if (p->d7_anchor && (st = add_anchor(c, p->res, p->d7_anchor, p->d7_anchor_n, v, 0)) != MCP_OK)
        return st;
    if (p->dialect == D_2020) {
        size_t an;
        const char *a = mcp_json_str(mcp_json_get(v, "$anchor"), &an);
        if (a && (st = add_anchor(c, p->res, a, an, v, 0)) != MCP_OK)
            return st;
        a = mcp_json_str(mcp_json_get(v, "$dynamicAnchor"), &an);
        if (a) {
            if ((st = add_anchor(c, p->res, a, an, v, 1)) != MCP_OK)
                return st;
            /* The dynamic scope may pick this subschema from anywhere. */
            mcp__enqueue(c, n);
        }
    }
    return MCP_OK;
}

/* Walks the subschemas of schema object v, keyword by keyword as the dialect defines them. */
static mcp_status walk_subschemas(comp *c, const mcp_json *v, const wpos *p, unsigned depth,
                                  int in_root_doc)
{
    static const struct {
        const char *k;
        int shape;
    } kws2020[] = {{"$defs", 1},
                   {"properties", 1},
                   {"patternProperties", 1},
                   {"dependentSchemas", 1},
                   {"dependencies", 4},
                   {"allOf", 2},
                   {"anyOf", 2},
                   {"oneOf", 2},
                   {"prefixItems", 2},
                   {"items", 0},
                   {"contains", 0},
                   {"additionalProperties", 0},
                   {"propertyNames", 0},
                   {"not", 0},
                   {"if", 0},
                   {"then", 0},
                   {"else", 0},
                   {"unevaluatedItems", 0},
                   {"unevaluatedProperties", 0},
                   {"contentSchema", 0}},
      kws7[] = {{"definitions", 1},
                {"properties", 1},
                {"patternProperties", 1},
                {"dependencies", 4},
                {"allOf", 2},
                {"anyOf", 2},
                {"oneOf", 2},
                {"items", 3},
                {"additionalItems", 0},
                {"contains", 0},
                {"additionalProperties", 0},
                {"propertyNames", 0},
                {"not", 0},
                {"if", 0},
                {"then", 0},
                {"else", 0}};
    int d7 = p->dialect == D_7;
    size_t nk = d7 ? sizeof(kws7) / sizeof(kws7[0]) : sizeof(kws2020) / sizeof(kws2020[0]);
    for (size_t i = 0; i < nk; i++) {
        const char *k = d7 ? kws7[i].k : kws2020[i].k;
        int shape = d7 ? kws7[i].shape : kws2020[i].shape;
        mcp_status st = walk_kw(c, v, k, shape, p->base, p->res, p->dialect, p->vocab, depth,
                                in_root_doc);
        if (st)
            return st;
    }
    return MCP_OK;
}

mcp_status mcp__walk(comp *c, const mcp_json *v, const char *base, resource *res,
                     unsigned dialect, unsigned vocab, unsigned depth, int doc_root,
                     int in_root_doc)
{
    if (mcp__map_get(c, v))
        return MCP_OK;
    mcp_json_type t = mcp_json_typeof(v);
    if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
        return mcp__comp_bad(c, NULL, NULL, MCP_ERR_SCHEMA,
                             "a schema must be an object or a boolean, not %s",
                             mcp_json_type_name(t));
    if (depth > c->max_depth)
        return mcp__comp_bad(c, NULL, NULL, MCP_ERR_LIMIT, "subschemas nest deeper than %u levels",
                             c->max_depth);
    if (c->nnodes >= c->max_nodes)
        return mcp__comp_bad(c, NULL, NULL, MCP_ERR_LIMIT, "more than %zu subschemas",
                             c->max_nodes);
    wpos p = {base, res, dialect, vocab, NULL, 0};
    const char *ids = NULL;
    size_t idn = 0;
    mcp_status st = t == MCP_JSON_OBJECT ? walk_id(c, v, &p, &ids, &idn) : MCP_OK;
    if (!st && (ids || doc_root))
        st = walk_resource(c, v, ids, idn, doc_root, in_root_doc, &p);
    node *n = NULL;
    if (!st)
        st = new_node(c, v, t, &p, depth, &n);
    if (st || t == MCP_JSON_BOOL)
        return st;
    if ((st = walk_anchors(c, v, n, &p)) != MCP_OK)
        return st;
    return walk_subschemas(c, v, &p, depth, in_root_doc);
}

/*
 * Runs a discovery walk from `v` with the location for messages set to
 * `prefix` + `loc`; the walk in progress (if any) keeps its own location.
 */
static mcp_status walk_at(comp *c, const char *prefix, const char *loc, const mcp_json *v,
                          const char *base, resource *res, unsigned dialect, unsigned vocab,
                          unsigned depth, int doc_root, int in_root_doc)
{
    sbuf saved = c->loc;
    const char *saved_prefix = c->loc_prefix;
    sb_dyn(&c->loc);
    sb_puts(&c->loc, loc);
    c->loc_prefix = prefix;
    mcp_status st = c->loc.nomem ? mcp__comp_nomem(c)
                                 : mcp__walk(c, v, base, res, dialect, vocab, depth, doc_root,
                                             in_root_doc);
    if (!st && c->loc.nomem)
        st = mcp__comp_nomem(c);
    sb_release(&c->loc);
    c->loc = saved;
    c->loc_prefix = saved_prefix;
    return st;
}

/* Loads a registry document (copying it) so `uri` can be found. */
static mcp_status load_registry(comp *c, const char *uri, size_t n, unsigned dialect, int *found)
{
    *found = 0;
    const regent *e = mcp__registry_find(c->reg, uri, n);
    if (!e)
        return MCP_OK;
    mcp_json_doc *d = NULL;
    mcp_status st = mcp__copy_doc(&d, mcp_json_doc_root(e->doc), c->err);
    if (st)
        return st;
    if ((st = mcp__own_doc(c, d)) != MCP_OK)
        return st;
    /* Locations inside this document are reported as "<uri>#<pointer>". */
    size_t pl = strlen(e->uri);
    char *prefix = (char *)mcp__ar_alloc(&c->s->ar, pl + 2);
    if (!prefix)
        return mcp__comp_nomem(c);
    memcpy(prefix, e->uri, pl);
    prefix[pl] = '#';
    prefix[pl + 1] = '\0';
    st = walk_at(c, prefix, "", mcp_json_doc_root(d), e->uri, NULL, dialect, V_ALL_2020, 0, 1, 0);
    if (st)
        return st;
    *found = 1;
    return MCP_OK;
}

/* Finds the node of a value reached through a JSON Pointer (may be new). */
static mcp_status node_for_value(comp *c, const mcp_json *v, resource *r, node **out)
{
    node *n = mcp__map_get(c, v);
    if (!n) {
        mcp_status st = walk_at(c, "", "(reference target)", v, r->uri, r, r->dialect, r->vocab,
                                0, 0, r->in_root_doc);
        if (st)
            return st;
        n = mcp__map_get(c, v);
        if (!n)
            return MCP_ERR_INTERNAL;
    }
    *out = n;
    return MCP_OK;
}

/*
 * Resolves a `$ref`/`$dynamicRef` of node `n` to its target node. For a
 * plain-name fragment, `*dyn` (may be NULL) is set when the target carries a
 * `$dynamicAnchor` of that name.
 */
mcp_status mcp__resolve_ref(comp *c, node *n, const char *kwname, const char *ref, size_t refn,
                            node **out, int *dyn)
{
    sbuf u;
    sb_dyn(&u);
    mcp__uri_resolve(&u, n->base, ref, refn);
    if (u.nomem) {
        sb_release(&u);
        return mcp__comp_nomem(c);
    }
    char *abs = u.p ? u.p : (char *)"";
    char *hash = strchr(abs, '#');
    size_t bn = hash ? (size_t)(hash - abs) : strlen(abs);
    char *frag = hash ? hash + 1 : NULL;
    size_t fn = frag ? mcp__pct_decode(frag, strlen(frag)) : 0;
    mcp_status st = MCP_OK;
    resource *r = find_resource(c, abs, bn);
    if (!r) {
        int found = 0;
        st = load_registry(c, abs, bn, n->dialect, &found);
        if (st == MCP_OK && found)
            r = find_resource(c, abs, bn);
    }
    if (!st && !r)
        st = mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA,
                           "unresolved reference \"%.*s\" (no schema with URI \"%.*s\" is known; "
                           "references are never fetched)",
                           (int)refn, ref, (int)bn, abs);
    const mcp_json *target = NULL;
    if (!st) {
        if (fn == 0) {
            target = r->root;
        } else if (frag[0] == '/') {
            target = mcp_json_pointer(r->root, frag, fn);
            if (!target)
                st = mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA,
                                   "unresolved reference \"%.*s\" (JSON Pointer leads nowhere)",
                                   (int)refn, ref);
        } else {
            for (anchor *a = r->anchors; a; a = a->next) {
                if (a->name.n == fn && memcmp(a->name.s, frag, fn) == 0) {
                    if (!target || a->dynamic)
                        target = a->val;
                    if (a->dynamic && dyn)
                        *dyn = 1;
                }
            }
            if (!target)
                st = mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA,
                                   "unresolved reference \"%.*s\" (no anchor \"%.*s\")",
                                   (int)refn, ref, (int)fn, frag);
        }
    }
    if (!st) {
        st = node_for_value(c, target, r, out);
        if (!st)
            mcp__enqueue(c, *out);
    }
    sb_release(&u);
    return st;
}

/* Gets (creating if needed) and queues the node of a subschema value. */
mcp_status mcp__child(comp *c, node *parent, const mcp_json *v, node **out)
{
    node *n = mcp__map_get(c, v);
    if (!n) {
        mcp_json_type t = mcp_json_typeof(v);
        if (t != MCP_JSON_OBJECT && t != MCP_JSON_BOOL)
            return mcp__comp_bad(c, parent, NULL, MCP_ERR_SCHEMA,
                                 "a subschema must be an object or a boolean, not %s",
                                 mcp_json_type_name(t));
        mcp_status st = walk_at(c, "", parent->loc, v, parent->base, parent->res, parent->dialect,
                                parent->res->vocab, parent->depth + 1, 0,
                                parent->res->in_root_doc);
        if (st)
            return st;
        n = mcp__map_get(c, v);
        if (!n)
            return MCP_ERR_INTERNAL;
    }
    mcp__enqueue(c, n);
    *out = n;
    return MCP_OK;
}

/* Fills each resource's table of compiled $dynamicAnchors. */
mcp_status mcp__link_dynamic(comp *c)
{
    for (size_t i = 0; i < c->s->nres; i++) {
        resource *r = c->s->resv[i];
        size_t cnt = 0;
        for (anchor *a = r->anchors; a; a = a->next)
            cnt += a->dynamic != 0;
        if (!cnt)
            continue;
        r->dyn = (dynanchor *)mcp__ar_zalloc(&c->s->ar, cnt * sizeof(dynanchor));
        if (!r->dyn)
            return mcp__comp_nomem(c);
        for (anchor *a = r->anchors; a; a = a->next) {
            if (!a->dynamic)
                continue;
            node *n = mcp__map_get(c, a->val);
            if (!n)
                return MCP_ERR_INTERNAL;
            r->dyn[r->ndyn].name = a->name;
            r->dyn[r->ndyn].n = n;
            r->ndyn++;
        }
    }
    return MCP_OK;
}
