# The slot from Citus (issue 22, item 2): with cosid.slot = 'citus' a node's
# slot is its Citus group id (coordinator 0, workers 1, 2, ...), read from
# pg_dist_local_group of cosid.citus_database.  A node not yet added (group
# id 0, like the coordinator's) refuses to issue with 55000 and issues once
# citus_add_node gave it a group id; a group id beyond cosid.machine_bits is
# refused; a worker removed by citus_remove_node (which sets its group id to
# 0) stops at once and holds no slot, not the coordinator's 0, and once
# added again issues from its new group id; a crash and restart issue no id
# twice.  PostgreSQL 16+ with Citus built into the cache (scripts/pg.sh);
# skipped otherwise.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;
use CitusTest;

if (my $why = citus_missing())
{
	plan skip_all => $why;
}

# Citus in database postgres, cosid.citus_database's default
my $c = citus_cluster(workers => 1, db => 'postgres', slots => [ 'citus', 'citus' ]);
my ($coord, $db) = ($c->{coordinator}, $c->{db});
my ($w1) = @{ $c->{workers} };

# the node's slot once its window is open, or undef
sub active_slot
{
	my ($node) = @_;
	my $slot;
	poll_until(
		30,
		sub {
			my $r = $node->safe_psql($db, 'SELECT state, slot FROM cosid_slot()');
			$slot = $1 if $r =~ /^active\|(\d+)$/;
			return defined $slot;
		});
	return $slot;
}

sub group_id
{
	my ($node) = @_;
	return $node->safe_psql($db, 'SELECT groupid FROM pg_catalog.pg_dist_local_group');
}

$coord->safe_psql($db, q{SELECT cosid_define('order', '{"strategy":"snowflake"}')});
my %issued;                                  # every id handed out: id => node
my $dups = 0;

# n ids of 'order' from the node: the nodes they unpack to (distinct, sorted)
sub issue
{
	my ($node, $gen, $n) = @_;
	my @rows = split /\n/, $node->safe_psql($db,
		"SELECT id, (cosid_unpack('order', id)).node FROM (SELECT cosid_next('$gen') AS id FROM generate_series(1, $n)) s");
	my %nodes;
	for (@rows)
	{
		my ($id, $slot) = split /\|/;
		$dups++ if exists $issued{$id};
		$issued{$id} = $node->name;
		$nodes{$slot} = 1;
	}
	return join(',', sort { $a <=> $b } keys %nodes);
}

for my $node ($coord, $w1)
{
	is(active_slot($node), group_id($node), $node->name . ': slot = its Citus group id');
}
is(issue($coord, 'order', 500), '0', 'coordinator issues from slot 0');
is(issue($w1, 'order', 500), '1', 'worker1 issues from slot 1');
is($coord->safe_psql($db, q{SELECT string_agg(mode || ':' || slot, ',' ORDER BY slot) FROM cosid_citus_check_slots()}),
	'citus:0,citus:1', 'cosid_citus_check_slots() reads the slots from Citus');

# a node not yet added: group id 0 like the coordinator's, but no slot;
# started with one machine bit (slots 0 and 1), too few for its group id 2
my $w2 = CitusTest::citus_node($c, 'worker2', 'citus', ['cosid.machine_bits = 1']);
$w2->safe_psql($db, q{SELECT cosid_define('probe', '{"strategy":"snowflake"}')});
is(group_id($w2), '0', 'worker2 before citus_add_node: group id 0');
ok(poll_until(30, sub { log_count($w2, qr/holds no slot from Citus: .*lists no coordinator/) > 0 }),
	'worker2 logs why it holds no slot');
{
	my ($state, $msg, $err) = psql_error($w2, $db, q{SELECT cosid_next('probe')});
	is($state, '55000', 'worker2 not yet added refuses to issue (55000)');
	like($err, qr/holds no slot from Citus yet.*DETAIL:.*not yet added with citus_add_node.*HINT:.*citus_add_node/s,
		'... saying why and what to do');
}

# citus_add_node from the coordinator, and the generators (a reference
# table, which Citus copies to a new node before its first shard) at once
sub add_node
{
	my ($node) = @_;
	$coord->safe_psql($db, "SELECT citus_add_node('127.0.0.1', " . $node->port . ')');
	$coord->safe_psql($db, q{SELECT replicate_reference_tables('block_writes')});
}

# added: group id 2, which does not fit one machine bit
add_node($w2);
push @{ $c->{workers} }, $w2;
is(group_id($w2), '2', 'worker2 added: group id 2');
ok(poll_until(30, sub { log_count($w2, qr/Citus group id 2 does not fit cosid\.machine_bits = 1 \(slots 0 to 1\)/) > 0 }),
	'a group id beyond cosid.machine_bits is refused, naming both');
{
	my ($state, $msg, $err) = psql_error($w2, $db, q{SELECT cosid_next('order')});
	is($state, '55000', '... and worker2 issues nothing');
	like($err, qr/group id 2 does not fit cosid\.machine_bits = 1/, '... saying so');
}

# enough machine bits: worker2 issues from slot 2
$w2->append_conf('postgresql.conf', 'cosid.machine_bits = 10');
$w2->restart;
is(active_slot($w2), '2', 'worker2 with 10 machine bits holds slot 2');
is(issue($w2, 'order', 500), '2', 'worker2 issues from slot 2');

# a crash and restart: the window's end was durable, no id again
my $before = $w2->safe_psql($db, q{SELECT max(id) FROM (SELECT cosid_next('order') AS id FROM generate_series(1, 2000)) s});
$w2->stop('immediate');
$w2->start;
is(active_slot($w2), '2', 'worker2 after a crash holds slot 2 again');
is($w2->safe_psql($db, "SELECT min(id) > $before FROM (SELECT cosid_next('order') AS id FROM generate_series(1, 2000)) s"),
	't', 'after the crash every id is above the ids before it');
is(slot_state($w2)->{citus}, '1', 'pg_cosid/slot.state records a slot from Citus');

# removed: Citus sets its group id to 0, and its copy of pg_dist_node still
# lists the coordinator; it must not take the coordinator's slot 0
$coord->safe_psql($db, "SELECT citus_remove_node('127.0.0.1', " . $w2->port . ')');
pop @{ $c->{workers} };
is(group_id($w2), '0', 'worker2 removed: Citus set its group id to 0');
ok(poll_until(30, sub { $w2->safe_psql($db, 'SELECT state FROM cosid_slot()') ne 'active' }),
	'the removed worker closes its window');
ok(poll_until(30, sub { log_count($w2, qr/holds no slot from Citus: .*held group id 2 before/) > 0 }),
	'... and holds no slot: group id 0 of a former worker is refused');
{
	my ($state, $msg, $err) = psql_error($w2, $db, q{SELECT cosid_next('probe')});
	is($state, '55000', 'the removed worker refuses to issue (55000)');
	is($w2->safe_psql($db, 'SELECT slot IS NULL FROM cosid_slot()'), 't', '... and shows no slot');
}
$w2->restart;
{
	my ($state) = psql_error($w2, $db, q{SELECT cosid_next('probe')});
	is($state, '55000', 'the removed worker still holds no slot after a restart');
}

# added again: a new group id, never one Citus gave before
add_node($w2);
push @{ $c->{workers} }, $w2;
my $group = group_id($w2);
cmp_ok($group, '>', 2, "worker2 added again: a new group id ($group)");
is(active_slot($w2), $group, 'worker2 holds its new group id as its slot');
is(issue($w2, 'order', 500), $group, 'worker2 issues from its new slot');
is(issue($coord, 'order', 500), '0', 'the coordinator still issues from slot 0');
is($coord->safe_psql($db, q{SELECT string_agg(slot::text, ',' ORDER BY slot) FROM cosid_citus_check_slots()}),
	"0,1,$group", 'cosid_citus_check_slots(): three nodes, three slots');
is($dups, 0, 'no id was issued twice (' . scalar(keys %issued) . ' ids)');

citus_stop($c);
done_testing();
