# Patroni (with one etcd) running cosid, and serving as the lease store of
# other servers, failed over under load: the recipe of docs/operations.md's "High
# availability: Patroni and pg_auto_failover", with its settings.
#
# The Patroni cluster: members pg1 and pg2, synchronous_mode (pg2 is the
# synchronous standby), cosid preloaded and one manual slot (cosid.slot = 1)
# for the whole cluster, set in the DCS so that every member has it; only
# the leader issues, and a promoted member starts its window above the end
# it replayed.  Its database is also the lease store of three other servers
# (s1, s2 from the start, s3 after the failover) in lease mode, whose
# cosid.lease_store lists both members with target_session_attrs=read-write,
# each with a snowflake generator on its leased slot and a segment
# generator with "distributor": "lease-store".
#
# Load all along: two clients insert 20 rows a statement through a
# multi-host conninfo (target_session_attrs=read-write) into the cluster,
# one client into each lease-mode server; each client records every id it
# was acknowledged.  A switchover (REST API) pg1 -> pg2; once pg1 is pg2's
# synchronous standby, a hard kill of pg2 (SIGKILL of its Patroni, its
# postmaster and all its processes, as a machine that dies): pg1 takes over;
# s3 starts leasing; pg2's Patroni starts again (pg_rewind) and pg2 rejoins
# as the synchronous standby; a switchover back to pg2.  Then:
#  - the cluster's ids: none acknowledged twice, none lost (every
#    acknowledged row is on the leader), no unique violation, and each new
#    leader's ids are above every id acknowledged before it took over;
#  - the store: the leases of s1 and s2 kept their slots and fencing tokens
#    through the three failovers, and each slot's recorded window end is
#    above every id issued with it; s3, leasing after the kill, gets a slot
#    neither holds; a renewal with another token or from another role is
#    refused (55000); the segment counter is at or above every number handed
#    out; no number and no id twice across the three servers, each server's
#    ids carry only its slot.
# About 40 s on 2 cores.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;
use CosidHA;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
plan skip_all => "the Patroni recipe runs on one version, PostgreSQL 18 and later, to keep CI short (this is $major)"
  unless $major >= 18;
my $missing = tool_missing('patroni', 'etcd');
plan skip_all => $missing if $missing;
eval { require HTTP::Tiny; 1 } or plan skip_all => 'the Perl module HTTP::Tiny is missing';
plan skip_all => '/usr/bin/python3 with psycopg2 is needed for the clients'
  unless system('/usr/bin/python3', '-c', 'import psycopg2') == 0;

my $t0 = Time::HiRes::time();
# (kept with the other logs when the test fails)
my $dir = "$PostgreSQL::Test::Utils::tmp_check/076_patroni";
mkdir($dir);
my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $user = getpwuid($<);
my $bindir = `pg_config --bindir`;
chomp $bindir;

# ---- etcd, one member
my ($etcd_client, $etcd_peer) = map { PostgreSQL::Test::Cluster::get_free_port() } 1 .. 2;
ha_spawn('etcd', "$dir/etcd.log", 'etcd', '--name', 'e1', '--data-dir', "$dir/etcd",
	'--listen-client-urls', "http://127.0.0.1:$etcd_client",
	'--advertise-client-urls', "http://127.0.0.1:$etcd_client",
	'--listen-peer-urls', "http://127.0.0.1:$etcd_peer",
	'--initial-advertise-peer-urls', "http://127.0.0.1:$etcd_peer",
	'--initial-cluster', "e1=http://127.0.0.1:$etcd_peer");
ok(poll_until(30, sub { http_status("http://127.0.0.1:$etcd_client/health") == 200 }), 'etcd answers');

# ---- Patroni: the configuration of docs/operations.md's recipe, with this test's
# ports and directories
my %m;
for my $name ('pg1', 'pg2')
{
	$m{$name} = {
		name => $name,
		pg => PostgreSQL::Test::Cluster::get_free_port(),
		rest => PostgreSQL::Test::Cluster::get_free_port(),
		data => "$dir/$name/data" };
	mkdir("$dir/$name");
}

sub patroni_yaml
{
	my ($n) = @_;
	return <<"EOF";
scope: cosid
name: $n->{name}
restapi:
  listen: 127.0.0.1:$n->{rest}
  connect_address: 127.0.0.1:$n->{rest}
etcd3:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        shared_preload_libraries: cosid
        cosid.slot: 1
        synchronous_commit: 'on'
        wal_log_hints: 'on'
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$n->{pg}
  connect_address: 127.0.0.1:$n->{pg}
  data_dir: $n->{data}
  basebackup:
    - checkpoint: fast
  bin_dir: $bindir
  pgpass: $dir/$n->{name}/pgpass
  authentication:
    superuser:
      username: $user
    replication:
      username: replicator
    rewind:
      username: $user
  parameters:
    unix_socket_directories: '$sockdir'
    logging_collector: 'on'
    log_directory: '$dir/$n->{name}'
    log_filename: 'postgresql.log'
EOF
}

sub start_patroni
{
	my ($n) = @_;
	my $yml = "$dir/$n->{name}/patroni.yml";
	open(my $fh, '>', $yml) or die "could not write $yml: $!";
	print $fh patroni_yaml($n);
	close($fh);
	$n->{pid} = ha_spawn("patroni $n->{name}", "$dir/$n->{name}/patroni.log", 'patroni', $yml);
}

sub is_leader
{
	my ($n) = @_;
	return http_status("http://127.0.0.1:$n->{rest}/primary") == 200;
}

# whether $standby is the synchronous standby of $leader (Patroni's view and
# the leader's pg_stat_replication)
sub is_sync_of
{
	my ($standby, $leader) = @_;
	return 0 unless http_status("http://127.0.0.1:$standby->{rest}/sync") == 200;
	my ($rc, $out) = tcp_sql($leader->{pg},
		"SELECT count(*) FROM pg_stat_replication WHERE application_name = '$standby->{name}' AND sync_state = 'sync'");
	return $rc == 0 && $out eq '1';
}

start_patroni($m{pg1});
ok(poll_until(90, sub { is_leader($m{pg1}) }), 'pg1 bootstraps and leads');
my ($pg1, $pg2) = ($m{pg1}{pg}, $m{pg2}{pg});

# the application's generator and the lease store, on the leader
tcp_sql_ok($pg1, q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL,
		port int NOT NULL DEFAULT inet_server_port());
	CREATE ROLE cosid_servers NOLOGIN;
	GRANT USAGE ON SCHEMA cosid TO cosid_servers;
	GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
	  cosid.lease_renew(text, integer, text, uuid, bigint, interval),
	  cosid.lease_release(text, integer, text, uuid, bigint),
	  cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO cosid_servers;
	CREATE ROLE cosid_srv1 LOGIN IN ROLE cosid_servers;
	CREATE ROLE cosid_srv2 LOGIN IN ROLE cosid_servers;
	CREATE ROLE cosid_srv3 LOGIN IN ROLE cosid_servers;
	-- 1.4: the group shares no counter by itself; the store's superuser grants it
	INSERT INTO cosid.segment_counter_grant (namespace, database, name, role)
	SELECT 'default', 'postgres', 'inv', r FROM unnest(ARRAY['cosid_srv1', 'cosid_srv2', 'cosid_srv3']) r;
});
is(tcp_sql_ok($pg1, 'SELECT mode, slot, state FROM cosid_slot()'), 'manual|1|active',
	'the leader issues with the manual slot 1 of the DCS parameters');

start_patroni($m{pg2});
ok(poll_until(90, sub { is_sync_of($m{pg2}, $m{pg1}) }), 'pg2 joins as the synchronous standby');
is(tcp_sql_ok($pg2, 'SELECT pg_is_in_recovery(), mode, slot, state FROM cosid_slot()'), 't|manual|1|recovery',
	'pg2, a standby, has the same manual slot and issues nothing');
note(sprintf('cluster ready after %.1f s', Time::HiRes::time() - $t0));

# ---- the lease-mode servers
my $store = "host=127.0.0.1,127.0.0.1 port=$pg1,$pg2 dbname=postgres target_session_attrs=read-write connect_timeout=2";
my %s;

sub lease_server
{
	my ($name, $i) = @_;
	my $node = cosid_node($name,
		conf => [ "cosid.slot = 'lease'", "cosid.lease_store = '$store user=cosid_srv$i'", 'cosid.lease_ttl = 30' ]);
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		SELECT cosid_define('inv', '{"strategy":"segment","distributor":"lease-store","step":100,"reserve":4}');
		CREATE TABLE u (id bigint PRIMARY KEY DEFAULT cosid_next('g'), n bigint NOT NULL UNIQUE DEFAULT cosid_next('inv'),
			who text NOT NULL);
	});
	my $slot = wait_for_lease($node, 30);
	ok(defined $slot, "$name leases slot " . ($slot // 'none') . ' from the Patroni cluster');
	$s{$name} = { node => $node, slot => $slot, name => $name };
	return $s{$name};
}
lease_server('s1', 1);
lease_server('s2', 2);
my $leases_before = tcp_sql_ok($pg1,
	"SELECT string_agg(slot || ':' || instance || ':' || token, ',' ORDER BY slot) FROM cosid.lease WHERE namespace = 'default'");

# ---- load
my $cluster = "host=127.0.0.1,127.0.0.1 port=$pg1,$pg2 dbname=postgres target_session_attrs=read-write connect_timeout=2";
my @cclients = map {
	ha_client_start("c$_", $dir, $cluster,
		"INSERT INTO t (who) SELECT 'c$_' FROM generate_series(1, 20) RETURNING id, port")
} 1 .. 2;
my @lclients;

sub lease_client
{
	my ($srv) = @_;
	my $n = $srv->{node};
	push @lclients,
	  ha_client_start("l_$srv->{name}", $dir, 'host=' . $n->host . ' port=' . $n->port . ' dbname=postgres',
		"INSERT INTO u (who) SELECT '$srv->{name}' FROM generate_series(1, 20) RETURNING id, n");
}
lease_client($s{$_}) for ('s1', 's2');
my @all = (@cclients, @lclients);
ok(ha_wait_rows(30, {}, \@all), 'every client has ids acknowledged');

sub counts { return { map { ($_->{name} => scalar(ha_client_rows($_))) } @_ } }

# ---- switchover pg1 -> pg2, a second into the load
sleep(1);
my $t_sw = Time::HiRes::time();
my ($st, $body) = http_post("http://127.0.0.1:$m{pg1}{rest}/switchover", '{"leader": "pg1", "candidate": "pg2"}');
is($st, 200, 'switchover pg1 -> pg2 accepted by the REST API') or diag($body);
ok(poll_until(60, sub { is_leader($m{pg2}) && !is_leader($m{pg1}) }), 'pg2 leads');
note(sprintf('switchover: pg2 leads after %.1f s', Time::HiRes::time() - $t_sw));
my $at_sw = counts(@all);
ok(ha_wait_rows(60, $at_sw, \@cclients, sub { $_[0][1] == $pg2 }),
	'after the switchover both cluster clients are acknowledged by pg2');
ok(ha_wait_rows(60, $at_sw, \@lclients), 'the lease-mode servers issue on after the store switched over');
ok(poll_until(90, sub { is_sync_of($m{pg1}, $m{pg2}) }), 'pg1 rejoins as the synchronous standby of pg2');
note(sprintf('pg1 synchronous %.1f s after the switchover', Time::HiRes::time() - $t_sw));

# ---- hard kill of the leader pg2 (Patroni, the postmaster and its
# children), a second later
sleep(1);
my $pm = postmaster_pid($m{pg2}{data});
my @victims = ($m{pg2}{pid}, $pm, child_pids($pm));
my $t_kill = Time::HiRes::time();
kill('KILL', @victims);
waitpid($m{pg2}{pid}, 0);
note('killed pg2 (' . scalar(@victims) . ' processes) with SIGKILL');
my $at_kill = counts(@all);
ok(poll_until(60, sub { is_leader($m{pg1}) }), 'pg1 takes over');
note(sprintf('failover: pg1 leads %.1f s after the kill', Time::HiRes::time() - $t_kill));
ok(ha_wait_rows(60, $at_kill, \@cclients, sub { $_[0][1] == $pg1 }),
	'after the kill both cluster clients are acknowledged by pg1');
ok(ha_wait_rows(60, $at_kill, \@lclients), 'the lease-mode servers issue on after the store failed over');

# a server that starts leasing now, from the new leader
my $s3 = lease_server('s3', 3);
ok(defined $s3->{slot} && $s3->{slot} != $s{s1}{slot} && $s3->{slot} != $s{s2}{slot},
	's3 gets a slot that neither s1 nor s2 holds: their leases survived the failover');
lease_client($s3);
ok(ha_wait_rows(30, {}, [ $lclients[-1] ]), 's3 issues');

# ---- pg2 back (Patroni rewinds it with pg_rewind), then a switchover to it
my $t_back = Time::HiRes::time();
start_patroni($m{pg2});
ok(poll_until(90, sub { is_sync_of($m{pg2}, $m{pg1}) }), 'pg2, rewound, rejoins as the synchronous standby of pg1');
note(sprintf('pg2 synchronous %.1f s after its Patroni started again', Time::HiRes::time() - $t_back));
is(tcp_sql_ok($pg2, 'SELECT pg_is_in_recovery(), mode, slot, state FROM cosid_slot()'), 't|manual|1|recovery',
	'pg2, a standby again, issues nothing');
my $at_back = counts(@all);
($st, $body) = http_post("http://127.0.0.1:$m{pg1}{rest}/switchover", '{"leader": "pg1", "candidate": "pg2"}');
is($st, 200, 'switchover pg1 -> pg2 accepted by the REST API') or diag($body);
ok(poll_until(60, sub { is_leader($m{pg2}) }), 'pg2 leads again');
ok(ha_wait_rows(60, $at_back, \@cclients, sub { $_[0][1] == $pg2 }),
	'after the switchover back both cluster clients are acknowledged by pg2');
ok(ha_wait_rows(60, counts(@lclients), \@lclients), 'the lease-mode servers issue on after the switchover back');
ha_clients_stop(@cclients, @lclients);
note(sprintf('load stopped %.1f s after the start', Time::HiRes::time() - $t0));

# ---- the cluster's ids: phases 1 pg1 before the switchover, 2 pg2 until
# the kill, 3 pg1 after the kill, 4 pg2 after the switchover back
ha_check_ids(
	$pg2, \@cclients,
	sub {
		my ($name, $i, $port) = @_;
		return $port == $pg1 ? ($i < $at_kill->{$name} ? 1 : 3) : ($i < $at_back->{$name} ? 2 : 4);
	},
	{ 2 => 'after the switchover pg2', 3 => 'after the kill pg1', 4 => 'after the switchover back pg2' },
	"$dir/acked.copy");

# ---- the store (on its leader, pg2) and the lease-mode servers
my $lead = $pg2;
is( tcp_sql_ok($lead,
		"SELECT string_agg(slot || ':' || instance || ':' || token, ',' ORDER BY slot) FROM cosid.lease "
		  . "WHERE namespace = 'default' AND slot IN ($s{s1}{slot}, $s{s2}{slot})"),
	$leases_before, 's1 and s2 kept their slots and fencing tokens through the three failovers');
my $issued = "$dir/leased.copy";
unlink($issued);
tcp_sql_ok($lead, 'CREATE TABLE leased (srv text, id bigint, n bigint, node int, ms bigint)');
for my $name ('s1', 's2', 's3')
{
	my $f = "$dir/$name.copy";
	$s{$name}{node}->safe_psql('postgres', qq{
		COPY (SELECT who, id, n, (cosid_unpack('g', id)).node,
				(extract(epoch FROM (cosid_unpack('g', id)).time) * 1000)::bigint FROM u) TO '$f'});
	tcp_sql_ok($lead, "COPY leased FROM '$f'");
}
my ($rows, $dist_id, $dist_n) = split /\|/, tcp_sql_ok($lead, 'SELECT count(*), count(DISTINCT id), count(DISTINCT n) FROM leased');
ok($rows > 0, "the lease-mode servers issued $rows ids and numbers");
is($dist_id, $rows, 'no snowflake id twice across s1, s2, s3');
is($dist_n, $rows, 'no segment number twice across s1, s2, s3');
is( tcp_sql_ok($lead, q{SELECT string_agg(srv || ':' || nodes, ',' ORDER BY srv) FROM
		(SELECT srv, string_agg(DISTINCT node::text, '/') AS nodes FROM leased GROUP BY srv) s}),
	join(',', map { "$_:$s{$_}{slot}" } 's1', 's2', 's3'),
	'each server issued only with the slot it leased');
is( tcp_sql_ok($lead, q{
		SELECT count(*) FROM (SELECT node, max(ms) AS top FROM leased GROUP BY node) i
		JOIN cosid.lease l ON l.namespace = 'default' AND l.slot = i.node
		WHERE i.top >= l.window_end}),
	'0', 'the leader records a window end above every id issued with each slot');
is( tcp_sql_ok($lead, q{
		SELECT (SELECT max(n) FROM leased) <= last_number FROM cosid.segment_counter
		WHERE namespace = 'default' AND name = 'inv'}),
	't', 'the segment counter on the leader is at or above every number handed out');

# fencing on the leader
my ($slot1, $inst1, $tok1) = split /\|/, tcp_sql_ok($lead,
	"SELECT slot, instance, token FROM cosid.lease WHERE namespace = 'default' AND slot = $s{s1}{slot}");
my ($rc, $out, $err) = tcp_sql($lead,
	"\\set VERBOSITY verbose\nSELECT cosid.lease_renew('default', $slot1, '$inst1', gen_random_uuid(), 0, '30 s')",
	user => 'cosid_srv1');
like($err, qr/ERROR:  55000: cosid lease of slot $slot1 .* is no longer held/,
	"a renewal of s1's lease with another token is refused (55000)");
($rc, $out, $err) = tcp_sql($lead,
	"\\set VERBOSITY verbose\nSELECT cosid.lease_renew('default', $slot1, '$inst1', '$tok1', 0, '30 s')",
	user => 'cosid_srv2');
like($err, qr/ERROR:  55000: /, "a renewal of s1's lease by another server's role, with its token, is refused (55000)");
like($s{s1}{node}->safe_psql('postgres', 'SELECT state, store_connected FROM cosid_slot()'), qr/^active\|t$/,
	's1 is connected to the new leader with its lease active');

$_->{node}->stop for values %s;
ha_stop_all();
note(sprintf('076 took %.1f s', Time::HiRes::time() - $t0));
done_testing();
