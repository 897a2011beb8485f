// What the Node client tests share (knex_test.js, typeorm_test.js,
// sequelize_test.js, drizzle_test.js, pgp_test.js): TAP output, a database of
// their own, and the values they check cosid's answers against, computed here
// in JavaScript (SNOWFLAKE_MS fields, base 62 text, UUID version 7 bits).
'use strict';
const pg = require('pg');

let tests = 0;
let failed = 0;
const show = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : x));
function ok(cond, name, diag) {
  tests++;
  console.log(`${cond ? 'ok' : 'not ok'} ${tests} - ${name}`);
  if (!cond) {
    failed++;
    if (diag !== undefined) String(diag).split('\n').forEach((l) => console.log(`# ${l}`));
  }
  return cond;
}
function eq(got, expected, name) {
  return ok(show(got) === show(expected), name, `got:      ${show(got)}\nexpected: ${show(expected)}`);
}
// run(main): main's checks, then the plan; an exception is a failed test
function run(main) {
  main()
    .catch((e) => ok(false, 'no exception', e && e.stack))
    .finally(() => {
      console.log(`1..${tests}`);
      process.exitCode = failed ? 1 : 0;
    });
}

// DROP and CREATE DATABASE name, as the PG* environment's superuser
async function freshDatabase(name) {
  const admin = new pg.Client({ database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

// the connection the PG* variables describe, for clients that want its parts
const conn = {
  host: process.env.PGHOST || '127.0.0.1',
  port: Number(process.env.PGPORT || 5432),
  user: process.env.PGUSER || 'postgres',
};

// SNOWFLAKE_MS (cosid's default layout): 41 bits of ms since 2019-12-24T16:00Z, 10 of node, 12 of sequence
const EPOCH_MS = 1577203200000n;
function snowflake(id) {
  const n = BigInt(id);
  return { time: new Date(Number(EPOCH_MS + (n >> 22n))).toISOString(), node: Number((n >> 12n) & 1023n), seq: Number(n & 4095n) };
}
// CosId's radix 62 text of a bigint ('0-9A-Za-z', no padding): the codec [{"radix": 62}]
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function radix62(id) {
  let n = BigInt(id);
  let s = '';
  do {
    s = DIGITS[Number(n % 62n)] + s;
    n /= 62n;
  } while (n > 0n);
  return s;
}
// a UUID of version 7 and variant 10 whose 48-bit time is within a minute of now: its time, else null
function uuidv7Time(text) {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.exec(text);
  if (!m) return null;
  const ms = parseInt(m[1] + m[2], 16);
  return Math.abs(Date.now() - ms) < 60000 ? ms : null;
}
const ULID_TEXT = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
// 2^53: a JavaScript number holds every integer up to it, and SNOWFLAKE_MS ids are above it
const SAFE = 2n ** 53n;

module.exports = { ok, eq, show, run, freshDatabase, conn, snowflake, radix62, uuidv7Time, ULID_TEXT, SAFE };

// What cosid_encode, cosid_decode, cosid_unpack and their _with and _text forms give for an id of the generator
// 'invoice' ({"strategy": "snowflake", "codec": [{"radix": 62}]}), and the same from a client's rows
const CODEC = '[{"radix": 62}]';
function codecWanted(id) {
  const text = radix62(id);
  return { encode: text, decode: String(id), unpack: snowflake(id), encode_with: text, decode_with: String(id), unpack_text: snowflake(id) };
}
// an unpack row as codecWanted has it: time as ISO text, node and seq as numbers
const fields = (row) => ({ time: new Date(row.time).toISOString(), node: Number(row.node), seq: Number(row.seq) });

module.exports.CODEC = CODEC;
module.exports.codecWanted = codecWanted;
module.exports.fields = fields;
