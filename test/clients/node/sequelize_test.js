#!/usr/bin/env node
// Sequelize 6 against cosid (TAP): sync() makes the table from the model (a
// column of type 'ULID', DEFAULTs as sequelize.literal) and sync({ alter: true })
// keeps the DEFAULTs; bulkCreate with fields leaves id, ref and token to the
// column DEFAULTs; bigint ids read back exactly (strings); ulid values as
// parameters, results and in WHERE; gen_uuidv7() tokens; describeTable, whose
// defaultValue loses the quotes of cosid_next('invoice'), and a describeTable
// that keeps the DEFAULT usable; cosid_encode/decode/unpack and the _with forms
// with bind parameters.  Connects with the PG* environment variables as a
// superuser; database cosid_sequelize.
'use strict';
const { Sequelize, DataTypes, Op, QueryTypes } = require('sequelize');
const { ulid, monotonicFactory } = require('ulid');
const { ok, eq, show, run, freshDatabase, conn, uuidv7Time, ULID_TEXT, SAFE, CODEC, codecWanted, fields } = require('./common');

// describeTable with each DEFAULT as the catalog has it (a literal that createTable and changeColumn
// take back) and a user-defined type by its name: Sequelize's own strips quotes and casts, so
// cosid_next('invoice'::text) comes back as "cosid_next(invoice", and ulid as 'USER-DEFINED'
async function describeTable(sequelize, table) {
  const described = await sequelize.getQueryInterface().describeTable(table);
  const columns = await sequelize.query(
    `SELECT column_name, column_default, data_type, udt_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1`, { bind: [table], type: QueryTypes.SELECT });
  for (const c of columns) {
    if (c.column_default !== null) described[c.column_name].defaultValue = sequelize.literal(c.column_default);
    if (c.data_type === 'USER-DEFINED') described[c.column_name].type = c.udt_name.toUpperCase();
  }
  return described;
}

run(async () => {
  await freshDatabase('cosid_sequelize');
  const sequelize = new Sequelize('cosid_sequelize', conn.user, null,
    { dialect: 'postgres', host: conn.host, port: conn.port, logging: false });
  try {
    await sequelize.query('CREATE EXTENSION cosid');
    await sequelize.query(`SELECT cosid_define('invoice', '{"strategy": "snowflake", "codec": [{"radix": 62}]}')`);
    const Invoice = sequelize.define('Invoice', {
      id: { type: DataTypes.BIGINT, primaryKey: true, defaultValue: sequelize.literal("cosid_next('invoice')") },
      ref: { type: 'ULID', allowNull: false, defaultValue: sequelize.literal('gen_ulid_monotonic()') },
      token: { type: DataTypes.UUID, allowNull: false, defaultValue: sequelize.literal('gen_uuidv7()') },
      item: { type: DataTypes.TEXT, allowNull: false },
    }, {
      tableName: 'invoices',
      timestamps: false,
      indexes: [{ unique: true, fields: ['ref'] }], // not unique: true on the column: sync({ alter: true }) writes that into SET DEFAULT
    });
    await sequelize.sync();
    const catalog = () => sequelize.query(
      `SELECT column_name, udt_name, column_default FROM information_schema.columns
       WHERE table_name = 'invoices' ORDER BY ordinal_position`, { type: QueryTypes.SELECT });
    const want = [
      { column_name: 'id', udt_name: 'int8', column_default: "cosid_next('invoice'::text)" },
      { column_name: 'ref', udt_name: 'ulid', column_default: 'gen_ulid_monotonic()' },
      { column_name: 'token', udt_name: 'uuid', column_default: 'gen_uuidv7()' },
      { column_name: 'item', udt_name: 'text', column_default: null },
    ];
    eq(await catalog(), want, 'sync() wrote the columns and their DEFAULTs');
    await sequelize.sync({ alter: true });
    eq(await catalog(), want, 'sync({ alter: true }) keeps them');

    // ids, ULIDs and UUIDs from the DEFAULTs
    const rows = (await Invoice.bulkCreate(Array.from({ length: 20 }, (_, i) => ({ item: `item-${i}` })),
      { fields: ['item'], returning: true })).map((r) => r.get({ plain: true }));
    const ids = rows.map((r) => r.id);
    ok(ids.every((id) => typeof id === 'string' && BigInt(id) > SAFE), 'ids come back as strings, each above 2^53', show(ids));
    ok(ids.every((id, i) => i === 0 || BigInt(ids[i - 1]) < BigInt(id)), '20 ids, increasing (as BigInt)');
    ok(rows.every((r) => ULID_TEXT.test(r.ref)) && rows.every((r, i) => i === 0 || rows[i - 1].ref < r.ref),
      'ref is ULID text from gen_ulid_monotonic(), increasing', show(rows.map((r) => r.ref)));
    ok(rows.every((r) => uuidv7Time(r.token) !== null), 'token is a UUID version 7 of now from gen_uuidv7()');
    const created = (await Invoice.create({ item: 'created' })).get({ plain: true });
    ok(BigInt(created.id) > BigInt(ids[19]) && ULID_TEXT.test(created.ref) && uuidv7Time(created.token) !== null,
      'create() sends the model defaults (the same calls): id, ref and token', show(created));
    const exact = await sequelize.query('SELECT id::text AS id FROM invoices ORDER BY id', { type: QueryTypes.SELECT });
    eq(exact.map((r) => r.id), [...ids, created.id], 'the ids are exactly what the server holds');
    const byPk = [];
    for (const r of rows) byPk.push((await Invoice.findByPk(r.id)).get({ plain: true }));
    eq(byPk, rows, 'findByPk with the id string finds each row, equal to what RETURNING gave');

    // ULIDs from the client, both ways and in WHERE
    const next = monotonicFactory();
    const made = Array.from({ length: 5 }, (_, i) => ({ ref: next(), item: `client-${i}` }));
    made.push({ ref: ulid(), item: 'client-plain' });
    const stored = (await Invoice.bulkCreate(made, { fields: ['ref', 'item'], returning: true })).map((r) => r.get({ plain: true }));
    eq(stored.map((r) => [r.ref, r.item]), made.map((m) => [m.ref, m.item]), 'ULIDs from the ulid package go in and come back equal');
    ok(stored.every((r) => BigInt(r.id) > SAFE), 'their ids still come from cosid_next');
    const found = [];
    for (const m of made) found.push((await Invoice.findOne({ where: { ref: m.ref } })).item);
    eq(found, made.map((m) => m.item), 'findOne({ where: { ref } }) with a ULID text finds each row');
    const some = await Invoice.findAll({ where: { ref: { [Op.in]: made.slice(1, 4).map((m) => m.ref) } }, order: [['ref', 'ASC']] });
    eq(some.map((r) => r.item), made.slice(1, 4).map((m) => m.item), 'Op.in on ulid refs');

    // describeTable
    const plain = await sequelize.getQueryInterface().describeTable('invoices');
    eq([plain.id.defaultValue, plain.ref.type], ['cosid_next(invoice', 'USER-DEFINED'],
      "Sequelize's describeTable mangles the id's DEFAULT and names no type for ulid");
    let refused = null;
    try {
      await sequelize.getQueryInterface().createTable('invoices_plain', plain);
    } catch (e) {
      refused = e.parent && e.parent.code;
    }
    ok(refused !== null, 'so a table made from it is refused', refused);
    const described = await describeTable(sequelize, 'invoices');
    eq([described.id.defaultValue.val, described.ref.type, described.token.defaultValue.val],
      ["cosid_next('invoice'::text)", 'ULID', 'gen_uuidv7()'], 'describeTable above keeps the DEFAULTs as literals and the ulid type');
    await sequelize.getQueryInterface().createTable('invoices_archive', described);
    const [archived] = await sequelize.query("INSERT INTO invoices_archive (item) VALUES ('archived') RETURNING id, ref, token",
      { type: QueryTypes.SELECT });
    ok(BigInt(archived.id) > BigInt(stored[5].id) && ULID_TEXT.test(archived.ref) && uuidv7Time(archived.token) !== null,
      'createTable from it makes a table whose DEFAULTs give cosid ids, ULIDs and UUIDs', show(archived));

    // the codec functions with bind parameters (sent untyped)
    const id = ids[0];
    const one = async (sql, bind) => (await sequelize.query(sql, { bind, type: QueryTypes.SELECT }))[0];
    const enc = (await one('SELECT cosid_encode($1, $2) AS txt', ['invoice', id])).txt;
    const dec = (await one('SELECT cosid_decode($1, $2) AS id', ['invoice', enc])).id;
    const unpacked = await one('SELECT * FROM cosid_unpack($1, $2)', ['invoice', id]);
    const encWith = (await one('SELECT cosid_encode_with($1, $2) AS txt', [id, CODEC])).txt;
    const decWith = (await one('SELECT cosid_decode_with($1, $2) AS id', [enc, CODEC])).id;
    const unpackedText = await one('SELECT * FROM cosid_unpack_text($1, $2)', ['invoice', enc]);
    eq({ encode: enc, decode: dec, unpack: fields(unpacked), encode_with: encWith, decode_with: decWith, unpack_text: fields(unpackedText) },
      codecWanted(id), 'cosid_encode, cosid_decode, cosid_unpack and the _with/_text forms with bind parameters');
  } finally {
    await sequelize.close();
  }
});
