/*
 * Asking the client for input from a handler: elicitation, sampling and
 * roots, with one API for both eras.
 *
 * Legacy: a real server-to-client request goes out on the connection and
 * the handler's thread waits for the response (matched by id in
 * conn->asks), waking every 50 ms to notice cancellation, until the call's
 * time limit answers the call or, without one, for LEGACY_ASK_WAIT_MS.
 *
 * 2026-07-28 (MRTR): nothing is sent. An answer is looked up in the
 * request's `inputResponses`, or in the answers of earlier rounds carried
 * in `requestState`; a question without an answer is added to this round's
 * `inputRequests` and the handler gets MCP_ERR_INPUT_REQUIRED. The
 * library then ends the round with an InputRequiredResult whose
 * `requestState` is signed with HMAC-SHA256 under a per-server key, bound
 * to the tool, a digest of its arguments and the principal (its
 * mcp__principal_key, "" without authorization), carries a random nonce,
 * and expires.
 */
#include "util/util.h"
#include "server/server_internal.h"
#include "util/crypto_api.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#define STATE_TTL_MS (10u * 60u * 1000u)   /* a round trip may take a person minutes */
#define MAX_HANDLER_STATE (16u * 1024u)    /* bytes of mcp_call_set_state */
#define LEGACY_ASK_WAIT_MS 60000u          /* legacy: default wait for an answer */

/* ------------------------------------------------------------------------ */
/* requestState: base64url(payload JSON) "." base64url(HMAC-SHA256)          */

static void hmac(const mcp_server *srv, const char *data, size_t n, unsigned char mac[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), srv->state_key, (int)sizeof srv->state_key, (const unsigned char *)data, n, mac, &len);
}

/* SHA-256 of the arguments as written by the JSON writer (the binding). */
static void args_digest(const mcp_json *args, unsigned char out[32])
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_value(&w, args);
    SHA256((const unsigned char *)(b.data ? b.data : ""), b.len, out);
    mcp_buf_cleanup(&b);
}

static void hex32(const unsigned char d[32], char out[65])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[64] = '\0';
}

mcp_status mcp__ask_verify_state(mcp_server *srv, mcp__asker *a, const char *state, size_t len, const char *tool,
                                 const mcp_json *args)
{
    const char *dot = memchr(state, '.', len);
    if (!dot || len > (size_t)512 * 1024)
        return MCP_ERR_INVALID;
    size_t plen = (size_t)(dot - state), mlen = len - plen - 1;
    /* Decoded without MCP__BASE64_CANONICAL: the MAC is over the payload's
     * text, so a payload spelled another way fails it anyway. */
    unsigned char mac[32], want[36];
    size_t wl;
    if (mlen != 43 || !mcp__base64url_decode(dot + 1, mlen, want, sizeof want, &wl, 0) || wl != 32)
        return MCP_ERR_INVALID;
    hmac(srv, state, plen, mac);
    if (CRYPTO_memcmp(mac, want, 32) != 0)
        return MCP_ERR_INVALID;
    size_t cap = plen * 3 / 4 + 4, n;
    unsigned char *payload = mcp_malloc(cap);
    if (!payload)
        return MCP_ERR_NOMEM;
    mcp_json_doc *doc = NULL;
    mcp_status st = !mcp__base64url_decode(state, plen, payload, cap, &n, 0)
                        ? MCP_ERR_INVALID
                        : mcp_json_parse(&doc, (const char *)payload, n, NULL, NULL);
    mcp_free(payload);
    if (st)
        return st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID;
    const mcp_json *root = mcp_json_doc_root(doc);
    unsigned char digest[32];
    char hex[65];
    args_digest(args ? args : mcp__empty_object(), digest);
    hex32(digest, hex);
    /* Bound to this tool, these arguments and this principal, and not expired. */
    if (!mcp_json_str_eq(mcp_json_get(root, "t"), tool) || !mcp_json_str_eq(mcp_json_get(root, "a"), hex) ||
        !mcp_json_str_eq(mcp_json_get(root, "p"), a->principal_key) ||
        mcp_json_typeof(mcp_json_get(root, "x")) != MCP_JSON_INT ||
        (uint64_t)mcp_json_int(mcp_json_get(root, "x")) < mcp__wall_ms()) {
        mcp_json_doc_free(doc);
        return MCP_ERR_INVALID;
    }
    a->state_doc = doc;
    size_t sl;
    const char *s = mcp_json_str(mcp_json_get(root, "s"), &sl);
    if (s) {
        size_t hcap = sl * 3 / 4 + 4;
        a->handler_state = mcp_malloc(hcap);
        if (!a->handler_state)
            return MCP_ERR_NOMEM;
        if (!mcp__base64url_decode(s, sl, a->handler_state, hcap, &a->handler_state_len, 0)) {
            mcp_free(a->handler_state);
            a->handler_state = NULL;
            return MCP_ERR_INVALID;
        }
    }
    return MCP_OK;
}

/* Writes `"requestState": "..."` for the round that is ending. */
mcp_status mcp__ask_write_state(mcp_server *srv, mcp__asker *a, mcp_jw *w, const char *tool, const mcp_json *args)
{
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_jw pw;
    mcp_jw_init(&pw, &p);
    unsigned char digest[32];
    char hex[65];
    args_digest(args ? args : mcp__empty_object(), digest);
    hex32(digest, hex);
    /* A fresh nonce: no two states are alike, even in one millisecond. */
    unsigned char nonce[32] = {0};
    char nonce_hex[65];
    if (RAND_bytes(nonce, 16) != 1) {
        mcp_buf_cleanup(&p);
        return MCP_ERR_IO;
    }
    hex32(nonce, nonce_hex);
    nonce_hex[32] = '\0'; /* 16 bytes */
    mcp_jw_object_begin(&pw);
    mcp_jw_key(&pw, "t");
    mcp_jw_string(&pw, tool);
    mcp_jw_key(&pw, "a");
    mcp_jw_string(&pw, hex);
    mcp_jw_key(&pw, "p"); /* the principal's key, "" without authorization */
    mcp_jw_string(&pw, a->principal_key);
    mcp_jw_key(&pw, "n");
    mcp_jw_string(&pw, nonce_hex);
    mcp_jw_key(&pw, "x");
    mcp_jw_int(&pw, (int64_t)(mcp__wall_ms() + STATE_TTL_MS));
    /* Every answer so far: earlier rounds' and this request's. */
    mcp_jw_key(&pw, "r");
    mcp_jw_object_begin(&pw);
    const mcp_json *old = mcp_json_get(mcp_json_doc_root(a->state_doc), "r");
    for (size_t i = 0; i < mcp_json_len(old); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(old, i, &kl);
        if (mcp_json_getn(a->responses, k, kl))
            continue; /* answered again this round: the new answer wins */
        mcp_jw_keyn(&pw, k, kl);
        mcp_jw_value(&pw, mcp_json_value_at(old, i));
    }
    for (size_t i = 0; i < mcp_json_len(a->responses); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(a->responses, i, &kl);
        mcp_jw_keyn(&pw, k, kl);
        mcp_jw_value(&pw, mcp_json_value_at(a->responses, i));
    }
    mcp_jw_object_end(&pw);
    if (a->handler_state) {
        mcp_buf sb;
        mcp_buf_init(&sb, 0);
        if (mcp__base64url_append(&sb, a->handler_state, a->handler_state_len) == MCP_OK) {
            mcp_jw_key(&pw, "s");
            mcp_jw_stringn(&pw, sb.data ? sb.data : "", sb.len);
        }
        mcp_buf_cleanup(&sb);
    }
    mcp_jw_object_end(&pw);
    mcp_status st = mcp_jw_finish(&pw);
    mcp_buf out;
    mcp_buf_init(&out, 0);
    if (!st)
        st = mcp__base64url_append(&out, p.data, p.len);
    if (!st) {
        unsigned char mac[32];
        hmac(srv, out.data, out.len, mac);
        st = mcp_buf_append(&out, ".", 1);
        if (!st)
            st = mcp__base64url_append(&out, mac, 32);
    }
    if (!st) {
        mcp_jw_key(w, "requestState");
        mcp_jw_stringn(w, out.data, out.len);
    }
    mcp_buf_cleanup(&p);
    mcp_buf_cleanup(&out);
    return st;
}

void mcp__ask_cleanup(mcp__asker *a)
{
    mcp_json_doc_free(a->state_doc);
    mcp_buf_cleanup(&a->pending);
    mcp_free(a->handler_state);
    while (a->legacy) {
        mcp__ask *n = a->legacy->next;
        mcp_rpc_msg_cleanup(&a->legacy->answer);
        mcp_free(a->legacy);
        a->legacy = n;
    }
}

/* ------------------------------------------------------------------------ */
/* Asking                                                                    */

/* 1 when the client declared `cap` (and, for URL elicitation, its url mode). */
static int has_capability(const mcp_json *caps, const char *cap, int url_mode)
{
    const mcp_json *c = mcp_json_get(caps, cap);
    if (mcp_json_typeof(c) != MCP_JSON_OBJECT)
        return 0;
    if (!url_mode)
        return mcp_json_len(c) == 0 || mcp_json_get(c, "form") || !mcp_json_get(c, "url");
    return mcp_json_get(c, "url") != NULL;
}

/* Legacy: sends the request and waits for the matching response. */
static mcp_status ask_legacy(mcp_call *call, const char *method, const mcp_buf *params, const mcp_json **answer)
{
    mcp_conn *c = call->conn;
    mcp__ask *q = mcp__calloc(1, sizeof *q);
    if (!q)
        return MCP_ERR_NOMEM;
    pthread_mutex_lock(&c->mu);
    q->id = ++c->next_ask_id;
    q->next = c->asks;
    c->asks = q;
    pthread_mutex_unlock(&c->mu);

    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_id id = {MCP_RPC_ID_INT, q->id, NULL, 0};
    mcp_rpc_begin_request(&w, &id, method);
    mcp_jw_raw(&w, params->data, params->len);
    mcp_rpc_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp__conn_send_to(c, &b, &call->msg.id, 0);
    mcp_buf_cleanup(&b);

    /* A call with a time limit waits until its timer has answered it
     * (`finished`): a limit of its own, started later than the call's,
     * could run out first on a loaded machine and answer in the timer's
     * place. The timer sets `cancelled` just before it claims the call, so
     * here only `finished` ends the wait. */
    int timed = call->timeout_ms != 0;
    uint64_t until = timed ? UINT64_MAX : mcp__mono_ns() + (uint64_t)LEGACY_ASK_WAIT_MS * 1000000ull;
    pthread_mutex_lock(&c->mu);
    while (!st && !q->done && !c->closing && !atomic_load(&call->finished) &&
           (timed || !atomic_load(&call->cancelled)) && mcp__mono_ns() < until) {
        uint64_t t = mcp__mono_ns() + 50000000ull; /* recheck cancellation every 50 ms */
        struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    /* Out of the connection's table either way; the call keeps it for the answer. */
    for (mcp__ask **pp = &c->asks; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    int done = q->done;
    pthread_mutex_unlock(&c->mu);
    q->next = call->ask.legacy;
    call->ask.legacy = q;
    if (st)
        return st;
    if (!done)
        return timed || atomic_load(&call->cancelled) || c->closing ? MCP_ERR_CANCELLED : MCP_ERR_TIMEOUT;
    if (q->answer.kind == MCP_RPC_ERROR) {
        *answer = mcp_json_get(q->answer.root, "error");
        return MCP_ERR_PROTOCOL;
    }
    *answer = q->answer.result;
    return MCP_OK;
}

/*
 * The common path: capability, then the era's way of getting the answer.
 * `call` is NULL for prompts, which can only ask in the 2026-07-28 way:
 * one flagged non-blocking runs on the I/O thread, where a legacy wait
 * would block the very thread that must read the answer.
 */
static mcp_status ask_with(mcp__asker *a, mcp_call *call, const char *key, const char *method, const char *cap,
                           int url_mode, const mcp_buf *params, const mcp_json **answer)
{
    if (!has_capability(a->caps, cap, url_mode)) {
        if (!a->missing_cap[0])
            snprintf(a->missing_cap, sizeof a->missing_cap, "%s", cap);
        return MCP_ERR_UNSUPPORTED;
    }
    if (!a->modern)
        return call ? ask_legacy(call, method, params, answer) : MCP_ERR_UNSUPPORTED;
    size_t kl = strlen(key);
    const mcp_json *v = mcp_json_getn(a->responses, key, kl);
    if (!v)
        v = mcp_json_getn(mcp_json_get(mcp_json_doc_root(a->state_doc), "r"), key, kl);
    if (v) {
        if (mcp_json_typeof(v) != MCP_JSON_OBJECT) {
            snprintf(a->invalid_key, sizeof a->invalid_key, "%.60s", key);
            return MCP_ERR_INVALID;
        }
        *answer = v;
        return MCP_OK;
    }
    /* Not answered yet: one more question for this round. */
    if (!a->pending.data) {
        mcp_buf_init(&a->pending, 0);
        mcp_jw_init(&a->pw, &a->pending);
        mcp_jw_object_begin(&a->pw);
    }
    mcp_jw_key(&a->pw, key);
    mcp_jw_object_begin(&a->pw);
    mcp_jw_key(&a->pw, "method");
    mcp_jw_string(&a->pw, method);
    mcp_jw_key(&a->pw, "params");
    mcp_jw_raw(&a->pw, params->data, params->len);
    mcp_jw_object_end(&a->pw);
    mcp_status st = mcp_jw_status(&a->pw);
    if (st)
        return st;
    a->npending++;
    return MCP_ERR_INPUT_REQUIRED;
}

static mcp_status ask(mcp_call *call, const char *key, const char *method, const char *cap, int url_mode,
                      const mcp_buf *params, const mcp_json **answer)
{
    return ask_with(&call->ask, call, key, method, cap, url_mode, params, answer);
}

/* Elicitation params {message, requestedSchema} from a schema's JSON text. */
static mcp_status elicit_params(mcp_buf *p, const char *message, const char *requested_schema)
{
    mcp_json_doc *schema;
    mcp_status st = mcp_json_parse(&schema, requested_schema, strlen(requested_schema), NULL, NULL);
    if (st)
        return st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG;
    mcp_jw w;
    mcp_jw_init(&w, p);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "message");
    mcp_jw_string(&w, message);
    mcp_jw_key(&w, "requestedSchema");
    mcp_jw_value(&w, mcp_json_doc_root(schema));
    mcp_jw_object_end(&w);
    mcp_json_doc_free(schema);
    return mcp_jw_finish(&w);
}

mcp_status mcp__ask_elicit(mcp__asker *a, const char *key, const char *message, const char *requested_schema,
                           const mcp_json **answer)
{
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_status st = elicit_params(&p, message, requested_schema);
    if (!st)
        st = ask_with(a, NULL, key, "elicitation/create", "elicitation", 0, &p, answer);
    mcp_buf_cleanup(&p);
    return st;
}

/* Checks that `json` is an object and appends it (or builds params) to `out`. */
static mcp_status params_from(mcp_buf *out, const char *json)
{
    mcp_json_doc *d;
    mcp_status st = mcp_json_parse(&d, json, strlen(json), NULL, NULL);
    if (st)
        return st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG;
    if (mcp_json_typeof(mcp_json_doc_root(d)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(d);
        return MCP_ERR_INVALID_ARG;
    }
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_jw_value(&w, mcp_json_doc_root(d));
    mcp_json_doc_free(d);
    return mcp_jw_finish(&w);
}

mcp_status mcp_call_elicit(mcp_call *call, const char *key, const char *message, const char *requested_schema,
                           const mcp_json **answer)
{
    if (!call || !key || !message || !requested_schema || !answer)
        return MCP_ERR_INVALID_ARG;
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_status st = elicit_params(&p, message, requested_schema);
    if (!st)
        st = ask(call, key, "elicitation/create", "elicitation", 0, &p, answer);
    mcp_buf_cleanup(&p);
    return st;
}

mcp_status mcp_call_elicit_url(mcp_call *call, const char *key, const char *message, const char *url,
                               const char *elicitation_id, const mcp_json **answer)
{
    if (!call || !key || !message || !url || !answer)
        return MCP_ERR_INVALID_ARG;
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_jw w;
    mcp_jw_init(&w, &p);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "mode");
    mcp_jw_string(&w, "url");
    mcp_jw_key(&w, "message");
    mcp_jw_string(&w, message);
    mcp_jw_key(&w, "url");
    mcp_jw_string(&w, url);
    /* elicitationId exists only in 2025-11-25; 2026-07-28 removed it. */
    if (elicitation_id && !call->modern) {
        mcp_jw_key(&w, "elicitationId");
        mcp_jw_string(&w, elicitation_id);
    }
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = ask(call, key, "elicitation/create", "elicitation", 1, &p, answer);
    mcp_buf_cleanup(&p);
    return st;
}

mcp_status mcp_call_sample(mcp_call *call, const char *key, const char *params, const mcp_json **answer)
{
    if (!call || !key || !params || !answer)
        return MCP_ERR_INVALID_ARG;
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_status st = params_from(&p, params);
    if (!st)
        st = ask(call, key, "sampling/createMessage", "sampling", 0, &p, answer);
    mcp_buf_cleanup(&p);
    return st;
}

mcp_status mcp_call_list_roots(mcp_call *call, const char *key, const mcp_json **answer)
{
    if (!call || !key || !answer)
        return MCP_ERR_INVALID_ARG;
    mcp_buf p = {"{}", 2, 0, 0};
    return ask(call, key, "roots/list", "roots", 0, &p, answer);
}

mcp_status mcp_call_require(mcp_call *call, const char *capability)
{
    if (!call || !capability || strlen(capability) >= sizeof call->ask.missing_cap)
        return MCP_ERR_INVALID_ARG;
    if (mcp_json_typeof(mcp_json_get(call->ask.caps, capability)) == MCP_JSON_OBJECT)
        return MCP_OK;
    if (!call->ask.missing_cap[0])
        snprintf(call->ask.missing_cap, sizeof call->ask.missing_cap, "%s", capability);
    return MCP_ERR_UNSUPPORTED;
}

mcp_status mcp_call_set_state(mcp_call *call, const void *bytes, size_t n)
{
    if (!call || (!bytes && n))
        return MCP_ERR_INVALID_ARG;
    if (n > MAX_HANDLER_STATE)
        return MCP_ERR_LIMIT;
    unsigned char *copy = mcp_malloc(n ? n : 1);
    if (!copy)
        return MCP_ERR_NOMEM;
    if (n)
        memcpy(copy, bytes, n);
    mcp_free(call->ask.handler_state);
    call->ask.handler_state = copy;
    call->ask.handler_state_len = n;
    return MCP_OK;
}

const void *mcp_call_state(const mcp_call *call, size_t *n)
{
    if (!call || !call->ask.handler_state) {
        if (n)
            *n = 0;
        return NULL;
    }
    if (n)
        *n = call->ask.handler_state_len;
    return call->ask.handler_state;
}

/* The recv thread hands a client's response to the waiting handler. */
int mcp__ask_answer(mcp_conn *c, mcp_rpc_msg *m)
{
    if (m->id.type != MCP_RPC_ID_INT)
        return 0;
    pthread_mutex_lock(&c->mu);
    mcp__ask *q = c->asks;
    while (q && q->id != m->id.num)
        q = q->next;
    if (q && !q->done) {
        q->answer = *m;
        memset(m, 0, sizeof *m); /* the ask owns the document now */
        q->done = 1;
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    return q != NULL;
}

mcp_status mcp__server_init_state_key(mcp_server *srv)
{
    /* The kernel's CSPRNG first (mcp__random): HMAC() sets up OpenSSL on
     * first use, when a requestState is signed. */
    if (mcp__random(srv->state_key, sizeof srv->state_key) == 0)
        return MCP_OK;
    return RAND_bytes(srv->state_key, (int)sizeof srv->state_key) == 1 ? MCP_OK : MCP_ERR_IO;
}

/* ------------------------------------------------------------------------ */
/* Rounds                                                                    */

int mcp__ask_begin_ex(mcp_conn *c, const mcp_rpc_id *id, const mcp_json *params, mcp__asker *a, const char *bound,
                      const mcp_json *args)
{
    if (!a->modern)
        return 0;
    const mcp_json *responses = mcp_json_get(params, "inputResponses");
    if (responses && mcp_json_typeof(responses) != MCP_JSON_OBJECT) {
        mcp__conn_send_error(c, id, MCP_RPC_INVALID_PARAMS, "Invalid params: \"inputResponses\" must be an object");
        return 1;
    }
    a->responses = responses;
    const mcp_json *state = mcp_json_get(params, "requestState");
    if (state) {
        size_t sl;
        const char *s = mcp_json_str(state, &sl);
        mcp_status st = s ? mcp__ask_verify_state(c->srv, a, s, sl, bound, args) : MCP_ERR_INVALID;
        if (st) {
            mcp__conn_send_error(c, id, st == MCP_ERR_NOMEM ? MCP_RPC_INTERNAL_ERROR : MCP_RPC_INVALID_PARAMS,
                              st == MCP_ERR_NOMEM ? "Internal error: out of memory"
                                                  : "Invalid params: requestState integrity check failed");
            return 1;
        }
    }
    return 0;
}

int mcp__ask_begin(mcp__req *r, mcp__asker *a, const char *bound, const mcp_json *args)
{
    mcp__principal_key(r->principal, a->principal_key, sizeof a->principal_key);
    return mcp__ask_begin_ex(r->c, &r->msg->id, r->msg->params, a, bound, args);
}

int mcp__ask_handles(const mcp__asker *a, mcp_status st)
{
    return (st == MCP_ERR_INPUT_REQUIRED && a->modern && a->npending) ||
           (st == MCP_ERR_UNSUPPORTED && a->missing_cap[0]) || (st == MCP_ERR_INVALID && a->invalid_key[0]);
}

int mcp__ask_finish(mcp_conn *c, const mcp_rpc_id *id, mcp__asker *a, mcp_status st, const char *bound,
                    const mcp_json *args)
{
    if (st == MCP_ERR_INPUT_REQUIRED && a->modern && a->npending) {
        mcp_jw_object_end(&a->pw);
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_result(&w, id);
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "resultType");
        mcp_jw_string(&w, "input_required");
        mcp_jw_key(&w, "inputRequests");
        if (mcp_jw_finish(&a->pw) == MCP_OK)
            mcp_jw_raw(&w, a->pending.data, a->pending.len);
        else
            mcp_jw_null(&w); /* makes the frame invalid: reported below */
        mcp__ask_write_state(c->srv, a, &w, bound, args);
        mcp_jw_key(&w, "_meta");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "io.modelcontextprotocol/serverInfo");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "name");
        mcp_jw_string(&w, c->srv->name);
        mcp_jw_key(&w, "version");
        mcp_jw_string(&w, c->srv->version);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
        mcp_rpc_end(&w);
        if (mcp_jw_finish(&w) == MCP_OK && mcp_jw_status(&a->pw) == MCP_OK)
            mcp__conn_send_to(c, &b, id, 1);
        else
            mcp__conn_send_error(c, id, MCP_RPC_INTERNAL_ERROR, "Internal error: could not encode the input request");
        mcp_buf_cleanup(&b);
        return 1;
    }
    if (st == MCP_ERR_UNSUPPORTED && a->missing_cap[0]) {
        char msg[160];
        snprintf(msg, sizeof msg, "This request needs the client's %s capability", a->missing_cap);
        if (!a->modern) {
            char legacy[240];
            snprintf(legacy, sizeof legacy, "Internal error: %s, which it did not declare", msg);
            mcp__conn_send_error(c, id, MCP_RPC_INTERNAL_ERROR, legacy);
            return 1;
        }
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        mcp_rpc_begin_error(&w, id, MCP_RPC_MISSING_CAPABILITY, msg);
        mcp_jw_key(&w, "data");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "requiredCapabilities");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, a->missing_cap);
        mcp_jw_object_begin(&w);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
        mcp_jw_object_end(&w);
        mcp_rpc_end_error(&w);
        if (mcp_jw_finish(&w) == MCP_OK)
            mcp__conn_send_to(c, &b, id, 1);
        mcp_buf_cleanup(&b);
        return 1;
    }
    if (st == MCP_ERR_INVALID && a->invalid_key[0]) {
        char msg[160];
        snprintf(msg, sizeof msg, "Invalid params: inputResponses.%s must be an object", a->invalid_key);
        mcp__conn_send_error(c, id, MCP_RPC_INVALID_PARAMS, msg);
        return 1;
    }
    return 0;
}
