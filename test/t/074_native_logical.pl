# PostgreSQL's native logical replication both ways (PostgreSQL 16 and
# later: subscriptions with origin = none), issue 21 item 3.
#
#  1. Two servers leasing their slots from one store (so each has a slot of
#     its own), each publishing its table and subscribing to the other's,
#     insert 3,000 rows each at the same time: both converge on the same
#     6,000 rows, with no apply error.
#  2. The same with one manual slot (cosid.slot = 0) on both servers: they
#     issue the same ids (the layout counts seconds, so both loads share
#     their seconds and sequence numbers), and the first one that collides
#     stops the apply
#     worker (a unique violation, retried every few seconds): the subscriptions
#     count apply errors and the tables do not converge.  That is what the
#     documentation warns about (docs/operations.md): one slot per server.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $probe = cosid_node('probe', no_start => 1);
my ($major) = $probe->pg_version =~ /^(\d+)/;
plan skip_all => 'origin = none needs PostgreSQL 16 or later' if $major < 16;

my $setup = q{
	CREATE EXTENSION IF NOT EXISTS cosid;
	SELECT cosid_define('order', '{"strategy":"snowflake","layout":"SNOWFLAKE_S"}');
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), who text NOT NULL);
};

# two servers publishing to and subscribing from each other
sub pair
{
	my ($x, $y) = @_;
	for my $n ($x, $y)
	{
		$n->safe_psql('postgres', $setup);
		$n->safe_psql('postgres', 'CREATE PUBLICATION pub FOR TABLE orders');
	}
	for my $pair ([ $x, $y ], [ $y, $x ])
	{
		my ($sub, $pub) = @$pair;
		my $name = 'sub_' . $sub->name;
		my $conn = 'host=' . $pub->host . ' port=' . $pub->port . ' dbname=postgres';
		$sub->safe_psql('postgres',
			"CREATE SUBSCRIPTION $name CONNECTION '$conn' PUBLICATION pub WITH (origin = none, copy_data = false)");
	}
	for my $n ($x, $y)
	{
		$n->poll_query_until('postgres',
			q{SELECT count(*) = 1 FROM pg_stat_subscription WHERE pid IS NOT NULL AND relid IS NULL})
		  or die 'the apply worker of ' . $n->name . ' did not start';
	}
}

# both insert $rows rows at once (one pgbench client each)
sub insert_both
{
	my ($x, $y, $rows) = @_;
	my @loads = map {
		start_load_tx($_, 1, $rows / 100,
			"INSERT INTO orders (who) SELECT '" . $_->name . "' FROM generate_series(1, 100);")
	} ($x, $y);
	for my $l (@loads)
	{
		my ($ok, $tx, $out) = finish_load($l);
		die "pgbench: $out" unless $ok;
	}
}

sub apply_errors
{
	my ($n) = @_;
	return $n->safe_psql('postgres', q{SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats});
}

my $wal = [ 'wal_level = logical', 'max_replication_slots = 10', 'max_wal_senders = 10',
	'max_logical_replication_workers = 8' ];

# ---- 1. leased slots: one each
my $store = lease_store('store');
my $a = cosid_node('a', conf => [ @{ lease_conf($store, ttl => 10) }, @$wal ]);
my $b = cosid_node('b', conf => [ @{ lease_conf($store, ttl => 10) }, @$wal ]);
$a->safe_psql('postgres', 'CREATE EXTENSION cosid');
$b->safe_psql('postgres', 'CREATE EXTENSION cosid');
my ($slot_a, $slot_b) = (wait_for_lease($a), wait_for_lease($b));
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b, "leased slots: a holds $slot_a, b holds $slot_b");
pair($a, $b);
insert_both($a, $b, 3000);
ok( poll_until(60, sub {
		$a->safe_psql('postgres', 'SELECT count(*) FROM orders') eq '6000'
		  && $b->safe_psql('postgres', 'SELECT count(*) FROM orders') eq '6000' }),
	'leased slots: both servers hold all 6,000 rows');
is($a->safe_psql('postgres', q{SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM orders}),
	$b->safe_psql('postgres', q{SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM orders}),
	'... the same ids on both');
is(apply_errors($a) . '|' . apply_errors($b), '0|0', '... with no apply error on either');
$_->stop for ($a, $b, $store);

# ---- 2. one manual slot on both: they collide
my $c = cosid_node('c', conf => [ 'cosid.slot = 0', @$wal ]);
my $d = cosid_node('d', conf => [ 'cosid.slot = 0', @$wal ]);
pair($c, $d);
insert_both($c, $d, 3000);
ok( poll_until(60, sub { apply_errors($c) + apply_errors($d) > 0 }),
	'one manual slot on both: the subscriptions count apply errors');
like(slurp_file($c->logfile) . slurp_file($d->logfile),
	qr/conflict detected on relation "public\.orders": conflict=insert_exists|duplicate key value violates unique constraint "orders_pkey"/,
	'... a conflict on the ids both issued (insert_exists on 18, a unique violation before)');
isnt($c->safe_psql('postgres', 'SELECT count(*) FROM orders') . '|' . $d->safe_psql('postgres', 'SELECT count(*) FROM orders'),
	'6000|6000', '... and the tables do not converge');
$_->stop for ($c, $d);

done_testing();
