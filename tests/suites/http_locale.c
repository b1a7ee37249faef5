/*
 * Numbers in HTTP headers are read in the C locale whatever the embedder's
 * setlocale(): under a locale whose decimal point is a comma (de_DE), an
 * Mcp-Param-* header "1.5" still equals the argument 1.5. Uses an installed
 * comma-decimal locale, else builds de_DE.UTF-8 with localedef into a
 * temporary LOCPATH; skips (passes, saying so) when neither works.
 */
#include "transport/http_internal.h"
#include <mcp/mcp.h>

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_passed, g_failed;

#define CHECK(cond, what)                                \
    do {                                                 \
        if (cond) {                                      \
            g_passed++;                                  \
        } else {                                         \
            g_failed++;                                  \
            printf("FAIL line %d: %s\n", __LINE__, what); \
        }                                                \
    } while (0)

static int comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE", NULL};
    for (int i = 0; names[i]; i++)
        if (setlocale(LC_NUMERIC, names[i]) && strtod("1,5", NULL) == 1.5)
            return 1;
    static char dir[] = "/tmp/mcp-locale-XXXXXX";
    if (!mkdtemp(dir))
        return 0;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    int rc = system(cmd);
    setenv("LOCPATH", dir, 1);
    int ok = rc != -1 && setlocale(LC_NUMERIC, "de_DE.UTF-8") && strtod("1,5", NULL) == 1.5;
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("cannot remove %s\n", dir);
    return ok;
}

static int matches(const char *header, const char *json)
{
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, json, strlen(json), NULL, NULL))
        return -1;
    int r = mcp__http_header_matches(header, strlen(header), mcp_json_doc_root(d));
    mcp_json_doc_free(d);
    return r;
}

int main(void)
{
    if (!comma_locale()) {
        printf("http_locale: no comma-decimal locale available, skipped\nhttp_locale: 0 passed, 0 failed\n");
        return 0;
    }
    CHECK(matches("1.5", "1.5") == 1, "header 1.5 equals 1.5 under de_DE");
    CHECK(matches("-2.25e1", "-22.5") == 1, "header -2.25e1 equals -22.5");
    CHECK(matches("42", "42") == 1, "header 42 equals 42");
    CHECK(matches("1,5", "1.5") == 0, "header 1,5 is not 1.5");
    CHECK(matches("1.5", "2") == 0, "header 1.5 is not 2");
    setlocale(LC_NUMERIC, "C");
    printf("http_locale: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
