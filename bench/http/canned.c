/*
 * The lower bound for bench/http: a libmicrohttpd responder that answers
 * every POST with a canned tools/call result, copying only the request's
 * id. It parses nothing else, checks no header, validates nothing and keeps
 * no session; each answer is an application/json body of the same shape as
 * the MCP servers' answers. It runs libmicrohttpd the way libmcp's HTTP
 * transport does (poll(), one internal thread per core, keep-alive), so
 * whatever libmcp adds over this is the cost of being an MCP server.
 *
 * It binds 127.0.0.1 on a free port, prints "port N" on stdout, and serves
 * until SIGTERM or SIGINT.
 *
 * usage: canned [--threads N]    (bench/http/run.sh starts it)
 */
#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The id of the request being received ("null" until one is seen). */
typedef struct req {
    char id[48]; /* the id's JSON text */
    size_t len;  /* its length */
} req;

static const char g_head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char g_tail[] =
    ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello from the libmcp http bench\"}]}}";

/* Copies the JSON text of the "id" member out of a body chunk, if it is there. */
static void find_id(req *r, const char *p, size_t n)
{
    const char *id = memmem(p, n, "\"id\":", 5);
    if (!id)
        return;
    const char *v = id + 5, *end = p + n, *e = v;
    if (e < end && *e == '"') {
        e++;
        while (e < end && *e != '"')
            e += *e == '\\' ? 2 : 1;
        e = e < end ? e + 1 : end;
    } else {
        while (e < end && *e != ',' && *e != '}')
            e++;
    }
    if ((size_t)(e - v) < sizeof r->id) {
        memcpy(r->id, v, (size_t)(e - v));
        r->len = (size_t)(e - v);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)cls;
    (void)url;
    (void)version;
    req *r = *con_cls;
    if (!r) {
        r = malloc(sizeof *r);
        if (!r)
            return MHD_NO;
        memcpy(r->id, "null", 4);
        r->len = 4;
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_data_size) {
        find_id(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") != 0) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        enum MHD_Result ok = MHD_queue_response(mc, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
        MHD_destroy_response(resp);
        return ok;
    }
    char body[sizeof g_head + sizeof r->id + sizeof g_tail];
    size_t n = 0;
    memcpy(body, g_head, sizeof g_head - 1);
    n += sizeof g_head - 1;
    memcpy(body + n, r->id, r->len);
    n += r->len;
    memcpy(body + n, g_tail, sizeof g_tail - 1);
    n += sizeof g_tail - 1;
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(mc, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ok;
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)mc;
    (void)toe;
    free(*con_cls);
    *con_cls = NULL;
}

int main(int argc, char **argv)
{
    unsigned threads = 0;
    if (argc == 3 && strcmp(argv[1], "--threads") == 0) {
        threads = (unsigned)strtoul(argv[2], NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: canned [--threads N]\n");
        return 2;
    }
    if (!threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, on_request, NULL,
                                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
                                            MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_LIMIT,
                                            1024u, MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
                                            on_completed, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "canned: cannot start libmicrohttpd on 127.0.0.1\n");
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", di ? (unsigned)di->port : 0u);
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    return 0;
}
