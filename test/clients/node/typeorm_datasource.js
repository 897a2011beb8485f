// TypeORM data source and entity (typeorm_test.js; also what the typeorm CLI loads with -d).
// Database cosid_typeorm from the PG* environment variables; migrations: typeorm_migrations/
// and those generated into $COSID_TYPEORM_GENERATED.
'use strict';
const path = require('path');
const { DataSource, EntitySchema } = require('typeorm');

const Invoice = new EntitySchema({
  name: 'Invoice',
  tableName: 'invoices',
  columns: {
    id: { type: 'bigint', primary: true, default: () => "cosid_next('invoice')" }, // a string in JavaScript, exact
    ref: { type: 'ulid', unique: true, default: () => 'gen_ulid_monotonic()' }, // ULID text
    token: { type: 'uuid', default: () => 'gen_uuidv7()' },
    item: { type: 'text' },
  },
});

const dataSource = new DataSource({
  type: 'postgres',
  host: process.env.PGHOST,
  port: Number(process.env.PGPORT || 5432),
  username: process.env.PGUSER,
  database: 'cosid_typeorm',
  entities: [Invoice],
  migrations: [path.join(__dirname, 'typeorm_migrations', '*.js'),
    ...(process.env.COSID_TYPEORM_GENERATED ? [path.join(process.env.COSID_TYPEORM_GENERATED, '*.js')] : [])],
});
// TypeORM refuses column types it does not list ("Data type "ulid" ... is not supported"): list ulid.
// Its schema diff reads the column's type as 'ulid' too, so migration:generate finds nothing to change.
dataSource.driver.supportedDataTypes.push('ulid');

module.exports = { dataSource, Invoice };
