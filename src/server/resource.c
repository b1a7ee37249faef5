/*
 * Resources: the registry of resources (exact URIs) and resource templates
 * (RFC 6570), the resources methods, legacy subscriptions, and the
 * builder handlers use to answer a read.
 */
#include "util/abi.h"
#include "util/util.h"
#include "server/server_internal.h"
#include "server/uritemplate.h"

#include <string.h>

typedef struct mcp__resource {
    mcp__entry e;               /* key = uri or uri_template */
    int is_template;            /* key is a template */
    mcp__uritemplate tpl;       /* parsed template (borrows e.key) */
    char *name;                 /* required */
    char *title;                /* or NULL */
    char *description;          /* or NULL */
    char *mime_type;            /* or NULL */
    int64_t size;               /* or -1 */
    mcp_json_doc *icons_doc;    /* or NULL */
    mcp_json_doc *meta_doc;     /* or NULL */
    char *extension;            /* listed only to clients declaring this extension, or NULL */
    mcp_json_doc *ext_meta_doc; /* merged into _meta (listings for them; static contents), or NULL */
    char *text;                 /* static text content, or NULL */
    unsigned char *blob;        /* static binary content, or NULL */
    size_t blob_len;            /* its length */
    mcp_resource_fn handler;    /* dynamic content, or NULL */
    mcp_complete_fn complete;   /* template variable completion, or NULL */
    void *user_data;            /* for handler and complete */
    void (*user_data_free)(void *); /* its destructor */
    unsigned flags;             /* MCP_RESOURCE_* */
} mcp__resource;

struct mcp_read {
    mcp_jw w;         /* writes the "contents" array items */
    mcp_buf *buf;     /* the response buffer */
    unsigned items;   /* content items added */
    const char *version; /* the request's protocol version */
    const mcp_principal *principal; /* who the read runs for, or NULL */
};

static char *dup_opt(const char *s)
{
    return s ? mcp__strndup(s, strlen(s)) : NULL;
}

static void resource_destroy(mcp__entry *e)
{
    mcp__resource *r = (mcp__resource *)e;
    if (r->user_data_free)
        r->user_data_free(r->user_data);
    mcp_free(r->e.key);
    mcp_free(r->e.scopes);
    mcp_free(r->name);
    mcp_free(r->title);
    mcp_free(r->description);
    mcp_free(r->mime_type);
    mcp_json_doc_free(r->icons_doc);
    mcp_json_doc_free(r->meta_doc);
    mcp_free(r->text);
    mcp_free(r->blob);
    mcp_free(r->extension);
    mcp_json_doc_free(r->ext_meta_doc);
    mcp_free(r);
}

mcp_status mcp_server_add_resource_sized(mcp_server *srv, const mcp_resource_def *def, size_t def_size,
                                         mcp_error *err)
{
    mcp_resource_def def_copy;
    mcp_status st = MCP__OPTS_IN(mcp_resource_def, &def_copy, def, def_size, err);
    if ((st = mcp__def_in(st, srv && def, "resource", def_copy.user_data, def_copy.user_data_free, err)))
        return st;
    def = &def_copy;
    mcp__resource *r = mcp__calloc(1, sizeof *r);
    if (!r)
        return mcp__def_in(MCP_ERR_NOMEM, 1, "resource", def->user_data, def->user_data_free, err);
    atomic_init(&r->e.refs, 1);
    r->e.destroy = resource_destroy;
    r->user_data = def->user_data;
    r->user_data_free = def->user_data_free;
    r->handler = def->handler;
    r->complete = def->complete;
    r->flags = def->flags;
    r->size = def->size;
    const char *key = def->uri ? def->uri : def->uri_template;
    if (!def->name || !key || (def->uri && def->uri_template) || !*key) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a resource needs a name and exactly one of uri and uri_template");
        goto fail;
    }
    r->is_template = def->uri_template != NULL;
    if (r->is_template && (def->text || def->blob || !def->handler)) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "resource template %s needs a handler and no static content", key);
        goto fail;
    }
    if (!r->is_template && !def->handler && !def->text && !def->blob) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "resource %s needs text, a blob or a handler", key);
        goto fail;
    }
    r->e.key_len = strlen(key);
    r->e.key = mcp__strndup(key, r->e.key_len);
    r->name = dup_opt(def->name);
    r->title = dup_opt(def->title);
    r->description = dup_opt(def->description);
    r->mime_type = dup_opt(def->mime_type);
    r->text = dup_opt(def->text);
    if (def->blob) {
        r->blob = mcp_malloc(def->blob_len ? def->blob_len : 1);
        if (r->blob && def->blob_len)
            memcpy(r->blob, def->blob, def->blob_len);
        r->blob_len = def->blob_len;
    }
    if (!r->e.key || !r->name || (def->title && !r->title) || (def->description && !r->description) ||
        (def->mime_type && !r->mime_type) || (def->text && !r->text) || (def->blob && !r->blob)) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        goto fail;
    }
    if ((st = mcp__scopes_normalize(def->scopes, &r->e.scopes))) {
        st = mcp__fail(err, st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG, 0, 0,
                       "resource %s: scopes must be space-separated OAuth scope tokens (RFC 6749)", key);
        goto fail;
    }
    if (r->is_template && (st = mcp__uritemplate_parse(r->e.key, &r->tpl))) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "%s is not a valid URI template", key);
        goto fail;
    }
    if ((st = mcp__parse_opt_json(def->icons, MCP_JSON_ARRAY, "icons", &r->icons_doc, err)) ||
        (st = mcp__parse_opt_json(def->meta, MCP_JSON_OBJECT, "_meta", &r->meta_doc, err)) ||
        (st = mcp__parse_opt_json(def->extension_meta, MCP_JSON_OBJECT, "extension_meta", &r->ext_meta_doc, err)))
        goto fail;
    if (def->extension && !(r->extension = dup_opt(def->extension))) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        goto fail;
    }
    pthread_rwlock_wrlock(&srv->reg_lock);
    st = mcp__reg_add_locked(srv, r->is_template ? &srv->templates : &srv->resources, &r->e);
    if (!st) {
        srv->has_resources = 1;
        if (r->complete)
            srv->has_completions = 1;
    }
    pthread_rwlock_unlock(&srv->reg_lock);
    if (st) {
        mcp__fail(err, st, 0, 0, st == MCP_ERR_EXISTS ? "resource %s is already registered" : "out of memory (%s)",
                  key);
        goto fail;
    }
    mcp__server_notify_all(srv, "notifications/resources/list_changed");
    return MCP_OK;
fail:
    resource_destroy(&r->e);
    return st;
}

mcp_status mcp_server_remove_resource(mcp_server *srv, const char *key)
{
    if (!srv || !key)
        return MCP_ERR_INVALID_ARG;
    size_t n = strlen(key);
    pthread_rwlock_wrlock(&srv->reg_lock);
    mcp__entry *e = mcp__reg_remove_locked(&srv->resources, key, n);
    if (!e)
        e = mcp__reg_remove_locked(&srv->templates, key, n);
    pthread_rwlock_unlock(&srv->reg_lock);
    if (!e)
        return MCP_ERR_NOT_FOUND;
    mcp__entry_release(e);
    mcp__server_notify_all(srv, "notifications/resources/list_changed");
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                   */

static void write_common(mcp_jw *w, const mcp__resource *r, const char *version, const mcp_json *caps)
{
    mcp_jw_key(w, "name");
    mcp_jw_string(w, r->name);
    if (r->title && mcp__version_at_least(version, MCP_PROTOCOL_2025_06_18)) {
        mcp_jw_key(w, "title");
        mcp_jw_string(w, r->title);
    }
    if (r->description) {
        mcp_jw_key(w, "description");
        mcp_jw_string(w, r->description);
    }
    if (r->mime_type) {
        mcp_jw_key(w, "mimeType");
        mcp_jw_string(w, r->mime_type);
    }
    if (r->icons_doc && mcp__version_at_least(version, MCP_PROTOCOL_2025_11_25)) {
        mcp_jw_key(w, "icons");
        mcp_jw_value(w, mcp_json_doc_root(r->icons_doc));
    }
    if (mcp__version_at_least(version, MCP_PROTOCOL_2025_06_18))
        mcp__write_meta(w, mcp_json_doc_root(r->meta_doc),
                        mcp__caps_declare(caps, r->extension) ? mcp_json_doc_root(r->ext_meta_doc) : NULL);
}

/* Extension-only resources are listed to the clients that declared the extension. */
static int listed_to(const mcp__resource *r, const mcp_json *caps)
{
    return !r->extension || mcp__caps_declare(caps, r->extension);
}

static void write_resource(mcp_jw *w, const mcp__entry *e, const char *version, const mcp_json *caps)
{
    const mcp__resource *r = (const mcp__resource *)e;
    if (!listed_to(r, caps))
        return;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "uri");
    mcp_jw_stringn(w, r->e.key, r->e.key_len);
    write_common(w, r, version, caps);
    int64_t size = r->size >= 0 ? r->size : r->text ? (int64_t)strlen(r->text) : r->blob ? (int64_t)r->blob_len : -1;
    if (size >= 0) {
        mcp_jw_key(w, "size");
        mcp_jw_int(w, size);
    }
    mcp_jw_object_end(w);
}

static void write_template(mcp_jw *w, const mcp__entry *e, const char *version, const mcp_json *caps)
{
    const mcp__resource *r = (const mcp__resource *)e;
    if (!listed_to(r, caps))
        return;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "uriTemplate");
    mcp_jw_stringn(w, r->e.key, r->e.key_len);
    write_common(w, r, version, caps);
    mcp_jw_object_end(w);
}

static void list_kind(mcp__req *r, mcp__registry *reg, const char *key, mcp__write_item_fn fn)
{
    const mcp_json *cursor = mcp_json_get(r->msg->params, "cursor");
    size_t clen = 0;
    const char *cs = NULL;
    if (cursor && !(cs = mcp_json_str(cursor, &clen))) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"cursor\" must be a string");
        return;
    }
    mcp__result_begin(r);
    if (mcp__server_write_page(r->c->srv, reg, &r->w, key, cs, clen, r->version, r->caps, fn) == MCP_ERR_INVALID_ARG) {
        mcp_buf_cleanup(&r->buf);
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown or expired cursor");
        return;
    }
    if (r->modern)
        mcp__write_caching(r);
    mcp__result_end(r);
}

void mcp__m_resources_list(mcp__req *r)
{
    list_kind(r, &r->c->srv->resources, "resources", write_resource);
}

void mcp__m_templates_list(mcp__req *r)
{
    list_kind(r, &r->c->srv->templates, "resourceTemplates", write_template);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Writes a variable's value, percent-decoded when that gives UTF-8. */
static void write_var_value(mcp_jw *w, const char *v, size_t n)
{
    char small[512];
    char *out = n < sizeof small ? small : mcp_malloc(n + 1);
    size_t o = 0;
    int ok = out != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        if (v[i] == '%' && i + 2 < n) {
            int hi = hexv(v[i + 1]), lo = hexv(v[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out[o++] = (char)(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        out[o++] = v[i];
    }
    mcp_buf tmp;
    mcp_buf_init(&tmp, 0);
    if (!ok || mcp_json_quote(&tmp, out, o) != MCP_OK)
        mcp_jw_stringn(w, v, n); /* not UTF-8 once decoded: keep it raw */
    else
        mcp_jw_raw(w, tmp.data, tmp.len);
    mcp_buf_cleanup(&tmp);
    if (out && out != small)
        mcp_free(out);
}

/* Finds the resource for `uri`: exact first, then templates in order (+1 ref). */
static mcp__resource *resolve(mcp_server *srv, const char *uri, size_t len, mcp__urivars *vars)
{
    mcp__entry *e = mcp__server_find(srv, &srv->resources, uri, len);
    if (e) {
        vars->n = 0;
        return (mcp__resource *)e;
    }
    pthread_rwlock_rdlock(&srv->reg_lock);
    mcp__resource *found = NULL;
    for (size_t i = 0; i < srv->templates.n && !found; i++) {
        mcp__resource *t = (mcp__resource *)srv->templates.items[i];
        if (!t->e.hidden && mcp__uritemplate_match(&t->tpl, uri, len, vars)) {
            atomic_fetch_add(&t->e.refs, 1);
            found = t;
        }
    }
    pthread_rwlock_unlock(&srv->reg_lock);
    return found;
}

static void not_found(mcp__req *r, const char *uri, size_t len)
{
    /* SEP-2164: 2026-07-28 uses -32602; earlier versions -32002 with data.uri. */
    mcp_buf msg;
    mcp_buf_init(&msg, 0);
    mcp_buf_append(&msg, "Resource not found: ", 20);
    mcp_buf_append(&msg, uri, len > 300 ? 300 : len);
    mcp_buf q;
    mcp_buf_init(&q, 0);
    const char *text = mcp_json_quote(&q, msg.data, msg.len) == MCP_OK ? msg.data : "Resource not found";
    mcp_buf_cleanup(&q);
    mcp_buf_init(&r->buf, 0);
    mcp_jw_init(&r->w, &r->buf);
    mcp_rpc_begin_error(&r->w, &r->msg->id, r->modern ? MCP_RPC_INVALID_PARAMS : MCP_RPC_RESOURCE_NOT_FOUND, text);
    mcp_jw_key(&r->w, "data");
    mcp_jw_object_begin(&r->w);
    mcp_jw_key(&r->w, "uri");
    mcp_jw_stringn(&r->w, uri, len);
    mcp_jw_object_end(&r->w);
    mcp_rpc_end_error(&r->w);
    mcp__send_reply(r);
    mcp_buf_cleanup(&msg);
}

static mcp_status read_item(mcp_read *rd, const char *uri, const char *mime, const char *text, const void *bytes,
                            size_t n, const mcp_json *meta);

/* A static resource's contents, with its extension metadata as the item's _meta. */
static mcp_status read_static(mcp_read *rd, const mcp__resource *res, const char *uri)
{
    const mcp_json *meta = mcp__version_at_least(rd->version, MCP_PROTOCOL_2025_06_18)
                               ? mcp_json_doc_root(res->ext_meta_doc) : NULL;
    if (res->text)
        return read_item(rd, uri, res->mime_type, res->text, NULL, 0, meta);
    return read_item(rd, uri, res->mime_type, NULL, res->blob ? (const void *)res->blob : "", res->blob_len, meta);
}

/* Reads `res` for the request's uri (its template variables in `vars`) and answers. */
static void read_resolved(mcp__req *r, mcp__resource *res, const char *uri, size_t len, const mcp__urivars *vars)
{
    mcp_server *srv = r->c->srv;
    /* The variables as a JSON object for the handler. */
    mcp_json_doc *vdoc = NULL;
    if (res->is_template) {
        mcp_buf vb;
        mcp_buf_init(&vb, 0);
        mcp_jw vw;
        mcp_jw_init(&vw, &vb);
        mcp_jw_object_begin(&vw);
        for (size_t i = 0; i < vars->n; i++) {
            mcp_jw_keyn(&vw, vars->v[i].name, vars->v[i].name_len);
            write_var_value(&vw, vars->v[i].value, vars->v[i].value_len);
        }
        mcp_jw_object_end(&vw);
        if (mcp_jw_finish(&vw) != MCP_OK || mcp_json_parse(&vdoc, vb.data, vb.len, NULL, NULL) != MCP_OK) {
            mcp_buf_cleanup(&vb);
            mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
            return;
        }
        mcp_buf_cleanup(&vb);
    }
    mcp__result_begin(r);
    mcp_jw_key(&r->w, "contents");
    mcp_jw_array_begin(&r->w);
    mcp_read rd;
    rd.w = r->w;
    rd.buf = &r->buf;
    rd.items = 0;
    rd.version = r->version;
    rd.principal = r->principal;
    mcp_status st = MCP_OK;
    /* The uri as a NUL-terminated string for the handler (it may contain NUL: refuse those). */
    char *uri_z = memchr(uri, '\0', len) ? NULL : (char *)uri;
    if (!uri_z) {
        st = MCP_ERR_NOT_FOUND;
    } else if (res->handler) {
        st = res->handler(&rd, uri_z, vdoc ? mcp_json_doc_root(vdoc) : NULL, res->user_data);
    } else {
        st = read_static(&rd, res, uri_z);
    }
    r->w = rd.w;
    mcp_json_doc_free(vdoc);
    if (st == MCP_ERR_NOT_FOUND) {
        mcp_buf_cleanup(&r->buf);
        not_found(r, uri, len);
        return;
    }
    if (st || mcp_jw_status(&r->w)) {
        /* The client chose the URI: quoted, so it cannot start a log line of its own. */
        char quoted[201];
        mcp__quote_text(quoted, sizeof quoted, uri, len);
        mcp__server_diag(srv, MCP_LOG_ERROR, "reading \"%s\" failed: %s", quoted,
                         mcp_status_str(st ? st : mcp_jw_status(&r->w)));
        mcp_buf_cleanup(&r->buf);
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: the resource could not be read");
        return;
    }
    mcp_jw_array_end(&r->w);
    if (r->modern)
        mcp__write_caching(r);
    mcp__result_end(r);
}

/* On a worker (defer.c): the checks passed on the transport's thread. */
static void read_deferred(mcp__req *r, mcp__entry *e)
{
    mcp__resource *res = (mcp__resource *)e;
    size_t len;
    const char *uri = mcp_json_str(mcp_json_get(r->msg->params, "uri"), &len);
    mcp__urivars vars;
    vars.n = 0;
    if (res->is_template && !mcp__uritemplate_match(&res->tpl, uri, len, &vars)) {
        not_found(r, uri, len); /* cannot happen: it matched before and the message is the same */
        return;
    }
    read_resolved(r, res, uri, len, &vars);
}

void mcp__m_resources_read(mcp__req *r)
{
    mcp_server *srv = r->c->srv;
    size_t len;
    const char *uri = mcp_json_str(mcp_json_get(r->msg->params, "uri"), &len);
    if (!uri) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: resources/read needs a string \"uri\"");
        return;
    }
    mcp__urivars vars;
    mcp__resource *res = resolve(srv, uri, len, &vars);
    if (!res) {
        not_found(r, uri, len);
        return;
    }
    if (!mcp__entry_allows(&res->e, r->principal)) {
        mcp__reply_forbidden(r, res->e.scopes);
        mcp__entry_release(&res->e);
        return;
    }
    /* A handler may block: it runs on a worker, like a tool, unless its
     * author says it never does. Static contents are answered here. */
    if (res->handler && !(res->flags & MCP_RESOURCE_NONBLOCKING)) {
        mcp__req_defer(r, read_deferred, &res->e);
        return;
    }
    read_resolved(r, res, uri, len, &vars);
    mcp__entry_release(&res->e);
}

void mcp__write_resource_contents(mcp_jw *w, const char *uri, const char *mime, const char *text, const void *bytes,
                                  size_t n)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "uri");
    mcp_jw_string(w, uri);
    if (mime) {
        mcp_jw_key(w, "mimeType");
        mcp_jw_string(w, mime);
    }
    if (text) {
        mcp_jw_key(w, "text");
        mcp_jw_string(w, text);
    } else {
        mcp_jw_key(w, "blob");
        mcp_jw_base64(w, bytes ? bytes : "", n);
    }
    mcp_jw_object_end(w);
}

static mcp_status read_item(mcp_read *rd, const char *uri, const char *mime, const char *text, const void *bytes,
                            size_t n, const mcp_json *meta)
{
    if (!rd || !uri || (!text && !bytes && n))
        return MCP_ERR_INVALID_ARG;
    size_t len = rd->buf->len;
    mcp_jw saved = rd->w;
    if (!meta) {
        mcp__write_resource_contents(&rd->w, uri, mime, text, bytes, n);
    } else {
        mcp_jw_object_begin(&rd->w);
        mcp_jw_key(&rd->w, "uri");
        mcp_jw_string(&rd->w, uri);
        if (mime) {
            mcp_jw_key(&rd->w, "mimeType");
            mcp_jw_string(&rd->w, mime);
        }
        mcp_jw_key(&rd->w, text ? "text" : "blob");
        if (text)
            mcp_jw_string(&rd->w, text);
        else
            mcp_jw_base64(&rd->w, bytes, n);
        mcp__write_meta(&rd->w, meta, NULL);
        mcp_jw_object_end(&rd->w);
    }
    mcp_status st = mcp_jw_status(&rd->w);
    if (st) {
        rd->buf->len = len;
        rd->buf->data[len] = '\0';
        rd->w = saved;
        return st;
    }
    rd->items++;
    return MCP_OK;
}

mcp_status mcp_read_text(mcp_read *rd, const char *uri, const char *mime_type, const char *text)
{
    if (!text)
        return MCP_ERR_INVALID_ARG;
    return read_item(rd, uri, mime_type, text, NULL, 0, NULL);
}

mcp_status mcp_read_blob(mcp_read *rd, const char *uri, const char *mime_type, const void *bytes, size_t n)
{
    return read_item(rd, uri, mime_type, NULL, bytes ? bytes : "", n, NULL);
}

/* ------------------------------------------------------------------------ */
/* Subscriptions (legacy)                                                    */

void mcp__m_resources_subscribe(mcp__req *r)
{
    size_t len;
    const char *uri = mcp_json_str(mcp_json_get(r->msg->params, "uri"), &len);
    if (!uri || memchr(uri, '\0', len)) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: resources/subscribe needs a string \"uri\"");
        return;
    }
    mcp__urivars vars;
    mcp__resource *res = resolve(r->c->srv, uri, len, &vars);
    if (!res) {
        not_found(r, uri, len);
        return;
    }
    if (!mcp__entry_allows(&res->e, r->principal)) {
        mcp__reply_forbidden(r, res->e.scopes);
        mcp__entry_release(&res->e);
        return;
    }
    mcp__entry_release(&res->e);
    mcp_status st = mcp__conn_subscribe(r->c, uri, len, 1);
    if (st) {
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, st == MCP_ERR_LIMIT ? "Internal error: too many subscriptions"
                                                                        : "Internal error: out of memory");
        return;
    }
    mcp__result_begin(r);
    mcp__result_end(r);
}

void mcp__m_resources_unsubscribe(mcp__req *r)
{
    size_t len;
    const char *uri = mcp_json_str(mcp_json_get(r->msg->params, "uri"), &len);
    if (!uri) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: resources/unsubscribe needs a string \"uri\"");
        return;
    }
    mcp__conn_subscribe(r->c, uri, len, 0);
    mcp__result_begin(r);
    mcp__result_end(r);
}

mcp_status mcp_server_resource_updated(mcp_server *srv, const char *uri)
{
    if (!srv || !uri)
        return MCP_ERR_INVALID_ARG;
    pthread_mutex_lock(&srv->conns_mu);
    for (mcp_conn *c = srv->conns; c; c = c->next)
        mcp__conn_resource_updated(c, uri);
    pthread_mutex_unlock(&srv->conns_mu);
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Completion of template variables                                          */

mcp_status mcp__resource_complete_target(mcp_server *srv, const char *key, size_t len,
                                         const mcp_principal *principal, mcp__entry **out)
{
    mcp__entry *e = mcp__server_find(srv, &srv->templates, key, len);
    if (!e)
        e = mcp__server_find(srv, &srv->resources, key, len);
    if (!e)
        return MCP_ERR_NOT_FOUND;
    if (!mcp__entry_allows(e, principal)) {
        mcp__entry_release(e);
        return MCP_ERR_AUTH;
    }
    *out = e;
    return MCP_OK;
}

mcp__completer mcp__resource_completer(mcp__entry *e)
{
    mcp__resource *r = (mcp__resource *)e;
    mcp__completer k = {r->complete, r->user_data, !(r->flags & MCP_RESOURCE_NONBLOCKING)};
    return k;
}

/* ------------------------------------------------------------------------ */
/* Scopes, for the HTTP transport's check before dispatch                    */

mcp_status mcp__entry_append_scopes(const mcp__entry *e, mcp_buf *out)
{
    mcp_status st = MCP_OK;
    if (e && e->scopes) {
        if (out->len)
            st = mcp_buf_append(out, " ", 1);
        if (!st)
            st = mcp_buf_append(out, e->scopes, strlen(e->scopes));
    }
    return st;
}

mcp_status mcp__resource_scopes(mcp_server *srv, const char *uri, size_t len, mcp_buf *out)
{
    mcp__urivars vars;
    mcp__resource *res = resolve(srv, uri, len, &vars);
    if (!res)
        return MCP_OK;
    mcp_status st = mcp__entry_append_scopes(&res->e, out);
    mcp__entry_release(&res->e);
    return st;
}

mcp_status mcp__resource_key_scopes(mcp_server *srv, const char *key, size_t len, mcp_buf *out)
{
    mcp__entry *e = mcp__server_find(srv, &srv->templates, key, len);
    if (!e)
        e = mcp__server_find(srv, &srv->resources, key, len);
    if (!e)
        return MCP_OK;
    mcp_status st = mcp__entry_append_scopes(e, out);
    mcp__entry_release(e);
    return st;
}

const mcp_principal *mcp_read_principal(const mcp_read *rd)
{
    return rd ? rd->principal : NULL;
}
