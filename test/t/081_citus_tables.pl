# Distributed tables keyed by cosid on Citus (issue 22), PostgreSQL 16 and
# later with Citus built (scripts/pg.sh builds it from the vendored tarball;
# without it this test skips).
#
# A coordinator (slot 0) and two workers (slots 1, 2); a third worker
# (slot 3) joins mid-load.  Tables:
#   orders       bigint snowflake id (DEFAULT cosid_next('order')) as the
#                distribution column; order_lines colocated with it
#   by_customer  distributed by customer, a snowflake id beside it: an
#                INSERT ... SELECT from the colocated customers runs on the
#                workers (Citus: "repartition"), and each worker evaluates
#                the DEFAULT
#   events       ulid (gen_ulid()) distribution column; event_tags colocated
#   docs         uuid v7 (gen_uuidv7()) distribution column; doc_parts
#                colocated
#   currencies   a reference table with a snowflake id
# cosid is created and the generators are defined on the coordinator only.
# Checked: which node evaluates the DEFAULT on each path (router and
# multi-row INSERTs and COPY through the coordinator: slot 0; an INSERT ...
# SELECT between colocated tables: the slot of the worker that holds the
# shard), by cosid_unpack; colocated joins find every row; a worker added mid-load,
# a rebalance (citus_rebalance_start) and a shard move
# (citus_move_shard_placement) while inserts go on lose no row and change no
# id; every id handed to a client (RETURNING) is unique across the cluster,
# and every id in the tables too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;
use CitusTest;

if (my $why = citus_missing()) { plan skip_all => $why; }

# cosid created and the generators defined on the coordinator only: Citus
# brings both to every worker, and to the third when it joins
my $c = citus_cluster(workers => 2, cosid_on_workers => 0);
my ($coord, $db) = ($c->{coordinator}, $c->{db});
# The documentation's Sharding with Citus, as written (in a schema of its own): its
# blocks define the generator 'order' and make its tables
my %readme = doc_blocks();
$coord->safe_psql($db, "CREATE SCHEMA readme; SET search_path = readme, public;\n"
	  . $readme{'citus-tables'} . $readme{'citus-inserts'});
$coord->safe_psql($db, q{SELECT cosid_define('line', '{"strategy": "snowflake", "layout": "SNOWFLAKE_MS"}')});

$coord->safe_psql($db, q{
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), customer bigint NOT NULL, via text NOT NULL);
	SELECT create_distributed_table('orders', 'id');
	CREATE TABLE order_lines (order_id bigint NOT NULL, line_id bigint NOT NULL DEFAULT cosid_next('line'),
		via text NOT NULL, PRIMARY KEY (order_id, line_id));
	SELECT create_distributed_table('order_lines', 'order_id', colocate_with => 'orders');
	CREATE TABLE customers (customer bigint PRIMARY KEY, name text NOT NULL);
	SELECT create_distributed_table('customers', 'customer', colocate_with => 'orders');
	INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 200) g;
	CREATE TABLE by_customer (customer bigint NOT NULL, id bigint NOT NULL DEFAULT cosid_next('order'),
		via text NOT NULL, PRIMARY KEY (customer, id));
	SELECT create_distributed_table('by_customer', 'customer', colocate_with => 'customers');
	CREATE TABLE events (id ulid PRIMARY KEY DEFAULT gen_ulid(), via text NOT NULL);
	SELECT create_distributed_table('events', 'id');
	CREATE TABLE event_tags (event_id ulid NOT NULL, tag text NOT NULL, PRIMARY KEY (event_id, tag));
	SELECT create_distributed_table('event_tags', 'event_id', colocate_with => 'events');
	CREATE TABLE docs (id uuid PRIMARY KEY DEFAULT gen_uuidv7(), via text NOT NULL);
	SELECT create_distributed_table('docs', 'id');
	CREATE TABLE doc_parts (doc_id uuid NOT NULL, part int NOT NULL, PRIMARY KEY (doc_id, part));
	SELECT create_distributed_table('doc_parts', 'doc_id', colocate_with => 'docs');
	CREATE TABLE currencies (id bigint PRIMARY KEY DEFAULT cosid_next('order'), code text NOT NULL);
	SELECT create_reference_table('currencies');
});

# every id handed to a client, by kind (order ids: orders, by_customer and
# currencies share the generator 'order'; lines; ulids; uuids)
my %handed = (order => [], line => [], ulid => [], uuid => []);

# Citus's own transient error: an INSERT ... SELECT planned while its
# colocated shards move is repartitioned and can miss the intermediate
# results of the old placement.  The statement fails as a whole (no id is
# handed out) and a client retries it.
my $transient = qr/could not find the intermediate result file/;
my $retried = 0;

# run SQL through the coordinator, retrying only on $transient
sub run
{
	my ($sql) = @_;
	for (my $try = 1;; $try++)
	{
		my ($rc, $out, $err) = $coord->psql($db, $sql, on_error_stop => 1);
		return $out if $rc == 0;
		die "$sql: $err" unless $err =~ $transient && $try < 5;
		$retried++;
	}
}

sub returning
{
	my ($kind, $sql) = @_;
	my $out = run($sql);
	my @ids = grep { $_ ne '' } split /\n/, $out;
	push @{ $handed{$kind} }, @ids;
	return @ids;
}

# the slot part of snowflake ids, as "slot:count,..."
sub slots_of
{
	my ($gen, $where) = @_;
	return $coord->safe_psql($db, qq{
		SELECT string_agg(node || ':' || n, ',' ORDER BY node) FROM (
			SELECT u.node, count(*) AS n FROM $where, cosid_unpack('$gen', id) u GROUP BY u.node) s});
}

# one round of every insert path, tagged $via: each returns its ids
my $round = 0;
sub insert_round
{
	my ($tag) = @_;
	$round++;
	my $via = "${tag}_$round";
	# router INSERTs (one row, the distribution column from the DEFAULT)
	my @o = map { returning(order => "INSERT INTO orders (customer, via) VALUES ($_, 'router:$via') RETURNING id") } 1 .. 3;
	# multi-row INSERTs: VALUES, and SELECT from a non-distributed source
	returning(order => "INSERT INTO orders (customer, via) VALUES "
		  . join(', ', map { "($_, 'values:$via')" } 1 .. 20) . " RETURNING id");
	push @o, returning(order => "INSERT INTO orders (customer, via) SELECT g, 'multi:$via' FROM generate_series(1, 50) g RETURNING id");
	# lines of those orders (colocated)
	returning(line => "INSERT INTO order_lines (order_id, via) SELECT o.id, '$via' FROM orders o, generate_series(1, 2)"
		  . " WHERE o.via IN ('router:$via', 'multi:$via') RETURNING line_id");
	# on the workers: each inserts from its shards of customers
	returning(order => "INSERT INTO by_customer (customer, via) SELECT customer, 'workers:$via' FROM customers RETURNING id");
	# a router INSERT whose id is not the distribution column
	returning(order => "INSERT INTO by_customer (customer, via) VALUES ($round, 'router:$via') RETURNING id");
	# ulid and uuid keys, and rows of their colocated tables
	returning(ulid => "INSERT INTO events (via) SELECT '$via' FROM generate_series(1, 30) RETURNING id");
	run("INSERT INTO event_tags SELECT id, t FROM events, unnest(ARRAY['a', 'b']) t WHERE via = '$via'");
	returning(uuid => "INSERT INTO docs (via) SELECT '$via' FROM generate_series(1, 30) RETURNING id");
	run("INSERT INTO doc_parts SELECT id, p FROM docs, generate_series(1, 2) p WHERE via = '$via'");
	returning(order => "INSERT INTO currencies (code) VALUES ('c$round') RETURNING id");
	# COPY through the coordinator (no ids handed out: checked in the tables)
	run("COPY orders (customer, via) FROM STDIN;\n"
		  . join('', map { "$_\tcopy:$via\n" } 1 .. 40) . "\\.\n");
}

insert_round('r0');

# which node evaluated the DEFAULT on each path
is(slots_of('order', q{orders}), '0:113',
	'router and multi-row INSERTs and COPY through the coordinator: its slot (0) in every id');
is(slots_of('order', q{currencies}), '0:1', 'a reference table: the coordinator evaluates the DEFAULT');
my %slot_of_port = map { $_->port => $_->{_cosid_slot} } citus_nodes($c);

# Rows of $table (distributed by $dist) whose snowflake id $col was made by
# the node holding the row's shard, as "matching/rows", and the slots seen.
sub made_by_holder
{
	my ($gen, $table, $dist, $col, $where) = @_;
	my %port_of_shard = map { split /\|/ } split /\n/,
	  $coord->safe_psql($db, "SELECT shardid, nodeport FROM citus_shards WHERE table_name = '$table'::regclass");
	my ($match, $rows, %slots) = (0, 0);
	for my $r (split /\n/, $coord->safe_psql($db, qq{
		SELECT get_shard_id_for_distribution_column('$table', t.$dist), u.node, count(*)
		FROM $table t, cosid_unpack('$gen', t.$col) u WHERE $where GROUP BY 1, 2}))
	{
		my ($shard, $node, $n) = split /\|/, $r;
		$rows += $n;
		$slots{$node} += $n;
		$match += $n if $slot_of_port{ $port_of_shard{$shard} } == $node;
	}
	return ("$match/$rows", join(',', map { "$_:$slots{$_}" } sort keys %slots));
}

# Citus never pushes an INSERT ... SELECT with a volatile DEFAULT down as it
# is; between colocated tables it plans "repartition": each worker runs the
# SELECT on its shards and inserts into the target's shards on the same
# worker, evaluating the DEFAULT there (not "pull to coordinator")
for my $t ([ 'by_customer (customer, via) SELECT customer, name FROM customers', 'by_customer' ],
	[ 'order_lines (order_id, via) SELECT id, via FROM orders', 'order_lines' ])
{
	my $plan = $coord->safe_psql($db, "EXPLAIN (COSTS OFF) INSERT INTO $t->[0]");
	like($plan, qr{INSERT/SELECT method: repartition}, "INSERT INTO $t->[1] ... SELECT from a colocated table runs on the workers");
}
is(slots_of('order', q{readme.orders}), '0:3', "README: orders inserted through the coordinator carry its slot");
my ($m, $slots) = made_by_holder('order', 'readme.order_lines', 'order_id', 'line_id', 'true');
is($m, '3/3', "README: their lines (INSERT ... SELECT) are made by the workers that hold them ($slots)");
($m, $slots) = made_by_holder('order', 'by_customer', 'customer', 'id', q{t.via LIKE 'workers:%'});
is($m, '200/200', "INSERT ... SELECT on the workers: each evaluates the DEFAULT, its own slot in the id ($slots)");
like($slots, qr/^1:\d+,2:\d+$/, 'both workers made ids');
($m, $slots) = made_by_holder('line', 'order_lines', 'order_id', 'line_id', 'true');
is($m, 2 * 53 . '/' . 2 * 53,
	"lines of orders (INSERT ... SELECT from the colocated orders): on the workers too, each one's slot ($slots)");

# Mid-load: a client inserting through the coordinator (RETURNING, one
# statement at a time) while a third worker joins, the shards are
# rebalanced onto it and one shard moves back.  Like run(), the client
# retries a statement that failed with $transient (its INSERT ... SELECT is
# Citus's too), at most 5 tries, and says so on stderr; any other error,
# or a fifth failure, stops it with an error (psql exits non-zero).  psql
# runs it: after each statement, :ERROR and :LAST_ERROR_MESSAGE say how it
# went.
sub load_statement
{
	my ($sql, $n, $try) = @_;
	my $stop = "\\set ON_ERROR_STOP 1\n"
	  . "DO \$\$BEGIN RAISE EXCEPTION 'client load stopped at statement $n, try $try (its error is above)'; END\$\$;\n";
	return "$sql\n\\if :ERROR\n"
	  . "SELECT position('could not find the intermediate result file' IN :'LAST_ERROR_MESSAGE') > 0 AS transient \\gset\n"
	  . "\\if :transient\n"
	  . ($try < 5 ? "\\warn 'client load: statement $n, try $try: Citus''s transient error, retried'\n"
		  . load_statement($sql, $n, $try + 1) : $stop)
	  . "\\else\n$stop\\endif\n\\endif\n";
}
my $load_file = $coord->basedir . '/load.sql';
open(my $fh, '>', $load_file) or die "could not write $load_file: $!";
print $fh load_statement("INSERT INTO orders (customer, via) SELECT g, 'load' FROM generate_series(1, 10) g RETURNING id;", $_, 1)
  for 1 .. 300;
close($fh);
my ($load_out, $load_err) = ('', '');
my $load = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $coord->connstr($db), '-f', $load_file ],
	'>', \$load_out, '2>', \$load_err);

insert_round('r1');
my $w3 = citus_add_worker($c);
$slot_of_port{ $w3->port } = $w3->{_cosid_slot};
insert_round('r2');

$coord->safe_psql($db, q{SELECT citus_rebalance_start(shard_transfer_mode => 'force_logical')});
my $during = 0;
for (;;)
{
	insert_round('reb');
	$during++;
	my $state = $coord->safe_psql($db, 'SELECT state FROM citus_rebalance_status()');
	last if $state =~ /finished|failed|cancelled/;
	die "rebalance: $state" if $during > 500;
}
is($coord->safe_psql($db, 'SELECT state FROM citus_rebalance_status()'), 'finished',
	"the rebalance finished ($during insert rounds ran during it)");
ok($coord->safe_psql($db, "SELECT count(*) > 0 FROM citus_shards WHERE nodeport = " . $w3->port),
	'the third worker holds shards now');

# move one shard of orders (with its colocated tables) from the first
# worker to the third, with inserts going on
my $w1 = $c->{workers}[0];
my ($shard) = split /\n/, $coord->safe_psql($db, "SELECT shardid FROM citus_shards WHERE table_name = 'orders'::regclass"
	  . " AND nodeport = " . $w1->port . " ORDER BY shardid LIMIT 1");
my ($mv_out, $mv_err) = ('', '');
my $move = IPC::Run::start(
	[ 'psql', '-XAt', '-v', 'ON_ERROR_STOP=1', '-d', $coord->connstr($db), '-c',
	  "SELECT citus_move_shard_placement($shard, '127.0.0.1', " . $w1->port . ", '127.0.0.1', " . $w3->port
		. ", shard_transfer_mode => 'force_logical')" ],
	'>', \$mv_out, '2>', \$mv_err);
my $during_move = 0;
while ($move->pumpable)
{
	insert_round('move');
	$during_move++;
	$move->pump_nb;
}
ok($move->finish, "citus_move_shard_placement succeeded ($during_move insert rounds ran during it) $mv_err");
is($coord->safe_psql($db, "SELECT nodeport FROM citus_shards WHERE shardid = $shard"), $w3->port,
	'the shard is on the third worker');

insert_round('after');
note("statements retried on Citus's transient error during the moves: $retried");
ok($load->finish, "the client's load through the coordinator succeeded $load_err");
# every error the load met was the transient one, each retried once
my @load_errors = $load_err =~ /ERROR:  ([^\n]*)/g;
my $load_retried = () = $load_err =~ /^client load: statement \d+, try \d+: Citus's transient error, retried$/mg;
is(scalar(grep { !/$transient/ } @load_errors), 0, 'the client load met no error but Citus\'s transient one');
is($load_retried, scalar(@load_errors), "... and retried each ($load_retried)");
note("client load statements retried on Citus's transient error: $load_retried");
my @load_ids = grep { $_ ne '' } split /\n/, $load_out;
is(scalar(@load_ids), 3000, 'the load was handed 3000 ids');
push @{ $handed{order} }, @load_ids;

# after the moves, rows inserted on the workers carry the slot of the node holding
# their shard now, the third worker's (3) among them
($m, $slots) = made_by_holder('order', 'by_customer', 'customer', 'id', q{t.via LIKE 'workers:after%'});
is($m, '200/200', "after the rebalance and the move, rows inserted on the workers carry their shard's node's slot ($slots)");
like($slots, qr/(^|,)3:\d+/, 'the third worker (which holds a shard moved to it) made ids with its own slot');
is(join(',', citus_on_all($c, 'SELECT slot FROM cosid_slot()')), '0,1,2,3', 'one slot per node');
like(slots_of('order', q{orders}), qr/^0:\d+$/,
	'every order inserted through the coordinator (router, multi-row, COPY, the load) carries its slot');
like(slots_of('order', q{(SELECT id FROM by_customer WHERE via LIKE 'router:%') b}), qr/^0:\d+$/,
	'router INSERTs into by_customer (the id is not its distribution column): the coordinator evaluates the DEFAULT too');
is(slots_of('order', q{(SELECT id FROM by_customer WHERE via LIKE 'workers:%') b}) =~ /\b0:/ ? 'coordinator' : 'workers only', 'workers only',
	'no row inserted by INSERT ... SELECT on the workers was made on the coordinator');

# every id handed to a client is unique, and all of them are in the tables
for my $kind (sort keys %handed)
{
	my %seen;
	my $dups = grep { $seen{$_}++ } @{ $handed{$kind} };
	is($dups, 0, "no duplicate among the " . scalar(@{ $handed{$kind} }) . " $kind ids handed to clients");
}
my %tables = (
	order => q{SELECT id FROM orders UNION ALL SELECT id FROM by_customer UNION ALL SELECT id FROM currencies},
	line => q{SELECT line_id FROM order_lines},
	ulid => q{SELECT id::text FROM events},
	uuid => q{SELECT id::text FROM docs});
for my $kind (sort keys %tables)
{
	my ($n, $distinct) = split /\|/, $coord->safe_psql($db, "SELECT count(*), count(DISTINCT id) FROM ($tables{$kind}) t(id)");
	is($distinct, $n, "the $n $kind ids in the tables are all distinct");
	my $copied = $kind eq 'order' ? $coord->safe_psql($db, q{SELECT count(*) FROM orders WHERE via LIKE 'copy:%'}) : 0;
	is($n, scalar(@{ $handed{$kind} }) + $copied, "every $kind id in the tables was handed to a client (or COPY'd)");
}
# colocated joins find every row after the moves
is($coord->safe_psql($db, q{SELECT count(*) FROM event_tags t JOIN events e ON e.id = t.event_id}),
	$coord->safe_psql($db, q{SELECT 2 * count(*) FROM events}), 'every event has its tags (colocated by ulid)');
is($coord->safe_psql($db, q{SELECT count(*) FROM doc_parts p JOIN docs d ON d.id = p.doc_id}),
	$coord->safe_psql($db, q{SELECT 2 * count(*) FROM docs}), 'every doc has its parts (colocated by uuid v7)');
is($coord->safe_psql($db, q{SELECT count(*) FROM order_lines l JOIN orders o ON o.id = l.order_id}),
	$coord->safe_psql($db, q{SELECT count(*) FROM order_lines}), 'every order line finds its order');
# every ulid and uuid is time-ordered as made (v7, timestamps of this run)
is($coord->safe_psql($db, q{SELECT count(*) FROM docs WHERE substr(id::text, 15, 1) <> '7'}), 0, 'uuids are version 7');
# the reference table is the same on every node
my @ref = citus_on_all($c, q{SELECT string_agg(id::text, ',' ORDER BY id) FROM currencies});
is(scalar(grep { $_ eq $ref[0] } @ref), scalar(@ref), 'the reference table has the same ids on every node');

done_testing();
