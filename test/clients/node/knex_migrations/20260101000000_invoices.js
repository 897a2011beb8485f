// Knex migration (knex_test.js): the generator, then a table whose defaults call cosid
exports.up = async (knex) => {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS cosid');
  await knex.raw(`SELECT cosid_define('invoice', '{"strategy": "snowflake", "codec": [{"radix": 62}]}')`);
  await knex.schema.createTable('invoices', (t) => {
    t.bigInteger('id').primary().defaultTo(knex.raw("cosid_next('invoice')"));
    t.specificType('ref', 'ulid').notNullable().unique().defaultTo(knex.raw('gen_ulid_monotonic()'));
    t.uuid('token').notNullable().defaultTo(knex.raw('gen_uuidv7()'));
    t.text('item').notNullable();
  });
};

exports.down = async (knex) => {
  await knex.schema.dropTable('invoices');
  await knex.raw("SELECT cosid_drop('invoice')");
};
