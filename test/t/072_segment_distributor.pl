# Segments shared across servers: three servers with the same definition of a
# segment generator with "distributor": "lease-store" take their segments from
# one lease store (cosid.segment_acquire, namespace ns072).
#
# - Load: 100k numbers per server at the same time (a procedure on each
#   server that inserts batches of 200, committing each, and retries 55000).
#   Mid-load the store is stopped for about 2 s and started again: every
#   server keeps issuing from its reserve for a while, then fails with 55000
#   naming the lease store and its last error, then issues again by itself.
# - A kill -9 of one server in the middle of a second load: after the
#   restart it issues only numbers above every number issued anywhere before
#   the crash (its lost reserve is a gap, never a repeat).
# - A hot standby of one server issues from the store too (no local WAL).
# - A store that does not answer: a fetch is cancelled by statement_timeout,
#   and without one gives up at its 5 s deadline with 55000.
# - Every number from every server goes into one table on the store: none is
#   there twice.  The control: the same definition without the distributor
#   (each server counts on its own) does give duplicates there, so the check
#   can fail.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use CosidTest;

my $per_server = 100_000;
my $def = '{"strategy": "segment", "distributor": "lease-store", "step": 100, "reserve": 10}';
my $control_def = '{"strategy": "segment", "step": 100}';

# ---- the store, with the role the servers connect as (the grants of docs/operations.md)
my $store = lease_store('store');
$store->safe_psql('postgres', q{
	CREATE ROLE cosid_segments LOGIN;
	GRANT USAGE ON SCHEMA cosid TO cosid_segments;
	GRANT EXECUTE ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO cosid_segments;
	CREATE TABLE all_ids (server text, gen text, phase int, id bigint, at timestamptz);
});
my $connstr = 'host=' . $store->host . ' port=' . $store->port . ' dbname=postgres user=cosid_segments';

# ---- three servers (manual slots: the segments need no lease), one definition
my $load_sql = q{
CREATE TABLE ids (gen text NOT NULL, phase int NOT NULL, id bigint NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE load_log (phase int PRIMARY KEY, inserted int, failures int, messages text,
	first_detail text, first_error_at timestamptz, last_error_at timestamptz);
-- n numbers of gen in batches, one transaction each; 55000 is counted and
-- retried every 20 ms (giving up after timeout_s), paced by pause_s
CREATE PROCEDURE load(gen text, ph int, n int, batch int DEFAULT 200, pause_s float8 DEFAULT 0.005,
	timeout_s float8 DEFAULT 60)
LANGUAGE plpgsql AS $load$
DECLARE
	done int := 0;
	fails int := 0;
	failed bool;
	m text;
	d text;
	t0 timestamptz := clock_timestamp();
BEGIN
	INSERT INTO load_log VALUES (ph, 0, 0, '', NULL, NULL, NULL);
	COMMIT;
	WHILE done < n LOOP
		failed := false;
		BEGIN
			INSERT INTO ids (gen, phase, id)
			SELECT gen, ph, g FROM cosid_next_many(gen, least(batch, n - done)) g;
			done := done + least(batch, n - done);
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
			failed := true;
			fails := fails + 1;
			m := regexp_replace(m, '[0-9]+', 'N', 'g');
			UPDATE load_log SET failures = fails,
				messages = CASE WHEN position(m IN messages) = 0 THEN messages || m || ';' ELSE messages END,
				first_detail = coalesce(first_detail, d),
				first_error_at = coalesce(first_error_at, clock_timestamp()),
				last_error_at = clock_timestamp()
			WHERE phase = ph;
		END;
		UPDATE load_log SET inserted = done WHERE phase = ph;
		COMMIT;
		EXIT WHEN failed AND extract(epoch FROM clock_timestamp() - t0) > timeout_s;
		PERFORM pg_sleep(CASE WHEN failed THEN 0.02 ELSE pause_s END);
	END LOOP;
END
$load$;
};
my @servers;
for my $i (1 .. 3)
{
	my $s = cosid_node("s$i",
		init => { allows_streaming => $i == 1 ? 1 : 0 },
		conf => [ "cosid.lease_store = '$connstr'", "cosid.namespace = 'ns072'" ]);
	$s->safe_psql('postgres', "CREATE EXTENSION cosid;
		SELECT cosid_define('ticket', '$def');
		SELECT cosid_define('local_ticket', '$control_def');
		$load_sql");
	push @servers, $s;
}
my ($s1, $s2, $s3) = @servers;

is( $s1->safe_psql('postgres', q{
		SELECT name || ':' || distributor || ':' || (sequence IS NULL) FROM cosid.generators ORDER BY name}),
	"local_ticket:local:false\nticket:lease-store:true",
	'cosid.generators: ticket is distributed by the lease store, with no sequence; local_ticket has one');

# the numbers of a server's table into the store's all_ids (COPY through a pipe)
sub collect
{
	my ($node, $name, $where) = @_;
	my $err = '';
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
			'-d', 'postgres', '-c',
			"COPY (SELECT '$name', gen, phase, id, at FROM ids WHERE $where) TO STDOUT"
		],
		'|',
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $store->host, '-p', $store->port,
			'-d', 'postgres', '-c', 'COPY all_ids FROM STDIN'
		],
		'2>', \$err) or die "could not collect the numbers of $name: $err";
}

# start a load in the background: a handle for IPC::Run
sub start_phase
{
	my ($node, $gen, $phase, $n) = @_;
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[
			'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-h', $node->host, '-p', $node->port,
			'-d', 'postgres', '-c', "CALL load('$gen', $phase, $n)"
		],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

sub log_row
{
	my ($node, $phase) = @_;
	my $r = $node->safe_psql('postgres', qq{
		SELECT coalesce(inserted, 0), coalesce(failures, 0), coalesce(messages, ''), coalesce(first_detail, ''),
			   coalesce((extract(epoch FROM first_error_at) * 1000)::bigint, 0)
		FROM load_log WHERE phase = $phase});
	my %h;
	@h{qw(inserted failures messages detail first_error_ms)} = split /\|/, $r, 5;
	$h{$_} //= 0 for qw(inserted failures first_error_ms);
	return \%h;
}

# ---- phase 1: 3 x 100k at once, the store stopped and started mid-load
my $t_begin = now_ms();
my @runs = map { start_phase($_, 'ticket', 1, $per_server) } @servers;
ok(poll_until(60, sub { !grep { log_row($_, 1)->{inserted} < 20_000 } @servers }),
	'every server issued 20k numbers from the store');
my $t_stop = now_ms();
$store->stop;
my $t_stopped = now_ms();
note('the store stopped ' . ($t_stopped - $t_begin) . ' ms into the load, in ' . ($t_stopped - $t_stop) . ' ms');
ok(poll_until(30, sub { !grep { log_row($_, 1)->{failures} == 0 } @servers }),
	'with the store away, every server comes to fail (its reserve used up)');
usleep(1000 * (2000 - (now_ms() - $t_stopped))) if now_ms() - $t_stopped < 2000;
$store->start;
my $t_started = now_ms();
note('the store was away for ' . ($t_started - $t_stop) . ' ms');
for my $i (0 .. 2)
{
	ok($runs[$i]{run}->finish, 's' . ($i + 1) . ': its load ended without an error')
	  or diag($runs[$i]{err});
}
my $t_end = now_ms();
note('phase 1 took ' . ($t_end - $t_begin) . ' ms');

for my $i (0 .. 2)
{
	my $s = $servers[$i];
	my $n = 's' . ($i + 1);
	my $l = log_row($s, 1);
	is($l->{inserted}, $per_server, "$n: issued and inserted $per_server numbers");
	cmp_ok($l->{failures}, '>', 0, "$n: some batches failed with 55000 while the store was away");
	is($l->{messages}, 'segment generator "ticket" has used up its reserve and the lease store does not answer;',
		"$n: the 55000 message names the generator, its reserve and the lease store");
	like($l->{detail}, qr/^Last error: .*lease store/, "$n: the detail gives the store's last error")
	  or diag($l->{detail});
	# the server logs its first failed fetch: numbers issued after it came
	# from the reserve (the next fetch that worked came after the restart)
	my $log = slurp_file($s->logfile);
	my ($fail_at) = $log =~
	  /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+) \[\d+\] [^\n]*?LOG:  cosid could not fetch segments of generator "ticket" from the lease store/m;
	ok(defined $fail_at, "$n: the server log has its first failed fetch from the store")
	  or BAIL_OUT('no failed fetch in the log of ' . $n);
	like($log, qr/LOG:  cosid fetches segments from the lease store again/,
		"$n: and that it fetches again after the restart");
	my ($during, $after, $first_after_ms, $fail_ms) = split /\|/, $s->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE at > '$fail_at'::timestamptz AND at < to_timestamp($t_started / 1000.0)),
			   count(*) FILTER (WHERE at > to_timestamp($t_started / 1000.0)),
			   coalesce((extract(epoch FROM min(at) FILTER (WHERE at > to_timestamp($t_started / 1000.0))) * 1000)::bigint, 0),
			   (extract(epoch FROM '$fail_at'::timestamptz) * 1000)::bigint
		FROM ids WHERE phase = 1});
	cmp_ok($fail_ms, '>=', $t_stop - 1, "$n: its first failed fetch came after the store was stopped");
	cmp_ok($during, '>', 0, "$n: after its first failed fetch it went on issuing from its reserve ($during numbers)");
	cmp_ok($l->{first_error_ms}, '>=', $fail_ms, "$n: and failed with 55000 only after that");
	cmp_ok($after, '>', 0, "$n: it issued again after the store was started ($after numbers)");
	note("$n: " . ($first_after_ms - $t_started) . " ms from the store's start to its first number; "
		  . "first failed fetch " . ($fail_ms - $t_stop) . " ms and first 55000 " . ($l->{first_error_ms} - $t_stop)
		  . " ms after the stop began; $during numbers from the reserve; $l->{failures} failed batches");
	cmp_ok($first_after_ms - $t_started, '<', 10_000, "$n: within a few seconds of the store's start");
	like( $s->safe_psql('postgres', q{SELECT issued || '|' || (segment_fetches > 0) FROM cosid.generator_stats WHERE name = 'ticket'}),
		qr/^\d+\|true$/, "$n: cosid.generator_stats counts fetches of ticket");
}

# ---- a hot standby of s1 issues from the store too
my $standby = standby_of($s1, 's1_standby');
$s1->wait_for_catchup($standby);
my $sb = $standby->safe_psql('postgres',
	q{SELECT count(*) || '|' || count(DISTINCT g) FROM (SELECT cosid_next_many('ticket', 5000) g) x});
is($sb, '5000|5000', 'the hot standby issues 5000 numbers of ticket (from the store, no WAL)');
my ($sb_state, $sb_msg) = psql_error($standby, 'postgres', q{SELECT cosid_next('local_ticket')});
is($sb_state, '25006', 'while the local generator cannot issue there (25006: its sequence needs writing)')
  or diag($sb_msg);
{
	my $err = '';
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $standby->host, '-p', $standby->port,
			'-d', 'postgres', '-c',
			q{COPY (SELECT 's1_standby', 'ticket', 9, g, clock_timestamp() FROM cosid_next_many('ticket', 5000) g) TO STDOUT}
		],
		'|',
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', $store->host, '-p', $store->port,
			'-d', 'postgres', '-c', 'COPY all_ids FROM STDIN'
		],
		'2>', \$err) or die "could not collect the standby's numbers: $err";
}
$standby->stop;

# ---- phase 2: a kill -9 of s2 in the middle of a load
@runs = map { start_phase($_, 'ticket', 2, 20_000) } @servers;
ok(poll_until(60, sub { log_row($s2, 2)->{inserted} >= 5000 }), 's2 issued 5000 numbers of phase 2');
my $t_kill = now_ms();
crash_restart($s2);
ok(!$runs[1]{run}->finish, "s2's load was cut by the crash");
my $s2_before = $s2->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 2');
note("s2 committed $s2_before numbers of phase 2 before the crash");
$s2->safe_psql('postgres', "CALL load('ticket', 3, 10000)");
is($s2->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 3'), '10000',
	's2 issued 10000 numbers after the restart');
for my $i (0, 2)
{
	ok($runs[$i]{run}->finish, 's' . ($i + 1) . ': its phase 2 load ended without an error')
	  or diag($runs[$i]{err});
	is(log_row($servers[$i], 2)->{inserted}, 20_000, 's' . ($i + 1) . ': 20000 numbers in phase 2');
}

# ---- the control: each server counting on its own repeats numbers
$_->safe_psql('postgres',
	q{INSERT INTO ids (gen, phase, id) SELECT 'local_ticket', 10, g FROM cosid_next_many('local_ticket', 10000) g})
  for @servers;

# ---- every number in one table
collect($servers[$_], 's' . ($_ + 1), 'true') for 0 .. 2;
my $r = $store->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE phase = 1), count(*) FILTER (WHERE phase = 9)
	FROM all_ids WHERE gen = 'ticket'});
my $total = 3 * $per_server + 20_000 * 2 + $s2_before + 10_000 + 5000;
is($r, "$total|$total|" . (3 * $per_server) . '|5000',
	'ticket: every number of the three servers and the standby (phases 1-3) is in all_ids, none twice');
note("ticket: all_ids holds $r (numbers, distinct, phase 1, standby)");
is( $store->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT id FROM all_ids WHERE gen = 'ticket' GROUP BY id HAVING count(*) > 1) d}),
	'0', 'no number of ticket was handed out twice');
is( $store->safe_psql('postgres', q{
		SELECT string_agg(server || ':' || n, ',' ORDER BY server)
		FROM (SELECT server, count(*) AS n FROM all_ids WHERE gen = 'ticket' AND phase = 1 GROUP BY server) x}),
	"s1:$per_server,s2:$per_server,s3:$per_server", "phase 1: $per_server numbers from each server");
is( $store->safe_psql('postgres', qq{
		SELECT (SELECT min(id) FROM all_ids WHERE server = 's2' AND phase = 3)
			 > (SELECT max(id) FROM all_ids WHERE gen = 'ticket' AND at < to_timestamp($t_kill / 1000.0))}),
	't', 'after its crash, s2 issues above every number issued anywhere before the crash');
like( $store->safe_psql('postgres', q{
		SELECT namespace || '|' || name || '|' || (last_number >= (SELECT max(id) FROM all_ids WHERE gen = 'ticket'))
			|| '|' || fetches FROM cosid.segment_counter}),
	qr/^ns072\|ticket\|true\|\d+$/,
	'the store has one counter, of namespace ns072 and generator ticket, at or above every number issued');
my $dups = $store->safe_psql('postgres', q{
	SELECT count(*) - count(DISTINCT id) FROM all_ids WHERE gen = 'local_ticket'});
is($dups, '20000',
	'the control: without the distributor the three servers each count 1..10000, so 20000 numbers repeat');

# ---- a store that does not answer (its postmaster stopped with SIGSTOP: new
# connections hang): a fetch is cancelled by statement_timeout at once, and
# without one it gives up at its 5 s deadline with 55000
$s1->safe_psql('postgres', qq{SELECT cosid_define('fresh', '$def')});
kill('STOP', $store->{_pid}) or die "could not stop the store's postmaster: $!";
my $t0 = now_ms();
my ($c_state, $c_msg) = psql_error($s1, 'postgres', q{SET statement_timeout = '300ms'; SELECT cosid_next('fresh')});
my $cancel_ms = now_ms() - $t0;
is($c_state, '57014', 'a fetch from a store that does not answer is cancelled by statement_timeout')
  or diag($c_msg);
cmp_ok($cancel_ms, '<', 2000, "at once ($cancel_ms ms)");
$t0 = now_ms();
my ($d_state, $d_msg, $d_err) = psql_error($s1, 'postgres', q{SELECT cosid_next('fresh')});
my $deadline_ms = now_ms() - $t0;
is($d_state, '55000', 'without a timeout the fetch gives up at its deadline: 55000') or diag($d_err);
like($d_err, qr/DETAIL:  Last error: .*lease store did not answer within 5000 ms/,
	'naming the deadline in the detail');
cmp_ok($deadline_ms, '>=', 4500, "after about 5 s ($deadline_ms ms), not before");
cmp_ok($deadline_ms, '<', 9000, 'and not much after');
kill('CONT', $store->{_pid});
my $fresh;
ok(poll_until(15, sub { ($fresh) = psql_error($s1, 'postgres', q{SELECT cosid_next('fresh')}); !defined $fresh }, 200),
	'with the store answering again, the generator issues');

$_->stop for @servers;
$store->stop;
done_testing();
