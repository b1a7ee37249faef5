/*
 * mcp-server-conformance: everything the official MCP conformance suite
 * asks a server for (tools, resources, prompts, completion, logging,
 * progress, elicitation, sampling, roots, and the 2026-07-28 input-required
 * family), built only with libmcp's public API. It is also the most
 * complete example of that API: each tool below is small and shows one
 * thing.
 *
 * usage: mcp-server-conformance [--http [HOST:]PORT [--legacy-sse]] [--transcript FILE]
 */
#include <mcp/mcp.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A 1x1 PNG and a tiny WAV, the suite's reference data. */
static const char IMG[] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
static const char WAV[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Decodes base64 (the constants above) into a static buffer. */
static size_t b64decode(const char *in, unsigned char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (; *in && *in != '='; in++) {
        const char *p = strchr(tab, *in);
        acc = (acc << 6) | (unsigned)(p - tab);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

static unsigned char g_img[128], g_wav[128];
static size_t g_img_len, g_wav_len;

/* ---- content tools --------------------------------------------------------- */

static mcp_status simple_text(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_text(c, "This is a simple text response for testing.", NULL);
}

/* Echoes `region`, which the client also sends as the Mcp-Param-Region header. */
static mcp_status header_param(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    const char *region = mcp_json_str(mcp_json_get(a, "region"), NULL);
    return mcp_call_textf(c, "region: %s", region ? region : "");
}

static mcp_status image_content(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_image(c, g_img, g_img_len, "image/png", NULL);
}

static mcp_status audio_content(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_audio(c, g_wav, g_wav_len, "audio/wav", NULL);
}

static mcp_status embedded_resource(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_resource_text(c, "test://embedded-resource", "text/plain",
                                  "This is an embedded resource content.", NULL);
}

static mcp_status multiple_content(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_status st;
    if ((st = mcp_call_text(c, "Multiple content types test:", NULL)) ||
        (st = mcp_call_image(c, g_img, g_img_len, "image/png", NULL)))
        return st;
    return mcp_call_resource_text(c, "test://mixed-content-resource", "application/json",
                                  "{\"test\":\"data\",\"value\":123}", NULL);
}

static mcp_status with_logging(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_call_log(c, MCP_LOG_INFO, NULL, "Tool execution started");
    sleep_ms(50);
    mcp_call_log(c, MCP_LOG_INFO, NULL, "Tool processing data");
    sleep_ms(50);
    mcp_call_log(c, MCP_LOG_INFO, NULL, "Tool execution completed");
    return mcp_call_text(c, "Tool with logging executed successfully", NULL);
}

static mcp_status with_progress(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    for (int step = 0; step <= 100; step += 50) {
        char msg[64];
        snprintf(msg, sizeof msg, "Completed step %d of 100", step);
        mcp_call_progress(c, step, 100, msg);
        if (step < 100)
            sleep_ms(50);
    }
    /* The result names the token it reported progress for. */
    const mcp_json *token = mcp_json_get(mcp_call_meta(c), "progressToken");
    if (mcp_json_typeof(token) == MCP_JSON_STRING)
        return mcp_call_text(c, mcp_json_str(token, NULL), NULL);
    return mcp_call_textf(c, "%lld", (long long)mcp_json_int(token));
}

static mcp_status error_handling(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_error(c, "This tool intentionally returns an error for testing");
}

/* SEP-1699: the server closes the stream mid-call; the client resumes with GET. */
static mcp_status reconnection(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_call_close_stream(c);
    sleep_ms(100);
    return mcp_call_text(c, "Reconnection test completed successfully. If you received this, the client properly "
                            "reconnected after stream closure.", NULL);
}

/* ---- asking the client (both eras) ------------------------------------------ */

/* Writes `v` as compact JSON into `out` (for echoing answers back). */
static const char *to_json(const mcp_json *v, mcp_buf *out)
{
    mcp_jw w;
    mcp_buf_init(out, 0);
    mcp_jw_init(&w, out);
    mcp_jw_value(&w, v ? v : NULL);
    return mcp_jw_finish(&w) == MCP_OK ? out->data : "null";
}

static mcp_status sampling(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    mcp_buf p;
    mcp_buf_init(&p, 0);
    mcp_jw w;
    mcp_jw_init(&w, &p);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "messages");
    mcp_jw_array_begin(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "role");
    mcp_jw_string(&w, "user");
    mcp_jw_key(&w, "content");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, "text");
    mcp_jw_key(&w, "text");
    mcp_jw_value(&w, mcp_json_get(a, "prompt"));
    mcp_jw_object_end(&w);
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "maxTokens");
    mcp_jw_int(&w, 100);
    mcp_jw_object_end(&w);
    const mcp_json *answer = NULL;
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp_call_sample(c, "sample", p.data, &answer);
    mcp_buf_cleanup(&p);
    if (st == MCP_ERR_INPUT_REQUIRED)
        return st;
    if (st)
        return mcp_call_textf(c, "Sampling not supported or error: %s", mcp_status_str(st));
    const char *text = mcp_json_str(mcp_json_get(mcp_json_get(answer, "content"), "text"), NULL);
    return mcp_call_textf(c, "LLM response: %s", text ? text : "");
}

static mcp_status elicitation_result(mcp_call *c, mcp_status st, const mcp_json *answer, const char *what)
{
    if (st == MCP_ERR_INPUT_REQUIRED)
        return st;
    if (st)
        return mcp_call_textf(c, "Elicitation not supported or error: %s", mcp_status_str(st));
    mcp_buf j;
    const char *content = to_json(mcp_json_get(answer, "content"), &j);
    const char *action = mcp_json_str(mcp_json_get(answer, "action"), NULL);
    st = mcp_call_textf(c, "%s: action=%s, content=%s", what, action ? action : "?",
                        mcp_json_get(answer, "content") ? content : "{}");
    mcp_buf_cleanup(&j);
    return st;
}

static mcp_status elicitation(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    const char *message = mcp_json_str(mcp_json_get(a, "message"), NULL);
    const mcp_json *answer = NULL;
    mcp_status st = mcp_call_elicit(c, "response", message ? message : "Please respond",
                                    "{\"type\":\"object\",\"properties\":{\"response\":{\"type\":\"string\","
                                    "\"description\":\"User's response\"}},\"required\":[\"response\"]}",
                                    &answer);
    return elicitation_result(c, st, answer, "User response");
}

static mcp_status sep1034_defaults(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer = NULL;
    mcp_status st = mcp_call_elicit(
        c, "defaults", "Please review and update the form fields with defaults",
        "{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
        "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
        "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
        "\"status\":{\"type\":\"string\",\"description\":\"User status\",\"enum\":[\"active\",\"inactive\",\"pending\"],"
        "\"default\":\"active\"},"
        "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\",\"default\":true}},"
        "\"required\":[]}",
        &answer);
    return elicitation_result(c, st, answer, "Elicitation completed");
}

static mcp_status sep1330_enums(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer = NULL;
    mcp_status st = mcp_call_elicit(
        c, "enums", "Please select options from the enum fields",
        "{\"type\":\"object\",\"properties\":{"
        "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Select one option\","
        "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
        "\"titledSingle\":{\"type\":\"string\",\"description\":\"Select one option with titles\",\"oneOf\":["
        "{\"const\":\"value1\",\"title\":\"First Option\"},{\"const\":\"value2\",\"title\":\"Second Option\"},"
        "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
        "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Select one option (legacy)\","
        "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
        "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options\",\"minItems\":1,"
        "\"maxItems\":3,\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
        "\"titledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options with titles\","
        "\"minItems\":1,\"maxItems\":3,\"items\":{\"anyOf\":[{\"const\":\"value1\",\"title\":\"First Choice\"},"
        "{\"const\":\"value2\",\"title\":\"Second Choice\"},{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
        "\"required\":[]}",
        &answer);
    return elicitation_result(c, st, answer, "Elicitation completed");
}

static mcp_status schema_2020_12(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    mcp_buf j;
    mcp_status st = mcp_call_textf(c, "JSON Schema 2020-12 tool called with: %s", to_json(a, &j));
    mcp_buf_cleanup(&j);
    return st;
}

/* ---- 2026-07-28 input-required family ---------------------------------------- */

static const char NAME_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}";
static const char OK_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}";

static const char *content_str(const mcp_json *answer, const char *key)
{
    const char *s = mcp_json_str(mcp_json_get(mcp_json_get(answer, "content"), key), NULL);
    return s ? s : "unknown";
}

static mcp_status missing_capability(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_status st = mcp_call_require(c, "sampling");
    return st ? st : mcp_call_text(c, "Success", NULL);
}

static mcp_status ir_elicitation(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_call_elicit(c, "user_name", "What is your name?", NAME_SCHEMA, &answer);
    if (st)
        return st;
    return mcp_call_textf(c, "Hello, %s!", content_str(answer, "name"));
}

static const char CAPITAL_QUESTION[] = "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                                       "\"text\":\"What is the capital of France?\"}}],\"maxTokens\":100}";

static mcp_status ir_sampling(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_call_sample(c, "sample_request", CAPITAL_QUESTION, &answer);
    if (st)
        return st;
    const char *text = mcp_json_str(mcp_json_get(mcp_json_get(answer, "content"), "text"), NULL);
    return mcp_call_textf(c, "Sampling result: %s", text ? text : "");
}

static mcp_status ir_roots(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_call_list_roots(c, "roots_request", &answer);
    if (st)
        return st;
    return mcp_call_textf(c, "Found %zu root(s)", mcp_json_len(mcp_json_get(answer, "roots")));
}

static mcp_status ir_request_state(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    /* The library signs and checks requestState; this state just proves the round trip. */
    if (!mcp_call_state(c, NULL))
        mcp_call_set_state(c, "request-state", 13);
    mcp_status st = mcp_call_elicit(c, "confirm", "Please confirm", OK_SCHEMA, &answer);
    if (st)
        return st;
    size_t n;
    const char *state = mcp_call_state(c, &n);
    if (mcp_json_bool(mcp_json_get(mcp_json_get(answer, "content"), "ok")) && state && n == 13 &&
        memcmp(state, "request-state", 13) == 0)
        return mcp_call_text(c, "state-ok: requestState validated", NULL);
    return mcp_call_error(c, "requestState did not come back");
}

static mcp_status ir_multiple(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    /* Ask everything first, so one round carries all three questions. */
    const mcp_json *name = NULL, *greeting = NULL, *roots = NULL;
    mcp_status s1 = mcp_call_elicit(c, "user_name", "What is your name?", NAME_SCHEMA, &name);
    mcp_status s2 = mcp_call_sample(c, "greeting",
                                    "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                                    "\"text\":\"Generate a greeting\"}}],\"maxTokens\":50}",
                                    &greeting);
    mcp_status s3 = mcp_call_list_roots(c, "client_roots", &roots);
    if (s1 || s2 || s3)
        return s1 ? s1 : s2 ? s2 : s3;
    const char *g = mcp_json_str(mcp_json_get(mcp_json_get(greeting, "content"), "text"), NULL);
    return mcp_call_textf(c, "Name: %s; Greeting: %s; Roots: %zu", content_str(name, "name"), g ? g : "",
                          mcp_json_len(mcp_json_get(roots, "roots")));
}

static mcp_status ir_multi_round(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *name, *color;
    mcp_status st = mcp_call_elicit(c, "step1", "Step 1: What is your name?", NAME_SCHEMA, &name);
    if (st)
        return st;
    st = mcp_call_elicit(c, "step2", "Step 2: What is your favorite color?",
                         "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},\"required\":[\"color\"]}",
                         &color);
    if (st)
        return st;
    return mcp_call_textf(c, "Multi-round complete for %s who likes %s", content_str(name, "name"),
                          content_str(color, "color"));
}

static mcp_status ir_tampered(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_call_elicit(c, "confirm", "Please confirm", OK_SCHEMA, &answer);
    if (st)
        return st;
    return mcp_call_text(c, "integrity-ok: state verified", NULL);
}

static mcp_status ir_capabilities(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    /* Ask only what the client can answer; without either, finish anyway. */
    const mcp_json *e = NULL, *s = NULL;
    mcp_status se = mcp_call_elicit(c, "elicit_input", "Elicitation input",
                                    "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}},"
                                    "\"required\":[\"value\"]}",
                                    &e);
    mcp_status ss = mcp_call_sample(c, "sample_input",
                                    "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                                    "\"text\":\"Sample request\"}}],\"maxTokens\":50}",
                                    &s);
    if (se == MCP_ERR_INPUT_REQUIRED || ss == MCP_ERR_INPUT_REQUIRED)
        return MCP_ERR_INPUT_REQUIRED;
    if (se == MCP_ERR_UNSUPPORTED && ss == MCP_ERR_UNSUPPORTED)
        return mcp_call_text(c, "No supported capabilities declared", NULL);
    return mcp_call_textf(c, "capabilities-ok: received %s%s%s", e ? "elicit_input" : "", e && s ? "," : "",
                          s ? "sample_input" : "");
}

static mcp_status streaming(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_call_progress(c, 1, 2, "Streaming");
    return mcp_call_text(c, "Streaming complete", NULL);
}

static mcp_status logging_tool(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_call_log(c, MCP_LOG_INFO, "conformance", "Logging evaluated");
    return mcp_call_text(c, "Logging evaluated", NULL);
}

static mcp_server *g_srv;

static mcp_status trigger_tools(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_server_list_changed(g_srv, "tools");
    return mcp_call_text(c, "Mutation triggered", NULL);
}

static mcp_status trigger_prompts(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_server_list_changed(g_srv, "prompts");
    return mcp_call_text(c, "Mutation triggered", NULL);
}

static mcp_status dynamic_tool(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_call_text(c, "This tool was added dynamically", NULL);
}

/* ---- resources, prompts, completion ------------------------------------------- */

static mcp_status template_read(mcp_read *rd, const char *uri, const mcp_json *vars, void *u)
{
    (void)u;
    const char *id = mcp_json_str(mcp_json_get(vars, "id"), NULL);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "id");
    mcp_jw_string(&w, id);
    mcp_jw_key(&w, "templateTest");
    mcp_jw_bool(&w, 1);
    mcp_jw_key(&w, "data");
    char data[300];
    snprintf(data, sizeof data, "Data for ID: %s", id);
    mcp_jw_string(&w, data);
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp_read_text(rd, uri, "application/json", b.data);
    mcp_buf_cleanup(&b);
    return st;
}

static mcp_status complete_any(mcp_completion *cmp, const char *arg, const char *value, const mcp_json *ctx, void *u)
{
    (void)arg;
    (void)ctx;
    (void)u;
    static const char *cands[] = {"value1", "value2", "valid", "123", "456", NULL};
    for (int i = 0; cands[i]; i++)
        if (strncmp(cands[i], value, strlen(value)) == 0)
            mcp_completion_add(cmp, cands[i]);
    return MCP_OK;
}

static mcp_status simple_prompt(mcp_prompt *p, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    return mcp_prompt_text(p, MCP_ROLE_USER, "This is a simple prompt for testing.");
}

static mcp_status args_prompt(mcp_prompt *p, const mcp_json *a, void *u)
{
    (void)u;
    char text[600];
    snprintf(text, sizeof text, "Prompt with arguments: arg1='%s', arg2='%s'",
             mcp_json_str(mcp_json_get(a, "arg1"), NULL), mcp_json_str(mcp_json_get(a, "arg2"), NULL));
    return mcp_prompt_text(p, MCP_ROLE_USER, text);
}

static mcp_status resource_prompt(mcp_prompt *p, const mcp_json *a, void *u)
{
    (void)u;
    mcp_status st = mcp_prompt_resource_text(p, MCP_ROLE_USER, mcp_json_str(mcp_json_get(a, "resourceUri"), NULL),
                                             "text/plain", "Embedded resource content for testing.");
    return st ? st : mcp_prompt_text(p, MCP_ROLE_USER, "Please process the embedded resource above.");
}

static mcp_status image_prompt(mcp_prompt *p, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    mcp_status st = mcp_prompt_image(p, MCP_ROLE_USER, g_img, g_img_len, "image/png");
    return st ? st : mcp_prompt_text(p, MCP_ROLE_USER, "Please analyze the image above.");
}

static mcp_status input_prompt(mcp_prompt *p, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_prompt_elicit(p, "user_context", "What context should the prompt use?",
                                      "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},"
                                      "\"required\":[\"context\"]}",
                                      &answer);
    if (st == MCP_ERR_UNSUPPORTED) /* legacy clients: no round trips in prompts */
        return mcp_prompt_text(p, MCP_ROLE_USER, "Prompt with context: (none)");
    if (st)
        return st;
    char text[600];
    snprintf(text, sizeof text, "Prompt with context: %s", content_str(answer, "context"));
    return mcp_prompt_text(p, MCP_ROLE_USER, text);
}

/* ---- tasks (the io.modelcontextprotocol/tasks extension) ------------------------ */

static mcp_status greet(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    const char *name = mcp_json_str(mcp_json_get(a, "name"), NULL);
    return mcp_call_textf(c, "Hello, %s!", name ? name : "World");
}

/* Sleeps `seconds` in small steps, reporting progress, and stops when cancelled. */
static mcp_status slow_compute(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    double secs = mcp_json_number(mcp_json_get(a, "seconds"));
    const char *label = mcp_json_str(mcp_json_get(a, "label"), NULL);
    long steps = secs > 0 ? (long)(secs * 20) : 0;
    for (long i = 0; i < steps; i++) {
        if (mcp_call_is_cancelled(c))
            return MCP_ERR_CANCELLED;
        sleep_ms(50);
        if (i % 20 == 19)
            mcp_call_progress(c, (double)(i + 1), (double)steps, "computing");
    }
    return mcp_call_textf(c, "Computed %s after %g seconds", label ? label : "result", secs);
}

static mcp_status failing_job(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    sleep_ms(300);
    return mcp_call_error(c, "The job failed: the input could not be processed");
}

static mcp_status protocol_error_job(mcp_call *c, const mcp_json *a, void *u)
{
    (void)c;
    (void)a;
    (void)u;
    sleep_ms(300);
    return MCP_ERR_INTERNAL; /* no result at all: -32603, a failed task */
}

static const char CONFIRM_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\"}},\"required\":[\"confirm\"]}";

static mcp_status confirm_delete(mcp_call *c, const mcp_json *a, void *u)
{
    (void)u;
    const char *file = mcp_json_str(mcp_json_get(a, "filename"), NULL);
    const mcp_json *answer;
    mcp_status st = mcp_call_elicit(c, "confirm", "Delete the file?", CONFIRM_SCHEMA, &answer);
    if (st)
        return st;
    const char *action = mcp_json_str(mcp_json_get(answer, "action"), NULL);
    if (!action || strcmp(action, "accept") != 0)
        return mcp_call_textf(c, "Kept %s", file ? file : "the file");
    return mcp_call_textf(c, "Deleted %s", file ? file : "the file");
}

static mcp_status multi_input(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *name = NULL, *ok = NULL;
    mcp_status s1 = mcp_call_elicit(c, "name", "What is your name?", NAME_SCHEMA, &name);
    mcp_status s2 = mcp_call_elicit(c, "confirm", "Go ahead?", CONFIRM_SCHEMA, &ok);
    if (s1 || s2)
        return s1 ? s1 : s2;
    return mcp_call_textf(c, "Name: %s; confirmed", content_str(name, "name"));
}

/* MRTR first (the name), then the work runs as a task. */
static mcp_status tool_with_task(mcp_call *c, const mcp_json *a, void *u)
{
    (void)a;
    (void)u;
    const mcp_json *answer;
    mcp_status st = mcp_call_elicit(c, "user_name", "What is your name?", NAME_SCHEMA, &answer);
    if (st)
        return st;
    sleep_ms(200);
    return mcp_call_textf(c, "Hello, %s! (from a task)", content_str(answer, "name"));
}

/* ---- registration -------------------------------------------------------------- */

typedef struct tool_spec {
    const char *name;
    const char *description;
    const char *schema;
    mcp_tool_fn fn;
    unsigned flags;
} tool_spec;

static const char EMPTY[] = "{\"type\":\"object\",\"properties\":{}}";

static const tool_spec g_tools[] = {
    {"test_simple_text", "Tests simple text content response", EMPTY, simple_text, 0},
    {"test_image_content", "Tests image content response", EMPTY, image_content, 0},
    {"test_audio_content", "Tests audio content response", EMPTY, audio_content, 0},
    {"test_embedded_resource", "Tests embedded resource content response", EMPTY, embedded_resource, 0},
    {"test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", EMPTY,
     multiple_content, 0},
    {"test_tool_with_logging", "Tests tool that emits log messages during execution", EMPTY, with_logging, 0},
    {"test_tool_with_progress", "Tests tool that reports progress notifications", EMPTY, with_progress, 0},
    {"test_error_handling", "Tests error response handling", EMPTY, error_handling, 0},
    {"test_reconnection",
     "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and "
     "send the result after client reconnects.",
     EMPTY, reconnection, 0},
    {"test_sampling", "Tests server-initiated sampling (LLM completion request)",
     "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\",\"description\":\"The prompt to send to "
     "the LLM\"}},\"required\":[\"prompt\"]}",
     sampling, 0},
    {"test_elicitation", "Tests server-initiated elicitation (user input request)",
     "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\",\"description\":\"The message to show "
     "the user\"}},\"required\":[\"message\"]}",
     elicitation, 0},
    {"test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", EMPTY,
     sep1034_defaults, 0},
    {"test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", EMPTY,
     sep1330_enums, 0},
    {"json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
     "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\",\"$defs\":{\"address\":{"
     "\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{"
     "\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/"
     "address\"},\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},\"phone\":{\"type\":"
     "\"string\"},\"email\":{\"type\":\"string\"}},\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":"
     "[\"email\"]}]}],\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},\"required\":["
     "\"contactMethod\"]},\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
     "\"additionalProperties\":false}",
     schema_2020_12, 0},
    {"test_header_param", "Echoes a parameter the client also sends as the Mcp-Param-Region header (SEP-2243)",
     "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"}},"
     "\"required\":[\"region\"]}",
     header_param, 0},
    {"test_missing_capability", "Test tool requiring sampling", EMPTY, missing_capability, 0},
    {"test_input_required_result_elicitation", "MRTR: returns InputRequiredResult with elicitation request", EMPTY,
     ir_elicitation, 0},
    {"test_input_required_result_sampling", "MRTR: returns InputRequiredResult with sampling request", EMPTY,
     ir_sampling, 0},
    {"test_input_required_result_list_roots", "MRTR: returns InputRequiredResult with roots/list request", EMPTY,
     ir_roots, 0},
    {"test_input_required_result_request_state", "MRTR: returns InputRequiredResult with requestState", EMPTY,
     ir_request_state, 0},
    {"test_input_required_result_multiple_inputs", "MRTR: returns InputRequiredResult with multiple input requests",
     EMPTY, ir_multiple, 0},
    {"test_input_required_result_multi_round", "MRTR: multi-round InputRequiredResult workflow", EMPTY,
     ir_multi_round, 0},
    {"test_input_required_result_tampered_state", "MRTR: HMAC-signed requestState integrity test", EMPTY,
     ir_tampered, 0},
    {"test_input_required_result_capabilities", "MRTR: respects client capabilities in inputRequests", EMPTY,
     ir_capabilities, 0},
    {"test_streaming_elicitation", "Diagnostic tool validating response progress streams", EMPTY, streaming, 0},
    {"test_logging_tool", "Diagnostic logging validator tool", EMPTY, logging_tool, 0},
    {"test_trigger_tool_change", "Triggers a tools list_changed notification", EMPTY, trigger_tools,
     MCP_TOOL_UNLISTED},
    {"test_trigger_prompt_change", "Triggers a prompts list_changed notification", EMPTY, trigger_prompts,
     MCP_TOOL_UNLISTED},
    {"greet", "Says hello (never a task)", NAME_SCHEMA, greet, 0},
    {"slow_compute", "Sleeps `seconds`, then answers; runs as a task when the client allows",
     "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\",\"minimum\":0,\"maximum\":600},"
     "\"label\":{\"type\":\"string\"}},\"required\":[\"seconds\"]}",
     slow_compute, 0},
    {"failing_job", "Fails as a tool (isError) after a moment; a task only", EMPTY, failing_job, 0},
    {"protocol_error_job", "Fails without a result (-32603) after a moment", EMPTY, protocol_error_job, 0},
    {"confirm_delete", "Asks for confirmation, then deletes (pretends to)",
     "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\"}}}", confirm_delete, 0},
    {"multi_input", "Asks two questions at once", EMPTY, multi_input, 0},
    {"test_tool_with_task", "Asks for a name (MRTR), then works as a task", EMPTY, tool_with_task,
     MCP_TOOL_TASK_AFTER_INPUT},
};

/* Task support of the task tools (the others are never tasks). */
static mcp_task_support task_support(const char *name)
{
    static const struct {
        const char *name;
        mcp_task_support support;
    } tasks[] = {
        {"slow_compute", MCP_TASK_OPTIONAL},       {"failing_job", MCP_TASK_REQUIRED},
        {"protocol_error_job", MCP_TASK_OPTIONAL}, {"confirm_delete", MCP_TASK_OPTIONAL},
        {"multi_input", MCP_TASK_OPTIONAL},        {"test_tool_with_task", MCP_TASK_REQUIRED},
    };
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        if (strcmp(tasks[i].name, name) == 0)
            return tasks[i].support;
    return MCP_TASK_FORBIDDEN;
}

static mcp_status add_resources(mcp_server *srv, mcp_error *err)
{
    mcp_resource_def r;
    mcp_status st;
    memset(&r, 0, sizeof r);
    r.size = -1;
    r.uri = "test://static-text";
    r.name = "static-text";
    r.title = "Static Text Resource";
    r.description = "A static text resource for testing";
    r.mime_type = "text/plain";
    r.text = "This is the content of the static text resource.";
    if ((st = mcp_server_add_resource(srv, &r, err)))
        return st;
    r.uri = "test://static-binary";
    r.name = "static-binary";
    r.title = "Static Binary Resource";
    r.description = "A static binary resource (image) for testing";
    r.mime_type = "image/png";
    r.text = NULL;
    r.blob = g_img;
    r.blob_len = g_img_len;
    if ((st = mcp_server_add_resource(srv, &r, err)))
        return st;
    r.uri = "test://watched-resource";
    r.name = "watched-resource";
    r.title = "Watched Resource";
    r.description = "A resource that auto-updates every 3 seconds";
    r.mime_type = "text/plain";
    r.blob = NULL;
    r.text = "Watched resource content";
    r.flags = MCP_RESOURCE_SUBSCRIBABLE;
    if ((st = mcp_server_add_resource(srv, &r, err)))
        return st;
    r.uri = "test://stateless-static-text";
    r.name = "Stateless Static Text";
    r.title = NULL;
    r.description = "A static text resource served on the draft path";
    r.text = "Static text content from the stateless draft path.";
    r.flags = 0;
    if ((st = mcp_server_add_resource(srv, &r, err)))
        return st;
    memset(&r, 0, sizeof r);
    r.size = -1;
    r.uri_template = "test://template/{id}/data";
    r.name = "template";
    r.title = "Resource Template";
    r.description = "A resource template with parameter substitution";
    r.mime_type = "application/json";
    r.handler = template_read;
    r.complete = complete_any;
    return mcp_server_add_resource(srv, &r, err);
}

static mcp_status add_prompts(mcp_server *srv, mcp_error *err)
{
    static const mcp_prompt_arg args2[] = {{"arg1", NULL, "First test argument", 1},
                                           {"arg2", NULL, "Second test argument", 1}};
    static const mcp_prompt_arg uri_arg[] = {{"resourceUri", NULL, "URI of the resource to embed", 1}};
    mcp_prompt_def p;
    mcp_status st;
    memset(&p, 0, sizeof p);
    p.name = "test_simple_prompt";
    p.title = "Simple Test Prompt";
    p.description = "A simple prompt without arguments";
    p.handler = simple_prompt;
    if ((st = mcp_server_add_prompt(srv, &p, err)))
        return st;
    p.name = "test_prompt_with_arguments";
    p.title = "Prompt With Arguments";
    p.description = "A prompt with required arguments";
    p.args = args2;
    p.nargs = 2;
    p.handler = args_prompt;
    p.complete = complete_any;
    if ((st = mcp_server_add_prompt(srv, &p, err)))
        return st;
    p.name = "test_prompt_with_embedded_resource";
    p.title = "Prompt With Embedded Resource";
    p.description = "A prompt that includes an embedded resource";
    p.args = uri_arg;
    p.nargs = 1;
    p.handler = resource_prompt;
    p.complete = NULL;
    if ((st = mcp_server_add_prompt(srv, &p, err)))
        return st;
    p.name = "test_prompt_with_image";
    p.title = "Prompt With Image";
    p.description = "A prompt that includes image content";
    p.args = NULL;
    p.nargs = 0;
    p.handler = image_prompt;
    if ((st = mcp_server_add_prompt(srv, &p, err)))
        return st;
    p.name = "test_input_required_result_prompt";
    p.title = NULL;
    p.description = "MRTR: prompt that requires elicitation input";
    p.handler = input_prompt;
    return mcp_server_add_prompt(srv, &p, err);
}

/* Updates the watched resource every 3 s, and adds the dynamic tool after 2 s. */
static void *background(void *arg)
{
    mcp_server *srv = arg;
    sleep_ms(2000);
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "test_dynamic_tool";
    d.description = "A tool added 2 seconds after the server started";
    d.input_schema = EMPTY;
    d.handler = dynamic_tool;
    mcp_server_add_tool(srv, &d, NULL);
    for (;;) {
        sleep_ms(3000);
        mcp_server_resource_updated(srv, "test://watched-resource");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    /* SIGINT/SIGTERM are taken with sigwait(): block them before any thread
     * starts (the server's workers inherit the mask). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    mcp_server_opts o;
    memset(&o, 0, sizeof o);
    o.name = "mcp-conformance-test-server";
    o.version = "1.0.0";
    o.list_ttl_ms = 300000;
    const char *http = NULL;
    int legacy_sse = 0;
    mcp_auth_opts ao; /* --auth-* and --resource-url: bearer tokens over HTTP (docs/auth.md) */
    memset(&ao, 0, sizeof ao);
    int with_auth = 0;
    for (int i = 1; i < argc; i++) {
        int used = 0;
        mcp_status ast = mcp_auth_parse_arg(&ao, argv[i], i + 1 < argc ? argv[i + 1] : NULL, &used);
        if (ast == MCP_OK) {
            with_auth = 1;
            i += used - 1;
        } else if (ast == MCP_ERR_INVALID_ARG) {
            fprintf(stderr, "mcp-server-conformance: %s needs a value\n", argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--legacy-sse")) {
            legacy_sse = 1;
        } else if (!strcmp(argv[i], "--transcript") && i + 1 < argc) {
            o.transcript_path = argv[++i];
        } else if (!strcmp(argv[i], "--http") && i + 1 < argc) {
            http = argv[++i];
        } else {
            fprintf(stderr, "usage: mcp-server-conformance [--http [HOST:]PORT [--legacy-sse]] [--transcript FILE]\n"
                            "                              [auth options]\n" MCP_AUTH_ARGS_HELP);
            return 2;
        }
    }
    g_img_len = b64decode(IMG, g_img);
    g_wav_len = b64decode(WAV, g_wav);
    mcp_error err;
    if (mcp_server_new(&g_srv, &o, &err)) {
        fprintf(stderr, "mcp-server-conformance: %s\n", err.message);
        return 1;
    }
    for (size_t i = 0; i < sizeof g_tools / sizeof g_tools[0]; i++) {
        mcp_tool_def d;
        memset(&d, 0, sizeof d);
        d.name = g_tools[i].name;
        d.description = g_tools[i].description;
        d.input_schema = g_tools[i].schema;
        d.handler = g_tools[i].fn;
        d.flags = g_tools[i].flags;
        d.task_support = task_support(d.name);
        if (mcp_server_add_tool(g_srv, &d, &err)) {
            fprintf(stderr, "mcp-server-conformance: %s: %s\n", d.name, err.message);
            return 1;
        }
    }
    if (add_resources(g_srv, &err) || add_prompts(g_srv, &err)) {
        fprintf(stderr, "mcp-server-conformance: %s\n", err.message);
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, background, g_srv);
    pthread_detach(th);
    mcp_status st;
    if (http) {
        mcp_http_opts ho;
        memset(&ho, 0, sizeof ho);
        char host[256];
        if (mcp_http_parse_listen(http, &ho, host, sizeof host)) {
            fprintf(stderr, "mcp-server-conformance: --http takes [HOST:]PORT, not %s\n", http);
            return 2;
        }
        ho.retry_ms = 5000;
        ho.legacy_sse = legacy_sse;
        mcp_auth *auth = NULL;
        if (with_auth && mcp_auth_new(&auth, &ao, &err)) {
            fprintf(stderr, "mcp-server-conformance: authorization: %s\n", err.message);
            return 2;
        }
        ho.auth = auth;
        /* Like mcp_http_serve(), but the bound port is printed (port 0 picks one). */
        mcp_http_server *hs;
        st = mcp_http_server_start(&hs, g_srv, &ho, &err);
        if (st) {
            fprintf(stderr, "mcp-server-conformance: %s\n", err.message);
        } else {
            printf("listening on http://%s:%u/mcp\n", ho.host ? ho.host : "127.0.0.1", mcp_http_server_port(hs));
            fflush(stdout);
            int sig;
            sigwait(&set, &sig);
            mcp_http_server_stop(hs, 5000);
        }
        mcp_auth_free(auth);
    } else {
        st = mcp_stdio_serve(g_srv, NULL);
    }
    return st == MCP_OK ? 0 : 1;
}
