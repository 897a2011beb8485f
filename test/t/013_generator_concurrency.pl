# One snowflake generator shared by five sessions at once: four pgbench
# clients calling cosid_next() (100k ids each) and a fifth calling
# cosid_next_many(100000).  No id is issued twice, and each session sees its
# own ids strictly increase in the order it asked for them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use CosidTest;

my $node = cosid_node('gen_concurrency');
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE SEQUENCE call_order;
	CREATE UNLOGGED TABLE made (client int, n bigint, id bigint);
	CREATE UNLOGGED TABLE made_many (n bigserial, id bigint);
});

my $clients = 4;
my $per_tx = 2000;
my $tx = 100;    # per client: 200k ids (time for the fifth session to start among them)
my $script = $node->basedir . '/next.sql';
PostgreSQL::Test::Utils::append_to_file($script, qq{
INSERT INTO made SELECT :client_id, nextval('call_order'), cosid_next('g') FROM generate_series(1, $per_tx);
});

my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', $tx, '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);

# The fifth session starts once the clients are under way.
for (my $i = 0; $i < 600; $i++)
{
	last if $node->safe_psql('postgres', 'SELECT count(*) > 0 FROM made') eq 't';
	usleep(10_000);
}
$node->safe_psql('postgres',
	"INSERT INTO made_many (id) SELECT cosid_next_many('g', 100000)");
my $clients_rows_after_many = $node->safe_psql('postgres', 'SELECT count(*) FROM made');

ok($pgbench->finish, "pgbench: $clients clients, $tx x $per_tx cosid_next() each")
  or diag("pgbench stdout:\n$out\nstderr:\n$err");
note("rows of the clients when cosid_next_many had finished: $clients_rows_after_many");

my $total = $clients * $per_tx * $tx;
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM made'),
	"$total|$total", "cosid_next(): $total ids, all distinct");
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM made) s
		WHERE id <= prev}),
	'0', 'each client sees its ids strictly increase in call order');
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM made_many'),
	'100000|100000', 'cosid_next_many(): 100000 ids, all distinct');
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM made_many) s
		WHERE id <= prev}),
	'0', 'cosid_next_many() returns its ids in increasing order');
is($node->safe_psql('postgres', 'SELECT count(*) FROM made_many JOIN made USING (id)'),
	'0', 'no id of cosid_next_many() was also issued by cosid_next()');

# The sessions really ran at the same time: their id ranges interleave.
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT client, min(id) AS lo, max(id) AS hi FROM made GROUP BY client) a
		JOIN (SELECT client, min(id) AS lo, max(id) AS hi FROM made GROUP BY client) b
		  ON a.client < b.client AND a.lo < b.hi AND b.lo < a.hi}),
	$clients * ($clients - 1) / 2, 'the clients ran concurrently (their id ranges overlap)');
is( $node->safe_psql('postgres', q{
		SELECT (SELECT min(id) FROM made_many) < (SELECT max(id) FROM made)
		   AND (SELECT max(id) FROM made_many) > (SELECT min(id) FROM made)}),
	't', 'cosid_next_many() ran while the clients did (id ranges overlap)');

is( $node->safe_psql('postgres', "SELECT issued FROM cosid.generator_stats WHERE name = 'g'"),
	$total + 100000, 'cosid.generator_stats counts every id issued');
is( $node->safe_psql('postgres',
		"SELECT array_agg(DISTINCT (id >> 12) & 1023) FROM (SELECT id FROM made UNION ALL SELECT id FROM made_many) s"),
	'{0}', 'every id carries the one slot of this server (SNOWFLAKE_MS: node bits 12..21)');

$node->stop;
done_testing();
