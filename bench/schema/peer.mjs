// Peers of bench_schema: the same cases (bench/schema/cases/) validated by
// ajv 8 in 2020-12 mode (ajv/dist/2020, schemas compiled to JavaScript) and
// by @cfworker/json-schema (an interpreter, draft "2020-12"), measured the
// way bench_schema.c measures libmcp:
//   check  stop at the first violation (ajv allErrors: false, cfworker
//          shortCircuit: true);
//   full   every violation (ajv allErrors: true, cfworker shortCircuit: false).
// Schemas are compiled and instances parsed before timing; `format` stays an
// annotation (ajv validateFormats: false; the cases use no `format`).
//
// usage: node bench/schema/peer.mjs [CASES_DIR]
// Output: '#' comment lines, then one line per figure:
//   PEER CASE INSTANCE MODE VALIDATIONS_PER_SECOND VIOLATIONS
// The packages come from bench/peers (npm ci --prefix bench/peers).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "peers", "package.json"));
const ajvModule = require("ajv/dist/2020");
const Ajv2020 = ajvModule.default ?? ajvModule;
const { Validator } = require("@cfworker/json-schema");
const ajvVersion = require("ajv/package.json").version;
const cfVersion = require("@cfworker/json-schema/package.json").version;

const ROUNDS = 7;
const ROUND_SECONDS = 0.1;
const WARMUP_SECONDS = 0.3;

const casesDir = process.argv[2] ?? join(here, "cases");
const load = (name, what) => JSON.parse(readFileSync(join(casesDir, `${name}.${what}.json`), "utf8"));

let sink = 0; // keeps results observable

const now = () => Number(process.hrtime.bigint()) / 1e9;

// Best validations per second over ROUNDS rounds, in batches sized so that
// reading the clock costs nothing measurable, after a JIT warm-up.
function measure(fn, instance, want) {
  const t0 = now();
  let batch = 1;
  for (;;) {
    const s = now();
    for (let i = 0; i < batch; i++) {
      if (fn(instance) !== want) throw new Error("unexpected validation result");
    }
    if (now() - s >= 0.002 && now() - t0 >= WARMUP_SECONDS) break;
    if (now() - s < 0.002) batch *= 2;
  }
  let best = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let iters = 0;
    const s = now();
    let t;
    do {
      for (let i = 0; i < batch; i++) sink += fn(instance) ? 1 : 0;
      iters += batch;
      t = now();
    } while (t - s < ROUND_SECONDS);
    best = Math.max(best, iters / (t - s));
  }
  return best;
}

function peers(schema) {
  const ajvFirst = new Ajv2020({ allErrors: false, validateFormats: false }).compile(schema);
  const ajvAll = new Ajv2020({ allErrors: true, validateFormats: false }).compile(schema);
  const cfFirst = new Validator(schema, "2020-12", true);
  const cfAll = new Validator(schema, "2020-12", false);
  return [
    {
      name: "ajv",
      check: (v) => ajvFirst(v),
      full: (v) => {
        const ok = ajvAll(v);
        if (!ok) sink += ajvAll.errors.length;
        return ok;
      },
      count: (v) => (ajvAll(v) ? 0 : ajvAll.errors.length),
    },
    {
      name: "cfworker",
      check: (v) => cfFirst.validate(v).valid,
      full: (v) => {
        const r = cfAll.validate(v);
        sink += r.errors.length;
        return r.valid;
      },
      count: (v) => cfAll.validate(v).errors.length,
    },
  ];
}

console.log(`# peer.mjs: node ${process.version}, ajv ${ajvVersion}, @cfworker/json-schema ${cfVersion}; ` +
  `best of ${ROUNDS} rounds of ${ROUND_SECONDS} s`);
for (const name of ["tool", "composed"]) {
  const schema = load(name, "schema");
  const list = peers(schema);
  for (const which of ["valid", "invalid"]) {
    const instance = load(name, which);
    const want = which === "valid";
    for (const p of list) {
      const n = p.count(instance);
      if ((n === 0) !== want) throw new Error(`${p.name}: ${name}.${which}: unexpected result`);
      console.log(`${p.name} ${name} ${which} check ${measure(p.check, instance, want).toFixed(0)} ${want ? 0 : 1}`);
      console.log(`${p.name} ${name} ${which} full ${measure(p.full, instance, want).toFixed(0)} ${n}`);
    }
  }
}
if (sink < 0) console.log(sink);
