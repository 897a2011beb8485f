# Segment generators across crashes: no number is ever issued twice.
#
# 1. kill -9 of the postmaster (then, a second time, of the whole server)
#    while pgbench (4 clients) inserts rows whose primary key is DEFAULT
#    cosid_next() of two segment generators (step 100 and step 1000).  After
#    the restart more rows go in: no duplicate key, and every new number is
#    above every number committed before the crash.
# 2. Numbers handed to a session in a transaction that the crash then loses
#    (a plain SELECT cosid_next(), no table, never committed) must not come
#    again either.  The whole server (postmaster and every backend) is
#    killed at once, so that WAL still in shared memory is lost as in a real
#    crash; the walwriter is slowed down so that it does not write the WAL
#    out in the meantime.  A plain sequence in the same transaction serves as
#    a control: its values do come again (that is what a sequence promises,
#    and shows that the crash really lost the unflushed WAL).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use CosidTest;

my $node = cosid_node('segment_crash', conf => [ 'wal_writer_delay = 10s' ]);
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('seg', '{"strategy":"segment","step":100}');
	SELECT cosid_define('seg2', '{"strategy":"segment","step":1000}');
	CREATE TABLE t1 (id bigint PRIMARY KEY DEFAULT cosid_next('seg'), phase text DEFAULT 'load');
	CREATE TABLE t2 (id bigint PRIMARY KEY DEFAULT cosid_next('seg2'), phase text DEFAULT 'load');
});

# ---- 1. kill -9 mid-load, twice: the postmaster alone (its backends finish
# what they are doing and exit), then the whole server at once
my $script = $node->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
INSERT INTO t1 (phase) SELECT :phase FROM generate_series(1, 20);
INSERT INTO t2 (phase) SELECT :phase FROM generate_series(1, 20);
});

sub crash_mid_load
{
	my ($round, %crash) = @_;
	my $what = $crash{all} ? 'whole server killed' : 'postmaster killed';
	my ($out, $err) = ('', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 4, '-j', 4, '-T', 60, '-f', $script,
			'-D', "phase='load$round'",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);

	# let the load run for a while (at least 1 s and 5000 rows in t1)
	my $t0 = time();
	for (my $i = 0; $i < 3000; $i++)
	{
		last if time() - $t0 >= 1
		  && $node->safe_psql('postgres',
			"SELECT count(*) >= 5000 FROM t1 WHERE phase = 'load$round'") eq 't';
		usleep(10_000);
	}
	$pgbench->pump_nb;
	ok($pgbench->pumpable, "$what: pgbench is still inserting when the server is killed");
	crash_restart($node, %crash);
	$pgbench->finish;
	note("$what: pgbench after the crash: "
		  . join(' | ', grep { /error|abort|lost|terminat/i } split /\n/, $err));

	my ($c1, $c2) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM t1 WHERE phase = 'load$round') || '|' ||
			   (SELECT count(*) FROM t2 WHERE phase = 'load$round')});
	note("$what: rows committed before the crash: t1 $c1, t2 $c2");
	cmp_ok($c1, '>=', 5000, "$what: t1 holds the rows committed before the crash");
	cmp_ok($c2, '>=', 1000, "$what: t2 holds the rows committed before the crash");

	# more rows after the restart, in several sessions
	my $failed = '';
	for my $i (1 .. 4)
	{
		my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
			INSERT INTO t1 (phase) SELECT 'after$round' FROM generate_series(1, 500);
			INSERT INTO t2 (phase) SELECT 'after$round' FROM generate_series(1, 500);
		}, on_error_stop => 1);
		$failed .= $stderr if $ret != 0;
	}
	is($failed, '',
		"$what: after the restart 2000 more rows go into each table with no error (no duplicate key)");
	for my $t ('t1', 't2')
	{
		is( $node->safe_psql('postgres', qq{
				SELECT count(*) FILTER (WHERE phase = 'after$round'),
					   min(id) FILTER (WHERE phase = 'after$round')
					 > max(id) FILTER (WHERE phase <> 'after$round')
				FROM $t}),
			'2000|t',
			"$what: $t: every number issued after the restart is above every number committed before");
		is($node->safe_psql('postgres', "SELECT count(*) - count(DISTINCT id) FROM $t"),
			'0', "$what: $t: no number twice");
	}
}

crash_mid_load(1);
crash_mid_load(2, all => 1);

# ---- 2. numbers of a transaction lost to the crash
$node->safe_psql('postgres', q{
	SELECT cosid_define('fresh', '{"strategy":"segment","step":100}');
	SELECT cosid_define('daily', '{"strategy":"segment","step":100,"group":"day"}');
	CREATE SEQUENCE control_seq;
});
# nothing else is running: let the WAL of the setup reach the disk
$node->safe_psql('postgres', 'CHECKPOINT');

my $day1 = '2031-05-06 12:00+00';
my $day2 = '2031-05-07 12:00+00';
my $bg = $node->background_psql('postgres');
$bg->query_safe('BEGIN');
my %lost;
sub lost_numbers
{
	my ($g, $n) = @_;
	push @{ $lost{$g} }, split /\n/,
	  $bg->query_safe("SELECT cosid_next('$g') FROM generate_series(1, $n)");
}
lost_numbers('seg', 500);
lost_numbers('seg2', 500);
# a generator whose first segment is fetched in this very transaction
lost_numbers('fresh', 500);
# a day-grouped one whose first segment, and the jump to the next day, are
# made in this very transaction
$bg->query_safe("SET cosid.debug_now = '$day1'");
lost_numbers('daily', 250);
$bg->query_safe("SET cosid.debug_now = '$day2'");
lost_numbers('daily', 250);
my @control = split /\n/, $bg->query_safe("SELECT nextval('control_seq') FROM generate_series(1, 5)");
note(sprintf('numbers handed out in the transaction about to be lost: %s',
	join(', ', map { "$_ $lost{$_}[0]..$lost{$_}[-1]" } sort keys %lost)));
# kill everything while the transaction is open
crash_restart($node, all => 1);
eval { $bg->quit };

# after the restart: 2000 numbers of each (daily: 1000 with the clock on each day)
my %after_sql = map { $_ => "SELECT cosid_next('$_') FROM generate_series(1, 2000)" } keys %lost;
$after_sql{daily} = qq{
	SET cosid.debug_now = '$day2';
	SELECT cosid_next('daily') FROM generate_series(1, 1000);
	SET cosid.debug_now = '$day1';
	SELECT cosid_next('daily') FROM generate_series(1, 1000);
};
for my $g (sort keys %lost)
{
	is(scalar(@{ $lost{$g} }), 500, "$g: the lost transaction was handed 500 numbers");
	my @after = split /\n/, $node->safe_psql('postgres', $after_sql{$g});
	is(scalar(@after), 2000, "$g: 2000 numbers after the restart");
	my %seen = map { $_ => 1 } @{ $lost{$g} };
	my @again = grep { $seen{$_} } @after;
	is(scalar(@again), 0, "$g: none of the numbers of the lost transaction comes again")
	  or diag("came again: @again[0 .. ($#again < 9 ? $#again : 9)]");
	my $max_lost = (sort { $b <=> $a } @{ $lost{$g} })[0];
	my $min_after = (sort { $a <=> $b } @after)[0];
	cmp_ok($min_after, '>', $max_lost,
		"$g: every number after the restart is above every number of the lost transaction");
}
my $control_after = $node->safe_psql('postgres', "SELECT nextval('control_seq')");
note("control: a plain sequence gave @control in the lost transaction and $control_after after the crash"
	  . ($control_after <= $control[-1] ? ' (its unflushed WAL was lost)' : ' (its WAL had reached the disk)'));

$node->stop;
done_testing();
