# Helpers of the HA manager tests (076_patroni.pl, 077_pg_auto_failover.pl):
# processes the test starts and must end (etcd, Patroni, pg_autoctl), SQL
# over TCP to servers that are not PostgreSQL::Test::Cluster nodes, HTTP to
# Patroni's REST API, and the retrying clients of ha_client.py.
package CosidHA;

use strict;
use warnings;
use Exporter 'import';
use File::Basename ();
use HTTP::Tiny;
use IPC::Run;
use POSIX ();
use Time::HiRes qw(usleep);
use Test::More;

our @EXPORT = qw(ha_spawn ha_kill ha_stop_all tcp_sql tcp_sql_ok http_status http_post
  ha_client_start ha_clients_stop ha_client_rows ha_client_summary ha_wait_rows ha_check_ids postmaster_pid
  tool_missing);

my @spawned;    # [pid, name] of every process ha_spawn started

# Why a tool is missing (its name is not in PATH), or undef.
sub tool_missing
{
	for my $tool (@_)
	{
		my $found = grep { -x "$_/$tool" } split /:/, ($ENV{PATH} // '');
		return "$tool is not installed (scripts/deps.sh installs it)" unless $found;
	}
	return undef;
}

# Start a program in the background, its stdout and stderr to $log; the
# pid.  It is ended (SIGTERM, then SIGKILL) at the end of the test unless
# it ended before.
sub ha_spawn
{
	my ($name, $log, @cmd) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		setpgrp(0, 0);
		open(STDOUT, '>>', $log) or die "could not write $log: $!";
		open(STDERR, '>&', \*STDOUT) or die "dup: $!";
		{ exec(@cmd) };
		print STDERR "could not run $cmd[0]: $!\n";
		POSIX::_exit(127);
	}
	note("started $name (pid $pid): @cmd");
	push @spawned, [ $pid, $name ];
	return $pid;
}

# Send a signal to a process ha_spawn started; with 'TERM' wait (up to
# $timeout s, 30 unless given) until it ended, then SIGKILL it if it did not.
sub ha_kill
{
	my ($pid, $sig, $timeout) = @_;
	kill($sig, $pid);
	if ($sig ne 'KILL')
	{
		my $deadline = Time::HiRes::time() + ($timeout // 30);
		while (Time::HiRes::time() < $deadline)
		{
			return if waitpid($pid, 1) == $pid;    # WNOHANG
			usleep(100_000);
		}
		kill('KILL', $pid);
	}
	waitpid($pid, 0);
}

# End every process ha_spawn started that still runs, the last first.
sub ha_stop_all
{
	for my $p (reverse @spawned)
	{
		my ($pid, $name) = @$p;
		next unless kill(0, $pid) && waitpid($pid, 1) == 0;
		note("stopping $name (pid $pid)");
		ha_kill($pid, 'TERM', 30);
	}
	@spawned = ();
}

# The pid of the postmaster of a data directory (its postmaster.pid), or
# undef.
sub postmaster_pid
{
	my ($datadir) = @_;
	open(my $fh, '<', "$datadir/postmaster.pid") or return undef;
	my $pid = <$fh>;
	close($fh);
	chomp $pid if defined $pid;
	return $pid;
}

# Run SQL with psql on 127.0.0.1:$port as $user (the OS user unless given):
# (exit code, stdout, stderr), output unaligned, tuples only.
sub tcp_sql
{
	my ($port, $sql, %opt) = @_;
	my ($out, $err) = ('', '');
	my @cmd = ('psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1',
		'-d', "host=127.0.0.1 port=$port dbname=" . ($opt{db} // 'postgres') . ' connect_timeout=3'
		  . (defined $opt{user} ? " user=$opt{user}" : ''));
	# psql that could not connect exits before it reads its input: IPC::Run
	# then dies writing it (EPIPE, "ack Broken pipe"), which is a failed
	# call like any other, for a caller polling a server that is starting
	my $ran = eval { IPC::Run::run(\@cmd, '<', \$sql, '>', \$out, '2>', \$err, IPC::Run::timeout(60)); 1 };
	return (255, '', $err . ($@ // '')) unless $ran;
	my $rc = $? >> 8;
	chomp $out;
	return ($rc, $out, $err);
}

# tcp_sql that must succeed: its stdout (dies with stderr otherwise).
sub tcp_sql_ok
{
	my ($port, $sql, %opt) = @_;
	my ($rc, $out, $err) = tcp_sql($port, $sql, %opt);
	die "psql on port $port failed: $err\n(SQL: $sql)" if $rc != 0;
	return $out;
}

my $http = HTTP::Tiny->new(timeout => 5);

# The HTTP status of a GET (599 when nothing answered).
sub http_status
{
	my ($url) = @_;
	return $http->get($url)->{status};
}

# POST a JSON body: (status, content).
sub http_post
{
	my ($url, $json) = @_;
	my $r = $http->post($url, { content => $json, headers => { 'Content-Type' => 'application/json' } });
	return ($r->{status}, $r->{content});
}

# Start ha_client.py: it runs $sql through $conninfo until stopped, with a
# pause of $pause_ms (5 unless given) after each, and writes the rows of each
# acknowledged statement to $dir/$name.rows.  A handle for the functions
# below.
sub ha_client_start
{
	my ($name, $dir, $conninfo, $sql, $pause_ms) = @_;
	my $script = File::Basename::dirname(__FILE__) . '/ha_client.py';
	my %h = (name => $name, rows => "$dir/$name.rows", stop => "$dir/$name.stop");
	unlink($h{stop});
	$h{pid} = ha_spawn("client $name", "$dir/$name.log", '/usr/bin/python3', $script, $conninfo, $sql,
		$h{rows}, $h{stop}, $pause_ms // 5);
	return \%h;
}

# Stop the clients (each finishes its statement) and wait for them.
sub ha_clients_stop
{
	for my $h (@_)
	{
		open(my $fh, '>', $h->{stop}) or die "could not write $h->{stop}: $!";
		close($fh);
	}
	for my $h (@_)
	{
		my $deadline = Time::HiRes::time() + 60;
		while (waitpid($h->{pid}, 1) == 0 && Time::HiRes::time() < $deadline)
		{
			usleep(50_000);
		}
	}
}

# The rows a client was acknowledged so far: a list of [col, col, ...].
sub ha_client_rows
{
	my ($h) = @_;
	open(my $fh, '<', $h->{rows}) or return ();
	my @rows;
	while (my $line = <$fh>)
	{
		next unless $line =~ /\n\z/;    # a line being written
		chomp $line;
		push @rows, [ split /\t/, $line ];
	}
	close($fh);
	return @rows;
}

# A stopped client's summary: a hash (batches, rows, errors,
# unique_violations, errors_text: the "error STATE: message" lines).
sub ha_client_summary
{
	my ($h) = @_;
	my %s = (errors_text => '');
	open(my $fh, '<', "$h->{rows}.summary") or return \%s;
	while (my $line = <$fh>)
	{
		if ($line =~ /^(\w+) (\d+)$/) { $s{$1} = $2; }
		else { $s{errors_text} .= $line; }
	}
	close($fh);
	return \%s;
}

# Wait (up to $timeout s) until every client has more than $since->{name}
# rows ($since: name => count, 0 when absent) and, with $pred, one of the
# new rows satisfies $pred->(row): whether they all did.
sub ha_wait_rows
{
	my ($timeout, $since, $clients, $pred) = @_;
	my $deadline = Time::HiRes::time() + $timeout;
	my %done;
	while (Time::HiRes::time() < $deadline)
	{
		for my $h (@$clients)
		{
			next if $done{ $h->{name} };
			my @rows = ha_client_rows($h);
			my $from = $since->{ $h->{name} } // 0;
			next unless @rows > $from;
			$done{ $h->{name} } = 1
			  if !$pred || grep { $pred->($_) } @rows[ $from .. $#rows ];
		}
		return 1 if keys(%done) == @$clients;
		usleep(200_000);
	}
	diag('clients without new rows: ' . join(', ', grep { !$done{$_} } map { $_->{name} } @$clients));
	return 0;
}

# The checks of the ids that stopped clients were acknowledged, each row
# (id, port of the server that answered) of table t on a cluster whose
# leader is now on $port:
#  - no id acknowledged twice, no unique violation;
#  - $phase->($client, $i, $port) gives the phase of a client's row $i,
#    1, 2, ...: each phase has ids, and the ids of each phase after the
#    first are above every id of the phase before ($what->{$phase} names
#    the server that issued them, "after the switchover pg2");
#  - every acknowledged id is in t on the leader (nothing acknowledged was
#    lost), through $file.
sub ha_check_ids
{
	my ($port, $clients, $phase, $what, $file) = @_;
	my ($ids, $dups, $unique) = (0, 0, 0);
	my (%seen, %ph);
	for my $h (@$clients)
	{
		my @rows = ha_client_rows($h);
		my $sum = ha_client_summary($h);
		note("$h->{name}: $sum->{batches} statements, $sum->{rows} ids, $sum->{errors} errors\n$sum->{errors_text}");
		$unique += $sum->{unique_violations} // 0;
		for my $i (0 .. $#rows)
		{
			my ($id, $p) = @{ $rows[$i] };
			$dups++ if $seen{$id}++;
			push @{ $ph{ $phase->($h->{name}, $i, $p) } }, $id;
			$ids++;
		}
	}
	is($dups, 0, "no id acknowledged twice ($ids ids to " . scalar(@$clients) . ' clients)');
	is($unique, 0, 'no unique violation');
	my $top;
	for my $p (sort { $a <=> $b } keys %ph)
	{
		my @ids = sort { $a <=> $b } @{ $ph{$p} };
		note("phase $p: " . scalar(@ids) . ' ids acknowledged');
		ok($ids[0] > $top, "$what->{$p} issued above every id acknowledged before") if defined $top;
		$top = $ids[-1];
	}
	is(join(',', sort { $a <=> $b } keys %ph), join(',', 1 .. (keys(%$what) + 1)), 'ids acknowledged in every phase');
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh "$_\n" for keys %seen;
	close($fh);
	is( tcp_sql_ok($port, qq{
			CREATE TEMP TABLE acked (id bigint);
			COPY acked FROM '$file';
			SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT FROM t WHERE t.id = a.id)}),
		'0', 'every acknowledged row is on the leader (synchronous replication)');
}

END
{
	ha_stop_all();
}

1;
