/*
 * Prompts (registry, prompts/list, prompts/get and the message builder)
 * and completion/complete for prompt arguments and template variables.
 */
#include "util/abi.h"
#include "util/util.h"
#include "server/server_internal.h"

#include <string.h>

typedef struct mcp__prompt {
    mcp__entry e;               /* key = name */
    char *title;                /* or NULL */
    char *description;          /* or NULL */
    mcp_prompt_arg *args;       /* declared arguments (strings owned) */
    size_t nargs;               /* how many */
    mcp_json_doc *icons_doc;    /* or NULL */
    mcp_json_doc *meta_doc;     /* or NULL */
    mcp_prompt_fn handler;      /* builds the messages */
    mcp_complete_fn complete;   /* argument completion, or NULL */
    void *user_data;            /* for handler and complete */
    void (*user_data_free)(void *); /* its destructor */
    unsigned flags;             /* MCP_PROMPT_* */
} mcp__prompt;

struct mcp_prompt {
    mcp__asker ask;         /* 2026-07-28 input requests */
    mcp_jw w;               /* writes message objects into `msgs` */
    mcp_buf msgs;           /* "[" + messages */
    unsigned count;         /* messages so far */
    char *description;      /* set by mcp_prompt_description, or NULL */
    char invalid[256];      /* message for -32602 set by mcp_prompt_invalid */
    const mcp_principal *principal; /* who the request runs for, or NULL */
};

struct mcp_completion {
    mcp_jw *w;              /* writes candidate strings into the values array */
    unsigned sent;          /* candidates written (at most 100) */
    unsigned total;         /* candidates offered */
};

static char *dup_opt(const char *s)
{
    return s ? mcp__strndup(s, strlen(s)) : NULL;
}

static void prompt_destroy(mcp__entry *e)
{
    mcp__prompt *p = (mcp__prompt *)e;
    if (p->user_data_free)
        p->user_data_free(p->user_data);
    for (size_t i = 0; i < p->nargs; i++) {
        mcp_free((char *)p->args[i].name);
        mcp_free((char *)p->args[i].title);
        mcp_free((char *)p->args[i].description);
    }
    mcp_free(p->args);
    mcp_free(p->e.key);
    mcp_free(p->e.scopes);
    mcp_free(p->title);
    mcp_free(p->description);
    mcp_json_doc_free(p->icons_doc);
    mcp_json_doc_free(p->meta_doc);
    mcp_free(p);
}

mcp_status mcp_server_add_prompt_sized(mcp_server *srv, const mcp_prompt_def *def, size_t def_size,
                                       size_t arg_size, mcp_error *err)
{
    mcp_prompt_def def_copy;
    mcp_status st = MCP__OPTS_IN(mcp_prompt_def, &def_copy, def, def_size, err);
    if ((st = mcp__def_in(st, srv && def, "prompt", def_copy.user_data, def_copy.user_data_free, err)))
        return st;
    def = &def_copy;
    mcp__prompt *p = mcp__calloc(1, sizeof *p);
    if (!p)
        return mcp__def_in(MCP_ERR_NOMEM, 1, "prompt", def->user_data, def->user_data_free, err);
    atomic_init(&p->e.refs, 1);
    p->e.destroy = prompt_destroy;
    p->handler = def->handler;
    p->complete = def->complete;
    p->user_data = def->user_data;
    p->user_data_free = def->user_data_free;
    p->flags = def->flags;
    if (!def->name || !*def->name || !def->handler || (def->nargs && !def->args)) {
        st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "a prompt needs a name and a handler");
        goto fail;
    }
    p->e.key_len = strlen(def->name);
    p->e.key = mcp__strndup(def->name, p->e.key_len);
    p->title = dup_opt(def->title);
    p->description = dup_opt(def->description);
    if (!p->e.key || (def->title && !p->title) || (def->description && !p->description)) {
        st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        goto fail;
    }
    if ((st = mcp__scopes_normalize(def->scopes, &p->e.scopes))) {
        st = mcp__fail(err, st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG, 0, 0,
                       "prompt %s: scopes must be space-separated OAuth scope tokens (RFC 6749)", def->name);
        goto fail;
    }
    if (def->nargs) {
        p->args = mcp__calloc(def->nargs, sizeof *p->args);
        if (!p->args) {
            st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
            goto fail;
        }
        p->nargs = def->nargs;
        for (size_t i = 0; i < def->nargs; i++) {
            /* The caller's array, walked with the caller's element size. */
            mcp_prompt_arg a;
            if ((st = MCP__OPTS_IN(mcp_prompt_arg, &a, (const char *)def->args + i * arg_size, arg_size, err)))
                goto fail;
            if (!a.name) {
                st = mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "prompt %s: argument %zu has no name", def->name, i);
                goto fail;
            }
            p->args[i].name = dup_opt(a.name);
            p->args[i].title = dup_opt(a.title);
            p->args[i].description = dup_opt(a.description);
            p->args[i].required = a.required;
            if (!p->args[i].name || (a.title && !p->args[i].title) || (a.description && !p->args[i].description)) {
                st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
                goto fail;
            }
        }
    }
    if ((st = mcp__parse_opt_json(def->icons, MCP_JSON_ARRAY, "icons", &p->icons_doc, err)) ||
        (st = mcp__parse_opt_json(def->meta, MCP_JSON_OBJECT, "_meta", &p->meta_doc, err)))
        goto fail;
    pthread_rwlock_wrlock(&srv->reg_lock);
    st = mcp__reg_add_locked(srv, &srv->prompts, &p->e);
    if (!st) {
        srv->has_prompts = 1;
        if (p->complete)
            srv->has_completions = 1;
    }
    pthread_rwlock_unlock(&srv->reg_lock);
    if (st) {
        mcp__fail(err, st, 0, 0, st == MCP_ERR_EXISTS ? "a prompt named %s is already registered" : "out of memory (%s)",
                  def->name);
        goto fail;
    }
    mcp__server_notify_all(srv, "notifications/prompts/list_changed");
    return MCP_OK;
fail:
    prompt_destroy(&p->e);
    return st;
}

mcp_status mcp_server_remove_prompt(mcp_server *srv, const char *name)
{
    if (!srv || !name)
        return MCP_ERR_INVALID_ARG;
    pthread_rwlock_wrlock(&srv->reg_lock);
    mcp__entry *e = mcp__reg_remove_locked(&srv->prompts, name, strlen(name));
    pthread_rwlock_unlock(&srv->reg_lock);
    if (!e)
        return MCP_ERR_NOT_FOUND;
    mcp__entry_release(e);
    mcp__server_notify_all(srv, "notifications/prompts/list_changed");
    return MCP_OK;
}

static void write_prompt(mcp_jw *w, const mcp__entry *e, const char *version, const mcp_json *caps)
{
    (void)caps;
    const mcp__prompt *p = (const mcp__prompt *)e;
    int v0618 = mcp__version_at_least(version, MCP_PROTOCOL_2025_06_18);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "name");
    mcp_jw_stringn(w, p->e.key, p->e.key_len);
    if (p->title && v0618) {
        mcp_jw_key(w, "title");
        mcp_jw_string(w, p->title);
    }
    if (p->description) {
        mcp_jw_key(w, "description");
        mcp_jw_string(w, p->description);
    }
    if (p->nargs) {
        mcp_jw_key(w, "arguments");
        mcp_jw_array_begin(w);
        for (size_t i = 0; i < p->nargs; i++) {
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "name");
            mcp_jw_string(w, p->args[i].name);
            if (p->args[i].title && v0618) {
                mcp_jw_key(w, "title");
                mcp_jw_string(w, p->args[i].title);
            }
            if (p->args[i].description) {
                mcp_jw_key(w, "description");
                mcp_jw_string(w, p->args[i].description);
            }
            if (p->args[i].required) {
                mcp_jw_key(w, "required");
                mcp_jw_bool(w, 1);
            }
            mcp_jw_object_end(w);
        }
        mcp_jw_array_end(w);
    }
    if (p->icons_doc && mcp__version_at_least(version, MCP_PROTOCOL_2025_11_25)) {
        mcp_jw_key(w, "icons");
        mcp_jw_value(w, mcp_json_doc_root(p->icons_doc));
    }
    if (p->meta_doc && v0618) {
        mcp_jw_key(w, "_meta");
        mcp_jw_value(w, mcp_json_doc_root(p->meta_doc));
    }
    mcp_jw_object_end(w);
}

void mcp__m_prompts_list(mcp__req *r)
{
    const mcp_json *cursor = mcp_json_get(r->msg->params, "cursor");
    size_t clen = 0;
    const char *cs = NULL;
    if (cursor && !(cs = mcp_json_str(cursor, &clen))) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"cursor\" must be a string");
        return;
    }
    mcp__result_begin(r);
    if (mcp__server_write_page(r->c->srv, &r->c->srv->prompts, &r->w, "prompts", cs, clen, r->version, r->caps,
                               write_prompt) == MCP_ERR_INVALID_ARG) {
        mcp_buf_cleanup(&r->buf);
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown or expired cursor");
        return;
    }
    if (r->modern)
        mcp__write_caching(r);
    mcp__result_end(r);
}

/* -32602 with `prefix` + a peer-supplied name, cut to 200 bytes; the cut may
 * split UTF-8, so fall back to the bare prefix when it did. */
static void reply_named(mcp__req *r, const char *prefix, const char *what, size_t len)
{
    char text[400];
    snprintf(text, sizeof text, "%s%.*s", prefix, (int)(len > 200 ? 200 : len), what);
    mcp_buf q;
    mcp_buf_init(&q, 0);
    int ok = mcp_json_quote(&q, text, strlen(text)) == MCP_OK;
    mcp_buf_cleanup(&q);
    mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, ok ? text : prefix);
}

/* Builds the prompt's messages and answers (on a worker unless MCP_PROMPT_NONBLOCKING). */
static void prompt_run(mcp__req *r, mcp__entry *e)
{
    mcp__prompt *p = (mcp__prompt *)e;
    const mcp_json *args = mcp_json_get(r->msg->params, "arguments");
    mcp_prompt pr;
    memset(&pr, 0, sizeof pr);
    pr.principal = r->principal;
    pr.ask.modern = r->modern;
    pr.ask.caps = r->caps;
    char bound[300];
    snprintf(bound, sizeof bound, "prompts/get:%s", p->e.key);
    if (mcp__ask_begin(r, &pr.ask, bound, args)) {
        mcp__ask_cleanup(&pr.ask);
        return;
    }
    mcp_buf_init(&pr.msgs, r->c->srv->opts.max_message);
    mcp_jw_init(&pr.w, &pr.msgs);
    mcp_jw_array_begin(&pr.w);
    mcp_status st = p->handler(&pr, args ? args : mcp__empty_object(), p->user_data);
    if (mcp__ask_handles(&pr.ask, st)) {
        mcp__ask_finish(r->c, &r->msg->id, &pr.ask, st, bound, args);
    } else if (st == MCP_ERR_INVALID_ARG && pr.invalid[0]) {
        reply_named(r, "Invalid params: ", pr.invalid, strlen(pr.invalid));
    } else if (st || (mcp_jw_array_end(&pr.w), mcp_jw_finish(&pr.w))) {
        mcp__server_diag(r->c->srv, MCP_LOG_ERROR, "prompt %s failed: %s", p->e.key,
                         mcp_status_str(st ? st : mcp_jw_status(&pr.w)));
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: the prompt could not be built");
    } else {
        mcp__result_begin(r);
        if (pr.description) {
            mcp_jw_key(&r->w, "description");
            mcp_jw_string(&r->w, pr.description);
        }
        mcp_jw_key(&r->w, "messages");
        mcp_jw_raw(&r->w, pr.msgs.data, pr.msgs.len);
        mcp__result_end(r);
    }
    mcp_buf_cleanup(&pr.msgs);
    mcp_free(pr.description);
    mcp__ask_cleanup(&pr.ask);
}

void mcp__m_prompts_get(mcp__req *r)
{
    size_t nlen;
    const char *name = mcp_json_str(mcp_json_get(r->msg->params, "name"), &nlen);
    const mcp_json *args = mcp_json_get(r->msg->params, "arguments");
    if (!name) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: prompts/get needs a string \"name\"");
        return;
    }
    if (args && mcp_json_typeof(args) != MCP_JSON_OBJECT) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"arguments\" must be an object of strings");
        return;
    }
    mcp__entry *e = mcp__server_find(r->c->srv, &r->c->srv->prompts, name, nlen);
    if (!e) {
        reply_named(r, "Unknown prompt: ", name, nlen);
        return;
    }
    mcp__prompt *p = (mcp__prompt *)e;
    if (!mcp__entry_allows(e, r->principal)) {
        mcp__reply_forbidden(r, e->scopes);
        mcp__entry_release(e);
        return;
    }
    /* Every value a string; every required argument present. */
    for (size_t i = 0; i < mcp_json_len(args); i++) {
        if (mcp_json_typeof(mcp_json_value_at(args, i)) != MCP_JSON_STRING) {
            size_t kl;
            const char *k = mcp_json_key_at(args, i, &kl);
            reply_named(r, "Invalid params: this argument must be a string: ", k, kl);
            mcp__entry_release(e);
            return;
        }
    }
    for (size_t i = 0; i < p->nargs; i++) {
        if (p->args[i].required && !mcp_json_get(args, p->args[i].name)) {
            reply_named(r, "Invalid params: missing required argument ", p->args[i].name, strlen(p->args[i].name));
            mcp__entry_release(e);
            return;
        }
    }
    /* A handler may block: it runs on a worker, like a tool, unless its
     * author says it never does. */
    if (!(p->flags & MCP_PROMPT_NONBLOCKING)) {
        mcp__req_defer(r, prompt_run, e);
        return;
    }
    prompt_run(r, e);
    mcp__entry_release(e);
}

mcp_status mcp_prompt_elicit(mcp_prompt *p, const char *key, const char *message, const char *requested_schema,
                             const mcp_json **answer)
{
    if (!p || !key || !message || !requested_schema || !answer)
        return MCP_ERR_INVALID_ARG;
    return mcp__ask_elicit(&p->ask, key, message, requested_schema, answer);
}

/* ---- the message builder ----------------------------------------------- */

static void msg_begin(mcp_prompt *p, mcp_role role, const char *type)
{
    mcp_jw *w = &p->w;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "role");
    mcp_jw_string(w, role == MCP_ROLE_ASSISTANT ? "assistant" : "user");
    mcp_jw_key(w, "content");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, type);
}

static mcp_status msg_end(mcp_prompt *p, size_t len, const mcp_jw *saved)
{
    mcp_jw_object_end(&p->w);
    mcp_jw_object_end(&p->w);
    mcp_status st = mcp_jw_status(&p->w);
    if (st) {
        p->msgs.len = len;
        if (p->msgs.data)
            p->msgs.data[len] = '\0';
        p->w = *saved;
        return st;
    }
    p->count++;
    return MCP_OK;
}

mcp_status mcp_prompt_description(mcp_prompt *p, const char *description)
{
    if (!p || !description)
        return MCP_ERR_INVALID_ARG;
    char *d = mcp__strndup(description, strlen(description));
    if (!d)
        return MCP_ERR_NOMEM;
    mcp_free(p->description);
    p->description = d;
    return MCP_OK;
}

mcp_status mcp_prompt_text(mcp_prompt *p, mcp_role role, const char *text)
{
    if (!p || !text)
        return MCP_ERR_INVALID_ARG;
    size_t len = p->msgs.len;
    mcp_jw saved = p->w;
    msg_begin(p, role, "text");
    mcp_jw_key(&p->w, "text");
    mcp_jw_string(&p->w, text);
    return msg_end(p, len, &saved);
}

static mcp_status binary_msg(mcp_prompt *p, mcp_role role, const char *type, const void *bytes, size_t n,
                             const char *mime)
{
    if (!p || (!bytes && n) || !mime)
        return MCP_ERR_INVALID_ARG;
    size_t len = p->msgs.len;
    mcp_jw saved = p->w;
    msg_begin(p, role, type);
    mcp_jw_key(&p->w, "data");
    mcp_jw_base64(&p->w, bytes ? bytes : "", n);
    mcp_jw_key(&p->w, "mimeType");
    mcp_jw_string(&p->w, mime);
    return msg_end(p, len, &saved);
}

mcp_status mcp_prompt_image(mcp_prompt *p, mcp_role role, const void *bytes, size_t n, const char *mime_type)
{
    return binary_msg(p, role, "image", bytes, n, mime_type);
}

mcp_status mcp_prompt_audio(mcp_prompt *p, mcp_role role, const void *bytes, size_t n, const char *mime_type)
{
    return binary_msg(p, role, "audio", bytes, n, mime_type);
}

mcp_status mcp_prompt_resource_text(mcp_prompt *p, mcp_role role, const char *uri, const char *mime_type,
                                    const char *text)
{
    if (!p || !uri || !text)
        return MCP_ERR_INVALID_ARG;
    size_t len = p->msgs.len;
    mcp_jw saved = p->w;
    msg_begin(p, role, "resource");
    mcp_jw_key(&p->w, "resource");
    mcp_jw_object_begin(&p->w);
    mcp_jw_key(&p->w, "uri");
    mcp_jw_string(&p->w, uri);
    if (mime_type) {
        mcp_jw_key(&p->w, "mimeType");
        mcp_jw_string(&p->w, mime_type);
    }
    mcp_jw_key(&p->w, "text");
    mcp_jw_string(&p->w, text);
    mcp_jw_object_end(&p->w);
    return msg_end(p, len, &saved);
}

const mcp_principal *mcp_prompt_principal(const mcp_prompt *p)
{
    return p ? p->principal : NULL;
}

mcp_status mcp_prompt_invalid(mcp_prompt *p, const char *message)
{
    if (!p || !message)
        return MCP_ERR_INVALID_ARG;
    snprintf(p->invalid, sizeof p->invalid, "%s", message);
    return MCP_OK;
}

/* ---- completion/complete ------------------------------------------------- */

#define MAX_COMPLETIONS 100

mcp_status mcp_completion_add(mcp_completion *cmp, const char *value)
{
    if (!cmp || !value)
        return MCP_ERR_INVALID_ARG;
    cmp->total++;
    if (cmp->sent >= MAX_COMPLETIONS)
        return MCP_OK;
    mcp_jw saved = *cmp->w;
    size_t len = cmp->w->buf->len;
    mcp_status st = mcp_jw_string(cmp->w, value);
    if (st) {
        cmp->w->buf->len = len;
        cmp->w->buf->data[len] = '\0';
        *cmp->w = saved;
        cmp->total--;
        return st;
    }
    cmp->sent++;
    return MCP_OK;
}

/* The prompt or resource completion/complete names (a reference in *out):
 * MCP_ERR_NOT_FOUND for none (or an undeclared prompt argument),
 * MCP_ERR_AUTH when the principal lacks its scopes. */
static mcp_status complete_target(mcp__req *r, const char *type, const char *arg, mcp__entry **out)
{
    mcp_server *srv = r->c->srv;
    const mcp_json *ref = mcp_json_get(r->msg->params, "ref");
    if (!strcmp(type, "ref/resource")) {
        size_t ulen;
        const char *uri = mcp_json_str(mcp_json_get(ref, "uri"), &ulen);
        return uri ? mcp__resource_complete_target(srv, uri, ulen, r->principal, out) : MCP_ERR_NOT_FOUND;
    }
    if (strcmp(type, "ref/prompt") != 0)
        return MCP_ERR_NOT_FOUND;
    size_t nlen;
    const char *name = mcp_json_str(mcp_json_get(ref, "name"), &nlen);
    mcp__entry *e = name ? mcp__server_find(srv, &srv->prompts, name, nlen) : NULL;
    if (!e)
        return MCP_ERR_NOT_FOUND;
    if (!mcp__entry_allows(e, r->principal)) {
        mcp__entry_release(e);
        return MCP_ERR_AUTH;
    }
    mcp__prompt *pr = (mcp__prompt *)e;
    int declared = 0;
    for (size_t i = 0; i < pr->nargs; i++)
        declared |= !strcmp(pr->args[i].name, arg);
    if (!declared) {
        mcp__entry_release(e);
        return MCP_ERR_NOT_FOUND;
    }
    *out = e;
    return MCP_OK;
}

/* The callback of the entry complete_target found (the request says which kind). */
static mcp__completer completer_of(mcp__req *r, mcp__entry *e)
{
    const char *type = mcp_json_str(mcp_json_get(mcp_json_get(r->msg->params, "ref"), "type"), NULL);
    if (type && !strcmp(type, "ref/resource"))
        return mcp__resource_completer(e);
    mcp__prompt *pr = (mcp__prompt *)e;
    mcp__completer k = {pr->complete, pr->user_data, !(pr->flags & MCP_PROMPT_NONBLOCKING)};
    return k;
}

/* Runs the completion callback and answers (on a worker unless the
 * prompt or resource is flagged non-blocking). */
static void complete_run(mcp__req *r, mcp__entry *e)
{
    const mcp_json *p = r->msg->params;
    const mcp_json *argument = mcp_json_get(p, "argument");
    const char *arg = mcp_json_str(mcp_json_get(argument, "name"), NULL);
    const char *value = mcp_json_str(mcp_json_get(argument, "value"), NULL);
    const mcp_json *context = mcp_json_get(mcp_json_get(p, "context"), "arguments");
    if (context && mcp_json_typeof(context) != MCP_JSON_OBJECT)
        context = NULL;
    mcp__completer k = completer_of(r, e);
    mcp__result_begin(r);
    mcp_jw_key(&r->w, "completion");
    mcp_jw_object_begin(&r->w);
    mcp_jw_key(&r->w, "values");
    mcp_jw_array_begin(&r->w);
    mcp_completion cmp = {&r->w, 0, 0};
    mcp_status st = k.fn ? k.fn(&cmp, arg, value, context, k.user_data) : MCP_OK;
    if (st) {
        mcp_buf_cleanup(&r->buf);
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS,
                         st == MCP_ERR_NOT_FOUND ? "Invalid params: unknown completion reference or argument"
                                                 : "Invalid params: completion failed");
        return;
    }
    mcp_jw_array_end(&r->w);
    mcp_jw_key(&r->w, "total");
    mcp_jw_int(&r->w, cmp.total);
    mcp_jw_key(&r->w, "hasMore");
    mcp_jw_bool(&r->w, cmp.total > cmp.sent);
    mcp_jw_object_end(&r->w);
    mcp__result_end(r);
}

void mcp__m_complete(mcp__req *r)
{
    const mcp_json *p = r->msg->params;
    const mcp_json *argument = mcp_json_get(p, "argument");
    const char *arg = mcp_json_str(mcp_json_get(argument, "name"), NULL);
    const char *value = mcp_json_str(mcp_json_get(argument, "value"), NULL);
    const char *type = mcp_json_str(mcp_json_get(mcp_json_get(p, "ref"), "type"), NULL);
    if (!type || !arg || !value) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS,
                         "Invalid params: completion/complete needs ref.type, argument.name and argument.value");
        return;
    }
    mcp__entry *e = NULL;
    mcp_status st = complete_target(r, type, arg, &e);
    if (st == MCP_ERR_AUTH) {
        mcp_buf need;
        mcp_buf_init(&need, 0);
        mcp__server_request_scopes(r->c->srv, r->msg, &need);
        mcp__reply_forbidden(r, need.data);
        mcp_buf_cleanup(&need);
        return;
    }
    if (st) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown completion reference or argument");
        return;
    }
    /* A callback may block (a database lookup): it runs on a worker, like
     * a tool, unless its author says it never does. */
    mcp__completer k = completer_of(r, e);
    if (k.fn && k.blocking) {
        mcp__req_defer(r, complete_run, e);
        return;
    }
    complete_run(r, e);
    mcp__entry_release(e);
}
