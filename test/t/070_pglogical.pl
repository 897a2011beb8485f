# Active-active with pglogical.  Two servers replicate the same three tables
# both ways (pglogical, conflict resolution left at its default,
# apply_remote): orders keyed by cosid_next() (a snowflake generator whose
# sequence starts at 1 every millisecond), events
# by gen_ulid_monotonic(), tickets by cosid_next() of a segment generator.
# Both insert 40,000 rows into each table at once (pgbench, 2 clients, 20
# rows a statement; a statement that meets a duplicate key or 55000 is tried
# again with new ids, and the retries are counted).
#  leased   each server leases its slot from a lease store (a third server,
#           not a pglogical node), and tickets' generator is a shared one
#           ("distributor": "lease-store", its segments from that store): the
#           tables converge on both, 80,000 rows each, the same contents,
#           every orders row from its own server's slot, no duplicate key
#           met, and no CONFLICT line in either log.  Then 20,000 more
#           tickets per server at a steady pace while the store is stopped
#           for 2 s or more (until both servers logged a failed fetch):
#           every statement commits (from the reserve, or retried after
#           55000), and tickets converge again with none lost.
#  same     a fresh pair with the same manual slot (the default, slot 0) on
#           both, and a local segment generator for tickets (each server
#           counts 1, 2, 3, ... on its own): ids collide, pglogical turns each
#           colliding INSERT into an UPDATE (a CONFLICT line at LOG), and rows
#           are lost with the row counts equal on both servers; the same
#           checks that pass above fail there on orders and on tickets
#           (events, whose ids carry no slot, passes).
# Before the first subscription, a server that has output_plugin_libraries
# (15.19, 18.6 and later) is shown to refuse pglogical's output plugin until
# it is listed there.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use CosidTest;

my $missing = pglogical_missing();
plan skip_all => "pglogical is not installed for this PostgreSQL: $missing" if defined $missing;

my $rows = 40_000;    # per server and table
my $clients = 2;
my $batch = 20;
my $tx = $rows / ($clients * $batch);
my @tables = qw(orders events tickets);
my $namespace = 'app070';
# Every millisecond's sequence starts at 1 on both servers (the default
# carries it on across milliseconds, so that two servers with one slot
# collide only while their sequences happen to overlap, from none to
# thousands of ids a run): only the slot keeps their ids apart.
my $orders_def = '{"strategy": "snowflake", "seq-reset-threshold": 0}';
my $shared_def = '{"strategy": "segment", "distributor": "lease-store", "step": 100}';
my $local_def = '{"strategy": "segment"}';
# the store outage: more tickets per server, at this many statements a
# second per server, the store stopped once this many of them committed
my $more = 20_000;
my $more_rate = 250;
my $more_before_stop = 4_000;
my $conflict_re = qr/CONFLICT: remote (?:INSERT|UPDATE|DELETE)/;
# output_plugin_libraries is a list: ALTER SYSTEM takes its items as
# separate literals ('a, b' in one literal would be one library named so)
my $plugins = "'pgoutput', 'test_decoding', 'pglogical_output'";

# The load's statement: $k rows into one table.  A duplicate key (an id the
# other server's row already holds here, which only the pair with one slot
# meets) or 55000 (the lease store away and the reserve used up) rolls back
# that INSERT only, and it runs again with new ids (after 55000 20 ms later,
# up to timeout_s).  Retries are recorded with the rows, in schema load,
# which no replication set holds.
my $load_sql = q{
	CREATE SCHEMA load;
	CREATE TABLE load.retries (origin text NOT NULL, tbl text NOT NULL, sqlstate text NOT NULL, n int NOT NULL);
	CREATE FUNCTION load.insert_rows(tbl text, p_origin text, k int, timeout_s float8 DEFAULT 30) RETURNS void
	LANGUAGE plpgsql AS $f$
	DECLARE
		t0 timestamptz := clock_timestamp();
		dups int := 0;
		waits int := 0;
	BEGIN
		LOOP
			BEGIN
				CASE tbl
					WHEN 'orders' THEN
						INSERT INTO public.orders (origin, n) SELECT p_origin, g FROM generate_series(1, k) g;
					WHEN 'events' THEN
						INSERT INTO public.events (origin, n) SELECT p_origin, g FROM generate_series(1, k) g;
					WHEN 'tickets' THEN
						INSERT INTO public.tickets (origin, n) SELECT p_origin, g FROM generate_series(1, k) g;
				END CASE;
				EXIT;
			EXCEPTION
				WHEN unique_violation THEN
					dups := dups + 1;
					IF dups >= 10000 THEN
						RAISE;
					END IF;
				WHEN object_not_in_prerequisite_state THEN
					waits := waits + 1;
					IF clock_timestamp() - t0 > timeout_s * interval '1 second' THEN
						RAISE;
					END IF;
					PERFORM pg_sleep(0.02);
			END;
		END LOOP;
		IF dups > 0 THEN
			INSERT INTO load.retries VALUES (p_origin, tbl, '23505', dups);
		END IF;
		IF waits > 0 THEN
			INSERT INTO load.retries VALUES (p_origin, tbl, '55000', waits);
		END IF;
	END
	$f$;
};

# Definitions are not replicated: every server gets the extensions, the
# generators and the tables (tickets' generator as $ticket_def).
sub schema
{
	my ($ticket_def) = @_;
	return qq{
	CREATE EXTENSION cosid;
	CREATE EXTENSION pglogical;
	SELECT cosid_define('orders', '$orders_def');
	SELECT cosid_define('ticket_no', '$ticket_def');
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('orders'), origin text NOT NULL, n int NOT NULL);
	CREATE TABLE events (id ulid PRIMARY KEY DEFAULT gen_ulid_monotonic(), origin text NOT NULL, n int NOT NULL);
	CREATE TABLE tickets (id bigint PRIMARY KEY DEFAULT cosid_next('ticket_no'), origin text NOT NULL, n int NOT NULL);
	} . $load_sql;
}

# count | distinct ids | md5 of the ordered ids | md5 of the ordered rows |
# rows from each origin
sub table_state
{
	my ($node, $table, $x, $y) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*), count(DISTINCT id), md5(string_agg(id::text, ',' ORDER BY id)),
			md5(string_agg(id::text || ':' || origin || ':' || n, ',' ORDER BY id)),
			count(*) FILTER (WHERE origin = '$x'), count(*) FILTER (WHERE origin = '$y')
		FROM $table});
}

sub counts
{
	my ($node, @t) = @_;
	return $node->safe_psql('postgres', 'SELECT ' . join(', ', map { "(SELECT count(*) FROM $_)" } @t));
}

# Retries of the load's statements on the node (load.retries): of the
# SQLSTATE, into the table.
sub retries
{
	my ($node, $sqlstate, $table) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(n), 0) FROM load.retries WHERE sqlstate = '$sqlstate' AND tbl = '$table'");
}

# What both servers must show once the loads are applied, as a list of
# [name, passed, what was seen]: for each table the same rows on both,
# $per rows from each server on each and as many distinct ids, no local
# INSERT that met a duplicate key, and no CONFLICT line about it; and no
# CONFLICT line at all.  Passed by the leased pair; the pair with one slot
# must fail the orders and tickets checks.
sub checks
{
	my ($nx, $ny, $x, $y, $per, @t) = @_;
	my @r;
	my $all = 2 * $per;
	for my $t (@t)
	{
		my $sx = table_state($nx, $t, $x, $y);
		my $sy = table_state($ny, $t, $x, $y);
		push @r, [ "$t: the same rows on $x and $y", $sx eq $sy, "$x: $sx; $y: $sy" ];
		push @r,
		  [ "$t: $per rows from each server on each, $all distinct ids, none lost",
			(!grep { $_ !~ /^$all\|$all\|\w+\|\w+\|$per\|$per$/ } ($sx, $sy)),
			"$x: $sx; $y: $sy" ];
		my @d = map { retries($_, '23505', $t) } ($nx, $ny);
		push @r, [ "$t: no INSERT met a duplicate key", $d[0] + $d[1] == 0, "$x: $d[0], $y: $d[1]" ];
		my $re = qr/$conflict_re on relation public\.$t /;
		my @c = map { log_count($_, $re) } ($nx, $ny);
		push @r, [ "$t: no CONFLICT line about it", $c[0] + $c[1] == 0, "$x: $c[0], $y: $c[1]" ];
	}
	my @c = map { log_count($_, $conflict_re) } ($nx, $ny);
	push @r, [ 'no CONFLICT line in either log', $c[0] + $c[1] == 0, "$x: $c[0], $y: $c[1]" ];
	return @r;
}

# Two pglogical servers $x and $y subscribed to each other, with the schema
# (tickets' generator as ticket_def => ...).  The conf lines go to both;
# plugins => 0 leaves output_plugin_libraries out (probed and set by the
# caller before the subscriptions).
sub make_pair
{
	my ($x, $y, %opt) = @_;
	my @nodes = map { pglogical_node($_, conf => $opt{conf}, plugins => $opt{plugins}) } ($x, $y);
	$_->safe_psql('postgres', schema($opt{ticket_def})) for @nodes;
	$opt{before_subscribe}->(@nodes) if $opt{before_subscribe};
	pglogical_define_node($nodes[0], $x);
	pglogical_define_node($nodes[1], $y);
	ok(pglogical_subscribe($nodes[0], "${x}_from_$y", $nodes[1]), "$x subscribes to $y: replicating");
	ok(pglogical_subscribe($nodes[1], "${y}_from_$x", $nodes[0]), "$y subscribes to $x: replicating");
	return @nodes;
}

# The pgbench script of server $name: $batch rows into each of the tables.
sub script
{
	my ($name, @t) = @_;
	return join("\n", map { "SELECT load.insert_rows('$_', '$name', $batch);" } @t);
}

# Both servers insert $rows rows into each table at once: (seconds taken,
# whether both pgbench runs succeeded, their outputs).
sub load_both
{
	my ($nodes, $names) = @_;
	my $t0 = time();
	my @loads = map { start_load_tx($nodes->[$_], $clients, $tx, script($names->[$_], @tables)) } (0, 1);
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
# 60 s each.  Only the pair that shares a slot waits here, and there an apply
# worker may have stopped: pglogical looks for a conflicting row and then
# inserts, so a colliding row a local client inserted in between is not a
# conflict it resolves but a unique violation, the worker exits ("apply
# worker ... exiting with error") and pglogical starts it again only minutes
# later.  Once the loads are over no local insert races it: a worker that
# stopped so is started again (its subscription disabled and enabled) and
# resolves the rest as conflicts.  Returns how many workers stopped so.
sub wait_applied
{
	my (@nodes) = @_;
	my $stopped = 0;
	for my $n (@nodes)
	{
		for my $try (1 .. 3)
		{
			my ($rc, $out, $err) = $n->psql('postgres',
				"SET statement_timeout = '20s'; SELECT pglogical.wait_slot_confirm_lsn(NULL, NULL)");
			last if $rc == 0;
			die "pglogical.wait_slot_confirm_lsn on ${\$n->name}: $err" if $try == 3;
			my $exited = grep { log_count($_, qr/apply worker \[\d+\] at slot \d+ generation \d+ exiting with error/) } @nodes;
			die "${\$n->name}: a subscriber did not confirm in 20 s, and no apply worker stopped at an error: $err"
			  unless $exited;
			$stopped++;
			note("an apply worker stopped at an error (a local insert raced its conflict check): its subscription is restarted");
			$_->safe_psql('postgres',
				q{SELECT pglogical.alter_subscription_disable(sub_name, true), pglogical.alter_subscription_enable(sub_name, true)
				  FROM pglogical.subscription})
			  for @nodes;
		}
	}
	return $stopped;
}

# ---- leased slots, shared segments
my $store = lease_store('store');
my ($na, $nb) = make_pair(
	'a', 'b',
	conf => lease_conf($store, extra => ["cosid.namespace = '$namespace'"]),
	ticket_def => $shared_def,
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

# what is replicated: the three tables, nothing of schema cosid (the store,
# whose cosid.segment_counter hands out the segments, is no pglogical node)
for my $n ([ 'a', $na ], [ 'b', $nb ])
{
	is(pglogical_set_tables($n->[1]), 'default:public.events,default:public.orders,default:public.tickets',
		"$n->[0]: the replication set holds the three tables, nothing of schema cosid");
}
is( $na->safe_psql('postgres', q{SELECT distributor || ':' || (sequence IS NULL) FROM cosid.generators
		WHERE name = 'ticket_no'}),
	'lease-store:true', 'ticket_no takes its segments from the lease store (no sequence)');

my ($load_s, $load_ok, @out) = load_both([ $na, $nb ], [ 'a', 'b' ]);
ok($load_ok, "a and b each inserted $rows rows into each table at once, in $tx x $clients statements")
  or diag(join("\n", @out));
my $t0 = time();
my $want = join('|', (2 * $rows) x @tables);
my $converged = poll_until(60, sub { counts($na, @tables) eq $want && counts($nb, @tables) eq $want }, 20);
my $converge_s = time() - $t0;
ok($converged, sprintf('both converged to %d rows a table, %.2f s after the loads ended (%.1f s)',
	2 * $rows, $converge_s, $load_s))
  or diag('a: ' . counts($na, @tables) . ', b: ' . counts($nb, @tables));
note(sprintf('leased: loads %.2f s, converged %.2f s after', $load_s, $converge_s));

for my $c (checks($na, $nb, 'a', 'b', $rows, @tables))
{
	ok($c->[1], $c->[0]) or diag($c->[2]);
}
is( $na->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE origin = 'a' AND (cosid_unpack('orders', id)).node <> $slot_a)
		     + count(*) FILTER (WHERE origin = 'b' AND (cosid_unpack('orders', id)).node <> $slot_b)
		FROM orders}),
	'0', "orders: a's ids carry slot $slot_a, b's slot $slot_b");
my $max_ticket = $na->safe_psql('postgres', 'SELECT max(id) FROM tickets');
is( $store->safe_psql('postgres', qq{
		SELECT namespace || ':' || name || ':' || (last_number >= $max_ticket) FROM cosid.segment_counter}),
	"$namespace:ticket_no:true",
	"the store's one counter (namespace $namespace, ticket_no) is at or above every ticket id");
note('tickets: ids up to ' . $max_ticket . ' for ' . 2 * $rows . ' rows; the store: '
	  . $store->safe_psql('postgres', 'SELECT last_number || \' last, \' || fetches || \' fetches\' FROM cosid.segment_counter')
	  . '; 55000 retries a: ' . retries($na, '55000', 'orders') . ' orders, ' . retries($na, '55000', 'tickets')
	  . ' tickets; b: ' . retries($nb, '55000', 'orders') . ' orders, ' . retries($nb, '55000', 'tickets') . ' tickets');

# ---- more tickets while the store is away
my $fetch_failed_re = qr/cosid could not fetch segments of generator "ticket_no" from the lease store/;
my $fetch_again_re = qr/cosid fetches segments from the lease store again/;
my @nodes = ($na, $nb);
my @names = ('a', 'b');
my @failed_before = map { log_count($_, $fetch_failed_re) } @nodes;
my @again_before = map { log_count($_, $fetch_again_re) } @nodes;
my $more_tx = $more / ($clients * $batch);
my $own = sub { $nodes[ $_[0] ]->safe_psql('postgres', "SELECT count(*) FROM tickets WHERE origin = '$names[$_[0]]'") };
$t0 = time();
my @loads = map {
	start_pgbench($nodes[$_], script($names[$_], 'tickets'),
		'-c', $clients, '-j', $clients, '-t', $more_tx, '-R', $more_rate)
} (0, 1);
ok(poll_until(30, sub { !grep { $own->($_) < $rows + $more_before_stop } (0, 1) }, 20),
	"a and b each inserted $more_before_stop more tickets");
my $t_stop = time();
my @at_stop = map { $own->($_) } (0, 1);
$store->stop;
my $t_stopped = time();
# away for 2 s at least, and until both servers logged a failed fetch
my $failed = poll_until(20, sub {
	!grep { log_count($nodes[$_], $fetch_failed_re) == $failed_before[$_] } (0, 1)
});
usleep(1e6 * (2 - (time() - $t_stopped))) if time() - $t_stopped < 2;
my @at_start = map { $own->($_) } (0, 1);
$store->start;
my $t_started = time();
ok($failed, 'with the store stopped, a and b each logged a failed fetch of ticket_no');
my $more_ok = 1;
for my $i (0, 1)
{
	my ($ok, $done, $o) = finish_load($loads[$i]);
	$more_ok &&= $ok && $done == $more_tx * $clients;
	diag($o) unless $ok && $done == $more_tx * $clients;
}
my $more_s = time() - $t0;
ok($more_ok, "a and b each inserted $more more tickets, every statement committed");
ok(!(grep { log_count($nodes[$_], $fetch_again_re) == $again_before[$_] } (0, 1)),
	'both logged that they fetch from the store again');
note(sprintf('store outage: stopped %.2f s into the load (in %.2f s), away %.2f s; the load took %.2f s',
	$t_stop - $t0, $t_stopped - $t_stop, $t_started - $t_stop, $more_s));
for my $i (0, 1)
{
	note("$names[$i]: tickets committed while the store was away: " . ($at_start[$i] - $at_stop[$i])
		  . '; statements retried after 55000: ' . retries($nodes[$i], '55000', 'tickets')
		  . ' (all loads), ' . $nodes[$i]->safe_psql('postgres',
			q{SELECT issued || ' issued, ' || segment_fetches || ' fetches, ' || segment_waits || ' waits'
			  FROM cosid.generator_stats WHERE name = 'ticket_no'}));
}
$t0 = time();
my $want_more = 2 * ($rows + $more);
$converged = poll_until(60, sub { counts($na, 'tickets') == $want_more && counts($nb, 'tickets') == $want_more }, 20);
ok($converged, sprintf('tickets converged to %d rows on both, %.2f s after the load ended', $want_more, time() - $t0))
  or diag('a: ' . counts($na, 'tickets') . ', b: ' . counts($nb, 'tickets'));
for my $c (checks($na, $nb, 'a', 'b', $rows + $more, 'tickets'))
{
	ok($c->[1], "after the outage: $c->[0]") or diag($c->[2]);
}
$na->stop;
$nb->stop;
$store->stop;

# ---- the same manual slot, and local segments, on both: the checks above
# must catch it
my ($nc, $nd) = make_pair('c', 'd', ticket_def => $local_def);
is( join(' ', map { $_->safe_psql('postgres', 'SELECT mode, slot FROM cosid_slot()') } ($nc, $nd)),
	'manual|0 manual|0', 'c and d both issue as manual slot 0');
($load_s, $load_ok, @out) = load_both([ $nc, $nd ], [ 'c', 'd' ]);
ok($load_ok, "c and d each inserted $rows rows into each table (statements that met a duplicate key retried)")
  or diag(join("\n", @out));
wait_applied($nc, $nd);
my %seen = map { $_->[0] => $_ } checks($nc, $nd, 'c', 'd', $rows, @tables);
my $none_lost = "$rows rows from each server on each, " . 2 * $rows . ' distinct ids, none lost';
for my $t (qw(orders tickets))
{
	my ($count_c, $count_d) = map { $_->safe_psql('postgres', "SELECT count(*) FROM $t") } ($nc, $nd);
	note("same slot: $t: " . $seen{"$t: the same rows on c and d"}[2] . '; CONFLICT lines about it '
		  . $seen{"$t: no CONFLICT line about it"}[2] . '; INSERTs that met a duplicate key '
		  . $seen{"$t: no INSERT met a duplicate key"}[2]);
	ok($count_c < 2 * $rows, "$t: rows are lost ($count_c of " . 2 * $rows . ' on c)');
	is($count_d, $count_c, "$t: and yet the row counts are equal on both servers");
	# the checks the leased pair passes
	ok(!$seen{"$t: $none_lost"}[1], "$t: the check \"none lost\" fails");
	ok(!$seen{"$t: the same rows on c and d"}[1],
		"$t: the check \"the same rows\" fails (each collision kept the other server's row)");
	ok(!$seen{"$t: no CONFLICT line about it"}[1], "$t: the check \"no CONFLICT line about it\" fails");
}
my ($conf_c, $conf_d) = map { log_count($_, $conflict_re) } ($nc, $nd);
ok($conf_c > 0 && $conf_d > 0, "CONFLICT lines in both logs ($conf_c, $conf_d)");
ok(!$seen{'no CONFLICT line in either log'}[1], 'the check "no CONFLICT line" fails');
ok(!grep({ !$seen{$_}[1] } grep { /^events: / } keys %seen),
	'events (gen_ulid_monotonic, no slot in it) passes them on c and d')
  or diag(join('; ', map { "$_: $seen{$_}[2]" } grep { /^events: / } sort keys %seen));
$nc->stop;
$nd->stop;

done_testing();
