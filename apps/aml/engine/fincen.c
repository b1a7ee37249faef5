/*
 * FinCEN SAR XML batches (see fincen.h and docs/aml.md, "Filing a SAR").
 *
 * Element order, types and limits follow EFL_SARXBatchSchema.xsd 1.2:
 * every element in the fc2 namespace, every SeqNum unique in the document
 * (one counter), text values of the RestrictString types with no line
 * breaks, tabs, or leading/trailing spaces and cut to their length in
 * characters. What the case does not know about a subject (address,
 * TIN, identification, gender, birth date) is stated as unknown with the
 * schema's indicators rather than left out or invented.
 */
#include "engine/fincen.h"
#include "store/config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const aml_filer_key filer_keys[] = {
    {"filer.name", "legal name of the filing institution", 1},
    {"filer.tin", "EIN of the filing institution (9 digits)", 1},
    {"filer.regulator", "primary federal regulator (fed, fdic, ncua, occ, irs, sec, cftc, fhfa)", 1},
    {"filer.address.street", "street address of the filing institution", 1},
    {"filer.address.city", "city", 1},
    {"filer.address.state", "state or territory code (2 letters)", 1},
    {"filer.address.zip", "ZIP code (5 or 9 digits)", 1},
    {"filer.address.country", "country code (2 letters, e.g. US)", 1},
    {"filer.contact.office", "designated contact office", 1},
    {"filer.contact.phone", "contact office phone number (digits only)", 1},
    {"filer.transmitter.tcc", "Transmitter Control Code assigned by FinCEN", 1},
    {"filer.transmitter.contact", "name of the transmitter contact person", 1},
    {"filer.demo", "\"true\" marks a fictitious filer (demo data)", 0},
    {NULL, NULL, 0},
};

const aml_filer_key *aml_filer_keys(void)
{
    return filer_keys;
}

static const struct {
    const char *name;
    const char *code; /* ValidateFederalRegulatorCodeType */
} regulators[] = {
    {"fed", "1"}, {"fdic", "2"}, {"ncua", "3"}, {"occ", "4"}, {"sec", "6"}, {"irs", "7"}, {"cftc", "9"}, {"fhfa", "13"},
};

static const char *regulator_code(const char *name)
{
    for (size_t i = 0; i < sizeof regulators / sizeof regulators[0]; i++)
        if (strcmp(regulators[i].name, name) == 0)
            return regulators[i].code;
    return NULL;
}

static int all_of(const char *v, int (*cls)(int), size_t lo, size_t hi)
{
    size_t n = strlen(v);
    if (n < lo || n > hi)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!cls((unsigned char)v[i]))
            return 0;
    return 1;
}

static int is_printable_text(const char *v, size_t max)
{
    size_t n = strlen(v);
    if (n == 0 || n > max || v[0] == ' ' || v[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return 0;
    return 1;
}

int aml_filer_check(const char *key, const char *value, char *msg, size_t n)
{
    const aml_filer_key *k = filer_keys;
    while (k->key && strcmp(k->key, key) != 0)
        k++;
    if (!k->key) {
        snprintf(msg, n, "unknown filer setting '%.64s' (see docs/aml.md, \"Filing a SAR\", for the keys)", key);
        return -1;
    }
    int ok = 1;
    if (!strcmp(key, "filer.tin"))
        ok = all_of(value, isdigit, 9, 9);
    else if (!strcmp(key, "filer.regulator"))
        ok = regulator_code(value) != NULL;
    else if (!strcmp(key, "filer.address.state") || !strcmp(key, "filer.address.country"))
        ok = all_of(value, isupper, 2, 2);
    else if (!strcmp(key, "filer.address.zip"))
        ok = all_of(value, isdigit, 5, 5) || all_of(value, isdigit, 9, 9);
    else if (!strcmp(key, "filer.contact.phone"))
        ok = all_of(value, isdigit, 10, 16);
    else if (!strcmp(key, "filer.transmitter.tcc"))
        ok = all_of(value, isalnum, 1, 25);
    else if (!strcmp(key, "filer.demo"))
        ok = !strcmp(value, "true") || !strcmp(value, "false");
    else
        ok = is_printable_text(value, !strcmp(key, "filer.address.street") ? 100
                                      : !strcmp(key, "filer.address.city")  ? 50
                                                                            : 150);
    if (!ok) {
        snprintf(msg, n, "invalid value for %s: expected the %s", key, k->what);
        return -1;
    }
    return 0;
}

int aml_filer_missing(aml_store *s, int described, mcp_buf *missing)
{
    int count = 0;
    char v[AML_CONFIG_VALUE_MAX + 1];
    for (const aml_filer_key *k = filer_keys; k->key; k++) {
        if (!k->required)
            continue;
        int rc = aml_config_get(s, k->key, v, sizeof v);
        if (rc < 0)
            return -1;
        if (rc == 0 || !v[0]) {
            aml_buf_printf(missing, "%s%s", count ? ", " : "", k->key);
            if (described)
                aml_buf_printf(missing, " (%s)", k->what);
            count++;
        }
    }
    return count;
}

int aml_filer_set_demo(aml_store *s, aml_err *err)
{
    static const char *const demo[][2] = {
        {"filer.name", "DEMO DATA Fictitious Community Bank"},
        {"filer.tin", "000000000"},
        {"filer.regulator", "occ"},
        {"filer.address.street", "1 Demo Data Street"},
        {"filer.address.city", "Exampleville"},
        {"filer.address.state", "NY"},
        {"filer.address.zip", "00000"},
        {"filer.address.country", "US"},
        {"filer.contact.office", "DEMO DATA BSA Office"},
        {"filer.contact.phone", "5555550100"},
        {"filer.transmitter.tcc", "PDEMO000"},
        {"filer.transmitter.contact", "DEMO DATA Contact"},
        {"filer.demo", "true"},
    };
    char v[8];
    int rc = aml_config_get(s, "filer.name", v, sizeof v);
    if (rc != 0)
        return rc < 0 ? aml_errf(err, "%s", aml_errmsg(s)) : 0;
    for (size_t i = 0; i < sizeof demo / sizeof demo[0]; i++)
        if (aml_config_set(s, demo[i][0], demo[i][1], "demo", err))
            return -1;
    return 0;
}

/* ---- the XML writer ------------------------------------------------------------------------------------ */

typedef struct xw {
    mcp_buf *b;
    long seq;       /* the last SeqNum given */
    long parties;   /* Party elements written */
    aml_store *s;
    char filer[13][AML_CONFIG_VALUE_MAX + 1]; /* the filer settings, in filer_keys order */
} xw;

static const char *filer(const xw *x, const char *key)
{
    for (size_t i = 0; filer_keys[i].key; i++)
        if (!strcmp(filer_keys[i].key, key))
            return x->filer[i];
    return "";
}

/* Escaped text: &, <, > and quotes; control characters other than tab and newline dropped. */
static void esc(mcp_buf *b, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *r = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : NULL;
        if (!r && (c >= 0x20 || c == '\n' || c == '\t'))
            continue;
        mcp_buf_append(b, s + from, i - from);
        if (r)
            aml_buf_puts(b, r);
        from = i + 1;
    }
    mcp_buf_append(b, s + from, n - from);
}

/* Normalises a RestrictString value: whitespace runs become one space, none at either end, at most max characters. */
static void restrict_text(const char *in, size_t max, char *out, size_t cap)
{
    size_t o = 0, chars = 0;
    int space = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap; p++) {
        if (*p <= 0x20 || *p == 0x7f) {
            space = o > 0;
            continue;
        }
        int lead = (*p & 0xC0) != 0x80;
        if (lead && chars + (space ? 2 : 1) > max)
            break;
        if (space && lead) {
            out[o++] = ' ';
            chars++;
            space = 0;
        }
        out[o++] = (char)*p;
        chars += lead;
    }
    while (o > 0 && ((unsigned char)out[o - 1] & 0xC0) == 0xC0) /* a lead byte cut from its sequence */
        o--;
    out[o] = '\0';
}

static void x_open(xw *x, const char *name)
{
    aml_buf_printf(x->b, "<fc2:%s SeqNum=\"%ld\">", name, ++x->seq);
    if (!strcmp(name, "Party"))
        x->parties++;
}

static void x_close(xw *x, const char *name)
{
    aml_buf_printf(x->b, "</fc2:%s>", name);
}

/* An element with a RestrictString value of at most max characters; nothing when the value is empty. */
static void x_text(xw *x, const char *name, const char *value, size_t max)
{
    char v[1024];
    restrict_text(value ? value : "", max, v, sizeof v);
    if (!v[0])
        return;
    aml_buf_printf(x->b, "<fc2:%s>", name);
    esc(x->b, v, strlen(v));
    x_close(x, name);
}

static void x_yes(xw *x, const char *name)
{
    aml_buf_printf(x->b, "<fc2:%s>Y</fc2:%s>", name, name);
}

static void x_name(xw *x, const char *full)
{
    x_open(x, "PartyName");
    x_text(x, "PartyNameTypeCode", "L", 3);
    x_text(x, "RawPartyFullName", full, 150);
    x_close(x, "PartyName");
}

static void x_filer_address(xw *x)
{
    x_open(x, "Address");
    x_text(x, "RawCityText", filer(x, "filer.address.city"), 50);
    x_text(x, "RawCountryCodeText", filer(x, "filer.address.country"), 2);
    x_text(x, "RawStateCodeText", filer(x, "filer.address.state"), 3);
    x_text(x, "RawStreetAddress1Text", filer(x, "filer.address.street"), 100);
    x_text(x, "RawZIPCode", filer(x, "filer.address.zip"), 9);
    x_close(x, "Address");
}

static void x_phone(xw *x, const char *number)
{
    x_open(x, "PhoneNumber");
    x_text(x, "PhoneNumberText", number, 16);
    x_close(x, "PhoneNumber");
}

static void x_id(xw *x, const char *number, const char *type)
{
    x_open(x, "PartyIdentification");
    x_text(x, "PartyIdentificationNumberText", number, 25);
    x_text(x, "PartyIdentificationTypeCode", type, 3);
    x_close(x, "PartyIdentification");
}

static void x_depository(xw *x)
{
    x_open(x, "OrganizationClassificationTypeSubtype");
    x_text(x, "OrganizationTypeID", "2", 3); /* depository institution */
    x_close(x, "OrganizationClassificationTypeSubtype");
}

/* Transmitter, transmitter contact, filing institution, contact office, transaction location. */
static void x_filer_parties(xw *x)
{
    const char *reg = regulator_code(filer(x, "filer.regulator"));
    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "35", 3);
    x_name(x, filer(x, "filer.name"));
    x_filer_address(x);
    x_phone(x, filer(x, "filer.contact.phone"));
    x_id(x, filer(x, "filer.tin"), "4");
    x_id(x, filer(x, "filer.transmitter.tcc"), "28");
    x_close(x, "Party");

    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "37", 3);
    x_name(x, filer(x, "filer.transmitter.contact"));
    x_close(x, "Party");

    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "30", 3);
    x_text(x, "PrimaryRegulatorTypeCode", reg ? reg : "99", 3);
    x_name(x, filer(x, "filer.name"));
    x_filer_address(x);
    x_id(x, filer(x, "filer.tin"), "2");
    x_depository(x);
    x_close(x, "Party");

    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "8", 3);
    x_name(x, filer(x, "filer.contact.office"));
    x_phone(x, filer(x, "filer.contact.phone"));
    x_close(x, "Party");

    /* Where the activity occurred: the case's accounts are the filer's own. */
    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "34", 3);
    x_text(x, "PrimaryRegulatorTypeCode", reg ? reg : "99", 3);
    x_name(x, filer(x, "filer.name"));
    x_filer_address(x);
    x_id(x, filer(x, "filer.tin"), "2");
    x_depository(x);
    x_close(x, "Party");
}

/* "YYYY-MM-DD..." -> "YYYYMMDD"; "" when not a date. */
static void yyyymmdd(const char *iso, char out[9])
{
    out[0] = '\0';
    if (!iso || strlen(iso) < 10 || iso[4] != '-' || iso[7] != '-')
        return;
    memcpy(out, iso, 4);
    memcpy(out + 4, iso + 5, 2);
    memcpy(out + 6, iso + 8, 2);
    out[8] = '\0';
    for (int i = 0; i < 8; i++)
        if (!isdigit((unsigned char)out[i]))
            out[0] = '\0';
}

static const char *jstr(const mcp_json *o, const char *key)
{
    const char *v = mcp_json_str(mcp_json_get(o, key), NULL);
    return v ? v : "";
}

/* The subject's facts the draft does not carry: birth date and country. */
static void subject_facts(xw *x, const char *customer_id, char dob[9], char country[3])
{
    dob[0] = country[0] = '\0';
    aml_st *st = aml_stmt(x->s, "SELECT coalesce(date_of_birth, ''), coalesce(country, '') FROM customers "
                                      "WHERE customer_id = ?");
    if (!st)
        return;
    aml_bind_text(st, 1, customer_id);
    if (aml_step(st) == AML_ROW) {
        yyyymmdd(aml_col_text(st, 0), dob);
        const char *c = aml_col_text(st, 1);
        if (strlen(c) == 2 && isupper((unsigned char)c[0]) && isupper((unsigned char)c[1]))
            memcpy(country, c, 3);
    }
    aml_reset(st);
}

static void x_subject_name(xw *x, const mcp_json *sj, int entity)
{
    x_open(x, "PartyName");
    const char *last = entity ? jstr(sj, "entityName") : jstr(sj, "lastName");
    const char *first = entity ? "" : jstr(sj, "firstName");
    if (!last[0])
        x_yes(x, "EntityLastNameUnknownIndicator");
    if (!entity && !first[0])
        x_yes(x, "FirstNameUnknownIndicator");
    x_text(x, "PartyNameTypeCode", "L", 3);
    x_text(x, "RawEntityIndividualLastName", last, 150);
    if (!entity)
        x_text(x, "RawIndividualFirstName", first, 35);
    x_close(x, "PartyName");
}

static void x_subject_accounts(xw *x, const mcp_json *sj)
{
    const mcp_json *accts = mcp_json_get(sj, "accounts");
    if (!mcp_json_len(accts))
        return;
    x_open(x, "PartyAccountAssociation");
    x_text(x, "PartyAccountAssociationTypeCode", "7", 3); /* activity affected account */
    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "41", 3); /* the institution where the account is held */
    x_id(x, filer(x, "filer.tin"), "2");
    for (size_t i = 0; i < mcp_json_len(accts) && i < 99; i++) {
        x_open(x, "Account");
        x_text(x, "AccountNumberText", jstr(mcp_json_at(accts, i), "accountId"), 40);
        x_open(x, "PartyAccountAssociation");
        if (mcp_json_bool(mcp_json_get(mcp_json_at(accts, i), "closed")))
            x_yes(x, "AccountClosedIndicator");
        x_text(x, "PartyAccountAssociationTypeCode", "5", 3);
        x_close(x, "PartyAccountAssociation");
        x_close(x, "Account");
    }
    x_close(x, "Party");
    x_close(x, "PartyAccountAssociation");
}

/* One subject (ActivityPartyTypeCode 33) from a draft's subjects[] entry. */
static void x_subject(xw *x, const mcp_json *sj)
{
    int entity = !strcmp(jstr(sj, "entityOrIndividual"), "entity");
    const char *role = jstr(sj, "roleInTransaction");
    char dob[9], country[3];
    subject_facts(x, jstr(sj, "customerId"), dob, country);
    x_open(x, "Party");
    x_text(x, "ActivityPartyTypeCode", "33", 3);
    if (!entity && !dob[0])
        x_yes(x, "BirthDateUnknownIndicator");
    if (!strcmp(role, "both"))
        x_yes(x, "BothPurchaserSenderPayeeReceiveIndicator");
    if (!entity && dob[0])
        x_text(x, "IndividualBirthDateText", dob, 8);
    if (entity)
        x_yes(x, "PartyAsEntityOrganizationIndicator");
    if (!strcmp(role, "payee_receiver"))
        x_yes(x, "PayeeReceiverIndicator");
    if (!strcmp(role, "purchaser_sender"))
        x_yes(x, "PurchaserSenderIndicator");
    if (!entity)
        x_yes(x, "UnknownGenderIndicator");
    x_subject_name(x, sj, entity);
    x_open(x, "Address");
    x_yes(x, "CityUnknownIndicator");
    if (!country[0])
        x_yes(x, "CountryCodeUnknownIndicator");
    x_text(x, "RawCountryCodeText", country, 2);
    x_yes(x, "StateCodeUnknownIndicator");
    x_yes(x, "StreetAddressUnknownIndicator");
    x_yes(x, "ZIPCodeUnknownIndicator");
    x_close(x, "Address");
    x_open(x, "PartyIdentification");
    x_yes(x, "TINUnknownIndicator");
    x_close(x, "PartyIdentification");
    x_open(x, "PartyIdentification");
    x_yes(x, "IdentificationPresentUnknownIndicator");
    x_close(x, "PartyIdentification");
    const char *naics = jstr(sj, "naics"), *occ = jstr(sj, "occupation");
    if (naics[0] || occ[0]) {
        x_open(x, "PartyOccupationBusiness");
        x_text(x, "NAICSCode", naics, 6);
        x_text(x, "OccupationBusinessText", occ, 50);
        x_close(x, "PartyOccupationBusiness");
    }
    if (!strcmp(jstr(sj, "relationshipToInstitution"), "customer")) {
        x_open(x, "PartyAssociation");
        x_yes(x, "CustomerIndicator");
        x_text(x, "SubjectRelationshipFinancialInstitutionTINText", filer(x, "filer.tin"), 25);
        x_close(x, "PartyAssociation");
    }
    x_subject_accounts(x, sj);
    x_close(x, "Party");
}

static void x_activity_block(xw *x, const mcp_json *act, int64_t dollars)
{
    char from[9], to[9];
    yyyymmdd(jstr(act, "dateFrom"), from);
    yyyymmdd(jstr(act, "dateTo"), to);
    x_open(x, "SuspiciousActivity");
    if (dollars <= 0)
        x_yes(x, "AmountUnknownIndicator");
    x_text(x, "SuspiciousActivityFromDateText", from, 8);
    x_text(x, "SuspiciousActivityToDateText", to, 8);
    if (dollars > 0) {
        char amt[24];
        snprintf(amt, sizeof amt, "%lld", (long long)dollars);
        x_text(x, "TotalSuspiciousAmountText", amt, 15);
    }
    const mcp_json *cats = mcp_json_get(act, "categories");
    for (size_t i = 0; i < mcp_json_len(cats) && i < 99; i++) {
        char sub[16], typ[16];
        snprintf(sub, sizeof sub, "%lld", (long long)mcp_json_int(mcp_json_get(mcp_json_at(cats, i), "subtypeCode")));
        snprintf(typ, sizeof typ, "%lld", (long long)mcp_json_int(mcp_json_get(mcp_json_at(cats, i), "typeCode")));
        x_open(x, "SuspiciousActivityClassification");
        x_text(x, "SuspiciousActivitySubtypeID", sub, 8);
        x_text(x, "SuspiciousActivityTypeID", typ, 8);
        x_close(x, "SuspiciousActivityClassification");
    }
    x_close(x, "SuspiciousActivity");
}

/*
 * The narrative as batch text: line breaks and tabs become spaces (the user guide forbids them in element
 * values), runs of spaces collapse, then blocks of at most 4,000 characters, cut on character boundaries.
 * @return the number of blocks, or -1 when the text is over 17,000 characters.
 */
static int x_narrative(xw *x, const char *text)
{
    size_t n = strlen(text), o = 0, chars = 0;
    char *flat = malloc(n + 1);
    if (!flat)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ? ' ' : text[i];
        if (c == ' ' && (o == 0 || flat[o - 1] == ' '))
            continue;
        flat[o++] = c;
        chars += ((unsigned char)c & 0xC0) != 0x80;
    }
    while (o > 0 && flat[o - 1] == ' ') {
        o--;
        chars--;
    }
    flat[o] = '\0';
    if (chars > AML_FINCEN_NARRATIVE_MAX) {
        free(flat);
        return -1;
    }
    int blocks = 0;
    for (size_t at = 0; at < o;) {
        size_t end = at, k = 0;
        while (end < o && k < AML_FINCEN_NARRATIVE_BLOCK) {
            end++;
            while (end < o && ((unsigned char)flat[end] & 0xC0) == 0x80)
                end++;
            k++;
        }
        x_open(x, "ActivityNarrativeInformation");
        aml_buf_printf(x->b, "<fc2:ActivityNarrativeSequenceNumber>%d</fc2:ActivityNarrativeSequenceNumber>",
                       ++blocks);
        aml_buf_puts(x->b, "<fc2:ActivityNarrativeText>");
        esc(x->b, flat + at, end - at);
        x_close(x, "ActivityNarrativeText");
        x_close(x, "ActivityNarrativeInformation");
        at = end;
    }
    free(flat);
    return blocks;
}

/* Writes the Activity element into body; the counts go on the root, written after it. */
static int x_activity(xw *x, const mcp_json *root, int64_t filing_time, int64_t *dollars, aml_err *err)
{
    const mcp_json *act = mcp_json_get(root, "suspiciousActivity");
    *dollars = mcp_json_int(mcp_json_get(act, "amountInvolvedUsd"));
    char filed[11], fdate[9];
    aml_fmt_date(filing_time, filed);
    yyyymmdd(filed, fdate);
    x_open(x, "Activity");
    x_text(x, "FilingDateText", fdate, 8);
    if (!strcmp(filer(x, "filer.demo"), "true"))
        x_text(x, "FilingInstitutionNotetoFinCEN", "DEMO DATA: fictitious filer, not for filing", 50);
    x_open(x, "ActivityAssociation");
    x_yes(x, "InitialReportIndicator");
    x_close(x, "ActivityAssociation");
    x_filer_parties(x);
    const mcp_json *subjects = mcp_json_get(root, "subjects");
    if (mcp_json_len(subjects) == 0) {
        /* No known subject: one subject party saying so (the 60-day case). */
        x_open(x, "Party");
        x_text(x, "ActivityPartyTypeCode", "33", 3);
        x_yes(x, "AllCriticalSubjectInformationUnavailableIndicator");
        x_close(x, "Party");
    }
    for (size_t i = 0; i < mcp_json_len(subjects) && i < 999; i++)
        x_subject(x, mcp_json_at(subjects, i));
    x_activity_block(x, act, *dollars);
    if (x_narrative(x, jstr(mcp_json_get(root, "narrative"), "text")) <= 0)
        return aml_errf(err, "the narrative is empty or over %d characters", AML_FINCEN_NARRATIVE_MAX);
    x_close(x, "Activity");
    return 0;
}

int aml_fincen_xml(aml_store *s, const char *draft_json, size_t n, int64_t filing_time, mcp_buf *xml,
                   aml_err *err)
{
    mcp_buf missing;
    mcp_buf_init(&missing, 0);
    int nmiss = aml_filer_missing(s, 0, &missing);
    if (nmiss != 0) {
        int rc = nmiss < 0 ? aml_errf(err, "%s", aml_errmsg(s)) : (aml_errf(err, "%s", missing.data), 1);
        mcp_buf_cleanup(&missing);
        return rc;
    }
    mcp_buf_cleanup(&missing);
    xw x;
    memset(&x, 0, sizeof x);
    x.s = s;
    for (size_t i = 0; filer_keys[i].key && i < sizeof x.filer / sizeof x.filer[0]; i++)
        if (aml_config_get(s, filer_keys[i].key, x.filer[i], sizeof x.filer[i]) < 0)
            return aml_errf(err, "%s", aml_errmsg(s));
    mcp_json_doc *d;
    if (mcp_json_parse(&d, draft_json, n, NULL, NULL) != MCP_OK)
        return aml_errf(err, "the draft is not JSON");
    const mcp_json *root = mcp_json_doc_root(d);
    if (!mcp_json_str_eq(mcp_json_get(root, "status"), "draft")) {
        aml_errf(err, "no SAR draft: the case does not warrant one (status %s)", jstr(root, "status"));
        mcp_json_doc_free(d);
        return -1;
    }
    mcp_buf body;
    mcp_buf_init(&body, 0);
    x.b = &body;
    int64_t dollars = 0;
    int rc = x_activity(&x, root, filing_time, &dollars, err);
    mcp_json_doc_free(d);
    if (!rc) {
        aml_buf_printf(xml,
                       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<fc2:EFilingBatchXML xmlns:fc2=\"www.fincen.gov/base\" TotalAmount=\"%lld\" "
                       "PartyCount=\"%ld\" ActivityCount=\"1\" ActivityAttachmentCount=\"0\" AttachmentCount=\"0\">"
                       "<fc2:FormTypeCode>SARX</fc2:FormTypeCode>",
                       (long long)(dollars > 0 ? dollars : 0), x.parties);
        mcp_buf_append(xml, body.data, body.len);
        if (aml_buf_puts(xml, "</fc2:EFilingBatchXML>\n") != MCP_OK)
            rc = aml_errf(err, "out of memory");
    }
    mcp_buf_cleanup(&body);
    return rc;
}
