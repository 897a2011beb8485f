# Issuing, encoding and decoding work the same on every node of a Citus
# cluster (issue 22): the paths 080 does not take, on one cluster
# (coordinator + 2 workers, cosid created on the coordinator only).
#
# - A custom codec: its functions, created on the coordinator, reach the
#   workers (Citus propagates CREATE FUNCTION), which encode and decode with
#   them, directly and in an INSERT ... SELECT that runs on the workers.  A
#   function Citus did not propagate: the coordinator warns at define time,
#   a worker answers 42883 naming it, and create_distributed_function() (the
#   hint) mends it.
# - A segment generator with "distributor": "lease-store", the store being
#   the coordinator's own database, each node logging in as its own store
#   role: the coordinator and the workers issue numbers no other node has.
# - A segment generator backed by a sequence of the coordinator: issues on
#   the coordinator; a worker encodes and decodes with it but refuses to
#   issue (55000, naming the reason), also in a pushed-down INSERT ... SELECT
#   (it answered 'generator ... does not exist' before).
# - pg_dump of the coordinator's database, restored into a server without
#   Citus (generators come back and issue; the mirror is not dumped) and into
#   a new Citus cluster (another database of the same servers), where
#   cosid_citus_sync() makes them reach its workers.
# - DROP EXTENSION cosid on the coordinator: refused as a whole while tables
#   use cosid (every node keeps it); without them it drops cosid and its
#   mirror on every node (it failed on the coordinator's placement of the
#   mirror before), and CREATE EXTENSION cosid brings it back everywhere.
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

my $c = citus_cluster(workers => 2, cosid_on_workers => 0);
my ($coord, $db) = ($c->{coordinator}, $c->{db});
my ($w1, $w2) = @{ $c->{workers} };
my @nodes = citus_nodes($c);

# ---- 1. a custom codec
$coord->safe_psql($db, q{
	CREATE FUNCTION public.hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION public.unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;});
{
	my ($ret, $out, $err) = $coord->psql($db, q{SELECT cosid_define('hexed', '{"strategy":"snowflake",
		"codec":[{"custom":{"encode":"hexid(bigint)","decode":"unhexid(text)"}}]}')});
	is($ret, 0, 'custom codec: defined on the coordinator');
	unlike($err, qr/WARNING/, '... with no warning: Citus created its functions on every node');
}

for my $w ($w1, $w2)
{
	is($w->safe_psql($db, q{SELECT cosid_encode('hexed', 255), cosid_decode('hexed', 'ff')}), 'ff|255',
		$w->name . ': encodes and decodes with the custom functions');
	is( $w->safe_psql($db, q{
			SELECT cosid_decode('hexed', cosid_encode('hexed', id)) = id, (cosid_unpack('hexed', id)).node
			FROM (SELECT cosid_next('hexed') AS id) s}),
		"t|$w->{_cosid_slot}", $w->name . ': issues, and its ids go through the codec and back');
}
# a DEFAULT that encodes, evaluated by the workers in a repartitioned
# INSERT ... SELECT; the SELECT that decodes runs on the workers too
$coord->safe_psql($db, q{
	CREATE TABLE codes (k int NOT NULL, code text NOT NULL DEFAULT cosid_encode('hexed', cosid_next('hexed')));
	SELECT create_distributed_table('codes', 'k');
	INSERT INTO codes (k) SELECT g FROM generate_series(1, 50) g;
	INSERT INTO codes (k) SELECT k FROM codes;});
like($coord->safe_psql($db, q{EXPLAIN (COSTS OFF) INSERT INTO codes (k) SELECT k FROM codes}),
	qr/INSERT\/SELECT method: repartition/, 'the INSERT ... SELECT runs on the workers');
is( $coord->safe_psql($db, q{
		SELECT count(*), count(DISTINCT code), bool_and(cosid_encode('hexed', cosid_decode('hexed', code)) = code),
			string_agg(DISTINCT (cosid_unpack('hexed', cosid_decode('hexed', code))).node::text, ','
				ORDER BY (cosid_unpack('hexed', cosid_decode('hexed', code))).node::text)
		FROM codes}),
	'100|100|t|0,1,2', 'codes made by the coordinator and by both workers decode and encode back');

# a function Citus did not create on the workers
$coord->safe_psql($db, q{
	SET citus.enable_ddl_propagation = off;
	CREATE FUNCTION public.hexid_local(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'h' || to_hex($1) $$;});
{
	my ($ret, $out, $err) = $coord->psql($db, q{SELECT cosid_define('hexed_local', '{"strategy":"snowflake",
		"codec":[{"custom":{"encode":"hexid_local(bigint)","decode":"unhexid(text)"}}]}')});
	is($ret, 0, 'a custom codec with a function of the coordinator only: defined');
	like($err, qr/WARNING:  custom codec function public\.hexid_local\(bigint\) of generator "hexed_local" is not on the Citus workers.*HINT:  Run SELECT create_distributed_function\('public\.hexid_local\(bigint\)'\)/s,
		'... with a warning naming the function, and the hint');
}
my $missing = qr/custom codec function public\.hexid_local\(bigint\) of generator "hexed_local" does not exist on this server/;
{
	my ($state, $msg, $err) = psql_error($w1, $db, q{SELECT cosid_encode('hexed_local', 1)});
	is($state, '42883', 'a worker without the function: 42883');
	like($msg, $missing, '... naming the function and the generator');
	like($err, qr/HINT:  .*create_distributed_function/, '... with a hint');
	($state, $msg) = psql_error($coord, $db, q{
		CREATE TABLE local_codes (k int NOT NULL, code text NOT NULL
			DEFAULT cosid_encode('hexed_local', cosid_next('hexed_local')));
		SELECT create_distributed_table('local_codes', 'k');
		INSERT INTO local_codes (k) SELECT g FROM generate_series(1, 20) g;
		INSERT INTO local_codes (k) SELECT k FROM local_codes;});
	is($state, '42883', 'an INSERT ... SELECT that runs on the workers: 42883 from the worker');
	like($msg, $missing, '... naming the function');
}
$coord->safe_psql($db, q{SELECT create_distributed_function('public.hexid_local(bigint)')});
is($w2->safe_psql($db, q{SELECT cosid_encode('hexed_local', 255)}), 'hff',
	'create_distributed_function() (the hint): the worker encodes');

# ---- 2. a segment generator shared through the lease store: the
# coordinator's database, one store role per node (docs/operations.md)
$coord->safe_psql($db, q{
	CREATE ROLE cosid_servers NOLOGIN;
	GRANT USAGE ON SCHEMA cosid TO cosid_servers;
	GRANT EXECUTE ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO cosid_servers;});
my $store_conn = sub {
	my ($role) = @_;
	return "host=127.0.0.1 port=" . $coord->port . " dbname=$db user=$role";
};
for my $i (0 .. $#nodes)
{
	$coord->safe_psql($db, "CREATE ROLE cosid_srv$i LOGIN IN ROLE cosid_servers");
	# 1.4: the group shares no counter by itself; the store's superuser grants it
	$coord->safe_psql($db, "INSERT INTO cosid.segment_counter_grant (namespace, database, name, role) "
		  . "VALUES ('default', '$db', 'ticket', 'cosid_srv$i')");
	$nodes[$i]->safe_psql($db, "ALTER SYSTEM SET cosid.lease_store = '" . $store_conn->("cosid_srv$i")
		  . "'; SELECT pg_reload_conf()");
}
$coord->safe_psql($db, q{SELECT cosid_define('ticket',
	'{"strategy":"segment","distributor":"lease-store","step":100,"reserve":2}')});
my %seen;
my $dups = 0;
my $count = sub {
	my ($list) = @_;
	for (split /[,\n]/, $list)
	{
		$dups++ if $seen{$_}++;
	}
};
for my $n (@nodes)
{
	my $list = $n->safe_psql($db, q{SELECT string_agg(g::text, ',') FROM cosid_next_many('ticket', 250) g});
	is(scalar(split /,/, $list), 250, $n->name . ': issues from the lease store');
	$count->($list);
}
$coord->safe_psql($db, q{
	CREATE TABLE tickets (k int NOT NULL, n bigint NOT NULL DEFAULT cosid_next('ticket'));
	SELECT create_distributed_table('tickets', 'k');
	INSERT INTO tickets (k) SELECT g FROM generate_series(1, 300) g;
	INSERT INTO tickets (k) SELECT k FROM tickets;});
$count->($coord->safe_psql($db, q{SELECT n FROM tickets}));
is(scalar(keys %seen), 1350, 'lease-store numbers: 750 asked on the nodes, 600 in a table (300 from the workers)');
is($dups, 0, '... none of them twice across the nodes');
is($coord->safe_psql($db, q{SELECT store_role, database FROM cosid.segment_counter WHERE name = 'ticket'}),
	"cosid_srv0|$db", 'one counter on the store, shared by the nodes\' store roles');

# ---- 3. a segment generator backed by a sequence of the coordinator
{
	my ($ret, $out, $err) = $coord->psql($db,
		q{SELECT cosid_define('seqseg', '{"strategy":"segment","codec":[{"prefix":"S-"}]}')});
	like($err, qr/NOTICE:  segment generator "seqseg" issues on the coordinator only/,
		'a sequence-backed segment generator: the coordinator says it issues there only');
}
is($coord->safe_psql($db, q{SELECT cosid_next('seqseg')}), '1', 'the coordinator issues from it');
for my $w ($w1, $w2)
{
	my ($state, $msg, $err) = psql_error($w, $db, q{SELECT cosid_next('seqseg')});
	is($state, '55000', $w->name . ': asked for its numbers, 55000');
	like($msg, qr/segment generator "seqseg" issues on the Citus coordinator only/, '... saying why');
	like($err, qr/HINT:  Issue its numbers on the coordinator.*lease-store/, '... with a hint');
	is($w->safe_psql($db, q{SELECT cosid_encode('seqseg', 42), cosid_decode('seqseg', 'S-42')}), 'S-42|42',
		$w->name . ': encodes and decodes with it');
}
$coord->safe_psql($db, q{
	CREATE TABLE seq_rows (k int NOT NULL, n bigint NOT NULL DEFAULT cosid_next('seqseg'));
	SELECT create_distributed_table('seq_rows', 'k');
	INSERT INTO seq_rows (k) SELECT g FROM generate_series(1, 20) g;});
{
	my ($state, $msg) = psql_error($coord, $db, q{INSERT INTO seq_rows (k) SELECT k FROM seq_rows});
	is($state, '55000', 'an INSERT ... SELECT whose DEFAULT is evaluated on the workers: 55000');
	like($msg, qr/segment generator "seqseg" issues on the Citus coordinator only/, '... naming the generator');
}
is($coord->safe_psql($db, q{SELECT count(*), count(DISTINCT n), min(n), max(n) FROM seq_rows}), '20|20|2|21',
	'... and added no row; the coordinator\'s inserts have its numbers');
{
	my ($state, $msg, $err) = psql_error($w1, $db, q{SELECT cosid_next('nonesuch')});
	like($err, qr/HINT:  This node is a Citus worker: define it on the coordinator/,
		'an unknown generator on a worker: the hint points to the coordinator');
}

# ---- 5. pg_dump of the coordinator's database
my $dump = $coord->basedir . '/coordinator.dump';
$coord->command_ok([ 'pg_dump', '-Fc', '--exclude-extension=citus', '-f', $dump, '-d', $coord->connstr($db) ],
	'pg_dump of the coordinator\'s database (without the citus extension)');
my $generators = $coord->safe_psql($db, q{SELECT name, strategy, config FROM cosid.generators ORDER BY name});
my $seq_max = $coord->safe_psql($db, q{SELECT max(n) FROM seq_rows});

# into a single server without Citus
my $single = cosid_node('single', conf => [ "cosid.lease_store = '" . $store_conn->('cosid_srv9') . "'" ]);
$coord->safe_psql($db, q{CREATE ROLE cosid_srv9 LOGIN IN ROLE cosid_servers});
# the roles first (pg_dumpall --roles-only), as for any restore into a new server
$single->safe_psql('postgres', q{CREATE ROLE cosid_servers NOLOGIN});
$single->safe_psql('postgres', "CREATE DATABASE $db");
$single->command_ok([ 'pg_restore', '--exit-on-error', '-d', $single->connstr($db), $dump ],
	'pg_restore into a server without Citus');
is($single->safe_psql($db, q{SELECT name, strategy, config FROM cosid.generators ORDER BY name}), $generators,
	'single server: every generator came back');
is($single->safe_psql($db, q{SELECT count(*) FROM cosid.citus_generator}), '0', '... and the mirror is empty');
is( $single->safe_psql($db, q{
		SELECT cosid_encode('hexed', 255), (cosid_unpack('hexed', cosid_next('hexed'))).node,
			cosid_next('seqseg') > } . $seq_max . q{, cosid_encode('seqseg', 7)}),
	'ff|0|t|S-7', '... they issue (its slot), the sequence goes on, codecs work');
$count->($single->safe_psql($db, q{SELECT string_agg(g::text, ',') FROM cosid_next_many('ticket', 150) g}));
is($dups, 0, '... the lease-store generator goes on with the cluster\'s counter: no number twice');
{
	my ($state, $msg) = psql_error($single, $db, q{SELECT cosid_citus_sync()});
	is($state, '55000', '... cosid_citus_sync() there: 55000, no Citus');
}
$single->stop;

# into a new Citus cluster: another database of the same servers
my $db2 = 'restored';
for my $n (@nodes)
{
	$n->safe_psql('postgres', "CREATE DATABASE $db2");
	$n->safe_psql($db2, 'CREATE EXTENSION citus');
}
$coord->safe_psql($db2, "SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
$coord->safe_psql($db2, "SELECT citus_add_node('127.0.0.1', " . $_->port . ')') for ($w1, $w2);
$coord->command_ok([ 'pg_restore', '--exit-on-error', '-d', $coord->connstr($db2), $dump ],
	'pg_restore into a new Citus coordinator');
is($coord->safe_psql($db2, q{SELECT name, strategy, config FROM cosid.generators ORDER BY name}), $generators,
	'new coordinator: every generator came back');
{
	my ($state, $msg) = psql_error($w1, $db2, q{SELECT cosid_next('hexed')});
	like($msg, qr/generator "hexed" does not exist/, '... a worker has none of them before cosid_citus_sync()');
}
is($coord->safe_psql($db2, q{SELECT cosid_citus_sync()}), scalar(split /\n/, $generators),
	'cosid_citus_sync() writes every generator');
for my $w ($w1, $w2)
{
	is( $w->safe_psql($db2, q{
			SELECT cosid_encode('hexed', 255), (cosid_unpack('hexed', cosid_next('hexed'))).node,
				cosid_encode('seqseg', 7)}),
		"ff|$w->{_cosid_slot}|S-7", $w->name . ': has them, issues and encodes (the restored functions reached it)');
}

# ---- 4. DROP EXTENSION cosid on the coordinator
{
	my ($ret, $out, $err) = $coord->psql($db, q{DROP EXTENSION cosid});
	like($err, qr/cannot drop extension cosid because other objects depend on it/,
		'DROP EXTENSION cosid while tables use it: refused');
	unlike($err, qr/citus_generator/, '... for the tables, not for cosid\'s own mirror');
}
is(join(',', map { $_->safe_psql($db, q{SELECT count(*) FROM pg_extension WHERE extname = 'cosid'}) } @nodes),
	'1,1,1', '... every node keeps cosid');
ok($w1->safe_psql($db, q{SELECT cosid_next('hexed') > 0}) eq 't', '... and a worker still issues');
# (a segment generator's own sequence, in schema cosid, holds DROP EXTENSION
# on any server: drop the generator first)
$coord->safe_psql($db, q{DROP TABLE codes, local_codes, tickets, seq_rows; SELECT cosid_drop('seqseg')});
{
	my ($ret, $out, $err) = $coord->psql($db, q{DROP EXTENSION cosid});
	is($ret, 0, 'DROP EXTENSION cosid (no table uses it): done');
}
is( join(',', map {
			$_->safe_psql($db, q{SELECT count(*) FROM pg_extension WHERE extname = 'cosid'})
			  . '/' . $_->safe_psql($db, q{SELECT count(*) FROM pg_namespace WHERE nspname = 'cosid'})
			  . '/' . $_->safe_psql($db, q{SELECT count(*) FROM pg_dist_shard WHERE logicalrelid::text LIKE 'cosid.%'})
			  . '/' . $_->safe_psql($db, q{SELECT count(*) FROM pg_prepared_xacts})
		} @nodes),
	'0/0/0/0,0/0/0/0,0/0/0/0', '... on every node: no extension, no schema cosid, no shard of the mirror, no prepared transaction');
$coord->safe_psql($db, q{CREATE EXTENSION cosid; SELECT cosid_define('again', '{"strategy":"snowflake"}')});
is( join(',', map { $_->safe_psql($db, q{SELECT (cosid_unpack('again', cosid_next('again'))).node}) } @nodes),
	'0,1,2', 'CREATE EXTENSION cosid again: every node has it and issues from a new generator');

citus_stop($c);
done_testing();
