/*
 * Violations and the report. A violation has three strings: the instance
 * path, the keyword path and a message that starts with the instance path.
 * Paths live on the C stack as linked segments (pseg) and are written out
 * only when a violation is recorded. Without a result list the first
 * violation goes into the caller's mcp_error, cut to fit, and nothing is
 * allocated; with one, the strings go into the call's text and the report
 * is made at the end in one allocation (make_report). Every message text is
 * here, one say_* function per violation.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>

/* ======================================================================== */
/* Paths and values                                                          */

static void path_put(sbuf *b, const pseg *p)
{
    if (!p)
        return;
    if (p->up)
        path_put(b, p->up);
    if (p->raw) {
        sb_put(b, p->s, p->n);
    } else if (p->s) {
        /* The usual key: short, nothing to escape, room at hand. */
        if (p->n <= 32 && !(b->nomem | b->full) && b->len + p->n + 1 < b->cap &&
            !ptr_special(p->s, p->n)) {
            b->p[b->len] = '/';
            copy_small(b->p + b->len + 1, p->s, p->n);
            b->len += p->n + 1;
            b->p[b->len] = '\0';
        } else {
            mcp__sb_ptr_token(b, p->s, p->n);
        }
    }
    else
        mcp__sb_printf(b, "/%zu", p->n);
}

/* Writes a short rendering of a value (scalars in full, containers elided). */
void mcp__put_value(sbuf *b, const mcp_json *v, size_t max)
{
    size_t n;
    const char *s;
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_NULL:
        sb_puts(b, "null");
        break;
    case MCP_JSON_BOOL:
        sb_puts(b, mcp_json_bool(v) ? "true" : "false");
        break;
    case MCP_JSON_INT:
    case MCP_JSON_REAL:
        s = mcp_json_num_text(v, &n);
        sb_put(b, s, n);
        break;
    case MCP_JSON_STRING:
        s = mcp_json_str(v, &n);
        sb_putc(b, '"');
        if (n > max) {
            sb_put(b, s, utf8_clip(s, n, max));
            sb_puts(b, "...");
        } else {
            sb_put(b, s, n);
        }
        sb_putc(b, '"');
        break;
    case MCP_JSON_ARRAY:
        sb_puts(b, mcp_json_len(v) ? "[...]" : "[]");
        break;
    case MCP_JSON_OBJECT:
        sb_puts(b, mcp_json_len(v) ? "{...}" : "{}");
        break;
    default:
        break;
    }
}

/* Lists the declared property names into a message (bounded). */
void mcp__put_allowed(sbuf *b, const props *pr)
{
    if (!pr || !pr->n) {
        sb_puts(b, "no properties are declared");
        return;
    }
    sb_puts(b, "allowed: ");
    for (size_t i = 0; i < pr->n; i++) {
        if (b->len > 160) {
            sb_puts(b, ", ...");
            break;
        }
        if (i)
            sb_puts(b, ", ");
        sb_put(b, pr->ents[i].key.s, pr->ents[i].key.n);
    }
}

static const char *ival_type_name(const ival *iv)
{
    if (!iv->v)
        return "string";
    mcp_json_type t = mcp_json_typeof(iv->v);
    if (t == MCP_JSON_REAL) {
        double d = mcp_json_number(iv->v);
        return floor(d) == d && isfinite(d) ? "integer" : "number";
    }
    return mcp_json_type_name(t);
}

/* ======================================================================== */
/* Recording a violation                                                     */

/*
 * Records a violation into the caller's mcp_error only (no result list):
 * the first one, cut to fit, without allocating; later ones end the
 * validation.
 */
static int emit_into_err(vctx *c, emitter *em, const pseg *ip, const char *sub, size_t subn)
{
    if (c->err && !c->have_first) {
        sbuf p;
        sb_fixed(&p, c->err->pointer, sizeof(c->err->pointer));
        path_put(&p, ip);
        sb_fixed(&em->m, c->err->message, sizeof(c->err->message));
        path_put(&em->m, ip);
        if (sub)
            mcp__sb_ptr_token(&em->m, sub, subn);
        if (em->m.len == 0)
            sb_puts(&em->m, "(root)");
        sb_put(&em->m, ": ", 2);
        em->b = &em->m;
        return 1;
    }
    c->have_first = 1;
    c->stop = 1;
    return 0;
}

/* Room for one more record: the first VREC_LOCAL live in run()'s frame; beyond, on the heap. */
static int grow_recs(vctx *c)
{
    size_t cap = c->reccap * 2;
    vrec *r = (vrec *)mcp_malloc(cap * sizeof(*r));
    if (!r) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return 0;
    }
    memcpy(r, c->recs, c->nrec * sizeof(*r));
    if (c->reccap > VREC_LOCAL)
        mcp_free(c->recs);
    c->recs = r;
    c->reccap = cap;
    return 1;
}

int mcp__emit_begin(vctx *c, emitter *em, const pseg *ip, const pseg *kp, const char *kwtok,
                    size_t kwlen, const char *sub, size_t subn)
{
    if (c->stop || c->status)
        return 0;
    if (!c->report)
        return emit_into_err(c, em, ip, sub, subn);
    if (c->nrec >= c->s->max_errors) {
        c->truncated = 1;
        c->stop = 1;
        return 0;
    }
    if (c->nrec == c->reccap && !grow_recs(c))
        return 0;
    /* Instance path, keyword path and message, each NUL-terminated. The
       message starts with the instance path again: a copy of its bytes. */
    sbuf *b = &c->text;
    em->ip_off = b->len;
    path_put(b, ip);
    size_t ipn = b->len - em->ip_off;
    sb_putc(b, '\0');
    em->kp_off = b->len;
    path_put(b, kp);
    if (kwtok)
        sb_put(b, kwtok, kwlen);
    sb_putc(b, '\0');
    em->msg_off = b->len;
    if (ipn && (b->len + ipn < b->cap || mcp__sb_room(b, ipn) >= ipn) && !b->nomem) {
        memcpy(b->p + b->len, b->p + em->ip_off, ipn);
        b->len += ipn;
        b->p[b->len] = '\0';
    }
    if (sub)
        mcp__sb_ptr_token(b, sub, subn);
    if (b->len == em->msg_off)
        sb_puts(b, "(root)");
    sb_put(b, ": ", 2);
    em->b = b;
    return 1;
}

void mcp__emit_end(vctx *c, emitter *em, const char *label)
{
    if (!c->report) {
        c->err->status = MCP_ERR_INVALID;
        c->err->rpc_code = 0;
        c->err->offset = 0;
        c->err->id[0] = '\0';
        c->have_first = 1;
        c->stop = 1;
        return;
    }
    sbuf *b = em->b;
    sb_putc(b, '\0');
    if (b->nomem) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return;
    }
    vrec *r = &c->recs[c->nrec++];
    r->ip = em->ip_off;
    r->kp = em->kp_off;
    r->msg = em->msg_off;
    r->label = label;
    c->have_first = 1;
    if (c->first_only)
        c->stop = 1;
}

/* A violation whose message is a printf-style format (%s, %.*s, %zu): the rare ones. */
static void emit(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok,
                 const char *label, const char *sub, size_t subn, const char *fmt, ...)
    MCP__PRINTF(8, 9);
static void emit(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok,
                 const char *label, const char *sub, size_t subn, const char *fmt, ...)
{
    emitter em;
    if (!mcp__emit_begin(c, &em, ip, kp, kwtok, kwtok ? strlen(kwtok) : 0, sub, subn))
        return;
    va_list ap;
    va_start(ap, fmt);
    mcp__sb_vprintf(em.b, fmt, ap);
    va_end(ap);
    mcp__emit_end(c, &em, label);
}

/* ======================================================================== */
/* Violations written in one go                                              */

/* A piece of a violation message (emit_parts). */
typedef struct mpart {
    const char *s; /* bytes */
    size_t n;      /* their count */
} mpart;

#define MP_LIT(lit) {(lit), sizeof(lit) - 1}
#define MP_STR(str) {(str), strlen(str)}

/* Most bytes a path takes written out (every key byte escaped, indexes of 20 digits). */
static size_t path_bound(const pseg *p)
{
    size_t n = 0;
    for (; p; p = p->up)
        n += p->raw ? p->n : p->s ? 1 + 2 * p->n : 21;
    return n;
}

/* Copies n bytes to d (short ones inline); returns the end. */
static SCHEMA_INLINE char *mem_put(char *d, const char *s, size_t n)
{
    if (n <= 32)
        copy_small(d, s, n);
    else
        memcpy(d, s, n);
    return d + n;
}

/* Writes a reference token ('/' and the escaped key) into room known to be enough. */
static char *token_write(char *d, const char *s, size_t n)
{
    *d++ = '/';
    if (!ptr_special(s, n))
        return mem_put(d, s, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '~' || s[i] == '/') {
            *d++ = '~';
            *d++ = s[i] == '~' ? '0' : '1';
        } else {
            *d++ = s[i];
        }
    }
    return d;
}

/* Writes a path (what path_put appends) into room known to be enough; returns the end. */
static char *path_write(char *d, const pseg *p)
{
    if (!p)
        return d;
    if (p->up)
        d = path_write(d, p->up);
    if (p->raw)
        return mem_put(d, p->s, p->n);
    if (p->s)
        return token_write(d, p->s, p->n);
    char digits[24];
    size_t i = sizeof(digits), v = p->n;
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    *d++ = '/';
    copy_small(d, digits + i, sizeof(digits) - i);
    return d + sizeof(digits) - i;
}

/*
 * Records a violation whose message is the `np` pieces at `pt` (see
 * emit_begin for the other arguments). With a result list, the bytes it
 * takes are bounded first, room is made once, and the strings are written
 * straight in; the text is what emit_begin/emit_end would append piece by
 * piece. Without one, emit_begin/emit_end fill err, piece by piece (so a
 * cut falls where it always did).
 */
static void emit_parts(vctx *c, const pseg *ip, const pseg *kp, const char *kwtok, size_t kwlen,
                       const char *label, const char *sub, size_t subn, const mpart *pt,
                       unsigned np)
{
    emitter em;
    if (!c->report || c->stop || c->status || c->nrec >= c->s->max_errors ||
        c->nrec == c->reccap) {
        if (mcp__emit_begin(c, &em, ip, kp, kwtok, kwlen, sub, subn)) {
            for (unsigned i = 0; i < np; i++)
                sb_put(em.b, pt[i].s, pt[i].n);
            mcp__emit_end(c, &em, label);
        }
        return;
    }
    size_t ipb = path_bound(ip), msgn = 0;
    for (unsigned i = 0; i < np; i++)
        msgn += pt[i].n;
    /* Instance path twice, keyword path, the member name, "(root)", ": ",
       the pieces and three NULs. */
    size_t need = 2 * ipb + path_bound(kp) + kwlen + (sub ? 1 + 2 * subn : 0) + 6 + 2 + msgn + 3;
    sbuf *b = &c->text;
    if (b->len + need >= b->cap && mcp__sb_room(b, need) < need) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return;
    }
    char *base = b->p, *d = base + b->len;
    size_t ip_off = b->len;
    d = path_write(d, ip);
    size_t ipn = (size_t)(d - base) - ip_off;
    *d++ = '\0';
    size_t kp_off = (size_t)(d - base);
    d = path_write(d, kp);
    if (kwtok)
        d = mem_put(d, kwtok, kwlen);
    *d++ = '\0';
    size_t msg_off = (size_t)(d - base);
    d = mem_put(d, base + ip_off, ipn);
    if (sub)
        d = token_write(d, sub, subn);
    if ((size_t)(d - base) == msg_off) {
        memcpy(d, "(root)", 6);
        d += 6;
    }
    *d++ = ':';
    *d++ = ' ';
    for (unsigned i = 0; i < np; i++)
        d = mem_put(d, pt[i].s, pt[i].n);
    *d++ = '\0';
    b->len = (size_t)(d - base);
    b->p[b->len] = '\0';
    vrec *r = &c->recs[c->nrec++];
    r->ip = ip_off;
    r->kp = kp_off;
    r->msg = msg_off;
    r->label = label;
    c->have_first = 1;
    if (c->first_only)
        c->stop = 1;
}

/* Formats v in decimal into buf (24 bytes); returns the piece. */
static mpart mp_zu(char *buf, size_t v)
{
    size_t i = 24;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    mpart m = {buf + i, 24 - i};
    return m;
}

/* ======================================================================== */
/* The violations                                                            */

void mcp__say_false(vctx *c, const pseg *ip, const pseg *kp)
{
    emitter em;
    if (mcp__emit_begin(c, &em, ip, kp, NULL, 0, NULL, 0)) {
        SB_LIT(em.b, "no value is allowed here (the schema is false)");
        mcp__emit_end(c, &em, "false");
    }
}

void mcp__say_type(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const ival *iv)
{
    const mpart pt[] = {MP_LIT("must be "), {k->text, k->textn}, MP_LIT(", but is "),
                        MP_STR(ival_type_name(iv))};
    emit_parts(c, ip, kp, "/type", 5, "type", NULL, 0, pt, 4);
}

void mcp__say_enum(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    const mpart pt[] = {MP_LIT("must be one of: "), {k->text, k->textn}};
    emit_parts(c, ip, kp, "/enum", 5, "enum", NULL, 0, pt, 2);
}

void mcp__say_const(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    emitter em;
    if (mcp__emit_begin(c, &em, ip, kp, "/const", 6, NULL, 0)) {
        SB_LIT(em.b, "must be exactly ");
        sb_put(em.b, k->text, k->textn);
        mcp__emit_end(c, &em, "const");
    }
}

/* The numeric bounds and multipleOf; `what` is the relation that failed. */
void mcp__say_num(vctx *c, const pseg *ip, const pseg *kp, const kw *k, const char *what,
                  const ival *iv)
{
    /* Number texts are ASCII without NULs: %.*s of them is a plain cut. */
    size_t ln = k->u.num.v->len, vn = iv->v->len;
    const mpart pt[] = {MP_LIT("must be "),
                        MP_STR(what),
                        MP_LIT(" "),
                        {(const char *)k->u.num.v->p, ln > 40 ? 40 : ln},
                        MP_LIT(", but is "),
                        {(const char *)iv->v->p, vn > 40 ? 40 : vn}};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 6);
}

/* minLength/maxLength; `len` is the length in code points. */
void mcp__say_len(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len)
{
    char b1[24], b2[24];
    const mpart pt[] = {MP_LIT("must be at "),
                        MP_STR(k->op == K_MAXLEN ? "most" : "least"),
                        MP_LIT(" "),
                        mp_zu(b1, k->u.count),
                        MP_LIT(" characters long, but has "),
                        mp_zu(b2, len)};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 6);
}

void mcp__say_pattern(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    const mpart pt[] = {MP_LIT("must match the pattern \""), {k->u.re.src.s, k->textn},
                        MP_LIT("\"")};
    emit_parts(c, ip, kp, "/pattern", 8, "pattern", NULL, 0, pt, 3);
}

void mcp__say_format(vctx *c, const pseg *ip, const pseg *kp, const node *n)
{
    size_t fnl;
    const char *fname = mcp_json_str(mcp_json_get(n->src, "format"), &fnl);
    emit(c, ip, kp, "/format", "format", NULL, 0, "must be a valid %.*s", (int)fnl, fname);
}

/* min/maxItems, min/maxProperties. */
void mcp__say_count(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t len)
{
    char b1[24], b2[24];
    int over = k->op == K_MAXITEMS || k->op == K_MAXPROPS;
    const mpart pt[] = {MP_LIT("must have at "),
                        MP_STR(over ? "most" : "least"),
                        MP_LIT(" "),
                        mp_zu(b1, k->u.count),
                        MP_LIT(" "),
                        MP_STR((k->op == K_MAXITEMS || k->op == K_MINITEMS) ? "items" : "properties"),
                        MP_LIT(", but has "),
                        mp_zu(b2, len)};
    emit_parts(c, ip, kp, k->tok, k->nlen + 1, k->name, NULL, 0, pt, 8);
}

void mcp__say_unique(vctx *c, const pseg *ip, const pseg *kp, size_t a, size_t b)
{
    emit(c, ip, kp, "/uniqueItems", "uniqueItems", NULL, 0,
         "items must be unique, but items %zu and %zu are equal", a, b);
}

void mcp__say_required(vctx *c, const pseg *ip, const pseg *kp, const sstr *r)
{
    const mpart pt[] = {MP_LIT("required property missing")};
    emit_parts(c, ip, kp, "/required", 9, "required", r->s, r->n, pt, 1);
}

/* A name dependentRequired (k; entry d, keyword path ks) wants and the object lacks. */
void mcp__say_depreq(vctx *c, const pseg *ip, const pseg *ks, const kw *k, const depreq *d,
                     const sstr *name)
{
    emit(c, ip, ks, NULL, k->name, name->s, name->n,
         "required property missing (required when \"%.*s\" is present)",
         (int)utf8_clip(d->key.s, d->key.n, 60), d->key.s);
}

/* A member that additionalProperties: false rejects (k is the K_PROPS keyword). */
void mcp__say_additional(vctx *c, const pseg *is, const pseg *kp, const kw *k, const char *key,
                         size_t kn)
{
    /* As %.*s: at most 60 bytes (not cutting a character), none from a NUL on. */
    size_t clip = utf8_clip(key, kn, 60);
    const char *z = (const char *)memchr(key, '\0', clip);
    const mpart pt[] = {MP_LIT("property \""), {key, z ? (size_t)(z - key) : clip},
                        MP_LIT("\" is not allowed ("), {k->text, k->textn}, MP_LIT(")")};
    emit_parts(c, is, kp, "/additionalProperties", 21, "additionalProperties", NULL, 0, pt, 5);
}

void mcp__say_propname(vctx *c, const pseg *ip, const pseg *kp, const char *key, size_t kn)
{
    emit(c, ip, kp, "/propertyNames", "propertyNames", NULL, 0,
         "property name \"%.*s\" does not match the propertyNames schema",
         (int)utf8_clip(key, kn, 60), key);
}

/* An item past those `items`/additionalItems false (k) allows (is: its path). */
void mcp__say_no_item(vctx *c, const pseg *is, const pseg *kp, const kw *k)
{
    emit(c, is, kp, k->tok, k->name, NULL, 0, "no item allowed at this index (at most %zu items)",
         k->u.items.start);
}

/* contains (k) matched by `hits` items: too few, or more than maxContains. */
void mcp__say_contains(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t hits)
{
    if (hits >= k->u.contains.min)
        emit(c, ip, kp, "/maxContains", "maxContains", NULL, 0,
             "must contain at most %zu items matching the \"contains\" schema, but "
             "has %zu",
             k->u.contains.max, hits);
    else if (k->u.contains.has_min)
        emit(c, ip, kp, "/minContains", "minContains", NULL, 0,
             "must contain at least %zu items matching the \"contains\" schema, "
             "but has %zu",
             k->u.contains.min, hits);
    else
        emit(c, ip, kp, "/contains", "contains", NULL, 0,
             "must contain an item matching the \"contains\" schema, but none "
             "does");
}

/* anyOf or oneOf (k) with no alternative matching. */
void mcp__say_none_matches(vctx *c, const pseg *ip, const pseg *kp, const kw *k)
{
    emit(c, ip, kp, k->tok, k->name, NULL, 0,
         "must match %s of the %zu %s schemas, but matches none",
         k->op == K_ANYOF ? "at least one" : "exactly one", k->u.list.n, k->name);
}

void mcp__say_oneof_many(vctx *c, const pseg *ip, const pseg *kp, const kw *k, size_t hits,
                         size_t first, size_t second)
{
    emit(c, ip, kp, "/oneOf", "oneOf", NULL, 0,
         "must match exactly one of the %zu oneOf schemas, but matches %zu "
         "(indexes %zu and %zu)",
         k->u.list.n, hits, first, second);
}

void mcp__say_not(vctx *c, const pseg *ip, const pseg *kp)
{
    emit(c, ip, kp, "/not", "not", NULL, 0, "must not match the \"not\" schema");
}

/*
 * An item (key NULL) or a member (key[0..kn)) no subschema evaluated, with
 * unevaluatedItems or unevaluatedProperties (k) false.
 */
void mcp__say_unevaluated(vctx *c, const pseg *is, const pseg *kp, const kw *k, const char *key,
                          size_t kn)
{
    emitter em;
    if (!key) {
        emit(c, is, kp, k->tok, k->name, NULL, 0,
             "item not allowed (not evaluated by any subschema and "
             "unevaluatedItems is false)");
    } else if (mcp__emit_begin(c, &em, is, kp, k->tok, k->nlen + 1, NULL, 0)) {
        SB_LIT(em.b, "property \"");
        sb_put_prec(em.b, key, utf8_clip(key, kn, 60));
        SB_LIT(em.b, "\" is not allowed (not evaluated by any subschema "
                     "and unevaluatedProperties is false)");
        mcp__emit_end(c, &em, k->name);
    }
}

/* ======================================================================== */
/* The report                                                                */

/*
 * The report of a validation that kept violations: one allocation holding
 * the result, its violations and their strings (mcp_schema_result_free
 * knows this layout; nothing else makes results). The first violation also
 * goes to err, cut to fit. NULL with c->status set when memory ran out.
 */
mcp_schema_result *mcp__make_report(vctx *c)
{
    size_t n = c->nrec, len = c->text.len;
    size_t head = sizeof(mcp_schema_result) + n * sizeof(mcp_schema_error);
    mcp_schema_result *r = NULL;
    if (n < SIZE_MAX / 2 / sizeof(mcp_schema_error) && len < SIZE_MAX / 2)
        r = (mcp_schema_result *)mcp_malloc(head + len);
    if (!r) {
        mcp__hard_fail(c, MCP_ERR_NOMEM, "out of memory reporting violations");
        return NULL;
    }
    mcp_schema_error *e = (mcp_schema_error *)(r + 1);
    char *text = (char *)r + head;
    memcpy(text, c->text.p, len);
    for (size_t i = 0; i < n; i++) {
        e[i].instance_path = text + c->recs[i].ip;
        e[i].keyword_path = text + c->recs[i].kp;
        e[i].message = text + c->recs[i].msg;
        e[i].keyword = c->recs[i].label;
    }
    r->errors = e;
    r->count = n;
    r->truncated = c->truncated;
    if (c->err) {
        sbuf p;
        sb_fixed(&p, c->err->pointer, sizeof(c->err->pointer));
        sb_puts(&p, e[0].instance_path);
        sb_fixed(&p, c->err->message, sizeof(c->err->message));
        sb_puts(&p, e[0].message);
        c->err->status = MCP_ERR_INVALID;
        c->err->rpc_code = 0;
        c->err->offset = 0;
        c->err->id[0] = '\0';
    }
    return r;
}

void mcp_schema_result_free(mcp_schema_result *r)
{
    /* make_report's single block. */
    mcp_free(r);
}

mcp_status mcp_schema_result_write(mcp_jw *w, const mcp_schema_result *r)
{
    if (!w)
        return MCP_ERR_INVALID_ARG;
    mcp_jw_array_begin(w);
    for (size_t i = 0; r && i < r->count; i++) {
        const mcp_schema_error *e = &r->errors[i];
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "instancePath");
        mcp_jw_string(w, e->instance_path);
        mcp_jw_key(w, "keywordPath");
        mcp_jw_string(w, e->keyword_path);
        mcp_jw_key(w, "keyword");
        mcp_jw_string(w, e->keyword);
        mcp_jw_key(w, "message");
        mcp_jw_string(w, e->message);
        mcp_jw_object_end(w);
    }
    return mcp_jw_array_end(w);
}
