#!/usr/bin/env node
// TypeORM against cosid (TAP): the typeorm CLI runs the hand-written migration
// (cosid and the generator), migration:generate writes the entity's table from
// typeorm_datasource.js (a 'ulid' column once the driver lists the type), it
// runs, and a second migration:generate --check finds nothing (no DROP and ADD
// of id); save() takes id, ref and token from the column DEFAULTs; bigint ids
// read back exactly (strings); ulid values as parameters, results and in WHERE;
// gen_uuidv7() tokens; cosid_encode/decode/unpack and the _with forms through
// query() parameters (untyped).  Connects with the PG* environment variables as
// a superuser; database cosid_typeorm.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { ulid, monotonicFactory } = require('ulid');
const { ok, eq, show, run, freshDatabase, uuidv7Time, ULID_TEXT, SAFE, CODEC, codecWanted, fields } = require('./common');

const generated = fs.mkdtempSync(path.join(os.tmpdir(), 'cosid-typeorm-'));
process.env.COSID_TYPEORM_GENERATED = generated;
const { DataSource, In } = require('typeorm');
const { dataSource, Invoice } = require('./typeorm_datasource');

// the typeorm CLI (typeorm/cli.js) with the data source file: [exit status, output]
function typeorm(...args) {
  const cli = require.resolve('typeorm/cli.js');
  try {
    return [0, execFileSync(process.execPath, [cli, ...args, '-d', path.join(__dirname, 'typeorm_datasource.js')],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })];
  } catch (e) {
    return [e.status, `${e.stdout}${e.stderr}`];
  }
}

run(async () => {
  await freshDatabase('cosid_typeorm');
  try {
    let [rc, out] = typeorm('migration:run');
    ok(rc === 0 && /Cosid1767225600000 has been +executed successfully/.test(out), 'typeorm migration:run: the hand-written migration', out);
    [rc, out] = typeorm('migration:generate', path.join(generated, 'Invoices'), '--outputJs', '--timestamp', '1767225600001');
    const files = fs.readdirSync(generated);
    const written = files.length === 1 ? fs.readFileSync(path.join(generated, files[0]), 'utf8') : '';
    ok(rc === 0 && written.includes(`"id" bigint NOT NULL DEFAULT cosid_next('invoice')`) &&
       written.includes('"ref" ulid NOT NULL DEFAULT gen_ulid_monotonic()') && written.includes('"token" uuid NOT NULL DEFAULT gen_uuidv7()'),
    'typeorm migration:generate writes the table with its DEFAULTs and the ulid type', `${out}\n${written}`);
    [rc, out] = typeorm('migration:run');
    ok(rc === 0 && /Invoices1767225600001 has been +executed successfully/.test(out), 'typeorm migration:run: the generated migration', out);
    [rc, out] = typeorm('migration:generate', path.join(generated, 'Again'), '--check');
    ok(rc === 0 && /No changes in database schema were found/.test(out), 'a second migration:generate --check finds no change (id is not dropped and added)', out);

    const unlisted = new DataSource({ ...dataSource.options, migrations: [] }); // without supportedDataTypes.push('ulid')
    let refused = '';
    await unlisted.initialize().catch((e) => { refused = e.message; });
    if (unlisted.isInitialized) await unlisted.destroy();
    ok(/Data type "ulid" in "Invoice.ref" is not supported/.test(refused), 'without ulid in supportedDataTypes TypeORM refuses the entity', refused);

    await dataSource.initialize();
    const repo = dataSource.getRepository(Invoice);
    eq((await dataSource.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query), [], 'the schema builder has no query to run');

    // ids, ULIDs and UUIDs from the DEFAULTs
    const rows = await repo.save(Array.from({ length: 20 }, (_, i) => repo.create({ item: `item-${i}` })));
    const ids = rows.map((r) => r.id);
    ok(ids.every((id) => typeof id === 'string' && BigInt(id) > SAFE), 'save() fills in ids as strings, each above 2^53', show(ids));
    ok(ids.every((id, i) => i === 0 || BigInt(ids[i - 1]) < BigInt(id)), '20 ids, increasing (as BigInt)');
    ok(rows.every((r) => ULID_TEXT.test(r.ref)), 'ref is ULID text from gen_ulid_monotonic()', show(rows.map((r) => r.ref)));
    ok(rows.every((r) => uuidv7Time(r.token) !== null), 'token is a UUID version 7 of now from gen_uuidv7()');
    const exact = await dataSource.query('SELECT id::text AS id FROM invoices ORDER BY id');
    eq(exact.map((r) => r.id), ids, 'the ids are exactly what the server holds');
    const byId = [];
    for (const r of rows) byId.push(await repo.findOneBy({ id: r.id }));
    const plain = (r) => [r.id, r.ref, r.token, r.item];
    eq(byId.map(plain), rows.map(plain), 'findOneBy({ id }) with the id string finds each row, equal to what save() gave');

    // ULIDs from the client, both ways and in WHERE
    const next = monotonicFactory();
    const made = Array.from({ length: 5 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
    made.push({ ref: ulid(), item: 'client-plain' });
    const stored = await repo.save(made.map((m) => repo.create(m)));
    const reread = await repo.find({ where: { item: In(made.map((m) => m.item)) }, order: { id: 'ASC' } });
    eq(reread.map((r) => [r.ref, r.item]), made.map((m) => [m.ref, m.item]), 'ULIDs from the ulid package go in and come back equal');
    ok(stored.every((r) => BigInt(r.id) > SAFE), 'their ids still come from cosid_next');
    const found = [];
    for (const m of made) found.push((await repo.findOneBy({ ref: m.ref })).item);
    eq(found, made.map((m) => m.item), 'findOneBy({ ref }) with a ULID text finds each row');
    const some = await repo.find({ where: { ref: In(made.slice(1, 4).map((m) => m.ref)) }, order: { ref: 'ASC' } });
    eq(some.map((r) => r.item), made.slice(1, 4).map((m) => m.item), 'In() on ulid refs');

    // the codec functions with query() parameters (sent untyped)
    const id = ids[0];
    const enc = (await dataSource.query('SELECT cosid_encode($1, $2) AS txt', ['invoice', id]))[0].txt;
    const dec = (await dataSource.query('SELECT cosid_decode($1, $2) AS id', ['invoice', enc]))[0].id;
    const [unpacked] = await dataSource.query('SELECT * FROM cosid_unpack($1, $2)', ['invoice', id]);
    const encWith = (await dataSource.query('SELECT cosid_encode_with($1, $2) AS txt', [id, CODEC]))[0].txt;
    const decWith = (await dataSource.query('SELECT cosid_decode_with($1, $2) AS id', [enc, CODEC]))[0].id;
    const [unpackedText] = await dataSource.query('SELECT * FROM cosid_unpack_text($1, $2)', ['invoice', enc]);
    eq({ encode: enc, decode: dec, unpack: fields(unpacked), encode_with: encWith, decode_with: decWith, unpack_text: fields(unpackedText) },
      codecWanted(id), 'cosid_encode, cosid_decode, cosid_unpack and the _with/_text forms with query() parameters');
    const qb = await repo.createQueryBuilder('i').select('cosid_encode(:name, i.id)', 'txt')
      .where('i.ref = :ref', { name: 'invoice', ref: rows[0].ref }).getRawOne();
    eq(qb.txt, enc, "cosid_encode(:name, i.id) in a query builder, WHERE i.ref = :ref");
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    fs.rmSync(generated, { recursive: true, force: true });
  }
});
