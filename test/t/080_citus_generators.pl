# Generators are objects of a Citus cluster (issue 22): cosid_define,
# cosid_alter and cosid_drop on the coordinator reach every worker in the
# coordinator's transaction (a rollback reaches none, a worker that fails
# fails the statement), a worker refuses them, a node added later has every
# generator before it gets a shard, and an INSERT ... SELECT that Citus pushes
# down to the workers issues from each worker's own slot (it failed with
# 'generator "order" does not exist' before).  PostgreSQL 16+ with Citus
# built into the cache (scripts/pg.sh); skipped otherwise.
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

# cosid created on the coordinator only: Citus creates it on the workers
my $c = citus_cluster(workers => 2, cosid_on_workers => 0);
my ($coord, $db) = ($c->{coordinator}, $c->{db});
my ($w1, $w2) = @{ $c->{workers} };

# a generator defined before the cluster had cosid's mirror: the first
# change on the coordinator makes the mirror a reference table with all of them
$coord->safe_psql($db, q{SELECT cosid_define('order', '{"strategy":"snowflake"}')});
$coord->safe_psql($db, q{SELECT cosid_define('invoice', '{"strategy":"snowflake"}')});
for my $w ($w1, $w2)
{
	my ($node, $id) = split /\|/, $w->safe_psql($db, q{
		SELECT (cosid_unpack('order', id)).node, id FROM (SELECT cosid_next('order') AS id) s});
	is($node, $w->{_cosid_slot}, $w->name . ': issues from its own slot with the coordinator\'s generator');
	ok($w->safe_psql($db, q{SELECT cosid_next('invoice') > 0}) eq 't', $w->name . ': has the second generator');
}
is($coord->safe_psql($db, q{SELECT cosid_citus_sync()}), '2', 'cosid_citus_sync() writes every generator again');

# a rolled-back define reaches no node
$coord->safe_psql($db, q{BEGIN; SELECT cosid_define('rolled_back', '{"strategy":"snowflake"}'); ROLLBACK;});
for my $node (citus_nodes($c))
{
	my ($ret, $out, $err) = $node->psql($db, q{SELECT cosid_next('rolled_back')});
	like($err, qr/generator "rolled_back" does not exist/, $node->name . ': a rolled-back define left nothing');
}

# alter reaches the workers: a codec set on the coordinator encodes there,
# also in a session of the worker that had read the generator before
my $session = $w1->background_psql($db);
unlike($session->query_safe(q{SELECT cosid_encode('order', 12345)}), qr/^O-/, 'worker session: no codec yet');
$coord->safe_psql($db, q{SELECT cosid_alter('order', '{"codec":[{"radix":62},{"prefix":"O-"}]}')});
like($session->query_safe(q{SELECT cosid_encode('order', 12345)}), qr/^O-/,
	'worker session that cached the generator reads it again after the change');
$session->quit;
for my $w ($w1, $w2)
{
	like($w->safe_psql($db, q{SELECT cosid_encode('order', 12345)}), qr/^O-/,
		$w->name . ': the altered codec');
}

# a worker refuses to change the cluster's generators
{
	my ($ret, $out, $err) = $w1->psql($db, q{SELECT cosid_define('local', '{"strategy":"snowflake"}')});
	like($err, qr/cannot change generator "local" on a Citus worker.*\n.*\n.*HINT:  Call cosid_define\(\) on the coordinator/s,
		'cosid_define on a worker is refused, pointing to the coordinator');
	($ret, $out, $err) = $w1->psql($db, q{SELECT cosid_drop('order')});
	like($err, qr/on a Citus worker/, 'cosid_drop on a worker is refused');
}

# drop reaches the workers
$coord->safe_psql($db, q{SELECT cosid_drop('invoice')});
for my $w ($w1, $w2)
{
	my ($ret, $out, $err) = $w->psql($db, q{SELECT cosid_next('invoice')});
	like($err, qr/generator "invoice" does not exist/, $w->name . ': the drop reached it');
}

# a worker that fails fails the coordinator's statement, which changes no node
$w2->stop;
{
	my ($ret, $out, $err) = $coord->psql($db, q{SELECT cosid_define('while_down', '{"strategy":"snowflake"}')});
	isnt($ret, 0, 'a define while a worker is down fails on the coordinator');
	is($coord->safe_psql($db, q{SELECT count(*) FROM cosid.generator WHERE name = 'while_down'}), '0',
		'... and the coordinator has no such generator');
}
$w2->start;
{
	my ($ret, $out, $err) = $w1->psql($db, q{SELECT cosid_next('while_down')});
	like($err, qr/does not exist/, '... nor has the worker that was up');
}

# the issue's failing case: INSERT ... SELECT pushed down to the workers,
# which evaluate the DEFAULT themselves
$coord->safe_psql($db, q{
	CREATE TABLE orders (customer int NOT NULL, id bigint NOT NULL DEFAULT cosid_next('order'), PRIMARY KEY (customer, id));
	SELECT create_distributed_table('orders', 'customer');
	INSERT INTO orders (customer) SELECT g FROM generate_series(1, 200) g;
	INSERT INTO orders (customer) SELECT customer FROM orders;
	INSERT INTO orders (customer) SELECT customer FROM orders;});
is($coord->safe_psql($db, q{SELECT count(*), count(DISTINCT id) FROM orders}), '800|800',
	'pushed-down INSERT ... SELECT: every id distinct');
is($coord->safe_psql($db, q{SELECT string_agg(DISTINCT (cosid_unpack('order', id)).node::text, ',' ORDER BY (cosid_unpack('order', id)).node::text) FROM orders}),
	'0,1,2', 'ids from the coordinator (router inserts) and both workers (pushdown)');

# a node added later has every generator before it gets a shard, and the
# functions of a custom codec (Citus creates them there too)
$coord->safe_psql($db, q{SELECT cosid_define('late', '{"strategy":"snowflake"}');
	CREATE FUNCTION public.late_hex(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'L' || to_hex($1) $$;
	CREATE FUNCTION public.late_unhex(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad(substr($1, 2), 16, '0'))::bit(64)::bigint $$;
	SELECT cosid_define('late_codec', '{"strategy":"snowflake",
		"codec":[{"custom":{"encode":"late_hex(bigint)","decode":"late_unhex(text)"}}]}');});
my $w3 = citus_add_worker($c, slot => 3);
$coord->safe_psql($db, q{
	CREATE TABLE events (customer int NOT NULL, id bigint NOT NULL DEFAULT cosid_next('order'));
	SELECT create_distributed_table('events', 'customer', colocate_with => 'none');
	INSERT INTO events (customer) SELECT g FROM generate_series(1, 400) g;
	INSERT INTO events (customer) SELECT customer FROM events;});
is($coord->safe_psql($db, q{SELECT count(*) > 0 FROM citus_shards WHERE table_name = 'events'::regclass AND nodeport = } . $w3->port),
	't', 'the added node holds shards of a new table');
is($coord->safe_psql($db, q{SELECT count(DISTINCT id) = count(*), bool_or((cosid_unpack('order', id)).node = 3) FROM events}),
	't|t', 'the added node issued ids (slot 3), all distinct');
is($w3->safe_psql($db, q{SELECT cosid_next('late') > 0 AND cosid_encode('order', 1) LIKE 'O-%'}), 't',
	'the added node has every generator, as last altered');
is($w3->safe_psql($db, q{SELECT cosid_encode('late_codec', 255), cosid_decode('late_codec', 'Lff')}), 'Lff|255',
	'the added node encodes and decodes with custom codec functions made before it joined');

# slots: every node its own, checked from the coordinator through Citus
is($coord->safe_psql($db, q{SELECT string_agg(slot::text, ',' ORDER BY slot) FROM cosid_citus_check_slots()}),
	'0,1,2,3', 'cosid_citus_check_slots(): four nodes, four slots');
$w3->append_conf('postgresql.conf', 'cosid.slot = 1');
$w3->restart;
{
	my ($ret, $out, $err) = $coord->psql($db, q{SELECT * FROM cosid_citus_check_slots()});
	like($err, qr/ERROR:  nodes 127\.0\.0\.1:\d+ and 127\.0\.0\.1:\d+ hold cosid slot 1/,
		'two nodes on one slot are caught');
}

citus_stop($c);
done_testing();
