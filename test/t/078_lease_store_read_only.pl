# A lease store fenced read-only, then failed over, with no restart: the
# server's connections must move to the new primary.
#
# Store A (primary) and B (its synchronous standby); a lease-mode server S
# whose cosid.lease_store lists both with target_session_attrs=read-write,
# with a segment generator whose segments come from the store (step 10,
# reserve 2: a fetch every few numbers).  One session of S draws numbers
# all along (a pooled connection: its backend keeps its store connection).
# A is fenced the way an operator (or a manager) stops writes without
# dropping connections: default_transaction_read_only = on and a reload;
# B is promoted.  A stays up, and the connections to it stay open: every
# statement there is refused with 25006 (read-only transaction).
#
# The slot worker and the fetching backend must then drop that connection
# and connect again (libpq skips the read-only A and finds B): S renews its
# lease on B and its session draws numbers from B.  Before the fix both kept
# the connection to A, whose 25006 they took for an error to retry: the
# lease was never renewed on B (S answered 55000 for good) and the session
# never got a number again.  About 10 s.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;

my $a = cosid_node('store_a', preload => 0, init => { allows_streaming => 1 });
$a->safe_psql('postgres', 'CREATE EXTENSION cosid');
my $b = standby_of($a, 'store_b');
$a->append_conf('postgresql.conf', "synchronous_standby_names = '*'");
$a->reload;
ok($a->poll_query_until('postgres', "SELECT sync_state = 'sync' FROM pg_stat_replication"),
	'B is the synchronous standby of A');

my $conninfo = 'host=' . $a->host . ',' . $b->host . ' port=' . $a->port . ',' . $b->port
  . ' dbname=postgres target_session_attrs=read-write connect_timeout=2';
my $s = cosid_node('server', conf => [ "cosid.slot = 'lease'", "cosid.lease_store = '$conninfo'", 'cosid.lease_ttl = 30' ]);
$s->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	SELECT cosid_define('inv', '{"strategy":"segment","distributor":"lease-store","step":10,"reserve":2}');
	-- draws numbers until it drew n after its first 55000 (or timeout_s):
	-- numbers drawn before, 55000 errors, numbers drawn after, the last error
	CREATE FUNCTION draw(n int, timeout_s float8, OUT before int, OUT errors int, OUT after int, OUT last_error text)
	LANGUAGE plpgsql AS $f$
	DECLARE
		t0 timestamptz := clock_timestamp();
	BEGIN
		before := 0; errors := 0; after := 0;
		WHILE after < n AND clock_timestamp() - t0 < make_interval(secs => timeout_s) LOOP
			BEGIN
				PERFORM cosid_next('inv');
				IF errors = 0 THEN before := before + 1; ELSE after := after + 1; END IF;
				PERFORM pg_sleep(0.002);
			EXCEPTION WHEN object_not_in_prerequisite_state THEN
				GET STACKED DIAGNOSTICS last_error = MESSAGE_TEXT;
				errors := errors + 1;
				PERFORM pg_sleep(0.05);
			END;
		END LOOP;
	END
	$f$;
});
my $slot = wait_for_lease($s);
ok(defined $slot, 'S leases slot ' . ($slot // 'none') . ' from A');

# the session that draws numbers all along
my ($out, $err) = ('', '');
my $draw = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-h', $s->host, '-p', $s->port, '-d', 'postgres',
	  '-c', 'SELECT before, errors, after, last_error FROM draw(200, 25)' ],
	'>', \$out, '2>', \$err);
ok(poll_until(10, sub { $a->safe_psql('postgres', "SELECT coalesce(sum(fetches), 0) FROM cosid.segment_counter") > 3 }),
	'the session draws numbers from A');

# fence A, promote B
$a->safe_psql('postgres', 'ALTER SYSTEM SET default_transaction_read_only = on; SELECT pg_reload_conf()');
ok( poll_until(10, sub { $a->safe_psql('postgres', 'SHOW default_transaction_read_only') eq 'on' }),
	'A is read-only');
sleep(1);
$a->wait_for_catchup($b);
my $promoted_at = $b->safe_psql('postgres', 'SELECT clock_timestamp()');
$b->promote;

ok( poll_until(15, sub {
			$b->safe_psql('postgres',
				"SELECT count(*) FROM cosid.lease WHERE slot = $slot AND renewed_at > '$promoted_at'") eq '1';
		}),
	'S renews its lease on B, the new primary');
ok( poll_until(10, sub {
			$s->safe_psql('postgres', 'SELECT state, store_connected, last_renewal > now() - interval \'2 s\' FROM cosid_slot()')
			  eq 'active|t|t';
		}),
	'S is connected, its lease active and just renewed');
my ($state, $msg) = psql_error($s, 'postgres', "SELECT cosid_next('g')");
is($state, undef, 'S issues time-based ids') or diag("$state: $msg");

$draw->finish;
my ($before, $errors, $after, $last) = split /\|/, $out, 4;
note("the session drew $before numbers from A, got $errors errors (last: " . ($last // '') . "), then $after numbers");
ok($errors > 0, 'the session got 55000 while there was no writable store');
is($after, 200, 'then, in the same session, it drew 200 numbers from B') or diag($err);
is( $b->safe_psql('postgres', q{SELECT last_number > 0 AND fetches > 0 FROM cosid.segment_counter WHERE name = 'inv'}),
	't', 'the counter on B went on');

$s->stop;
$a->stop;
$b->stop;
done_testing();
