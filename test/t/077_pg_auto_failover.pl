# pg_auto_failover running cosid, failed over under load: the recipe of
# docs/operations.md's "High availability: Patroni and pg_auto_failover", with its
# settings.
#
# A monitor and two nodes, n1 and n2.  n1's data directory is made first
# (initdb) with cosid preloaded and one manual slot (cosid.slot = 1) in its
# postgresql.conf, then registered with `pg_autoctl create postgres`; n2
# is made by pg_autoctl from n1 (pg_basebackup copies the settings).  Both
# in the replication quorum (pg_auto_failover's default), so the primary
# commits synchronously (synchronous_standby_names = 'ANY 1 (...)').
#
# Load all along: two clients insert 20 rows a statement through a
# multi-host conninfo (target_session_attrs=read-write), each recording
# every id it was acknowledged.  `pg_autoctl perform switchover` (n1 -> n2);
# once n1 is n2's secondary again, a hard kill of n2 (SIGKILL of its
# pg_autoctl, its postmaster and all its processes): the monitor promotes
# n1.  Then: no id acknowledged twice, no unique violation, every
# acknowledged row on the new primary, and each new primary's ids above
# every id acknowledged before it took over.  The monitor's health checks
# are made faster than the defaults (a failover in seconds rather than
# about 30 s).
#
# Runs where pg_auto_failover is installed: Debian bookworm packages 2.0
# for PostgreSQL 15 only (postgresql-15-auto-failover, pg-auto-failover-cli);
# it skips elsewhere.  About 35 s on 2 cores.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;
use CosidHA;

my $missing = tool_missing('pg_autoctl');
plan skip_all => $missing if $missing;
my $pkglib = `pg_config --pkglibdir`;
chomp $pkglib;
my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan skip_all => "pg_auto_failover's monitor extension is not installed for PostgreSQL $major "
  . "(Debian bookworm's postgresql-15-auto-failover is built for PostgreSQL 15 only)"
  unless -f "$pkglib/pgautofailover.so";
plan skip_all => '/usr/bin/python3 with psycopg2 is needed for the clients'
  unless system('/usr/bin/python3', '-c', 'import psycopg2') == 0;

my $t0 = Time::HiRes::time();
# (kept with the other logs when the test fails)
my $dir = "$PostgreSQL::Test::Utils::tmp_check/077_pg_auto_failover";
mkdir($dir);
my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $bindir = `pg_config --bindir`;
chomp $bindir;
# pg_autoctl keeps its configuration and state under these
$ENV{XDG_CONFIG_HOME} = "$dir/config";
$ENV{XDG_DATA_HOME} = "$dir/share";
$ENV{XDG_RUNTIME_DIR} = "$dir/run";
$ENV{PGHOST} = '127.0.0.1';
delete $ENV{PGPORT};
mkdir($ENV{$_}) for qw(XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR);

my %n = map { ($_ => { name => $_, port => PostgreSQL::Test::Cluster::get_free_port(), data => "$dir/$_" }) }
  ('monitor', 'n1', 'n2');
my $mport = $n{monitor}{port};
my @common = ('--pgctl', "$bindir/pg_ctl", '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl');

sub autoctl
{
	my @cmd = ('pg_autoctl', @_);
	my ($out, $err) = ('', '');
	IPC::Run::run(\@cmd, '>', \$out, '2>', \$err, IPC::Run::timeout(120));
	my $ok = $? == 0;
	diag("@cmd failed:\n$out\n$err") unless $ok;
	return $ok;
}

# ---- the monitor, its health checks faster than the defaults
ha_spawn('monitor', "$dir/monitor.log", 'pg_autoctl', 'create', 'monitor', '--pgdata', $n{monitor}{data},
	'--pgport', $mport, @common, '--run');
ok( poll_until(60, sub { (tcp_sql($mport, 'SELECT count(*) FROM pgautofailover.node', db => 'pg_auto_failover'))[0] == 0 }),
	'the monitor runs');
tcp_sql_ok($mport, q{
	ALTER SYSTEM SET pgautofailover.health_check_period = 1000;
	ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000;
	ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1;
	ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500;
	ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 3000;
	ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 5000;
	SELECT pg_reload_conf();
}, db => 'pg_auto_failover');
my $monitor_uri = "postgres://autoctl_node\@127.0.0.1:$mport/pg_auto_failover?sslmode=disable";

# the node's reported and goal states, from the monitor
sub state_of
{
	my ($name) = @_;
	my ($rc, $out) = tcp_sql($mport,
		"SELECT reportedstate || '/' || goalstate FROM pgautofailover.node WHERE nodename = '$name'",
		db => 'pg_auto_failover');
	return $rc == 0 ? $out : '';
}

sub is_primary { return state_of($_[0]) eq 'primary/primary' }

# ---- n1: made here with cosid's settings, then registered
system('initdb', '-D', $n{n1}{data}, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync') == 0
  or die 'initdb failed';
open(my $fh, '>>', "$n{n1}{data}/postgresql.conf") or die;
print $fh "shared_preload_libraries = 'cosid'\ncosid.slot = 1\nsynchronous_commit = on\n"
  . "unix_socket_directories = '$sockdir'\nfsync = off\n";
close($fh);
sub start_node
{
	my ($name) = @_;
	$n{$name}{pid} = ha_spawn("pg_autoctl $name", "$dir/$name.log", 'pg_autoctl', 'create', 'postgres',
		'--pgdata', $n{$name}{data}, '--pgport', $n{$name}{port}, '--name', $name, '--monitor', $monitor_uri,
		@common, '--run');
}
start_node('n1');
ok(poll_until(90, sub { state_of('n1') eq 'single/single' }), 'n1 is registered, alone (single)');
my ($p1, $p2) = ($n{n1}{port}, $n{n2}{port});
tcp_sql_ok($p1, q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL,
		port int NOT NULL DEFAULT inet_server_port());
});
is(tcp_sql_ok($p1, 'SELECT mode, slot, state FROM cosid_slot()'), 'manual|1|active', 'n1 issues with slot 1');

# (pg_autoctl's pg_basebackup waits for a spread checkpoint: little to write)
tcp_sql_ok($p1, 'CHECKPOINT');
start_node('n2');
ok(poll_until(120, sub { is_primary('n1') && state_of('n2') eq 'secondary/secondary' }),
	'n2 joins as the secondary');
sub is_sync_of
{
	my ($standby, $primary) = @_;
	my ($rc, $out) = tcp_sql($n{$primary}{port},
		"SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')");
	return is_primary($primary) && state_of($standby) eq 'secondary/secondary' && $rc == 0 && $out eq '1';
}
ok(poll_until(60, sub { is_sync_of('n2', 'n1') }), 'n2 replicates synchronously');
is(tcp_sql_ok($p2, 'SELECT pg_is_in_recovery(), mode, slot, state FROM cosid_slot()'), 't|manual|1|recovery',
	'n2, a standby, has the same manual slot and issues nothing');
note(sprintf('formation ready after %.1f s', Time::HiRes::time() - $t0));

# ---- load
is(tcp_sql_ok($p1, 'SHOW synchronous_standby_names'), 'ANY 1 (pgautofailover_standby_2)',
	'the primary waits for n2 at each commit (pg_auto_failover\'s replication quorum)');
my $conninfo = "host=127.0.0.1,127.0.0.1 port=$p1,$p2 dbname=postgres target_session_attrs=read-write connect_timeout=2";
my @clients = map {
	ha_client_start("c$_", $dir, $conninfo,
		"INSERT INTO t (who) SELECT 'c$_' FROM generate_series(1, 20) RETURNING id, port")
} 1 .. 2;
ok(ha_wait_rows(30, {}, \@clients), 'both clients have ids acknowledged');
sub counts { return { map { ($_->{name} => scalar(ha_client_rows($_))) } @_ } }

# ---- switchover n1 -> n2, a second into the load
sleep(1);
my $t_sw = Time::HiRes::time();
ok(autoctl('perform', 'switchover', '--pgdata', $n{n1}{data}, '--wait', '90'), 'pg_autoctl perform switchover');
ok(poll_until(60, sub { is_primary('n2') }), 'n2 is the primary');
note(sprintf('switchover: n2 primary after %.1f s', Time::HiRes::time() - $t_sw));
ok(ha_wait_rows(60, {}, \@clients, sub { $_[0][1] == $p2 }), 'both clients are acknowledged by n2');
ok(poll_until(90, sub { is_sync_of('n1', 'n2') }), 'n1 is the synchronous secondary of n2');

# ---- hard kill of n2: pg_autoctl, the postmaster and its children
sleep(1);
my $pm = postmaster_pid($n{n2}{data});
my @victims = ($n{n2}{pid}, $pm, child_pids($pm), child_pids($n{n2}{pid}));
my $t_kill = Time::HiRes::time();
kill('KILL', -$n{n2}{pid});    # its process group
kill('KILL', @victims);
waitpid($n{n2}{pid}, 0);
note('killed n2 with SIGKILL');
my $at_kill = counts(@clients);
ok(poll_until(90, sub { state_of('n1') =~ m{^(wait_primary|primary)/} }), 'the monitor promotes n1');
note(sprintf('failover: n1 %s %.1f s after the kill', state_of('n1'), Time::HiRes::time() - $t_kill));
ok(ha_wait_rows(60, $at_kill, \@clients, sub { $_[0][1] == $p1 }), 'both clients are acknowledged by n1');
ha_clients_stop(@clients);

# ---- the ids: phases 1 n1 before the switchover, 2 n2 until the kill, 3 n1
# after the kill
ha_check_ids(
	$p1, \@clients,
	sub {
		my ($name, $i, $port) = @_;
		return $port == $p2 ? 2 : $i < $at_kill->{$name} ? 1 : 3;
	},
	{ 2 => 'after the switchover n2', 3 => 'after the kill n1' },
	"$dir/acked.copy");

ha_stop_all();
note(sprintf('077 took %.1f s', Time::HiRes::time() - $t0));
done_testing();
