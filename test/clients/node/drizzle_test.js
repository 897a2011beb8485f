#!/usr/bin/env node
// Drizzle ORM 0.45 and drizzle-kit 0.31 against cosid (TAP): drizzle-kit push
// makes the table of drizzle_schema.js (bigint ids in mode "bigint", a ulid
// custom type, DEFAULTs written as PostgreSQL prints them), a second push finds
// nothing to do and nothing of cosid's is touched; drizzle-kit pull writes a
// schema whose two edits (mode "bigint", the ulid type) push as no change;
// inserts take id, ref and token from the column DEFAULTs; ids read back as
// exact BigInt (mode "number", what pull writes, does not); ulid values as
// parameters, results and in WHERE; gen_uuidv7() tokens; cosid_encode/decode/
// unpack and the _with forms as sql`` parameters (untyped).  Connects with the
// PG* environment variables as a superuser; database cosid_drizzle.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const pg = require('pg');
const { drizzle } = require('drizzle-orm/node-postgres');
const { eq, inArray, asc, sql } = require('drizzle-orm');
const { pgTable, bigint } = require('drizzle-orm/pg-core');
const { ulid, monotonicFactory } = require('ulid');
const { ok, eq: same, show, run, freshDatabase, uuidv7Time, ULID_TEXT, SAFE, CODEC, codecWanted, fields } = require('./common');
const { invoices } = require('./drizzle_schema');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cosid-drizzle-'));

// drizzle-kit (drizzle-kit/bin.cjs) with drizzle.config.js: [exit status, output]
function drizzleKit(args, env = {}) {
  const bin = path.join(path.dirname(require.resolve('drizzle-kit')), 'bin.cjs');
  try {
    return [0, execFileSync(process.execPath, [bin, ...args, '--config', path.join(__dirname, 'drizzle.config.js')],
      { encoding: 'utf8', cwd: work, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })];
  } catch (e) {
    return [e.status, `${e.stdout}${e.stderr}`];
  }
}

run(async () => {
  await freshDatabase('cosid_drizzle');
  const pool = new pg.Pool({ database: 'cosid_drizzle' });
  const db = drizzle(pool);
  try {
    await db.execute(sql`CREATE EXTENSION cosid`);
    await db.execute(sql`SELECT cosid_define('invoice', '{"strategy": "snowflake", "codec": [{"radix": 62}]}')`);

    // drizzle-kit push, twice
    let [rc, out] = drizzleKit(['push', '--force', '--verbose']);
    ok(rc === 0 && out.includes(`"id" bigint PRIMARY KEY DEFAULT cosid_next('invoice'::text) NOT NULL`) &&
       out.includes('"ref" "ulid" DEFAULT gen_ulid_monotonic() NOT NULL') && out.includes('"token" uuid DEFAULT gen_uuidv7() NOT NULL') &&
       !/DROP|cosid_stats|generator_stats/.test(out), 'drizzle-kit push creates the table with its DEFAULTs and drops nothing', out);
    [rc, out] = drizzleKit(['push', '--force', '--verbose']);
    ok(rc === 0 && out.includes('No changes detected') && !/ALTER|DROP|CREATE/.test(out), 'a second push finds no change (no DEFAULT emitted again)', out);
    const cosid = await db.execute(sql`SELECT to_regclass('cosid.generator_stats')::text AS stats, count(*)::int AS generators
      FROM cosid.generators WHERE name = 'invoice'`);
    same(cosid.rows, [{ stats: 'cosid.generator_stats', generators: 1 }], "cosid's objects are untouched");

    // drizzle-kit pull: bigint in mode "number" and no type for ulid; with both edited it pushes as no change
    const pulled = path.join(work, 'pulled');
    [rc, out] = drizzleKit(['pull'], { COSID_DRIZZLE_OUT: pulled });
    const schemaTs = rc === 0 ? fs.readFileSync(path.join(pulled, 'schema.ts'), 'utf8') : '';
    ok(schemaTs.includes(`id: bigint({ mode: "number" }).default(sql\`cosid_next('invoice'::text)\`).primaryKey().notNull(),`) &&
       schemaTs.includes("// TODO: failed to parse database type 'ulid'") && schemaTs.includes('ref: unknown("ref").notNull(),'),
    'drizzle-kit pull writes id in mode "number" and ref of no type', `${out}\n${schemaTs}`);
    const edited = path.join(work, 'schema.ts');
    fs.writeFileSync(edited, `import { ulid } from ${JSON.stringify(path.join(__dirname, 'drizzle_schema.js'))};\n${schemaTs
      .replace('bigint({ mode: "number" })', 'bigint({ mode: "bigint" })')
      .replace('unknown("ref").notNull()', 'ulid("ref").default(sql`gen_ulid_monotonic()`).notNull()')}`);
    [rc, out] = drizzleKit(['push', '--force', '--verbose'], { COSID_DRIZZLE_SCHEMA: edited });
    ok(rc === 0 && out.includes('No changes detected') && !/ALTER|DROP|CREATE/.test(out),
      'the pulled schema with mode "bigint" and the ulid type pushes as no change', `${out}\n${fs.readFileSync(edited, 'utf8')}`);

    // ids, ULIDs and UUIDs from the DEFAULTs
    const rows = await db.insert(invoices).values(Array.from({ length: 20 }, (_, i) => ({ item: `item-${i}` }))).returning();
    const ids = rows.map((r) => r.id);
    ok(ids.every((id) => typeof id === 'bigint' && id > SAFE), 'ids come back as BigInt (mode "bigint"), each above 2^53', show(ids));
    ok(ids.every((id, i) => i === 0 || ids[i - 1] < id), '20 ids, increasing');
    ok(rows.every((r) => ULID_TEXT.test(r.ref)) && rows.every((r, i) => i === 0 || rows[i - 1].ref < r.ref),
      'ref is ULID text from gen_ulid_monotonic(), increasing', show(rows.map((r) => r.ref)));
    ok(rows.every((r) => uuidv7Time(r.token) !== null), 'token is a UUID version 7 of now from gen_uuidv7()');
    const exact = await db.execute(sql`SELECT id::text AS id FROM invoices ORDER BY id`);
    same(exact.rows.map((r) => r.id), ids.map(String), 'the BigInt ids are exactly what the server holds');
    const byId = [];
    for (const r of rows) byId.push((await db.select().from(invoices).where(eq(invoices.id, r.id)))[0]);
    same(byId, rows, 'eq(invoices.id, id) with a BigInt finds each row, equal to what RETURNING gave');

    // mode "number", as pull writes it: ids above 2^53 come back rounded, and a lookup by one finds another row or none
    const lossy = pgTable('invoices', { id: bigint('id', { mode: 'number' }) });
    const numbers = (await db.select().from(lossy).orderBy(asc(lossy.id))).map((r) => r.id);
    let wrong = 0;
    for (const [i, n] of numbers.entries()) {
      const hit = await db.select({ id: sql`id::text` }).from(lossy).where(eq(lossy.id, n));
      if (hit.length !== 1 || hit[0].id !== String(ids[i])) wrong++;
    }
    ok(numbers.some((n, i) => BigInt(n) !== ids[i]) && wrong > 0,
      `in mode "number" ids come back rounded: a lookup by ${wrong} of 20 finds another row or none`, show(numbers));

    // ULIDs from the client, both ways and in WHERE
    const next = monotonicFactory();
    const made = Array.from({ length: 5 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
    made.push({ ref: ulid(), item: 'client-plain' });
    const stored = await db.insert(invoices).values(made).returning();
    same(stored.map((r) => [r.ref, r.item]), made.map((m) => [m.ref, m.item]), 'ULIDs from the ulid package go in and come back equal');
    ok(stored.every((r) => r.id > SAFE), 'their ids still come from cosid_next');
    const found = [];
    for (const m of made) found.push((await db.select({ item: invoices.item }).from(invoices).where(eq(invoices.ref, m.ref)))[0].item);
    same(found, made.map((m) => m.item), 'eq(invoices.ref, ulid) finds each row');
    const some = await db.select({ item: invoices.item }).from(invoices)
      .where(inArray(invoices.ref, made.slice(1, 4).map((m) => m.ref))).orderBy(asc(invoices.ref));
    same(some.map((r) => r.item), made.slice(1, 4).map((m) => m.item), 'inArray on ulid refs');

    // the codec functions with sql`` parameters (sent untyped)
    const id = ids[0];
    const one = async (query) => (await db.execute(query)).rows[0];
    const enc = (await one(sql`SELECT cosid_encode(${'invoice'}, ${id}) AS txt`)).txt;
    const dec = (await one(sql`SELECT cosid_decode(${'invoice'}, ${enc}) AS id`)).id;
    const unpacked = await one(sql`SELECT * FROM cosid_unpack(${'invoice'}, ${id})`);
    const encWith = (await one(sql`SELECT cosid_encode_with(${id}, ${CODEC}) AS txt`)).txt;
    const decWith = (await one(sql`SELECT cosid_decode_with(${enc}, ${CODEC}) AS id`)).id;
    const unpackedText = await one(sql`SELECT * FROM cosid_unpack_text(${'invoice'}, ${enc})`);
    same({ encode: enc, decode: dec, unpack: fields(unpacked), encode_with: encWith, decode_with: decWith, unpack_text: fields(unpackedText) },
      codecWanted(id), 'cosid_encode, cosid_decode, cosid_unpack and the _with/_text forms with sql`` parameters');
    const [inQuery] = await db.select({ txt: sql`cosid_encode('invoice', ${invoices.id})` }).from(invoices).where(eq(invoices.ref, rows[0].ref));
    same(inQuery.txt, enc, "cosid_encode('invoice', invoices.id) in a select");
  } finally {
    await pool.end();
    fs.rmSync(work, { recursive: true, force: true });
  }
});
