/*
 * The metrics listener: GET /metrics on a small libmicrohttpd daemon of its
 * own (one thread, few connections), apart from the MCP endpoint so that a
 * scraper needs no token and the MCP listener's limits do not apply to it.
 * The text comes from mcp_server_metrics_text() (server/metrics.c).
 */
#include "util/util.h"
#include "mcp/transport.h"
#include "transport/http_internal.h"

#include <errno.h>
#include <microhttpd.h>
#include <string.h>

#define METRICS_PATH "/metrics"
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_CONNECTIONS 16u /* scrapers are few */
#define METRICS_TIMEOUT_S 10u
#define METRICS_MAX_BYTES (64u * 1024u * 1024u)

struct mcp_metrics_server {
    mcp_server *srv;            /* whose metrics are served */
    struct MHD_Daemon *mhd;     /* the listener */
    unsigned port;              /* the port it bound */
};

static enum MHD_Result reply(struct MHD_Connection *mc, unsigned status, const char *type, const char *body,
                             size_t len)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, "Allow", "GET, HEAD");
    enum MHD_Result r = MHD_queue_response(mc, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    mcp_metrics_server *ms = cls;
    /* Answer once the head is in; a body is not read (nor wanted). */
    if (!*con_cls) {
        *con_cls = ms;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, METRICS_PATH) != 0)
        return reply(mc, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found: metrics are at /metrics\n", 35);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "Method Not Allowed\n", 19);
    mcp_buf b;
    mcp_buf_init(&b, METRICS_MAX_BYTES);
    enum MHD_Result r;
    if (mcp_server_metrics_text(ms->srv, &b) == MCP_OK)
        r = reply(mc, MHD_HTTP_OK, METRICS_TYPE, b.data ? b.data : "", b.len);
    else
        r = reply(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "Service Unavailable\n", 20);
    mcp_buf_cleanup(&b);
    return r;
}

mcp_status mcp_metrics_server_start(mcp_metrics_server **out, mcp_server *srv, const char *listen, mcp_error *err)
{
    if (!out || !srv || !listen)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "mcp_metrics_server_start: out, srv and listen are needed");
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    char host[256];
    if (mcp_http_parse_listen(listen, &ho, host, sizeof host) != MCP_OK)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "metrics: %s is not [HOST:]PORT", listen);
    const char *h = ho.host && ho.host[0] ? ho.host : "127.0.0.1";
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD;
    struct sockaddr_storage ss;
    mcp_status st = mcp__http_bind_address(h, ho.port, &ss, &flags, err);
    if (st)
        return st;
    mcp_metrics_server *ms = mcp__calloc(1, sizeof *ms);
    if (!ms)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    ms->srv = srv;
    ms->mhd = MHD_start_daemon(flags, (uint16_t)ho.port, NULL, NULL, on_request, ms, MHD_OPTION_SOCK_ADDR,
                               (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, METRICS_CONNECTIONS,
                               MHD_OPTION_CONNECTION_TIMEOUT, METRICS_TIMEOUT_S, MHD_OPTION_END);
    if (!ms->mhd) {
        int e = errno;
        mcp_free(ms);
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "metrics: cannot listen on %s:%u: %s", h, ho.port,
                         e ? strerror(e) : "libmicrohttpd refused to start");
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(ms->mhd, MHD_DAEMON_INFO_BIND_PORT);
    ms->port = di ? di->port : ho.port;
    mcp_server_metrics_enable(srv);
    *out = ms;
    return MCP_OK;
}

unsigned mcp_metrics_server_port(const mcp_metrics_server *ms)
{
    return ms ? ms->port : 0;
}

void mcp_metrics_server_stop(mcp_metrics_server *ms)
{
    if (!ms)
        return;
    MHD_stop_daemon(ms->mhd);
    mcp_free(ms);
}
