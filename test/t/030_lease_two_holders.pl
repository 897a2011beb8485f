# Two servers lease their slots from a third (the lease store) in one
# namespace: they get distinct slots, and 4 sessions x 100k ids on each, run
# at the same time on both, give no id twice across the servers; every id
# carries its server's slot.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;

my $clients = 4;
my $per_tx = 10_000;
my $tx = 10;
my $per_server = $clients * $per_tx * $tx;

my $store = lease_store('store');
my @holders = map {
	cosid_node("holder$_", conf => lease_conf($store, extra => ["cosid.namespace = 'shop'"]))
} (1, 2);

my (@slot, @instance);
for my $i (0, 1)
{
	my $h = $holders[$i];
	$h->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE UNLOGGED TABLE made (id bigint);
	});
	$slot[$i] = wait_for_lease($h);
	ok(defined $slot[$i], "holder " . ($i + 1) . " holds a leased slot")
	  or BAIL_OUT('no lease: ' . $h->safe_psql('postgres', 'SELECT last_error FROM cosid_slot()'));
	$instance[$i] = $h->safe_psql('postgres', 'SELECT instance FROM cosid_slot()');
}
isnt($slot[0], $slot[1], "the two holders hold distinct slots ($slot[0] and $slot[1])");
isnt($instance[0], $instance[1], 'under distinct instance ids');
is( $store->safe_psql('postgres', q{
		SELECT string_agg(slot || ':' || instance || ':' || (expires_at > now()), ',' ORDER BY slot)
		FROM cosid.lease WHERE namespace = 'shop'}),
	join(',', map { "$_->[0]:$_->[1]:true" }
		sort { $a->[0] <=> $b->[0] } ([ $slot[0], $instance[0] ], [ $slot[1], $instance[1] ])),
	'the store has one live lease per holder, of the slot it shows, in namespace shop');
is($store->safe_psql('postgres', "SELECT count(*) FROM cosid.lease WHERE namespace <> 'shop'"),
	'0', 'and none in another namespace');

# ---- the load: pgbench on both servers at the same time
my $script = $holders[0]->basedir . '/ids.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"INSERT INTO made SELECT cosid_next('g') FROM generate_series(1, $per_tx);\n");
my @runs;
for my $h (@holders)
{
	my %r = (out => '', err => '');
	$r{run} = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', $tx, '-f', $script,
			'-h', $h->host, '-p', $h->port, 'postgres'
		],
		'>', \$r{out}, '2>', \$r{err});
	push @runs, \%r;
}
for my $i (0, 1)
{
	my $r = $runs[$i];
	ok($r->{run}->finish, "pgbench on holder " . ($i + 1) . " succeeded")
	  or diag($r->{err});
	like($r->{out}, qr/number of transactions actually processed: ${\($clients * $tx)}\//,
		"pgbench on holder " . ($i + 1) . " ran every transaction");
}

# ---- each server's ids: all distinct, all carrying its slot
my @range;
for my $i (0, 1)
{
	my $n = $i + 1;
	is( $holders[$i]->safe_psql('postgres', qq{
			SELECT count(*), count(DISTINCT id),
				   count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $slot[$i])
			FROM made}),
		"$per_server|$per_server|0",
		"holder $n: $per_server ids, all distinct, all carrying its slot $slot[$i]");
	$range[$i] = [ split /\|/, $holders[$i]->safe_psql('postgres', q{
		SELECT (extract(epoch FROM (cosid_unpack('g', min(id)))."time") * 1000)::bigint,
			   (extract(epoch FROM (cosid_unpack('g', max(id)))."time") * 1000)::bigint
		FROM made}) ];
	note("holder $n issued from $range[$i][0] to $range[$i][1] (Unix ms)");
}
my $overlap_from = $range[0][0] > $range[1][0] ? $range[0][0] : $range[1][0];
my $overlap_to = $range[0][1] < $range[1][1] ? $range[0][1] : $range[1][1];
cmp_ok($overlap_from, '<', $overlap_to,
	'the two servers issued at the same time (their id time ranges overlap)');

# ---- no duplicate across the servers: both sets in one table of the store
$store->safe_psql('postgres', 'CREATE TABLE all_ids (holder int, id bigint)');
for my $i (0, 1)
{
	my $file = $holders[$i]->basedir . "/made.copy";
	$holders[$i]->safe_psql('postgres', "COPY (SELECT $i + 1, id FROM made) TO '$file'");
	$store->safe_psql('postgres', "COPY all_ids FROM '$file'");
}
my $total = 2 * $per_server;
is($store->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id), count(DISTINCT holder) FROM all_ids'),
	"$total|$total|2", "$total ids from both servers, no id twice");
# snowflake: 41 bits of time, 10 of node, 12 of sequence
is( $store->safe_psql('postgres', q{
		SELECT string_agg(DISTINCT holder || ':' || ((id >> 12) & 1023), ',' ORDER BY holder || ':' || ((id >> 12) & 1023))
		FROM all_ids}),
	"1:$slot[0],2:$slot[1]", 'read in the store, each server\'s ids carry its own slot');

# ---- the lease stayed healthy under load
for my $i (0, 1)
{
	like( $holders[$i]->safe_psql('postgres', qq{
			SELECT state, store_connected, renewals > 0, last_renewal > now() - interval '@{[renewal_slack_ms(3)]} milliseconds',
				   renewal_failures
			FROM cosid_slot()}),
		qr/^active\|t\|t\|t\|0$/,
		'holder ' . ($i + 1) . ': connected to the store, renewing, no renewal failed');
}

$_->stop for @holders;
$store->stop;
done_testing();
