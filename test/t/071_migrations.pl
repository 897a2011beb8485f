# The migration recipes of docs/migrations.md ("Migrating to cosid"), run as
# the guide gives them: the SQL (and the shell lines of the restore rescue) is
# read from the documentation's blocks marked <!-- test: NAME --> (doc_blocks
# in CosidTest.pm), never copied here.  Each runs on a populated schema (thousands
# of rows, child tables with foreign keys); afterwards every row and key is
# checked: counts, every old row unchanged (against a snapshot taken before),
# no orphan foreign key, the column defaults (pg_get_expr), and the ids the
# new defaults give.
#
# 1. bigserial onto a segment generator (adopt-sequence), back to nextval()
#    and onto it again: no gap going up, nothing reused coming down (numbers
#    handed out and never stored, rolled back or deleted included), a stray
#    nextval() during the adoption costs a segment and no duplicate, and a
#    session connected throughout follows every change.
# 2. uuid keys referenced by foreign keys onto ulid: the one-line ALTER
#    works with 1.2 (the foreign keys compare uuid with ulid, still
#    enforced), as the guide says; without a foreign key it works and keeps
#    gen_random_uuid() as the default, silently; the recipe keeps every
#    value's bytes and every foreign key, rewrites no table, and sets
#    gen_ulid(); old v4 values have meaningless times, and v7 values (where
#    the server has uuidv7()) keep theirs.
# 3. int keys onto cosid_next_int: a serial column (adopted, its sequence
#    made bigint so that every number up to 2147483647 is issued, then
#    22003) and an identity column (the generator starts above it).
# 4. A CHECK constraint decoding through a named generator: pg_restore of a
#    table in schema app fails as the guide says and leaves the table empty
#    (the same table in schema public, after cosid, restores); the guide's
#    four-pass restore brings it back; the inline-list form restores with
#    --exit-on-error.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use List::Util qw(max);
use CosidTest;

my %readme = doc_blocks();

sub block
{
	my ($name) = @_;
	die "the documentation (README.md, docs/*.md) has no block <!-- test: $name -->" unless exists $readme{$name};
	return $readme{$name};
}

my $node = cosid_node('migrations');

sub sql
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, $sql);
}

# Run SQL that must succeed, as a test.
sub sql_ok
{
	my ($db, $sql, $what) = @_;
	my ($ret, $stdout, $stderr) = $node->psql($db, $sql, on_error_stop => 1);
	is($ret, 0, $what) or diag($stderr);
	return $stdout;
}

# Run a guide block in the database, as a test.
sub run_block
{
	my ($db, $name, $what) = @_;
	return sql_ok($db, block($name), "$what: guide block \"$name\" runs");
}

sub new_db
{
	my ($db) = @_;
	sql('postgres', "CREATE DATABASE $db");
	sql($db, 'CREATE EXTENSION cosid');
}

# pg_get_expr of a column's default ('' when none)
sub default_of
{
	my ($db, $table, $column) = @_;
	return sql($db, qq{
		SELECT pg_get_expr(d.adbin, d.adrelid)
		FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = '$table'::regclass AND a.attname = '$column'});
}

sub type_of
{
	my ($db, $table, $column) = @_;
	return sql($db, qq{
		SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = '$table'::regclass AND attname = '$column'});
}

# every foreign key of the database, as pg_get_constraintdef shows it, and
# whether each is validated
my $fk_sql = q{
	SELECT string_agg(conrelid::regclass || ' ' || conname || ': ' || pg_get_constraintdef(oid)
		|| CASE WHEN convalidated THEN '' ELSE ' (not validated)' END, E'\n' ORDER BY conname)
	FROM pg_constraint WHERE contype = 'f'};

# ===========================================================================
# 1. bigserial onto a segment generator, back, and onto it again
my $db = 'serial';
new_db($db);
run_block($db, 'bigserial-schema', 'bigserial');
my $serial_default = default_of($db, 'orders', 'id');
is($serial_default, q{nextval('orders_id_seq'::regclass)}, 'bigserial: the default bigserial makes');
# 10,000 orders with 3 items each; some deleted, an insert rolled back: the
# sequence gave numbers that no row holds
sql($db, q{
	INSERT INTO orders (customer) SELECT 'customer ' || g % 97 FROM generate_series(1, 10000) g;
	INSERT INTO order_items SELECT id, l, 'item ' || l FROM orders, generate_series(1, 3) l;
	DELETE FROM orders WHERE id % 1000 = 0;
	BEGIN;
	INSERT INTO orders (customer) SELECT 'rolled back' FROM generate_series(1, 50);
	ROLLBACK;
	CREATE SCHEMA snap;
	CREATE TABLE snap.orders AS SELECT * FROM orders;
	CREATE TABLE snap.order_items AS SELECT * FROM order_items;
});
my $orders = 9990;
my $items = 29970;

sub seq_last
{
	return sql('serial', 'SELECT last_value FROM orders_id_seq');
}

# n orders with one item each, customer = tag: (min id, max id, count)
sub add_orders
{
	my ($tag, $n, $what) = @_;
	sql_ok('serial', qq{
		WITH o AS (INSERT INTO orders (customer) SELECT '$tag' FROM generate_series(1, $n) RETURNING id)
		INSERT INTO order_items SELECT id, 1, '$tag' FROM o},
		"bigserial, $what: $n orders with an item each from the default (no duplicate key)");
	$orders += $n;
	$items += $n;
	return split /\|/, sql('serial', "SELECT min(id), max(id), count(*) FROM orders WHERE customer = '$tag'");
}

# a session connected from before the first change to after the last: it
# inserts 10 rows at every step, with the default of the moment
my $bg = $node->background_psql($db);

sub bg_insert
{
	my ($what) = @_;
	my $ok = eval {
		$bg->query_safe("INSERT INTO orders (customer) SELECT 'long-lived' FROM generate_series(1, 10)");
		1;
	};
	ok($ok, "bigserial, $what: a session connected throughout inserts with the new default") or diag($@);
	$orders += 10 if $ok;
}
bg_insert('before');

# ---- up
my $seq_before = seq_last();
is($seq_before, 10060, 'bigserial: the sequence gave 10060 (10000 rows, 50 rolled back, 10 of the long-lived session)');
run_block($db, 'bigserial-up', 'bigserial, up');
is(default_of($db, 'orders', 'id'), q{cosid_next('orders'::text)},
	"bigserial, up: the default is cosid_next('orders')");
is(sql($db, q{SELECT sequence, strategy FROM cosid.generators WHERE name = 'orders'}), 'orders_id_seq|segment',
	'bigserial, up: a segment generator backed by the adopted sequence');
my ($min, $max, $n) = add_orders('up', 1000, 'up');
is("$min|$max|$n", ($seq_before + 1) . '|' . ($seq_before + 1000) . '|1000',
	'bigserial, up: the new ids continue right after the last number the sequence gave: no gap, no overlap');
bg_insert('up');
# an application server still on nextval() during the switch
my $stray = sql($db,
	q{INSERT INTO orders (id, customer) VALUES (nextval('orders_id_seq'), 'stray nextval') RETURNING id});
$orders++;
my $max_up = $max;
($min, $max, $n) = add_orders('up after stray', 1000, 'up, after a stray nextval()');
cmp_ok($min, '>', $max_up, 'bigserial, up: after a stray nextval() the generator goes on upwards');
is(sql($db, "SELECT count(*) FROM orders WHERE id > $stray - 100 AND id <= $stray"), 1,
	"bigserial, up: the stray nextval() took a whole segment (step 100, up to $stray): its row is the only one there");
# numbers handed out and never stored: unused, rolled back, deleted
my $unused = sql($db, q{SELECT max(x) FROM (SELECT cosid_next('orders') AS x FROM generate_series(1, 7)) s});
my $rolled_back = max(split /\n/, sql($db, q{
	BEGIN;
	INSERT INTO orders (customer) SELECT 'rolled back' FROM generate_series(1, 30) RETURNING id;
	ROLLBACK;}));
my $deleted = sql($db, q{
	WITH d AS (DELETE FROM orders WHERE customer = 'up after stray' AND id % 10 = 0 RETURNING id)
	SELECT count(*) || '|' || max(id) FROM d});
(my $ndeleted, $deleted) = split /\|/, $deleted;
$orders -= $ndeleted;
$items -= $ndeleted;
my $handed_max = max($unused, $rolled_back, $deleted, sql($db, 'SELECT max(id) FROM orders'), $stray);
note("bigserial: handed out while adopted: up to $handed_max (unused $unused, rolled back $rolled_back, "
	  . "deleted $deleted, stray nextval $stray)");

# ---- down
my $seq_at_drop = seq_last();
cmp_ok($seq_at_drop, '>=', $handed_max,
	'bigserial: the adopted sequence stands at or above every number handed out');
run_block($db, 'bigserial-down', 'bigserial, down');
is(default_of($db, 'orders', 'id'), $serial_default,
	'bigserial, down: the default is again exactly the one bigserial made');
is(sql($db, q{SELECT increment_by FROM pg_sequences WHERE sequencename = 'orders_id_seq'}), 1,
	'bigserial, down: the sequence counts by 1 again');
is(sql($db, q{SELECT count(*) FROM cosid.generator WHERE name = 'orders'}), 0,
	'bigserial, down: the generator is gone, the sequence is not');
($min, $max, $n) = add_orders('down', 1000, 'down');
is($min, $seq_at_drop + 1, 'bigserial, down: nextval() continues right after the last segment fetched');
cmp_ok($min, '>', $handed_max,
	'bigserial, down: above every number the generator handed out (held, deleted, rolled back or unused): none reused');
is($max - $min + 1, 1000, 'bigserial, down: one by one');
bg_insert('down');

# ---- up again
$seq_before = seq_last();
my $max_before = sql($db, 'SELECT max(id) FROM orders');
run_block($db, 'bigserial-up', 'bigserial, up again');
is(default_of($db, 'orders', 'id'), q{cosid_next('orders'::text)},
	"bigserial, up again: the default is cosid_next('orders')");
($min, $max, $n) = add_orders('up again', 1000, 'up again');
is("$min|$max|$n", ($seq_before + 1) . '|' . ($seq_before + 1000) . '|1000',
	'bigserial, up again: the generator continues right after the sequence, no gap');
cmp_ok($min, '>', $max_before, 'bigserial, up again: above every id before');
bg_insert('up again');
eval { $bg->quit };

# ---- every row and key
is( sql($db, q{
		SELECT (SELECT count(*) FROM (SELECT * FROM snap.orders EXCEPT SELECT * FROM orders) d),
			   (SELECT count(*) FROM (SELECT * FROM snap.order_items EXCEPT SELECT * FROM order_items) d),
			   (SELECT count(*) FROM snap.orders), (SELECT count(*) FROM snap.order_items)}),
	'0|0|9990|29970', 'bigserial: the 9,990 orders and 29,970 items of before are all there, unchanged');
is(sql($db, 'SELECT count(*), count(DISTINCT id) FROM orders'), "$orders|$orders",
	"bigserial: $orders orders in all, no id twice");
is(sql($db, 'SELECT count(*) FROM order_items'), $items, "bigserial: $items items in all");
is( sql($db, q{
		SELECT (SELECT count(*) FROM order_items i WHERE NOT EXISTS (SELECT FROM orders o WHERE o.id = i.order_id)),
			   (SELECT count(*) FROM orders o WHERE customer IN ('up', 'up after stray', 'down', 'up again')
				  AND NOT EXISTS (SELECT FROM order_items i WHERE i.order_id = o.id))}),
	'0|0', 'bigserial: no orphan item, and every new order has its item');
is(sql($db, $fk_sql), 'order_items order_items_order_id_fkey: FOREIGN KEY (order_id) REFERENCES orders(id) ON DELETE CASCADE',
	'bigserial: the foreign key is as it was, validated');
is(sql($db, q{SELECT pg_get_serial_sequence('orders', 'id')}), 'public.orders_id_seq',
	'bigserial: the sequence is still owned by the column');

# ===========================================================================
# 2. uuid keys onto ulid
$db = 'uuid';
new_db($db);
run_block($db, 'uuid-schema', 'uuid');
sql($db, q{
	INSERT INTO accounts (name) SELECT 'account ' || g FROM generate_series(1, 5000) g;
	UPDATE accounts a SET referred_by = b.id FROM accounts b
	WHERE b.name = 'account ' || (substr(a.name, 9)::int / 2) AND substr(a.name, 9)::int % 3 <> 0;
	INSERT INTO payments (account_id, amount)
	SELECT id, (g * 37 % 10000) / 100.0 FROM accounts, generate_series(1, 4) g;
	CREATE SCHEMA snap;
	CREATE TABLE snap.accounts AS SELECT * FROM accounts;
	CREATE TABLE snap.payments AS SELECT * FROM payments;
	CREATE TABLE payments_one_line (LIKE payments INCLUDING DEFAULTS INCLUDING INDEXES);
	INSERT INTO payments_one_line SELECT * FROM payments;
});
my $referred = sql($db, 'SELECT count(referred_by) FROM accounts');
my $fks_before = sql($db, $fk_sql);
is( $fks_before,
	"accounts accounts_referred_by_fkey: FOREIGN KEY (referred_by) REFERENCES accounts(id)\n"
	  . 'payments payments_account_id_fkey: FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE',
	'uuid: two foreign keys point at accounts.id, one from the table itself');
my $listed = run_block($db, 'uuid-fks', 'uuid, the foreign keys');
like($listed, qr/^accounts\|accounts_referred_by_fkey\|FOREIGN KEY \(referred_by\) REFERENCES accounts\(id\)$/m,
	"uuid: the guide's query lists the reference from accounts itself");
like($listed, qr/^payments\|payments_account_id_fkey\|FOREIGN KEY \(account_id\) REFERENCES accounts\(id\) ON DELETE CASCADE$/m,
	"uuid: ... and the one from payments");

# ---- the one line works in 1.2 while foreign keys exist (they compare uuid
# with ulid), as the guide shows; rolled back, so the recipe starts afresh
my ($state, $msg, $stderr) = psql_error($node, $db, "BEGIN;\n" . block('uuid-one-line') . q{
	DO $$ BEGIN
		IF (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = 'accounts'::regclass AND attname = 'id') <> 'ulid' THEN
			RAISE EXCEPTION 'accounts.id is not ulid';
		END IF;
		IF (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = 'payments'::regclass AND attname = 'account_id') <> 'uuid' THEN
			RAISE EXCEPTION 'payments.account_id is not uuid any more';
		END IF;
		IF EXISTS (SELECT FROM pg_constraint WHERE conname IN ('payments_account_id_fkey', 'accounts_referred_by_fkey')
				   AND NOT convalidated) THEN
			RAISE EXCEPTION 'a foreign key is not validated';
		END IF;
		BEGIN
			INSERT INTO payments (account_id, amount) VALUES ('00000000-0000-4000-8000-000000000000', 1);
			RAISE EXCEPTION 'the foreign key let a payment of no account in';
		EXCEPTION WHEN foreign_key_violation THEN NULL;
		END;
		INSERT INTO payments (account_id, amount) SELECT id::uuid, 2 FROM accounts LIMIT 1;
	END $$;
	ROLLBACK;
});
is($state, undef, 'uuid: the one-line ALTER ... TYPE ulid works in 1.2 while foreign keys exist')
  or diag("$state: $msg\n" . ($stderr // ''));
like(block('uuid-one-line'), qr/-- cosid 1\.1: ERROR:  foreign key constraint "accounts_referred_by_fkey" cannot be implemented/,
	'uuid: ... the guide says what 1.1 answered');
is(type_of($db, 'accounts', 'id'), 'uuid', 'uuid: ... rolled back, accounts.id is uuid for the recipe');
is(sql($db, q{SELECT count(*) FROM payments WHERE amount = 2}), '0', 'uuid: ... and the test payment is gone');

# ---- without a foreign key the one line works, and keeps the old default
my ($ret, $stdout);
($ret, $stdout, $stderr) = $node->psql($db, 'ALTER TABLE payments_one_line ALTER id TYPE ulid', on_error_stop => 1);
is($ret, 0, 'uuid: without a foreign key the one-line ALTER ... TYPE ulid works') or diag($stderr);
is($stderr, '', 'uuid: ... with no warning or notice');
is(type_of($db, 'payments_one_line', 'id'), 'ulid', 'uuid: ... the column is ulid');
is(default_of($db, 'payments_one_line', 'id'), 'gen_random_uuid()',
	'uuid: ... and its default is still gen_random_uuid(): it survived the change');
sql($db, q{
	INSERT INTO payments_one_line (account_id, amount) SELECT account_id, -1 FROM payments LIMIT 1000});
my ($v4, $future) = split /\|/, sql($db, q{
	SELECT bool_and(substr(id::uuid::text, 15, 1) = '4'),
		   count(*) FILTER (WHERE ulid_time(id) > now() + interval '100 years')
	FROM payments_one_line WHERE amount = -1});
is($v4, 't', 'uuid: new rows of that table get random (v4) uuids as their ULIDs');
cmp_ok($future, '>=', 950, "uuid: ... whose times are meaningless ($future of 1000 over 100 years ahead)");

# ---- the recipe
my $files_before = sql($db, q{SELECT pg_relation_filenode('accounts') || ' ' || pg_relation_filenode('payments')});
my $t0 = sql($db, 'SELECT clock_timestamp()');
run_block($db, 'uuid-to-ulid', 'uuid, the recipe');
is( sql($db, q{
		SELECT string_agg(attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod), ', '
						  ORDER BY attrelid::regclass::text, attname)
		FROM pg_attribute
		WHERE attrelid IN ('accounts'::regclass, 'payments'::regclass)
		  AND attname IN ('id', 'referred_by', 'account_id')}),
	'accounts.id ulid, accounts.referred_by ulid, payments.account_id ulid, payments.id ulid',
	'uuid: the keys and the columns that reference them are ulid');
is(default_of($db, 'accounts', 'id') . ' ' . default_of($db, 'payments', 'id'), 'gen_ulid() gen_ulid()',
	'uuid: the defaults are gen_ulid(), gen_random_uuid() is gone');
is(sql($db, $fk_sql), $fks_before, 'uuid: the foreign keys are as they were, validated');
is(sql($db, q{SELECT pg_relation_filenode('accounts') || ' ' || pg_relation_filenode('payments')}), $files_before,
	'uuid: no table was rewritten');
is( sql($db, q{
		SELECT (SELECT count(*) FROM (SELECT * FROM snap.accounts
									  EXCEPT SELECT id::uuid, name, referred_by::uuid FROM accounts) d),
			   (SELECT count(*) FROM (SELECT id::uuid, name, referred_by::uuid FROM accounts
									  EXCEPT SELECT * FROM snap.accounts) d),
			   (SELECT count(*) FROM (SELECT * FROM snap.payments
									  EXCEPT SELECT id::uuid, account_id::uuid, amount FROM payments) d),
			   (SELECT count(*) FROM (SELECT id::uuid, account_id::uuid, amount FROM payments
									  EXCEPT SELECT * FROM snap.payments) d),
			   (SELECT count(*) FROM accounts), (SELECT count(*) FROM payments)}),
	'0|0|0|0|5000|20000', 'uuid: the 5,000 accounts and 20,000 payments, every value the same bytes as before');
is( sql($db, q{
		SELECT (SELECT count(*) FROM payments p WHERE NOT EXISTS (SELECT FROM accounts a WHERE a.id = p.account_id)),
			   (SELECT count(*) FROM accounts a
				WHERE referred_by IS NOT NULL AND NOT EXISTS (SELECT FROM accounts b WHERE b.id = a.referred_by)),
			   (SELECT count(referred_by) FROM accounts)}),
	"0|0|$referred", "uuid: no orphan payment, no dangling referral ($referred referrals)");
my ($old_uuid, $old_name) = split /\|/, sql($db, q{SELECT id, name FROM snap.accounts WHERE name = 'account 4321'});
is(sql($db, "SELECT name, id::uuid FROM accounts WHERE id = '$old_uuid'::uuid::ulid"), "$old_name|$old_uuid",
	'uuid: a row is found by its old uuid text (::uuid::ulid), and id::uuid gives that text back');
like(sql($db, "EXPLAIN (COSTS OFF) SELECT name FROM accounts WHERE id = '$old_uuid'::uuid::ulid"),
	qr/Index (Only )?Scan using accounts_pkey/, 'uuid: ... with the primary key index');

# old v4 values: meaningless times, and the new ids sort below nearly all of them
sql($db, q{
	WITH a AS (INSERT INTO accounts (name) SELECT 'new ' || g FROM generate_series(1, 1000) g RETURNING id)
	INSERT INTO payments (account_id, amount) SELECT id, 2 FROM a});
is( sql($db, qq{
		SELECT count(*), bool_and(ulid_time(id) >= date_trunc('milliseconds', '$t0'::timestamptz)
								  AND ulid_time(id) <= clock_timestamp())
		FROM accounts WHERE name LIKE 'new %'}),
	'1000|t', 'uuid: new accounts get ULIDs of now from gen_ulid()');
is( sql($db, qq{
		SELECT count(*), bool_and(ulid_time(id) >= date_trunc('milliseconds', '$t0'::timestamptz)
								  AND ulid_time(id) <= clock_timestamp())
		FROM payments WHERE amount = 2}),
	'1000|t', 'uuid: new payments too');
my ($in_future, $above_new) = split /\|/, sql($db, q{
	SELECT count(*) FILTER (WHERE ulid_time(s.id::ulid) > now() + interval '100 years'),
		   count(*) FILTER (WHERE s.id::ulid > (SELECT max(id) FROM accounts WHERE name LIKE 'new %'))
	FROM snap.accounts s});
note("uuid: of the 5000 old (v4) ids, $in_future have a time over 100 years ahead, $above_new sort above every new id");
cmp_ok($in_future, '>=', 4850, 'uuid: old v4 ids have meaningless times (nearly all far in the future)');
cmp_ok($above_new, '>=', 4850, 'uuid: ... and nearly all sort above the new ids (about 99%, as the guide says)');

# the foreign keys still work
($state) = psql_error($node, $db, 'INSERT INTO payments (account_id, amount) VALUES (gen_ulid(), 1)');
is($state, '23503', 'uuid: a payment of an unknown account is refused (23503)');
is(sql($db, "SELECT count(*) FROM payments WHERE account_id = '$old_uuid'::uuid::ulid"), 4,
	'uuid: an old account has its 4 payments');
sql($db, "DELETE FROM accounts WHERE id = '$old_uuid'::uuid::ulid");
is(sql($db, "SELECT count(*) FROM payments WHERE account_id = '$old_uuid'::uuid::ulid"), 0,
	'uuid: ... and ON DELETE CASCADE still deletes them with it');

# uuid v7 values keep their time (PostgreSQL 18 has uuidv7())
SKIP:
{
	skip 'this server has no uuidv7() (PostgreSQL 18 has)', 2
	  unless sql($db, q{SELECT count(*) FROM pg_proc WHERE proname = 'uuidv7'}) > 0;
	sql($db, q{
		CREATE TABLE events_v7 (id uuid PRIMARY KEY DEFAULT uuidv7(), at timestamptz NOT NULL DEFAULT clock_timestamp(),
								batch int NOT NULL);
		INSERT INTO events_v7 (batch) SELECT 1 FROM generate_series(1, 2000);
		ALTER TABLE events_v7 ALTER id TYPE ulid, ALTER id SET DEFAULT gen_ulid();
	});
	is( sql($db, q{
			SELECT count(*), bool_and(ulid_time(id) = uuid_extract_timestamp(id::uuid)),
				   bool_and(abs(extract(epoch FROM ulid_time(id) - at)) < 1)
			FROM events_v7}),
		'2000|t|t',
		'uuid v7: as ULIDs the 2000 values keep their millisecond (uuid_extract_timestamp, within 1 s of the insert)');
	sql($db, q{
		SELECT pg_sleep(0.01);
		INSERT INTO events_v7 (batch) SELECT 2 FROM generate_series(1, 100);});
	is( sql($db, q{
			SELECT (SELECT min(id) FROM events_v7 WHERE batch = 2) > (SELECT max(id) FROM events_v7 WHERE batch = 1)}),
		't', 'uuid v7: new ids from gen_ulid() sort after them');
}

# ===========================================================================
# 3. int keys onto cosid_next_int
$db = 'int';
new_db($db);
run_block($db, 'int-schema', 'int');
sql($db, q{
	INSERT INTO tickets (title) SELECT 'ticket ' || g FROM generate_series(1, 5000) g;
	INSERT INTO ticket_events SELECT id, s, 'event ' || s FROM tickets, generate_series(1, 2) s;
	BEGIN;
	INSERT INTO tickets (title) SELECT 'rolled back' FROM generate_series(1, 20);
	ROLLBACK;
	INSERT INTO seats (label) SELECT 'seat ' || g FROM generate_series(1, 3000) g;
	BEGIN;
	INSERT INTO seats (label) SELECT 'rolled back' FROM generate_series(1, 40);
	ROLLBACK;
	CREATE SCHEMA snap;
	CREATE TABLE snap.tickets AS SELECT * FROM tickets;
	CREATE TABLE snap.ticket_events AS SELECT * FROM ticket_events;
	CREATE TABLE snap.seats AS SELECT * FROM seats;
});
my $int_fks = sql($db, $fk_sql);

# ---- serial
run_block($db, 'int-serial', 'int, serial');
is(default_of($db, 'tickets', 'id'), q{cosid_next_int('tickets'::text)},
	'int, serial: the default is cosid_next_int(\'tickets\')');
is(type_of($db, 'tickets', 'id'), 'integer', 'int, serial: the column stays integer');
is(sql($db, q{SELECT data_type, increment_by FROM pg_sequences WHERE sequencename = 'tickets_id_seq'}),
	'bigint|100', 'int, serial: the adopted sequence is bigint, counting by the step');
sql_ok($db, q{
	WITH t AS (INSERT INTO tickets (title) SELECT 'new' FROM generate_series(1, 1000) RETURNING id)
	INSERT INTO ticket_events SELECT id, 1, 'opened' FROM t},
	'int, serial: 1000 tickets with an event each from the default');
is(sql($db, q{SELECT min(id), max(id), count(*) FROM tickets WHERE title = 'new'}), '5021|6020|1000',
	'int, serial: the new ids continue after the last number the sequence gave (5020, the last 20 rolled back)');

# ---- identity
run_block($db, 'int-identity', 'int, identity');
is(default_of($db, 'seats', 'id'), q{cosid_next_int('seats'::text)},
	"int, identity: the default is cosid_next_int('seats')");
is(sql($db, q{SELECT attidentity FROM pg_attribute WHERE attrelid = 'seats'::regclass AND attname = 'id'}), '',
	'int, identity: the column is no identity any more');
is(sql($db, q{SELECT to_regclass('seats_id_seq') IS NULL}), 't', "int, identity: its sequence is gone");
is(sql($db, q{SELECT config->>'start' FROM cosid.generators WHERE name = 'seats'}), '3041',
	'int, identity: the generator starts at 3041, above the 40 numbers rolled back');
sql_ok($db, q{INSERT INTO seats (label) SELECT 'new' FROM generate_series(1, 500)},
	'int, identity: 500 seats from the default');
is(sql($db, q{SELECT min(id), max(id), count(*) FROM seats WHERE label = 'new'}), '3041|3540|500',
	'int, identity: the new ids are 3041 to 3540');

is( sql($db, q{
		SELECT (SELECT count(*) FROM (SELECT * FROM snap.tickets EXCEPT SELECT * FROM tickets) d),
			   (SELECT count(*) FROM (SELECT * FROM snap.ticket_events EXCEPT SELECT * FROM ticket_events) d),
			   (SELECT count(*) FROM (SELECT * FROM snap.seats EXCEPT SELECT * FROM seats) d),
			   (SELECT count(*) FROM tickets), (SELECT count(DISTINCT id) FROM tickets),
			   (SELECT count(*) FROM ticket_events), (SELECT count(*) FROM seats), (SELECT count(DISTINCT id) FROM seats),
			   (SELECT count(*) FROM ticket_events e WHERE NOT EXISTS (SELECT FROM tickets t WHERE t.id = e.ticket_id))}),
	'0|0|0|6000|6000|11000|3500|3500|0', 'int: every old ticket, event and seat unchanged, all counts, no orphan event');
is(sql($db, $fk_sql), $int_fks, 'int: the foreign key is as it was');

# an identity below an id given explicitly: the start is above the table's highest id
$db = 'int_explicit';
new_db($db);
run_block($db, 'int-schema', 'int, identity under an explicit id');
sql($db, q{
	INSERT INTO seats (label) SELECT 'seat ' || g FROM generate_series(1, 100) g;
	INSERT INTO seats (id, label) VALUES (500, 'explicit');});
run_block($db, 'int-identity', 'int, identity under an explicit id');
is(sql($db, q{INSERT INTO seats (label) VALUES ('new') RETURNING id}), '501',
	'int, identity under an explicit id (500): the generator starts above it');

# ---- at the top of int4
$db = 'int_top';
new_db($db);
run_block($db, 'int-schema', 'int, at the top');
sql($db, q{SELECT setval('tickets_id_seq', 2147483000); INSERT INTO tickets (title) VALUES ('serial')});
run_block($db, 'int-serial', 'int, at the top');
sql_ok($db, q{INSERT INTO tickets (title) SELECT 'top' FROM generate_series(1, 645)},
	'int, at the top: 645 tickets from the default');
sql_ok($db, q{INSERT INTO tickets (title) VALUES ('top')}, 'int, at the top: ... and one more');
is(sql($db, q{SELECT min(id), max(id), count(*) FROM tickets WHERE title = 'top'}), '2147483002|2147483647|646',
	'int, at the top: every number up to 2147483647 is issued');
($state, $msg, $stderr) = psql_error($node, $db, q{INSERT INTO tickets (title) VALUES ('past the top')});
is($state, '22003', 'int, at the top: past 2147483647 the insert fails with 22003') or diag($stderr // 'it succeeded');
is($msg, 'id of generator "tickets" is out of range for type integer', 'int, at the top: ... with the guide\'s message');

# the same without ALTER SEQUENCE ... AS bigint: what the guide warns of
$db = 'int_top_int4';
new_db($db);
run_block($db, 'int-schema', 'int, at the top, int4 sequence');
(my $as_is = block('int-serial')) =~ s/^ALTER SEQUENCE tickets_id_seq AS bigint;\n//m
  or die 'guide block int-serial has no ALTER SEQUENCE line';
sql($db, q{SELECT setval('tickets_id_seq', 2147483000); INSERT INTO tickets (title) VALUES ('serial')});
sql_ok($db, $as_is, 'int, at the top, int4 sequence: the recipe without ALTER SEQUENCE ... AS bigint runs');
# insert one row at a time (each in a subtransaction) until one fails
my ($issued, $last_state) = split /\|/, sql($db, q{
	DO $fill$
	DECLARE
		n int := 0;
		st text := '';
	BEGIN
		WHILE n < 700 LOOP
			BEGIN
				INSERT INTO tickets (title) VALUES ('top');
				n := n + 1;
			EXCEPTION WHEN OTHERS THEN
				GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
				EXIT;
			END;
		END LOOP;
		PERFORM set_config('fill.result', n || '|' || st, false);
	END
	$fill$;
	SELECT current_setting('fill.result');});
note("int4 sequence: $issued numbers issued above 2147483001, then $last_state");
is($last_state, '2200H', 'int, at the top, int4 sequence: issuing ends with 2200H (the sequence\'s maximum), as the guide says');
($state) = psql_error($node, $db, q{SELECT cosid_next_int('tickets')});
is($state, '2200H', 'int, at the top, int4 sequence: ... on every call after');
my ($seq_last, $max_id) = split /\|/, sql($db, q{
	SELECT (SELECT last_value FROM tickets_id_seq), (SELECT max(id) FROM tickets)});
is($issued, $seq_last - 2147483001,
	"int, at the top, int4 sequence: every number the sequence gave ($seq_last at the end) is handed out first");
is($max_id, $seq_last, 'int, at the top, int4 sequence: ... up to the last one it gave');

# ===========================================================================
# 4. a CHECK constraint that decodes through a named generator
$db = 'chk';
new_db($db);
run_block($db, 'check-named', 'check, named');
# the same table in schema public, which sorts after cosid
sql($db, q{
	INSERT INTO app.a_codes (label) SELECT 'label ' || g FROM generate_series(1, 3000) g;
	CREATE TABLE public.codes (LIKE app.a_codes INCLUDING ALL);
	INSERT INTO public.codes SELECT * FROM app.a_codes;});
my $rows_sql = q{SELECT count(*), md5(string_agg(code || ' ' || label, ',' ORDER BY code)) FROM app.a_codes};
my $rows = sql($db, $rows_sql);
like($rows, qr/^3000\|/, 'check: 3000 codes from the generator');

my %env = (PGHOST => $node->host, PGPORT => $node->port);

# run a command with the node's connection: (exit status, stderr)
sub run_cmd
{
	my (@cmd) = @_;
	local @ENV{ keys %env } = values %env;
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	return ($? >> 8, $err);
}

my $dump = $node->basedir . '/named.dump';
my ($rc, $err) = run_cmd('pg_dump', '-Fc', '-f', $dump, '-d', $db);
is($rc, 0, 'check: pg_dump -Fc') or diag($err);

sql('postgres', 'CREATE DATABASE chk_named');
($rc, $err) = run_cmd('pg_restore', '-d', 'chk_named', $dump);
is($rc, 1, 'check, named: pg_restore fails (exit status 1)');
for my $line (split /\n/, block('check-restore-error'))
{
	like($err, qr/^\Q$line\E$/m, "check, named: pg_restore says: $line");
}
is(sql('chk_named', 'SELECT count(*) FROM app.a_codes'), 0, 'check, named: the restored table is empty');
is(sql('chk_named', 'SELECT count(*) FROM public.codes'), 3000,
	'check, named: (the same table in schema public, restored after the generators, has its 3000 rows)');
is(sql('chk_named', q{SELECT count(*) FROM cosid.generator WHERE name = 'short'}), 1,
	'check, named: (the generator itself was restored, after the table)');

# the guide's four passes restore the same dump
my $rescue = block('check-rescue');
my $passes = 0;
for my $line (split /\n/, $rescue)
{
	my @cmd = map { $_ eq 'newdb' ? 'chk_rescue' : $_ eq 'app.dump' ? $dump : $_ } split ' ', $line;
	($rc, $err) = run_cmd(@cmd);
	is($rc, 0, "check, rescue: $line") or diag($err);
	is($err, '', "check, rescue: ... with nothing on stderr");
	$passes++;
}
is($passes, 5, 'check, rescue: createdb and four pg_restore passes');
is(sql('chk_rescue', $rows_sql), $rows, 'check, rescue: every row restored');
is( sql('chk_rescue', q{
		SELECT cosid_decode('short', cosid_next_text('short')) > max(cosid_decode('short', code)) FROM app.a_codes}),
	't', 'check, rescue: the generator continues above the restored codes');

# the inline form (the table in public, named form, is not needed any more)
my $check_sql = q{SELECT pg_get_constraintdef(oid) FROM pg_constraint
	WHERE conrelid = 'app.a_codes'::regclass AND contype = 'c'};
sql($db, 'DROP TABLE public.codes');
my ($list) = block('check-inline') =~ /cosid_decode_immutable\(code, '(\[[^']*\])'\)/
  or die 'guide block check-inline has no inline codec list';
is( sql($db, qq{
		SELECT count(*) FROM app.a_codes
		WHERE cosid_decode('short', code) IS DISTINCT FROM cosid_decode_immutable(code, '$list')}),
	0, "check, inline: the inline list decodes every code as the generator does");
run_block($db, 'check-inline', 'check, inline');
like( sql($db, $check_sql),
	qr/^CHECK \(\(cosid_decode_immutable\(code, '\Q$list\E'::jsonb\) > 0\)\)$/, 'check, inline: the constraint names the list');
sql($db, q{INSERT INTO app.a_codes (label) SELECT 'after ' || g FROM generate_series(1, 100) g});
$rows = sql($db, $rows_sql);
my $dump2 = $node->basedir . '/inline.dump';
($rc, $err) = run_cmd('pg_dump', '-Fc', '-f', $dump2, '-d', $db);
is($rc, 0, 'check, inline: pg_dump -Fc') or diag($err);
sql('postgres', 'CREATE DATABASE chk_inline');
($rc, $err) = run_cmd('pg_restore', '--exit-on-error', '-d', 'chk_inline', $dump2);
is($rc, 0, 'check, inline: pg_restore --exit-on-error succeeds') or diag($err);
is($err, '', 'check, inline: ... with nothing on stderr');
is(sql('chk_inline', $rows_sql), $rows, 'check, inline: every row restored (3100)');
is( sql('chk_inline', $check_sql),
	sql($db, $check_sql),
	'check, inline: the restored constraint is the inline one');
sql_ok('chk_inline', q{INSERT INTO app.a_codes (label) VALUES ('restored')},
	'check, inline: the restored table takes a new code from its default');
for my $bad ('S12-', '12')
{
	($state) = psql_error($node, 'chk_inline', "INSERT INTO app.a_codes (code, label) VALUES ('$bad', 'bad')");
	is($state, '22P02', "check, inline: a code that does not decode ('$bad') is refused, with 22P02");
}

$node->stop;
done_testing();
