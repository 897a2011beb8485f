# PostgreSQL's native logical replication both ways (PostgreSQL 16 and
# later: subscriptions with origin = none), issue 21 item 3.
#
#  1. Two servers leasing their slots from one store (so each has a slot of
#     its own), each publishing its table and subscribing to the other's,
#     insert 3,000 rows each at the same time: both converge on the same
#     6,000 rows, with no apply error.
#  2. The same with one manual slot (cosid.slot = 0) on both servers: they
#     issue the same ids (the layout counts seconds, so both loads share
#     their seconds and sequence numbers).  Each load records every id it
#     issued in a table of its own that is not replicated, and inserts with
#     ON CONFLICT (id) DO NOTHING, so a row the other server's apply worker
#     wrote first does not abort the load (it did: pgbench stopped at the
#     very duplicate key this pair exists to show).  The ids both servers
#     issued are counted and must be some; the first collision the apply
#     side meets stops its worker (a unique violation, retried every few
#     seconds) or the local insert skips the row: either way the tables do
#     not converge.  That is what the documentation warns about
#     (docs/operations.md): one slot per server.
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

# both insert $rows rows at once (one pgbench client each); with $record,
# each load also keeps every id it issued in its local table issued (not
# published) and skips a row whose id is already there (ON CONFLICT DO
# NOTHING), so that a collision is counted, not fatal.  Returns whether both
# loads ran every transaction, and their outputs.
sub insert_both
{
	my ($x, $y, $rows, $record) = @_;
	my @loads = map {
		my $who = $_->name;
		my $sql = $record
		  ? "WITH ids AS (SELECT cosid_next('order') AS id FROM generate_series(1, 100)),\n"
		  . "  kept AS (INSERT INTO issued (id) SELECT id FROM ids RETURNING id)\n"
		  . "INSERT INTO orders (id, who) SELECT id, '$who' FROM kept ON CONFLICT (id) DO NOTHING;"
		  : "INSERT INTO orders (who) SELECT '$who' FROM generate_series(1, 100);";
		start_load_tx($_, 1, $rows / 100, $sql)
	} ($x, $y);
	my ($all, @out) = (1);
	for my $l (@loads)
	{
		my ($ok, $tx, $out) = finish_load($l);
		$all &&= $ok && $tx == $rows / 100;
		push @out, $out;
	}
	return ($all, join("\n", @out));
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
my ($loaded, $out) = insert_both($a, $b, 3000);
die "pgbench: $out" unless $loaded;
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
$_->safe_psql('postgres', 'CREATE TABLE issued (id bigint NOT NULL)') for ($c, $d);
($loaded, $out) = insert_both($c, $d, 3000, 1);
ok($loaded, 'one manual slot on both: both loads ran to the end (a collision skips its row, it does not abort)')
  or diag($out);
my %ids_c = map { $_ => 1 } split /\n/, $c->safe_psql('postgres', 'SELECT id FROM issued');
my @both = grep { $ids_c{$_} } split /\n/, $d->safe_psql('postgres', 'SELECT id FROM issued');
is(scalar(keys %ids_c), 3000, '... c recorded the 3,000 ids it issued');
cmp_ok(scalar(@both), '>', 0, '... and ' . scalar(@both) . ' of them were issued by d too');
my $skipped = 6000 - $c->safe_psql('postgres', q{SELECT count(*) FROM orders WHERE who = 'c'})
  - $d->safe_psql('postgres', q{SELECT count(*) FROM orders WHERE who = 'd'});
# the apply side meets a collision as an error (its worker stops, and the log
# names the conflict), the local insert as a row it skips
my $errors = $skipped > 0 ? 0 : poll_until(60, sub { apply_errors($c) + apply_errors($d) > 0 });
my $logged = (slurp_file($c->logfile) . slurp_file($d->logfile)) =~
  qr/conflict detected on relation "public\.orders": conflict=insert_exists|duplicate key value violates unique constraint "orders_pkey"/;
ok( $skipped > 0 || ($errors && $logged),
	"... the collisions show: $skipped local inserts skipped, or apply errors with the conflict in the log "
	  . '(insert_exists on 18, a unique violation before)');
isnt($c->safe_psql('postgres', 'SELECT count(*) FROM orders') . '|' . $d->safe_psql('postgres', 'SELECT count(*) FROM orders'),
	'6000|6000', '... and the tables do not converge');
$_->stop for ($c, $d);

done_testing();
