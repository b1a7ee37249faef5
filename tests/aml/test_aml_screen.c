/*
 * Screening building blocks: normalisation (scripts, case, marks,
 * punctuation, "LAST, First", honorifics, legal forms), dates, countries,
 * Double Metaphone, Jaro-Winkler, Levenshtein, and a small index: the
 * candidates, the qualifiers, the explanation of a hit.
 */
#include "screen/lists.h"
#include "testlib.h"

#include <math.h>
#include <unistd.h>

#define DATA AML_SCREENING_DATA

#define PTR(r, p) mcp_json_pointer((r), (p), strlen(p))

static void norm_is(const char *in, const char *want)
{
    aml_sc_name n;
    aml_sc_normalize(in, strlen(in), &n);
    if (strcmp(n.text, want)) {
        fprintf(stderr, "  normalise \"%s\": got \"%s\", want \"%s\"\n", in, n.text, want);
        T_EQ_STR(n.text, want);
    }
}

static void test_normalize(void)
{
    norm_is("JANAN AGHA", "janan agha");
    norm_is("SALEK, ABDULHAI", "abdulhai salek");
    norm_is("  Jan   Mohammad ", "jan mohammad");
    norm_is("Mus’ab Al-Zarqawi", "musab al zarqawi");
    norm_is("Mus?ab", "musab");
    norm_is("José Müller-Lüdenscheidt", "jose muller ludenscheidt");
    norm_is("Mr. John Smith", "john smith");
    norm_is("Dr John SMITH Jr.", "john smith");
    norm_is("Kalashnikov Concern JSC", "kalashnikov concern");
    norm_is("LLC \"Inter Tobacco\"", "inter tobacco");
    norm_is("Zala Aero Group GmbH & Co. KG", "zala aero group");
    norm_is("Ltd", "ltd"); /* nothing else left: kept */
    norm_is("Александр Захаров", "aleksandr zakharov");
    norm_is("Ζαχάρωφ", "zacharoph");
    norm_is("محمد علي", "mhmd ly");
    norm_is("Інтэр Табак", "inter tabak");
    norm_is("김민준", "gimminjun");
    aml_sc_name n;
    aml_sc_normalize("Александр", strlen("Александр"), &n);
    T_EQ_INT(n.script, 1);
    T_EQ_INT(n.ntok, 1);
}

static void test_dates_countries(void)
{
    T_EQ_INT(aml_sc_parse_date("1965", 4), 19650000);
    T_EQ_INT(aml_sc_parse_date("1969-7-16", 9), 19690716);
    T_EQ_INT(aml_sc_parse_date("1974-01-32", 10), 19740100);
    T_EQ_INT(aml_sc_parse_date("1968-13-30", 10), 19680000);
    T_EQ_INT(aml_sc_parse_date("", 0), 0);
    T_EQ_INT(aml_sc_parse_date("abc", 3), 0);
    char c[3];
    aml_sc_country_text(aml_sc_country("United Arab Emirates", 20), c);
    T_EQ_STR(c, "ae");
    aml_sc_country_text(aml_sc_country("IR", 2), c);
    T_EQ_STR(c, "ir");
    aml_sc_country_text(aml_sc_country("Russia", 6), c);
    T_EQ_STR(c, "ru");
    aml_sc_country_text(aml_sc_country("Ivory Coast", 11), c);
    T_EQ_STR(c, "ci");
    aml_sc_country_text(aml_sc_country("Hong Kong", 9), c);
    T_EQ_STR(c, "hk");
    aml_sc_country_text(aml_sc_country("South Korea", 11), c);
    T_EQ_STR(c, "kr");
    T_EQ_INT(aml_sc_country("Atlantis", 8), 0);
    T_EQ_INT(aml_sc_schema_parse("Vessel"), AML_SC_VESSEL);
    T_EQ_INT(aml_sc_schema_parse("Sanction"), -1);
}

static void code_is(const char *w, const char *prim, const char *alt)
{
    uint32_t p, a;
    char ps[5], as[5];
    aml_sc_metaphone(w, strlen(w), &p, &a);
    aml_sc_code_text(p, ps);
    aml_sc_code_text(a, as);
    if (strcmp(ps, prim) || strcmp(as, alt)) {
        fprintf(stderr, "  metaphone %s: got %s/%s, want %s/%s\n", w, ps, as, prim, alt);
        T_EQ_STR(ps, prim);
    }
}

static void test_metaphone(void)
{
    code_is("smith", "SM0", "SMT");
    code_is("schmidt", "SKMT", "XMT");
    code_is("knight", "NT", "NT");
    code_is("philip", "FLP", "FLP");
    code_is("mohammad", "MHMT", "MHMT");
    code_is("muhammed", "MHMT", "MHMT");
    code_is("george", "JRJ", "KRK");
    code_is("thomas", "0MS", "TMS");
    code_is("zakharov", "SKRF", "TSKR");
    code_is("xavier", "SFR", "SFR");
    code_is("wright", "RT", "RT");
    code_is("", "", "");
}

static void test_similarity(void)
{
    T_TRUE(fabs(aml_sc_jaro_winkler("martha", 6, "marhta", 6) - 0.961) < 0.001);
    T_TRUE(fabs(aml_sc_jaro_winkler("dwayne", 6, "duane", 5) - 0.84) < 0.001);
    T_TRUE(fabs(aml_sc_jaro_winkler("dixon", 5, "dicksonx", 8) - 0.813) < 0.001);
    T_EQ_DBL(aml_sc_jaro_winkler("abc", 3, "abc", 3), 1.0);
    T_EQ_DBL(aml_sc_jaro_winkler("abc", 3, "xyz", 3), 0.0);
    T_EQ_INT(aml_sc_levenshtein("kitten", 6, "sitting", 7), 3);
    T_EQ_INT(aml_sc_levenshtein("", 0, "abc", 3), 3);
    T_EQ_INT(aml_sc_levenshtein("flaw", 4, "lawn", 4), 2);
    T_EQ_INT(aml_sc_levenshtein("faiz", 4, "afiz", 4), 1);
    T_EQ_INT(aml_sc_levenshtein("ca", 2, "abc", 3), 3);
}

typedef struct ent_spec {
    const char *id, *names[3], *dob, *country, *ident;
    int schema;
    char gender;
} ent_spec;

static const ent_spec fixture[] = {
    {"p1", {"ABDULHAI SALEK", NULL}, "1965", "af", NULL, AML_SC_PERSON, 'm'},
    {"p2", {"Alexander Vyacheslavovich ZAKHAROV", "Захаров Александр Вячеславович", NULL}, "1963-03-05", "ru",
     NULL, AML_SC_PERSON, 'm'},
    {"p3", {"John Smith", NULL}, "1980-02-01", "gb", "AB1234567", AML_SC_PERSON, 'm'},
    {"c1", {"LLC CST", "Special Technology Center", NULL}, NULL, "ru", "7802170553", AML_SC_COMPANY, 0},
    {"v1", {"SEA STAR", NULL}, NULL, "kp", "IMO 9123456", AML_SC_VESSEL, 0},
};

static aml_sc_index *fixture_index(void)
{
    aml_sc_index *ix = aml_sc_index_new();
    for (size_t i = 0; i < sizeof fixture / sizeof fixture[0]; i++) {
        const ent_spec *s = &fixture[i];
        aml_sc_entity e = {0};
        size_t nn = 0;
        while (nn < 3 && s->names[nn])
            nn++;
        e.id = s->id;
        e.schema = s->schema;
        e.names = s->names;
        e.nnames = nn;
        e.dates = &s->dob;
        e.ndates = s->dob != NULL;
        e.countries = &s->country;
        e.ncountries = s->country != NULL;
        e.ids = &s->ident;
        e.nids = s->ident != NULL;
        e.gender = s->gender;
        e.list = (uint16_t)(i % 2);
        e.user = (int64_t)i;
        if (aml_sc_index_add(ix, &e))
            return NULL;
    }
    return aml_sc_index_build(ix) ? NULL : ix;
}

static int top(aml_sc_index *ix, aml_sc_scratch *sc, aml_sc_query *q, const char **id, double *score)
{
    aml_sc_hit h[5];
    if (!q->threshold)
        q->threshold = AML_SC_DEFAULT_THRESHOLD;
    int n = aml_sc_search(ix, sc, q, h, 5);
    *id = n > 0 ? aml_sc_entity_id(ix, h[0].ent) : "";
    *score = n > 0 ? h[0].score : 0;
    return n;
}

static void test_index_search(void)
{
    aml_sc_index *ix = fixture_index();
    T_NOT_NULL(ix);
    aml_sc_scratch *sc = aml_sc_scratch_new(ix);
    T_NOT_NULL(sc);
    const char *id;
    double s;
    aml_sc_query q = {.name = "SALEK, ABDULHAI", .birth_date = "1965"};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_EQ_STR(id, "p1");
    T_EQ_DBL(s, 1.0);
    /* A letter swap, a year one off: found, with less. */
    q = (aml_sc_query){.name = "ABDULHAI SAELK", .birth_date = "1966"};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_EQ_STR(id, "p1");
    T_TRUE(s < 0.9 && s >= 0.7);
    /* Years far apart: less alike; with typos and another gender, no more a match. */
    q = (aml_sc_query){.name = "ABDULHAI SALEK", .birth_date = "1990-01-01"};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_TRUE(fabs(s - 0.8) < 1e-9);
    q = (aml_sc_query){.name = "ABDULHIA SAELK", .birth_date = "1990-01-01"};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    q = (aml_sc_query){.name = "ABDULHIA SAELK", .birth_date = "1990-01-01", .gender = 'f'};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 0);
    /* Cyrillic query against the Latin and Cyrillic names. */
    q = (aml_sc_query){.name = "Захаров Александр", .schema = AML_SC_PERSON};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_EQ_STR(id, "p2");
    /* Schema filter: a vessel is not a person. */
    q = (aml_sc_query){.name = "Sea Star", .schema = AML_SC_PERSON};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 0);
    q = (aml_sc_query){.name = "Sea Star", .schema = AML_SC_VESSEL};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    /* An identifier alone is decisive, whatever the name. */
    const char *ids[] = {"7802-170-553"};
    q = (aml_sc_query){.name = "Completely Different", .ids = ids, .nids = 1};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_EQ_STR(id, "c1");
    /* Legal forms do not count: "CST LLC" is "LLC CST". */
    q = (aml_sc_query){.name = "CST Limited", .schema = AML_SC_COMPANY};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_EQ_STR(id, "c1");
    /* List filter. */
    uint16_t lists[] = {1};
    q = (aml_sc_query){.name = "ABDULHAI SALEK", .lists = lists, .nlists = 1};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 0);
    /* Gender and nationality lower the score. */
    q = (aml_sc_query){.name = "John Smith", .gender = 'f', .country = "France"};
    T_EQ_INT(top(ix, sc, &q, &id, &s), 1);
    T_TRUE(fabs(s - 0.8) < 1e-9);
    q = (aml_sc_query){.name = "", .threshold = 0.5};
    aml_sc_hit h[1];
    T_EQ_INT(aml_sc_search(ix, sc, &q, h, 1), -1);
    q = (aml_sc_query){.name = "Mr.", .threshold = 0.5};
    T_EQ_INT(aml_sc_search(ix, sc, &q, h, 1), 1 - 1);
    aml_sc_scratch_free(sc);
    aml_sc_index_free(ix);
}

static void test_explain(void)
{
    aml_sc_index *ix = fixture_index();
    aml_sc_scratch *sc = aml_sc_scratch_new(ix);
    aml_sc_query q = {.name = "Zakharov, Alexandr", .birth_date = "1963-03-06", .country = "Russia",
                      .threshold = 0.5};
    aml_sc_hit h[2];
    T_TRUE(aml_sc_search(ix, sc, &q, h, 2) >= 1);
    T_EQ_STR(aml_sc_entity_id(ix, h[0].ent), "p2");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    aml_sc_explain(ix, sc, &h[0], &w);
    T_OK(mcp_jw_finish(&w));
    mcp_json_doc *doc = NULL;
    T_OK(mcp_json_parse(&doc, b.data, b.len, NULL, NULL));
    const mcp_json *r = mcp_json_doc_root(doc);
    T_TRUE(mcp_json_str_eq(PTR(r, "/matched_name/query_normalized"), "alexandr zakharov"));
    T_TRUE(mcp_json_str_eq(PTR(r, "/matched_name/tokens/0/query"), "alexandr"));
    const char *e0 = mcp_json_str(PTR(r, "/matched_name/tokens/0/entity"), NULL);
    T_TRUE(e0 && !strncmp(e0, "ale", 3));
    T_TRUE(mcp_json_number(PTR(r, "/dob_mismatch/score")) < -0.01);
    T_TRUE(mcp_json_str_eq(PTR(r, "/dob_mismatch/entity"), "1963-03-05"));
    T_EQ_DBL(mcp_json_number(PTR(r, "/country_mismatch/score")), 0);
    T_TRUE(mcp_json_number(PTR(r, "/name_jaro_winkler/score")) > 0.5);
    T_TRUE(mcp_json_get(r, "name_phonetic_match") != NULL);
    mcp_json_doc_free(doc);
    mcp_buf_cleanup(&b);
    aml_sc_scratch_free(sc);
    aml_sc_index_free(ix);
}

static void test_lists_store(void)
{
    aml_store *s;
    aml_err err = {{0}};
    T_EQ_INT(aml_store_open(&s, NULL, AML_OPEN_CREATE, &err), 0);
    aml_list_stats st;
    T_EQ_INT(aml_lists_import(s, "zala", "ftm", DATA "/zala_entities.ftm.json", &st, &err), 0);
    T_EQ_INT((int)st.entities, 17);
    T_EQ_INT((int)st.other, 91 - 17);
    T_EQ_INT(aml_lists_import(s, "eu", "ftm", DATA "/t1_entities.ftm.json", &st, &err), 0);
    T_EQ_INT((int)st.entities, 6);
    T_EQ_INT(aml_lists_import(s, "un", "csv", DATA "/positives_un_untreated.csv", &st, &err), 0);
    T_EQ_INT((int)st.entities, 683);
    T_EQ_INT((int)st.version_id, 3);
    /* A second version replaces the entities and keeps the history. */
    T_EQ_INT(aml_lists_import(s, "eu", "ftm", DATA "/t1_entities.ftm.json", &st, &err), 0);
    T_EQ_INT((int)st.version_id, 4);
    T_EQ_INT((int)aml_lists_version(s), 4);
    /* Bad input: named, and nothing changes. */
    char bad[] = "/tmp/aml-screen-bad-XXXXXX";
    int fd = mkstemp(bad);
    T_TRUE(fd >= 0);
    const char text[] = "{\"id\":\"a\",\"schema\":\"Person\",\"properties\":{\"name\":[\"A B\"]}}\n{oops\n";
    T_EQ_INT((int)write(fd, text, sizeof text - 1), (int)sizeof text - 1);
    close(fd);
    T_EQ_INT(aml_lists_import(s, "eu", "ftm", bad, &st, &err), -1);
    T_TRUE(strstr(err.msg, "line 2") != NULL);
    T_EQ_INT(aml_lists_import(s, "bad name!", "ftm", bad, &st, &err), -1);
    T_EQ_INT(aml_lists_import(s, "eu", "xml", bad, &st, &err), -1);
    T_EQ_INT(aml_lists_import(s, "eu", "csv", "/nonexistent/file.csv", &st, &err), -1);
    unlink(bad);
    T_EQ_INT((int)aml_lists_version(s), 4);
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    T_EQ_INT(aml_lists_show(s, &w, &err), 0);
    T_OK(mcp_jw_finish(&w));
    mcp_json_doc *doc = NULL;
    T_OK(mcp_json_parse(&doc, b.data, b.len, NULL, NULL));
    const mcp_json *r = mcp_json_doc_root(doc);
    T_EQ_INT((int)mcp_json_len(mcp_json_get(r, "lists")), 3);
    T_TRUE(mcp_json_str_eq(PTR(r, "/lists/0/name"), "eu"));
    T_EQ_INT((int)mcp_json_len(PTR(r, "/lists/0/versions")), 2);
    T_EQ_INT((int)mcp_json_int(PTR(r, "/lists/0/entities")), 6);
    T_EQ_INT((int)strlen(mcp_json_str(PTR(r, "/lists/0/versions/1/sha256"), NULL)), 64);
    mcp_json_doc_free(doc);
    mcp_buf_cleanup(&b);
    /* The index from the store. */
    aml_screening sc;
    T_EQ_INT(aml_screening_load(s, &sc, &err), 0);
    T_EQ_INT((int)aml_sc_index_entities(sc.ix), 17 + 6 + 683);
    T_EQ_INT((int)sc.nlists, 3);
    aml_sc_scratch *scr = aml_sc_scratch_new(sc.ix);
    aml_sc_query q = {.name = "Захаров Александр Вячеславович", .threshold = 0.7};
    aml_sc_hit h[3];
    T_TRUE(aml_sc_search(sc.ix, scr, &q, h, 3) >= 1);
    T_EQ_INT(aml_sc_entity_schema(sc.ix, h[0].ent), AML_SC_PERSON);
    T_EQ_INT(h[0].ent < aml_sc_index_entities(sc.ix), 1);
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_lists_write_properties(s, aml_sc_entity_user(sc.ix, h[0].ent), &w);
    T_OK(mcp_jw_finish(&w));
    T_TRUE(strstr(b.data, "birthDate") != NULL);
    mcp_buf_cleanup(&b);
    aml_sc_scratch_free(scr);
    aml_screening_free(&sc);
    /* Dismissals. */
    T_EQ_INT(aml_lists_dismissed(s, "john smith", "un", "row-1"), 0);
    T_EQ_INT(aml_lists_dismiss(s, "john smith", "un", "row-1", "alice", "other person: born 1990", &err), 0);
    T_EQ_INT(aml_lists_dismiss(s, "john smith", "un", "row-1", "bob", "checked again", &err), 0);
    T_EQ_INT(aml_lists_dismissed(s, "john smith", "un", "row-1"), 1);
    T_EQ_INT(aml_lists_dismissed(s, "john smith", "un", "row-2"), 0);
    aml_store_close(s);
}

TEST_MAIN(TEST(test_normalize), TEST(test_dates_countries), TEST(test_metaphone), TEST(test_similarity),
          TEST(test_index_search), TEST(test_explain), TEST(test_lists_store))
