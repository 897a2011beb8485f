// Drizzle ORM schema (drizzle_test.js; what drizzle.config.js gives drizzle-kit push)
'use strict';
const { sql } = require('drizzle-orm');
const { pgTable, bigint, text, uuid, customType } = require('drizzle-orm/pg-core');

// a ulid column: ULID text both ways
const ulid = customType({ dataType: () => 'ulid' });

const invoices = pgTable('invoices', {
  id: bigint('id', { mode: 'bigint' }).primaryKey().default(sql`cosid_next('invoice'::text)`),
  ref: ulid('ref').notNull().unique().default(sql`gen_ulid_monotonic()`),
  token: uuid('token').notNull().default(sql`gen_uuidv7()`),
  item: text('item').notNull(),
});

module.exports = { ulid, invoices };
