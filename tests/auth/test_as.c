/*
 * The test authorization server (test_as.h). Plain malloc throughout: it
 * stands outside the library under test, and its allocations must not
 * count against libmcp's leak checks.
 */
#include "test_as.h"

#include <arpa/inet.h>
#ifndef TAS_NO_CURL
#include <curl/curl.h>
#endif
#include <netinet/in.h>
#include <microhttpd.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KEYS 8      /* per algorithm, rotations included */
#define MAX_OPAQUE 16

typedef struct key {
    EVP_PKEY *pkey;     /* private key */
    char kid[40];       /* its id */
} key;

struct tas {
    pthread_mutex_t mu;           /* guards everything below */
    key keys[TAS_NALGS][MAX_KEYS];
    int nkeys[TAS_NALGS];         /* keys made per algorithm; the last signs */
    unsigned next_kid;            /* kid counter */
    char issuer[64];
    char jwks_url[96];
    struct MHD_Daemon *mhd;       /* or NULL without HTTP */
    unsigned jwks_fetches;
    unsigned introspections;
    int jwks_fail;
    unsigned delay_ms;            /* before answering /jwks and /introspect */
    struct {
        char *token;
        char *claims;
    } opaque[MAX_OPAQUE];
    int nopaque;
};

static const char *const g_names[TAS_NALGS] = {"RS256", "PS256", "ES256", "EdDSA"};

const char *tas_alg_name(tas_alg alg)
{
    return alg < TAS_NALGS ? g_names[alg] : "?";
}

/* ------------------------------------------------------------------------ */
/* Text helpers                                                              */

char *tas_b64url(const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const unsigned char *p = data;
    char *out = malloc(n / 3 * 4 + 5);
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = tab[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
    }
    out[o] = '\0';
    return out;
}

static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
}

static char *bn_b64(const BIGNUM *bn)
{
    int n = BN_num_bytes(bn);
    unsigned char *b = malloc((size_t)n + 1);
    BN_bn2bin(bn, b);
    char *s = tas_b64url(b, (size_t)n);
    free(b);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */

static EVP_PKEY *make_key(tas_alg alg)
{
    switch (alg) {
    case TAS_RS256:
    case TAS_PS256:
        return EVP_RSA_gen(2048);
    case TAS_ES256:
        return EVP_EC_gen("P-256");
    default:
        return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    }
}

/* Adds a key for `alg` (as->mu held). */
static void add_key(tas *as, tas_alg alg)
{
    int i = as->nkeys[alg];
    if (i == MAX_KEYS)
        abort();
    key *k = &as->keys[alg][i];
    k->pkey = make_key(alg);
    if (!k->pkey)
        abort();
    snprintf(k->kid, sizeof k->kid, "%s-%u", g_names[alg], ++as->next_kid);
    as->nkeys[alg]++;
}

void tas_rotate(tas *as, tas_alg alg)
{
    pthread_mutex_lock(&as->mu);
    add_key(as, alg);
    pthread_mutex_unlock(&as->mu);
}

const char *tas_kid(tas *as, tas_alg alg)
{
    pthread_mutex_lock(&as->mu);
    const char *kid = as->keys[alg][as->nkeys[alg] - 1].kid;
    pthread_mutex_unlock(&as->mu);
    return kid;
}

/* One public JWK (malloc'd). */
static char *jwk(tas_alg alg, const key *k)
{
    if (alg == TAS_RS256 || alg == TAS_PS256) {
        BIGNUM *n = NULL, *e = NULL;
        EVP_PKEY_get_bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_N, &n);
        EVP_PKEY_get_bn_param(k->pkey, OSSL_PKEY_PARAM_RSA_E, &e);
        char *ns = bn_b64(n), *es = bn_b64(e);
        char *s = fmt("{\"kty\":\"RSA\",\"kid\":\"%s\",\"use\":\"sig\",\"alg\":\"%s\",\"n\":\"%s\",\"e\":\"%s\"}", k->kid,
                      g_names[alg], ns, es);
        free(ns);
        free(es);
        BN_free(n);
        BN_free(e);
        return s;
    }
    if (alg == TAS_ES256) {
        unsigned char pub[65];
        size_t len = 0;
        EVP_PKEY_get_octet_string_param(k->pkey, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub, &len);
        if (len != 65 || pub[0] != 4)
            abort();
        char *x = tas_b64url(pub + 1, 32), *y = tas_b64url(pub + 33, 32);
        char *s = fmt("{\"kty\":\"EC\",\"kid\":\"%s\",\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"}", k->kid, x, y);
        free(x);
        free(y);
        return s;
    }
    unsigned char raw[32];
    size_t len = sizeof raw;
    EVP_PKEY_get_raw_public_key(k->pkey, raw, &len);
    char *x = tas_b64url(raw, len);
    char *s = fmt("{\"kty\":\"OKP\",\"kid\":\"%s\",\"crv\":\"Ed25519\",\"x\":\"%s\"}", k->kid, x);
    free(x);
    return s;
}

char *tas_jwks(tas *as)
{
    pthread_mutex_lock(&as->mu);
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    len = (size_t)sprintf(out, "{\"keys\":[");
    int first = 1;
    for (int a = 0; a < TAS_NALGS; a++) {
        for (int i = 0; i < as->nkeys[a]; i++) {
            char *j = jwk((tas_alg)a, &as->keys[a][i]);
            size_t jl = strlen(j);
            if (len + jl + 8 > cap) {
                cap = (len + jl + 8) * 2;
                out = realloc(out, cap);
            }
            if (!first)
                out[len++] = ',';
            first = 0;
            memcpy(out + len, j, jl);
            len += jl;
            free(j);
        }
    }
    memcpy(out + len, "]}", 3);
    pthread_mutex_unlock(&as->mu);
    return out;
}

/* ------------------------------------------------------------------------ */
/* Signing                                                                   */

/* Signs `input` with `pk` as `alg`; the JWS signature bytes (malloc'd). */
static unsigned char *sign_bytes(tas_alg alg, EVP_PKEY *pk, const char *input, size_t *out_len)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    if (EVP_DigestSignInit_ex(m, &pc, alg == TAS_EDDSA ? NULL : "SHA256", NULL, NULL, pk, NULL) != 1)
        abort();
    if (alg == TAS_PS256) {
        EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING);
        EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST);
    }
    size_t n = 0;
    EVP_DigestSign(m, NULL, &n, (const unsigned char *)input, strlen(input));
    unsigned char *sig = malloc(n);
    if (EVP_DigestSign(m, sig, &n, (const unsigned char *)input, strlen(input)) != 1)
        abort();
    EVP_MD_CTX_free(m);
    if (alg == TAS_ES256) {
        /* DER ECDSA-Sig-Value -> JWA's r || s */
        const unsigned char *p = sig;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)n);
        const BIGNUM *r, *s;
        ECDSA_SIG_get0(es, &r, &s);
        unsigned char *rs = malloc(64);
        BN_bn2binpad(r, rs, 32);
        BN_bn2binpad(s, rs + 32, 32);
        ECDSA_SIG_free(es);
        free(sig);
        *out_len = 64;
        return rs;
    }
    *out_len = n;
    return sig;
}

static char *compact(const char *header, const char *claims, const unsigned char *sig, size_t sl, int bad)
{
    char *h = tas_b64url(header, strlen(header)), *c = tas_b64url(claims, strlen(claims));
    unsigned char *copy = malloc(sl ? sl : 1);
    memcpy(copy, sig, sl);
    if (bad && sl)
        copy[sl / 2] ^= 0x01;
    char *s = tas_b64url(copy, sl);
    char *t = fmt("%s.%s.%s", h, c, s);
    free(h);
    free(c);
    free(s);
    free(copy);
    return t;
}

char *tas_sign_header(tas *as, tas_alg alg, const char *header, const char *claims, unsigned flags)
{
    pthread_mutex_lock(&as->mu);
    EVP_PKEY *pk = as->keys[alg][as->nkeys[alg] - 1].pkey;
    pthread_mutex_unlock(&as->mu);
    char *h = tas_b64url(header, strlen(header)), *c = tas_b64url(claims, strlen(claims));
    char *input = fmt("%s.%s", h, c);
    size_t sl;
    unsigned char *sig = sign_bytes(alg, pk, input, &sl);
    char *t = compact(header, claims, sig, sl, (flags & TAS_BAD_SIG) != 0);
    free(sig);
    free(input);
    free(h);
    free(c);
    return t;
}

char *tas_sign(tas *as, tas_alg alg, const char *claims, unsigned flags)
{
    char *header;
    if (flags & TAS_NO_KID)
        header = fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\"}", g_names[alg]);
    else if (flags & TAS_RANDOM_KID)
        header = fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\",\"kid\":\"nobody-%ld\"}", g_names[alg], (long)random());
    else
        header = fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\",\"kid\":\"%s\"}", g_names[alg], tas_kid(as, alg));
    char *t = tas_sign_header(as, alg, header, claims, flags);
    free(header);
    return t;
}

char *tas_token_none(const char *claims)
{
    return compact("{\"alg\":\"none\",\"typ\":\"JWT\"}", claims, (const unsigned char *)"", 0, 0);
}

char *tas_token_hs256_pubkey(tas *as, const char *claims)
{
    pthread_mutex_lock(&as->mu);
    key *k = &as->keys[TAS_RS256][as->nkeys[TAS_RS256] - 1];
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(bio, k->pkey);
    char *kid = fmt("%s", k->kid);
    pthread_mutex_unlock(&as->mu);
    char *pem;
    long pl = BIO_get_mem_data(bio, &pem);
    char *header = fmt("{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"%s\"}", kid);
    char *h = tas_b64url(header, strlen(header)), *c = tas_b64url(claims, strlen(claims));
    char *input = fmt("%s.%s", h, c);
    unsigned char mac[32];
    size_t ml = 0;
    if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, pem, (size_t)pl, (const unsigned char *)input, strlen(input),
                   mac, sizeof mac, &ml))
        abort();
    char *t = compact(header, claims, mac, ml, 0);
    BIO_free(bio);
    free(kid);
    free(header);
    free(h);
    free(c);
    free(input);
    return t;
}

char *tas_claims(const tas *as, const char *aud, const char *sub, const char *scope, long exp_in, long nbf_in,
                 const char *extra)
{
    long now = (long)time(NULL);
    char audp[512] = "", subp[256] = "", scp[512] = "", nbfp[64] = "";
    if (aud)
        snprintf(audp, sizeof audp, aud[0] == '[' ? ",\"aud\":%s" : ",\"aud\":\"%s\"", aud);
    if (sub)
        snprintf(subp, sizeof subp, ",\"sub\":\"%s\"", sub);
    if (scope)
        snprintf(scp, sizeof scp, ",\"scope\":\"%s\"", scope);
    if (nbf_in)
        snprintf(nbfp, sizeof nbfp, ",\"nbf\":%ld", now + nbf_in);
    return fmt("{\"iss\":\"%s\"%s%s%s,\"exp\":%ld,\"iat\":%ld%s%s}", as->issuer, audp, subp, scp, now + exp_in, now,
               nbfp, extra ? extra : "");
}

void tas_add_opaque(tas *as, const char *token, const char *claims)
{
    pthread_mutex_lock(&as->mu);
    if (as->nopaque < MAX_OPAQUE) {
        as->opaque[as->nopaque].token = fmt("%s", token);
        as->opaque[as->nopaque].claims = fmt("%s", claims);
        as->nopaque++;
    }
    pthread_mutex_unlock(&as->mu);
}

/* ------------------------------------------------------------------------ */
/* HTTP                                                                      */

typedef struct req {
    char *body;     /* POST body */
    size_t len;
} req;

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type, char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Decodes a form value in place (%XX and '+'). */
static void form_decode(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '+') {
            *o++ = ' ';
        } else if (*s == '%' && s[1] && s[2]) {
            char hex[3] = {s[1], s[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

/* Sleeps `ms` milliseconds (the slow-server knob, tas_delay). */
static void nap(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (ms && nanosleep(&ts, &ts) != 0)
        ;
}

static enum MHD_Result introspect(tas *as, struct MHD_Connection *c, req *q)
{
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    int ok = user && pass && !strcmp(user, TAS_CLIENT_ID) && !strcmp(pass, TAS_CLIENT_SECRET);
    if (user)
        MHD_free(user);
    if (pass)
        MHD_free(pass);
    pthread_mutex_lock(&as->mu);
    as->introspections++;
    unsigned delay = as->delay_ms;
    pthread_mutex_unlock(&as->mu);
    nap(delay);
    if (!ok)
        return send_text(c, MHD_HTTP_UNAUTHORIZED, "application/json", fmt("{\"error\":\"invalid_client\"}"));
    char *tok = NULL;
    for (char *p = q->body; p && *p;) {
        char *amp = strchr(p, '&');
        if (amp)
            *amp = '\0';
        if (!strncmp(p, "token=", 6))
            tok = p + 6;
        p = amp ? amp + 1 : NULL;
    }
    char *answer = NULL;
    if (tok) {
        form_decode(tok);
        pthread_mutex_lock(&as->mu);
        for (int i = 0; i < as->nopaque && !answer; i++)
            if (!strcmp(as->opaque[i].token, tok)) {
                const char *cl = as->opaque[i].claims;
                answer = fmt("{\"active\":true,%s", cl + 1); /* claims is an object: splice after '{' */
            }
        pthread_mutex_unlock(&as->mu);
    }
    return send_text(c, MHD_HTTP_OK, "application/json", answer ? answer : fmt("{\"active\":false}"));
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    tas *as = cls;
    req *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        *con_cls = q;
        return MHD_YES;
    }
    if (*upload_size) {
        q->body = realloc(q->body, q->len + *upload_size + 1);
        memcpy(q->body + q->len, upload, *upload_size);
        q->len += *upload_size;
        q->body[q->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    if (!strcmp(method, "GET") && !strcmp(url, "/.well-known/oauth-authorization-server")) {
        return send_text(c, MHD_HTTP_OK, "application/json",
                         fmt("{\"issuer\":\"%s\",\"jwks_uri\":\"%s\",\"introspection_endpoint\":\"%s/introspect\","
                             "\"token_endpoint\":\"%s/token\",\"authorization_endpoint\":\"%s/authorize\","
                             "\"response_types_supported\":[\"code\"],\"grant_types_supported\":"
                             "[\"authorization_code\",\"client_credentials\"],"
                             "\"code_challenge_methods_supported\":[\"S256\"],"
                             "\"introspection_endpoint_auth_methods_supported\":[\"client_secret_basic\"]}",
                             as->issuer, as->jwks_url, as->issuer, as->issuer, as->issuer));
    }
    if (!strcmp(method, "GET") && !strcmp(url, "/jwks")) {
        pthread_mutex_lock(&as->mu);
        as->jwks_fetches++;
        int fail = as->jwks_fail;
        unsigned delay = as->delay_ms;
        pthread_mutex_unlock(&as->mu);
        nap(delay);
        if (fail)
            return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", fmt("down"));
        return send_text(c, MHD_HTTP_OK, "application/json", tas_jwks(as));
    }
    if (!strcmp(method, "POST") && !strcmp(url, "/issue") && q->body) {
        /* Body: the algorithm name, a newline, the claims JSON. */
        char *nl = strchr(q->body, '\n');
        int alg = -1;
        for (int a = 0; nl && a < TAS_NALGS; a++)
            if ((size_t)(nl - q->body) == strlen(g_names[a]) && !strncmp(q->body, g_names[a], (size_t)(nl - q->body)))
                alg = a;
        if (alg < 0)
            return send_text(c, MHD_HTTP_BAD_REQUEST, "text/plain", fmt("want ALG\\nCLAIMS"));
        return send_text(c, MHD_HTTP_OK, "text/plain", tas_sign(as, (tas_alg)alg, nl + 1, 0));
    }
    if (!strcmp(method, "POST") && !strcmp(url, "/introspect"))
        return introspect(as, c, q);
    return send_text(c, MHD_HTTP_NOT_FOUND, "text/plain", fmt("not found"));
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    req *q = *con_cls;
    if (q) {
        free(q->body);
        free(q);
    }
    *con_cls = NULL;
}

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */

int tas_start(tas **out, int http)
{
    tas *as = calloc(1, sizeof *as);
    pthread_mutex_init(&as->mu, NULL);
    for (int a = 0; a < TAS_NALGS; a++)
        add_key(as, (tas_alg)a);
    snprintf(as->issuer, sizeof as->issuer, "https://as.test.invalid");
    if (http) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        as->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
                                   handler, as, MHD_OPTION_NOTIFY_COMPLETED, completed, as, MHD_OPTION_SOCK_ADDR,
                                   (struct sockaddr *)&sa, MHD_OPTION_END);
        if (!as->mhd) {
            tas_stop(as);
            return -1;
        }
        unsigned port = MHD_get_daemon_info(as->mhd, MHD_DAEMON_INFO_BIND_PORT)->port;
        snprintf(as->issuer, sizeof as->issuer, "http://127.0.0.1:%u", port);
        snprintf(as->jwks_url, sizeof as->jwks_url, "%s/jwks", as->issuer);
    }
    *out = as;
    return 0;
}

void tas_stop(tas *as)
{
    if (!as)
        return;
    if (as->mhd)
        MHD_stop_daemon(as->mhd);
    for (int a = 0; a < TAS_NALGS; a++)
        for (int i = 0; i < as->nkeys[a]; i++)
            EVP_PKEY_free(as->keys[a][i].pkey);
    for (int i = 0; i < as->nopaque; i++) {
        free(as->opaque[i].token);
        free(as->opaque[i].claims);
    }
    pthread_mutex_destroy(&as->mu);
    free(as);
}

const char *tas_issuer(const tas *as)
{
    return as->issuer;
}

const char *tas_jwks_url(const tas *as)
{
    return as->mhd ? as->jwks_url : NULL;
}

unsigned tas_jwks_fetches(tas *as)
{
    pthread_mutex_lock(&as->mu);
    unsigned n = as->jwks_fetches;
    pthread_mutex_unlock(&as->mu);
    return n;
}

unsigned tas_introspections(tas *as)
{
    pthread_mutex_lock(&as->mu);
    unsigned n = as->introspections;
    pthread_mutex_unlock(&as->mu);
    return n;
}

void tas_jwks_fail(tas *as, int on)
{
    pthread_mutex_lock(&as->mu);
    as->jwks_fail = on;
    pthread_mutex_unlock(&as->mu);
}

void tas_delay(tas *as, unsigned ms)
{
    pthread_mutex_lock(&as->mu);
    as->delay_ms = ms;
    pthread_mutex_unlock(&as->mu);
}

#ifndef TAS_NO_CURL /* the benchmarks build without libcurl */
/* libcurl: collect a body. */
static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    char **s = ud;
    size_t old = *s ? strlen(*s) : 0;
    *s = realloc(*s, old + size * n + 1);
    memcpy(*s + old, p, size * n);
    (*s)[old + size * n] = '\0';
    return size * n;
}

char *tas_http_issue(tas *as, const char *alg, const char *claims)
{
    if (!as->mhd)
        return NULL;
    char *url = fmt("%s/issue", as->issuer);
    char *body = fmt("%s\n%s", alg, claims);
    char *out = NULL;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    long code = 0;
    if (curl_easy_perform(c) != CURLE_OK || (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), code != 200)) {
        free(out);
        out = NULL;
    }
    curl_easy_cleanup(c);
    free(url);
    free(body);
    return out;
}
#endif

char *tas_public_pem(tas *as, tas_alg alg)
{
    pthread_mutex_lock(&as->mu);
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(bio, as->keys[alg][as->nkeys[alg] - 1].pkey);
    pthread_mutex_unlock(&as->mu);
    char *pem;
    long n = BIO_get_mem_data(bio, &pem);
    char *out = malloc((size_t)n + 1);
    memcpy(out, pem, (size_t)n);
    out[n] = '\0';
    BIO_free(bio);
    return out;
}

/* base64url -> bytes (no checks: test input). */
static size_t b64url_dec(const char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    unsigned acc = 0, bits = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '-' ? 62 : 63;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return o;
}

int tas_verify_raw(tas *as, tas_alg alg, const char *token)
{
    EVP_PKEY *pk = as->keys[alg][as->nkeys[alg] - 1].pkey; /* read-only use: no lock on the hot path */
    const char *dot = strrchr(token, '.');
    unsigned char sig[1024], der[80];
    size_t sl = b64url_dec(dot + 1, strlen(dot + 1), sig);
    const unsigned char *s = sig;
    if (alg == TAS_ES256) {
        ECDSA_SIG *es = ECDSA_SIG_new();
        ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
        unsigned char *p = der;
        sl = (size_t)i2d_ECDSA_SIG(es, &p);
        ECDSA_SIG_free(es);
        s = der;
    }
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pc = NULL;
    int ok = EVP_DigestVerifyInit_ex(m, &pc, alg == TAS_EDDSA ? NULL : "SHA256", NULL, NULL, pk, NULL) == 1;
    if (ok && alg == TAS_PS256) {
        EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING);
        EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST);
    }
    ok = ok && EVP_DigestVerify(m, s, sl, (const unsigned char *)token, (size_t)(dot - token)) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}
