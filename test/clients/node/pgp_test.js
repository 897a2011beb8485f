#!/usr/bin/env node
// pg-promise 12 against cosid (TAP): int8 parsed as BigInt, inserts that take
// id, ref and token from the column DEFAULTs (helpers.insert ... RETURNING),
// ulid values as parameters, results and in WHERE, gen_uuidv7() tokens, and
// cosid_encode/decode/unpack with the _with forms both ways pg-promise passes
// values: formatted into the query text ($1, ${name}) and as parameters of a
// prepared statement (sent untyped).  pg-promise has no schema tool: plain DDL.
// Connects with the PG* environment variables as a superuser; database cosid_pgp.
'use strict';
const { ulid, monotonicFactory } = require('ulid');
const { ok, eq, show, run, freshDatabase, uuidv7Time, ULID_TEXT, SAFE, CODEC, codecWanted, fields } = require('./common');

const pgp = require('pg-promise')();
// int8 (oid 20) as BigInt: SNOWFLAKE_MS ids are above 2^53
pgp.pg.types.setTypeParser(20, BigInt);

run(async () => {
  await freshDatabase('cosid_pgp');
  const db = pgp({ database: 'cosid_pgp' });
  try {
    await db.none(`
      CREATE EXTENSION cosid;
      SELECT cosid_define('invoice', '{"strategy": "snowflake", "codec": [{"radix": 62}]}');
      CREATE TABLE invoices (
        id    bigint PRIMARY KEY DEFAULT cosid_next('invoice'),
        ref   ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
        token uuid NOT NULL DEFAULT gen_uuidv7(),
        item  text NOT NULL)`);

    // one multi-row INSERT: the columns left out take their DEFAULTs
    const items = Array.from({ length: 20 }, (_, i) => ({ item: `item-${i}` }));
    const rows = await db.many(`${pgp.helpers.insert(items, ['item'], 'invoices')} RETURNING id, ref, token, item`);
    const ids = rows.map((r) => r.id);
    ok(ids.every((id) => typeof id === 'bigint' && id > SAFE), 'ids come back as BigInt, each above 2^53', show(ids));
    ok(ids.every((id, i) => i === 0 || ids[i - 1] < id), '20 ids, increasing');
    ok(rows.every((r) => ULID_TEXT.test(r.ref)), 'ref is ULID text from gen_ulid_monotonic()', show(rows.map((r) => r.ref)));
    ok(rows.every((r) => uuidv7Time(r.token) !== null), 'token is a UUID version 7 of now from gen_uuidv7()');
    const exact = await db.map('SELECT id::text FROM invoices ORDER BY id', [], (r) => r.id);
    eq(exact, ids.map(String), 'the BigInt ids are exactly what the server holds');
    const byId = [];
    for (const r of rows) byId.push(await db.one('SELECT * FROM invoices WHERE id = $1', [r.id]));
    eq(byId, rows, 'a BigInt formatted into the query finds each row, equal to what RETURNING gave');
    const byIdPrepared = [];
    for (const r of rows) byIdPrepared.push((await db.one({ name: 'by-id', text: 'SELECT item FROM invoices WHERE id = $1', values: [r.id] })).item);
    eq(byIdPrepared, rows.map((r) => r.item), 'a BigInt as a prepared statement parameter finds each row');

    // ULIDs from the client, both ways and in WHERE
    const next = monotonicFactory();
    const made = Array.from({ length: 5 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
    made.push({ ref: ulid(), item: 'client-plain' });
    const stored = await db.many(`${pgp.helpers.insert(made, ['ref', 'item'], 'invoices')} RETURNING id, ref, item`);
    eq(stored.map((r) => [r.ref, r.item]), made.map((m) => [m.ref, m.item]), 'ULIDs from the ulid package go in and come back equal');
    ok(stored.every((r) => r.id > SAFE), 'their ids still come from cosid_next');
    const found = [];
    for (const m of made) found.push((await db.one('SELECT item FROM invoices WHERE ref = ${ref}', m)).item);
    eq(found, made.map((m) => m.item), 'WHERE ref = ${ref} with a ULID text finds each row');
    const some = await db.map('SELECT item FROM invoices WHERE ref IN ($1:csv) ORDER BY ref', [made.slice(1, 4).map((m) => m.ref)], (r) => r.item);
    eq(some, made.slice(1, 4).map((m) => m.item), 'WHERE ref IN ($1:csv) with ULID texts');
    const any = await db.map({ name: 'by-refs', text: 'SELECT item FROM invoices WHERE ref = ANY($1) ORDER BY ref', values: [made.map((m) => m.ref)] }, undefined, (r) => r.item);
    eq(any, [...made].sort((a, b) => (a.ref < b.ref ? -1 : 1)).map((m) => m.item), 'an array of ULID texts as a ulid[] prepared statement parameter: ref = ANY($1)');

    // the codec functions: values formatted into the text, and prepared statement parameters (untyped)
    const id = ids[0];
    const formatted = await db.one(`SELECT cosid_encode($1, $2) AS encode, cosid_decode($1, cosid_encode($1, $2)) AS decode,
      cosid_encode_with($2, $3) AS encode_with, cosid_decode_with(cosid_encode($1, $2), $3) AS decode_with`, ['invoice', id, CODEC]);
    eq({ ...formatted, decode: String(formatted.decode), decode_with: String(formatted.decode_with) },
      (({ encode, decode, encode_with, decode_with }) => ({ encode, decode, encode_with, decode_with }))(codecWanted(id)),
      'cosid_encode, cosid_decode and the _with forms with formatted values');
    const enc = (await db.one({ name: 'encode', text: 'SELECT cosid_encode($1, $2) AS txt', values: ['invoice', id] })).txt;
    const dec = (await db.one({ name: 'decode', text: 'SELECT cosid_decode($1, $2) AS id', values: ['invoice', enc] })).id;
    const unpacked = await db.one({ name: 'unpack', text: 'SELECT * FROM cosid_unpack($1, $2)', values: ['invoice', id] });
    const encWith = (await db.one({ name: 'encode-with', text: 'SELECT cosid_encode_with($1, $2) AS txt', values: [id, CODEC] })).txt;
    const decWith = (await db.one({ name: 'decode-with', text: 'SELECT cosid_decode_with($1, $2) AS id', values: [enc, CODEC] })).id;
    const unpackedText = await db.one({ name: 'unpack-text', text: 'SELECT * FROM cosid_unpack_text($1, $2)', values: ['invoice', enc] });
    eq({ encode: enc, decode: String(dec), unpack: fields(unpacked), encode_with: encWith, decode_with: String(decWith), unpack_text: fields(unpackedText) },
      codecWanted(id), 'cosid_encode, cosid_decode, cosid_unpack and the _with/_text forms as prepared statements');
    ok(typeof dec === 'bigint' && dec === id, 'cosid_decode gives the id back as the same BigInt');
  } finally {
    await db.$pool.end();
  }
});
