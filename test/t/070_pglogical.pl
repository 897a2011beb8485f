# Active-active with pglogical.  Two servers replicate the same two tables
# both ways (pglogical, conflict resolution left at its default,
# apply_remote), one keyed by cosid_next() (a snowflake generator), one by
# gen_ulid_monotonic(), and both insert 40,000 rows into each table at once
# (pgbench, 2 clients, 20 rows a statement).
#  leased   each server leases its slot from a lease store (a third
#           server): the tables converge on both, 80,000 rows each, the same
#           contents, every row from its own server's slot, and no CONFLICT
#           line in either log.
#  same     a fresh pair with the same manual slot (the default, slot 0) on
#           both: ids collide, pglogical turns each colliding INSERT into an
#           UPDATE (a CONFLICT line at LOG), and rows are lost with the row
#           counts equal on both servers; the same checks that pass above
#           fail there on orders (events, whose ids carry no slot, passes).
# Before the first subscription, a server that has output_plugin_libraries
# (15.19, 18.6 and later) is shown to refuse pglogical's output plugin until
# it is listed there.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use CosidTest;

my $missing = pglogical_missing();
plan skip_all => "pglogical is not installed for this PostgreSQL: $missing" if defined $missing;

my $rows = 40_000;    # per server and table
my $clients = 2;
my $batch = 20;
my $tx = $rows / ($clients * $batch);
my @tables = qw(orders events);
my $conflict_re = qr/CONFLICT: remote (?:INSERT|UPDATE|DELETE)/;
# output_plugin_libraries is a list: ALTER SYSTEM takes its items as
# separate literals ('a, b' in one literal would be one library named so)
my $plugins = "'pgoutput', 'test_decoding', 'pglogical_output'";

# Definitions are not replicated: every server gets the extensions, the
# generator and the tables.
my $schema = q{
	CREATE EXTENSION cosid;
	CREATE EXTENSION pglogical;
	SELECT cosid_define('orders', '{"strategy": "snowflake"}');
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('orders'), origin text NOT NULL, n int NOT NULL);
	CREATE TABLE events (id ulid PRIMARY KEY DEFAULT gen_ulid_monotonic(), origin text NOT NULL, n int NOT NULL);
};

# count | md5 of the ordered ids | md5 of the ordered rows | rows from each origin
sub table_state
{
	my ($node, $table, $x, $y) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*), md5(string_agg(id::text, ',' ORDER BY id)),
			md5(string_agg(id::text || ':' || origin || ':' || n, ',' ORDER BY id)),
			count(*) FILTER (WHERE origin = '$x'), count(*) FILTER (WHERE origin = '$y')
		FROM $table});
}

sub counts
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT ' . join(', ', map { "(SELECT count(*) FROM $_)" } @tables));
}

# What both servers must show once the loads are applied, as a list of
# [name, passed, what was seen]: the same rows on both, $rows rows from each
# server in each table, and no CONFLICT line in either log.  Passed by the
# leased pair; the pair with one slot must fail the orders checks.
sub checks
{
	my ($nx, $ny, $x, $y) = @_;
	my @r;
	for my $t (@tables)
	{
		my $sx = table_state($nx, $t, $x, $y);
		my $sy = table_state($ny, $t, $x, $y);
		push @r, [ "$t: the same rows on $x and $y", $sx eq $sy, "$x: $sx; $y: $sy" ];
		push @r,
		  [ "$t: $rows rows from each server on each, none lost",
			(!grep { $_ !~ /^@{[2 * $rows]}\|\w+\|\w+\|$rows\|$rows$/ } ($sx, $sy)),
			"$x: $sx; $y: $sy" ];
	}
	my @c = map { log_count($_, $conflict_re) } ($nx, $ny);
	push @r, [ 'no CONFLICT line in either log', $c[0] + $c[1] == 0, "$x: $c[0], $y: $c[1]" ];
	return @r;
}

# Two pglogical servers $x and $y subscribed to each other, with $schema.
# The conf lines go to both; plugins => 0 leaves output_plugin_libraries
# out (probed and set by the caller before the subscriptions).
sub make_pair
{
	my ($x, $y, %opt) = @_;
	my @nodes = map { pglogical_node($_, conf => $opt{conf}, plugins => $opt{plugins}) } ($x, $y);
	$_->safe_psql('postgres', $schema) for @nodes;
	$opt{before_subscribe}->(@nodes) if $opt{before_subscribe};
	pglogical_define_node($nodes[0], $x);
	pglogical_define_node($nodes[1], $y);
	ok(pglogical_subscribe($nodes[0], "${x}_from_$y", $nodes[1]), "$x subscribes to $y: replicating");
	ok(pglogical_subscribe($nodes[1], "${y}_from_$x", $nodes[0]), "$y subscribes to $x: replicating");
	return @nodes;
}

# Both servers insert $rows rows into each table at once: (seconds taken,
# whether both pgbench runs succeeded, their outputs).
sub load_both
{
	my ($nodes, $names) = @_;
	my $t0 = time();
	my @loads;
	for my $i (0, 1)
	{
		my $script = join("\n",
			map { "INSERT INTO $_ (origin, n) SELECT '$names->[$i]', g FROM generate_series(1, $batch) g;" }
			  @tables);
		push @loads, start_load_tx($nodes->[$i], $clients, $tx, $script);
	}
	my ($all_ok, @out) = (1);
	for my $l (@loads)
	{
		my ($ok, $done, $out) = finish_load($l);
		$all_ok &&= $ok && $done == $tx * $clients;
		push @out, $out;
	}
	return (time() - $t0, $all_ok, @out);
}

# Wait until each server's provider slot confirmed everything written so
# far (pglogical.wait_slot_confirm_lsn, which checks once a second), up to
# 60 s each.
sub wait_applied
{
	my (@nodes) = @_;
	$_->safe_psql('postgres',
		"SET statement_timeout = '60s'; SELECT pglogical.wait_slot_confirm_lsn(NULL, NULL)")
	  for @nodes;
}

# ---- leased slots
my $store = lease_store('store');
my ($na, $nb) = make_pair(
	'a', 'b',
	conf => lease_conf($store),
	plugins => 0,
	before_subscribe => sub {
		my @nodes = @_;
		if (!$nodes[0]->safe_psql('postgres',
				"SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'"))
		{
			note('this server has no output_plugin_libraries: nothing to list');
			return;
		}
		my ($state, $msg) = psql_error($nodes[0], 'postgres',
			"SELECT pg_create_logical_replication_slot('probe', 'pglogical_output')");
		is($state // 'created', '42501',
			'without output_plugin_libraries naming it, pglogical_output is refused as an output plugin');
		like($msg // '', qr/library "pglogical_output" may not be used as an output plugin/,
			'... with the message that names the library');
		for my $n (@nodes)
		{
			$n->safe_psql('postgres', "ALTER SYSTEM SET output_plugin_libraries = $plugins");
			$n->reload;
		}
		ok( poll_until(
				10,
				sub {
					!grep {
						$_->safe_psql('postgres', 'SHOW output_plugin_libraries') ne
						  'pgoutput, test_decoding, pglogical_output'
					} @nodes;
				}),
			'output_plugin_libraries names pglogical_output on both after a reload');
		is( $nodes[0]->psql('postgres',
				"SELECT pg_create_logical_replication_slot('probe', 'pglogical_output')"),
			0, 'then pglogical_output may be used');
		$nodes[0]->safe_psql('postgres', "SELECT pg_drop_replication_slot('probe')");
	});

my $slot_a = wait_for_lease($na);
my $slot_b = wait_for_lease($nb);
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b,
	'a and b lease slots of their own (' . ($slot_a // 'none') . ', ' . ($slot_b // 'none') . ')');

# the background workers each server runs (max_worker_processes covers them)
my @workers = background_workers($na);
note('a runs: ' . join(', ', @workers) . ' (max_worker_processes = '
	  . $na->safe_psql('postgres', 'SHOW max_worker_processes') . ')');
ok((grep { $_ eq 'cosid slot worker' } @workers), "a runs cosid's slot worker");
ok((grep { $_ eq 'pglogical apply' } @workers), "a runs pglogical's apply worker");

my ($load_s, $load_ok, @out) = load_both([ $na, $nb ], [ 'a', 'b' ]);
ok($load_ok, "a and b each inserted $rows rows into each table at once, in $tx x $clients statements")
  or diag(join("\n", @out));
my $t0 = time();
my $want = join('|', (2 * $rows) x @tables);
my $converged = poll_until(60, sub { counts($na) eq $want && counts($nb) eq $want }, 20);
my $converge_s = time() - $t0;
ok($converged, sprintf('both converged to %d rows a table, %.2f s after the loads ended (%.1f s)',
	2 * $rows, $converge_s, $load_s))
  or diag('a: ' . counts($na) . ', b: ' . counts($nb));
note(sprintf('leased: loads %.2f s, converged %.2f s after', $load_s, $converge_s));

for my $c (checks($na, $nb, 'a', 'b'))
{
	ok($c->[1], $c->[0]) or diag($c->[2]);
}
is( $na->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE origin = 'a' AND (cosid_unpack('orders', id)).node <> $slot_a)
		     + count(*) FILTER (WHERE origin = 'b' AND (cosid_unpack('orders', id)).node <> $slot_b)
		FROM orders}),
	'0', "orders: a's ids carry slot $slot_a, b's slot $slot_b");
$na->stop;
$nb->stop;
$store->stop;

# ---- the same manual slot on both: the checks above must catch it
my ($nc, $nd) = make_pair('c', 'd');
is( join(' ', map { $_->safe_psql('postgres', 'SELECT mode, slot FROM cosid_slot()') } ($nc, $nd)),
	'manual|0 manual|0', 'c and d both issue as manual slot 0');
($load_s, $load_ok, @out) = load_both([ $nc, $nd ], [ 'c', 'd' ]);
note("same slot: pgbench " . ($load_ok ? 'succeeded' : "failed:\n" . join("\n", @out)));
wait_applied($nc, $nd);
my %seen = map { $_->[0] => $_ } checks($nc, $nd, 'c', 'd');
my ($count_c, $count_d) = map { $_->safe_psql('postgres', 'SELECT count(*) FROM orders') } ($nc, $nd);
my ($conf_c, $conf_d) = map { log_count($_, $conflict_re) } ($nc, $nd);
note("same slot: orders: $seen{'orders: the same rows on c and d'}[2]; CONFLICT lines c: $conf_c, d: $conf_d");
ok($count_c < 2 * $rows, "orders: rows are lost ($count_c of " . 2 * $rows . ' on c)');
is($count_d, $count_c, 'orders: and yet the row counts are equal on both servers');
ok($conf_c > 0 && $conf_d > 0, "CONFLICT lines in both logs ($conf_c, $conf_d)");
# the checks the leased pair passes
ok(!$seen{"orders: $rows rows from each server on each, none lost"}[1],
	'the check "none lost" fails on orders');
ok(!$seen{'orders: the same rows on c and d'}[1],
	'the check "the same rows" fails on orders (each collision kept the other server\'s row)');
ok(!$seen{'no CONFLICT line in either log'}[1], 'the check "no CONFLICT line" fails');
ok( $seen{'events: the same rows on c and d'}[1]
	  && $seen{"events: $rows rows from each server on each, none lost"}[1],
	'events (gen_ulid_monotonic, no slot in it) passes them on c and d');
$nc->stop;
$nd->stop;

done_testing();
