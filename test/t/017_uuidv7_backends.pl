# Version 7 uuids from 8 backends at once (1.3).
#
#  - gen_uuidv7_monotonic() is strictly increasing across the server, not
#    per backend: 8 pgbench clients take turns (each call under one advisory
#    lock, so the order of the log's sequence is the order of the calls) and
#    every uuid is above the one made before it, whoever made it.  Then the
#    same 8 clients with no lock: none twice, and each backend's in order.
#  - gen_uuidv7(): 8 clients, 200,000 uuids, none twice, all version 7,
#    variant 10, each backend's times never going down.
#  - A 1,000,000-row primary key of gen_uuidv7() is no larger than one of
#    PostgreSQL 18's uuidv7() (on 18), nor than one of gen_random_uuid().
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('uuidv7', conf => [ 'max_connections = 40' ]);
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE TABLE turns (seq bigint, pid int, u uuid);
	CREATE TABLE free (seq bigserial, pid int, u uuid);
	CREATE TABLE plain (pid int, n bigserial, u uuid);
	CREATE SEQUENCE turn_seq;
});

# ---- in turns: the order of the calls is the order of turn_seq
my $load = start_load_tx($node, 8, 500, q{
BEGIN;
SELECT pg_advisory_xact_lock(17);
INSERT INTO turns SELECT nextval('turn_seq'), pg_backend_pid(), gen_uuidv7_monotonic() FROM generate_series(1, 5);
COMMIT;});
my ($ok, $tx, $out) = finish_load($load);
ok($ok, '8 clients took 4,000 turns') or diag($out);
is( $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT pid), count(DISTINCT u),
		   count(*) FILTER (WHERE u <= prev)
	FROM (SELECT pid, u, lag(u) OVER (ORDER BY seq) AS prev FROM turns) s}),
	'20000|8|20000|0', 'gen_uuidv7_monotonic(), 8 backends in turns: 20,000 uuids, each above the one made before it');

# ---- at once: none twice, each backend's in the order it made them
$load = start_load_tx($node, 8, 50, q{
INSERT INTO free (pid, u) SELECT pg_backend_pid(), gen_uuidv7_monotonic() FROM generate_series(1, 500);});
($ok, $tx, $out) = finish_load($load);
ok($ok, '8 clients at once') or diag($out);
is( $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT pid), count(DISTINCT u),
		   count(*) FILTER (WHERE u <= prev),
		   (SELECT min(u::ulid) FROM free) > (SELECT max(u::ulid) FROM turns)
	FROM (SELECT pid, u, lag(u) OVER (PARTITION BY pid ORDER BY seq) AS prev FROM free) s}),
	'200000|8|200000|0|t',
	'gen_uuidv7_monotonic(), 8 backends at once: 200,000 uuids, none twice, each backend\'s increasing, all above the earlier ones');

# ---- gen_uuidv7(), 8 backends at once
$load = start_load_tx($node, 8, 50, q{
INSERT INTO plain (pid, u) SELECT pg_backend_pid(), gen_uuidv7() FROM generate_series(1, 500);});
($ok, $tx, $out) = finish_load($load);
ok($ok, '8 clients of gen_uuidv7()') or diag($out);
is( $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT u),
		   bool_and(get_byte(uuid_send(u), 6) >> 4 = 7 AND get_byte(uuid_send(u), 8) >> 6 = 2),
		   count(*) FILTER (WHERE uuidv7_time(u) < prev)
	FROM (SELECT u, lag(uuidv7_time(u)) OVER (PARTITION BY pid ORDER BY n) AS prev FROM plain) s}),
	'200000|200000|t|0',
	'gen_uuidv7(), 8 backends: 200,000 uuids, none twice, version 7 and variant 10, each backend\'s times never going down');

# ---- index size: 1,000,000 rows
my %size;
my @kinds = ('gen_uuidv7()', 'gen_random_uuid()');
push @kinds, 'uuidv7()' if $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;
for my $i (0 .. $#kinds)
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE k$i (id uuid PRIMARY KEY DEFAULT $kinds[$i]);
		INSERT INTO k$i SELECT FROM generate_series(1, 1000000);
	});
	$size{ $kinds[$i] } = $node->safe_psql('postgres', "SELECT pg_relation_size('k${i}_pkey')");
}
note(join(', ', map { "$_: $size{$_} bytes" } @kinds));
cmp_ok($size{'gen_uuidv7()'}, '<=', $size{'gen_random_uuid()'},
	'a 1M-row primary key of gen_uuidv7() is no larger than one of gen_random_uuid()');
SKIP:
{
	skip 'uuidv7() is PostgreSQL 18\'s', 1 unless defined $size{'uuidv7()'};
	cmp_ok($size{'gen_uuidv7()'}, '<=', $size{'uuidv7()'},
		'... nor than one of PostgreSQL 18\'s uuidv7()');
}

$node->stop;
done_testing();
