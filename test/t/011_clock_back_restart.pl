# The clock goes back across a restart (libfaketime): the server comes up with
# its clock 30 s behind the end of its previous window.  No id is issued
# (55000, "clock is ... behind the start of this server's slot window") until
# the clock is past that end again; then ids resume above every earlier id.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $node = cosid_node('clock_back');
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

sub check_phase
{
	my ($phase, $what) = @_;
	is( $node->safe_psql('postgres', qq{
		SELECT (SELECT min(id) FROM ids WHERE phase = $phase)
			 > (SELECT max(id) FROM ids WHERE phase < $phase),
			   (SELECT count(*) - count(DISTINCT id) FROM ids)}),
		't|0', "$what: every new id is above every earlier one, none twice");
}

# cosid_next must fail because the clock is behind the window; returns how
# far behind the server says it is (ms).
sub expect_behind_window
{
	my ($what, $min_ms, $max_ms) = @_;
	my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');
	my ($state, $msg, $stderr) = psql_error($node, 'postgres',
		"INSERT INTO ids (phase, id) VALUES (99, cosid_next('g'))");
	is($state, '55000', "$what: cosid_next fails with SQLSTATE 55000")
	  or diag($stderr // 'it succeeded');
	like($msg, qr/^clock is \d+ ms behind the start of this server's slot window$/,
		"$what: the message says the clock is behind the slot window");
	like($stderr // '', qr/DETAIL:  The window starts at .*, where the previous holder of slot 0 stopped/,
		"$what: the detail names the window start and the slot");
	my ($behind) = ($msg // '') =~ /clock is (\d+) ms/;
	$behind //= -1;
	ok($behind >= $min_ms && $behind <= $max_ms,
		"$what: behind by $behind ms (expected $min_ms to $max_ms)");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'), $rows,
		"$what: no row was inserted");
	return $behind;
}

sub issued
{
	return $node->safe_psql('postgres', "SELECT issued FROM cosid.generator_stats WHERE name = 'g'");
}

make_ids(1, 5000);
$node->stop;
my $end1 = slot_state($node)->{end_ms};

# ---- start 30 s in the past (a fixed offset), then with the right clock
start_faked($node, offset => '-30s');
is($node->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'active',
	'faked -30 s: the slot worker holds its slot');
is( $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()"),
	$end1, 'faked -30 s: the window starts at the end recorded at the stop');
expect_behind_window('faked -30 s', 25_000, 31_000);
is( $node->safe_psql('postgres', "SELECT clock_failures > 0 FROM cosid.generator_stats WHERE name = 'g'"),
	't', 'faked -30 s: cosid.generator_stats counts a clock failure');
is(issued(), '0', 'faked -30 s: cosid.generator_stats shows no id issued');
my ($state, $msg) = psql_error($node, 'postgres', "SELECT count(*) FROM cosid_next_many('g', 10)");
is($state, '55000', 'faked -30 s: cosid_next_many fails too');

$node->stop;
is(slot_state($node)->{end_ms}, $end1,
	'a clean stop that issued nothing keeps the recorded end');
$node->start;
make_ids(2, 5000);
check_phase(2, 'restart with the right clock');

# ---- the offset from a file: still behind while it shrinks, ids once it is 0
my $offset_file = $node->basedir . '/faketime.rc';
set_fake_offset($offset_file, '-30');
$node->stop;
start_faked($node, offset_file => $offset_file);
expect_behind_window('file offset -30 s', 25_000, 31_000);
set_fake_offset($offset_file, '-10');
expect_behind_window('file offset -10 s, same server', 5_000, 11_000);
is(issued(), '0', 'no id issued while the clock was behind');

# Less than a second behind the window start: the call waits for the window
# to open instead of failing.  Put the server's clock 600 ms before it.
my $ws = $node->safe_psql('postgres',
	"SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()");
set_fake_offset($offset_file, sprintf('%.3f', ($ws - 600 - now_ms()) / 1000));
# How long it should wait is measured too (from the window start and the
# call's start on the server's clock): the time psql takes to get to the call
# is not part of it, and is long on a loaded machine.
my ($open_id, $open_wait, $not_open, $to_open) = split /\|/, $node->safe_psql('postgres', q{
	SELECT window_start > clock_timestamp() AS not_open FROM cosid_slot() \gset
	SELECT clock_timestamp() AS t0 \gset
	INSERT INTO ids (phase, id) VALUES (3, cosid_next('g')) RETURNING id \gset
	SELECT :id, extract(epoch FROM clock_timestamp() - :'t0'), :'not_open',
		extract(epoch FROM window_start - :'t0') FROM cosid_slot();
});
is($not_open, 't', '~600 ms behind the window start: the window had not opened');
like($open_id, qr/^\d+$/, '~600 ms behind the window start: cosid_next waits and succeeds');
note("it waited $open_wait s; the window opened $to_open s after the call began");
ok($to_open > 0 && $open_wait >= $to_open - 0.005 && $open_wait < $to_open + 0.6,
	"~600 ms behind: it waited until the window opened ($open_wait s, the window $to_open s away)");
is( $node->safe_psql('postgres', qq{
		SELECT (cosid_unpack('g', $open_id)).time >= window_start FROM cosid_slot()}),
	't', '~600 ms behind: the id lies inside the window');

set_fake_offset($offset_file, '+0');
make_ids(3, 5000);
check_phase(3, 'file offset back to 0 without a restart');
is(issued(), '5001', 'cosid.generator_stats counts the ids issued once the clock caught up');

# ---- a crash, and the server comes back with its clock 30 s behind: the
# durable end written ahead of the clock before the crash stands
my $end_before_crash = slot_state($node)->{end_ms};
set_fake_offset($offset_file, '-30');
crash_restart($node,
	start => sub { start_faked($node, offset_file => $offset_file, fail_ok => 1) });
cmp_ok( $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()"),
	'>=', $end_before_crash, 'crash: the new window starts no earlier than the durable end before it');
expect_behind_window('crash, then file offset -30 s', 25_000, 32_000);
set_fake_offset($offset_file, '+0');
make_ids(4, 5000);
check_phase(4, 'crash with the clock behind, then caught up');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 99'), '0',
	'no row from a failed call');

$node->stop;
done_testing();
