// drizzle-kit configuration (drizzle_test.js): push and pull against the database cosid_drizzle
// of the PG* environment variables; pull writes into $COSID_DRIZZLE_OUT, and push takes
// the schema file $COSID_DRIZZLE_SCHEMA when set (the test's edited copy of what pull wrote)
'use strict';
const path = require('path');

module.exports = {
  dialect: 'postgresql',
  schema: process.env.COSID_DRIZZLE_SCHEMA || path.join(__dirname, 'drizzle_schema.js'),
  out: process.env.COSID_DRIZZLE_OUT || path.join(__dirname, 'drizzle'),
  dbCredentials: {
    host: process.env.PGHOST,
    port: Number(process.env.PGPORT || 5432),
    user: process.env.PGUSER,
    database: 'cosid_drizzle',
    ssl: false,
  },
  schemaFilter: ['public'], // the default: cosid's tables and views are in schema cosid
};
