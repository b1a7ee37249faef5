/*
 * mcp-cli: one MCP request from the command line.
 *
 *     mcp-cli [OPTIONS] COMMAND [ARGS] -- SERVER-COMMAND [SERVER-ARGS]
 *     mcp-cli [OPTIONS] --url URL COMMAND [ARGS]
 *
 * The program checks the whole command line first (a usage error never
 * starts a server), connects with libmcp's client (stdio child or
 * Streamable HTTP, dual-era unless --protocol), runs one command, prints
 * the JSON result on stdout and maps the outcome onto the exit status of
 * mcp-cli.1: 0 result, 1 tool error, 2 JSON-RPC error, 3 usage or
 * connection failure. Diagnostics go to stderr only, so stdout can be
 * piped into jq. With --oauth (or --client-id) an HTTP server's 401 starts
 * libmcp's OAuth flow; the sign-in address is printed on stderr and the
 * browser's redirect is awaited on a loopback listener (authorize.c).
 */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STDERR_LINES 20u /* the server's last stderr lines kept for a failure report */
#define BROWSER_WAIT_S 300u /* how long a person may take to sign in */

static const char usage_text[] =
    "usage: mcp-cli [OPTIONS] COMMAND [ARGS] -- SERVER-COMMAND [SERVER-ARGS]\n"
    "       mcp-cli [OPTIONS] --url URL COMMAND [ARGS]\n"
    "\n"
    "Runs one MCP request against one server and prints the JSON result on stdout.\n"
    "\n"
    "Commands:\n"
    "  tools                     list the tools\n"
    "  call NAME [JSON-OBJECT | key=value ...]\n"
    "                            call a tool; a value that parses as JSON is JSON\n"
    "                            (n=5, flag=true), anything else is a string\n"
    "                            (name=Ada); one {...} argument is the whole object\n"
    "  resources                 list the resources\n"
    "  templates                 list the resource templates\n"
    "  read URI                  read a resource\n"
    "  prompts                   list the prompts\n"
    "  prompt NAME [key=value ...]\n"
    "                            get a prompt (values are strings)\n"
    "  complete prompt NAME ARG VALUE [key=value ...]\n"
    "  complete resource URI ARG VALUE [key=value ...]\n"
    "                            complete an argument's VALUE; key=value pairs are\n"
    "                            arguments already chosen (strings)\n"
    "  ping                      ping the server (legacy protocol versions only)\n"
    "  discover                  show the handshake: protocol version, capabilities,\n"
    "                            serverInfo, instructions and the raw result\n"
    "\n";

/* The rest of the help (one string would pass the 4095 bytes C99 promises). */
static const char usage_options[] =
    "Options (before COMMAND, or among its ARGS; never after --):\n"
    "  --url URL                 connect over Streamable HTTP instead of stdio\n"
    "  --protocol VERSION        speak only VERSION: 2024-11-05, 2025-03-26,\n"
    "                            2025-06-18, 2025-11-25 or 2026-07-28 (default:\n"
    "                            probe 2026-07-28, fall back to initialize)\n"
    "  --timeout MS              time limit per request and for the handshake\n"
    "  --discover-timeout MS     how long a silent server/discover probe is waited for before\n"
    "                            falling back to initialize (default 5000; a slow-starting server)\n"
    "                            (defaults: 60000 per request, 30000 handshake)\n"
    "  --header 'NAME: VALUE'    extra HTTP request header (repeatable; --url only)\n"
    "  --token TOKEN             HTTP bearer token (--url only; never printed)\n"
    "  --oauth                   when the server asks for authorization (HTTP 401),\n"
    "                            run OAuth: print the sign-in address to open in a\n"
    "                            browser and wait for it to come back (--url only)\n"
    "  --client-id ID            OAuth client id registered with the server's\n"
    "                            authorization server (implies --oauth; default: a\n"
    "                            client metadata document or dynamic registration)\n"
    "  --client-secret SECRET    that client's secret (never printed)\n"
    "  --client-metadata-url URL https address of this client's metadata document,\n"
    "                            used as its client id where supported\n"
    "  --redirect-uri URI        where the browser comes back (default: a loopback\n"
    "                            address mcp-cli listens on, http://127.0.0.1:PORT/callback)\n"
    "  --scope 'A B'             OAuth scopes to ask for besides the server's\n"
    "  --client-credentials      OAuth without a person: the client credentials grant\n"
    "                            (needs --client-id and --client-secret)\n"
    "  --transcript FILE         append every frame sent and received to FILE,\n"
    "                            one JSON object per line\n"
    "  --elicit-json JSON        accept the server's elicitation requests with this\n"
    "                            JSON object as content (default: decline them)\n"
    "  --task                    call: let the server run the call as a task (the\n"
    "                            tasks extension) and wait for it, showing its status;\n"
    "                            --timeout then covers the whole wait\n"
    "  --pretty                  indent the JSON output (default: one compact line)\n"
    "  --quiet                   discard the server's stderr and mcp-cli's notes\n"
    "                            (default: the server's stderr is captured and shown\n"
    "                            when the command fails)\n"
    "  -h, --help                show this help and exit\n"
    "  --version                 show the version and exit\n"
    "\n"
    "Exit status:\n"
    "  0  success: the result is on stdout\n"
    "  1  the tool answered with isError: true (the result is still printed)\n"
    "  2  a JSON-RPC error: {code,message,data} on stdout, one line on stderr\n"
    "  3  a usage error, or no answer: connection failure, server exit, time limit\n"
    "\n"
    "See mcp-cli(1).\n";

static const char *const g_versions[] = {MCP_PROTOCOL_2024_11_05, MCP_PROTOCOL_2025_03_26, MCP_PROTOCOL_2025_06_18,
                                         MCP_PROTOCOL_2025_11_25, MCP_PROTOCOL_2026_07_28};

typedef struct command command;

/* Everything the command line said, and what the run collects. */
typedef struct cli {
    const char *url;                     /* --url, or NULL for stdio */
    const char *protocol;                /* --protocol, or NULL (dual-era) */
    unsigned timeout_ms;                 /* --timeout, 0 = the library's defaults */
    unsigned discover_timeout_ms;        /* --discover-timeout, 0 = the library's 5 s */
    const char **headers;                /* --header values, NULL-terminated */
    size_t nheaders;                     /* how many */
    const char *token;                   /* --token */
    int oauth;                           /* --oauth (or implied by the options below) */
    const char *client_id;               /* --client-id */
    const char *client_secret;           /* --client-secret (never printed) */
    const char *client_metadata_url;     /* --client-metadata-url */
    const char *redirect_uri;            /* --redirect-uri */
    const char *scope;                   /* --scope */
    int client_credentials;              /* --client-credentials */
    cli_redirect redirect;               /* where the browser comes back (code flow) */
    const char *transcript;              /* --transcript */
    const char *elicit_text;             /* --elicit-json as given */
    mcp_json_doc *elicit;                /* ... parsed (an object), or NULL: decline */
    int pretty;                          /* --pretty */
    int task;                            /* --task */
    int quiet;                           /* --quiet */
    char **server_argv;                  /* the words after "--", NULL-terminated, or NULL */
    const command *cmd;                  /* the command */
    char **words;                        /* its words after the name */
    int nwords;                          /* how many */
    char *params;                        /* the request's JSON argument object (call, prompt, complete) */
    char failure[MCP_ERROR_MESSAGE_MAX]; /* the failure already reported, "" if none */
    pthread_mutex_t mu;                  /* guards the fields below (client threads log) */
    char *lines[STDERR_LINES];           /* the last diagnostics and server stderr lines (ring) */
    int warn[STDERR_LINES];              /* ... whether each is a client warning */
    size_t nlines;                       /* lines kept, at most STDERR_LINES */
    size_t next;                         /* next slot of the ring */
} cli;

/* One command: its words, how the rest become arguments, and what it runs. */
struct command {
    const char *name;                   /* the word on the command line */
    int fixed;                          /* words it requires after the name */
    int rest;                           /* 0: nothing more; 1: key=value words may follow */
    cli_arg_mode mode;                  /* how those become the arguments object */
    const char *usage;                  /* its synopsis, for usage errors */
    int (*run)(cli *c, mcp_client *mc); /* sends the request, prints, returns the exit status */
};

static int run_tools(cli *c, mcp_client *mc);
static int run_call(cli *c, mcp_client *mc);
static int run_resources(cli *c, mcp_client *mc);
static int run_templates(cli *c, mcp_client *mc);
static int run_read(cli *c, mcp_client *mc);
static int run_prompts(cli *c, mcp_client *mc);
static int run_prompt(cli *c, mcp_client *mc);
static int run_complete(cli *c, mcp_client *mc);
static int run_ping(cli *c, mcp_client *mc);
static int run_discover(cli *c, mcp_client *mc);

static const command g_commands[] = {
    {"tools", 0, 0, CLI_ARGS_TYPED, "tools", run_tools},
    {"call", 1, 1, CLI_ARGS_TYPED, "call NAME [JSON-OBJECT | key=value ...]", run_call},
    {"resources", 0, 0, CLI_ARGS_TYPED, "resources", run_resources},
    {"templates", 0, 0, CLI_ARGS_TYPED, "templates", run_templates},
    {"read", 1, 0, CLI_ARGS_TYPED, "read URI", run_read},
    {"prompts", 0, 0, CLI_ARGS_TYPED, "prompts", run_prompts},
    {"prompt", 1, 1, CLI_ARGS_STRINGS, "prompt NAME [key=value ...]", run_prompt},
    {"complete", 4, 1, CLI_ARGS_STRINGS, "complete (prompt NAME | resource URI) ARG VALUE [key=value ...]",
     run_complete},
    {"ping", 0, 0, CLI_ARGS_TYPED, "ping", run_ping},
    {"discover", 0, 0, CLI_ARGS_TYPED, "discover", run_discover},
};

/* ---- diagnostics ------------------------------------------------------------ */

/* Reports a usage error on stderr; returns the exit status for it. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mcp-cli: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'mcp-cli --help'.\n", stderr);
    va_end(ap);
    return CLI_EXIT_FAILURE;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/*
 * The client's log. Its warnings and its info lines (the server's stderr
 * in capture mode, version notes) are kept in a ring and printed when the
 * client is closed: the info lines only when the command failed, the
 * warnings always. Keeping them makes one report that leaves out what the
 * final error message already says (a dead server's stderr tail is both a
 * warning and the error). Runs on client threads.
 */
static void on_log(mcp_log_level level, const char *message, void *ud)
{
    cli *c = ud;
    int warn = level >= MCP_LOG_WARNING;
    if (level < MCP_LOG_INFO || (c->quiet && !warn))
        return;
    char *line = dup_str(message);
    if (!line)
        return;
    pthread_mutex_lock(&c->mu);
    free(c->lines[c->next]);
    c->lines[c->next] = line;
    c->warn[c->next] = warn;
    c->next = (c->next + 1) % STDERR_LINES;
    if (c->nlines < STDERR_LINES)
        c->nlines++;
    pthread_mutex_unlock(&c->mu);
}

/* Prints the kept lines, oldest first (after the client is closed: no thread logs any more). */
static void show_kept_lines(cli *c, int failed)
{
    size_t start = (c->next + STDERR_LINES - c->nlines) % STDERR_LINES;
    for (size_t i = 0; i < c->nlines; i++) {
        size_t k = (start + i) % STDERR_LINES;
        const char *line = c->lines[k];
        /* The failure message may be a cut copy of a warning (mcp_error holds 256 bytes). */
        int said = c->failure[0] && (strstr(c->failure, line) || !strncmp(line, c->failure, strlen(c->failure)));
        if ((!failed && !c->warn[k]) || said)
            continue;
        fprintf(stderr, "mcp-cli: %s%s\n", c->warn[k] ? "warning: " : "", line);
    }
}

/* Reports a failure on stderr, remembering it so the kept lines do not repeat it. */
static void failure(cli *c, const char *what, const mcp_error *err)
{
    snprintf(c->failure, sizeof c->failure, "%s", err->message);
    size_t n = strlen(what);
    if (strncmp(err->message, what, n) == 0 && err->message[n] == ':')
        what = NULL; /* the message already names it */
    fprintf(stderr, "mcp-cli: %s%s%s", what ? what : "", what ? ": " : "",
            err->message[0] ? err->message : mcp_status_str(err->status));
    if (err->rpc_code)
        fprintf(stderr, " (error %d)", err->rpc_code);
    fputc('\n', stderr);
}

static void progress_note(double progress, double total, const char *message, void *ud)
{
    cli *c = ud;
    if (c->quiet)
        return;
    if (total >= 0)
        fprintf(stderr, "mcp-cli: progress %g/%g%s%s\n", progress, total, message ? ": " : "", message ? message : "");
    else
        fprintf(stderr, "mcp-cli: progress %g%s%s\n", progress, message ? ": " : "", message ? message : "");
}

/*
 * Answers the server's requests for input. Elicitation is accepted with
 * --elicit-json's object, or declined (an explicit "decline", so the tool
 * can go on); URL-mode elicitation is always declined, since no one here
 * can open the page. Sampling and roots are not offered (not declared in
 * the capabilities), so a server asking anyway gets -32601.
 */
static mcp_status on_input(mcp_client *mc, const char *method, const mcp_json *params, mcp_jw *w, char *msg, size_t cap,
                           void *ud)
{
    (void)mc;
    cli *c = ud;
    if (strcmp(method, "elicitation/create") != 0) {
        snprintf(msg, cap, "mcp-cli does not answer %s", method);
        return MCP_ERR_UNSUPPORTED;
    }
    int url_mode = mcp_json_str_eq(mcp_json_get(params, "mode"), "url");
    int accept = c->elicit && !url_mode;
    mcp_jw_key(w, "action");
    mcp_jw_string(w, accept ? "accept" : "decline");
    if (accept) {
        mcp_jw_key(w, "content");
        mcp_jw_value(w, mcp_json_doc_root(c->elicit));
    }
    if (!c->quiet) {
        const char *q = mcp_json_str(mcp_json_get(params, "message"), NULL);
        fprintf(stderr, "mcp-cli: the server asks: \"%.200s\": %s\n", q ? q : "",
                accept     ? "accepted with --elicit-json"
                : url_mode ? "declined (URL mode)"
                           : "declined (no --elicit-json)");
    }
    return mcp_jw_status(w);
}

/* ---- output ------------------------------------------------------------------ */

/* Writes `v` and a newline to stdout. 0, or -1 when stdout failed (reported). */
static int print_json(const cli *c, const mcp_json *v)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st = cli_json_write(&b, v, c->pretty);
    if (st == MCP_OK)
        st = mcp_buf_append(&b, "\n", 1);
    int ok = st == MCP_OK && fwrite(b.data, 1, b.len, stdout) == b.len && fflush(stdout) == 0;
    if (!ok)
        fprintf(stderr, "mcp-cli: cannot write the output: %s\n", st != MCP_OK ? mcp_status_str(st) : strerror(errno));
    mcp_buf_cleanup(&b);
    return ok ? 0 : -1;
}

/* Prints JSON text (written by mcp-cli itself) the way print_json() does. */
static int print_text(const cli *c, const char *text, size_t len)
{
    mcp_json_doc *doc;
    mcp_status st = mcp_json_parse(&doc, text, len, NULL, NULL);
    if (st != MCP_OK) {
        fprintf(stderr, "mcp-cli: cannot format the output: %s\n", mcp_status_str(st));
        return -1;
    }
    int rc = print_json(c, mcp_json_doc_root(doc));
    mcp_json_doc_free(doc);
    return rc;
}

/*
 * A JSON-RPC error: {code, message, data} on stdout, one line on stderr.
 * `r` is the error response (NULL: only err's code and message are known).
 */
static int rpc_error(const cli *c, const char *method, const mcp_response *r, const mcp_error *err)
{
    int code = r ? mcp_response_error_code(r) : err->rpc_code;
    const char *message = r ? mcp_response_error_message(r) : err->message;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "code");
    mcp_jw_int(&w, code);
    mcp_jw_key(&w, "message");
    mcp_jw_string(&w, message);
    if (r && mcp_response_error_data(r)) {
        mcp_jw_key(&w, "data");
        mcp_jw_value(&w, mcp_response_error_data(r));
    }
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        print_text(c, b.data, b.len);
    mcp_buf_cleanup(&b);
    fprintf(stderr, "mcp-cli: %s: error %d: %s\n", method, code, message);
    return CLI_EXIT_RPC_ERROR;
}

/* Maps one request's outcome onto output and exit status. Frees `r`. */
static int outcome(cli *c, const char *method, mcp_status st, mcp_response *r, const mcp_error *err)
{
    int rc;
    if (st == MCP_OK && mcp_response_result(r)) {
        if (print_json(c, mcp_response_result(r)))
            rc = CLI_EXIT_FAILURE;
        else
            rc = mcp_response_is_tool_error(r) ? CLI_EXIT_TOOL_ERROR : CLI_EXIT_OK;
    } else if (st == MCP_ERR_PROTOCOL) {
        rc = rpc_error(c, method, r, err);
    } else {
        /* No answer (time limit, closed connection), or an answer mcp-cli cannot use. */
        if (r && mcp_response_result(r))
            print_json(c, mcp_response_result(r));
        mcp_error none;
        mcp_error_clear(&none);
        none.status = MCP_ERR_INVALID_MSG;
        snprintf(none.message, sizeof none.message, "the response has no result");
        failure(c, method, st ? err : &none);
        rc = CLI_EXIT_FAILURE;
    }
    mcp_response_free(r);
    return rc;
}

/* ---- the command line ---------------------------------------------------------- */

typedef enum opt_id {
    OPT_URL,
    OPT_PROTOCOL,
    OPT_TIMEOUT,
    OPT_DISCOVER_TIMEOUT,
    OPT_HEADER,
    OPT_TOKEN,
    OPT_OAUTH,
    OPT_CLIENT_ID,
    OPT_CLIENT_SECRET,
    OPT_CLIENT_METADATA_URL,
    OPT_REDIRECT_URI,
    OPT_SCOPE,
    OPT_CLIENT_CREDENTIALS,
    OPT_TRANSCRIPT,
    OPT_ELICIT,
    OPT_PRETTY,
    OPT_TASK,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION
} opt_id;

typedef struct option {
    const char *name; /* "--name" */
    opt_id id;        /* which */
    int has_value;    /* takes the next word, or "=VALUE" */
} option;

static const option g_options[] = {
    {"--url", OPT_URL, 1},
    {"--protocol", OPT_PROTOCOL, 1},
    {"--timeout", OPT_TIMEOUT, 1},
    {"--discover-timeout", OPT_DISCOVER_TIMEOUT, 1},
    {"--header", OPT_HEADER, 1},
    {"--token", OPT_TOKEN, 1},
    {"--oauth", OPT_OAUTH, 0},
    {"--client-id", OPT_CLIENT_ID, 1},
    {"--client-secret", OPT_CLIENT_SECRET, 1},
    {"--client-metadata-url", OPT_CLIENT_METADATA_URL, 1},
    {"--redirect-uri", OPT_REDIRECT_URI, 1},
    {"--scope", OPT_SCOPE, 1},
    {"--client-credentials", OPT_CLIENT_CREDENTIALS, 0},
    {"--transcript", OPT_TRANSCRIPT, 1},
    {"--elicit-json", OPT_ELICIT, 1},
    {"--pretty", OPT_PRETTY, 0},
    {"--task", OPT_TASK, 0},
    {"--quiet", OPT_QUIET, 0},
    {"--help", OPT_HELP, 0},
    {"-h", OPT_HELP, 0},
    {"--version", OPT_VERSION, 0},
};

/* The option `word` names ("--x" or "--x=value"), or NULL; *inline_value gets what follows '='. */
static const option *find_option(const char *word, const char **inline_value)
{
    *inline_value = NULL;
    for (size_t i = 0; i < sizeof g_options / sizeof g_options[0]; i++) {
        size_t n = strlen(g_options[i].name);
        if (strncmp(word, g_options[i].name, n) != 0)
            continue;
        if (word[n] == '\0')
            return &g_options[i];
        if (word[n] == '=' && g_options[i].has_value) {
            *inline_value = word + n + 1;
            return &g_options[i];
        }
    }
    return NULL;
}

static int parse_timeout(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v == 0 || v > 86400000ul)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Applies one option. CLI_EXIT_OK to go on, -1 when --help/--version was handled, else an exit status. */
static int apply_option(cli *c, const option *o, const char *value)
{
    switch (o->id) {
    case OPT_URL:
        c->url = value;
        break;
    case OPT_PROTOCOL:
        c->protocol = NULL;
        for (size_t i = 0; i < sizeof g_versions / sizeof g_versions[0]; i++)
            if (strcmp(value, g_versions[i]) == 0)
                c->protocol = g_versions[i];
        if (!c->protocol)
            return usage_error("unknown protocol version \"%s\" (known: 2024-11-05, 2025-03-26, 2025-06-18, "
                               "2025-11-25, 2026-07-28)",
                               value);
        break;
    case OPT_TIMEOUT:
        if (parse_timeout(value, &c->timeout_ms))
            return usage_error("--timeout wants milliseconds (1 to 86400000), not \"%s\"", value);
        break;
    case OPT_DISCOVER_TIMEOUT:
        if (parse_timeout(value, &c->discover_timeout_ms))
            return usage_error("--discover-timeout wants milliseconds (1 to 86400000), not \"%s\"", value);
        break;
    case OPT_HEADER: {
        const char *colon = strchr(value, ':');
        if (!colon || colon == value)
            return usage_error("--header wants 'NAME: VALUE', not \"%s\"", value);
        c->headers[c->nheaders++] = value;
        c->headers[c->nheaders] = NULL;
        break;
    }
    case OPT_TOKEN:
        c->token = value;
        break;
    case OPT_OAUTH:
        c->oauth = 1;
        break;
    case OPT_CLIENT_ID:
        c->client_id = value;
        c->oauth = 1;
        break;
    case OPT_CLIENT_SECRET:
        c->client_secret = value;
        break;
    case OPT_CLIENT_METADATA_URL:
        c->client_metadata_url = value;
        c->oauth = 1;
        break;
    case OPT_REDIRECT_URI:
        c->redirect_uri = value;
        break;
    case OPT_SCOPE:
        c->scope = value;
        break;
    case OPT_CLIENT_CREDENTIALS:
        c->client_credentials = 1;
        c->oauth = 1;
        break;
    case OPT_TRANSCRIPT:
        c->transcript = value;
        break;
    case OPT_ELICIT:
        c->elicit_text = value;
        break;
    case OPT_PRETTY:
        c->pretty = 1;
        break;
    case OPT_QUIET:
        c->quiet = 1;
        break;
    case OPT_TASK:
        c->task = 1;
        break;
    case OPT_HELP:
        fputs(usage_text, stdout);
        fputs(usage_options, stdout);
        return -1;
    case OPT_VERSION:
        printf("mcp-cli %s (libmcp %s)\n", MCP_VERSION_STRING, mcp_version());
        return -1;
    }
    return CLI_EXIT_OK;
}

/*
 * Reads the command line into `c`. Options may come before the command
 * or among its words; "--" ends them and starts the server command.
 * Before the command, an unknown "-..." word is an error; after it, such
 * a word is one of the command's words (a completion VALUE may be "-").
 */
static int parse_args(cli *c, int argc, char **argv)
{
    const char *cmd_name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *word = argv[i];
        if (strcmp(word, "--") == 0) {
            c->server_argv = argv + i + 1;
            if (i + 1 == argc)
                return usage_error("%s", "no server command after --");
            break;
        }
        const char *value;
        const option *o = find_option(word, &value);
        if (o) {
            if (o->has_value && !value) {
                if (i + 1 == argc || strcmp(argv[i + 1], "--") == 0)
                    return usage_error("%s needs a value", o->name);
                value = argv[++i];
            }
            int rc = apply_option(c, o, value);
            if (rc)
                return rc;
            continue;
        }
        if (!cmd_name) {
            if (word[0] == '-' && word[1])
                return usage_error("unknown option %s", word);
            cmd_name = word;
            continue;
        }
        c->words[c->nwords++] = argv[i];
    }
    if (!cmd_name)
        return usage_error("%s", "no command (tools, call, resources, templates, read, prompts, prompt, "
                                 "complete, ping, discover)");
    for (size_t i = 0; i < sizeof g_commands / sizeof g_commands[0]; i++)
        if (strcmp(cmd_name, g_commands[i].name) == 0)
            c->cmd = &g_commands[i];
    if (!c->cmd)
        return usage_error("unknown command \"%s\"", cmd_name);
    if (c->nwords < c->cmd->fixed || (!c->cmd->rest && c->nwords > c->cmd->fixed))
        return usage_error("usage: mcp-cli [OPTIONS] %s", c->cmd->usage);
    if (!c->url == !c->server_argv)
        return usage_error("%s", c->url ? "give either --url or -- SERVER-COMMAND, not both"
                                        : "no server: give -- SERVER-COMMAND [ARGS] or --url URL");
    if (!c->url && (c->nheaders || c->token))
        return usage_error("%s", "--header and --token apply to HTTP servers (--url) only");
    int oauth_detail = c->client_secret || c->redirect_uri || c->scope;
    if (!c->url && (c->oauth || oauth_detail))
        return usage_error("%s", "OAuth (--oauth, --client-id ...) applies to HTTP servers (--url) only");
    if (c->client_secret && !c->client_id)
        return usage_error("%s", "--client-secret needs --client-id");
    if (oauth_detail && !c->oauth)
        return usage_error("%s", "--redirect-uri and --scope need --oauth or --client-id");
    if (c->client_credentials && (!c->client_id || !c->client_secret))
        return usage_error("%s", "--client-credentials needs --client-id and --client-secret");
    if (c->client_credentials && c->redirect_uri)
        return usage_error("%s", "--client-credentials uses no browser: drop --redirect-uri");
    return CLI_EXIT_OK;
}

/* Checks --elicit-json and builds the request's argument object. */
static int prepare(cli *c)
{
    if (c->elicit_text) {
        mcp_error e;
        if (mcp_json_parse(&c->elicit, c->elicit_text, strlen(c->elicit_text), NULL, &e) != MCP_OK)
            return usage_error("--elicit-json is not valid JSON: %s", e.message);
        if (mcp_json_typeof(mcp_json_doc_root(c->elicit)) != MCP_JSON_OBJECT)
            return usage_error("%s", "--elicit-json must be a JSON object (the content of the answer)");
    }
    if (!c->cmd->rest)
        return CLI_EXIT_OK;
    if (c->cmd->run == run_complete && strcmp(c->words[0], "prompt") != 0 && strcmp(c->words[0], "resource") != 0)
        return usage_error("complete wants \"prompt NAME\" or \"resource URI\", not \"%s\"", c->words[0]);
    int skip = c->cmd->fixed;
    int n = c->nwords - skip;
    /* Prompts and completions without arguments send none; a tool call always sends an object. */
    if (n == 0 && c->cmd->run != run_call)
        return CLI_EXIT_OK;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    char msg[200];
    mcp_status st = cli_build_object(&b, c->words + skip, n, c->cmd->mode, msg, sizeof msg);
    if (st != MCP_OK) {
        mcp_buf_cleanup(&b);
        return usage_error("%s", st == MCP_ERR_NOMEM ? "out of memory" : msg);
    }
    c->params = mcp_buf_take(&b, NULL);
    return CLI_EXIT_OK;
}

/* ---- connecting and running ---------------------------------------------------------- */

static mcp_status connect_server(cli *c, mcp_client **out, mcp_error *err)
{
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "mcp-cli";
    o.version = MCP_VERSION_STRING;
    o.protocol_version = c->protocol;
    /* --task: legacy sessions declare the tasks extension at initialize
     * (2026-07-28 requests declare it per call). */
    o.capabilities = c->task ? "{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
                             : "{\"elicitation\":{}}";
    o.timeout_ms = c->timeout_ms;
    o.connect_timeout_ms = c->timeout_ms;
    /* A silent server/discover probe means legacy after 5 s; never wait longer than asked. */
    if (c->timeout_ms && c->timeout_ms < 5000)
        o.discover_timeout_ms = c->timeout_ms;
    if (c->discover_timeout_ms)
        o.discover_timeout_ms = c->discover_timeout_ms;
    o.on_input = on_input;
    o.log = on_log;
    o.user_data = c;
    o.transcript_path = c->transcript;
    if (c->url) {
        mcp_http_client_opts h;
        memset(&h, 0, sizeof h);
        h.url = c->url;
        h.headers = c->nheaders ? c->headers : NULL;
        h.bearer_token = c->token;
        mcp_oauth_opts oa;
        memset(&oa, 0, sizeof oa);
        if (c->oauth) {
            oa.grant = c->client_credentials ? MCP_OAUTH_CLIENT_CREDENTIALS : MCP_OAUTH_AUTHORIZATION_CODE;
            oa.client_id = c->client_id;
            oa.client_secret = c->client_secret;
            oa.client_metadata_url = c->client_metadata_url;
            oa.client_name = "mcp-cli";
            oa.scope = c->scope;
            if (!c->client_credentials) {
                oa.redirect_uri = c->redirect.uri;
                oa.authorize = cli_authorize;
                oa.user_data = &c->redirect;
            }
            h.oauth = &oa;
        }
        return mcp_client_connect_http(out, &o, &h, err);
    }
    mcp_stdio_client_opts so;
    memset(&so, 0, sizeof so);
    so.argv = (const char *const *)c->server_argv;
    so.stderr_mode = c->quiet ? MCP_STDERR_DISCARD : MCP_STDERR_CAPTURE;
    return mcp_client_connect_stdio(out, &o, &so, err);
}

/* The handshake, for `discover`: what was negotiated, and the result it came from. */
static int run_discover(cli *c, mcp_client *mc)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "protocolVersion");
    mcp_jw_string(&w, mcp_client_protocol_version(mc));
    mcp_jw_key(&w, "modern");
    mcp_jw_bool(&w, mcp_client_is_modern(mc));
    mcp_jw_key(&w, "serverInfo");
    mcp_jw_value(&w, mcp_client_server_info(mc)); /* null when the server sent none */
    mcp_jw_key(&w, "capabilities");
    mcp_jw_value(&w, mcp_client_server_capabilities(mc));
    if (mcp_client_instructions(mc)) {
        mcp_jw_key(&w, "instructions");
        mcp_jw_string(&w, mcp_client_instructions(mc));
    }
    mcp_jw_key(&w, "result");
    mcp_jw_value(&w, mcp_client_handshake_result(mc));
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    int rc = st == MCP_OK && print_text(c, b.data, b.len) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    if (st != MCP_OK)
        fprintf(stderr, "mcp-cli: cannot write the handshake: %s\n", mcp_status_str(st));
    mcp_buf_cleanup(&b);
    return rc;
}

/* The ref object of `complete`. NULL on allocation failure. */
static char *completion_ref(const cli *c)
{
    int prompt = strcmp(c->words[0], "prompt") == 0;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, prompt ? "ref/prompt" : "ref/resource");
    mcp_jw_key(&w, prompt ? "name" : "uri");
    mcp_jw_string(&w, c->words[1]);
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

static int run_tools(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_list_tools(mc, &r, &err);
    return outcome(c, "tools/list", st, r, &err);
}

/* --task: the task's status on stderr as it changes. */
static void task_note(const char *id, const char *status, const char *message, void *ud)
{
    cli *c = ud;
    if (!c->quiet)
        fprintf(stderr, "mcp-cli: task %s %s%s%s\n", id, status, message ? ": " : "", message ? message : "");
}

static int run_call(cli *c, mcp_client *mc)
{
    mcp_request_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_progress = progress_note;
    ro.user_data = c;
    ro.progress_resets_timeout = !c->task; /* a task's wait is bounded by --timeout as a whole */
    ro.as_task = c->task;
    ro.on_task = task_note;
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_call_tool(mc, c->words[0], c->params, &ro, &r, &err);
    return outcome(c, "tools/call", st, r, &err);
}

static int run_resources(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_list_resources(mc, &r, &err);
    return outcome(c, "resources/list", st, r, &err);
}

static int run_templates(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_list_resource_templates(mc, &r, &err);
    return outcome(c, "resources/templates/list", st, r, &err);
}

static int run_read(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_read_resource(mc, c->words[0], &r, &err);
    return outcome(c, "resources/read", st, r, &err);
}

static int run_prompts(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_list_prompts(mc, &r, &err);
    return outcome(c, "prompts/list", st, r, &err);
}

static int run_prompt(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_get_prompt(mc, c->words[0], c->params, &r, &err);
    return outcome(c, "prompts/get", st, r, &err);
}

static int run_complete(cli *c, mcp_client *mc)
{
    char *ref = completion_ref(c);
    if (!ref) {
        fprintf(stderr, "mcp-cli: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_complete(mc, ref, c->words[2], c->words[3], c->params, &r, &err);
    mcp_free(ref);
    return outcome(c, "completion/complete", st, r, &err);
}

/* Through mcp_client_request rather than mcp_client_ping, so an error response keeps its data. */
static int run_ping(cli *c, mcp_client *mc)
{
    mcp_response *r = NULL;
    mcp_error err;
    mcp_status st = mcp_client_request(mc, "ping", NULL, NULL, &r, &err);
    return outcome(c, "ping", st, r, &err);
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    /* Each word is at most one header or one command word: argc bounds both lists. */
    c.headers = calloc((size_t)argc + 1, sizeof *c.headers);
    c.words = calloc((size_t)argc + 1, sizeof *c.words);
    int rc;
    if (!c.headers || !c.words) {
        fprintf(stderr, "mcp-cli: out of memory\n");
        rc = CLI_EXIT_FAILURE;
    } else {
        rc = parse_args(&c, argc, argv);
        if (rc == CLI_EXIT_OK)
            rc = prepare(&c);
    }
    c.redirect.fd = -1;
    if (rc == CLI_EXIT_OK && c.oauth && !c.client_credentials) {
        /* The browser's way back is ready before anything is sent. */
        char msg[200];
        c.redirect.wait_s = BROWSER_WAIT_S;
        if (cli_redirect_init(&c.redirect, c.redirect_uri, msg, sizeof msg) != 0)
            rc = usage_error("%s", msg);
    }
    if (rc == CLI_EXIT_OK) {
        mcp_client *mc = NULL;
        mcp_error err;
        mcp_error_clear(&err);
        mcp_status st = connect_server(&c, &mc, &err);
        if (st != MCP_OK) {
            failure(&c, "cannot connect", &err);
            rc = CLI_EXIT_FAILURE;
        } else {
            rc = c.cmd->run(&c, mc);
            mcp_client_close(mc);
        }
        show_kept_lines(&c, rc != CLI_EXIT_OK);
    } else if (rc < 0) {
        rc = CLI_EXIT_OK; /* --help or --version */
    }
    cli_redirect_close(&c.redirect);
    for (size_t i = 0; i < STDERR_LINES; i++)
        free(c.lines[i]);
    mcp_json_doc_free(c.elicit);
    mcp_free(c.params);
    free(c.headers);
    free(c.words);
    pthread_mutex_destroy(&c.mu);
    return rc;
}
