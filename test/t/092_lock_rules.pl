# The lock rules (issue 30, item 3; ARCHITECTURE.md, Locks): no fsync and no
# call to the lease store while a backend holds a lock that issuing backends
# wait on (cosid_gen_hash_lock, the names index lock).  The code checks
# every fsync of its files and every store call against the locks it holds
# (util.c: cosid_check_lock_rules) and raises an internal error on a breach,
# so this test drives every path that makes one, while other sessions issue
# from time-based and segment generators, and passes only if none failed and
# the log shows no breach:
#
#  - defines, drops forgetting the name, and enough of them that pg_cosid/names
#    is compacted (a small cosid.max_names: records are forgotten too);
#  - the first issue of an identity no database holds (a copy of a database
#    whose owner was dropped);
#  - the slot worker's leased slot (acquire, renew, release at a restart) and
#    its durable window end, and a manual slot's pg_cosid/slot.state;
#  - segments fetched from the lease store;
#  - gen_ulid_monotonic()'s durable mark.
#
# To see it fail, move names.c's append under the index lock: every define
# then fails with "cosid made an fsync while holding the names index lock".
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use CosidTest;

my $store = lease_store('store');
my $node = cosid_node('locks', conf => lease_conf($store, extra => [ 'cosid.max_names = 64' ]));
my $manual = cosid_node('locks_manual');
$node->safe_psql('postgres', 'CREATE EXTENSION cosid');
ok(defined wait_for_lease($node), 'the server leases a slot from the store');
$node->safe_psql('postgres', q{
	SELECT cosid_define('hot', '{"strategy":"snowflake"}');
	SELECT cosid_define('seg_hot', '{"strategy":"segment","step":10}');
	SELECT cosid_define('shared', '{"strategy":"segment","distributor":"lease-store","step":5}');
});

# issuers all along: time-based and segment generators, monotonic ULIDs
my $issue = $node->basedir . '/issue.sql';
PostgreSQL::Test::Utils::append_to_file($issue,
	"SELECT cosid_next('hot'), cosid_next('seg_hot'), gen_ulid_monotonic();\n");
my ($out, $err) = ('', '');
my $issuers = IPC::Run::start(
	[ 'pgbench', '-n', '-c', 2, '-j', 2, '-T', 25, '-f', $issue, '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);

# defines, drops that forget, compaction and forgetting (max_names 64)
my $churn = '';
for my $i (1 .. 120)
{
	$churn .= "SELECT cosid_define('c$i', '{\"strategy\":\"snowflake\"}'); SELECT cosid_next('c$i');\n";
	$churn .= "SELECT cosid_drop('c$i', forget_history => true);\n" if $i % 3 == 0;
}
my ($ret, $o, $e) = $node->psql('postgres', $churn, on_error_stop => 1);
is($ret, 0, '120 defines, 40 drops forgetting their names: none failed') or diag($e);
ok(-e $node->data_dir . '/pg_cosid/names', '... pg_cosid/names is there');

# segments from the lease store, many fetches
($ret, $o, $e) = $node->psql('postgres', q{SELECT count(*) FROM (SELECT cosid_next('shared') FROM generate_series(1, 500)) x});
is($o, '500', '500 numbers of a lease-store segment generator (100 fetches)') or diag($e);

# the first issue of an identity no database holds: a copy of a database
# that is then dropped, so the copy claims its generators' identities
$node->safe_psql('postgres', q{CREATE DATABASE orig});
$node->safe_psql('orig', q{CREATE EXTENSION cosid; SELECT cosid_define('t1', '{"strategy":"snowflake"}'); SELECT cosid_next('t1')});
$node->safe_psql('postgres', q{CREATE DATABASE copy TEMPLATE orig; DROP DATABASE orig});
($ret, $o, $e) = $node->psql('copy', q{SELECT cosid_next('t1') > 0});
is($o, 't', "a copy issues with the identity its dropped original held (it claims it)") or diag($e);

# a restart of the leased server (release, acquire) and of the manual one
$node->restart;
ok(defined wait_for_lease($node), 'after a restart the server leases a slot again');
$manual->safe_psql('postgres', q{CREATE EXTENSION cosid; SELECT cosid_define('m', '{"strategy":"snowflake"}')});
$manual->restart;
is($manual->safe_psql('postgres', q{SELECT cosid_next('m') > 0, gen_ulid_monotonic() IS NOT NULL}), 't|t',
	'the manual slot issues after its restart');
$issuers->finish;
is($node->safe_psql('postgres', q{SELECT cosid_next('hot') > 0}), 't', 'the leased server issues');

my $breaches = 0;
for my $n ($node, $manual)
{
	my $log = slurp_file($n->logfile);
	my @lines = $log =~ /(cosid made [^\n]*)/g;
	$breaches += @lines;
	diag($_) for @lines;
}
is($breaches, 0, 'no fsync and no store call was made under a lock issuing backends wait on');
like(slurp_file($node->logfile), qr/cosid.max_names \(64\) is full/, 'the names index filled up and forgot records (compaction and forgetting ran)');

done_testing();
