# More servers than slots: cosid.machine_bits = 1 gives a namespace 2 slots,
# and a third server finds none free.  It starts, but issues no id: 55000
# naming the namespace, with the store's error (no free slot,
# cosid.machine_bits) as detail; cosid_slot() shows it still starting.  When
# a holder stops cleanly, the third takes its slot within a few seconds and
# issues ids above the old holder's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $store = lease_store('store');
my @h;
for my $i (1 .. 3)
{
	my $node = cosid_node("h$i",
		conf => lease_conf($store, extra => [ 'cosid.machine_bits = 1', "cosid.namespace = 'tiny'" ]));
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE TABLE ids (id bigint);
	});
	push @h, $node;
	# one after the other, so that h1 and h2 hold the slots
	last if $i == 3;
	is(wait_for_lease($node), $i - 1, "h$i leases slot " . ($i - 1));
}
my $h3 = $h[2];

# ---- the third server: no slot
my ($state, $msg, $stderr) = psql_error($h3, 'postgres', "INSERT INTO ids VALUES (cosid_next('g'))");
is($state, '55000', 'h3: cosid_next fails with 55000') or diag($stderr // 'it succeeded');
is($msg, 'this server holds no slot lease in namespace "tiny" yet', 'h3: the message names the namespace');
like($stderr, qr/DETAIL:  Last error: .*no free slot in cosid namespace "tiny"/,
	'h3: the detail gives the store\'s error: no free slot in the namespace');
like($stderr, qr/All 2 slots \(cosid\.machine_bits = 1\) are held by live leases/,
	'h3: which names cosid.machine_bits');
is($h3->safe_psql('postgres', 'SELECT count(*) FROM ids'), '0', 'h3: no row went in');
like( $h3->safe_psql('postgres', q{
		SELECT mode, coalesce(slot::text, 'none'), namespace, state, store_connected, last_error FROM cosid_slot()}),
	qr/^lease\|none\|tiny\|starting\|t\|.*no free slot/,
	'h3: cosid_slot() shows no slot, state starting, the store connected, last_error "no free slot"');
like(slurp_file($h3->logfile), qr/cosid slot worker could not lease a slot: .*no free slot in cosid namespace "tiny"/,
	'h3: its log says so');
is( $store->safe_psql('postgres',
		"SELECT count(*), count(*) FILTER (WHERE expires_at > now()), max(slot) FROM cosid.lease WHERE namespace = 'tiny'"),
	'2|2|1', 'the store: two live leases, slots 0 and 1, nothing more');

# ---- h1 stops cleanly: h3 takes its slot
$h[0]->safe_psql('postgres', "INSERT INTO ids SELECT cosid_next('g') FROM generate_series(1, 2000)");
my $h1_max = $h[0]->safe_psql('postgres', 'SELECT max(id) FROM ids');
$h[0]->stop;
my $t_freed = now_ms();
my $slot3 = wait_for_lease($h3, 15);
is($slot3, '0', 'h3 takes slot 0 once h1 has released it');
my $took = now_ms() - $t_freed;
note("h3 held slot 0 $took ms after h1 stopped");
cmp_ok($took, '<=', 8000, 'within a few seconds (retries back off to at most 2 s, COSID_BACKOFF_MAX_MS)');
$h3->safe_psql('postgres', "INSERT INTO ids SELECT cosid_next('g') FROM generate_series(1, 2000)");
is( $h3->safe_psql('postgres', qq{
		SELECT count(DISTINCT id), min(id) > $h1_max,
			   count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> 0)
		FROM ids}),
	'2000|t|0', 'h3 issues ids of slot 0, above every id h1 issued');
is($h[1]->safe_psql('postgres', 'SELECT state, slot FROM cosid_slot()'), 'active|1',
	'h2 keeps slot 1 throughout');

$_->stop for @h[ 1, 2 ];
$store->stop;
done_testing();
