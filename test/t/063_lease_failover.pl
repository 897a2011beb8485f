# Lease mode across a failover.  A lease store, a primary and its streaming
# standby, both in lease mode (the standby, another instance, holds a slot of
# its own), the standby's clock 3 s behind.  Both issue at the same time; the
# primary is stopped ('immediate') once the standby replayed everything, and
# the standby promoted.
#  off  cosid.promote_above_replayed = off (the default): the promoted
#       standby keeps its own lease and window and issues at once; its first
#       ids may sort below the old primary's last ones (its clock is behind),
#       but none repeats one (different slots).
#  on   cosid.promote_above_replayed = on (ALTER SYSTEM + reload on the
#       standby before promotion): every id issued after promotion is above
#       every id of the old primary that reached the standby; until its clock
#       passes the highest window end it replayed a call waits (up to the
#       longest lead, src/slot.h) or answers 55000.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $store = lease_store('store');
my $new_rows = 300;

# SHOW cosid.promote_above_replayed, or the error
sub show_setting
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'SHOW cosid.promote_above_replayed');
	return $ret == 0 ? $out : $err;
}

sub run_failover
{
	my ($run, $above) = @_;
	my $primary = cosid_node("primary_$run", init => { allows_streaming => 1 }, conf => lease_conf($store));
	$primary->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL);
	} . fill_rows_sql());
	my $pslot = wait_for_lease($primary);
	ok(defined $pslot, "$run: the primary leases slot " . ($pslot // 'none'));

	my $standby = standby_of($primary, "standby_$run", offset => '-3s');
	my $sslot = wait_for_lease($standby);
	ok(defined $sslot && $sslot != $pslot,
		"$run: the standby leases a slot of its own (" . ($sslot // 'none') . ')');
	like($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery(), mode, state FROM cosid_slot()'),
		qr/^t\|lease\|active$/, "$run: the standby, in recovery, shows its lease active");
	my $behind = now_ms() - node_now_ms($standby);
	ok($behind > 2500 && $behind < 3600, "$run: the standby's clock is about 3 s behind ($behind ms)");

	if ($above)
	{
		my ($ret, $out, $err) = $standby->psql('postgres',
			'ALTER SYSTEM SET cosid.promote_above_replayed = on');
		is($ret, 0, "$run: ALTER SYSTEM SET cosid.promote_above_replayed = on on the standby")
		  or diag($err);
		$standby->reload;
		ok( poll_until(5, sub { show_setting($standby) eq 'on' }),
			"$run: after a reload the standby shows cosid.promote_above_replayed = on");
	}
	else
	{
		is(show_setting($standby), 'off',
			"$run: cosid.promote_above_replayed is off by default");
	}

	# ---- both issue at the same time
	my $file = $standby->basedir . '/standby_ids.copy';
	my $load = start_load($primary, 2, 2, "INSERT INTO t (who) VALUES ('old');");
	$standby->safe_psql('postgres', qq{
		COPY (SELECT 'standby', cosid_next('g') FROM generate_series(1, 20000)) TO '$file'});
	my ($load_ok, $load_tx, $load_out) = finish_load($load);
	ok($load_ok && $load_tx > 100, "$run: pgbench inserted $load_tx rows on the primary meanwhile")
	  or diag($load_out);
	$primary->wait_for_catchup($standby);
	my ($old_count, $old_max) = split /\|/, $primary->safe_psql('postgres', 'SELECT count(*), max(id) FROM t');
	is($standby->safe_psql('postgres', 'SELECT count(*), max(id) FROM t'), "$old_count|$old_max",
		"$run: the standby replayed every row ($old_count)");

	$primary->stop('immediate');
	my $r = promote_and_fill($standby, $run, "INSERT INTO t (who) VALUES ('new')", $new_rows);

	# the ids the standby issued before promotion join the table, to compare
	$standby->safe_psql('postgres', qq{
		CREATE TABLE before (who text, id bigint);
		COPY before FROM '$file'});
	is( $standby->safe_psql('postgres', q{
			SELECT count(*), count(DISTINCT id)
			FROM (SELECT id FROM t UNION ALL SELECT id FROM before) s}),
		join('|', ($old_count + $r->{inserted} + 20000) x 2),
		"$run: no id twice among the old primary's, the standby's before and after promotion");
	is( $standby->safe_psql('postgres', qq{
			SELECT count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $sslot) FROM before}),
		'0', "$run: the standby's ids before promotion carry its slot $sslot");
	is( $standby->safe_psql('postgres', qq{
			SELECT count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $pslot) FROM t WHERE who = 'old'}),
		'0', "$run: the old primary's ids carry its slot $pslot");
	my $below = $standby->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE id <= $old_max) FROM t WHERE who = 'new'");
	if ($above)
	{
		is($below, '0', "$run: every id after promotion is above every id of the old primary");
	}
	else
	{
		note("$run: $below of the $r->{inserted} ids after promotion sort below the old primary's last id");
		is($r->{retries}, 0, "$run: the promoted standby issued at once (no 55000)");
		is( $standby->safe_psql('postgres', q{
				SELECT string_agg(DISTINCT (cosid_unpack('g', id)).node::text, ',') FROM t WHERE who = 'new'}),
			$sslot, "$run: after promotion it keeps its own slot $sslot");
	}
	like($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery(), mode, state FROM cosid_slot()'),
		qr/^f\|lease\|active$/, "$run: promoted, its lease is active");
	$standby->stop;
}

run_failover('off', 0);
run_failover('on', 1);

$store->stop;
done_testing();
