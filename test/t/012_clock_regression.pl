# Clock regression inside a running server (libfaketime, offset read from a
# file at every clock read): the generator's ClockRegressionPolicy decides.
# Behind by at most borrow-up-to: ids of the last unit are borrowed; at most
# wait-up-to: the call waits for the clock to catch up; more: 55000.  With
# "FAIL" any regression is 55000 at once.  Ids of every generator stay unique
# and strictly increasing throughout.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $node = cosid_node('clock_regression', no_start => 1);
my $offset_file = $node->basedir . '/faketime.rc';
set_fake_offset($offset_file, '+0');
start_faked($node, offset_file => $offset_file);

$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	-- c: custom policy in whole seconds; d: the default (5 ms / 1 s); f: FAIL
	SELECT cosid_define('c', '{"strategy":"snowflake",
		"clock-regression":{"borrow-up-to":"2s","wait-up-to":"5s"}}');
	SELECT cosid_define('d', '{"strategy":"snowflake"}');
	SELECT cosid_define('f', '{"strategy":"snowflake","clock-regression":"FAIL"}');
	CREATE TABLE ids (n bigserial, gen text, id bigint);
});

# Issue $count ids of $gen in one statement; the statement's wall time (s).
sub issue
{
	my ($gen, $count) = @_;
	my $t0 = time();
	$node->safe_psql('postgres',
		"INSERT INTO ids (gen, id) SELECT '$gen', cosid_next('$gen') FROM generate_series(1, $count)");
	return time() - $t0;
}

sub stats
{
	my ($gen) = @_;
	my $row = $node->safe_psql('postgres',
		"SELECT issued, clock_borrows, clock_waits, clock_failures FROM cosid.generator_stats WHERE name = '$gen'");
	my %s;
	@s{qw(issued borrows waits failures)} = split /\|/, $row;
	return \%s;
}

sub rows { return $node->safe_psql('postgres', 'SELECT count(*) FROM ids'); }

# Unix ms of the unit of the newest id of $gen
sub last_unit_ms
{
	my ($gen) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT (extract(epoch FROM (cosid_unpack('$gen', id)).time) * 1000)::bigint
		FROM ids WHERE gen = '$gen' ORDER BY n DESC LIMIT 1});
}

# Expect one cosid_next of $gen to fail with "clock moved backwards"; returns
# the ms behind it reports and the seconds the call took.
sub expect_backwards
{
	my ($gen, $what) = @_;
	my $before = rows();
	my $t0 = time();
	my ($state, $msg, $stderr) = psql_error($node, 'postgres',
		"INSERT INTO ids (gen, id) VALUES ('$gen', cosid_next('$gen'))");
	my $took = time() - $t0;
	is($state, '55000', "$what: SQLSTATE 55000") or diag($stderr // 'it succeeded');
	like($msg, qr/^clock moved backwards by \d+ ms: generator "$gen" will not issue an id$/,
		"$what: the message says the clock moved backwards");
	is(rows(), $before, "$what: no id issued");
	my ($behind) = ($msg // '') =~ /by (\d+) ms/;
	return ($behind // -1, $took, $stderr // '');
}

issue($_, 1000) for qw(c d f);

# ---- custom policy, behind by about 1 s: within borrow-up-to (2 s)
my $unit = last_unit_ms('c');
set_fake_offset($offset_file, '-1');
my $took = issue('c', 5);
my $s = stats('c');
cmp_ok($s->{borrows}, '>', 0, 'behind ~1 s, borrow-up-to 2 s: clock_borrows counted');
is($s->{waits}, '0', 'behind ~1 s, borrow-up-to 2 s: no wait');
cmp_ok($took, '<', 0.9, 'behind ~1 s, borrow-up-to 2 s: the call did not wait');
is( $node->safe_psql('postgres', qq{
		SELECT count(*) FROM (SELECT id FROM ids WHERE gen = 'c' ORDER BY n DESC LIMIT 5) s
		WHERE (extract(epoch FROM (cosid_unpack('c', id)).time) * 1000)::bigint = $unit}),
	'5', 'behind ~1 s: the ids borrow the last unit issued');
set_fake_offset($offset_file, '+0');

# ---- behind by about 3.5 s: within wait-up-to (5 s), beyond borrow-up-to
issue('c', 1);
$unit = last_unit_ms('c');
set_fake_offset($offset_file, '-3.5');
$took = issue('c', 1);
$s = stats('c');
cmp_ok($took, '>=', 2.5, sprintf('behind ~3.5 s, wait-up-to 5 s: the call waited (%.2f s)', $took));
cmp_ok($took, '<', 5.5, 'behind ~3.5 s: ... no longer than wait-up-to');
cmp_ok($s->{waits}, '>', 0, 'behind ~3.5 s: clock_waits counted');
cmp_ok(last_unit_ms('c'), '>=', $unit, 'behind ~3.5 s: the id is of a unit at or after the last one');
set_fake_offset($offset_file, '+0');

# ---- behind by about 10 s: beyond wait-up-to
issue('c', 1);
set_fake_offset($offset_file, '-10');
my ($behind, $t, $stderr) = expect_backwards('c', 'behind ~10 s, wait-up-to 5 s');
ok($behind > 8000 && $behind <= 10000, "behind ~10 s: the message says $behind ms");
like($stderr, qr/DETAIL:  Its clock-regression policy borrows up to 2000 ms and waits up to 5000 ms\./,
	'behind ~10 s: the detail states the policy');
cmp_ok($t, '<', 2, 'behind ~10 s: it fails without waiting');
cmp_ok(stats('c')->{failures}, '>', 0, 'behind ~10 s: clock_failures counted');
set_fake_offset($offset_file, '+0');
issue('c', 10);

# ---- default policy: wait (behind ~0.5 s), fail (behind ~2 s), borrow (~4 ms)
issue('d', 1);
set_fake_offset($offset_file, '-0.5');
$took = issue('d', 1);
cmp_ok($took, '>=', 0.35, sprintf('default policy, behind ~0.5 s: the call waited (%.2f s)', $took));
cmp_ok(stats('d')->{waits}, '>', 0, 'default policy, behind ~0.5 s: clock_waits counted');
is(stats('d')->{borrows}, '0', 'default policy, behind ~0.5 s: nothing borrowed');
set_fake_offset($offset_file, '+0');

issue('d', 1);
set_fake_offset($offset_file, '-2');
($behind, $t, $stderr) = expect_backwards('d', 'default policy, behind ~2 s');
like($stderr, qr/borrows up to 5 ms and waits up to 1000 ms/,
	'default policy: the detail states 5 ms / 1000 ms');
cmp_ok(stats('d')->{failures}, '>', 0, 'default policy, behind ~2 s: clock_failures counted');
set_fake_offset($offset_file, '+0');

# A few ms back: the server moves its own clock (COPY to the offset file)
# right between two calls of one PL/pgSQL block, so that the regression is
# not eaten by a round trip: the next call must come within the 4 ms, which
# a loaded machine may miss (a regression under 1 ms is invisible too), so
# try up to 20 times.
my $borrowed = 0;
for my $try (1 .. 20)
{
	my $b0 = stats('d')->{borrows};
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			INSERT INTO ids (gen, id) SELECT 'd', cosid_next('d');
			COPY (SELECT '-0.004') TO '$offset_file';
			INSERT INTO ids (gen, id) SELECT 'd', cosid_next('d') FROM generate_series(1, 3);
			COPY (SELECT '+0') TO '$offset_file';
		END \$\$;
	});
	if (stats('d')->{borrows} > $b0)
	{
		$borrowed = $try;
		last;
	}
}
ok($borrowed, "default policy, behind ~4 ms: ids borrowed (try $borrowed)");
set_fake_offset($offset_file, '+0');

# ---- FAIL: any regression fails at once
issue('f', 1);
set_fake_offset($offset_file, '-1');
($behind, $t, $stderr) = expect_backwards('f', 'FAIL policy, behind ~1 s');
cmp_ok($t, '<', 0.9, 'FAIL policy: it fails at once');
like($stderr, qr/borrows up to 0 ms and waits up to 0 ms/, 'FAIL policy: the detail says 0 ms / 0 ms');
$s = stats('f');
cmp_ok($s->{failures}, '>', 0, 'FAIL policy: clock_failures counted');
is($s->{borrows} + $s->{waits}, 0, 'FAIL policy: never borrows or waits');
set_fake_offset($offset_file, '+0');

# ---- afterwards every generator issues again
issue($_, 1000) for qw(c d f);

# ---- the clock jumps 5 s forward, past the window end: the worker extends
# the window and ids keep coming (a backend waits for that at most briefly)
set_fake_offset($offset_file, '+5');
$took = 0;
$took += issue($_, 1000) for qw(c d f);
cmp_ok($took, '<', 3, sprintf('5 s forward: every generator issues at once (%.2f s)', $took));
is($node->safe_psql('postgres', 'SELECT state, window_end > clock_timestamp() FROM cosid_slot()'),
	'active|t', '5 s forward: the window end follows the clock');
for my $gen (qw(c d f))
{
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) - count(DISTINCT id),
				   (SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
										  FROM ids WHERE gen = '$gen') s WHERE id <= prev)
			FROM ids WHERE gen = '$gen'}),
		'0|0', "generator $gen: every id unique and strictly increasing in call order");
}
is($node->safe_psql('postgres', 'SELECT sum(issued) FROM cosid.generator_stats'), rows(),
	'cosid.generator_stats issued = rows inserted (no id issued by a failed call)');

$node->stop;
done_testing();
