/*
 * The client's OAuth 2.1 flows end to end, against a scripted server on
 * loopback that plays both the MCP server (a protected resource: 401 with
 * a Bearer challenge, 403 insufficient_scope, Protected Resource Metadata)
 * and its authorization servers ("/as1" and "/as2" on the same port: RFC
 * 8414 metadata, dynamic registration, authorize with PKCE and the RFC 9207
 * iss parameter, a token endpoint with the three client authentication
 * methods, refresh tokens and client credentials). The server checks what
 * a correct client must send (PKCE S256, state, resource, redirect URI,
 * client authentication) and records any violation; each case sets its
 * knobs, connects a libmcp client with OAuth options and checks what both
 * sides saw, and that no token, code or secret reached a log line.
 *
 * One case puts libmcp's own Streamable HTTP server in front as the
 * resource server (mcp_auth: RFC 9728 metadata, challenges, JWT checks,
 * per-tool scopes); the scripted authorization server then mints JWTs
 * with the test authorization server's keys (tests/auth/test_as.c).
 * With the path of mcp-cli as argument, mcp-cli's --oauth flow (browser
 * on the loopback listener, or a pasted address) and its client
 * credentials run too; words after it are a launcher mcp-cli runs under
 * (valgrind in the valgrind preset).
 *
 * usage: oauth_flow [MCP-CLI [LAUNCHER...]]
 */
#include "test_as.h"

#include <mcp/mcp.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_passed, g_failed;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            atomic_fetch_add(&g_passed, 1);                                                                            \
        } else {                                                                                                       \
            atomic_fetch_add(&g_failed, 1);                                                                            \
            printf("FAIL line %d: ", __LINE__);                                                                        \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* Every secret the server hands out carries this mark; no log line may. */
#define MARK "~secret~"

/* ---- the scripted server ------------------------------------------------------- */

typedef struct tok {
    char value[2048]; /* "AT~secret~N", or a JWT */
    char scope[160]; /* granted scopes */
    int uses_left;   /* requests it still opens; -1 = unlimited */
    int as;          /* the authorization server that issued it (1 or 2) */
} tok;

typedef struct cli {
    char id[128];
    char secret[48]; /* "" for a public client */
    int as;          /* where it is registered */
    int dynamic;     /* from /register */
} cli;

typedef struct srv {
    int lfd;
    unsigned port;
    char base[64];  /* "http://127.0.0.1:PORT" */
    char url[96];   /* the MCP endpoint: base + "/mcp" */
    pthread_t th;
    atomic_int stop;
    pthread_mutex_t mu;
    struct conn *conns;
    /* ---- knobs (set before connecting; later changes under mu) ---- */
    int modern;                 /* a 2026-07-28 server; else legacy (initialize, 400 to server/discover) */
    int no_header_rm;           /* no resource_metadata in the challenge (well-known probing) */
    const char *challenge_scope; /* scope in the 401 challenge, or NULL */
    const char *prm_scopes;     /* PRM scopes_supported (JSON array text), or NULL */
    const char *prm_resource;   /* PRM resource override, or NULL */
    int active_as;              /* the authorization server the PRM names: 1 or 2 */
    const char *list_scope;     /* scope tools/list needs, or NULL */
    const char *call_scope;     /* scope tools/call needs, or NULL */
    const char *withheld;       /* a scope the authorization server never grants, or NULL */
    const char *as_scopes;      /* AS scopes_supported (JSON array text), or NULL */
    const char *methods;        /* token_endpoint_auth_methods_supported (JSON array text) */
    int cimd;                   /* client_id_metadata_document_supported */
    int no_dcr;                 /* no registration endpoint */
    int no_pkce;                /* no code_challenge_methods_supported */
    int iss_adv;                /* authorization_response_iss_parameter_supported */
    int iss_mode;               /* 0 correct iss, 1 none, 2 wrong */
    int bad_issuer;             /* the metadata names another issuer */
    int refresh;                /* issue refresh tokens */
    int token_uses;             /* requests per access token; 0 = unlimited */
    int deny;                   /* the authorization endpoint answers error=access_denied */
    tas *mint;                  /* issue JWTs signed with the test AS's keys for ... */
    char mint_aud[192];         /* ... this audience (libmcp's server as the resource server) */
    /* ---- what it saw (under mu) ---- */
    int n_prm, n_meta, n_register, n_authorize, n_code, n_refresh, n_cc, n_401, n_403, n_mcp_ok;
    char auth_scope[256];       /* scope of the last authorization request ("-" when absent) */
    char auth_scopes_all[512];  /* every authorization request's scope, "|" separated */
    char auth_resource[256], token_resource[256];
    char auth_client[256];      /* client_id of the last authorization request */
    char token_method[32];      /* client authentication of the last token request */
    char token_client[256];     /* its client id */
    char dcr_body[1024];        /* the last registration request */
    char violation[256];        /* the first thing a correct client must not do */
    tok toks[64];
    int ntoks;
    cli clis[16];
    int nclis;
    char code[48], code_challenge[64], code_scope[256], code_client[256], code_redirect[256], code_resource[256];
    int code_as;
} srv;

typedef struct conn {
    struct conn *next;
    srv *s;
    int fd;
    pthread_t th;
} conn;

typedef struct req {
    char method[8];
    char target[2048];
    char headers[8192];
    char *body;
    size_t body_len;
} req;

static void violation(srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(srv *s, const char *fmt, ...)
{
    if (s->violation[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->violation, sizeof s->violation, fmt, ap);
    va_end(ap);
}

static void header(const req *r, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (const char *p = r->headers; *p;) {
        const char *e = strstr(p, "\r\n");
        size_t ll = e ? (size_t)(e - p) : strlen(p);
        if (ll > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = (size_t)(p + ll - v);
            if (vl >= cap)
                vl = cap - 1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return;
        }
        if (!e)
            break;
        p = e + 2;
    }
}

static int hexv(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The value of `key` in form or query text, decoded; 0 when absent. */
static int form(const char *q, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    for (const char *p = q; p && *p;) {
        size_t pl = strcspn(p, "&#");
        if (pl > kl && p[kl] == '=' && strncmp(p, key, kl) == 0) {
            size_t o = 0;
            for (size_t i = kl + 1; i < pl && o + 1 < cap; i++) {
                if (p[i] == '+')
                    out[o++] = ' ';
                else if (p[i] == '%' && i + 2 < pl && hexv(p[i + 1]) >= 0 && hexv(p[i + 2]) >= 0) {
                    out[o++] = (char)(hexv(p[i + 1]) * 16 + hexv(p[i + 2]));
                    i += 2;
                } else
                    out[o++] = p[i];
            }
            out[o] = '\0';
            return 1;
        }
        if (p[pl] != '&')
            break;
        p += pl + 1;
    }
    return 0;
}

static void send_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, int status, const char *ctype, const char *extra, const char *body)
{
    char head[2048];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d X\r\n%s%s%s%sContent-Length: %zu\r\n\r\n", status,
                     ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "", extra ? extra : "",
                     strlen(body));
    send_all(fd, head, (size_t)n);
    send_all(fd, body, strlen(body));
}

static int read_req(int fd, req *r, char *buf, size_t cap)
{
    size_t len = 0;
    char *end;
    while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
        if (len + 1 >= cap)
            return 0;
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n <= 0)
            return 0;
        len += (size_t)n;
    }
    memset(r, 0, sizeof *r);
    sscanf(buf, "%7s %2047s", r->method, r->target);
    const char *eol = strstr(buf, "\r\n");
    size_t hl = (size_t)(end - eol);
    if (hl >= sizeof r->headers)
        hl = sizeof r->headers - 1;
    memcpy(r->headers, eol + 2, hl);
    char cl[32];
    header(r, "Content-Length", cl, sizeof cl);
    size_t want = (size_t)strtoul(cl, NULL, 10), have = len - (size_t)(end + 4 - buf);
    r->body = malloc(want + 1);
    memcpy(r->body, end + 4, have < want ? have : want);
    while (have < want) {
        ssize_t n = recv(fd, r->body + have, want - have, 0);
        if (n <= 0) {
            free(r->body);
            return 0;
        }
        have += (size_t)n;
    }
    r->body[want] = '\0';
    r->body_len = want;
    return 1;
}

static int scope_has(const char *list, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = list; p && *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (l == n && strncmp(p, s, n) == 0)
            return 1;
        p += l;
    }
    return 0;
}

/* PKCE S256 (RFC 7636 section 4.6), computed here independently of libmcp. */
static int pkce_ok(const char *verifier, const char *challenge)
{
    unsigned char md[32];
    unsigned int ml = 0;
    if (strlen(verifier) < 43 || !EVP_Digest(verifier, strlen(verifier), md, &ml, EVP_sha256(), NULL))
        return 0;
    unsigned char b64[64];
    int n = EVP_EncodeBlock(b64, md, 32);
    while (n && b64[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        b64[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    b64[n] = '\0';
    return strcmp((char *)b64, challenge) == 0;
}

static void mcp_result(int fd, long long id, const char *result)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":%s}", id, result);
    respond(fd, 200, "application/json", NULL, body);
}

/* POST /mcp: the protected resource. Called with s->mu held. */
static void on_mcp(srv *s, int fd, const req *r)
{
    mcp_json_doc *d = NULL;
    char method[64] = "";
    long long id = -1;
    if (mcp_json_parse(&d, r->body, r->body_len, NULL, NULL) == MCP_OK) {
        const char *m = mcp_json_str(mcp_json_get(mcp_json_doc_root(d), "method"), NULL);
        snprintf(method, sizeof method, "%s", m ? m : "");
        if (mcp_json_typeof(mcp_json_get(mcp_json_doc_root(d), "id")) == MCP_JSON_INT)
            id = (long long)mcp_json_int(mcp_json_get(mcp_json_doc_root(d), "id"));
        mcp_json_doc_free(d);
    }
    char auth[256];
    header(r, "Authorization", auth, sizeof auth);
    tok *t = NULL;
    for (int i = 0; i < s->ntoks && !strncmp(auth, "Bearer ", 7); i++)
        if (!strcmp(s->toks[i].value, auth + 7) && s->toks[i].uses_left != 0 && s->toks[i].as == s->active_as)
            t = &s->toks[i];
    char rm[160];
    snprintf(rm, sizeof rm, "resource_metadata=\"%s/.well-known/oauth-protected-resource/mcp\"", s->base);
    if (!t) {
        s->n_401++;
        char h[512];
        snprintf(h, sizeof h, "WWW-Authenticate: Bearer error=\"invalid_token\"%s%s%s%s%s\r\n",
                 s->no_header_rm ? "" : ", ", s->no_header_rm ? "" : rm, s->challenge_scope ? ", scope=\"" : "",
                 s->challenge_scope ? s->challenge_scope : "", s->challenge_scope ? "\"" : "");
        respond(fd, 401, "application/json", h, "{\"error\":\"invalid_token\"}");
        return;
    }
    if (t->uses_left > 0)
        t->uses_left--;
    const char *need = !strcmp(method, "tools/call") ? s->call_scope : !strcmp(method, "tools/list") ? s->list_scope : NULL;
    if (need && !scope_has(t->scope, need)) {
        s->n_403++;
        char h[512];
        snprintf(h, sizeof h, "WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"%s\", %s\r\n", need, rm);
        respond(fd, 403, "application/json", h, "{\"error\":\"insufficient_scope\"}");
        return;
    }
    s->n_mcp_ok++;
    if (!strncmp(method, "notifications/", 14)) {
        respond(fd, 202, NULL, NULL, "");
    } else if (!strcmp(method, "server/discover")) {
        if (s->modern)
            mcp_result(fd, id, "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{\"tools\":{}},"
                               "\"serverInfo\":{\"name\":\"scripted\",\"version\":\"1\"},\"resultType\":\"complete\"}");
        else
            respond(fd, 400, "text/plain", NULL, "Bad Request: no session");
    } else if (!strcmp(method, "initialize")) {
        mcp_result(fd, id, "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
                           "\"serverInfo\":{\"name\":\"scripted\",\"version\":\"1\"}}");
    } else if (!strcmp(method, "tools/list")) {
        mcp_result(fd, id, "{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}],"
                           "\"resultType\":\"complete\"}");
    } else if (!strcmp(method, "tools/call")) {
        mcp_result(fd, id, "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"resultType\":\"complete\"}");
    } else {
        char body[256];
        snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"no\"}}", id);
        respond(fd, 200, "application/json", NULL, body);
    }
}

static void issuer_of(const srv *s, int as, char *out, size_t cap)
{
    snprintf(out, cap, "%s/as%d", s->base, as);
}

static void on_prm(srv *s, int fd, const char *path)
{
    if (strcmp(path, "/.well-known/oauth-protected-resource/mcp") != 0) {
        respond(fd, 404, "text/plain", NULL, "no");
        return;
    }
    s->n_prm++;
    char iss[96], body[1024];
    issuer_of(s, s->active_as, iss, sizeof iss);
    snprintf(body, sizeof body, "{\"resource\":\"%s\",\"authorization_servers\":[\"%s\"]%s%s}",
             s->prm_resource ? s->prm_resource : s->url, iss, s->prm_scopes ? ",\"scopes_supported\":" : "",
             s->prm_scopes ? s->prm_scopes : "");
    respond(fd, 200, "application/json", NULL, body);
}

static void on_meta(srv *s, int fd, int as)
{
    s->n_meta++;
    char iss[96], body[2048];
    issuer_of(s, as, iss, sizeof iss);
    snprintf(body, sizeof body,
             "{\"issuer\":\"%s%s\",\"authorization_endpoint\":\"%s/authorize\",\"token_endpoint\":\"%s/token\""
             "%s%s%s,\"response_types_supported\":[\"code\"],\"token_endpoint_auth_methods_supported\":%s"
             "%s%s%s%s%s}",
             s->bad_issuer ? "https://attacker.example" : iss, s->bad_issuer ? "" : "", iss, iss,
             s->no_dcr ? "" : ",\"registration_endpoint\":\"", s->no_dcr ? "" : iss, s->no_dcr ? "" : "/register\"",
             s->methods ? s->methods : "[\"none\"]",
             s->no_pkce ? "" : ",\"code_challenge_methods_supported\":[\"S256\"]",
             s->cimd ? ",\"client_id_metadata_document_supported\":true" : "",
             s->iss_adv ? ",\"authorization_response_iss_parameter_supported\":true" : "",
             s->as_scopes ? ",\"scopes_supported\":" : "", s->as_scopes ? s->as_scopes : "");
    respond(fd, 200, "application/json", NULL, body);
}

static cli *find_client(srv *s, const char *id, int as)
{
    for (int i = 0; i < s->nclis; i++)
        if (!strcmp(s->clis[i].id, id) && s->clis[i].as == as)
            return &s->clis[i];
    return NULL;
}

static void on_register(srv *s, int fd, int as, const req *r)
{
    s->n_register++;
    snprintf(s->dcr_body, sizeof s->dcr_body, "%s", r->body);
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, r->body, r->body_len, NULL, NULL) != MCP_OK) {
        violation(s, "registration body is not JSON");
        respond(fd, 400, "application/json", NULL, "{\"error\":\"invalid_client_metadata\"}");
        return;
    }
    const mcp_json *root = mcp_json_doc_root(d);
    const char *m = mcp_json_str(mcp_json_get(root, "token_endpoint_auth_method"), NULL);
    const char *app = mcp_json_str(mcp_json_get(root, "application_type"), NULL);
    if (!app || (strcmp(app, "native") && strcmp(app, "web")))
        violation(s, "registration without application_type native or web");
    if (mcp_json_len(mcp_json_get(root, "redirect_uris")) != 1)
        violation(s, "registration without one redirect URI");
    cli *c = &s->clis[s->nclis++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "dyn-as%d-%d", as, s->nclis);
    c->as = as;
    c->dynamic = 1;
    int pub = m && !strcmp(m, "none");
    if (!pub)
        snprintf(c->secret, sizeof c->secret, "CS" MARK "%d", s->nclis);
    char body[512];
    snprintf(body, sizeof body, "{\"client_id\":\"%s\"%s%s%s,\"token_endpoint_auth_method\":\"%s\"}", c->id,
             pub ? "" : ",\"client_secret\":\"", pub ? "" : c->secret, pub ? "" : "\"", m ? m : "client_secret_basic");
    mcp_json_doc_free(d);
    respond(fd, 201, "application/json", NULL, body);
}

static void on_authorize(srv *s, int fd, int as, const char *query)
{
    s->n_authorize++;
    char v[512], redirect[256], state[128], client[256];
    form(query, "redirect_uri", redirect, sizeof redirect);
    form(query, "state", state, sizeof state);
    form(query, "client_id", client, sizeof client);
    snprintf(s->auth_client, sizeof s->auth_client, "%s", client);
    if (!form(query, "scope", s->auth_scope, sizeof s->auth_scope))
        snprintf(s->auth_scope, sizeof s->auth_scope, "-");
    size_t al = strlen(s->auth_scopes_all);
    snprintf(s->auth_scopes_all + al, sizeof s->auth_scopes_all - al, "%s%s", al ? "|" : "", s->auth_scope);
    form(query, "resource", s->auth_resource, sizeof s->auth_resource);
    if (!form(query, "response_type", v, sizeof v) || strcmp(v, "code"))
        violation(s, "authorize without response_type=code");
    if (!form(query, "code_challenge_method", v, sizeof v) || strcmp(v, "S256"))
        violation(s, "authorize without S256");
    if (!form(query, "code_challenge", s->code_challenge, sizeof s->code_challenge))
        violation(s, "authorize without code_challenge");
    if (strlen(state) < 16)
        violation(s, "authorize without a good state");
    if (!s->auth_resource[0])
        violation(s, "authorize without resource");
    if (!find_client(s, client, as) && strncmp(client, "https://", 8) != 0)
        violation(s, "authorize with unknown client %s at as%d", client, as);
    char loc[1024], iss[96];
    issuer_of(s, as, iss, sizeof iss);
    if (s->deny) {
        snprintf(loc, sizeof loc, "Location: %s?error=access_denied&error_description=nope&state=%s&iss=%s\r\n",
                 redirect, state, iss);
        respond(fd, 302, "text/plain", loc, "");
        return;
    }
    s->n_code++;
    snprintf(s->code, sizeof s->code, "CODE" MARK "%d", s->n_code);
    snprintf(s->code_scope, sizeof s->code_scope, "%s", strcmp(s->auth_scope, "-") ? s->auth_scope : "");
    snprintf(s->code_client, sizeof s->code_client, "%s", client);
    snprintf(s->code_redirect, sizeof s->code_redirect, "%s", redirect);
    snprintf(s->code_resource, sizeof s->code_resource, "%s", s->auth_resource);
    s->code_as = as;
    const char *issv = s->iss_mode == 0 ? iss : s->iss_mode == 2 ? "https://evil.example" : NULL;
    snprintf(loc, sizeof loc, "Location: %s?code=%s&state=%s%s%s\r\n", redirect, s->code, state, issv ? "&iss=" : "",
             issv ? issv : "");
    respond(fd, 302, "text/plain", loc, "");
}

static void issue(srv *s, int fd, int as, const char *scope)
{
    tok *t = &s->toks[s->ntoks++ % 64];
    snprintf(t->value, sizeof t->value, "AT" MARK "%d", s->ntoks);
    /* The withheld scope is never granted. */
    t->scope[0] = '\0';
    for (const char *p = scope; p && *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (l && !(s->withheld && strlen(s->withheld) == l && !strncmp(p, s->withheld, l))) {
            size_t n = strlen(t->scope);
            snprintf(t->scope + n, sizeof t->scope - n, "%s%.*s", n ? " " : "", (int)l, p);
        }
        p += l;
    }
    t->uses_left = s->token_uses ? s->token_uses : -1;
    t->as = as;
    if (s->mint) {
        char iss[96], claims[1024];
        issuer_of(s, as, iss, sizeof iss);
        snprintf(claims, sizeof claims,
                 "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"alice\",\"client_id\":\"%s\",\"scope\":\"%s\","
                 "\"iat\":%lld,\"exp\":%lld}",
                 iss, s->mint_aud, s->token_client, t->scope, (long long)time(NULL), (long long)time(NULL) + 3600);
        char *jwt = tas_sign(s->mint, TAS_ES256, claims, 0);
        snprintf(t->value, sizeof t->value, "%s", jwt ? jwt : "");
        free(jwt);
    }
    char body[4096];
    snprintf(body, sizeof body,
             "{\"access_token\":\"%s\",\"token_type\":\"Bearer\",\"expires_in\":3600,\"scope\":\"%s\"%s%d%s}", t->value,
             t->scope, s->refresh ? ",\"refresh_token\":\"RT" MARK : ",\"x\":\"", s->ntoks, "\"");
    respond(fd, 200, "application/json", "Cache-Control: no-store\r\n", body);
}

static void b64dec(const char *in, char *out, size_t cap)
{
    unsigned char tmp[512];
    size_t n = strlen(in);
    out[0] = '\0';
    if (n >= sizeof tmp || n % 4)
        return;
    int m = EVP_DecodeBlock(tmp, (const unsigned char *)in, (int)n);
    if (m < 0)
        return;
    while (n && in[n - 1] == '=') {
        m--;
        n--;
    }
    if ((size_t)m >= cap)
        return;
    memcpy(out, tmp, (size_t)m);
    out[m] = '\0';
}

static void on_token(srv *s, int fd, int as, const req *r)
{
    char auth[512], id[160] = "", secret[96] = "", gt[64], v[512];
    header(r, "Authorization", auth, sizeof auth);
    if (!strncmp(auth, "Basic ", 6)) {
        char raw[300];
        b64dec(auth + 6, raw, sizeof raw);
        char *colon = strchr(raw, ':');
        if (colon) {
            *colon = '\0';
            /* Form-encoded before base64 (RFC 6749 section 2.3.1). */
            char q1[320], q2[320];
            snprintf(q1, sizeof q1, "x=%s", raw);
            snprintf(q2, sizeof q2, "x=%s", colon + 1);
            form(q1, "x", id, sizeof id);
            form(q2, "x", secret, sizeof secret);
        }
        snprintf(s->token_method, sizeof s->token_method, "client_secret_basic");
    } else if (form(r->body, "client_secret", secret, sizeof secret)) {
        form(r->body, "client_id", id, sizeof id);
        snprintf(s->token_method, sizeof s->token_method, "client_secret_post");
    } else {
        form(r->body, "client_id", id, sizeof id);
        snprintf(s->token_method, sizeof s->token_method, "none");
    }
    snprintf(s->token_client, sizeof s->token_client, "%s", id);
    cli *c = find_client(s, id, as);
    int ok = c ? !strcmp(c->secret, secret) || (!c->secret[0] && !secret[0]) : !strncmp(id, "https://", 8) && !secret[0];
    if (!ok) {
        violation(s, "token request from client %s at as%d with wrong credentials", id, as);
        respond(fd, 401, "application/json", NULL, "{\"error\":\"invalid_client\"}");
        return;
    }
    form(r->body, "grant_type", gt, sizeof gt);
    form(r->body, "resource", s->token_resource, sizeof s->token_resource);
    if (!s->token_resource[0])
        violation(s, "token request without resource");
    if (!strcmp(gt, "authorization_code")) {
        form(r->body, "code", v, sizeof v);
        int good = s->code[0] && !strcmp(v, s->code) && s->code_as == as && !strcmp(id, s->code_client);
        form(r->body, "redirect_uri", v, sizeof v);
        good = good && !strcmp(v, s->code_redirect);
        form(r->body, "code_verifier", v, sizeof v);
        if (good && !pkce_ok(v, s->code_challenge))
            violation(s, "code_verifier does not match code_challenge");
        if (strcmp(s->token_resource, s->code_resource) != 0)
            violation(s, "resource differs between authorization and token requests");
        if (!good) {
            respond(fd, 400, "application/json", NULL, "{\"error\":\"invalid_grant\"}");
            return;
        }
        s->code[0] = '\0'; /* one use */
        issue(s, fd, as, s->code_scope);
    } else if (!strcmp(gt, "refresh_token")) {
        form(r->body, "refresh_token", v, sizeof v);
        if (strncmp(v, "RT" MARK, strlen("RT" MARK)) != 0) {
            respond(fd, 400, "application/json", NULL, "{\"error\":\"invalid_grant\"}");
            return;
        }
        s->n_refresh++;
        issue(s, fd, as, s->code_scope);
    } else if (!strcmp(gt, "client_credentials")) {
        s->n_cc++;
        form(r->body, "scope", v, sizeof v);
        issue(s, fd, as, v);
    } else {
        respond(fd, 400, "application/json", NULL, "{\"error\":\"unsupported_grant_type\"}");
    }
}

static void handle(srv *s, int fd, const req *r)
{
    char path[2048];
    snprintf(path, sizeof path, "%s", r->target);
    char *q = strchr(path, '?');
    const char *query = "";
    if (q) {
        *q = '\0';
        query = q + 1;
    }
    pthread_mutex_lock(&s->mu);
    int as = 0;
    const char *rest = NULL;
    if (!strncmp(path, "/as1/", 5) || !strncmp(path, "/as2/", 5)) {
        as = path[3] - '0';
        rest = path + 4;
    }
    if (!strcmp(r->method, "POST") && !strcmp(path, "/mcp")) {
        on_mcp(s, fd, r);
    } else if (!strcmp(r->method, "GET") && !strcmp(path, "/mcp")) {
        respond(fd, 405, "text/plain", NULL, "no stream");
    } else if (!strncmp(path, "/.well-known/oauth-protected-resource", 37)) {
        on_prm(s, fd, path);
    } else if (!strcmp(path, "/.well-known/oauth-authorization-server/as1") ||
               !strcmp(path, "/.well-known/oauth-authorization-server/as2")) {
        on_meta(s, fd, path[strlen(path) - 1] - '0');
    } else if (as && !strcmp(rest, "/register") && !s->no_dcr && !strcmp(r->method, "POST")) {
        on_register(s, fd, as, r);
    } else if (as && !strcmp(rest, "/authorize") && !strcmp(r->method, "GET")) {
        on_authorize(s, fd, as, query);
    } else if (as && !strcmp(rest, "/token") && !strcmp(r->method, "POST")) {
        on_token(s, fd, as, r);
    } else {
        if (strstr(path, "oauth-authorization-server") && !strstr(path, "/as"))
            violation(s, "AS metadata requested at the root for a path issuer: %s", path);
        respond(fd, 404, "text/plain", NULL, "not found");
    }
    pthread_mutex_unlock(&s->mu);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    char *buf = malloc(65536);
    req r;
    while (!atomic_load(&c->s->stop) && read_req(c->fd, &r, buf, 65536)) {
        handle(c->s, c->fd, &r);
        free(r.body);
    }
    free(buf);
    shutdown(c->fd, SHUT_RDWR);
    return NULL;
}

static void *accept_main(void *arg)
{
    srv *s = arg;
    for (;;) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0 || atomic_load(&s->stop)) {
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        conn *c = calloc(1, sizeof *c);
        c->s = s;
        c->fd = fd;
        pthread_mutex_lock(&s->mu);
        c->next = s->conns;
        s->conns = c;
        pthread_mutex_unlock(&s->mu);
        pthread_create(&c->th, NULL, conn_main, c);
    }
}

static srv *srv_start(void)
{
    srv *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->active_as = 1;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 64) ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al)) {
        perror("oauth_flow: listen");
        exit(1);
    }
    s->port = ntohs(a.sin_port);
    snprintf(s->base, sizeof s->base, "http://127.0.0.1:%u", s->port);
    snprintf(s->url, sizeof s->url, "%s/mcp", s->base);
    pthread_create(&s->th, NULL, accept_main, s);
    return s;
}

static void srv_stop(srv *s)
{
    atomic_store(&s->stop, 1);
    shutdown(s->lfd, SHUT_RDWR);
    pthread_join(s->th, NULL);
    close(s->lfd);
    while (s->conns) {
        conn *c = s->conns;
        s->conns = c->next;
        shutdown(c->fd, SHUT_RDWR);
        pthread_join(c->th, NULL);
        close(c->fd);
        free(c);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/*
 * The knobs a case set after srv_start() reach the server threads, and
 * what they saw reaches the case: both sides take s->mu, so taking it once
 * after the writes (or before the reads) orders them.
 */
static void publish(srv *s)
{
    pthread_mutex_lock(&s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void add_client(srv *s, int as, const char *id, const char *secret)
{
    cli *c = &s->clis[s->nclis++];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->secret, sizeof c->secret, "%s", secret ? secret : "");
    c->as = as;
}

/* ---- the client side ---------------------------------------------------------- */

typedef struct logbuf {
    pthread_mutex_t mu;
    char text[1 << 18];
} logbuf;

static void on_log(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    logbuf *l = ud;
    pthread_mutex_lock(&l->mu);
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s\n", message);
    pthread_mutex_unlock(&l->mu);
}

static logbuf g_log;

static void default_oauth(mcp_oauth_opts *oa)
{
    memset(oa, 0, sizeof *oa);
    oa->redirect_uri = "http://127.0.0.1:9/callback";
    oa->authorize = mcp_oauth_authorize_unattended;
    oa->client_name = "oauth-flow-test";
}

static mcp_status connect_to(srv *s, const char *version, const mcp_oauth_opts *oa, mcp_client **c, mcp_error *err)
{
    publish(s);
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "oauth-flow";
    o.protocol_version = version;
    o.timeout_ms = 15000;
    o.connect_timeout_ms = 15000;
    o.log = on_log;
    o.user_data = &g_log;
    mcp_http_client_opts h;
    memset(&h, 0, sizeof h);
    h.url = s->url;
    h.oauth = oa;
    h.no_get_stream = 1;
    return mcp_client_connect_http(c, &o, &h, err);
}

static mcp_status call(mcp_client *c, mcp_error *err)
{
    mcp_response *r = NULL;
    mcp_status st = mcp_client_call_tool(c, "echo", NULL, NULL, &r, err);
    mcp_response_free(r);
    return st;
}

static mcp_status list(mcp_client *c, mcp_error *err)
{
    mcp_response *r = NULL;
    mcp_status st = mcp_client_list_tools(c, &r, err);
    mcp_response_free(r);
    return st;
}

#define NO_VIOLATION(s, what) CHECK(!(s)->violation[0], "%s: the server saw: %s", what, (s)->violation)

/* ---- cases ---------------------------------------------------------------------- */

/* The whole code flow at 2026-07-28: discovery, registration, PKCE, iss, resource. */
static void code_flow_modern(void)
{
    srv *s = srv_start();
    s->modern = 1;
    s->iss_adv = 1;
    s->prm_scopes = "[\"mcp:basic\",\"mcp:read\"]";
    s->list_scope = "mcp:read";
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "modern: connect through the authorization (%s: %s)", mcp_status_name(st), err.message);
    if (st == MCP_OK) {
        CHECK(mcp_client_is_modern(c), "modern: the era");
        CHECK(list(c, &err) == MCP_OK && call(c, &err) == MCP_OK, "modern: calls with the token (%s)", err.message);
        mcp_client_close(c);
    }
    char want[128];
    snprintf(want, sizeof want, "%s", s->url);
    CHECK(s->n_register == 1 && s->n_authorize == 1 && s->n_401 == 1, "modern: one registration, one authorization, "
          "one 401 (%d %d %d)", s->n_register, s->n_authorize, s->n_401);
    CHECK(!strcmp(s->auth_scope, "mcp:basic mcp:read"), "modern: scopes from the PRM (%s)", s->auth_scope);
    CHECK(!strcmp(s->auth_resource, want) && !strcmp(s->token_resource, want), "modern: resource %s / %s",
          s->auth_resource, s->token_resource);
    CHECK(strstr(s->dcr_body, "\"application_type\":\"native\"") && strstr(s->dcr_body, "refresh_token") &&
              strstr(s->dcr_body, "\"client_name\":\"oauth-flow-test\""),
          "modern: registration metadata (%s)", s->dcr_body);
    CHECK(!strcmp(s->token_method, "none"), "modern: a public client (%s)", s->token_method);
    NO_VIOLATION(s, "modern");
    srv_stop(s);
}

/* Dual era against a legacy server that wants a token for everything; well-known probing. */
static void code_flow_legacy(void)
{
    srv *s = srv_start();
    s->no_header_rm = 1;
    s->challenge_scope = "mcp:basic";
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, NULL, &oa, &c, &err);
    CHECK(st == MCP_OK, "legacy: connect (%s: %s)", mcp_status_name(st), err.message);
    if (st == MCP_OK) {
        CHECK(!mcp_client_is_modern(c), "legacy: fell back to initialize");
        CHECK(call(c, &err) == MCP_OK, "legacy: call (%s)", err.message);
        mcp_client_close(c);
    }
    CHECK(s->n_authorize == 1 && s->n_prm == 1, "legacy: one authorization after probing the PRM (%d, %d)",
          s->n_authorize, s->n_prm);
    CHECK(!strcmp(s->auth_scope, "mcp:basic"), "legacy: the challenge's scope (%s)", s->auth_scope);
    NO_VIOLATION(s, "legacy");
    srv_stop(s);
}

/* Pre-registered confidential clients: the method follows the server's metadata. */
static void preregistered(const char *methods, const char *want)
{
    srv *s = srv_start();
    s->modern = 1;
    s->no_dcr = 1;
    s->methods = methods;
    add_client(s, 1, "pre-client", "pre" MARK "secret");
    mcp_oauth_opts oa;
    default_oauth(&oa);
    oa.client_id = "pre-client";
    oa.client_secret = "pre" MARK "secret";
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "pre-registered %s: connect (%s)", want, err.message);
    if (st == MCP_OK)
        mcp_client_close(c);
    CHECK(!strcmp(s->token_method, want) && !strcmp(s->token_client, "pre-client") && s->n_register == 0,
          "pre-registered: %s wanted, %s used by %s", want, s->token_method, s->token_client);
    NO_VIOLATION(s, "pre-registered");
    srv_stop(s);
}

/* A Client ID Metadata Document URL is the client id where it is supported. */
static void cimd(void)
{
    srv *s = srv_start();
    s->modern = 1;
    s->cimd = 1;
    mcp_oauth_opts oa;
    default_oauth(&oa);
    oa.client_metadata_url = "https://app.example/oauth/client.json";
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "cimd: connect (%s)", err.message);
    if (st == MCP_OK)
        mcp_client_close(c);
    CHECK(s->n_register == 0 && !strcmp(s->auth_client, "https://app.example/oauth/client.json") &&
              !strcmp(s->token_client, "https://app.example/oauth/client.json"),
          "cimd: the URL as client id, no registration (%d, %s)", s->n_register, s->auth_client);
    srv_stop(s);
}

/* 403 insufficient_scope: re-authorization with the union of the scopes. */
static void step_up(void)
{
    srv *s = srv_start();
    s->challenge_scope = "mcp:basic";
    s->list_scope = "mcp:basic";
    s->call_scope = "mcp:write";
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2025_11_25, &oa, &c, &err);
    CHECK(st == MCP_OK, "step-up: connect (%s)", err.message);
    if (st == MCP_OK) {
        CHECK(list(c, &err) == MCP_OK, "step-up: list (%s)", err.message);
        st = call(c, &err);
        CHECK(st == MCP_OK, "step-up: the call after a 403 (%s: %s)", mcp_status_name(st), err.message);
        CHECK(call(c, &err) == MCP_OK, "step-up: the next call needs nothing more");
        mcp_client_close(c);
    }
    CHECK(s->n_403 == 1 && s->n_authorize == 2, "step-up: one 403, two authorizations (%d, %d)", s->n_403,
          s->n_authorize);
    CHECK(!strcmp(s->auth_scopes_all, "mcp:basic|mcp:basic mcp:write"), "step-up: scopes %s", s->auth_scopes_all);
    CHECK(s->n_register == 1, "step-up: the registration is kept (%d)", s->n_register);
    NO_VIOLATION(s, "step-up");
    srv_stop(s);
}

/* A scope the server never grants: bounded attempts, then MCP_ERR_AUTH. */
static void retry_limit(void)
{
    srv *s = srv_start();
    s->modern = 1;
    s->call_scope = "mcp:admin";
    s->withheld = "mcp:admin";
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "retry limit: connect (%s)", err.message);
    if (st == MCP_OK) {
        st = call(c, &err);
        CHECK(st == MCP_ERR_AUTH && strstr(err.message, "403") && strstr(err.message, "3 authorizations"),
              "retry limit: the call fails (%s: %s)", mcp_status_name(st), err.message);
        CHECK(strstr(err.message, MARK) == NULL, "retry limit: no secret in the message");
        mcp_client_close(c);
    }
    CHECK(s->n_authorize == 4 && s->n_403 == 4, "retry limit: 1 + 3 authorizations, 4 refusals (%d, %d)",
          s->n_authorize, s->n_403);
    srv_stop(s);
}

/* A refused token with a refresh token at hand: refresh, no person. */
static void refresh(void)
{
    srv *s = srv_start();
    s->modern = 1;
    s->refresh = 1;
    s->token_uses = 2;
    s->as_scopes = "[\"mcp:basic\",\"offline_access\"]";
    s->prm_scopes = "[\"mcp:basic\"]";
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "refresh: connect (%s)", err.message);
    if (st == MCP_OK) {
        for (int i = 0; i < 5; i++) {
            st = call(c, &err);
            CHECK(st == MCP_OK, "refresh: call %d (%s)", i, err.message);
        }
        mcp_client_close(c);
    }
    CHECK(s->n_authorize == 1 && s->n_refresh == 2, "refresh: one authorization, two refreshes (%d, %d)",
          s->n_authorize, s->n_refresh);
    CHECK(!strcmp(s->auth_scope, "mcp:basic offline_access"), "refresh: offline_access asked for (%s)",
          s->auth_scope);
    NO_VIOLATION(s, "refresh");
    srv_stop(s);
}

/* Cases where the client must stop before handing anything to the server. */
static void refusals(void)
{
    struct {
        const char *name;
        int knob;
        const char *want;
    } cases[] = {
        {"resource mismatch", 1, "not this server"},
        {"wrong iss", 2, "mix-up"},
        {"missing iss", 3, "promises an iss"},
        {"issuer mismatch", 4, "names issuer"},
        {"no PKCE", 5, "PKCE"},
        {"access denied", 6, "access_denied: nope"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        srv *s = srv_start();
        s->modern = 1;
        s->iss_adv = 1;
        switch (cases[i].knob) {
        case 1: s->prm_resource = "https://evil.example/mcp"; break;
        case 2: s->iss_mode = 2; break;
        case 3: s->iss_mode = 1; break;
        case 4: s->bad_issuer = 1; break;
        case 5: s->no_pkce = 1; break;
        case 6: s->deny = 1; break;
        }
        mcp_oauth_opts oa;
        default_oauth(&oa);
        mcp_client *c = NULL;
        mcp_error err;
        mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
        CHECK(st == MCP_ERR_AUTH && strstr(err.message, cases[i].want), "%s: refused (%s: %s)", cases[i].name,
              mcp_status_name(st), err.message);
        if (st == MCP_OK)
            mcp_client_close(c);
        int sent_code = s->ntoks > 0;
        int authorized = s->n_authorize > 0;
        if (cases[i].knob == 1 || cases[i].knob == 4 || cases[i].knob == 5)
            CHECK(!authorized && s->n_register == 0, "%s: no registration or authorization (%d, %d)", cases[i].name,
                  s->n_register, s->n_authorize);
        else
            CHECK(authorized && !sent_code, "%s: the code never reached the token endpoint", cases[i].name);
        srv_stop(s);
    }
}

/* A machine client: client credentials with HTTP Basic. */
static void client_credentials(void)
{
    srv *s = srv_start();
    s->modern = 1;
    s->methods = "[\"client_secret_basic\"]";
    s->challenge_scope = "mcp:jobs";
    add_client(s, 1, "machine", "m" MARK "1");
    mcp_oauth_opts oa;
    memset(&oa, 0, sizeof oa);
    oa.grant = MCP_OAUTH_CLIENT_CREDENTIALS;
    oa.client_id = "machine";
    oa.client_secret = "m" MARK "1";
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "client credentials: connect (%s)", err.message);
    if (st == MCP_OK) {
        CHECK(call(c, &err) == MCP_OK, "client credentials: call");
        mcp_client_close(c);
    }
    CHECK(s->n_cc == 1 && s->n_authorize == 0 && !strcmp(s->token_method, "client_secret_basic"),
          "client credentials: one grant, no browser (%d, %d, %s)", s->n_cc, s->n_authorize, s->token_method);
    NO_VIOLATION(s, "client credentials");
    srv_stop(s);
}

/* The server moves to another authorization server: new registration there, old id never shown. */
static void migration(void)
{
    srv *s = srv_start();
    s->modern = 1;
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "migration: connect (%s)", err.message);
    if (st == MCP_OK) {
        pthread_mutex_lock(&s->mu);
        s->active_as = 2; /* as1's tokens stop working; the PRM names as2 */
        pthread_mutex_unlock(&s->mu);
        st = call(c, &err);
        CHECK(st == MCP_OK, "migration: call after the move (%s)", err.message);
        mcp_client_close(c);
    }
    CHECK(s->n_register == 2 && !strncmp(s->auth_client, "dyn-as2-", 8) && !strncmp(s->token_client, "dyn-as2-", 8),
          "migration: registered again at as2 (%d, %s, %s)", s->n_register, s->auth_client, s->token_client);
    NO_VIOLATION(s, "migration");
    srv_stop(s);

    /* A pre-registered client is bound to its issuer: the move is an error. */
    s = srv_start();
    s->modern = 1;
    s->no_dcr = 1;
    add_client(s, 1, "pre", "");
    add_client(s, 2, "pre", "");
    default_oauth(&oa);
    oa.client_id = "pre";
    st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "migration, pre-registered: connect (%s)", err.message);
    if (st == MCP_OK) {
        pthread_mutex_lock(&s->mu);
        s->active_as = 2;
        pthread_mutex_unlock(&s->mu);
        st = call(c, &err);
        CHECK(st == MCP_ERR_AUTH && strstr(err.message, "belongs to"), "migration, pre-registered: refused (%s)",
              err.message);
        mcp_client_close(c);
    }
    CHECK(s->n_authorize == 1, "migration, pre-registered: never authorized at as2 (%d)", s->n_authorize);
    srv_stop(s);
}

typedef struct par {
    mcp_client *c;
    atomic_int ok;
} par;

static void *par_main(void *arg)
{
    par *p = arg;
    mcp_error err;
    for (int i = 0; i < 5; i++)
        if (call(p->c, &err) == MCP_OK)
            atomic_fetch_add(&p->ok, 1);
    return NULL;
}

/* Many requests refused at once: one authorization, all of them sent again. */
static void concurrent(void)
{
    srv *s = srv_start();
    s->modern = 1;
    mcp_oauth_opts oa;
    default_oauth(&oa);
    mcp_client *c;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_OK, "concurrent: connect (%s)", err.message);
    if (st != MCP_OK) {
        srv_stop(s);
        return;
    }
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->ntoks; i++)
        s->toks[i].uses_left = 0; /* every token revoked */
    pthread_mutex_unlock(&s->mu);
    enum { N = 8 };
    pthread_t th[N];
    par p;
    p.c = c;
    atomic_init(&p.ok, 0);
    for (int i = 0; i < N; i++)
        pthread_create(&th[i], NULL, par_main, &p);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&p.ok) == N * 5, "concurrent: every call succeeded (%d)", atomic_load(&p.ok));
    CHECK(s->n_authorize == 2, "concurrent: exactly one more authorization (%d)", s->n_authorize);
    mcp_client_close(c);
    NO_VIOLATION(s, "concurrent");
    srv_stop(s);
}

static mcp_status decline(mcp_client *c, const char *u, const char *r, char *o, size_t cap, void *ud)
{
    (void)c, (void)u, (void)r, (void)o, (void)cap;
    atomic_fetch_add((atomic_int *)ud, 1);
    return MCP_ERR_CANCELLED;
}

/* Without OAuth options a 401 fails as before; a 403 that is not about scope is final. */
static void plain_failures(void)
{
    srv *s = srv_start();
    s->modern = 1;
    mcp_client *c = NULL;
    mcp_error err;
    mcp_status st = connect_to(s, MCP_PROTOCOL_2026_07_28, NULL, &c, &err);
    CHECK(st == MCP_ERR_AUTH && strstr(err.message, "401") && strstr(err.message, "resource_metadata"),
          "no oauth: 401 is MCP_ERR_AUTH with the challenge (%s: %s)", mcp_status_name(st), err.message);
    if (st == MCP_OK)
        mcp_client_close(c);
    /* The person says no. */
    mcp_oauth_opts oa;
    default_oauth(&oa);
    atomic_int asked;
    atomic_init(&asked, 0);
    oa.authorize = decline;
    oa.user_data = &asked;
    st = connect_to(s, MCP_PROTOCOL_2026_07_28, &oa, &c, &err);
    CHECK(st == MCP_ERR_AUTH && strstr(err.message, "not completed") && atomic_load(&asked) == 1,
          "declined: MCP_ERR_AUTH after one question (%s: %s, %d)", mcp_status_name(st), err.message,
          atomic_load(&asked));
    if (st == MCP_OK)
        mcp_client_close(c);
    srv_stop(s);
}

/* ---- libmcp's server as the resource server ---------------------------------------------- */

static mcp_status rs_echo(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    return mcp_call_textf(call, "hello %s", mcp_call_subject(call) ? mcp_call_subject(call) : "-");
}

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level, (void)message, (void)ud;
}

/*
 * The client against libmcp's Streamable HTTP server with mcp_auth: the
 * server's 401 and metadata lead the client to the scripted authorization
 * server, whose JWTs the server verifies; a tool with its own scope is
 * reached through a 403 step-up; in both eras.
 */
static void libmcp_resource_server(const char *version)
{
    tas *keys = NULL;
    if (tas_start(&keys, 0) != 0) {
        CHECK(0, "libmcp RS: the test authorization server's keys");
        return;
    }
    srv *s = srv_start(); /* only its authorization server is used */
    char issuer[96];
    issuer_of(s, 1, issuer, sizeof issuer);
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 2;
    so.log = quiet;
    mcp_server *ms = NULL;
    mcp_auth *auth = NULL;
    mcp_http_server *hs = NULL;
    mcp_error err;
    char *jwks = tas_jwks(keys);
    int ok = mcp_server_new(&ms, &so, NULL) == MCP_OK;
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "echo";
    d.handler = rs_echo;
    ok = ok && mcp_server_add_tool(ms, &d, NULL) == MCP_OK;
    d.name = "write";
    d.scopes = "files:write";
    ok = ok && mcp_server_add_tool(ms, &d, NULL) == MCP_OK;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.issuers = issuer;
    ao.jwks_json = jwks;
    ao.scopes_supported = "files:read";
    ok = ok && mcp_auth_new(&auth, &ao, &err) == MCP_OK;
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.auth = auth;
    ho.threads = 2;
    ok = ok && mcp_http_server_start(&hs, ms, &ho, &err) == MCP_OK;
    CHECK(ok, "libmcp RS: the server starts");
    if (ok) {
        char url[128];
        snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", mcp_http_server_port(hs));
        pthread_mutex_lock(&s->mu);
        s->mint = keys;
        snprintf(s->mint_aud, sizeof s->mint_aud, "%s", mcp_auth_resource(auth));
        pthread_mutex_unlock(&s->mu);
        mcp_oauth_opts oa;
        default_oauth(&oa);
        mcp_client_opts o;
        memset(&o, 0, sizeof o);
        o.protocol_version = version;
        o.log = on_log;
        o.user_data = &g_log;
        o.timeout_ms = o.connect_timeout_ms = 15000;
        mcp_http_client_opts h;
        memset(&h, 0, sizeof h);
        h.url = url;
        h.oauth = &oa;
        mcp_client *c = NULL;
        mcp_status st = mcp_client_connect_http(&c, &o, &h, &err);
        CHECK(st == MCP_OK, "libmcp RS %s: connect through the authorization (%s: %s)", version ? version : "dual",
              mcp_status_name(st), err.message);
        if (st == MCP_OK) {
            mcp_response *r = NULL;
            st = mcp_client_call_tool(c, "echo", NULL, NULL, &r, &err);
            CHECK(st == MCP_OK && strstr(mcp_json_str(mcp_json_get(mcp_json_at(mcp_json_get(mcp_response_result(r),
                                                                                             "content"),
                                                                                 0),
                                                               "text"),
                                                  NULL),
                                     "hello alice"),
                  "libmcp RS: the tool sees the token's subject (%s)", err.message);
            mcp_response_free(r);
            st = mcp_client_call_tool(c, "write", NULL, NULL, &r, &err);
            CHECK(st == MCP_OK, "libmcp RS: the scoped tool after a step-up (%s: %s)", mcp_status_name(st),
                  err.message);
            mcp_response_free(r);
            mcp_client_close(c);
        }
        CHECK(s->n_authorize == 2 && !strcmp(s->auth_scopes_all, "files:read|files:read files:write"),
              "libmcp RS: two authorizations (%d: %s)", s->n_authorize, s->auth_scopes_all);
        CHECK(!strcmp(s->auth_resource, s->mint_aud), "libmcp RS: the resource is the server's (%s, %s)",
              s->auth_resource, s->mint_aud);
        NO_VIOLATION(s, "libmcp RS");
    }
    if (hs)
        mcp_http_server_stop(hs, 1000);
    mcp_server_free(ms);
    mcp_auth_free(auth);
    free(jwks);
    srv_stop(s);
    tas_stop(keys);
}

/* ---- mcp-cli -------------------------------------------------------------------------- */

typedef struct child {
    pid_t pid;
    int in, out, err; /* its stdin (ours to write), stdout and stderr (ours to read) */
    char errtext[16384];
    char outtext[8192];
} child;

static char **g_launcher; /* words to run mcp-cli under, NULL-terminated (may be empty) */

static int spawn(child *ch, char *const cmd[])
{
    char *argv[64];
    size_t n = 0;
    for (char **l = g_launcher; l && *l && n < 40; l++)
        argv[n++] = *l;
    for (size_t i = 0; cmd[i] && n < 63; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    int pin[2], pout[2], perr[2];
    if (pipe(pin) || pipe(pout) || pipe(perr))
        return -1;
    fflush(NULL); /* the child must not inherit (and repeat) buffered output */
    ch->pid = fork();
    if (ch->pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        for (int fd = 3; fd < 256; fd++)
            close(fd);
        execvp(argv[0], argv); /* the launcher ("valgrind") is looked up in PATH */
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    ch->in = pin[1];
    ch->out = pout[0];
    ch->err = perr[0];
    ch->errtext[0] = ch->outtext[0] = '\0';
    return ch->pid > 0 ? 0 : -1;
}

/* Reads what the child wrote until `needle` appears in its stderr (or it ends); 1 when found. */
static int wait_for(child *ch, const char *needle, int ms)
{
    for (int waited = 0; waited < ms; waited += 100) {
        if (needle && strstr(ch->errtext, needle))
            return 1;
        struct pollfd p[2] = {{ch->err, POLLIN, 0}, {ch->out, POLLIN, 0}};
        if (poll(p, 2, 100) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            char *buf = i ? ch->outtext : ch->errtext;
            size_t cap = i ? sizeof ch->outtext : sizeof ch->errtext, n = strlen(buf);
            ssize_t k = n + 1 < cap ? read(p[i].fd, buf + n, cap - 1 - n) : 0;
            if (k > 0)
                buf[n + (size_t)k] = '\0';
            else if (!needle && i == 0)
                return 0; /* stderr closed: the child is done */
        }
    }
    return needle && strstr(ch->errtext, needle);
}

static int finish_child(child *ch)
{
    close(ch->in);
    wait_for(ch, NULL, 120000);
    int status = 0;
    if (waitpid(ch->pid, &status, 0) != ch->pid)
        return -1;
    close(ch->out);
    close(ch->err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The text after `prefix` in `s` up to the end of its line. */
static void line_after(const char *s, const char *prefix, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = strstr(s, prefix);
    if (!p)
        return;
    p += strlen(prefix);
    size_t n = strcspn(p, "\n ");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* GET as a browser would (no redirects followed); the status. */
static long browse(const char *url)
{
    CURL *e = curl_easy_init();
    long status = 0;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    if (curl_easy_perform(e) == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    return status;
}

/* mcp-cli --oauth: the person opens the printed address; the browser comes back to the listener, or is pasted. */
static void cli_cases(const char *cli_path)
{
    for (int paste = 0; paste < 2; paste++) {
        srv *s = srv_start();
        s->modern = 1;
        s->list_scope = "tools:read";
        s->challenge_scope = "tools:read";
        child ch;
        char *argv_listen[] = {(char *)cli_path, "--url", s->url, "--oauth", "tools", NULL};
        char *argv_paste[] = {(char *)cli_path, "--url", s->url, "--oauth", "--redirect-uri",
                              "https://app.example/cb", "--scope", "extra", "tools", NULL};
        publish(s);
        CHECK(spawn(&ch, paste ? argv_paste : argv_listen) == 0, "cli: spawn");
        int asked = wait_for(&ch, "press Enter", 60000);
        char url[2048], back[512], landed[2048];
        line_after(ch.errtext, "browser:\n\n  ", url, sizeof url);
        CHECK(asked && !strncmp(url, s->base, strlen(s->base)), "cli %d: the sign-in address is printed (%s)", paste,
              ch.errtext);
        if (paste)
            snprintf(back, sizeof back, "https://app.example/cb");
        else
            line_after(ch.errtext, "come back to ", back, sizeof back);
        /* The person signs in: the authorization server redirects the browser. */
        mcp_status st = url[0] ? mcp_oauth_authorize_unattended(NULL, url, back, landed, sizeof landed, NULL)
                               : MCP_ERR_INVALID_ARG;
        CHECK(st == MCP_OK, "cli %d: the authorization server redirects to %s (%s)", paste, back,
              mcp_status_name(st));
        if (st == MCP_OK && paste) {
            /* The browser is elsewhere: the person pastes the address. */
            char line[2100];
            int n = snprintf(line, sizeof line, "not this\n%s\n", landed);
            CHECK(write(ch.in, line, (size_t)n) == n, "cli: paste");
        } else if (st == MCP_OK) {
            long status = browse(landed);
            CHECK(status == 200, "cli: the listener answers the browser (%ld)", status);
        }
        int rc = finish_child(&ch);
        publish(s); /* the server's observations, to this thread */
        CHECK(rc == 0 && strstr(ch.outtext, "\"echo\""), "cli %d: exit %d, tools listed (%s | %s)", paste, rc,
              ch.outtext, ch.errtext);
        CHECK(!strstr(ch.errtext, MARK) && !strstr(ch.outtext, MARK), "cli %d: no secret printed", paste);
        if (paste)
            CHECK(strstr(ch.errtext, "not an address") != NULL && !strcmp(s->auth_scope, "tools:read extra"),
                  "cli: a wrong paste is refused, the scope extended (%s)", s->auth_scope);
        NO_VIOLATION(s, "cli");
        srv_stop(s);
    }

    /* The machine grant: no browser. */
    srv *s = srv_start();
    s->modern = 1;
    s->methods = "[\"client_secret_post\"]";
    add_client(s, 1, "machine", "m" MARK "2");
    child ch;
    char *argv[] = {(char *)cli_path, "--url", s->url, "--client-id", "machine", "--client-secret", "m" MARK "2",
                    "--client-credentials", "call", "echo", NULL};
    publish(s);
    CHECK(spawn(&ch, argv) == 0, "cli cc: spawn");
    int rc = finish_child(&ch);
    publish(s);
    CHECK(rc == 0 && strstr(ch.outtext, "\"ok\"") && s->n_cc == 1 && !strcmp(s->token_method, "client_secret_post"),
          "cli cc: exit %d (%s | %s)", rc, ch.outtext, ch.errtext);
    srv_stop(s);

    /* Usage errors. */
    char *bad[] = {(char *)cli_path, "--url", "http://127.0.0.1:9/mcp", "--client-secret", "x", "tools", NULL};
    CHECK(spawn(&ch, bad) == 0, "cli usage: spawn");
    rc = finish_child(&ch);
    CHECK(rc == 3 && strstr(ch.errtext, "--client-secret needs"), "cli usage: exit %d (%s)", rc, ch.errtext);
}

int main(int argc, char **argv)
{
    pthread_mutex_init(&g_log.mu, NULL);
    signal(SIGPIPE, SIG_IGN);
    code_flow_modern();
    code_flow_legacy();
    preregistered("[\"client_secret_basic\"]", "client_secret_basic");
    preregistered("[\"client_secret_post\"]", "client_secret_post");
    preregistered("[\"none\",\"client_secret_post\"]", "client_secret_post");
    cimd();
    step_up();
    retry_limit();
    refresh();
    refusals();
    client_credentials();
    migration();
    concurrent();
    plain_failures();
    libmcp_resource_server(NULL);
    libmcp_resource_server(MCP_PROTOCOL_2025_11_25);
    if (argc > 1) {
        g_launcher = argv + 2;
        cli_cases(argv[1]);
    }
    CHECK(strstr(g_log.text, MARK) == NULL, "no token, code or secret in any log line");
    CHECK(strstr(g_log.text, "authorization: access token from") != NULL, "the flow is logged (%.200s)", g_log.text);
    printf("oauth_flow: %d passed, %d failed\n", atomic_load(&g_passed), atomic_load(&g_failed));
    return atomic_load(&g_failed) ? 1 : 0;
}
