# A snowflake generator across a clean restart and a crash (kill -9): every
# id issued after either is above every id issued before it, none is issued
# twice, the slot comes back active, and the state file records what the
# contract says (clean stop: clean=1 and an end no later than the stop;
# crash: the next window starts at the durable end written before it).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use CosidTest;

my $node = cosid_node('gen_restart');

$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase int, n bigserial, id bigint);
});

sub make_ids
{
	my ($phase, $count) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO ids (phase, id) SELECT $phase, cosid_next('g') FROM generate_series(1, $count)");
}

# Every id of this phase is above every id before it; no id twice; in order.
sub check_phase
{
	my ($phase, $what) = @_;
	is( $node->safe_psql('postgres', qq{
		SELECT (SELECT min(id) FROM ids WHERE phase = $phase)
			 > (SELECT max(id) FROM ids WHERE phase < $phase)}),
		't', "$what: every new id is above every id issued before it");
	is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'),
		'0', "$what: no id issued twice");
	is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
		WHERE id <= prev}),
		'0', "$what: ids increase in the order they were issued");
}

sub slot_is_active
{
	my ($what) = @_;
	is( $node->safe_psql('postgres',
			"SELECT mode, slot, state, window_end > now() FROM cosid_slot()"),
		'manual|0|active|t', "$what: cosid_slot() shows the slot active");
}

# window_start of cosid_slot() in Unix ms ('' when null)
sub window_start_ms
{
	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()");
}

slot_is_active('first start');
make_ids(1, 20000);
my $last_before_stop = $node->safe_psql('postgres',
	"SELECT (extract(epoch FROM (cosid_unpack('g', max(id))).time) * 1000)::bigint FROM ids");

# ---- clean restart
$node->stop;
my $stopped_ms = now_ms();
my $rec = slot_state($node);
ok(defined $rec, 'clean stop: pg_cosid/slot.state exists');
is($rec->{clean}, '1', 'clean stop: the state file says clean=1');
is($rec->{slot}, '0', 'clean stop: the state file names slot 0');
cmp_ok($rec->{end_ms}, '<=', $stopped_ms,
	'clean stop: the recorded end is not after the time of the stop');
cmp_ok($rec->{end_ms}, '>', $last_before_stop,
	'clean stop: the recorded end is after the last id issued');
my $clean_end = $rec->{end_ms};

$node->start;
slot_is_active('clean restart');
is(window_start_ms(), $clean_end, 'clean restart: the window starts at the recorded end');
make_ids(2, 20000);
check_phase(2, 'clean restart');

# ---- crash: the end that stands is the last one made durable before it
$rec = slot_state($node);
is($rec->{clean}, '0', 'while running the state file says clean=0');
my $end_before_crash = $rec->{end_ms};
cmp_ok($end_before_crash, '>', now_ms(), 'while running the recorded end is ahead of the clock');

my $t_kill = time();
crash_restart($node);
my $t0 = time();
# the server's own measure of the call, without psql's start
my $first = $node->safe_psql('postgres', q{
	SELECT clock_timestamp() AS t0 \gset
	INSERT INTO ids (phase, id) VALUES (3, cosid_next('g')) RETURNING id \gset
	SELECT :id || ' ' || extract(epoch FROM clock_timestamp() - :'t0');
});
my $psql_wait = time() - $t0;
my ($first_id, $first_wait) = split / /, $first;
like($first_id // '', qr/^\d+$/, 'after the crash the first cosid_next succeeds');
note(sprintf('kill -9 to restarted: %.3f s; first cosid_next after it: %.3f s in the server, %.3f s with psql',
		$t0 - $t_kill, $first_wait, $psql_wait));
cmp_ok($first_wait, '<', 1.5, 'and it waited no more than about the window lead (1 s)');
$first = $first_id;

slot_is_active('crash restart');
my $crash_start = window_start_ms();
cmp_ok($crash_start, '>=', $end_before_crash,
	'crash restart: the window starts no earlier than the durable end seen before the crash');
cmp_ok($crash_start, '<=', $end_before_crash + 2000,
	'crash restart: ... and at most a window lead or so after it');
is( $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (cosid_unpack('g', $first)).time) * 1000)::bigint >= $crash_start"),
	't', 'crash restart: the first id lies inside the new window');

make_ids(3, 20000);
check_phase(3, 'crash (kill -9) and restart');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'), '60001', 'no row lost');
cmp_ok($node->safe_psql('postgres', "SELECT issued FROM cosid.generator_stats WHERE name = 'g'"),
	'>=', 20001, 'cosid.generator_stats counts the ids issued since the restart');

$node->stop;
is(slot_state($node)->{clean}, '1', 'final clean stop writes clean=1');
done_testing();
