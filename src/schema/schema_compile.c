/*
 * Compiling one node: its schema object becomes a short list of keywords
 * (kw), each with its argument parsed and its subschemas linked as nodes
 * (queued for their own turn, not compiled here), in the order the
 * validator evaluates them: `$ref` and `$dynamicRef`, the value checks with
 * `type` first, format, dependentRequired, the applicators, unevaluated*
 * last. Each keyword family has its own function; mcp__compile_node runs
 * them in that order. The node's shape (leaf, `$ref` wrapper, flat object)
 * is decided at the end.
 */
#include "schema/schema_internal.h"

/* ======================================================================== */
/* Keyword arguments                                                         */

static int get_count(const mcp_json *v, size_t *out)
{
    mcp_json_type t = mcp_json_typeof(v);
    if (t == MCP_JSON_INT) {
        int64_t i = mcp_json_int(v);
        if (i < 0)
            return 0;
        *out = (uint64_t)i > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)i;
        return 1;
    }
    if (t == MCP_JSON_REAL) {
        double d = mcp_json_number(v);
        if (!(d >= 0) || floor(d) != d)
            return 0;
        *out = d >= 1.8e19 ? SIZE_MAX : (size_t)d;
        return 1;
    }
    return 0;
}

static int get_num(const mcp_json *v, numlim *out)
{
    mcp_json_type t = mcp_json_typeof(v);
    if (t != MCP_JSON_INT && t != MCP_JSON_REAL)
        return 0;
    out->v = v;
    out->d = mcp_json_number(v);
    out->is_int = t == MCP_JSON_INT;
    out->i = mcp_json_int(v);
    return 1;
}

static unsigned type_bit(const char *s, size_t n)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"null", T_NULL},  {"boolean", T_BOOL}, {"integer", T_INT}, {"number", T_NUM},
                 {"string", T_STR}, {"array", T_ARR},    {"object", T_OBJ}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0)
            return names[i].bit;
    return 0;
}

/* A `pattern` keyword's regex. */
static mcp_status compile_regex(comp *c, node *n, const char *kwname, const mcp_json *v,
                                regex *out)
{
    size_t len;
    const char *src = mcp_json_str(v, &len);
    if (!src)
        return mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA, "pattern must be a string");
    return mcp__re_build(c, n, kwname, src, len, out);
}

static mcp_status compile_list(comp *c, node *n, const char *kwname, const mcp_json *v,
                               nodelist *out, int allow_empty)
{
    if (mcp_json_typeof(v) != MCP_JSON_ARRAY || (mcp_json_len(v) == 0 && !allow_empty))
        return mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA, "must be a non-empty array of schemas");
    size_t cnt = mcp_json_len(v);
    out->n = 0;
    if (!cnt)
        return MCP_OK;
    out->v = (node **)mcp__ar_alloc(&c->s->ar, cnt * sizeof(node *));
    if (!out->v)
        return mcp__comp_nomem(c);
    out->n = cnt;
    for (size_t i = 0; i < cnt; i++) {
        mcp_status st = mcp__child(c, n, mcp_json_at(v, i), &out->v[i]);
        if (st)
            return st;
    }
    return MCP_OK;
}

static mcp_status compile_names(comp *c, node *n, const char *kwname, const mcp_json *v,
                                sstr **out, size_t *cnt)
{
    if (mcp_json_typeof(v) != MCP_JSON_ARRAY)
        return mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an array of strings");
    size_t k = mcp_json_len(v);
    *cnt = k;
    *out = NULL;
    if (!k)
        return MCP_OK;
    *out = (sstr *)mcp__ar_alloc(&c->s->ar, k * sizeof(sstr));
    if (!*out)
        return mcp__comp_nomem(c);
    for (size_t i = 0; i < k; i++) {
        (*out)[i].s = mcp_json_str(mcp_json_at(v, i), &(*out)[i].n);
        if (!(*out)[i].s)
            return mcp__comp_bad(c, n, kwname, MCP_ERR_SCHEMA, "must be an array of strings");
    }
    return MCP_OK;
}

/* ======================================================================== */
/* One node's keyword list                                                   */

#define MAX_KW 48

/* A node being compiled: what its keyword families share. */
typedef struct nodec {
    comp *c;           /* the compiler */
    node *n;           /* the node */
    const mcp_json *v; /* its schema object */
    unsigned voc;      /* the vocabularies in force (V_*) */
    int d7;            /* draft-07 */
    kw k[MAX_KW];      /* its keywords so far, in evaluation order */
    unsigned nk;       /* their count */
} nodec;

/*
 * Starts keyword `op` in the next slot of the list; it joins the list with
 * kw_push(). A slot not pushed is reused by the next keyword (its other
 * fields as the first one left them: the list starts zeroed).
 */
static kw *kw_new(nodec *b, int op, const char *name, unsigned applies)
{
    kw *k = &b->k[b->nk];
    k->op = (unsigned char)op;
    k->name = name;
    k->nlen = strlen(name);
    k->applies = (unsigned char)applies;
    return k;
}

static void kw_push(nodec *b)
{
    b->nk++;
}

/* ---- core: $ref, $dynamicRef ------------------------------------------- */

/* `$ref`; in draft-07 it overrides every sibling keyword (*alone set). */
static mcp_status kw_ref(nodec *b, int *alone)
{
    const mcp_json *x = mcp_json_get(b->v, "$ref");
    if (!x)
        return MCP_OK;
    size_t rn;
    const char *r = mcp_json_str(x, &rn);
    if (!r)
        return mcp__comp_bad(b->c, b->n, "$ref", MCP_ERR_SCHEMA, "must be a string");
    kw *k = kw_new(b, K_REF, "$ref", T_ANY);
    mcp_status st = mcp__resolve_ref(b->c, b->n, "$ref", r, rn, &k->u.ref.target, NULL);
    if (st != MCP_OK)
        return st;
    kw_push(b);
    *alone = b->d7;
    return MCP_OK;
}

static mcp_status kw_dynref(nodec *b)
{
    const mcp_json *x;
    if (b->d7 || (x = mcp_json_get(b->v, "$dynamicRef")) == NULL)
        return MCP_OK;
    size_t rn;
    const char *r = mcp_json_str(x, &rn);
    if (!r)
        return mcp__comp_bad(b->c, b->n, "$dynamicRef", MCP_ERR_SCHEMA, "must be a string");
    kw *k = kw_new(b, K_DYNREF, "$dynamicRef", T_ANY);
    int dyn = 0;
    mcp_status st = mcp__resolve_ref(b->c, b->n, "$dynamicRef", r, rn, &k->u.ref.target, &dyn);
    if (st != MCP_OK)
        return st;
    if (dyn) {
        const char *h = memchr(r, '#', rn);
        k->u.ref.dynamic = 1;
        k->u.ref.anchor.s = h + 1;
        k->u.ref.anchor.n = rn - (size_t)(h + 1 - r);
        b->c->s->uses_dynamic = 1;
    }
    kw_push(b);
    return MCP_OK;
}

/* ---- validation: value checks ------------------------------------------ */

static mcp_status kw_type(nodec *b)
{
    const mcp_json *x = mcp_json_get(b->v, "type");
    if (!x)
        return MCP_OK;
    unsigned mask = 0;
    if (mcp_json_typeof(x) == MCP_JSON_STRING) {
        size_t tn;
        const char *ts = mcp_json_str(x, &tn);
        mask = type_bit(ts, tn);
        if (!mask)
            return mcp__comp_bad(b->c, b->n, "type", MCP_ERR_SCHEMA, "unknown type \"%.*s\"",
                                 (int)tn, ts);
    } else if (mcp_json_typeof(x) == MCP_JSON_ARRAY) {
        for (size_t i = 0; i < mcp_json_len(x); i++) {
            size_t tn;
            const char *ts = mcp_json_str(mcp_json_at(x, i), &tn);
            unsigned bit = ts ? type_bit(ts, tn) : 0;
            if (!bit)
                return mcp__comp_bad(b->c, b->n, "type", MCP_ERR_SCHEMA, "unknown type in array");
            mask |= bit;
        }
    } else {
        return mcp__comp_bad(b->c, b->n, "type", MCP_ERR_SCHEMA, "must be a string or an array");
    }
    kw_new(b, K_TYPE, "type", T_ANY)->u.types = mask;
    kw_push(b);
    return MCP_OK;
}

static mcp_status kw_enum_const(nodec *b)
{
    const mcp_json *x;
    if ((x = mcp_json_get(b->v, "enum")) != NULL) {
        if (mcp_json_typeof(x) != MCP_JSON_ARRAY)
            return mcp__comp_bad(b->c, b->n, "enum", MCP_ERR_SCHEMA, "must be an array");
        kw *k = kw_new(b, K_ENUM, "enum", T_ANY);
        k->u.val = x;
        mcp_status st = mcp__make_senum(b->c, x, &k->se);
        if (st != MCP_OK)
            return st;
        kw_push(b);
    }
    if ((x = mcp_json_get(b->v, "const")) != NULL) {
        kw_new(b, K_CONST, "const", T_ANY)->u.val = x;
        kw_push(b);
    }
    return MCP_OK;
}

/* multipleOf and the bounds, kept together in this order (make_lfast relies on it). */
static mcp_status kw_numbers(nodec *b)
{
    static const struct {
        const char *name;
        int op;
    } nums[] = {{"multipleOf", K_MULOF},
                {"maximum", K_MAX},
                {"exclusiveMaximum", K_XMAX},
                {"minimum", K_MIN},
                {"exclusiveMinimum", K_XMIN}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        const mcp_json *x = mcp_json_get(b->v, nums[i].name);
        if (!x)
            continue;
        kw *k = kw_new(b, nums[i].op, nums[i].name, T_NUM);
        if (!get_num(x, &k->u.num))
            return mcp__comp_bad(b->c, b->n, nums[i].name, MCP_ERR_SCHEMA, "must be a number");
        if (nums[i].op == K_MULOF && !(k->u.num.d > 0))
            return mcp__comp_bad(b->c, b->n, nums[i].name, MCP_ERR_SCHEMA,
                                 "must be greater than 0");
        kw_push(b);
    }
    return MCP_OK;
}

/* The length and count limits: min/maxLength, min/maxItems, min/maxProperties. */
static mcp_status kw_counts(nodec *b)
{
    static const struct {
        const char *name;
        int op;
        unsigned applies;
    } counts[] = {{"maxLength", K_MAXLEN, T_STR},       {"minLength", K_MINLEN, T_STR},
                  {"maxItems", K_MAXITEMS, T_ARR},      {"minItems", K_MINITEMS, T_ARR},
                  {"maxProperties", K_MAXPROPS, T_OBJ}, {"minProperties", K_MINPROPS, T_OBJ}};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        const mcp_json *x = mcp_json_get(b->v, counts[i].name);
        if (!x)
            continue;
        kw *k = kw_new(b, counts[i].op, counts[i].name, counts[i].applies);
        if (!get_count(x, &k->u.count))
            return mcp__comp_bad(b->c, b->n, counts[i].name, MCP_ERR_SCHEMA,
                                 "must be a non-negative integer");
        kw_push(b);
    }
    return MCP_OK;
}

/* pattern, uniqueItems, required. */
static mcp_status kw_pattern_unique_required(nodec *b)
{
    const mcp_json *x;
    mcp_status st;
    if ((x = mcp_json_get(b->v, "pattern")) != NULL) {
        kw *k = kw_new(b, K_PATTERN, "pattern", T_STR);
        if ((st = compile_regex(b->c, b->n, "pattern", x, &k->u.re)) != MCP_OK)
            return st;
        kw_push(b);
    }
    if ((x = mcp_json_get(b->v, "uniqueItems")) != NULL) {
        if (mcp_json_typeof(x) != MCP_JSON_BOOL)
            return mcp__comp_bad(b->c, b->n, "uniqueItems", MCP_ERR_SCHEMA, "must be a boolean");
        if (mcp_json_bool(x)) {
            kw_new(b, K_UNIQUE, "uniqueItems", T_ARR);
            kw_push(b);
        }
    }
    if ((x = mcp_json_get(b->v, "required")) != NULL) {
        kw *k = kw_new(b, K_REQUIRED, "required", T_OBJ);
        if ((st = compile_names(b->c, b->n, "required", x, &k->u.req.names, &k->u.req.n)))
            return st;
        if (k->u.req.n)
            kw_push(b);
    }
    return MCP_OK;
}

/* The validation vocabulary's keywords, in their evaluation order. */
static mcp_status kw_validation(nodec *b)
{
    mcp_status st = MCP_OK;
    if (b->voc & V_VALIDATION) {
        if (!(st = kw_type(b)) && !(st = kw_enum_const(b)) && !(st = kw_numbers(b)) &&
            !(st = kw_counts(b)))
            st = kw_pattern_unique_required(b);
    }
    return st;
}

/* `format`, when it asserts (MCP_SCHEMA_FORMAT_ASSERT, or the format-assertion vocabulary). */
static mcp_status kw_format(nodec *b)
{
    const mcp_json *x = mcp_json_get(b->v, "format");
    int d7 = b->d7;
    if (!x || !((b->c->s->format_assert && (d7 || (b->voc & (V_FORMAT_ANN | V_FORMAT_ASSERT)))) ||
                (!d7 && (b->voc & V_FORMAT_ASSERT))))
        return MCP_OK;
    size_t fl;
    const char *f = mcp_json_str(x, &fl);
    if (!f)
        return mcp__comp_bad(b->c, b->n, "format", MCP_ERR_SCHEMA, "must be a string");
    int id = mcp__schema_format_id(f, fl);
    if (id != MCP__FMT_NONE) {
        kw_new(b, K_FORMAT, "format", T_STR)->u.fmt = id;
        kw_push(b);
    }
    return MCP_OK;
}

/* dependentRequired (2020-12) and the array half of `dependencies`. */
static mcp_status kw_depreq(nodec *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *kwname = pass == 0 ? "dependentRequired" : "dependencies";
        const mcp_json *x;
        if (pass == 0 && (b->d7 || !(b->voc & V_VALIDATION)))
            continue;
        if ((x = mcp_json_get(b->v, kwname)) == NULL)
            continue;
        if (mcp_json_typeof(x) != MCP_JSON_OBJECT)
            return mcp__comp_bad(b->c, b->n, kwname, MCP_ERR_SCHEMA, "must be an object");
        size_t cnt = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++)
            if (pass == 0 || mcp_json_typeof(mcp_json_value_at(x, i)) == MCP_JSON_ARRAY)
                cnt++;
        if (!cnt)
            continue;
        kw *k = kw_new(b, K_DEPREQ, kwname, T_OBJ);
        depreq *d = (depreq *)mcp__ar_zalloc(&b->c->s->ar, cnt * sizeof(*d));
        if (!d)
            return mcp__comp_nomem(b->c);
        size_t j = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++) {
            const mcp_json *m = mcp_json_value_at(x, i);
            mcp_status st;
            if (pass == 1 && mcp_json_typeof(m) != MCP_JSON_ARRAY)
                continue;
            d[j].key.s = mcp_json_key_at(x, i, &d[j].key.n);
            if ((st = compile_names(b->c, b->n, kwname, m, &d[j].names, &d[j].n)))
                return st;
            j++;
        }
        k->u.depreq.v = d;
        k->u.depreq.n = cnt;
        kw_push(b);
    }
    return MCP_OK;
}

/* ---- applicators ------------------------------------------------------- */

/* prefixItems and items (draft-07: items as an array or one schema, and additionalItems). */
static mcp_status kw_items(nodec *b)
{
    comp *c = b->c;
    int d7 = b->d7;
    mcp_status st;
    size_t nprefix = 0;
    const char *items_kw = d7 ? "additionalItems" : "items";
    const mcp_json *x, *pfx = mcp_json_get(b->v, d7 ? "items" : "prefixItems");
    if (pfx && (!d7 || mcp_json_typeof(pfx) == MCP_JSON_ARRAY)) {
        kw *k = kw_new(b, K_PREFIX, d7 ? "items" : "prefixItems", T_ARR);
        /* draft-07 allows an empty `items` array. */
        if ((st = compile_list(c, b->n, k->name, pfx, &k->u.list, d7)) != MCP_OK)
            return st;
        nprefix = k->u.list.n;
        kw_push(b);
    } else if (d7 && pfx) {
        items_kw = NULL;
        kw *k = kw_new(b, K_ITEMS, "items", T_ARR);
        if ((st = mcp__child(c, b->n, pfx, &k->u.items.sub)) != MCP_OK)
            return st;
        k->u.items.start = 0;
        kw_push(b);
    }
    if (items_kw && (!d7 || pfx) && (x = mcp_json_get(b->v, items_kw)) != NULL) {
        kw *k = kw_new(b, K_ITEMS, items_kw, T_ARR);
        if ((st = mcp__child(c, b->n, x, &k->u.items.sub)) != MCP_OK)
            return st;
        k->u.items.start = nprefix;
        kw_push(b);
    }
    return MCP_OK;
}

/* contains, with minContains and maxContains (2020-12, validation vocabulary). */
static mcp_status kw_contains(nodec *b)
{
    const mcp_json *x = mcp_json_get(b->v, "contains");
    if (!x)
        return MCP_OK;
    kw *k = kw_new(b, K_CONTAINS, "contains", T_ARR);
    mcp_status st = mcp__child(b->c, b->n, x, &k->u.contains.sub);
    if (st != MCP_OK)
        return st;
    k->u.contains.min = 1;
    const mcp_json *mn = b->d7 ? NULL : mcp_json_get(b->v, "minContains");
    const mcp_json *mx = b->d7 ? NULL : mcp_json_get(b->v, "maxContains");
    if (mn && (b->voc & V_VALIDATION)) {
        if (!get_count(mn, &k->u.contains.min))
            return mcp__comp_bad(b->c, b->n, "minContains", MCP_ERR_SCHEMA,
                                 "must be a non-negative integer");
        k->u.contains.has_min = 1;
    }
    if (mx && (b->voc & V_VALIDATION)) {
        if (!get_count(mx, &k->u.contains.max))
            return mcp__comp_bad(b->c, b->n, "maxContains", MCP_ERR_SCHEMA,
                                 "must be a non-negative integer");
        k->u.contains.has_max = 1;
    }
    kw_push(b);
    return MCP_OK;
}

/*
 * Notes repeated keys of `properties` (the last one counts) in pr->dups,
 * and gives more than 8 entries an open-addressing index (later duplicates
 * of a key override earlier ones, as lookup does).
 */
static mcp_status props_index(comp *c, props *pr)
{
    if (pr->n <= 8) {
        for (size_t i = 0; i < pr->n; i++)
            for (size_t j = i + 1; j < pr->n; j++)
                if (pr->ents[i].key.n == pr->ents[j].key.n &&
                    memcmp(pr->ents[i].key.s, pr->ents[j].key.s, pr->ents[i].key.n) == 0)
                    pr->dups = 1;
        return MCP_OK;
    }
    uint32_t size = 16;
    while (size < pr->n * 2)
        size *= 2;
    pr->tab = (uint32_t *)mcp__ar_zalloc(&c->s->ar, size * sizeof(uint32_t));
    if (!pr->tab)
        return mcp__comp_nomem(c);
    pr->mask = size - 1;
    for (size_t i = 0; i < pr->n; i++) {
        uint32_t h = pr->ents[i].hash & pr->mask;
        while (pr->tab[h]) {
            propent *o = &pr->ents[pr->tab[h] - 1];
            if (o->key.n == pr->ents[i].key.n &&
                memcmp(o->key.s, pr->ents[i].key.s, o->key.n) == 0) {
                pr->dups = 1;
                break;
            }
            h = (h + 1) & pr->mask;
        }
        pr->tab[h] = (uint32_t)i + 1;
    }
    return MCP_OK;
}

/* The `properties` entries (pp) of pr: names, hashes, subschemas, the index. */
static mcp_status props_entries(nodec *b, props *pr, const mcp_json *pp)
{
    pr->n = mcp_json_len(pp);
    if (!pr->n)
        return MCP_OK;
    pr->ents = (propent *)mcp__ar_zalloc(&b->c->s->ar, pr->n * sizeof(propent));
    if (!pr->ents)
        return mcp__comp_nomem(b->c);
    for (size_t i = 0; i < pr->n; i++) {
        propent *e = &pr->ents[i];
        e->key.s = mcp_json_key_at(pp, i, &e->key.n);
        e->hash = hash_bytes(e->key.s, e->key.n);
        mcp_status st = mcp__child(b->c, b->n, mcp_json_value_at(pp, i), &e->n);
        if (st != MCP_OK)
            return st;
    }
    return props_index(b->c, pr);
}

/* The `patternProperties` entries (pat) of pr: each member name is a regex source. */
static mcp_status props_patterns(nodec *b, props *pr, const mcp_json *pat)
{
    pr->npats = mcp_json_len(pat);
    if (!pr->npats)
        return MCP_OK;
    pr->pats = (patent *)mcp__ar_zalloc(&b->c->s->ar, pr->npats * sizeof(patent));
    if (!pr->pats)
        return mcp__comp_nomem(b->c);
    for (size_t i = 0; i < pr->npats; i++) {
        patent *e = &pr->pats[i];
        size_t kl;
        const char *key = mcp_json_key_at(pat, i, &kl);
        mcp_status st = mcp__re_build(b->c, b->n, "patternProperties", key, kl, &e->re);
        if (st != MCP_OK)
            return st;
        if ((st = mcp__child(b->c, b->n, mcp_json_value_at(pat, i), &e->n)) != MCP_OK)
            return st;
    }
    return MCP_OK;
}

/* properties, patternProperties and additionalProperties: one keyword, applied in one pass. */
static mcp_status kw_props(nodec *b)
{
    const mcp_json *pp = mcp_json_get(b->v, "properties");
    const mcp_json *pat = mcp_json_get(b->v, "patternProperties");
    const mcp_json *ap = mcp_json_get(b->v, "additionalProperties");
    mcp_status st;
    if (!pp && !pat && !ap)
        return MCP_OK;
    if ((pp && mcp_json_typeof(pp) != MCP_JSON_OBJECT) ||
        (pat && mcp_json_typeof(pat) != MCP_JSON_OBJECT))
        return mcp__comp_bad(b->c, b->n,
                             pp && mcp_json_typeof(pp) != MCP_JSON_OBJECT ? "properties"
                                                                          : "patternProperties",
                             MCP_ERR_SCHEMA, "must be an object");
    props *pr = (props *)mcp__ar_zalloc(&b->c->s->ar, sizeof(*pr));
    if (!pr)
        return mcp__comp_nomem(b->c);
    pr->has_props = pp != NULL;
    if ((st = props_entries(b, pr, pp)) != MCP_OK || (st = props_patterns(b, pr, pat)) != MCP_OK)
        return st;
    if (ap && (st = mcp__child(b->c, b->n, ap, &pr->add)) != MCP_OK)
        return st;
    kw_new(b, K_PROPS, pp ? "properties" : pat ? "patternProperties" : "additionalProperties",
           T_OBJ)->u.pr = pr;
    kw_push(b);
    return MCP_OK;
}

/* A keyword whose argument is one subschema (propertyNames, not, unevaluated*). */
static mcp_status kw_sub(nodec *b, int op, const char *name, unsigned applies)
{
    const mcp_json *x = mcp_json_get(b->v, name);
    if (!x)
        return MCP_OK;
    kw *k = kw_new(b, op, name, applies);
    mcp_status st = mcp__child(b->c, b->n, x, &k->u.sub);
    if (st != MCP_OK)
        return st;
    kw_push(b);
    return MCP_OK;
}

/* dependentSchemas (2020-12) and the schema half of `dependencies`. */
static mcp_status kw_depschemas(nodec *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *kwname = pass == 0 ? "dependentSchemas" : "dependencies";
        const mcp_json *x;
        if (pass == 0 && b->d7)
            continue;
        if ((x = mcp_json_get(b->v, kwname)) == NULL)
            continue;
        if (mcp_json_typeof(x) != MCP_JSON_OBJECT)
            return mcp__comp_bad(b->c, b->n, kwname, MCP_ERR_SCHEMA, "must be an object");
        size_t cnt = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++)
            if (mcp_json_typeof(mcp_json_value_at(x, i)) != MCP_JSON_ARRAY)
                cnt++;
        if (!cnt)
            continue;
        depsch *d = (depsch *)mcp__ar_zalloc(&b->c->s->ar, cnt * sizeof(*d));
        if (!d)
            return mcp__comp_nomem(b->c);
        size_t j = 0;
        for (size_t i = 0; i < mcp_json_len(x); i++) {
            const mcp_json *m = mcp_json_value_at(x, i);
            mcp_status st;
            if (mcp_json_typeof(m) == MCP_JSON_ARRAY)
                continue;
            d[j].key.s = mcp_json_key_at(x, i, &d[j].key.n);
            if ((st = mcp__child(b->c, b->n, m, &d[j].n)) != MCP_OK)
                return st;
            j++;
        }
        kw *k = kw_new(b, K_DEPSCHEMAS, kwname, T_OBJ);
        k->u.depsch.v = d;
        k->u.depsch.n = cnt;
        kw_push(b);
    }
    return MCP_OK;
}

/* allOf, anyOf, oneOf, not, if (with then and else). */
static mcp_status kw_logic(nodec *b)
{
    static const struct {
        const char *name;
        int op;
    } lists[] = {{"allOf", K_ALLOF}, {"anyOf", K_ANYOF}, {"oneOf", K_ONEOF}};
    const mcp_json *x;
    mcp_status st;
    for (size_t i = 0; i < 3; i++) {
        if ((x = mcp_json_get(b->v, lists[i].name)) == NULL)
            continue;
        kw *k = kw_new(b, lists[i].op, lists[i].name, T_ANY);
        if ((st = compile_list(b->c, b->n, lists[i].name, x, &k->u.list, 0)) != MCP_OK)
            return st;
        kw_push(b);
    }
    if ((st = kw_sub(b, K_NOT, "not", T_ANY)) != MCP_OK)
        return st;
    if ((x = mcp_json_get(b->v, "if")) != NULL) {
        kw *k = kw_new(b, K_IF, "if", T_ANY);
        if ((st = mcp__child(b->c, b->n, x, &k->u.cond.if_)) != MCP_OK)
            return st;
        const mcp_json *th = mcp_json_get(b->v, "then"), *el = mcp_json_get(b->v, "else");
        if (th && (st = mcp__child(b->c, b->n, th, &k->u.cond.then_)) != MCP_OK)
            return st;
        if (el && (st = mcp__child(b->c, b->n, el, &k->u.cond.else_)) != MCP_OK)
            return st;
        /* `if` alone still matters to unevaluated*: its annotations count. */
        kw_push(b);
    }
    return MCP_OK;
}

/* The applicator vocabulary's keywords, in their evaluation order. */
static mcp_status kw_applicators(nodec *b)
{
    mcp_status st = MCP_OK;
    if (b->voc & V_APPLICATOR) {
        if (!(st = kw_items(b)) && !(st = kw_contains(b)) && !(st = kw_props(b)) &&
            !(st = kw_sub(b, K_PROPNAMES, "propertyNames", T_OBJ)) && !(st = kw_depschemas(b)))
            st = kw_logic(b);
    }
    return st;
}

/* unevaluatedItems and unevaluatedProperties (2020-12): evaluated last, they need annotations. */
static mcp_status kw_unevaluated(nodec *b)
{
    mcp_status st;
    if (b->d7 || !(b->voc & V_UNEVALUATED))
        return MCP_OK;
    unsigned had = b->nk;
    if ((st = kw_sub(b, K_UNEV_ITEMS, "unevaluatedItems", T_ARR)) != MCP_OK)
        return st;
    if (b->nk != had)
        b->n->uneval |= T_ARR;
    had = b->nk;
    if ((st = kw_sub(b, K_UNEV_PROPS, "unevaluatedProperties", T_OBJ)) != MCP_OK)
        return st;
    if (b->nk != had)
        b->n->uneval |= T_OBJ;
    return MCP_OK;
}

/* ---- the node's shape -------------------------------------------------- */

/* Keywords that only check the value itself: no subschema, no annotation. */
static int op_is_leaf(int op)
{
    switch (op) {
    case K_TYPE:
    case K_ENUM:
    case K_CONST:
    case K_MULOF:
    case K_MAX:
    case K_XMAX:
    case K_MIN:
    case K_XMIN:
    case K_MAXLEN:
    case K_MINLEN:
    case K_PATTERN:
    case K_FORMAT:
    case K_MAXITEMS:
    case K_MINITEMS:
    case K_MAXPROPS:
    case K_MINPROPS:
    case K_REQUIRED:
        return 1;
    default:
        return 0;
    }
}

/*
 * Keeps the keyword list in the arena and says what shape the node has:
 * a leaf (only value checks; with what v_leaf needs at hand and its
 * lfast), a `$ref` wrapper, or a flat object.
 */
static mcp_status node_shape(nodec *b)
{
    comp *c = b->c;
    node *n = b->n;
    const kw *k = b->k;
    unsigned nk = b->nk;
    if (nk) {
        n->kws = (kw *)mcp__ar_alloc(&c->s->ar, nk * sizeof(kw));
        if (!n->kws)
            return mcp__comp_nomem(c);
        memcpy(n->kws, k, nk * sizeof(kw));
        n->nkw = nk;
    }
    n->leaf = 1;
    for (unsigned i = 0; i < nk; i++)
        if (!op_is_leaf(k[i].op))
            n->leaf = 0;
    if (n->leaf) {
        /* What v_leaf needs at hand: `type` (always first when present), then
           whether anything else looks at the instance's type at all. */
        unsigned ki = 0;
        n->ltypes = T_ANY;
        if (nk && k[0].op == K_TYPE) {
            n->ltypes = (unsigned char)k[0].u.types;
            ki = 1;
        }
        n->lfirst = (unsigned char)ki;
        n->lsteps = 1;
        for (; ki < nk; ki++) {
            n->lmore |= k[ki].applies;
            n->lsteps += k[ki].op == K_PATTERN;
        }
        mcp_status st = mcp__make_lfast(c, n, n->kws, nk);
        if (st != MCP_OK)
            return st;
    }
    n->refonly = nk == 1 && k[0].op == K_REF;
    n->flat = !n->leaf && !n->uneval;
    for (unsigned i = 0; i < nk; i++)
        if (!(k[i].op == K_TYPE || k[i].op == K_REQUIRED || k[i].op == K_MINPROPS ||
              k[i].op == K_MAXPROPS || (k[i].op == K_PROPS && k[i].u.pr->npats == 0)))
            n->flat = 0;
    return MCP_OK;
}

/*
 * The keywords of a node, family by family, in the order v_node evaluates
 * them: `$ref` and `$dynamicRef`; the value checks (type first); format;
 * dependentRequired; the applicators; unevaluated* last.
 */
mcp_status mcp__compile_node(comp *c, node *n)
{
    static mcp_status (*const families[])(nodec *) = {
        kw_dynref, kw_validation, kw_format, kw_depreq, kw_applicators, kw_unevaluated};
    n->state = N_DONE;
    if (n->is_bool)
        return MCP_OK;
    nodec b;
    memset(&b, 0, sizeof(b));
    b.c = c;
    b.n = n;
    b.v = n->src;
    b.voc = n->dialect == D_7 ? V_ALL_2020 : n->res->vocab;
    b.d7 = n->dialect == D_7;
    int alone = 0;
    mcp_status st = kw_ref(&b, &alone);
    for (size_t i = 0; !st && !alone && i < sizeof(families) / sizeof(families[0]); i++)
        st = families[i](&b);
    return st ? st : node_shape(&b);
}
