# Helpers shared by cosid's TAP tests.
package CosidTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Time::HiRes qw(usleep);
use Test::More;

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
sub psql_error
{
	my ($node, $db, $sql) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql($db, "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return () if $ret == 0;
	return ($1, $2, $stderr) if $stderr =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/;
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

1;
