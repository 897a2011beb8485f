# Several backends calling gen_ulid_monotonic() at the same time: no ULID is
# made twice, and each backend sees its own ULIDs strictly increase.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('concurrency');
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE SEQUENCE call_order;
	CREATE UNLOGGED TABLE made (client int, n bigint, u ulid);
	CREATE UNLOGGED TABLE made_random (u ulid);
});

my $clients = 4;
my $per_tx = 500;
my $tx = 50;
my $script = $node->basedir . '/mono.sql';
PostgreSQL::Test::Utils::append_to_file($script, qq{
INSERT INTO made SELECT :client_id, nextval('call_order'), gen_ulid_monotonic() FROM generate_series(1, $per_tx);
INSERT INTO made_random SELECT gen_ulid() FROM generate_series(1, $per_tx);
});

$node->command_ok(
	[ 'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', $tx, '-f', $script, 'postgres' ],
	"pgbench: $clients clients calling gen_ulid_monotonic() and gen_ulid()");

my $total = $clients * $per_tx * $tx;
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT u) FROM made'),
	"$total|$total", 'gen_ulid_monotonic(): no ULID made twice');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (
		SELECT u, lag(u) OVER (PARTITION BY client ORDER BY n) AS prev FROM made) s
	WHERE u <= prev}),
	'0', 'each backend sees its ULIDs strictly increase');
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT u) FROM made_random'),
	"$total|$total", 'gen_ulid(): no ULID made twice');

$node->stop;
done_testing();
