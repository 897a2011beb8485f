# Shared memory holds the state of at most cosid.max_generators generators,
# and a dropped generator gives its entry back.
#
# With cosid.max_generators = 16 (its minimum), 300 times over: define,
# issue and drop a segment and a snowflake generator under the same names
# again and again, and two more under new names each time, while pgbench (2
# clients) issues from a generator 'steady'.  The loop never fails with "too
# many cosid generators"; kill -9 in its middle, then it goes on.  steady's
# ids never repeat, nor do those of the snowflake name defined 300 times.
# Then the bound is real: 16 generators defined and in use at once, and one
# more takes the entry of one of them (1.4: the database holds every entry
# and churns through its own; 1.3 failed with 53200 until one had been idle
# for 10 s): shared memory still holds 16, and the generator whose entry
# went goes on above what it issued when it is used again.
#
# In 1.0 an entry was never removed and the hash of entries grew into the
# spare shared memory: no bound at 16 (the 17th generator worked), and only
# after about 6,800 generators did defining new ones fail.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use CosidTest;

my $node = cosid_node('generator_churn', conf => [ 'cosid.max_generators = 16' ]);
my $dir = $node->basedir;
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('steady', '{"strategy":"snowflake"}');
	CREATE TABLE steady_ids (round int, id bigint);
	CREATE TABLE churn (n bigserial, i int, name text, id bigint);
	CREATE TABLE loop_done (i int);
});
is($node->safe_psql('postgres', 'SHOW cosid.max_generators'), '16', 'cosid.max_generators = 16');

my $steady = "$dir/steady.sql";
PostgreSQL::Test::Utils::append_to_file($steady,
	"INSERT INTO steady_ids SELECT :round, cosid_next('steady') FROM generate_series(1, 10);\n");

sub start_steady
{
	my ($round, $seconds) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 2, '-j', 2, '-T', $seconds, '-f', $steady,
			'-D', "round=$round", '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# Iterations $from..$to of the loop, each statement in its own transaction.
sub loop_sql
{
	my ($from, $to) = @_;
	my $sql = '';
	for my $i ($from .. $to)
	{
		$sql .= qq{
SELECT cosid_define('seg_same', '{"strategy":"segment","step":10}');
SELECT count(*) FROM cosid_next_many('seg_same', 15);
SELECT cosid_drop('seg_same');
SELECT cosid_define('snow_same', '{"strategy":"snowflake"}');
INSERT INTO churn (i, name, id) SELECT $i, 'snow_same', cosid_next('snow_same') FROM generate_series(1, 3);
SELECT cosid_drop('snow_same');
SELECT cosid_define('seg_$i', '{"strategy":"segment","step":5}');
INSERT INTO churn (i, name, id) SELECT $i, 'seg_$i', cosid_next('seg_$i') FROM generate_series(1, 7);
SELECT cosid_drop('seg_$i');
SELECT cosid_define('snow_$i', '{"strategy":"snowflake","time-bits":42,"seq-bits":11}');
INSERT INTO churn (i, name, id) SELECT $i, 'snow_$i', cosid_next('snow_$i');
SELECT cosid_drop('snow_$i');
SELECT pg_sleep(0.01);
INSERT INTO loop_done VALUES ($i);
};
	}
	return $sql;
}

sub run_loop
{
	my ($from, $to) = @_;
	my $t0 = time();
	my ($ret, $out, $err) = $node->psql('postgres', loop_sql($from, $to), on_error_stop => 1);
	note(sprintf('iterations %d..%d took %.1f s', $from, $to, time() - $t0));
	return ($ret, $err);
}

# ---- iterations 1..150 while steady issues
my $bench = start_steady(1, 2);
my ($ret, $err) = run_loop(1, 150);
is($ret, 0, 'iterations 1..150 (define, issue, drop four generators each) all succeed') or diag($err);
unlike($err, qr/too many cosid generators/, '... none fails with "too many cosid generators"');
ok($bench->{h}->finish, 'steady: pgbench (2 clients) issued meanwhile with no error')
  or diag("${ $bench->{out} }\n${ $bench->{err} }");

# ---- iterations from 151 in the background, kill -9 in their middle
$bench = start_steady(2, 60);
my ($lout, $lerr) = ('', '');
PostgreSQL::Test::Utils::append_to_file("$dir/loop_rest.sql", loop_sql(151, 300));
my $loop = IPC::Run::start(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
		'-d', 'postgres', '-f', "$dir/loop_rest.sql"
	],
	'>', \$lout, '2>', \$lerr);
ok( poll_until(60, sub { $node->safe_psql('postgres', 'SELECT coalesce(max(i), 0) FROM loop_done') >= 170 }, 20),
	'the loop runs past iteration 170 in the background');
crash_restart($node);
$loop->finish;
$bench->{h}->finish;
my $done = $node->safe_psql('postgres', 'SELECT max(i) FROM loop_done');
note("kill -9 during iteration " . ($done + 1) . "; the loop said: $lerr");
cmp_ok($done, '<', 300, 'the loop was killed in its middle');
unlike($lerr, qr/too many cosid generators/, '... and had not failed with "too many cosid generators"');

# the rest of the loop, from the iteration the crash cut short (its
# generators may have been defined before the crash)
my $next = $done + 1;
$node->safe_psql('postgres', qq{
	SELECT cosid_drop(n, true) FROM unnest(ARRAY['seg_same', 'snow_same', 'seg_$next', 'snow_$next']) n;
	DELETE FROM churn WHERE i = $next;
});
$bench = start_steady(3, 2);
($ret, $err) = run_loop($next, 300);
is($ret, 0, "after kill -9, iterations $next..300 all succeed") or diag($err);
unlike($err, qr/too many cosid generators/, '... none fails with "too many cosid generators"');
ok($bench->{h}->finish, 'steady: pgbench issued meanwhile with no error')
  or diag("${ $bench->{out} }\n${ $bench->{err} }");

is($node->safe_psql('postgres', 'SELECT count(DISTINCT i), min(i), max(i) FROM loop_done'),
	'300|1|300', 'the loop ran all 300 iterations');
is($node->safe_psql('postgres', 'SELECT count(*) FROM churn'), 300 * 11,
	'... and kept all their ids (3 snow_same, 7 seg_i, 1 snow_i each)');
is($node->safe_psql('postgres', "SELECT count(*) FROM cosid.generator WHERE name <> 'steady'"),
	'0', 'every generator of the loop is dropped');

is( $node->safe_psql('postgres', q{
		SELECT count(*) > 0, count(*) = count(DISTINCT id) FROM steady_ids GROUP BY round = 3
		ORDER BY round = 3}),
	"t|t\nt|t", 'steady: ids before and after the crash, none twice');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM steady_ids'),
	'0', 'steady: no id issued twice in the whole run');
is( $node->safe_psql('postgres', q{
		SELECT (SELECT min(id) FROM steady_ids WHERE round = 3)
			 > (SELECT max(id) FROM steady_ids WHERE round < 3)}),
	't', 'steady: the ids issued after the crash are above those before');
is( $node->safe_psql('postgres', q{
		SELECT count(*), count(DISTINCT id),
			   count(*) FILTER (WHERE id <= prev)
		FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM churn WHERE name = 'snow_same') s}),
	'900|900|0', "'snow_same', defined and dropped 300 times: 900 ids, strictly increasing");

# ---- the bound: 16 generators in use ('steady' and 15 more, all used in
# the last few seconds), then one more
my $define15 = "SELECT cosid_next('steady');\n";
for my $k (1 .. 15)
{
	my $strategy = $k % 2 ? 'segment' : 'snowflake';
	$define15 .= qq{SELECT cosid_define('b$k', '{"strategy":"$strategy"}');\n}
	  . qq{SELECT cosid_next('b$k');\n};
}
my ($state, $msg, $stderr) = psql_error($node, 'postgres', $define15);
ok(!defined $state, "15 more generators defined and in use (16 with 'steady')") or diag($stderr);
($state, $msg, $stderr) = psql_error($node, 'postgres', q{
	BEGIN;
	SELECT cosid_define('b16', '{"strategy":"snowflake"}');
	SELECT cosid_next('b16');
	COMMIT;
});
ok(!defined $state, 'a 17th generator in use takes the entry of one of the 16 (1.3: 53200)') or diag($stderr);
is($node->safe_psql('postgres', q{SELECT count(*) FROM cosid.stats()}), '16',
	'... shared memory still holds 16 of them (cosid.max_generators)');
is($node->safe_psql('postgres', "SELECT cosid_next('b15') > 0"), 't',
	'the 16 generators in use still issue');

# (dropped and defined again: a drop frees the entry at once)
$node->safe_psql('postgres', "SELECT cosid_drop('b1'); SELECT cosid_drop('b16', true);");
($state, $msg, $stderr) = psql_error($node, 'postgres', q{
	SELECT cosid_define('b16', '{"strategy":"snowflake"}');
	SELECT cosid_next('b16');
});
ok(!defined $state, 'after one of them is dropped, the new one is defined and issues')
  or diag($stderr);

# ---- entries idle for 10 seconds are taken again (issue 29: found in clock
# order, not by a scan of every entry), and a generator whose entry was
# taken goes on above what it issued.  In use now: 'steady', b2 .. b16.
my $before = $node->safe_psql('postgres', "SELECT cosid_next('b14') || ' ' || cosid_next('b15')");
sleep 11;
my $define16 = '';
for my $k (1 .. 16)
{
	my $strategy = $k % 2 ? 'segment' : 'snowflake';
	$define16 .= qq{SELECT cosid_define('c$k', '{"strategy":"$strategy"}');\n}
	  . qq{SELECT cosid_next('c$k');\n};
}
($state, $msg, $stderr) = psql_error($node, 'postgres', $define16);
ok(!defined $state, '16 entries idle for 10 s: 16 new generators take them') or diag($stderr);
my $after = $node->safe_psql('postgres', "SELECT cosid_next('b14') || ' ' || cosid_next('b15')");
my ($b14, $b15) = split / /, $before;
my ($a14, $a15) = split / /, $after;
is($node->safe_psql('postgres', "SELECT ${a14}::bigint > ${b14}::bigint"), 't',
	"the snowflake generator b14, whose entry one of them took, takes one again at once, above its earlier ids ($b14, then $a14)");
is($node->safe_psql('postgres', "SELECT ${a15}::bigint > ${b15}::bigint"), 't',
	"... and the segment generator b15 above its earlier numbers ($b15, then $a15)");

$node->stop;
done_testing();
