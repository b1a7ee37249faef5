/*
 * The typology catalog. Sources and the meaning of each origin tag are in
 * docs/aml.md; the URLs are the ones aml-domain.md cites.
 */
#include "engine/catalog.h"

#include <math.h>
#include <string.h>

#define FFIEC_G "https://user-9y4mjaj.cld.bz/ffiec-bsa-aml-examination-manual/284"
#define FFIEC_F "https://user-9y4mjaj.cld.bz/FFIEC-BSA-AML-Examination-Manual/276"
#define FFIEC_F328 "https://yumpu.com/en/document/view/20806760/bsa-aml-examination-manual-ffiec/328"
#define ORACLE_SCEN                                                                                      \
    "https://docs.oracle.com/en/industries/financial-services/ofs-analytical-applications/compliance-agent-" \
    "cloud/24.11.01/ofsug/supported-scenarios.html"
#define AMLSIM_WIKI "https://github.com/IBM/AMLSim/wiki/Transaction-Model:-Alert-Model"
#define AMLSIM_GEN "https://github.com/IBM/AMLSim (scripts/transaction_graph_generator.py)"

static const aml_typology_def catalog[AML_NTYP] = {
    {"T01_STRUCTURING", "T01", "1.0.0", "Structuring (cash just below the CTR threshold)",
     "Multiple cash transactions each below the currency transaction reporting threshold that together "
     "exceed it, on one business day or within a rolling window, on the customer's accounts.",
     "cash was repeatedly deposited or withdrawn in amounts just below the $10,000 currency transaction "
     "reporting threshold, a pattern consistent with evading the reporting requirement",
     "splitting cash into several transactions, each under the reporting threshold",
     {"transactions.channel=cash", "transactions.booked_at", "transactions.amount_minor", "account_parties", NULL},
     {"transactions.location_id", "transactions.conductor_id", NULL},
     {{"ctrThresholdMinor", AML_P_MONEY, 1000000, 100, 1e12, "REG",
       "CTR threshold in USD cents: cash over USD 10,000 per business day (31 CFR 1010.311)"},
      {"bandLowRatio", AML_P_RATIO, 0.8, 0.5, 0.99, "our default",
       "near-threshold band starts at this fraction of the threshold (0.9 is a stricter variant)"},
      {"windowDays", AML_P_DAYS, 14, 1, 366, "IND",
       "rolling window; Oracle FCCM SigCash lookback 'typically two weeks or 30 days'"},
      {"minNearThresholdCount", AML_P_COUNT, 3, 2, 1000, "our default",
       "near-threshold cash transactions needed in the window"},
      {"sameDayMinCount", AML_P_COUNT, 2, 2, 1000, "IND",
       "same-day split: minimum transactions (Prism Labs 'Structuring - Deposits': minimum 2)"}},
     5, 1, "Structuring", 114, "Transaction(s) below CTR threshold", "U.S. Currency",
     {{"FFIEC BSA/AML Manual, Appendix G: Structuring", FFIEC_G},
      {"FinCEN ruling: SAR reporting of structuring",
       "https://fincen.gov/resources/statutes-regulations/administrative-rulings/"
       "suspicious-activity-reporting-structuring"},
      {"Oracle FCCM supported scenarios (SigCash)", ORACLE_SCEN},
      {NULL, NULL}},
     "SAML-D Structuring"},

    {"T02_FUNNEL_ACCOUNT", "T02", "1.0.0", "Funnel account / multi-depositor cash (smurfing, cuckoo smurfing)",
     "An account receives several sub-threshold cash deposits from different people or at branches outside "
     "its home region, and the money leaves again within days.",
     "cash was paid in by several different people or at branches away from the account's home region, and "
     "was moved out shortly afterwards, the pattern FinCEN describes for funnel accounts",
     "several depositors placing cash below the reporting threshold into one account, followed by prompt "
     "withdrawals or transfers elsewhere",
     {"transactions.channel=cash", "transactions.conductor_id|transactions.location_id", "accounts.home_region",
      NULL},
     {"transactions.location_region", NULL},
     {{"ctrThresholdMinor", AML_P_MONEY, 1000000, 100, 1e12, "REG", "deposits counted are each below this"},
      {"windowDays", AML_P_DAYS, 30, 1, 366, "our default", "window for the deposits"},
      {"minDeposits", AML_P_COUNT, 3, 2, 1000, "GUID", "AUSTRAC: 'multiple cash deposits under AUD 10,000'"},
      {"minConductors", AML_P_COUNT, 3, 2, 1000, "GUID", "AUSTRAC: 'deposits from multiple third parties'"},
      {"minOutOfRegionLocations", AML_P_COUNT, 2, 1, 1000, "GUID",
       "FIN-2014-A005: deposits 'at different branches' away from the account's area"},
      {"outflowHours", AML_P_HOURS, 72, 1, 2160, "our default",
       "out-flow counted within this many hours after a deposit ('little time elapsing')"},
      {"minOutflowRatio", AML_P_RATIO, 0.8, 0.1, 2, "our default", "out-flow / deposits"}},
     7, 8, "Money Laundering", 824, "Funnel account", "U.S. Currency",
     {{"FinCEN advisory FIN-2014-A005 (funnel accounts)",
       "https://buckleyfirm.com/blog/2014-05-30/fincen-updates-trade-based-money-laundering-detection-advice"},
      {"AUSTRAC: cuckoo smurfing indicators",
       "https://austrac.gov.au/business/how-comply-guidance-and-resources/guidance-resources/cuckoo-smurfing"},
      {NULL, NULL}},
     "SAML-D Smurfing"},

    {"T03_FAN_IN", "T03", "1.0.0", "Fan-in (many-to-one)",
     "Many unrelated accounts, new to the customer, send money to the account within a short window.",
     "many unrelated senders with no prior relationship to the customer paid into the account within days",
     "collecting funds from many accounts into one account",
     {"transactions.from_acct", "transactions.booked_at", "transactions.amount_base_minor", NULL},
     {"accounts.bank_id", NULL},
     {{"windowDays", AML_P_DAYS, 14, 1, 366, "DS", "AMLSim fan-in periods are 5-20 days"},
      {"minOriginators", AML_P_COUNT, 5, 2, 10000, "DS", "AMLSim fan-in: main account + 4-9 senders"},
      {"minTotalMinor", AML_P_MONEY, 1000000, 0, 1e12, "our default",
       "total received from them (scale down for AMLSim amounts)"},
      {"newCounterpartyLookbackDays", AML_P_DAYS, 90, 0, 3660, "our default",
       "a sender counts only if it had no transaction with the account in this many days before"},
      {"similarAmountsCv", AML_P_RATIO, 0.2, 0, 10, "our default", "booster: coefficient of variation at most this"},
      {"forwardDays", AML_P_DAYS, 7, 1, 366, "our default", "booster: forwarded within this many days"},
      {"forwardRatio", AML_P_RATIO, 0.7, 0.1, 2, "our default", "booster: forwarded share"},
      {"minTransferMinor", AML_P_MONEY, 50000, 0, 1e12, "our default",
       "transfers counted are at least this (USD 500): bills and purchases stay out; scale down for AMLSim"},
      {"warmupDays", AML_P_DAYS, 30, 0, 3660, "our default",
       "observed history needed before a sender can be new (one monthly cycle: rent, invoices recur monthly)"}},
     9, 8, "Money Laundering", 807, "Suspicious use of multiple accounts", "Funds transfer",
     {{"AMLSim alert model (fan-in)", AMLSIM_WIKI},
      {"FFIEC BSA/AML Manual, Appendix F: red flags", FFIEC_F},
      {NULL, NULL}},
     "AMLSim fan_in, AMLworld FAN-IN, SAML-D Fan_In"},

    {"T04_FAN_OUT", "T04", "1.0.0", "Fan-out (one-to-many)",
     "The account sends money to many beneficiaries new to it within a short window.",
     "the account paid out to many beneficiaries it had not paid before, within days",
     "distributing funds from one account to many accounts",
     {"transactions.to_acct", "transactions.booked_at", "transactions.amount_base_minor", NULL},
     {"accounts.bank_id", NULL},
     {{"windowDays", AML_P_DAYS, 14, 1, 366, "DS", "AMLSim fan-out periods are 5-20 days"},
      {"minBeneficiaries", AML_P_COUNT, 5, 2, 10000, "DS", "AMLSim fan-out: main account + 4-9 receivers"},
      {"minTotalMinor", AML_P_MONEY, 1000000, 0, 1e12, "our default", "total sent to them"},
      {"newCounterpartyLookbackDays", AML_P_DAYS, 90, 0, 3660, "our default",
       "a beneficiary counts only if not paid in this many days before (keeps payroll out)"},
      {"similarAmountsCv", AML_P_RATIO, 0.2, 0, 10, "our default", "booster: coefficient of variation at most this"},
      {"fundedWithinDays", AML_P_DAYS, 7, 1, 366, "our default",
       "booster: funded by recent inflows within this many days"},
      {"fundedRatio", AML_P_RATIO, 0.8, 0.1, 2, "our default", "booster: share of the out-flow so funded"},
      {"minTransferMinor", AML_P_MONEY, 50000, 0, 1e12, "our default",
       "transfers counted are at least this (USD 500): bills and purchases stay out; scale down for AMLSim"},
      {"warmupDays", AML_P_DAYS, 30, 0, 3660, "our default",
       "observed history needed before a beneficiary can be new (one monthly cycle: payroll, suppliers)"}},
     9, 8, "Money Laundering", 807, "Suspicious use of multiple accounts", "Funds transfer",
     {{"AMLSim alert model (fan-out)", AMLSIM_WIKI}, {"FFIEC BSA/AML Manual, Appendix F", FFIEC_F}, {NULL, NULL}},
     "AMLSim fan_out, AMLworld FAN-OUT, SAML-D Fan_Out"},

    {"T05_RAPID_MOVEMENT", "T05", "1.0.0", "Rapid movement of funds / pass-through",
     "Credits leave the account again within hours, so that money passes through without staying.",
     "funds credited to the account were moved out again within hours, leaving little balance behind",
     "receiving funds and passing them on almost at once",
     {"transactions.booked_at", "transactions.amount_base_minor", NULL},
     {NULL},
     {{"minCreditMinor", AML_P_MONEY, 300000, 0, 1e12, "our default", "credits considered (USD 3,000)"},
      {"exitHours", AML_P_HOURS, 48, 1, 2160, "IND", "Prism Labs 'Swift Fund Flows' analysis window: 2 days"},
      {"windowDays", AML_P_DAYS, 30, 1, 366, "our default", "window"},
      {"minMatchedCreditsMinor", AML_P_MONEY, 1000000, 0, 1e12, "IND",
       "Prism Labs: minimum aggregate USD 10,000"},
      {"ratioLow", AML_P_RATIO, 0.8, 0, 10, "our default", "debits / credits lower bound"},
      {"ratioHigh", AML_P_RATIO, 1.2, 0, 10, "IND", "Prism Labs: upper limit 1.2"},
      {"maxBalanceChangeRatio", AML_P_RATIO, 0.1, 0, 10, "our default",
       "what stays behind of the passed-through credits, at most this share of them"},
      {"warmupDays", AML_P_DAYS, 30, 0, 3660, "our default",
       "observed history needed before a payee can be new: a debit with less history before it is not counted"},
      {"knownPayeeDays", AML_P_DAYS, 25, 0, 3660, "our default",
       "a payee first paid this many days or more before a debit is established (rent, payroll: a monthly cycle "
       "less short months and weekend shifts), and paying it is not moving funds on"}},
     9, 8, "Money Laundering", 805, "Suspicious EFT/wire transfers", "Funds transfer",
     {{"Oracle FCCM: Rapid Movement of Funds", ORACLE_SCEN},
      {"Prism Labs: Swift Fund Flows",
       "https://docs.prismlabs.ai/docs/testcases/suspicious-transactions/swift-fund-flows"},
      {"FFIEC BSA/AML Manual, Appendix F", FFIEC_F328},
      {NULL, NULL}},
     "SAML-D Deposit-Send (partly)"},

    {"T06_MONEY_MULE", "T06", "1.0.0", "Money-mule account",
     "A newly opened account receives transfers and passes on 85-95% of each within days, keeping a "
     "commission.",
     "a recently opened account received transfers and forwarded most of each one within days, keeping a "
     "small share, as money mules are typically instructed to",
     "receiving transfers into a new account and forwarding them minus a commission",
     {"accounts.opened_at", "transactions.booked_at", "transactions.amount_base_minor", NULL},
     {"accounts.opening_deposit_minor", "customers.occupation", NULL},
     {{"maxAccountAgeDays", AML_P_DAYS, 90, 1, 3660, "our default", "account age at the first matched inflow"},
      {"exitHours", AML_P_HOURS, 72, 1, 2160, "our default", "out-flow counted within this many hours"},
      {"minForwardRatio", AML_P_RATIO, 0.85, 0, 2, "GUID", "FDIC: commission 'commonly eight to ten percent'"},
      {"maxForwardRatio", AML_P_RATIO, 0.95, 0, 2, "GUID", "FDIC: commission 'commonly eight to ten percent'"},
      {"minInflowMinor", AML_P_MONEY, 100000, 0, 1e12, "our default", "inflows considered (USD 1,000)"},
      {"minTotalMinor", AML_P_MONEY, 500000, 0, 1e12, "our default", "matched inflows in total (USD 5,000)"}},
     6, 8, "Money Laundering", 805, "Suspicious EFT/wire transfers", "Funds transfer",
     {{"FDIC special alert on money mules (Oct 2009)",
       "http://amlabc.com/aml-category/aml-news/fdic-warns-banks-of-money-mule-bank-customers/"},
      {"Money mule schemes", "https://www.bankinfosecurity.com/money-mule-schemes-how-to-protect-customers-a-1899"},
      {NULL, NULL}},
     "-"},

    {"T07_CYCLE", "T07", "1.0.0", "Cycle / round-tripping",
     "Money leaves the account and comes back to it through 1-5 other accounts within a month, most of it "
     "retained at each hop.",
     "funds sent from the account returned to it through a chain of other accounts within a short time, "
     "which has no apparent economic purpose",
     "sending funds around a loop of accounts so that they return to where they started",
     {"transactions.from_acct", "transactions.to_acct", "transactions.booked_at", NULL},
     {NULL},
     {{"maxHops", AML_P_COUNT, 6, 2, 8, "DS", "AMLSim cycles of 3-10 accounts; AMLworld 'Max N hops'"},
      {"windowDays", AML_P_DAYS, 30, 1, 366, "DS", "AMLSim periods up to 20-30 days"},
      {"minRetention", AML_P_RATIO, 0.7, 0, 1, "our default", "each hop forwards at least this share (AMLSim 0.9)"},
      {"maxHopGrowth", AML_P_RATIO, 1.05, 1, 10, "our default", "a hop may not grow the amount beyond this"},
      {"minAmountMinor", AML_P_MONEY, 300000, 0, 1e12, "our default", "first hop at least this (USD 3,000)"},
      {"maxExpansions", AML_P_COUNT, 200, 1, 100000, "engine bound", "accounts whose edges are loaded, at most"},
      {"maxEdgesPerNode", AML_P_COUNT, 200, 1, 100000, "engine bound", "edges loaded per account, at most"}},
     7, 9, "Other suspicious activities", 925,
     "Transaction with no apparent economic, business or lawful purpose", "Funds transfer",
     {{"AMLSim alert model (cycle)", AMLSIM_WIKI}, {"AMLSim generator (cycle, margin_ratio)", AMLSIM_GEN},
      {NULL, NULL}},
     "AMLSim cycle, AMLworld CYCLE, SAML-D Cycle"},

    {"T08_LAYERING", "T08", "1.0.0", "Layering (scatter-gather, gather-scatter, stack, chain, bipartite)",
     "Funds move through layers of intermediate accounts: split and recombined, collected and "
     "redistributed, passed down a chain, or exchanged all-to-all between two groups.",
     "funds were passed through layers of intermediary accounts that forwarded most of what they received "
     "within days, obscuring the origin of the money",
     "moving funds through several layers of accounts in quick succession",
     {"transactions.from_acct", "transactions.to_acct", "transactions.booked_at", NULL},
     {NULL},
     {{"windowDays", AML_P_DAYS, 30, 1, 366, "our default", "window"},
      {"minIntermediates", AML_P_COUNT, 3, 2, 1000, "IND",
       "scatter-gather paths (a public tuned AMLworld rule uses 6; 3 is our floor)"},
      {"forwardRatio", AML_P_RATIO, 0.8, 0, 2, "our default", "an intermediary forwards at least this share"},
      {"forwardHours", AML_P_HOURS, 96, 1, 2160, "IND", "a public tuned AMLworld rule: within 96 h"},
      {"chainMinHops", AML_P_COUNT, 3, 2, 8, "our default", "chain: at least this many hops"},
      {"chainForwardRatio", AML_P_RATIO, 0.7, 0, 2, "our default", "chain: each hop forwards this share"},
      {"chainHours", AML_P_HOURS, 72, 1, 2160, "our default", "chain: each hop within this many hours"},
      {"minBranches", AML_P_COUNT, 3, 2, 1000, "our default", "gather-scatter: originators and beneficiaries each"},
      {"hubMaxInDegree", AML_P_COUNT, 50, 2, 100000, "our default",
       "bipartite: accounts paid by more senders than this are treated as merchants"},
      {"minEdgeMinor", AML_P_MONEY, 100000, 0, 1e12, "our default", "transfers considered (USD 1,000)"},
      {"maxExpansions", AML_P_COUNT, 200, 1, 100000, "engine bound", "accounts whose edges are loaded, at most"},
      {"maxEdgesPerNode", AML_P_COUNT, 200, 1, 100000, "engine bound", "edges loaded per account, at most"},
      {"newCounterpartyLookbackDays", AML_P_DAYS, 90, 0, 3660, "our default",
       "layers are built from new relationships: a counterparty paid in this many days before is not one"},
      {"warmupDays", AML_P_DAYS, 30, 0, 3660, "our default",
       "observed history needed before a counterparty can be new (one monthly cycle)"}},
     14, 8, "Money Laundering", 807, "Suspicious use of multiple accounts", "Funds transfer",
     {{"AMLSim generator (stack, scatter_gather, gather_scatter, bipartite)", AMLSIM_GEN},
      {"AMLSim alert model", AMLSIM_WIKI},
      {NULL, NULL}},
     "AMLSim/AMLworld stack, scatter_gather, gather_scatter, bipartite; SAML-D Layered_*, Stacked Bipartite"},

    {"T09_HIGH_RISK_JURISDICTION", "T09", "1.0.0", "High-risk jurisdiction exposure",
     "Transfers to or from accounts in jurisdictions on a FATF list (dated data, not code) add up beyond a "
     "floor.",
     "the account sent or received funds to or from a jurisdiction that the FATF lists as high-risk or "
     "under increased monitoring",
     "moving funds to or from accounts held in high-risk jurisdictions",
     {"accounts.country", "jurisdiction_lists", NULL},
     {NULL},
     {{"windowDays", AML_P_DAYS, 90, 1, 366, "our default", "window"},
      {"minAggregateMinor", AML_P_MONEY, 300000, 0, 1e12, "REG",
       "USD 3,000: the funds-transfer recordkeeping threshold (31 CFR 1010.410)"},
      {"callForActionScore", AML_P_COUNT, 80, 0, 100, "our default", "base score, FATF call for action"},
      {"increasedMonitoringScore", AML_P_COUNT, 50, 0, 100, "our default", "base score, FATF increased monitoring"}},
     4, 9, "Other suspicious activities", 928, "Transaction(s) involving foreign high risk jurisdiction",
     "Funds transfer",
     {{"FATF: high-risk jurisdictions subject to a call for action (Feb 2024)",
       "https://www.fatf-gafi.org/fr/publications/Juridictions-haut-risques-et-sous-surveillance/"
       "Call-for-action-february-2024.html"},
      {"ABA Banking Journal: FATF list update (Oct 2022)",
       "https://bankingjournal.aba.com/2022/10/international-task-force-updates-lists-of-countries-with-aml-"
       "deficiencies/"},
      {NULL, NULL}},
     "SAML-D high-risk bank locations"},

    {"T10_DORMANT_REACTIVATION", "T10", "1.0.0", "Dormant account with sudden activity",
     "An account without activity for six months or more suddenly moves large amounts.",
     "an account that had been inactive for a long period suddenly saw large deposits and withdrawals",
     "reviving a dormant account to move a large amount of money",
     {"transactions.booked_at", "accounts.opened_at|prior history", NULL},
     {NULL},
     {{"dormantDays", AML_P_DAYS, 180, 1, 3660, "IND", "Tazama rule 003 dormancy bands 3-6, 6-12, >12 months"},
      {"reactivationDays", AML_P_DAYS, 30, 1, 366, "our default", "activity counted after reactivation"},
      {"minReactivationTotalMinor", AML_P_MONEY, 1000000, 0, 1e12, "our default", "credits + debits (USD 10,000)"},
      {"priorMonthlyMultiple", AML_P_RATIO, 5, 1, 1000, "our default",
       "or at least this multiple of the pre-dormancy monthly average"}},
     4, 8, "Money Laundering", 812, "Transaction out of pattern for customer(s)", "Funds transfer",
     {{"FFIEC BSA/AML Manual, Appendix F", FFIEC_F328},
      {"Tazama rule processing (rule 003 dormancy)", "https://github.com/tazama-lf/docs"},
      {NULL, NULL}},
     "-"},

    {"T11_PROFILE_INCONSISTENCY", "T11", "1.0.0", "Activity or cash intensity inconsistent with the profile",
     "Over the last month, cash or total credits are several times what the customer's KYC profile or own "
     "history leads one to expect.",
     "the volume of activity was far above what the customer's stated profile and history would lead one to "
     "expect",
     "moving volumes of money not commensurate with the customer's known income or business",
     {"customers.expected_monthly_cash_minor|expected_monthly_volume_minor or 90 days of history", NULL},
     {"customers.cash_intensive", NULL},
     {{"periodDays", AML_P_DAYS, 30, 1, 366, "our default", "the period examined (end of the window)"},
      {"cashMultiple", AML_P_RATIO, 3, 1, 1000, "our default", "cash credits vs max(history, KYC expected cash)"},
      {"volumeMultiple", AML_P_RATIO, 3, 1, 1000, "our default", "total credits vs KYC expected volume"},
      {"minAmountMinor", AML_P_MONEY, 1000000, 0, 1e12, "our default", "floor for any trigger (USD 10,000)"},
      {"spikeMultiple", AML_P_RATIO, 1.5, 1, 1000, "IND", "Tazama rule 018: > 1.5 x the 3-month maximum"},
      {"baselineDays", AML_P_DAYS, 180, 30, 3660, "IND", "Oracle FCCM: previous average activity (6 months)"},
      {"spikeBaselineDays", AML_P_DAYS, 90, 7, 3660, "IND", "Tazama rule 018: last 3 months"},
      {"minHistoryDays", AML_P_DAYS, 90, 1, 3660, "our default", "history needed when there is no KYC profile"},
      {"cashShareRatio", AML_P_RATIO, 0.5, 0, 1, "our default", "booster: cash share for a non-cash business"}},
     9, 8, "Money Laundering", 812, "Transaction out of pattern for customer(s)", "Funds transfer",
     {{"FFIEC BSA/AML Manual, Appendix F", FFIEC_F328},
      {"Tazama rule processing (rule 018)", "https://github.com/tazama-lf/docs"},
      {"Marble aggregations", "https://github.com/checkmarble/docs"},
      {NULL, NULL}},
     "SAML-D Behavioural_Change_1/2, Cash_Withdrawal, Single_large"},

    {"T12_ROUND_AMOUNTS", "T12", "1.0.0", "Large round-amount transfers",
     "Several large transactions in exact multiples of 1,000 within a month.",
     "several large transactions were for exact round amounts, which is typical of funds not arising from "
     "ordinary commerce",
     "moving money in large, exactly round amounts",
     {"transactions.amount_minor", "transactions.currency", NULL},
     {NULL},
     {{"windowDays", AML_P_DAYS, 30, 1, 366, "our default", "window"},
      {"minAmountMinor", AML_P_MONEY, 500000, 0, 1e12, "our default", "each at least USD 5,000"},
      {"roundUnitMinor", AML_P_MONEY, 100000, 1, 1e12, "IND", "a public rule: amounts ending in 000"},
      {"minCount", AML_P_COUNT, 3, 1, 1000, "our default", "round transactions needed"},
      {"minTotalMinor", AML_P_MONEY, 1500000, 0, 1e12, "our default", "their total (USD 15,000)"}},
     5, 8, "Money Laundering", 812, "Transaction out of pattern for customer(s)", "Funds transfer",
     {{"Oracle FCCM: Transactions in Round Amounts",
       "https://docs.oracle.com/en/industries/financial-services/financial-crime-compliance/"
       "transaction-monitoring-cloud/guid-c00b70f2-5c4d-49bc-9761-0a36fba0cb91/configured-scenario-pipelines.html"},
      {"ACAMS red flag quoted in AMLSim AMLTypology.java", "https://github.com/IBM/AMLSim"},
      {NULL, NULL}},
     "AMLSim fan-in/out rounded amounts"},

    {"T13_THIRD_PARTY", "T13", "1.0.0", "Third-party / straw-man payments",
     "Payments into the account come from several payers who are neither account holders nor known "
     "counterparties, and make up a large share of the credits.",
     "a large share of the money paid into the account came from third parties with no known relationship "
     "to the customer",
     "having unrelated third parties pay money into the customer's account",
     {"transactions.from_acct|transactions.conductor_id", "account_parties", NULL},
     {"trade_documents", NULL},
     {{"windowDays", AML_P_DAYS, 30, 1, 366, "our default", "window"},
      {"knownLookbackDays", AML_P_DAYS, 180, 0, 3660, "our default", "a payer seen in this many days is known"},
      {"minPayers", AML_P_COUNT, 3, 1, 10000, "GUID", "AUSTRAC: deposits from multiple third parties"},
      {"minValueShare", AML_P_RATIO, 0.3, 0, 1, "our default", "their share of the credits"},
      {"minCreditMinor", AML_P_MONEY, 50000, 0, 1e12, "our default", "credits counted are at least this (USD 500)"},
      {"warmupDays", AML_P_DAYS, 30, 0, 3660, "our default",
       "observed history needed before a payer can be unknown (one monthly cycle: salary, family support)"},
      {"minTotalMinor", AML_P_MONEY, 300000, 0, 1e12, "REG",
       "from unknown payers in the window, at least USD 3,000: the funds-transfer recordkeeping threshold "
       "(31 CFR 1010.410); small gifts from relatives stay out"}},
     7, 8, "Money Laundering", 809, "Suspicious use of third-party transactions (straw-man)", "Funds transfer",
     {{"FFIEC BSA/AML Manual, Appendix F", FFIEC_F},
      {"FATF-Egmont TBML risk indicators (2021)",
       "https://amlnewsflow.coastlinesolutions.com/2021/03/15/fatf-and-egmont-release-trade-based-money-"
       "laundering-risk-indicators/"},
      {NULL, NULL}},
     "-"},

    {"T14_TBML", "T14", "1.0.0", "Trade-based money laundering indicators (partial)",
     "Payments linked to trade documents differ from the invoiced amount, or are made by or to someone "
     "other than the invoiced party. Without trade documents this is not evaluable.",
     "payments for traded goods did not match the invoices they settle, in amount or in the paying party",
     "over- or under-invoicing, or settling invoices through unrelated parties",
     {"trade_documents", NULL},
     {NULL},
     {{"mismatchRatio", AML_P_RATIO, 0.2, 0, 100, "our default", "payment vs invoice difference flagged above this"}},
     1, 8, "Money Laundering", 823, "Trade Based Money Laundering/Black Market Peso Exchange", "Funds transfer",
     {{"FATF-Egmont: Trade-Based Money Laundering Risk Indicators (March 2021)",
       "https://www.readkong.com/page/risk-indicators-trade-based-money-laundering-march-2021-3330966"},
      {NULL, NULL}},
     "SAML-D Over-Invoicing"},

    {"T15_SANCTIONS_EXPOSURE", "T15", "1.0.0", "Sanctions and PEP exposure",
     "An account's customers or the external counterparties it transacted with in the window match an "
     "entity on the loaded sanctions / PEP lists (screening at the threshold, hits reviewed and dismissed "
     "as false left out). Without a loaded list this is not evaluable.",
     "the account's holder or a counterparty it paid or was paid by matches a person or entity on a "
     "sanctions or politically exposed persons list",
     "moving funds to, from or on behalf of a listed person or entity",
     {"screening_entities", "accounts.holder_name|customers.full_name", NULL},
     {"customers.date_of_birth", "customers.country", "accounts.country", NULL},
     {{"threshold", AML_P_RATIO, 0.7, 0.5, 1, "IND",
       "screening score for a hit; the screenEntity default (moov-io watchman: Jaro-Winkler 0.80 at precision "
       "0.99 on labelled pairs; ours is a weighted score, docs/aml.md Screening)"},
      {"maxParties", AML_P_COUNT, 500, 1, 100000, "engine bound",
       "parties screened per account (its customers first, then counterparties by account number)"}},
     2, 9, "Other suspicious activities", 999, "Other: transaction(s) with a party on a sanctions or PEP list",
     "Funds transfer",
     {{"31 CFR Part 501 (OFAC reporting, procedures and penalties)",
       "https://www.ecfr.gov/current/title-31/subtitle-B/chapter-V/part-501"},
      {"FATF Recommendation 6 (targeted financial sanctions) and 12 (PEPs)",
       "https://www.fatf-gafi.org/en/publications/Fatfrecommendations/Fatf-recommendations.html"},
      {"OpenSanctions yente matching (logic-v1)", "https://www.opensanctions.org/docs/api/matching/"},
      {NULL, NULL}},
     "-"},
};

const aml_typology_def *aml_catalog(void)
{
    return catalog;
}

int aml_typology_index(const char *id, size_t n)
{
    for (int i = 0; i < AML_NTYP; i++) {
        if ((strlen(catalog[i].id) == n && memcmp(catalog[i].id, id, n) == 0) ||
            (strlen(catalog[i].code) == n && memcmp(catalog[i].code, id, n) == 0))
            return i;
    }
    return -1;
}

void aml_params_default(aml_params *p)
{
    memset(p, 0, sizeof *p);
    for (int t = 0; t < AML_NTYP; t++)
        for (size_t i = 0; i < catalog[t].nparams; i++)
            p->v[t][i] = catalog[t].params[i].def;
}

static int integral(aml_param_kind k)
{
    return k != AML_P_RATIO;
}

int aml_params_apply(aml_params *p, const mcp_json *overrides, aml_err *err)
{
    if (!overrides || mcp_json_typeof(overrides) == MCP_JSON_NULL)
        return 0;
    if (mcp_json_typeof(overrides) != MCP_JSON_OBJECT)
        return aml_errf(err, "parameters must be an object keyed by typology id");
    for (size_t i = 0; i < mcp_json_len(overrides); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(overrides, i, &kl);
        int t = aml_typology_index(k, kl);
        if (t < 0)
            return aml_errf(err, "parameters: unknown typology '%.40s'", k);
        const mcp_json *obj = mcp_json_value_at(overrides, i);
        if (mcp_json_typeof(obj) != MCP_JSON_OBJECT)
            return aml_errf(err, "parameters.%s must be an object", catalog[t].id);
        for (size_t j = 0; j < mcp_json_len(obj); j++) {
            size_t pl;
            const char *pk = mcp_json_key_at(obj, j, &pl);
            const mcp_json *v = mcp_json_value_at(obj, j);
            size_t pi = 0;
            while (pi < catalog[t].nparams &&
                   !(strlen(catalog[t].params[pi].name) == pl && memcmp(catalog[t].params[pi].name, pk, pl) == 0))
                pi++;
            if (pi == catalog[t].nparams)
                return aml_errf(err, "parameters.%s: unknown parameter '%.40s'", catalog[t].id, pk);
            const aml_param_def *d = &catalog[t].params[pi];
            mcp_json_type ty = mcp_json_typeof(v);
            if (ty != MCP_JSON_INT && !(ty == MCP_JSON_REAL && !integral(d->kind)))
                return aml_errf(err, "parameters.%s.%s must be %s", catalog[t].id, d->name,
                                integral(d->kind) ? "an integer" : "a number");
            double x = mcp_json_number(v);
            if (!(x >= d->min && x <= d->max))
                return aml_errf(err, "parameters.%s.%s = %g is outside [%g, %g]", catalog[t].id, d->name, x, d->min,
                                d->max);
            p->v[t][pi] = x;
        }
    }
    return 0;
}

static void write_num(mcp_jw *w, aml_param_kind k, double v)
{
    if (integral(k))
        mcp_jw_int(w, (int64_t)llround(v));
    else
        mcp_jw_double(w, v);
}

void aml_params_write(mcp_jw *w, const aml_params *p, int typ)
{
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < catalog[typ].nparams; i++) {
        mcp_jw_key(w, catalog[typ].params[i].name);
        write_num(w, catalog[typ].params[i].kind, p->v[typ][i]);
    }
    mcp_jw_object_end(w);
}

void aml_params_sha256(const aml_params *p, char *out)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    for (int t = 0; t < AML_NTYP; t++) {
        mcp_jw_key(&w, catalog[t].id);
        aml_params_write(&w, p, t);
    }
    mcp_jw_object_end(&w);
    aml_sha256_hex(b.data ? b.data : "", b.len, out);
    mcp_buf_cleanup(&b);
}

void aml_sar_category_write(mcp_jw *w, int typ, int with_labels)
{
    const aml_typology_def *d = &catalog[typ];
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "typeCode");
    mcp_jw_int(w, d->type_code);
    if (with_labels) {
        mcp_jw_key(w, "type");
        mcp_jw_string(w, d->type);
    }
    mcp_jw_key(w, "subtypeCode");
    mcp_jw_int(w, d->subtype_code);
    if (with_labels) {
        mcp_jw_key(w, "subtype");
        mcp_jw_string(w, d->subtype);
    }
    mcp_jw_object_end(w);
}

static const char *kind_unit(aml_param_kind k)
{
    switch (k) {
    case AML_P_COUNT: return "count";
    case AML_P_MONEY: return "USD cents";
    case AML_P_RATIO: return "ratio";
    case AML_P_DAYS: return "days";
    case AML_P_HOURS: return "hours";
    }
    return "";
}

static void str_array(mcp_jw *w, const char *const *a)
{
    mcp_jw_array_begin(w);
    for (; *a; a++)
        mcp_jw_string(w, *a);
    mcp_jw_array_end(w);
}

void aml_catalog_write(mcp_jw *w)
{
    aml_params def;
    aml_params_default(&def);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "catalogVersion");
    mcp_jw_string(w, AML_CATALOG_VERSION);
    mcp_jw_key(w, "engineVersion");
    mcp_jw_string(w, AML_ENGINE_VERSION);
    mcp_jw_key(w, "typologies");
    mcp_jw_array_begin(w);
    for (int t = 0; t < AML_NTYP; t++) {
        const aml_typology_def *d = &catalog[t];
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "id");
        mcp_jw_string(w, d->id);
        mcp_jw_key(w, "code");
        mcp_jw_string(w, d->code);
        mcp_jw_key(w, "version");
        mcp_jw_string(w, d->version);
        mcp_jw_key(w, "name");
        mcp_jw_string(w, d->name);
        mcp_jw_key(w, "summary");
        mcp_jw_string(w, d->summary);
        mcp_jw_key(w, "requiredInputs");
        str_array(w, d->required_inputs);
        mcp_jw_key(w, "optionalInputs");
        str_array(w, d->optional_inputs);
        mcp_jw_key(w, "defaultParams");
        aml_params_write(w, &def, t);
        mcp_jw_key(w, "parameters");
        mcp_jw_array_begin(w);
        for (size_t i = 0; i < d->nparams; i++) {
            const aml_param_def *pd = &d->params[i];
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "name");
            mcp_jw_string(w, pd->name);
            mcp_jw_key(w, "unit");
            mcp_jw_string(w, kind_unit(pd->kind));
            mcp_jw_key(w, "default");
            write_num(w, pd->kind, pd->def);
            mcp_jw_key(w, "min");
            write_num(w, pd->kind, pd->min);
            mcp_jw_key(w, "max");
            write_num(w, pd->kind, pd->max);
            mcp_jw_key(w, "origin");
            mcp_jw_string(w, pd->origin);
            mcp_jw_key(w, "description");
            mcp_jw_string(w, pd->description);
            mcp_jw_object_end(w);
        }
        mcp_jw_array_end(w);
        mcp_jw_key(w, "sarCategory");
        aml_sar_category_write(w, t, 1);
        mcp_jw_key(w, "datasetLabels");
        mcp_jw_string(w, d->dataset_labels);
        mcp_jw_key(w, "sources");
        mcp_jw_array_begin(w);
        for (int s = 0; s < 4 && d->sources[s].title; s++) {
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "title");
            mcp_jw_string(w, d->sources[s].title);
            mcp_jw_key(w, "url");
            mcp_jw_string(w, d->sources[s].url);
            mcp_jw_object_end(w);
        }
        mcp_jw_array_end(w);
        mcp_jw_object_end(w);
    }
    mcp_jw_array_end(w);
    mcp_jw_object_end(w);
}

static void param_props(mcp_jw *w, int t)
{
    const aml_typology_def *d = &catalog[t];
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "object");
    mcp_jw_key(w, "additionalProperties");
    mcp_jw_bool(w, 0);
    mcp_jw_key(w, "properties");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < d->nparams; i++) {
        const aml_param_def *pd = &d->params[i];
        mcp_jw_key(w, pd->name);
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "type");
        mcp_jw_string(w, integral(pd->kind) ? "integer" : "number");
        mcp_jw_key(w, "minimum");
        write_num(w, pd->kind, pd->min);
        mcp_jw_key(w, "maximum");
        write_num(w, pd->kind, pd->max);
        mcp_jw_key(w, "description");
        mcp_jw_string(w, pd->description);
        mcp_jw_object_end(w);
    }
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

void aml_params_schema_write(mcp_jw *w)
{
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "object");
    mcp_jw_key(w, "description");
    mcp_jw_string(w, "Parameter overrides keyed by typology id (or code), e.g. "
                     "{\"T01_STRUCTURING\": {\"windowDays\": 30}}; see listTypologies for defaults.");
    mcp_jw_key(w, "additionalProperties");
    mcp_jw_bool(w, 0);
    mcp_jw_key(w, "properties");
    mcp_jw_object_begin(w);
    for (int t = 0; t < AML_NTYP; t++) {
        mcp_jw_key(w, catalog[t].id);
        param_props(w, t);
        mcp_jw_key(w, catalog[t].code);
        param_props(w, t);
    }
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}
