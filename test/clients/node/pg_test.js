#!/usr/bin/env node
// node-postgres (pg) and ulid from npm against cosid (TAP): bigint ids above
// 2^53 come back as strings, cosid_is_js_safe, the JS_SAFE_MS layout read as
// JavaScript numbers, ULIDs made by the ulid package, a ulid[] parser.
// Connects with the PG* environment variables, as a superuser, and makes its
// own database, cosid_node.  The server needs cosid.machine_bits = 3 (or less)
// for JS_SAFE_MS.  Modules: ./node_modules, else NODE_PATH (scripts/test.sh).
'use strict';
const pg = require('pg');
const { ulid, monotonicFactory, decodeTime, ulidToUUID, uuidToULID } = require('ulid');

let tests = 0;
let failed = 0;
function ok(cond, name, diag) {
  tests++;
  console.log(`${cond ? 'ok' : 'not ok'} ${tests} - ${name}`);
  if (!cond) {
    failed++;
    if (diag !== undefined) String(diag).split('\n').forEach((l) => console.log(`# ${l}`));
  }
  return cond;
}
const show = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : x));
function eq(got, expected, name) {
  return ok(show(got) === show(expected), name, `got:      ${show(got)}\nexpected: ${show(expected)}`);
}

// int8 as a JavaScript number when it is one exactly, else as a BigInt
function int8(text) {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

// ulid[] arrives as text, '{01H...,01H...}': parse it as pg parses text[] (oid 1009)
async function registerUlidArray(client) {
  const { rows } = await client.query("SELECT 'ulid[]'::regtype::oid AS oid");
  client.setTypeParser(Number(rows[0].oid), 'text', pg.types.getTypeParser(1009, 'text'));
}

async function main() {
  const admin = new pg.Client({ database: 'postgres' });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS cosid_node');
  await admin.query('CREATE DATABASE cosid_node');
  await admin.end();

  const client = new pg.Client({ database: 'cosid_node' });
  await client.connect();
  await client.query(`
    CREATE EXTENSION cosid;
    SELECT cosid_define('order', '{"strategy": "snowflake"}');
    SELECT cosid_define('js_order', '{"layout": "JS_SAFE_MS"}');
    CREATE TABLE orders (
      id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
      ref  ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
      item text NOT NULL);
    CREATE TABLE js_orders (
      id   bigint PRIMARY KEY DEFAULT cosid_next('js_order'),
      item text NOT NULL)`);

  // snowflake ids: bigint above 2^53, strings by default
  const returned = [];
  for (let i = 0; i < 20; i++) {
    const { rows } = await client.query('INSERT INTO orders (item) VALUES ($1) RETURNING id, ref, item', [`item-${i}`]);
    returned.push(rows[0]);
  }
  const ids = returned.map((r) => r.id);
  ok(ids.every((id) => typeof id === 'string' && /^[0-9]+$/.test(id)), 'int8 ids come back as strings', show(ids));
  ok(ids.every((id) => BigInt(id) > 2n ** 53n && !Number.isSafeInteger(Number(id))),
    'snowflake ids are above 2^53: Number(id) would not hold them exactly', show(ids));
  ok(ids.every((id, i) => i === 0 || BigInt(ids[i - 1]) < BigInt(id)), '20 ids, increasing (as BigInt)');
  ok(returned.every((r) => typeof r.ref === 'string' && r.ref.length === 26), 'a ulid comes back as its ULID text');
  const safe = await client.query('SELECT array_agg(cosid_is_js_safe(id) ORDER BY id) AS safe FROM orders');
  eq(safe.rows[0].safe, ids.map(() => false), 'cosid_is_js_safe(id) is false for each of them');
  const back = await client.query('SELECT id, ref, item FROM orders ORDER BY id');
  eq(back.rows, returned, 'every row read back equals what RETURNING gave');
  const byId = [];
  for (const id of ids) byId.push((await client.query('SELECT item FROM orders WHERE id = $1', [id])).rows[0].item);
  eq(byId, returned.map((r) => r.item), 'an id string as a parameter finds its row');

  // BigInt or number: a per-client int8 parser
  const typed = new pg.Client({
    database: 'cosid_node',
    types: { getTypeParser: (oid, format) => (oid === pg.types.builtins.INT8 ? int8 : pg.types.getTypeParser(oid, format)) },
  });
  await typed.connect();
  const big = await typed.query('SELECT id FROM orders ORDER BY id');
  eq(big.rows.map((r) => r.id), ids.map(BigInt), 'with the int8 parser: snowflake ids are BigInt, exactly');
  const byBig = [];
  for (const id of ids.map(BigInt)) byBig.push((await typed.query('SELECT item FROM orders WHERE id = $1', [id])).rows[0].item);
  eq(byBig, returned.map((r) => r.item), 'a BigInt id as a parameter finds its row');

  // JS_SAFE_MS: 41 time bits, 3 node bits, 9 sequence bits, 53 bits in all
  const bits = await client.query("SHOW cosid.machine_bits");
  eq(bits.rows[0]['cosid.machine_bits'], '3', 'the server has cosid.machine_bits = 3, as JS_SAFE_MS needs');
  const jsRows = [];
  for (let i = 0; i < 20; i++) {
    jsRows.push((await typed.query('INSERT INTO js_orders (item) VALUES ($1) RETURNING id, item', [`js-${i}`])).rows[0]);
  }
  ok(jsRows.every((r) => typeof r.id === 'number' && Number.isSafeInteger(r.id)),
    'JS_SAFE_MS ids are JavaScript numbers (safe integers) with the int8 parser', show(jsRows));
  ok(jsRows.every((r, i) => i === 0 || jsRows[i - 1].id < r.id), '20 JS_SAFE_MS ids, increasing');
  const jsSafe = await typed.query('SELECT bool_and(cosid_is_js_safe(id)) AS safe, max(id) < 2^53 AS below FROM js_orders');
  eq(jsSafe.rows[0], { safe: true, below: true }, 'cosid_is_js_safe is true for each, and each is below 2^53');
  const unpack = await typed.query("SELECT * FROM cosid_unpack('js_order', $1::bigint)", [jsRows[0].id]);
  const u = unpack.rows[0];
  const id = jsRows[0].id;
  const epoch = 1577203200000; // 2019-12-24T16:00:00Z
  ok(u.time.getTime() === epoch + Math.floor(id / 4096) && u.node === Math.floor(id / 512) % 8 && u.node === 0 &&
     u.seq === id % 512 && Math.abs(Date.now() - u.time.getTime()) < 60000,
  'a JS_SAFE_MS id is (ms since 2019-12-24T16:00Z) * 2^12 + node * 2^9 + seq: node 0, made now', show(u));
  const byNumber = [];
  for (const r of jsRows) byNumber.push((await typed.query('SELECT item FROM js_orders WHERE id = $1', [r.id])).rows[0].item);
  eq(byNumber, jsRows.map((r) => r.item), 'a number id as a parameter finds its row');
  await typed.end();

  // ULIDs from the ulid package, and the server's read by it
  const next = monotonicFactory();
  const made = Array.from({ length: 20 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
  made.push({ ref: ulid(), item: 'client-plain' });
  for (const m of made) await client.query('INSERT INTO orders (ref, item) VALUES ($1, $2)', [m.ref, m.item]);
  const mine = await client.query("SELECT ref, item FROM orders WHERE item LIKE 'client-%' ORDER BY ref");
  eq(mine.rows, [...made].sort((a, b) => (a.ref < b.ref ? -1 : 1)), 'ulid() and monotonicFactory() ULIDs stored, read back, in the same order');
  const times = await client.query(
    'SELECT ref, (extract(epoch FROM ulid_time(ref)) * 1000)::bigint::float8 AS ms, ref::uuid::text AS uuid FROM orders ORDER BY id');
  eq(times.rows.map((r) => [decodeTime(r.ref), ulidToUUID(r.ref).toLowerCase(), uuidToULID(r.uuid)]),
    times.rows.map((r) => [r.ms, r.uuid, r.ref]),
    "decodeTime is ulid_time, ulidToUUID is ref::uuid and uuidToULID gives the ULID back, for every row");

  // ulid[]
  const raw = await client.query('SELECT array_agg(ref ORDER BY id) AS refs FROM orders');
  ok(typeof raw.rows[0].refs === 'string' && raw.rows[0].refs.startsWith('{'), 'without a parser, ulid[] is text', raw.rows[0].refs);
  await registerUlidArray(client);
  const all = (await client.query('SELECT ref FROM orders ORDER BY id')).rows.map((r) => r.ref);
  const arr = await client.query("SELECT array_agg(ref ORDER BY id) AS refs, '{}'::ulid[] AS empty, ARRAY[NULL, $1::ulid] AS nulls FROM orders", [all[0]]);
  eq(arr.rows[0], { refs: all, empty: [], nulls: [null, all[0]] }, 'with the parser, ulid[] is an array of ULID texts (empty, NULL elements)');
  const some = returned.slice(3, 8);
  const any = await client.query('SELECT array_agg(item ORDER BY id) AS items FROM orders WHERE ref = ANY($1)', [some.map((r) => r.ref)]);
  eq(any.rows[0].items, some.map((r) => r.item), 'an array of ULID texts as a ulid[] parameter: WHERE ref = ANY($1)');

  await client.end();
}

main()
  .catch((e) => ok(false, 'no exception', e && e.stack))
  .finally(() => {
    console.log(`1..${tests}`);
    process.exitCode = failed ? 1 : 0;
  });
