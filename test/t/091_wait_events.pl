# Waits a DBA can see: a session held in each of cosid's waits shows its wait
# event in pg_stat_activity (wait_event_type Extension): on PostgreSQL 17 and
# later the event of that wait (CosidSequenceExhausted, ...), on 15 and 16 the
# generic event Extension (docs/operations.md, "Wait events").
#
# - CosidSequenceExhausted: a generator with one id per second (unit s, one
#   sequence bit), asked for many ids in one statement.
# - CosidClockBehind: the clock set back 50 s (libfaketime) after an id,
#   with a generator that waits up to 60 s for it.
# - CosidWindow: the slot worker stopped (SIGSTOP) until the window ended;
#   a call waits (2 s) for it to extend the window.
# - CosidLeaseStore and CosidSegmentFetch: the lease store stopped (SIGSTOP
#   of its postmaster, so a connection hangs): the first call of a segment
#   generator with "distributor": "lease-store" waits for the store, a
#   second call waits for the first one's fetch.
# - CosidCitusReaderMain: the Citus group reader (cosid.slot = 'citus')
#   between its readings; with Citus when it is built, else without it (the
#   reader reads, finds no Citus, and waits just the same).
# - pg_wait_events (17 and later) lists all eight of cosid's events, which
#   the postmaster registered at start (also those of the slot worker, which
#   holds no database connection, so that pg_stat_activity does not list
#   it).
#
# Each check polls pg_stat_activity for one session and one event name, so a
# wait that reported another event (or none) fails it; a control checks that
# a session in one wait is not seen in another.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;
use CitusTest;

my $store = lease_store('store');
my $connstr = 'host=' . $store->host . ' port=' . $store->port . ' dbname=postgres';

my $faked = defined faketime_lib();
my $node = cosid_node('waits', no_start => 1,
	conf => [ "cosid.lease_store = '$connstr'", "cosid.namespace = 'ns091'",
		'restart_after_crash = on' ]);
my $offset_file = $node->basedir . '/faketime.rc';
if ($faked)
{
	set_fake_offset($offset_file, '+0');
	start_faked($node, offset_file => $offset_file);
}
else
{
	$node->start;
}

# named events from 17 on; the generic Extension before
my ($major) = $node->pg_version =~ /^(\d+)/;
my $named = $major >= 17;
sub expected { return $named ? $_[0] : 'Extension'; }
note($named
	  ? "PostgreSQL $major: each wait has its own event"
	  : "PostgreSQL $major: every wait shows as the generic event Extension");

# wait_seen(who, event, timeout_s): 'seen' once the process whose
# application_name or backend_type is who waits on the Extension event named
# event, polling every 5 ms; else what it was seen waiting on
my $wait_seen_sql = q{
CREATE FUNCTION wait_seen(who text, ev text, timeout_s float8) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
	t0 timestamptz := clock_timestamp();
	saw text[] := '{}';
	w text;
BEGIN
	LOOP
		PERFORM pg_stat_clear_snapshot();
		FOR w IN SELECT coalesce(wait_event_type || '/' || wait_event, 'none') FROM pg_stat_activity
				WHERE application_name = who OR backend_type = who
		LOOP
			IF w = 'Extension/' || ev THEN
				RETURN 'seen';
			END IF;
			IF NOT w = ANY (saw) THEN
				saw := saw || w;
			END IF;
		END LOOP;
		EXIT WHEN clock_timestamp() - t0 > timeout_s * interval '1 second';
		PERFORM pg_sleep(0.005);
	END LOOP;
	RETURN 'not seen; it waited on: ' || coalesce(array_to_string(saw, ', '), '') ||
		CASE WHEN cardinality(saw) = 0 THEN '(no such process)' ELSE '' END;
END
$f$;
};

$node->safe_psql('postgres', qq{
	CREATE EXTENSION cosid;
	SELECT cosid_define('one_per_second', '{"strategy":"snowflake","unit":"s","seq-bits":1}');
	SELECT cosid_define('patient', '{"strategy":"snowflake",
		"clock-regression":{"borrow-up-to":"1ms","wait-up-to":"60s"}}');
	SELECT cosid_define('plain', '{"strategy":"snowflake"}');
	SELECT cosid_define('shared', '{"strategy":"segment","distributor":"lease-store","step":100}');
	$wait_seen_sql
});

# psql running $sql on $n in the background, as application $app
sub start_session
{
	my ($n, $app, $sql) = @_;
	my %h = (out => '', err => '');
	local $ENV{PGAPPNAME} = $app;
	$h{run} = IPC::Run::start(
		[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-h', $n->host, '-p', $n->port,
		  '-d', 'postgres', '-c', $sql ],
		'<', \undef, '>', \$h{out}, '2>', \$h{err});
	return \%h;
}

# Wait for the session to end: (its stdout, its stderr), both chomped.
sub finish_session
{
	my ($h) = @_;
	$h->{run}->finish;
	chomp(my $out = $h->{out});
	chomp(my $err = $h->{err});
	return ($out, $err);
}

sub seen
{
	my ($n, $who, $event, $timeout) = @_;
	return $n->safe_psql('postgres', "SELECT wait_seen('$who', '$event', $timeout)");
}

# Cancel the statement of application $app.
sub cancel
{
	my ($n, $app) = @_;
	return $n->safe_psql('postgres',
		"SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE application_name = '$app'");
}

# ---- sequence exhaustion: one id per second, 600 asked for
{
	my $s = start_session($node, 'w_seq',
		"SELECT count(cosid_next('one_per_second')) FROM generate_series(1, 600)");
	is(seen($node, 'w_seq', expected('CosidSequenceExhausted'), 10), 'seen',
		'a call that used up its unit\'s sequence waits on ' . expected('CosidSequenceExhausted'));
	if ($named)
	{
		# the control: the same session is not seen in another wait
		like(seen($node, 'w_seq', 'CosidClockBehind', 0.5), qr/^not seen; it waited on: .*Extension\/CosidSequenceExhausted/,
			'control: while it waits for the next unit it is not seen waiting on CosidClockBehind');
	}
	is(cancel($node, 'w_seq'), '1', 'the waiting call is cancelled');
	my ($out, $err) = finish_session($s);
	like($err, qr/canceling statement due to user request/, 'the wait ends at the cancel')
	  or diag("stdout: $out");
}

# ---- the clock behind: back 50 s after an id of a generator that waits up to 60 s
SKIP:
{
	skip 'libfaketime is not installed: the clock cannot be set back', 2 unless $faked;
	$node->safe_psql('postgres', "SELECT cosid_next('patient')");
	set_fake_offset($offset_file, '-50');
	my $s = start_session($node, 'w_clock', "SELECT cosid_next('patient')");
	is(seen($node, 'w_clock', expected('CosidClockBehind'), 10), 'seen',
		'a call with the clock behind its last id waits on ' . expected('CosidClockBehind'));
	cancel($node, 'w_clock');
	my ($out, $err) = finish_session($s);
	set_fake_offset($offset_file, '+0');
	like($err, qr/canceling statement due to user request/, 'it waited until cancelled')
	  or diag("stdout: $out");
}

# ---- the window: the slot worker stopped until the window ended
{
	my $worker;
	for my $pid (child_pids($node->{_pid}))
	{
		open(my $fh, '<', "/proc/$pid/cmdline") or next;
		my $title = do { local $/; <$fh> } // '';
		close($fh);
		$worker = $pid if $title =~ /^postgres: (?:[^:]*: )?cosid slot worker/;
	}
	ok(defined $worker, 'the slot worker runs') or BAIL_OUT('no slot worker');
	# an id first: the window is open
	$node->safe_psql('postgres', "SELECT cosid_next('plain')");
	kill('STOP', $worker) or die "could not stop the slot worker: $!";
	ok( poll_until(10, sub {
				$node->safe_psql('postgres', 'SELECT window_end < clock_timestamp() FROM cosid_slot()') eq 't';
			}, 50),
		'with the slot worker stopped, the window ends');
	# a call waits 2 s for the worker, then fails: on a slow machine, try again
	my ($s, $r);
	for my $try (1 .. 3)
	{
		$s = start_session($node, 'w_window', "SELECT cosid_next('plain')");
		$r = seen($node, 'w_window', expected('CosidWindow'), 2.5);
		last if $r eq 'seen';
		my ($out, $err) = finish_session($s);
		note("try $try: $r; the call ended with: $out$err");
		$s = undef;
	}
	kill('CONT', $worker);
	is($r, 'seen', 'a call past the window\'s end waits on ' . expected('CosidWindow'));
	if (defined $s)
	{
		my ($out, $err) = finish_session($s);
		ok($out =~ /^\d+$/ || $err =~ /window/, 'the call ends: an id once the worker runs again, or 55000')
		  or diag("stdout: $out, stderr: $err");
		note("after the worker went on: " . ($out ne '' ? "id $out" : $err));
	}
	else
	{
		fail('the call ends once the worker runs again: it was never seen waiting');
	}
}

# ---- the lease store stopped: the first fetch waits for it, the second for the first
{
	kill('STOP', $store->{_pid}) or die "could not stop the store's postmaster: $!";
	my $a = start_session($node, 'w_store', "SELECT cosid_next('shared')");
	my $ra = seen($node, 'w_store', expected('CosidLeaseStore'), 3);
	my $b = start_session($node, 'w_fetch', "SELECT cosid_next('shared')");
	my $rb = seen($node, 'w_fetch', expected('CosidSegmentFetch'), 1.5);
	kill('CONT', $store->{_pid});
	is($ra, 'seen', 'a segment fetch from a lease store that does not answer waits on '
		  . expected('CosidLeaseStore'));
	is($rb, 'seen', 'a call waiting for that fetch waits on ' . expected('CosidSegmentFetch'));
	my ($out_a, $err_a) = finish_session($a);
	my ($out_b, $err_b) = finish_session($b);
	ok($out_a =~ /^\d+$/ && $out_b =~ /^\d+$/ && $out_a != $out_b,
		'with the store answering again both calls get a number, not the same')
	  or diag("first: $out_a $err_a; second: $out_b $err_b");
}

# ---- the Citus group reader between its readings
{
	my $why = citus_missing();
	my $citus = !defined $why;
	my $c = cosid_node('citus_reader', no_start => 1,
		conf => [ "cosid.slot = 'citus'", "cosid.citus_database = 'postgres'" ]);
	$c->append_conf('postgresql.conf', "shared_preload_libraries = 'citus,cosid'") if $citus;
	$c->start;
	$c->safe_psql('postgres', 'CREATE EXTENSION citus') if $citus;
	$c->safe_psql('postgres', "CREATE EXTENSION cosid; $wait_seen_sql");
	note($citus ? 'the reader reads Citus\'s group id'
		  : "without Citus ($why): the reader finds no Citus and waits all the same");
	is(seen($c, 'cosid citus group reader', expected('CosidCitusReaderMain'), 10), 'seen',
		'the Citus group reader waits between readings on ' . expected('CosidCitusReaderMain')
		  . ($citus ? ' (with Citus)' : ' (without Citus)'));
	$c->stop;
}

# ---- the events registered (17 and later: pg_wait_events)
SKIP:
{
	skip "PostgreSQL $major has no named events of extensions (pg_wait_events is 17's)", 1 unless $named;
	is( $node->safe_psql('postgres', q{
			SELECT string_agg(name, ' ' ORDER BY name) FROM pg_wait_events
			WHERE type = 'Extension' AND name LIKE 'Cosid%'}),
		join(' ', sort qw(CosidWindow CosidClockBehind CosidSequenceExhausted CosidSegmentFetch
			  CosidLeaseStore CosidCitusReaderMain CosidSlotWorkerMain CosidRecoveryEnd)),
		'pg_wait_events lists the eight events of cosid, registered at start');
}

# ---- a backend crashes: the postmaster makes the shared memory, and the events, anew
{
	my $v = start_session($node, 'w_crash', 'SELECT pg_sleep(60)');
	my $vpid;
	poll_until(10, sub {
			$vpid = $node->safe_psql('postgres', "SELECT pid FROM pg_stat_activity WHERE application_name = 'w_crash'");
			$vpid ne '';
		}, 20);
	kill('KILL', $vpid) or die "could not kill backend $vpid: $!";
	finish_session($v);
	ok( poll_until(30, sub {
				# (psql may find the server gone, or still in recovery)
				my ($ret, $out) = eval { $node->psql('postgres', 'SELECT 1') };
				defined $ret && $ret == 0 && $out eq '1';
			}, 200),
		'after a backend was killed the server runs again');
	# the window starts where the one before the crash ended (up to 1 s on),
	# and a unit of a second must start inside it
	ok( poll_until(10, sub {
				my ($ret) = $node->psql('postgres', "SELECT cosid_next('one_per_second')");
				$ret == 0;
			}, 200),
		'and issues ids again');
	my $s = start_session($node, 'w_seq2',
		"SELECT count(cosid_next('one_per_second')) FROM generate_series(1, 600)");
	is(seen($node, 'w_seq2', expected('CosidSequenceExhausted'), 10), 'seen',
		'after the restart a call still waits on ' . expected('CosidSequenceExhausted'));
	cancel($node, 'w_seq2');
	finish_session($s);
	if ($named)
	{
		is( $node->safe_psql('postgres', q{
				SELECT count(*) FROM pg_wait_events WHERE type = 'Extension' AND name LIKE 'Cosid%'}),
			'8', 'pg_wait_events lists the eight again');
	}
}

$node->stop;
$store->stop;
done_testing();
