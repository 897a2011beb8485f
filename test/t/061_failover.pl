# Failover under load, manual mode (slot 0 on both servers): pgbench (2
# clients) inserts rows whose key defaults to cosid_next('g') on the primary
# for 2 s (4 s when the standby's clock is 3 s behind, so that its clock
# after promotion lies inside the span of the replayed ids); once the standby has replayed everything the primary is stopped
# with 'immediate' (a crash) and the standby promoted.  It inserts at once, in
# a loop that retries on 55000 (for up to 15 s).  The slot window travels with
# the WAL, so the promoted standby's window starts at or after the highest
# end it replayed: no duplicate key, and every new id above every replayed
# one, even with its clock 3 s behind (it answers "clock is N ms behind the
# start of this server's slot window" until its clock passes that end).
# Three runs, fresh nodes each:
#   async   asynchronous standby, clock 3 s behind
#   sync    synchronous standby (synchronous_standby_names = '*'), 3 s behind
#   instep  asynchronous standby, clock in step: it issues within ~a second
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $new_rows = 2000;

sub run_failover
{
	my ($run, %opt) = @_;
	my $primary = cosid_node("primary_$run", init => { allows_streaming => 1 });
	$primary->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL);
	} . fill_rows_sql());
	my $standby = standby_of($primary, "standby_$run",
		$opt{offset} ? (offset => $opt{offset}) : ());
	if ($opt{sync})
	{
		# after the backup, so that the standby does not inherit it
		$primary->append_conf('postgresql.conf',
			"synchronous_standby_names = '*'\nsynchronous_commit = on");
		$primary->reload;
		ok( $primary->poll_query_until('postgres',
				"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby_$run'"),
			"$run: the standby is synchronous");
	}
	if ($opt{offset})
	{
		my $behind = now_ms() - node_now_ms($standby);
		ok($behind > 2500 && $behind < 3600, "$run: the standby's clock is about 3 s behind ($behind ms)");
	}

	# with the clock behind, a load long enough that the standby's clock,
	# when it issues after promotion, is inside the span of the replayed ids
	my $load = start_load($primary, $opt{offset} ? 4 : 2, 2, "INSERT INTO t (who) VALUES ('old');");
	my ($load_ok, $load_tx, $load_out) = finish_load($load);
	ok($load_ok && $load_tx > 100, "$run: pgbench inserted $load_tx rows on the primary")
	  or diag($load_out);
	$primary->wait_for_catchup($standby);
	my $old = $primary->safe_psql('postgres', "SELECT count(*), max(id) FROM t");
	my ($old_count, $old_max) = split /\|/, $old;
	is($standby->safe_psql('postgres', "SELECT count(*), max(id) FROM t"), $old,
		"$run: the standby replayed every row ($old_count)");
	is($standby->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'recovery',
		"$run: the standby's slot is in 'recovery' before promotion");

	$primary->stop('immediate');
	my $r = promote_and_fill($standby, $run, "INSERT INTO t (who) VALUES ('new')", $new_rows);
	is( $standby->safe_psql('postgres', q{
			SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE who = 'old') FROM t}),
		join('|', $old_count + $r->{inserted}, $old_count + $r->{inserted}, $old_count),
		"$run: all rows distinct, every replayed row still there");
	is( $standby->safe_psql('postgres', qq{
			SELECT count(*) FILTER (WHERE id <= $old_max) FROM t WHERE who = 'new'}),
		'0', "$run: every new id is above every replayed id");
	is( $standby->safe_psql('postgres', q{
			SELECT bool_and((cosid_unpack('g', id)).node = 0) FROM t WHERE who = 'new'}),
		't', "$run: the new ids carry slot 0");
	if ($opt{offset})
	{
		cmp_ok($r->{retries}, '>', 0, "$run: with its clock behind it first answered 55000 ($r->{retries} times)");
		like($r->{messages}, qr/clock is N ms behind the start of this server's slot window/,
			"$run: the 55000 says the clock is behind the slot window");
	}
	else
	{
		ok($r->{first_ok_s} >= 0 && $r->{first_ok_s} < 2.5,
			"$run: with its clock in step it issued within about a second ($r->{first_ok_s} s)");
	}
	is($standby->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'active',
		"$run: after promotion its slot is active");
	$standby->stop;
}

run_failover('async', offset => '-3s');
run_failover('sync', offset => '-3s', sync => 1);
run_failover('instep');

done_testing();
