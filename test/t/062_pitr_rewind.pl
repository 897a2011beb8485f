# Point-in-time recovery and pg_rewind, manual mode (slot 0 everywhere).
#
# PITR: a primary archives its WAL; a base backup, then a load (pgbench, 2
# clients) with a named restore point in its middle.  A new node restored
# from the backup to that restore point (recovery_target_action = 'promote'),
# its clock 1.5 s behind the restore point (inside the span of the ids in
# its table), issues: no id equals one in its restored table, all are above
# the table's max id (it answers 55000 until its clock passes the window end
# it replayed).  Since 1.3 it first holds no window at all, being a copy of
# the primary with the primary's slot, until the primary is stopped and
# cosid_slot_confirm() says the slot is its own.
#
# pg_rewind: a primary A and its standby B; B is promoted and inserts, A
# inserts a few rows of its own (lost to the rewind), A is stopped cleanly,
# rewound against B and started as B's standby, its clock 3 s behind.  There
# it refuses ids (in recovery) while B inserts for 3 s, and replays B's
# rows; when B stops and A is promoted again, A issues above every id in its
# table.
use strict;
use warnings;
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $setup_sql = q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL);
} . fill_rows_sql();

# ---------------------------------------------------------------- PITR
my $primary = cosid_node('primary', init => { allows_streaming => 1, has_archiving => 1 });
$primary->safe_psql('postgres', $setup_sql);
$primary->backup('before_load');

my $load = start_load($primary, 3, 2, "INSERT INTO t (who) VALUES ('load');");
usleep(2_000_000);
my ($rp_ms) = $primary->safe_psql('postgres', q{
	SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint, pg_create_restore_point('mid')})
  =~ /^(\d+)\|/;
my ($load_ok, $load_tx, $load_out) = finish_load($load);
ok($load_ok && $load_tx > 100, "PITR: pgbench inserted $load_tx rows around the restore point")
  or diag($load_out);
my ($total, $total_max) = split /\|/, $primary->safe_psql('postgres', 'SELECT count(*), max(id) FROM t');

# archive everything up to now
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
ok( $primary->poll_query_until('postgres',
		"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver"),
	'PITR: the WAL through the restore point is archived');

my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'before_load', has_restoring => 1, standby => 0);
$restored->append_conf('postgresql.conf', qq{
recovery_target_name = 'mid'
recovery_target_action = 'promote'
archive_mode = off
});
# its clock 1.5 s before the restore point when it starts, and again when
# it issues
my $offset_file = $restored->basedir . '/faketime.rc';
my $set_clock = sub {
	set_fake_offset($offset_file, sprintf('%.3f', ($rp_ms - 1500 - now_ms()) / 1000));
};
$set_clock->();
start_faked($restored, offset_file => $offset_file);
ok($restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'PITR: the restored node reached its target and was promoted');
like(slurp_file($restored->logfile), qr/recovery stopping at restore point "mid"/,
	'PITR: recovery stopped at the restore point');
my ($rcount, $rmax) = split /\|/, $restored->safe_psql('postgres', 'SELECT count(*), max(id) FROM t');
ok($rcount > 0 && $rcount < $total, "PITR: the restored table holds the rows before the restore point ($rcount of $total)");
# (1.3) a copy of a server is not the same server: the restored node, not a
# standby, finds slot 0 recorded by the primary's data directory and issues
# nothing until the operator confirms the slot is its own
ok($restored->poll_query_until('postgres', q{SELECT state = 'unconfirmed' FROM cosid_slot()}),
	'PITR: the restored node holds no window for slot 0, recorded by another data directory');
my ($st, $msg) = psql_error($restored, 'postgres', q{SELECT cosid_next('g')});
is($st, '55000', 'PITR: ... and answers 55000');
like($msg, qr/^this server's manual slot 0 was recorded by another data directory/, '... saying why');
$primary->stop;
is($restored->safe_psql('postgres', 'SELECT cosid_slot_confirm()'), 't',
	'PITR: with the primary stopped, cosid_slot_confirm() opens a window');
$set_clock->();
my $r = fill_rows($restored, "INSERT INTO t (who) VALUES ('restored')", 2000, 15);
note("PITR: $r->{inserted} rows, $r->{retries} retries (55000), $r->{dup_errors} duplicate keys, "
	  . "first row after $r->{first_ok_s} s; messages: $r->{messages}");
is($r->{dup_errors}, 0, 'PITR: no id issued equals one in the restored table');
is($r->{inserted}, 2000, 'PITR: the restored node inserted 2000 rows within 15 s');
is( $restored->safe_psql('postgres', qq{
		SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE who = 'restored' AND id <= $rmax) FROM t}),
	join('|', $rcount + 2000, $rcount + 2000, 0),
	'PITR: all rows distinct, every new id above the max id of the restored table');
cmp_ok($r->{retries}, '>', 0, "PITR: with its clock behind the replayed window end it first answered 55000 ($r->{retries} times)");
$restored->stop;

# ---------------------------------------------------------------- pg_rewind
my $node_a = cosid_node('a', init => { allows_streaming => 1 },
	conf => [ 'wal_log_hints = on', 'wal_keep_size = 256MB' ]);
$node_a->safe_psql('postgres', $setup_sql);
$node_a->safe_psql('postgres', "INSERT INTO t (who) SELECT 'a1' FROM generate_series(1, 2000)");
my $node_b = standby_of($node_a, 'b');
$node_a->safe_psql('postgres', "INSERT INTO t (who) SELECT 'a2' FROM generate_series(1, 2000)");
$node_a->wait_for_catchup($node_b);

# failover: B promoted (A still up, as when A was only cut off), both insert
promote_and_fill($node_b, 'rewind: B', "INSERT INTO t (who) VALUES ('b1')", 2000);
$node_a->safe_psql('postgres', "INSERT INTO t (who) SELECT 'a_lost' FROM generate_series(1, 100)");
$node_a->stop;    # cleanly

# the promotion's checkpoint puts B's new timeline in its control file,
# where pg_rewind reads it
$node_b->safe_psql('postgres', 'CHECKPOINT');
# pg_rewind overwrites the configuration with B's: keep A's
my $conf = $node_a->data_dir . '/postgresql.conf';
my $keep = $node_a->basedir . '/postgresql.conf.a';
copy($conf, $keep) or die "copy: $!";
my $rewound = run_log(
	[ 'pg_rewind', '--target-pgdata=' . $node_a->data_dir,
	  '--source-server=' . $node_b->connstr('postgres') ]);
ok($rewound, 'rewind: pg_rewind A against B');
copy($keep, $conf) or die "move: $!";
if (!$rewound)
{
	$node_b->stop;
	done_testing();
	exit;
}
unlink($node_a->data_dir . '/standby.signal');
$node_a->enable_streaming($node_b);
start_faked($node_a, offset => '-3s');

is($node_a->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'rewind: A is a standby of B');
# B inserts for 3 s, so that A's clock (3 s behind) lies inside the span of
# B's ids when A is promoted; A is asked for ids meanwhile
$load = start_load($node_b, 3, 2, "INSERT INTO t (who) VALUES ('b2');");
my $state;
poll_until(10, sub {
	$state = $node_a->safe_psql('postgres', 'SELECT state FROM cosid_slot()');
	return $state ne 'starting';
});
is($state, 'recovery', "rewind: A's slot is in 'recovery'");
my ($st, $msg, $hint) = recovery_refusal($node_a, "SELECT cosid_next('g')");
is($st, '55000', 'rewind: A refuses ids with 55000') or diag("$msg / $hint");
like($msg, qr/recovery/, 'rewind: the message says A is in recovery');
($load_ok, $load_tx, $load_out) = finish_load($load);
ok($load_ok && $load_tx > 100, "rewind: pgbench inserted $load_tx rows on B meanwhile")
  or diag($load_out);
$node_b->wait_for_catchup($node_a);
is($node_a->safe_psql('postgres', 'SELECT count(*), max(id) FROM t'),
	$node_b->safe_psql('postgres', 'SELECT count(*), max(id) FROM t'),
	"rewind: A replayed B's rows");
is($node_a->safe_psql('postgres', "SELECT count(*) FROM t WHERE who = 'a_lost'"), '0',
	"rewind: A's rows written after the fork are gone");
my ($all_count, $all_max) = split /\|/, $node_b->safe_psql('postgres', 'SELECT count(*), max(id) FROM t');

$node_b->stop;
my $ra = promote_and_fill($node_a, 'rewind: A promoted again', "INSERT INTO t (who) VALUES ('a3')", 2000);
is( $node_a->safe_psql('postgres', qq{
		SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE who = 'a3' AND id <= $all_max) FROM t}),
	join('|', $all_count + 2000, $all_count + 2000, 0),
	'rewind: all rows distinct, every new id of A above every id B issued');

$node_a->stop;
done_testing();
