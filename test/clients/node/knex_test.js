#!/usr/bin/env node
// Knex 3 against cosid (TAP): a migration (knex_migrations/) makes the generator
// and the table with the schema builder; inserts take id, ref and token from
// the column DEFAULTs (RETURNING); bigint ids read back exactly (strings, BigInt);
// ulid values as parameters, results and in WHERE; gen_uuidv7() tokens;
// cosid_encode/decode/unpack and the _with forms with Knex's ? bindings.
// Connects with the PG* environment variables as a superuser; database cosid_knex.
'use strict';
const path = require('path');
const { ulid, monotonicFactory, ulidToUUID } = require('ulid');
const { ok, eq, show, run, freshDatabase, snowflake, uuidv7Time, ULID_TEXT, SAFE, CODEC, codecWanted, fields } = require('./common');

run(async () => {
  await freshDatabase('cosid_knex');
  const knex = require('knex')({
    client: 'pg',
    connection: { database: 'cosid_knex' },
    migrations: { directory: path.join(__dirname, 'knex_migrations') },
  });
  try {
    const [, applied] = await knex.migrate.latest();
    eq(applied, ['20260101000000_invoices.js'], 'knex migrate:latest applies the migration');
    const defaults = await knex('information_schema.columns')
      .where({ table_name: 'invoices' }).orderBy('ordinal_position').select('column_name', 'data_type', 'column_default');
    eq(defaults, [
      { column_name: 'id', data_type: 'bigint', column_default: "cosid_next('invoice'::text)" },
      { column_name: 'ref', data_type: 'USER-DEFINED', column_default: 'gen_ulid_monotonic()' },
      { column_name: 'token', data_type: 'uuid', column_default: 'gen_uuidv7()' },
      { column_name: 'item', data_type: 'text', column_default: null },
    ], 'the schema builder wrote the columns and their DEFAULTs');
    const [, again] = await knex.migrate.latest();
    eq(again, [], 'a second migrate:latest does nothing');

    // ids, ULIDs and UUIDs from the DEFAULTs
    const rows = await knex('invoices').insert(Array.from({ length: 20 }, (_, i) => ({ item: `item-${i}` })))
      .returning(['id', 'ref', 'token', 'item']);
    const ids = rows.map((r) => r.id);
    ok(ids.every((id) => typeof id === 'string' && BigInt(id) > SAFE), 'ids come back as strings, each above 2^53', show(ids));
    ok(ids.every((id, i) => i === 0 || BigInt(ids[i - 1]) < BigInt(id)), '20 ids, increasing (as BigInt)');
    ok(rows.every((r) => ULID_TEXT.test(r.ref)) && rows.every((r, i) => i === 0 || rows[i - 1].ref < r.ref),
      'ref is ULID text from gen_ulid_monotonic(), increasing', show(rows.map((r) => r.ref)));
    ok(rows.every((r) => uuidv7Time(r.token) !== null), 'token is a UUID version 7 of now from gen_uuidv7()', show(rows.map((r) => r.token)));
    const exact = await knex('invoices').orderBy('id').select(knex.raw('id::text AS id'));
    eq(exact.map((r) => r.id), ids, 'the ids are exactly what the server holds');
    const byString = [];
    const byBigInt = [];
    for (const r of rows) {
      byString.push(await knex('invoices').where({ id: r.id }).first());
      byBigInt.push((await knex('invoices').where('id', BigInt(r.id)).first('item')).item);
    }
    eq(byString, rows, 'where({ id }) with the id string finds each row, equal to what RETURNING gave');
    eq(byBigInt, rows.map((r) => r.item), 'a BigInt id as a binding finds each row');

    // ULIDs from the client, both ways and in WHERE
    const next = monotonicFactory();
    const made = Array.from({ length: 5 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
    made.push({ ref: ulid(), item: 'client-plain' });
    const stored = await knex('invoices').insert(made).returning(['id', 'ref', 'item']);
    eq(stored.map((r) => [r.ref, r.item]), made.map((m) => [m.ref, m.item]), 'ULIDs from the ulid package go in as bindings and come back equal');
    ok(stored.every((r) => BigInt(r.id) > SAFE), 'their ids still come from cosid_next');
    const found = [];
    for (const m of made) found.push((await knex('invoices').where({ ref: m.ref }).first('item')).item);
    eq(found, made.map((m) => m.item), 'where({ ref }) with a ULID text finds each row');
    const some = await knex('invoices').whereIn('ref', made.slice(1, 4).map((m) => m.ref)).orderBy('ref').pluck('item');
    eq(some, made.slice(1, 4).map((m) => m.item), 'whereIn on ulid refs');
    const asUuid = await knex('invoices').where({ ref: ulidToUUID(made[0].ref) }).first('item');
    eq(asUuid.item, made[0].item, 'the same ULID as UUID text (ulidToUUID) finds its row: ulid input takes both');

    // the codec functions with bindings (node-postgres sends them untyped)
    const id = ids[0];
    const enc = (await knex.raw('SELECT cosid_encode(?, ?) AS txt', ['invoice', id])).rows[0].txt;
    const dec = (await knex.raw('SELECT cosid_decode(?, ?) AS id', ['invoice', enc])).rows[0].id;
    const unpacked = (await knex.raw('SELECT * FROM cosid_unpack(?, ?)', ['invoice', id])).rows[0];
    const encWith = (await knex.raw('SELECT cosid_encode_with(?, ?) AS txt', [BigInt(id), CODEC])).rows[0].txt;
    const decWith = (await knex.raw('SELECT cosid_decode_with(?, ?) AS id', [enc, CODEC])).rows[0].id;
    const unpackedText = (await knex.raw('SELECT * FROM cosid_unpack_text(?, ?)', ['invoice', enc])).rows[0];
    eq({ encode: enc, decode: dec, unpack: fields(unpacked), encode_with: encWith, decode_with: decWith, unpack_text: fields(unpackedText) },
      codecWanted(id), 'cosid_encode, cosid_decode, cosid_unpack and the _with/_text forms with ? bindings');
    ok(Math.abs(Date.parse(snowflake(id).time) - Date.now()) < 60000, 'the id was made now');

    // the migration's down: table and generator go, and up makes them again
    await knex.migrate.rollback();
    const gone = (await knex.raw("SELECT to_regclass('invoices') AS t, count(*)::int AS n FROM cosid.generators WHERE name = 'invoice'")).rows[0];
    eq(gone, { t: null, n: 0 }, 'migrate:rollback drops the table and the generator');
    await knex.migrate.latest();
    const [again2] = await knex('invoices').insert({ item: 'after' }).returning('id');
    ok(BigInt(again2.id) > BigInt(ids[ids.length - 1]), 'migrated up again, the generator continues above its earlier ids', show(again2));
  } finally {
    await knex.destroy();
  }
});
