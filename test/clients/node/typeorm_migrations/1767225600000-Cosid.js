// TypeORM migration (typeorm_test.js): cosid and the generator, before the
// migration that migration:generate writes for the entity's table
module.exports = class Cosid1767225600000 {
  async up(queryRunner) {
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS cosid');
    await queryRunner.query(`SELECT cosid_define('invoice', '{"strategy": "snowflake", "codec": [{"radix": 62}]}')`);
  }

  async down(queryRunner) {
    await queryRunner.query("SELECT cosid_drop('invoice')");
  }
};
