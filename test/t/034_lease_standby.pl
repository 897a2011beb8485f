# A hot standby with its own leased slot issues time-based ids.  The primary
# and its standby both lease their slots from a store (the standby inherits
# the primary's postgresql.conf, and is another instance: same system
# identifier, another port).  Time-based generators defined on the primary
# and replicated issue on the standby with the standby's slot; lease mode
# writes nothing locally, which a standby could not do anyway.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $store = lease_store('store');
my $primary = cosid_node('primary', init => { allows_streaming => 1 }, conf => lease_conf($store));
$primary->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('flake', '{"strategy":"snowflake"}');
	CREATE TABLE ids (who text, id bigint);
});
my $pslot = wait_for_lease($primary);
ok(defined $pslot, "the primary leases slot " . ($pslot // 'none'));

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', 'hot_standby = on');
$standby->start;
# a generator defined after the standby started: it arrives by replication
$primary->safe_psql('postgres',
	q{SELECT cosid_define('later', '{"layout":"SNOWFLAKE_S"}')});
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
my $sslot = wait_for_lease($standby);
ok(defined $sslot, 'the standby holds a leased slot of its own') or BAIL_OUT('no lease on the standby');
isnt($sslot, $pslot, "the standby's slot ($sslot) differs from the primary's ($pslot)");
my $pinst = $primary->safe_psql('postgres', 'SELECT instance FROM cosid_slot()');
my $sinst = $standby->safe_psql('postgres', 'SELECT instance FROM cosid_slot()');
isnt($sinst, $pinst, "the standby is another instance ($sinst, the primary $pinst)");
is( $store->safe_psql('postgres', q{
		SELECT string_agg(slot || '=' || instance, ',' ORDER BY slot) FROM cosid.lease
		WHERE namespace = 'default' AND expires_at > now()}),
	join(',', map { "$_->[0]=$_->[1]" } sort { $a->[0] <=> $b->[0] } ([ $pslot, $pinst ], [ $sslot, $sinst ])),
	'the store holds a live lease for each');
like($standby->safe_psql('postgres', 'SELECT mode, state, store_connected FROM cosid_slot()'),
	qr/^lease\|active\|t$/, 'standby: cosid_slot() shows lease mode, active, connected');

# ---- the standby issues, with its slot
is( $standby->safe_psql('postgres', qq{
		SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE (cosid_unpack('flake', id)).node <> $sslot)
		FROM (SELECT cosid_next('flake') AS id FROM generate_series(1, 5000)) s}),
	'5000|5000|0', "standby: 5000 distinct snowflake ids, all carrying slot $sslot");
is( $standby->safe_psql('postgres', qq{
		SELECT count(DISTINCT id), bool_and((cosid_unpack('flake', id)).node = $sslot)
		FROM cosid_next_many('flake', 5000) id}),
	'5000|t', 'standby: cosid_next_many too');
is( $standby->safe_psql('postgres', qq{SELECT (cosid_unpack('later', cosid_next('later'))).node}),
	$sslot, 'standby: a generator defined on the primary after the backup issues too');
cmp_ok($standby->safe_psql('postgres', "SELECT issued FROM cosid.generator_stats WHERE name = 'flake'"),
	'>=', 10_000, 'standby: cosid.generator_stats counts what it issued');

# ---- both issue; no id twice across them
$primary->safe_psql('postgres',
	"INSERT INTO ids SELECT 'primary', cosid_next('flake') FROM generate_series(1, 5000)");
my $file = $standby->basedir . '/standby_ids.copy';
$standby->safe_psql('postgres',
	"COPY (SELECT 'standby', cosid_next('flake') FROM generate_series(1, 5000)) TO '$file'");
$primary->safe_psql('postgres', "COPY ids FROM '$file'");
is( $primary->safe_psql('postgres', qq{
		SELECT count(*), count(DISTINCT id),
			   count(*) FILTER (WHERE who = 'primary' AND (cosid_unpack('flake', id)).node <> $pslot),
			   count(*) FILTER (WHERE who = 'standby' AND (cosid_unpack('flake', id)).node <> $sslot)
		FROM ids}),
	'10000|10000|0|0', 'primary and standby ids: none twice, each with its own slot');

# ---- nothing written locally
ok(!-e $standby->data_dir . '/pg_cosid/slot.state', 'standby: no local slot state file (lease mode writes nothing)');
ok(!-e $primary->data_dir . '/pg_cosid/slot.state', 'primary: none either');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is still in recovery');
is($standby->safe_psql('postgres', 'SELECT renewal_failures FROM cosid_slot()'), '0',
	'standby: no renewal failed');

$standby->stop;
like(slurp_file($standby->logfile), qr/cosid slot worker released slot $sslot/,
	'the standby, stopped, released its slot');
is($store->safe_psql('postgres', "SELECT instance IS NULL FROM cosid.lease WHERE slot = $sslot"),
	't', 'the store shows it released');
$primary->stop;
$store->stop;
done_testing();
