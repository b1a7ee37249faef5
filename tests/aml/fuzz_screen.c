/*
 * Fuzz target: the screening list readers and name matching
 * (apps/aml/screen) on bytes a list file or a screening query controls.
 * The first byte picks the reader:
 *   0  a name: normalisation, Double Metaphone of each token, and the two
 *      string distances between the two halves of the input (symmetric,
 *      within their ranges), birth-date and country parsing;
 *   1  an FtM entity's properties (JSON): the entity built from them has
 *      only non-empty names, within the hold's bounds;
 *   2  the screening CSV: every record becomes FtM properties that must
 *      parse back as a JSON object.
 * Anything out of bounds aborts (ASan and UBSan watch the rest).
 */
#include "screen/ftm.h"
#include "screen/screen.h"
#include "util/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *s, size_t n)
{
    aml_sc_name nm;
    aml_sc_normalize(s, n, &nm);
    if (nm.ntok < 0 || nm.ntok > AML_SC_MAX_TOKENS || strlen(nm.text) >= sizeof nm.text)
        abort();
    for (int k = 0; k < nm.ntok; k++) {
        if (nm.off[k] + nm.len[k] > strlen(nm.text))
            abort();
        uint32_t p = 0, a = 0;
        aml_sc_metaphone(nm.text + nm.off[k], nm.len[k], &p, &a);
        char code[8];
        aml_sc_code_text(p, code);
        if (strlen(code) > 4)
            abort();
    }
}

static void check_pair(const char *a, size_t na, const char *b, size_t nb)
{
    double j1 = aml_sc_jaro_winkler(a, na, b, nb), j2 = aml_sc_jaro_winkler(b, nb, a, na);
    if (!(j1 >= 0.0 && j1 <= 1.0) || j1 != j2)
        abort();
    int l1 = aml_sc_levenshtein(a, na, b, nb), l2 = aml_sc_levenshtein(b, nb, a, na);
    if (l1 != l2 || l1 < 0 || (size_t)l1 > (na > nb ? na : nb))
        abort();
}

static void fuzz_name(const char *s, size_t n)
{
    check_name(s, n);
    check_pair(s, n / 2, s + n / 2, n - n / 2);
    (void)aml_sc_parse_date(s, n);
    char cc[4];
    aml_sc_country_text(aml_sc_country(s, n), cc);
}

static void fuzz_ftm(const char *s, size_t n)
{
    mcp_json_doc *doc = NULL;
    if (mcp_json_parse(&doc, s, n, NULL, NULL) != MCP_OK)
        return;
    aml_sc_entity e = {0};
    aml_sc_hold h;
    if (aml_sc_entity_from_ftm(mcp_json_doc_root(doc), &e, &h) == 0) {
        if (e.nnames == 0 || e.nnames > AML_SC_HOLD_NAMES || e.ndates > AML_SC_HOLD_SMALL ||
            e.ncountries > AML_SC_HOLD_SMALL || e.nids > AML_SC_HOLD_SMALL)
            abort();
        for (size_t k = 0; k < e.nnames; k++)
            if (!e.names[k] || !e.names[k][0])
                abort();
    }
    mcp_json_doc_free(doc);
}

static void fuzz_csv(const char *s, size_t n)
{
    FILE *f = fmemopen((void *)s, n, "r");
    if (!f)
        return;
    aml_csv c;
    aml_err err = {{0}};
    int cols[AML_SC_CSV_NCOLS];
    if (aml_csv_open(&c, f) == 0) {
        if (aml_csv_next(&c, &err) == 1 && aml_sc_csv_columns(&c, cols) == 0) {
            while (aml_csv_next(&c, &err) == 1) {
                mcp_buf b;
                mcp_jw w;
                mcp_buf_init(&b, 0);
                mcp_jw_init(&w, &b);
                aml_sc_csv_props(&c, cols, &w);
                mcp_json_doc *doc = NULL;
                if (mcp_jw_finish(&w) == MCP_OK) {
                    if (mcp_json_parse(&doc, (const char *)b.data, b.len, NULL, NULL) != MCP_OK ||
                        mcp_json_typeof(mcp_json_doc_root(doc)) != MCP_JSON_OBJECT)
                        abort();
                    mcp_json_doc_free(doc);
                }
                mcp_buf_cleanup(&b);
            }
        }
        aml_csv_close(&c);
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 16))
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0:
        fuzz_name(s, n);
        break;
    case 1:
        fuzz_ftm(s, n);
        break;
    default:
        fuzz_csv(s, n);
        break;
    }
    return 0;
}
