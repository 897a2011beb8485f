# Helpers shared by cosid's TAP tests.
package CosidTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Time::HiRes qw(usleep);
use Test::More;
use File::Basename ();

our @EXPORT = qw(cosid_node crash_restart faketime_lib start_faked
  set_fake_offset psql_error slot_state now_ms child_pids
  lease_store lease_conf poll_until wait_for_lease);

# A new, started node with cosid preloaded (unless preload => 0) and any
# extra postgresql.conf lines given as conf => [...].  init => {...} passes
# options to $node->init (e.g. init => { allows_streaming => 1 }).
sub cosid_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opt{init} // {} });
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'cosid'")
	  if $opt{preload} // 1;
	$node->append_conf('postgresql.conf', $_) for @{ $opt{conf} // [] };
	$node->start unless $opt{no_start};
	return $node;
}

# kill -9 the postmaster, then start again once the old one is gone (its
# children exit on their own when they notice; until then the new postmaster
# finds their shared memory in use and refuses to start, so retry).
# start => sub { ... } starts it another way (true when started), e.g.
#   crash_restart($node, start => sub { start_faked($node, offset => '-30s', fail_ok => 1) })
# all => 1 kills the postmaster and all its children at once, so that no
# backend gets to write anything more: WAL not yet written out of shared
# memory is lost, as in a crash of the whole server.
sub crash_restart
{
	my ($node, %opt) = @_;
	my $start = $opt{start} // sub { $node->start(fail_ok => 1) };
	my $pid = $node->{_pid};
	if ($opt{all})
	{
		my @children = child_pids($pid);
		print "### Killing node \"" . $node->name
		  . "\" and its " . scalar(@children) . " children using signal 9\n";
		kill('KILL', $pid, @children);
		$node->{_pid} = undef;
	}
	else
	{
		$node->kill9;
	}
	for (my $i = 0; $i < 600 && kill(0, $pid); $i++)
	{
		usleep(50_000);
	}
	for (my $i = 0; $i < 100; $i++)
	{
		return if $start->();
		usleep(200_000);
	}
	die "node " . $node->name . " did not start after kill -9";
}

# The pids of the processes whose parent is $ppid (from /proc).
sub child_pids
{
	my ($ppid) = @_;
	my @pids;
	opendir(my $dh, '/proc') or die "could not read /proc: $!";
	for my $d (readdir($dh))
	{
		next unless $d =~ /^\d+$/;
		open(my $fh, '<', "/proc/$d/stat") or next;
		my $stat = <$fh>;
		close($fh);
		# "pid (comm) state ppid ...": comm may hold spaces and parentheses,
		# so the greedy match ends at the last ')'
		push @pids, int($d) if defined $stat && $stat =~ /^\d+ \(.*\) \S+ (\d+) /s && $1 == $ppid;
	}
	closedir($dh);
	return @pids;
}

# The libfaketime preload library, or undef when it is not installed.
sub faketime_lib
{
	for my $f (
		'/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
		'/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
		'/usr/lib/faketime/libfaketime.so.1',
		'/usr/local/lib/faketime/libfaketime.so.1')
	{
		return $f if -f $f;
	}
	return undef;
}

# Start the node with its clock faked by libfaketime (only the server and
# pg_ctl see it; the test's own processes keep the real clock):
#   offset => '-30s'      a fixed offset (FAKETIME)
#   offset_file => $path  the offset read from this file at every clock read
#                         (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE); write
#                         it with set_fake_offset, before and while running.
# The monotonic clock and file times are left alone.  Returns what
# $node->start returns (fail_ok => 1 passes through).
sub start_faked
{
	my ($node, %opt) = @_;
	my $lib = faketime_lib() or die "libfaketime is not installed";
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
	local $ENV{FAKETIME_DONT_RESET} = 1;
	local $ENV{NO_FAKE_STAT} = 1;
	# (delete, not undef: an empty FAKETIME would still win over the file)
	delete local $ENV{FAKETIME};
	delete local $ENV{FAKETIME_TIMESTAMP_FILE};
	delete local $ENV{FAKETIME_NO_CACHE};
	if (defined $opt{offset_file})
	{
		die "offset file $opt{offset_file} does not exist" unless -f $opt{offset_file};
		$ENV{FAKETIME_TIMESTAMP_FILE} = $opt{offset_file};
		$ENV{FAKETIME_NO_CACHE} = 1;
	}
	else
	{
		$ENV{FAKETIME} = $opt{offset} // die "start_faked needs offset or offset_file";
	}
	return $node->start(fail_ok => $opt{fail_ok});
}

# Write a libfaketime offset ("+0", "-30", "-0.5": seconds, fractions allowed)
# to the file, atomically, so that a process reading it never sees it empty.
sub set_fake_offset
{
	my ($file, $offset) = @_;
	my $tmp = "$file.tmp";
	open(my $fh, '>', $tmp) or die "could not write $tmp: $!";
	print $fh "$offset\n";
	close($fh) or die "could not close $tmp: $!";
	rename($tmp, $file) or die "could not rename $tmp: $!";
}

# Run SQL that is expected to fail: returns (SQLSTATE, message) of its
# ERROR, or () when it succeeded.  The full stderr is the third value.
# The message of an invalid definition or codec list has its detail (the
# JSON path and what was expected) appended after " | ".
sub psql_error
{
	my ($node, $db, $sql) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql($db, "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return () if $ret == 0;
	if ($stderr =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/)
	{
		my ($state, $msg) = ($1, $2);

		# an invalid definition or codec list names its JSON path in the detail
		$msg .= " | $1"
		  if $msg =~ /^invalid (generator definition|codec list)$/
		  && $stderr =~ /DETAIL:  ([^\n]*)/;
		return ($state, $msg, $stderr);
	}
	return ('', '', $stderr);
}

# pg_cosid/slot.state of the node as a hash (slot, namespace, end_ms, clean),
# or undef when there is none.
sub slot_state
{
	my ($node) = @_;
	my $file = $node->data_dir . '/pg_cosid/slot.state';
	open(my $fh, '<', $file) or return undef;
	my %rec;
	while (my $line = <$fh>)
	{
		chomp $line;
		$rec{$1} = $2 if $line =~ /^([a-z_]+)=(.*)$/;
	}
	close($fh);
	return \%rec;
}

# Wall-clock Unix milliseconds of the test process (never faked).
sub now_ms
{
	return int(Time::HiRes::time() * 1000);
}

# ---- lease mode (cosid.slot = 'lease')

# A node that keeps the slot leases: cosid installed there, not preloaded.
sub lease_store
{
	my ($name) = @_;
	my $store = cosid_node($name, preload => 0);
	$store->safe_psql('postgres', 'CREATE EXTENSION cosid');
	return $store;
}

# postgresql.conf lines (for cosid_node's conf => ...) of a server that
# leases its slot from $store: TTL 3 s unless ttl => N, more lines as
# extra => [...].
sub lease_conf
{
	my ($store, %opt) = @_;
	my $connstr = 'host=' . $store->host . ' port=' . $store->port . ' dbname=postgres';
	return [
		"cosid.slot = 'lease'",
		"cosid.lease_store = '$connstr'",
		'cosid.lease_ttl = ' . ($opt{ttl} // 3),
		@{ $opt{extra} // [] } ];
}

# Call $cond->() every $interval_ms (100 unless given) until it returns
# true or $timeout seconds have passed: whether it did.
sub poll_until
{
	my ($timeout, $cond, $interval_ms) = @_;
	my $deadline = Time::HiRes::time() + $timeout;
	for (;;)
	{
		return 1 if $cond->();
		return 0 if Time::HiRes::time() >= $deadline;
		usleep(($interval_ms // 100) * 1000);
	}
}

# Wait (up to $timeout s, 15 unless given) until the node holds a leased
# slot with an open window: the slot, or undef.  cosid must be installed in
# its database postgres (for cosid_slot()).
sub wait_for_lease
{
	my ($node, $timeout) = @_;
	my $slot;
	poll_until(
		$timeout // 15,
		sub {
			my $r = $node->safe_psql('postgres', 'SELECT state, slot FROM cosid_slot()');
			$slot = $1 if $r =~ /^active\|(\d+)$/;
			return defined $slot;
		});
	return $slot;
}


# ---- standbys and failover (060-063)

push @EXPORT, qw(standby_of fill_rows_sql fill_rows promote_and_fill start_load finish_load
  node_now_ms recovery_refusal);

# A streaming hot standby of $primary from a new base backup, started:
#   conf => [...]          more postgresql.conf lines
#   offset => '-3s'        its clock faked by libfaketime (start_faked)
#   offset_file => $path   (start_faked)
#   no_start => 1          initialised only
sub standby_of
{
	my ($primary, $name, %opt) = @_;
	my $backup = "for_$name";
	$primary->backup($backup);
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, $backup, has_streaming => 1);
	$standby->append_conf('postgresql.conf', $_) for ('hot_standby = on', @{ $opt{conf} // [] });
	return $standby if $opt{no_start};
	if (defined $opt{offset} || defined $opt{offset_file})
	{
		start_faked($standby, map { defined $opt{$_} ? ($_ => $opt{$_}) : () } qw(offset offset_file));
	}
	else
	{
		$standby->start;
	}
	return $standby;
}

# SQL that defines fill_rows(stmt, n, timeout_s): runs the INSERT stmt until
# it inserted n rows, each in a subtransaction.  55000 is retried (every
# 20 ms, giving up after timeout_s seconds), a unique violation is counted
# and skipped.  Returns inserted, retries (55000 errors), dup_errors,
# first_ok_s (seconds from the call to the first row), messages (the
# distinct 55000 messages, digits as N, ';'-separated).  Define it on a
# primary before its standbys are made and it replicates with the rest.
sub fill_rows_sql
{
	return q{
CREATE FUNCTION fill_rows(stmt text, n int, timeout_s float8 DEFAULT 15,
	OUT inserted int, OUT retries int, OUT dup_errors int, OUT first_ok_s float8, OUT messages text)
LANGUAGE plpgsql AS $fill$
DECLARE
	t0 timestamptz := clock_timestamp();
	m text;
BEGIN
	inserted := 0; retries := 0; dup_errors := 0; messages := '';
	WHILE inserted < n LOOP
		BEGIN
			EXECUTE stmt;
			inserted := inserted + 1;
			IF first_ok_s IS NULL THEN
				first_ok_s := extract(epoch FROM clock_timestamp() - t0);
			END IF;
		EXCEPTION
			WHEN object_not_in_prerequisite_state THEN
				GET STACKED DIAGNOSTICS m = MESSAGE_TEXT;
				retries := retries + 1;
				m := regexp_replace(m, '[0-9]+', 'N', 'g');
				IF position(m IN messages) = 0 THEN
					messages := messages || m || ';';
				END IF;
				EXIT WHEN extract(epoch FROM clock_timestamp() - t0) > timeout_s;
				PERFORM pg_sleep(0.02);
			WHEN unique_violation THEN
				dup_errors := dup_errors + 1;
				EXIT WHEN dup_errors >= 1000;
		END;
	END LOOP;
END
$fill$;
};
}

# Call fill_rows on the node: a hash (inserted, retries, dup_errors,
# first_ok_s, messages).
sub fill_rows
{
	my ($node, $stmt, $n, $timeout_s) = @_;
	$stmt =~ s/'/''/g;
	my $r = $node->safe_psql('postgres',
		"SELECT inserted, retries, dup_errors, coalesce(first_ok_s, -1), messages FROM fill_rows('$stmt', $n, "
		  . ($timeout_s // 15) . ')');
	my %h;
	@h{qw(inserted retries dup_errors first_ok_s messages)} = split /\|/, $r, 5;
	return \%h;
}

# Promote the node and fill $n rows with $stmt at once (fill_rows, 15 s):
# asserts no duplicate key and every row inserted; returns fill_rows' hash.
sub promote_and_fill
{
	my ($node, $what, $stmt, $n) = @_;
	$node->promote;
	my $r = fill_rows($node, $stmt, $n, 15);
	note("$what: promoted: $r->{inserted} rows, $r->{retries} retries (55000), $r->{dup_errors} duplicate keys, "
		  . "first row after $r->{first_ok_s} s; messages: $r->{messages}");
	is($r->{dup_errors}, 0, "$what: no duplicate-key error after promotion");
	is($r->{inserted}, $n, "$what: the promoted node inserted $n rows within 15 s");
	return $r;
}

# pgbench in the background: $clients clients run the SQL script for
# $seconds.  Returns a handle for finish_load.
sub start_load
{
	my ($node, $seconds, $clients, $script) = @_;
	require IPC::Run;
	my $file = $node->basedir . '/load_' . int(rand(1e9)) . '.sql';
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh "$script\n";
	close($fh);
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[ 'pgbench', '-n', '-T', $seconds, '-c', $clients, '-j', $clients, '-f', $file,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

# Wait for the load to end: (whether pgbench succeeded, transactions
# processed, its output).
sub finish_load
{
	my ($h) = @_;
	$h->{run}->finish;
	my $ok = $h->{run}->result == 0;
	my ($tx) = $h->{out} =~ /number of transactions actually processed: (\d+)/;
	return ($ok, $tx // 0, "$h->{out}\n$h->{err}");
}

# The node's clock (faked or not) in Unix milliseconds.
sub node_now_ms
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint');
}

# Run SQL expected to be refused because the server is in recovery:
# (SQLSTATE, message, hint, seconds it took), SQLSTATE '' when it
# succeeded.
sub recovery_refusal
{
	my ($node, $sql) = @_;
	my $t0 = Time::HiRes::time();
	my ($state, $msg, $stderr) = psql_error($node, 'postgres', $sql);
	my $took = Time::HiRes::time() - $t0;
	return ('', '', '', $took) unless defined $state;
	my ($hint) = ($stderr // '') =~ /HINT:  ([^\n]*)/;
	return ($state, $msg, $hint // '', $took);
}


# ---- pglogical, active-active (070)

push @EXPORT, qw(pglogical_missing pglogical_node pglogical_define_node pglogical_subscribe
  start_load_tx log_count background_workers);

# Why pglogical cannot be used with the PostgreSQL in PATH (its library or
# control file is not installed), or undef when it can.
sub pglogical_missing
{
	my $lib = `pg_config --pkglibdir`;
	my $share = `pg_config --sharedir`;
	return 'pg_config failed' unless $? == 0 && defined $lib && defined $share;
	chomp($lib, $share);
	return "$lib/pglogical.so is missing (scripts/deps.sh installs or builds it)"
	  unless -f "$lib/pglogical.so";
	return "$share/extension/pglogical.control is missing"
	  unless -f "$share/extension/pglogical.control";
	return undef;
}

# A new, started node for pglogical: cosid and pglogical preloaded, logical
# WAL, and unless plugins => 0 output_plugin_libraries naming
# pglogical_output on a server that has that parameter (the minor releases
# of August 2026 on: 15.19, 18.6).  conf => [...] adds lines (after these).
sub pglogical_node
{
	my ($name, %opt) = @_;
	my $node = cosid_node($name, no_start => 1);
	$node->append_conf('postgresql.conf', $_)
	  for (
		"shared_preload_libraries = 'cosid,pglogical'",
		'wal_level = logical',
		'max_wal_senders = 10',
		'max_replication_slots = 10',
		'log_statement = none');
	$node->append_conf('postgresql.conf',
		"output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'")
	  if ($opt{plugins} // 1) && has_parameter($node, 'output_plugin_libraries');
	$node->append_conf('postgresql.conf', $_) for @{ $opt{conf} // [] };
	$node->start;
	return $node;
}

# Whether the server of this (initialised) node knows the parameter.
sub has_parameter
{
	my ($node, $param) = @_;
	require IPC::Run;
	my ($stdout, $stderr);
	my $ok = IPC::Run::run([ 'postgres', '-D', $node->data_dir, '-C', $param ],
		'>', \$stdout, '2>', \$stderr);
	return $ok ? 1 : 0;
}

# The libpq connection string pglogical uses to reach the node.
sub pglogical_dsn
{
	my ($node) = @_;
	return 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
}

# Make the node a pglogical node named $name whose replication set
# 'default' holds every table of schema public.
sub pglogical_define_node
{
	my ($node, $name) = @_;
	my $dsn = pglogical_dsn($node);
	$node->safe_psql('postgres', qq{
		SELECT pglogical.create_node(node_name := '$name', dsn := '$dsn');
		SELECT pglogical.replication_set_add_all_tables('default', ARRAY['public']);
	});
}

# Subscribe $node to $provider's set 'default' as $sub: no copy of structure
# or data, and only changes made on the provider itself (forward_origins
# '{}'), so that two subscriptions both ways do not echo rows back.  Waits
# (up to $timeout s, 30 unless given) until it replicates: whether it does.
sub pglogical_subscribe
{
	my ($node, $sub, $provider, $timeout) = @_;
	my $dsn = pglogical_dsn($provider);
	$node->safe_psql('postgres', qq{
		SELECT pglogical.create_subscription(subscription_name := '$sub', provider_dsn := '$dsn',
			replication_sets := ARRAY['default'], synchronize_structure := false,
			synchronize_data := false, forward_origins := '{}')});
	return poll_until(
		$timeout // 30,
		sub {
			$node->safe_psql('postgres',
				"SELECT status FROM pglogical.show_subscription_status('$sub')") eq 'replicating';
		});
}

# pgbench in the background: $clients clients run the SQL script
# $transactions times each (-t).  Returns a handle for finish_load.
sub start_load_tx
{
	my ($node, $clients, $transactions, $script) = @_;
	require IPC::Run;
	my $file = $node->basedir . '/load_' . int(rand(1e9)) . '.sql';
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh "$script\n";
	close($fh);
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[ 'pgbench', '-n', '-t', $transactions, '-c', $clients, '-j', $clients, '-f', $file,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

# How many lines of the node's server log match the regular expression.
sub log_count
{
	my ($node, $re) = @_;
	open(my $fh, '<', $node->logfile) or die 'could not read ' . $node->logfile . ": $!";
	my $n = 0;
	while (my $line = <$fh>)
	{
		$n++ if $line =~ $re;
	}
	close($fh);
	return $n;
}

# The background workers the node's postmaster runs now, from their process
# titles (cosid's slot worker holds no database connection, so
# pg_stat_activity does not show it): a sorted list of names, digits
# dropped ("pglogical apply", "cosid slot worker", ...).
sub background_workers
{
	my ($node) = @_;
	my @names;
	for my $pid (child_pids($node->{_pid}))
	{
		open(my $fh, '<', "/proc/$pid/cmdline") or next;
		my $title = do { local $/; <$fh> } // '';
		close($fh);
		$title =~ s/\0/ /g;
		push @names, $1
		  if $title =~ /^postgres: (?:[^:]*: )?(cosid slot worker|pglogical [a-z]+|logical replication [a-z]+|parallel worker)/;
	}
	return sort @names;
}

push @EXPORT, qw(start_pgbench pglogical_set_tables);

# pgbench in the background, as start_load_tx, with any pgbench options:
#   start_pgbench($node, $script, '-c', 2, '-j', 2, '-t', 500, '-R', 250)
# (-R paces the transactions of all clients together; a schedule that fell
# behind is caught up, nothing is skipped).  A handle for finish_load.
sub start_pgbench
{
	my ($node, $script, @options) = @_;
	require IPC::Run;
	my $file = $node->basedir . '/load_' . int(rand(1e9)) . '.sql';
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh "$script\n";
	close($fh);
	my %h = (out => '', err => '');
	$h{run} = IPC::Run::start(
		[ 'pgbench', '-n', @options, '-f', $file, '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$h{out}, '2>', \$h{err});
	return \%h;
}

# The tables of the node's pglogical replication sets, as
# "set:schema.table" sorted and comma-separated ('' when there is none).
sub pglogical_set_tables
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT coalesce(string_agg(s.set_name || ':' || n.nspname || '.' || c.relname, ','
				ORDER BY s.set_name, n.nspname, c.relname), '')
		FROM pglogical.replication_set_table t
		JOIN pglogical.replication_set s USING (set_id)
		JOIN pg_class c ON c.oid = t.set_reloid
		JOIN pg_namespace n ON n.oid = c.relnamespace});
}


# ---- documentation blocks that tests run (071)

push @EXPORT, qw(doc_blocks);

# The code blocks of the documentation that a test runs as written: a hash of
# name => text, one for every fenced block (```sql, ```sh, ```) right after
# a line "<!-- test: NAME -->" (both may be indented, as in a list item: the
# block's indentation is taken off its lines), in README.md and docs/*.md.
# The documentation is the one next to the test files (scripts/test.sh
# copies README.md and docs/ with them: $COSID_SRC), else the checkout's,
# two directories above this file.  Dies when there is none, or when a name
# is given twice (in one file or two) or a marker has no block right after it.
sub doc_blocks
{
	my @tries = ((defined $ENV{COSID_SRC} ? ($ENV{COSID_SRC}) : ()),
		File::Basename::dirname(__FILE__) . '/../..');
	my ($root) = grep { -f "$_/README.md" && -d "$_/docs" } @tries;
	die 'no README.md and docs/ (looked in ' . join(', ', @tries) . ')' unless defined $root;
	my %blocks;
	for my $file ("$root/README.md", sort glob("$root/docs/*.md"))
	{
		open(my $fh, '<', $file) or die "could not read $file: $!";
		my $text = do { local $/; <$fh> };
		close($fh);
		my $short = File::Basename::basename($file);
		while ($text =~ /^[ \t]*<!-- test: (\S+) -->\n(.*?)(?=^[ \t]*<!-- test: |\z)/msg)
		{
			my ($name, $after) = ($1, $2);
			die "$short: block \"$name\" given twice" if exists $blocks{$name};
			die "$short: no code block right after <!-- test: $name -->"
			  unless $after =~ /\A([ \t]*)```[a-z]*\n(.*?)^\1```[ \t]*$/ms;
			my ($indent, $block) = ($1, $2);
			$block =~ s/^\Q$indent\E//mg;
			$blocks{$name} = $block;
		}
	}
	return %blocks;
}

# ---- pg_upgrade from PostgreSQL 15 (075, 079)

push @EXPORT, qw(pg_upgrade_old_missing pg_upgrade_plan run_pg_upgrade);

# Why pg_upgrade from the PostgreSQL installed at $install (Debian's
# /usr/lib/postgresql/15) cannot be tested here, or undef: the server or
# this tree's cosid is not installed there (make test installs cosid into
# every version of COSID_PG_VERSIONS before the TAP tests of the last;
# scripts/pg.sh install 15 does it alone).
sub pg_upgrade_old_missing
{
	my ($install) = @_;
	my $how = 'make test (PG=15 before 18) or scripts/pg.sh install 15 installs it';
	return "PostgreSQL 15 is not installed ($install/bin/postgres; make deps PG=15 installs it)"
	  unless -x "$install/bin/postgres";
	my $lib = `$install/bin/pg_config --pkglibdir`;
	my $share = `$install/bin/pg_config --sharedir`;
	chomp($lib, $share);
	return "cosid is not installed into PostgreSQL 15 ($lib/cosid.so is missing; $how)"
	  unless -f "$lib/cosid.so";
	return "cosid 1.3 is not installed into PostgreSQL 15 ($share/extension/cosid--1.3.sql is missing; $how)"
	  unless -f "$share/extension/cosid--1.3.sql";
	# the old server's half of the procedure: it lists its files (upgrade.c)
	open(my $fh, '<:raw', "$lib/cosid.so") or return "could not read $lib/cosid.so: $!";
	my $so = do { local $/; <$fh> };
	close($fh);
	return "the cosid installed into PostgreSQL 15 ($lib/cosid.so) is older than this tree's: it writes no "
	  . "pg_cosid/upgrade.manifest; $how"
	  unless index($so, 'cosid upgrade manifest 1') >= 0;
	return undef;
}


# The plan of a test of pg_upgrade from PostgreSQL 15 to this version: skips
# it (the reason said) on 15 itself, without libfaketime, or when
# pg_upgrade_old_missing says why; else (PostgreSQL 15's install path, its
# bindir, this version's bindir).
sub pg_upgrade_plan
{
	my $old_install = '/usr/lib/postgresql/15';
	my ($major) = PostgreSQL::Test::Cluster->new('probe')->pg_version =~ /^(\d+)/;
	plan skip_all => 'pg_upgrade from PostgreSQL 15 is tested on a later version' if $major <= 15;
	plan skip_all => 'libfaketime is not installed' unless faketime_lib();
	my $why = pg_upgrade_old_missing($old_install);
	plan skip_all => $why if defined $why;
	my $new_bin = `pg_config --bindir`;
	chomp $new_bin;
	return ($old_install, "$old_install/bin", $new_bin);
}

# pg_upgrade --$mode from the stopped cluster $old (binaries in $old_bin) to
# the initialised, stopped $new, run in $new's base directory (where it
# writes its logs): (whether it succeeded, its stdout and stderr).
sub run_pg_upgrade
{
	my ($old, $new, $mode, $old_bin, $new_bin) = @_;
	require Cwd;
	require IPC::Run;
	my $cwd = Cwd::getcwd();
	chdir $new->basedir or die "could not enter ${\$new->basedir}: $!";
	my ($stdout, $stderr) = ('', '');
	my $ret = IPC::Run::run(
		[ 'pg_upgrade', '--no-sync', "--$mode",
		  '-d', $old->data_dir, '-D', $new->data_dir, '-b', $old_bin, '-B', $new_bin,
		  '-s', $new->host, '-p', $old->port, '-P', $new->port ],
		'>', \$stdout, '2>', \$stderr);
	chdir $cwd;
	return ($ret, $stdout, $stderr);
}


# ---- the slot worker's timing constants

push @EXPORT, qw(slot_constant lease_lead_ms renewal_slack_ms lease_renewing);

# A constant #defined in src/slot.h (the copy next to the test files,
# $COSID_SRC, else the checkout's), so that a test's bounds follow the
# worker's timing; dies when there is none.
sub slot_constant
{
	my ($name) = @_;
	my @tries = ((defined $ENV{COSID_SRC} ? ($ENV{COSID_SRC}) : ()),
		File::Basename::dirname(__FILE__) . '/../..');
	my ($file) = grep { -f $_ } map { "$_/src/slot.h" } @tries;
	die 'no src/slot.h (looked in ' . join(', ', @tries) . ')' unless defined $file;
	open(my $fh, '<', $file) or die "could not read $file: $!";
	while (my $line = <$fh>)
	{
		return $1 + 0 if $line =~ /^#define\s+\Q$name\E\s+(\d+)\s*$/;
	}
	die "no #define $name in $file";
}

# How long ago a healthy leased slot renewed at most (cosid_slot()'s
# last_renewal): the part of the TTL it renews at (src/slot.h), and a second
# for the turn and the call.
sub renewal_slack_ms
{
	my ($ttl_s) = @_;
	return int($ttl_s * 1000 / slot_constant('COSID_LEASE_RENEW_PART')) + 1000;
}

# Whether a lease-mode node's slot is active, connected to its store and
# renewed within renewal_slack_ms of its TTL (seconds).
sub lease_renewing
{
	my ($node, $ttl_s) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT state = 'active' AND store_connected
			   AND last_renewal > now() - interval '@{[renewal_slack_ms($ttl_s)]} milliseconds'
		FROM cosid_slot()}) eq 't';
}

# The lead of a leased slot's window once the clocks' offset is known
# (src/slot_lease.c, lease_lead_ms; the clocks agree): the part of the TTL
# it renews at and COSID_WINDOW_RENEW_MS, at most COSID_LEASE_LEAD_MAX_MS,
# at least COSID_WINDOW_LEAD_MS.
sub lease_lead_ms
{
	my ($ttl_s) = @_;
	my $lead = int($ttl_s * 1000 / slot_constant('COSID_LEASE_RENEW_PART'))
	  + slot_constant('COSID_WINDOW_RENEW_MS');
	my $max = slot_constant('COSID_LEASE_LEAD_MAX_MS');
	my $min = slot_constant('COSID_WINDOW_LEAD_MS');
	$lead = $max if $lead > $max;
	$lead = $min if $lead < $min;
	return $lead;
}

1;
