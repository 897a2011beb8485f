# The nemesis: three servers leasing slots (and taking shared segments) from
# one lease store, each server and the store in a network namespace of its
# own, under a random, seeded schedule of faults for a bounded time
# (COSID_NEMESIS_SECONDS, 180 by default):
#   - partitions: every packet between a server and the store dropped (nft),
#     so connections hang rather than being refused; the store cut off from
#     every server;
#   - one-way partitions: only a server's packets to the store dropped, or
#     only the store's answers to it (the store commits a renewal the server
#     never hears of);
#   - process pauses past the lease TTL (SIGSTOP of a server's every process,
#     SIGCONT after TTL + 1 to 3 s);
#   - clock skew (libfaketime: a server's clock up to 2.5 s ahead or behind);
#   - kill -9 of a server (all its processes) or of the store, and a restart.
# Two clients per server (test/t/nemesis_client.py, on the server's Unix
# socket, which no partition touches) ask continuously, one for ids of a
# time-based generator, one for numbers of a lease-store segment generator; every
# acknowledged value goes to a file the test reads at the end, the checker:
# the run passes only with no id and no number twice, across all servers,
# and each server's ids and numbers in increasing order.  It prints the seed
# (COSID_NEMESIS_SEED replays a schedule) and availability figures: after
# losing the store (killed, or cut off), how long each server went on issuing
# ids (its window, about a second), and after the store came back, how long
# until it issued again.
#
# The namespaces need no root: an unprivileged user namespace (unshare
# --user --map-current-user --keep-caps --net) holds a network namespace per
# node, made with unshare --net, and veth pairs from the store's to each
# server's, addresses 10.231.N.1 (the store) and 10.231.N.2 (server N) on
# those veths only.  A small agent running in that user namespace (below)
# makes them, starts the servers inside them (nsenter) and applies the
# packet drops (nft); when the test ends (an END block, also on failure) it
# stops every server and the agent, and the namespaces go with their last
# process.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use IPC::Run ();
use File::Basename qw(dirname);
use CosidTest;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan skip_all => "the nemesis runs on one version, PostgreSQL 18 and later, to keep CI short (this is $major)"
  if $major < 18;
for my $tool (qw(unshare nsenter ip nft))
{
	plan skip_all => "$tool is not installed (util-linux, iproute2, nftables)"
	  unless grep { -x "$_/$tool" } split(/:/, "$ENV{PATH}:/usr/sbin:/sbin");
}
$ENV{PATH} .= ':/usr/sbin:/sbin';
plan skip_all => 'unprivileged user namespaces are not available (unshare --user --net failed)'
  if system('unshare --user --map-current-user --keep-caps --net ip link set lo up >/dev/null 2>&1') != 0;
plan skip_all => 'libfaketime is not installed' unless faketime_lib();
plan skip_all => '/usr/bin/python3 with psycopg2 is needed for the clients'
  if system('/usr/bin/python3 -c "import psycopg2" >/dev/null 2>&1') != 0;

my $seconds = $ENV{COSID_NEMESIS_SECONDS} // 180;
my $seed = $ENV{COSID_NEMESIS_SEED} // int(rand(2**31));
srand($seed);
diag("nemesis: seed $seed (COSID_NEMESIS_SEED=$seed replays this schedule), $seconds s of faults");

my $TTL = 3;
my @servers = (1, 2, 3);
my $dir = PostgreSQL::Test::Utils::tempdir('nemesis');

# ---- the agent: runs in the user namespace, one command a line, answers
# "ok RC" (commands: ns NAME, in NAME SHELL, quit)
my $agent_src = <<'AGENT';
use strict;
use warnings;
$| = 1;
my %holder;
my $self = readlink('/proc/self/ns/net');
sub in_ns { my ($n, $sh) = @_; return system('nsenter', "--net=/proc/$holder{$n}/ns/net", 'sh', '-c', $sh) >> 8; }
while (my $line = <STDIN>)
{
	chomp $line;
	my ($cmd, $rest) = split / /, $line, 2;
	my $rc = 0;
	if ($cmd eq 'ns')
	{
		my $pid = fork() // die "fork: $!";
		exec('unshare', '--net', '--keep-caps', 'sleep', '1000000') or exit 127 if $pid == 0;
		$holder{$rest} = $pid;
		for (1 .. 500)
		{
			my $ns = readlink("/proc/$pid/ns/net") // '';
			last if $ns ne '' && $ns ne $self && (readlink("/proc/$pid/exe") // '') =~ /sleep$/;
			select(undef, undef, undef, 0.01);
		}
		$rc = in_ns($rest, 'ip link set lo up');
	}
	elsif ($cmd eq 'link')
	{
		# link STORE SERVER N: a veth pair, 10.231.N.1 in STORE, .2 in SERVER
		my ($a, $b, $n) = split / /, $rest;
		$rc = system("ip link add vs$n type veth peer name vn$n && ip link set vs$n netns $holder{$a} && ip link set vn$n netns $holder{$b}") >> 8;
		$rc ||= in_ns($a, "ip addr add 10.231.$n.1/24 dev vs$n && ip link set vs$n up");
		$rc ||= in_ns($b, "ip addr add 10.231.$n.2/24 dev vn$n && ip link set vn$n up");
	}
	elsif ($cmd eq 'in')
	{
		my ($n, $sh) = split / /, $rest, 2;
		$rc = in_ns($n, $sh);
	}
	elsif ($cmd eq 'quit')
	{
		kill 'KILL', values %holder;
		print "ok 0\n";
		exit 0;
	}
	else
	{
		$rc = 255;
	}
	print "ok $rc\n";
}
kill 'KILL', values %holder;
AGENT
my $agent_file = "$dir/agent.pl";
open(my $afh, '>', $agent_file) or die "could not write $agent_file: $!";
print $afh $agent_src;
close($afh);

my ($ain, $aout, $aerr) = ('', '', '');
my $agent = IPC::Run::start(
	[ 'unshare', '--user', '--map-current-user', '--keep-caps', '--net', '--kill-child', 'perl', $agent_file ],
	'<', \$ain, '>', \$aout, '2>', \$aerr);

# Run an agent command: its exit status.
sub agent
{
	my ($cmd) = @_;
	$ain .= "$cmd\n";
	my $deadline = time() + 120;
	while ($aout !~ /^ok -?\d+$/m)
	{
		die "the nemesis agent did not answer '$cmd' (stderr: $aerr)" if time() > $deadline || !$agent->pumpable;
		$agent->pump_nb;
		usleep(5_000);
	}
	$aout =~ s/^(.*?)^ok (-?\d+)\n//ms;
	my $rc = $2;
	note("agent: '$cmd' printed: $1") if $1 ne '';
	return $rc;
}

my (%node, %paused);
my $stopfile = "$dir/stop";
my @clients;

# Every process of a node: the postmaster and its children.
sub node_pids
{
	my ($n) = @_;
	my $pid = $n->{_pid} or return ();
	return ($pid, child_pids($pid));
}

END
{
	my $rc = $?;
	# let paused servers go, stop clients and servers, then the agent (and
	# with it the namespaces)
	if (defined $stopfile && open(my $fh, '>', $stopfile))
	{
		close($fh);
	}
	for my $n (values %node)
	{
		kill 'CONT', node_pids($n);
	}
	$_->finish for grep { defined } @clients;
	for my $n (values %node)
	{
		kill 'KILL', node_pids($n) if $n->{_pid};
		$n->{_pid} = undef;
	}
	if ($agent)
	{
		eval { agent('quit'); 1 };
		$agent->kill_kill;
	}
	$? = $rc;
}

# ---- the namespaces and the nodes
is(agent("ns $_"), 0, "namespace $_") for ('store', map { "s$_" } @servers);
is(agent("link store s$_ $_"), 0, "veth pair store - s$_") for @servers;

my $store = PostgreSQL::Test::Cluster->new('store');
$store->init;
$store->append_conf('pg_hba.conf', 'host all all 10.231.0.0/16 trust');
$store->append_conf('postgresql.conf',
	"listen_addresses = '" . join(',', map { "10.231.$_.1" } @servers) . "'\nmax_connections = 50");

sub start_in
{
	my ($ns, $n, $env) = @_;
	my $cmd = "exec env $env pg_ctl -D " . $n->data_dir . ' -l ' . $n->logfile . ' -w -t 60 start >/dev/null 2>&1';
	my $rc = agent("in $ns $cmd");
	$n->_update_pid(1) if $rc == 0;
	return $rc == 0;
}

sub faked_env
{
	my ($i) = @_;
	return 'LD_PRELOAD=' . faketime_lib()
	  . " FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_DONT_RESET=1 NO_FAKE_STAT=1 FAKETIME_NO_CACHE=1 FAKETIME_TIMESTAMP_FILE=$dir/clock$i";
}

ok(start_in('store', $store, ''), 'the store starts in its namespace');
$store->safe_psql('postgres', 'CREATE EXTENSION cosid');

for my $i (@servers)
{
	set_fake_offset("$dir/clock$i", '+0');
	my $n = PostgreSQL::Test::Cluster->new("s$i");
	$n->init;
	$n->append_conf('postgresql.conf', join("\n",
		"shared_preload_libraries = 'cosid'",
		"cosid.slot = 'lease'",
		"cosid.lease_store = 'host=10.231.$i.1 port=" . $store->port . " dbname=postgres connect_timeout=2'",
		"cosid.lease_ttl = $TTL",
		"cosid.namespace = 'nemesis'",
		# 4 slots for 3 servers: a slot given up is soon taken by another
		'cosid.machine_bits = 2'));
	$node{$i} = $n;
	ok(start_in("s$i", $n, faked_env($i)), "server s$i starts in its namespace");
	$n->safe_psql('postgres', 'CREATE EXTENSION cosid');
	$n->safe_psql('postgres', q{SELECT cosid_define('snow', '{"strategy": "snowflake"}')});
	$n->safe_psql('postgres',
		q{SELECT cosid_define('seg', '{"strategy": "segment", "distributor": "lease-store", "step": 20, "reserve": 2}')});
	ok(defined wait_for_lease($n, 30), "s$i holds a slot over its veth");
}
# the store is reached over the namespaces' veths only
like(scalar $store->safe_psql('postgres', q{SELECT string_agg(DISTINCT host(client_addr), ',' ORDER BY host(client_addr)) FROM pg_stat_activity WHERE client_addr IS NOT NULL}),
	qr/^10\.231\.\d\.2(,10\.231\.\d\.2)*$/, 'servers reach the store from their namespaces');

# ---- the clients
my $client = dirname(__FILE__) . '/nemesis_client.py';
for my $i (@servers)
{
	my $conninfo = 'host=' . $node{$i}->host . ' port=' . $node{$i}->port . ' dbname=postgres';
	for my $kind ('S', 'G')
	{
		push @clients, IPC::Run::start([ '/usr/bin/python3', $client, $kind, $conninfo, "$dir/out$kind$i", $stopfile, 5 ],
			'>', "$dir/client$kind$i.log", '2>&1');
	}
}

# ---- faults
my $NFT = 'nft add table inet nemesis; nft add chain inet nemesis in "{ type filter hook input priority 0; }"; '
  . 'nft add chain inet nemesis out "{ type filter hook output priority 0; }"';
sub drop_rules
{
	my ($ns, @rules) = @_;
	return agent("in $ns $NFT; " . join('; ', map { "nft add rule inet nemesis $_" } @rules));
}

sub heal_net
{
	agent("in $_ nft delete table inet nemesis 2>/dev/null; true") for ('store', map { "s$_" } @servers);
}

sub kill_node
{
	my ($n) = @_;
	my @pids = node_pids($n);
	kill 'KILL', @pids;
	$n->{_pid} = undef;
	poll_until(30, sub { !grep { kill 0, $_ } @pids }, 20);
}

sub restart
{
	my ($ns, $n, $env) = @_;
	for (1 .. 100)
	{
		return 1 if start_in($ns, $n, $env);
		usleep(200_000);
	}
	die "$ns did not start again";
}

my @store_events;    # [what, lost_ms, healed_ms]
my @log;
my $t_end = time() + $seconds;
my %count;
while (time() < $t_end)
{
	my $i = $servers[ int(rand(@servers)) ];
	my $kind = (qw(partition partition oneway_out oneway_in isolate_store pause skew kill_server kill_store))[ int(rand(9)) ];
	my $hold = 1 + rand(6);
	my $t0 = now_ms();
	my $what;
	$count{$kind}++;
	if ($kind eq 'partition')
	{
		$what = "partition s$i from the store for " . sprintf('%.1f', $hold) . ' s';
		drop_rules("s$i", "in ip saddr 10.231.$i.1 drop", "out ip daddr 10.231.$i.1 drop");
		usleep($hold * 1e6);
		heal_net();
	}
	elsif ($kind eq 'oneway_out')
	{
		$what = "drop s$i\'s packets to the store for " . sprintf('%.1f', $hold) . ' s';
		drop_rules("s$i", "out ip daddr 10.231.$i.1 drop");
		usleep($hold * 1e6);
		heal_net();
	}
	elsif ($kind eq 'oneway_in')
	{
		$what = "drop the store's packets to s$i for " . sprintf('%.1f', $hold) . ' s';
		drop_rules("s$i", "in ip saddr 10.231.$i.1 drop");
		usleep($hold * 1e6);
		heal_net();
	}
	elsif ($kind eq 'isolate_store')
	{
		$what = 'cut the store off from every server for ' . sprintf('%.1f', $hold) . ' s';
		drop_rules('store', 'in ip saddr 10.231.0.0/16 drop', 'out ip daddr 10.231.0.0/16 drop');
		usleep($hold * 1e6);
		heal_net();
		push @store_events, [ 'cut off', $t0, now_ms() ];
	}
	elsif ($kind eq 'pause')
	{
		my $p = $TTL + 1 + rand(2);
		$what = "pause s$i (SIGSTOP) for " . sprintf('%.1f', $p) . ' s, past the TTL';
		my @pids = node_pids($node{$i});
		kill 'STOP', @pids;
		usleep($p * 1e6);
		kill 'CONT', @pids;
	}
	elsif ($kind eq 'skew')
	{
		my $off = sprintf('%+.1f', (rand() < 0.5 ? -1 : 1) * (0.5 + rand(2)));
		$what = "skew s$i\'s clock by $off s for " . sprintf('%.1f', $hold) . ' s';
		set_fake_offset("$dir/clock$i", $off);
		usleep($hold * 1e6);
		set_fake_offset("$dir/clock$i", '+0');
	}
	elsif ($kind eq 'kill_server')
	{
		my $down = rand(3);
		$what = "kill -9 s$i, restart after " . sprintf('%.1f', $down) . ' s';
		kill_node($node{$i});
		usleep($down * 1e6);
		restart("s$i", $node{$i}, faked_env($i));
	}
	else
	{
		my $down = 1 + rand(3);
		$what = 'kill -9 the store, restart after ' . sprintf('%.1f', $down) . ' s';
		kill_node($store);
		usleep($down * 1e6);
		restart('store', $store, '');
		push @store_events, [ 'killed', $t0, now_ms() ];
	}
	push @log, sprintf('%6.1f s: %s', ($t0 - ($t_end - $seconds) * 1000) / 1000, $what);
	note($log[-1]);
	usleep((0.5 + rand(2)) * 1e6);
}

# ---- healed: every server issues again
heal_net();
set_fake_offset("$dir/clock$_", '+0') for @servers;
for my $i (@servers)
{
	ok(poll_until(60, sub {
		my ($ret, $out) = $node{$i}->psql('postgres', q{SELECT cosid_next('snow')});
		return $ret == 0 && $out =~ /^\d+$/;
	}, 200), "s$i issues ids again once every fault is healed");
}
sleep(2);
open(my $sfh, '>', $stopfile) or die;
close($sfh);
$_->finish for @clients;
@clients = ();
diag("nemesis: faults applied: " . join(', ', map { "$_ $count{$_}" } sort keys %count));

# ---- the checker
my (%seen_s, %seen_g, %errors);
my ($dup_s, $dup_g, $order_s, $order_g, $n_s, $n_g) = (0, 0, 0, 0, 0, 0);
my %ok_times;    # server -> [ms of each acknowledged id]
for my $i (@servers)
{
	my ($last_s, $last_g) = (-1, -1);
	for my $kind ('S', 'G')
	{
		open(my $fh, '<', "$dir/out$kind$i") or die "no output from the $kind client of s$i";
		while (my $line = <$fh>)
		{
			chomp $line;
			my ($k, $ms, $v) = split /\t/, $line;
			next unless defined $v;
			if ($k eq 'S')
			{
				$n_s++;
				$dup_s++ if $seen_s{$v}++;
				if ($v <= $last_s) { $order_s++; diag("s$i: id $v after $last_s") if $order_s <= 5; }
				$last_s = $v;
				push @{ $ok_times{$i} }, $ms;
			}
			elsif ($k eq 'G')
			{
				$n_g++;
				$dup_g++ if $seen_g{$v}++;
				if ($v <= $last_g) { $order_g++; diag("s$i: number $v after $last_g") if $order_g <= 5; }
				$last_g = $v;
			}
			else
			{
				$errors{$v}++;
			}
		}
		close($fh);
	}
}
diag("nemesis: $n_s ids and $n_g segment numbers acknowledged; errors by SQLSTATE: "
	  . join(', ', map { "$_ $errors{$_}" } sort keys %errors));
ok($n_s > 1000 && $n_g > 1000, 'the clients were acknowledged many ids and numbers');
is($dup_s, 0, 'no id acknowledged twice, across all servers');
is($dup_g, 0, 'no segment number acknowledged twice, across all servers');
is($order_s, 0, "each server's ids in increasing order");
is($order_g, 0, "each server's segment numbers in increasing order");

# ---- availability: after losing the store, and after it came back
for my $e (@store_events)
{
	my ($what, $lost, $healed) = @$e;
	my @fig;
	for my $i (@servers)
	{
		my @t = @{ $ok_times{$i} // [] };
		my ($last_before) = reverse grep { $_ >= $lost && $_ < $healed } @t;
		my ($first_after) = grep { $_ >= $healed } @t;
		push @fig, sprintf('s%d issued for %s, again %s after', $i,
			defined $last_before ? sprintf('%.2f s', ($last_before - $lost) / 1000) : 'no time',
			defined $first_after ? sprintf('%.2f s', ($first_after - $healed) / 1000) : 'never');
	}
	diag(sprintf('nemesis: store %s for %.1f s: %s', $what, ($healed - $lost) / 1000, join('; ', @fig)));
}
diag("nemesis: the schedule (seed $seed):\n" . join("\n", @log)) unless Test::More->builder->is_passing;

done_testing();
