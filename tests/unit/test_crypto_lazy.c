/*
 * libcrypto is loaded on first use (src/util/crypto.c), not linked: a
 * server that has served calls without verifying, signing or hashing
 * anything has not mapped libcrypto.so.3; the first JWKS parsed loads it;
 * and where it cannot be loaded (an empty file of that name first on
 * LD_LIBRARY_PATH, in a child process) keys are refused cleanly and the
 * error says why. This program is linked without libcrypto on purpose
 * (tests/CMakeLists.txt).
 */
#include "testlib.h"
#include "mcp/mcp.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* x and y of a real P-256 point (the generator G). */
#define JWKS                                                                                                           \
    "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY\","             \
    "\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU\"}]}"

/* 1 when /proc/self/maps names a file containing `name`. */
static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

static mcp_status new_auth(mcp_auth **out, mcp_error *err)
{
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.issuers = "https://as.example";
    o.resource = "http://127.0.0.1:1/mcp";
    o.jwks_json = JWKS;
    return mcp_auth_new(out, &o, err);
}

/* In the child (T_CRYPTO_CHILD set): libcrypto cannot be loaded. */
static int child_without_crypto(void)
{
    mcp_auth *a = NULL;
    mcp_error err;
    mcp_status st = new_auth(&a, &err);
    mcp_auth_free(a);
    if (st == MCP_OK || !strstr(err.message, "libcrypto could not be loaded")) {
        fprintf(stderr, "child: %s: %s\n", mcp_status_str(st), st ? err.message : "accepted without libcrypto");
        return 1;
    }
    fprintf(stderr, "child: refused as expected: %s (%s)\n", mcp_status_str(st), err.message);
    return 0;
}

static mcp_status echo(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)ud;
    return mcp_call_text(call, mcp_json_str(mcp_json_get(args, "text"), NULL), NULL);
}

static size_t g_answers;

static mcp_status count_send(const char *frame, size_t len, void *ud)
{
    (void)ud;
    if (len && memmem(frame, len, "\"result\"", 8))
        g_answers++;
    return MCP_OK;
}

static void test_not_mapped_until_used(void)
{
    if (getenv("T_CRYPTO_CHILD"))
        exit(child_without_crypto()); /* the child runs nothing else */
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.name = "lazy";
    so.version = "1";
    mcp_server *srv = NULL;
    T_OK(mcp_server_new(&srv, &so, NULL));
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = "echo";
    t.input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}";
    t.handler = echo;
    t.flags = MCP_TOOL_NONBLOCKING;
    T_OK(mcp_server_add_tool(srv, &t, NULL));
    mcp_conn *c = NULL;
    T_OK(mcp_conn_new(&c, srv, count_send, NULL));
    const char *init = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                       "\"arguments\":{\"text\":\"hi\"}}}";
    T_OK(mcp_conn_recv(c, init, strlen(init)));
    T_OK(mcp_conn_recv(c, call, strlen(call)));
    mcp_conn_close(c, 1000);
    mcp_conn_free(c);
    mcp_server_free(srv);
    T_EQ_SIZE(g_answers, 2);
    T_EQ_INT(mapped("libcrypto.so"), 0);

    /* The first use loads it. */
    mcp_auth *a = NULL;
    T_OK(new_auth(&a, NULL));
    mcp_auth_free(a);
    T_EQ_INT(mapped("libcrypto.so"), 1);
}

static void test_missing_library(void)
{
    char dir[] = "/tmp/mcp-nocrypto-XXXXXX";
    T_TRUE(mkdtemp(dir) != NULL);
    char lib[64];
    snprintf(lib, sizeof lib, "%s/libcrypto.so.3", dir);
    FILE *f = fopen(lib, "w");
    T_TRUE(f != NULL);
    fclose(f);
    /* This program's path, read rather than exec'd through /proc/self/exe:
     * under valgrind that link is the tool's, and readlink() is what
     * valgrind answers with the program's own. */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    T_TRUE(n > 0);
    self[n] = '\0';
    pid_t pid = fork();
    T_TRUE(pid >= 0);
    if (pid == 0) {
        setenv("LD_LIBRARY_PATH", dir, 1);
        setenv("T_CRYPTO_CHILD", "1", 1);
        execl(self, "test_crypto_lazy", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    unlink(lib);
    rmdir(dir);
    T_TRUE(WIFEXITED(status));
    T_EQ_INT(WEXITSTATUS(status), 0);
}

TEST_MAIN(TEST(test_not_mapped_until_used), TEST(test_missing_library))
