# One segment generator (step 100) shared by four sessions at once: four
# pgbench clients, 100k cosid_next() calls each.  No number is issued twice;
# the segments are the server's, so the numbers are dense: the gap
# (max - min + 1 - count) is at most one partly used segment; each session
# sees its numbers increase in the order it asked for them; and the
# generator fetched about one segment per step numbers (400k / step, plus at
# most the few fetched ahead).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use CosidTest;

my $step = 100;
my $node = cosid_node('segment_concurrency');
$node->safe_psql('postgres', qq{
	CREATE EXTENSION cosid;
	SELECT cosid_define('seg', '{"strategy":"segment","step":$step}');
	CREATE SEQUENCE call_order;
	CREATE UNLOGGED TABLE made (client int, n bigint, id bigint);
});

my $clients = 4;
my $per_tx = 2000;
my $tx = 50;    # per client: 100k numbers
my $total = $clients * $per_tx * $tx;
my $script = $node->basedir . '/next.sql';
PostgreSQL::Test::Utils::append_to_file($script, qq{
INSERT INTO made SELECT :client_id, nextval('call_order'), cosid_next('seg') FROM generate_series(1, $per_tx);
});

my $t0 = time();
$node->command_ok(
	[
		'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', $tx, '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	"pgbench: $clients clients, $tx x $per_tx cosid_next() each");
note(sprintf('%d numbers in %.2f s', $total, time() - $t0));

is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM made'),
	"$total|$total", "$total numbers, all distinct");
is($node->safe_psql('postgres', 'SELECT count(DISTINCT client) FROM made'),
	$clients, "all $clients clients issued");

my ($min, $max, $count) = split /\|/,
  $node->safe_psql('postgres', 'SELECT min(id), max(id), count(*) FROM made');
my $gap = $max - $min + 1 - $count;
note("numbers $min..$max, $count of them: gap $gap");
cmp_ok($min, '==', 1, 'the first number is the generator\'s start (1)');
cmp_ok($gap, '<=', $step, "the gap is at most one partly used segment ($step numbers)");

is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM made) s
		WHERE id <= prev}),
	'0', 'each client sees its numbers increase in call order');

# The sessions really ran at the same time: their number ranges interleave.
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT client, min(id) AS lo, max(id) AS hi FROM made GROUP BY client) a
		JOIN (SELECT client, min(id) AS lo, max(id) AS hi FROM made GROUP BY client) b
		  ON a.client < b.client AND a.lo < b.hi AND b.lo < a.hi}),
	$clients * ($clients - 1) / 2, 'the clients ran concurrently (their ranges overlap)');

my ($issued, $fetches, $waits) = split /\|/, $node->safe_psql('postgres',
	"SELECT issued, segment_fetches, segment_waits FROM cosid.generator_stats WHERE name = 'seg'");
note("cosid.generator_stats: issued $issued, segment_fetches $fetches, segment_waits $waits");
is($issued, $total, 'cosid.generator_stats counts every number issued');
# Segments fetched but not yet used at the end: the current range and the
# reserve, each at most 16 segments (the reserve grows to 16 segments when
# backends had to wait, and a whole reserve becomes the current range).
my $need = $total / $step;
my $unused_max = 2 * 16;
ok($fetches >= $need && $fetches <= $need + $unused_max,
	"segment_fetches ($fetches) is within [$need, " . ($need + $unused_max) . ']');

# the backing sequence is where the generator says: just past the segments fetched
my $seq_last = $node->safe_psql('postgres', q{
	SELECT pg_sequence_last_value(sequence) FROM cosid.generators WHERE name = 'seg'});
is($seq_last, $fetches * $step, 'the backing sequence gave exactly segment_fetches segments');

$node->stop;
done_testing();
