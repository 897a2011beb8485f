# pg_upgrade from PostgreSQL 15 of a server that leases its slot
# (cosid.slot = 'lease'), issue 21, item 1; 075_pg_upgrade.pl has the
# manual slot.
#
# A leased slot keeps no slot.state: the lease store keeps where each slot's
# window ended, and a new holder starts there.  pg_upgrade gives the new
# cluster another system identifier, so the upgraded server is another
# instance for the store; what keeps its ids above the old server's is that
# it leases the same slot (the old server released it at its shutdown) and
# the store starts its window at that slot's recorded end.  The server's own
# files (the layout history in names, the mark of monotonic ULIDs in
# ulid.state) still have to be copied: before they are, it takes no lease
# and refuses time-based ids with the 55000 of upgrade.c; after, with its
# clock 5 s behind the old server's last ids, it waits for the window and
# issues above every old id, and a name's layout history holds.
#
# The upgrade runs in PostgreSQL 18's --swap mode (else --link), which
# moves the old cluster's databases into the new one and leaves its
# pg_cosid/ where it was.
use strict;
use warnings;
use File::Copy ();
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my ($old_install, $old_bin, $new_bin) = pg_upgrade_plan();
my $mode = `$new_bin/pg_upgrade --help` =~ /--swap\b/ ? 'swap' : 'link';

my $later_epoch = '{"strategy":"snowflake","epoch":1609459200000}';	# 2021: below earlier ids

my $store = lease_store('store');
my $conf = lease_conf($store, extra => ["cosid.namespace = 'upg'"]);

# ---- the old cluster, PostgreSQL 15, leasing its slot
my $old = PostgreSQL::Test::Cluster->new('old15', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', "shared_preload_libraries = 'cosid'");
$old->append_conf('postgresql.conf', $_) for @$conf;
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('snow', '{"strategy":"snowflake","seq-reset-threshold":0}');
	SELECT cosid_define('h', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase int, gen text, id bigint);
	CREATE TABLE u (phase int, id ulid);
});
my $old_slot = wait_for_lease($old);
ok(defined $old_slot, 'on 15: the server holds a leased slot')
  or BAIL_OUT('no lease: ' . $old->safe_psql('postgres', 'SELECT last_error FROM cosid_slot()'));
my $old_instance = $old->safe_psql('postgres', 'SELECT instance FROM cosid_slot()');
$old->safe_psql('postgres', q{
	INSERT INTO ids SELECT 1, 'h', cosid_next('h') FROM generate_series(1, 500);
	SELECT cosid_drop('h');
	-- an earlier epoch: its ids are above the old layout's, so it is accepted
	SELECT cosid_define('h', '{"strategy":"snowflake","epoch":1546300800000}');
	INSERT INTO ids SELECT 1, g, cosid_next(g) FROM unnest(ARRAY['snow', 'h']) g, generate_series(1, 5000);
	INSERT INTO u SELECT 1, gen_ulid_monotonic() FROM generate_series(1, 1000);
});
my $last_issue_ms = now_ms();
my $old_max_ms = $old->safe_psql('postgres', q{
	SELECT (extract(epoch FROM max((cosid_unpack('snow', id)).time)) * 1000)::bigint FROM ids WHERE gen = 'snow'});
my $refuse_h = "BEGIN; SELECT cosid_drop('h'); SELECT cosid_define('h', '$later_epoch')";
my @before = psql_error($old, 'postgres', $refuse_h);
is($before[0], '22023', 'on 15: h dropped and defined with a later epoch is refused (22023)');

# Debian's PostgreSQL 15 sets an attribute option pg_attver on every column,
# which PostgreSQL 18 rejects while pg_upgrade restores the schema; it is not
# cosid's doing (075_pg_upgrade.pl).
$old->safe_psql('postgres', 'UPDATE pg_attribute SET attoptions = NULL WHERE attrelid >= 16384 AND attoptions IS NOT NULL');
$old->stop;
my $old_state = $old->data_dir . '/pg_cosid';
ok(!-e "$old_state/slot.state" && -f "$old_state/names" && -f "$old_state/ulid.state",
	'the old data directory has names and ulid.state, and no slot.state (a leased slot keeps none)');
my $store_end = $store->safe_psql('postgres',
	"SELECT window_end FROM cosid.lease WHERE namespace = 'upg' AND slot = $old_slot AND instance IS NULL");
ok($store_end ne '' && $store_end > $old_max_ms,
	"the old server released slot $old_slot, and the store keeps its window end ($store_end) above its last snow id ($old_max_ms)");

# ---- pg_upgrade
my $t0 = Time::HiRes::time();
my $new = PostgreSQL::Test::Cluster->new('new18');
# PostgreSQL 18's initdb turns data checksums on; the old cluster has none
$new->init(extra => [ '--no-data-checksums' ]);
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'cosid'");
$new->append_conf('postgresql.conf', $_) for @$conf;
{
	my ($ret, $stdout, $stderr) = run_pg_upgrade($old, $new, $mode, $old_bin, $new_bin);
	ok($ret, "pg_upgrade --$mode succeeds") or diag("$stdout\n$stderr");
}
note(sprintf('pg_upgrade --%s took %.1f s', $mode, Time::HiRes::time() - $t0));
my $state_dir = $new->data_dir . '/pg_cosid';
ok(-f "$state_dir/upgraded", 'the new data directory is marked pg_cosid/upgraded');
like(-f "$old_state/upgrade.manifest" ? slurp_file("$old_state/upgrade.manifest") : "(none)", qr/\A[^\n]*\n[0-9a-f]{8} \d+ names\n[0-9a-f]{8} \d+ ulid\.state\n\z/,
	'the old server listed names and ulid.state in pg_cosid/upgrade.manifest');

# ---- started before the state is copied: no lease, nothing time-based
$new->start;
is($new->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'upgraded', 'not copied: cosid_slot() says upgraded');
for my $sql ("SELECT cosid_next('snow')", 'SELECT gen_ulid_monotonic()')
{
	my ($state, $msg) = psql_error($new, 'postgres', $sql);
	is("$state|$msg", "55000|cosid's state was not carried over by pg_upgrade", "not copied: $sql is refused (55000)");
}
is($store->safe_psql('postgres', "SELECT count(*) FROM cosid.lease WHERE namespace = 'upg' AND instance IS NOT NULL"),
	'0', 'not copied: the server took no lease');
$new->stop;

# ---- the procedure: the old data directory's pg_cosid files copied in
opendir(my $dh, $old_state) or die;
for my $f (grep { -f "$old_state/$_" } readdir $dh)
{
	File::Copy::copy("$old_state/$f", "$state_dir/$f") or die "copy $f: $!";
}
closedir $dh;

# started with its clock behind the old server's last ids by 2 s more than a
# call waits for a window that starts ahead of the clock (src/slot.h,
# COSID_LEASE_LEAD_MAX_MS: the longest lead), so that a call is refused
my $behind_ms = slot_constant('COSID_LEASE_LEAD_MAX_MS') + 2000;
my $offset_file = $new->basedir . '/faketime.rc';
set_fake_offset($offset_file, sprintf('%.3f', ($last_issue_ms - $behind_ms - now_ms()) / 1000));
start_faked($new, offset_file => $offset_file);
ok(!-e "$state_dir/upgraded" && !-e "$state_dir/upgrade.manifest",
	'the marker and the manifest are gone once the state was taken');
my $new_slot = wait_for_lease($new);
is($new_slot, $old_slot, "the upgraded server leases slot $old_slot again");
isnt($new->safe_psql('postgres', 'SELECT instance FROM cosid_slot()'), $old_instance,
	'... as another instance (a new system identifier, another port)');
is($new->safe_psql('postgres', q{SELECT (extract(epoch FROM window_start) * 1000)::bigint >= } . $store_end
	  . q{, clock_timestamp() < window_start FROM cosid_slot()}),
	't|t', "its window starts at the store's end of the slot, and its clock is behind it");
my ($st, $msg) = psql_error($new, 'postgres', "SELECT cosid_next('snow')");
is($st, '55000', "clock behind: cosid_next('snow') is refused (55000)");
like($msg, qr/^clock is \d+ ms behind the start of this server's slot window$/, "clock behind: ... it says the clock is behind");
my @after = psql_error($new, 'postgres', $refuse_h);
is("$after[0]|$after[1]", "$before[0]|$before[1]", 'h dropped and defined with a later epoch is still refused, as on 15');

# monotonic ULIDs go on above the old ones with the clock behind
$new->safe_psql('postgres', q{INSERT INTO u SELECT 2, gen_ulid_monotonic() FROM generate_series(1, 1000)});
is($new->safe_psql('postgres', q{
	SELECT (SELECT min(id) FROM u WHERE phase = 2) > (SELECT max(id) FROM u WHERE phase = 1),
		   (SELECT count(*) - count(DISTINCT id) FROM u)}),
	't|0', 'clock behind: every monotonic ULID sorts above the old ones, none twice');

# the clock 300 ms before the window start: the first call waits, then ids
my $ws = $new->safe_psql('postgres', q{SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()});
set_fake_offset($offset_file, sprintf('%.3f', ($ws - 300 - now_ms()) / 1000));
$new->safe_psql('postgres', q{
	INSERT INTO ids SELECT 2, g, cosid_next(g) FROM unnest(ARRAY['snow', 'h']) g, generate_series(1, 5000)});
is($new->safe_psql('postgres', q{
	SELECT string_agg(format('%s:%s', gen, below), ',' ORDER BY gen) FROM (
		SELECT gen, count(*) FILTER (WHERE id <= old_max) AS below
		FROM ids JOIN (SELECT gen, max(id) AS old_max FROM ids WHERE phase = 1 GROUP BY gen) o USING (gen)
		WHERE phase = 2 GROUP BY gen) s}),
	'h:0,snow:0', 'no new id is at or below the old maximum of its generator');
is($new->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT (gen, id)) FROM ids WHERE phase = 2}), '10000|10000', 'every id was issued, none twice');
$new->stop;

done_testing();
