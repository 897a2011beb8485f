# Two servers and their own roles on one lease store (issue 19, items 3 and
# 5): what another server's role, or a role with only CONNECT on the store,
# or a role of another database can do against a server's lease and shared
# counters.  The store is set up as docs/operations.md "Several servers" says: roles
# srv_a and srv_b (one per server, each logging in as its own), members of
# cosid_servers, which may execute the lease functions and segment_acquire.
#
# Each attack below worked on 1.2:
#  1. srv_b calls lease_acquire with server a's instance id (1.2: it got a's
#     live slot with a fresh token, and a lost its lease);
#  2. srv_b renews a slot with a window end in the year 9999, and renews or
#     releases a's lease with a's token (1.2: the slot's holders could never
#     issue again);
#  3. a role with only CONNECT on the store takes
#     pg_advisory_lock(hashtext('cosid.lease'), hashtext(namespace)) (1.2:
#     every server of the namespace stopped within a second);
#  4. a role of another database of server a defines the same generator name
#     with "distributor": "lease-store" and "start": 2^62 (1.2: the shared
#     counter moved there, and the int generator of that name failed for
#     good); a generator of that name in a database of the same name on
#     server b owned by another role does the same; server b logging in as a
#     store role that shares no role with srv_a uses a counter srv_a made.
#     On 1.3: server b, logging in as srv_b of the same group as srv_a, used
#     srv_a's counter without a grant of the store's superuser, and could
#     re-base it (start 9223372036754775806): 1.4 refuses both (42501), and
#     shares the counter once the store's superuser grants it to srv_b.
#  5. (not an attack) a copy of a database and the database renamed go on
#     with its counters: a counter is named after the database as it was
#     called when the generator was defined.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

my $ttl = 3;
my $store = lease_store('store');
$store->safe_psql('postgres', q{
	CREATE ROLE cosid_servers NOLOGIN;
	GRANT USAGE ON SCHEMA cosid TO cosid_servers;
	GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
		cosid.lease_renew(text, integer, text, uuid, bigint, interval),
		cosid.lease_release(text, integer, text, uuid, bigint),
		cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO cosid_servers;
	CREATE ROLE srv_a LOGIN IN ROLE cosid_servers;
	CREATE ROLE srv_b LOGIN IN ROLE cosid_servers;
	-- a store role of another tenant: EXECUTE of its own, no role shared with srv_a
	CREATE ROLE srv_c LOGIN;
	GRANT USAGE ON SCHEMA cosid TO srv_c;
	GRANT EXECUTE ON FUNCTION cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO srv_c;
	-- a role that may only connect
	CREATE ROLE intruder LOGIN;
});

sub store_connstr
{
	my ($user) = @_;
	return 'host=' . $store->host . ' port=' . $store->port . " dbname=postgres user=$user";
}

# psql on the store as a role: (stdout) or (undef, SQLSTATE, message)
sub store_as
{
	my ($user, $sql) = @_;
	my ($ret, $out, $err) = $store->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ], on_error_stop => 1);
	return ($out) if $ret == 0;
	return (undef, $1, $2) if $err =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/;
	return (undef, '', $err);
}

sub server
{
	my ($name, $user) = @_;
	my $node = cosid_node($name, conf => [
		"cosid.slot = 'lease'",
		"cosid.lease_store = '" . store_connstr($user) . "'",
		"cosid.lease_ttl = $ttl",
		"cosid.instance_id = 'server-$name'" ]);
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
	});
	return $node;
}

my $sa = server('a', 'srv_a');
my $sb = server('b', 'srv_b');
my $slot_a = wait_for_lease($sa);
my $slot_b = wait_for_lease($sb);
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b, "servers a and b lease slots $slot_a and $slot_b");

# the store's row of a slot: instance, holder, token, window_end, alive, renewed_at (ms)
sub lease_row
{
	my ($slot) = @_;
	return split /\|/, $store->safe_psql('postgres', qq{
		SELECT coalesce(instance, 'NULL'), coalesce(holder, 'NULL'), token, window_end, expires_at > now(),
			   (extract(epoch FROM renewed_at) * 1000)::bigint
		FROM cosid.lease WHERE namespace = 'default' AND slot = $slot}), -1;
}

my ($inst_a, $holder_a, $token_a) = lease_row($slot_a);
is("$inst_a|$holder_a", 'server-a|srv_a', 'the store records server a\'s lease as held by role srv_a');

# Both servers issue for $secs seconds: (ids issued by a, by b, failures, first failure)
sub issue_for
{
	my ($secs) = @_;
	my ($na, $nb, $fails, $first) = (0, 0, 0, undef);
	my $t0 = now_ms();
	while (now_ms() - $t0 < $secs * 1000)
	{
		for my $pair ([ $sa, \$na ], [ $sb, \$nb ])
		{
			my ($node, $n) = @$pair;
			my ($state, $msg) = psql_error($node, 'postgres', q{SELECT count(cosid_next('g')) FROM generate_series(1, 50)});
			if (defined $state) { $fails++; $first //= "$state: $msg"; }
			else { $$n += 50; }
		}
		usleep(100_000);
	}
	return ($na, $nb, $fails, $first);
}

# ---- 1. another server's role acquires with server a's instance id
my ($stolen) = store_as('srv_b',
	q{SELECT slot || '|' || token FROM cosid.lease_acquire('default', 'server-a', 10, '1 minute')});
my ($stolen_slot, $stolen_token) = split /\|/, ($stolen // '|');
ok(defined $stolen, 'srv_b may call lease_acquire with server a\'s instance id');
isnt($stolen_slot, $slot_a, 'but it does not get server a\'s live slot, only a free one');
my (undef, $holder_now, $token_now) = lease_row($slot_a);
is("$holder_now|$token_now", "srv_a|$token_a", 'server a\'s lease keeps its holder and its token');
my $log_from = -s $sa->logfile;
my ($na, $nb, $fails, $first) = issue_for(2 * $ttl);
is($fails, 0, 'server a (and b) go on issuing for two TTLs') or diag("first failure: $first");
unlike(slurp_file($sa->logfile, $log_from), qr/lost the lease/, 'server a never lost its lease');
is($sa->safe_psql('postgres', 'SELECT slot FROM cosid_slot()'), $slot_a, 'it still holds its slot');

# ---- 2. window ends from the future; another role's renew and release
my @r = store_as('srv_b', qq{SELECT cosid.lease_renew('default', $stolen_slot, 'server-a', '$stolen_token', 253402300799000, '1 minute')});
is($r[1], '22023', 'srv_b renewing its slot with a window end in the year 9999: 22023');
like($r[2], qr/window end 253402300799000 is \d+ ms ahead of the lease store's clock/, '... naming how far ahead it is');
is((lease_row($stolen_slot))[3], 0, 'that slot\'s recorded window end did not move');
@r = store_as('srv_b', qq{SELECT cosid.lease_renew('default', $slot_a, 'server-a', '$token_a', 1, '1 minute')});
is($r[1], '55000', 'srv_b cannot renew server a\'s lease, even with its token');
@r = store_as('srv_b', qq{SELECT cosid.lease_release('default', $slot_a, 'server-a', '$token_a', 253402300799000)});
is($r[1], '55000', 'nor release it');
my (undef, undef, undef, $end_a, $alive_a) = lease_row($slot_a);
cmp_ok($end_a, '<', now_ms() + 10_000, 'server a\'s window end stays near the clock');
is($alive_a, 't', 'and its lease alive');
@r = store_as('srv_b', qq{SELECT cosid.lease_release('default', $stolen_slot, 'server-a', '$stolen_token', 0)});
is($r[0], 't', 'srv_b gives its extra slot back');

# ---- 3. a role with only CONNECT on the store
my $bg = $store->background_psql('postgres', extra_params => [ '-U', 'intruder' ]);
$bg->query_safe(q{SELECT pg_advisory_lock(hashtext('cosid.lease'), hashtext('default'))});
is( $store->safe_psql('postgres', q{
		SELECT count(*) FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND s.usename = 'intruder'}),
	'1', 'the intruder holds the advisory lock 1.2\'s lease functions took');
my %renewed = map { $_ => (lease_row($_))[5] } ($slot_a, $slot_b);
($na, $nb, $fails, $first) = issue_for(2 * $ttl);
is($fails, 0, 'both servers go on issuing for two TTLs while it holds it') or diag("first failure: $first");
for my $s ($slot_a, $slot_b)
{
	cmp_ok((lease_row($s))[5], '>', $renewed{$s}, "slot $s: its lease was renewed meanwhile");
}
$bg->quit;
@r = store_as('intruder', q{BEGIN; SELECT namespace FROM cosid.lease_namespace FOR UPDATE});
is($r[1], '42501', 'the intruder cannot lock the rows the lease functions lock');
@r = store_as('intruder', q{BEGIN; LOCK TABLE cosid.lease_namespace IN SHARE MODE});
is($r[1], '42501', 'nor their table');
@r = store_as('intruder', q{BEGIN; SELECT slot FROM cosid.lease FOR KEY SHARE});
is($r[1], '42501', 'nor the leases');
@r = store_as('intruder', q{SELECT instance FROM cosid.lease});
is($r[1], '42501', 'nor read instance ids');
@r = store_as('intruder', q{SELECT holder FROM cosid.lease});
is($r[1], '42501', 'nor holder roles');
@r = store_as('intruder', q{SELECT count(*) FROM cosid.lease WHERE expires_at > now() AND window_end > 0});
is($r[0], '2', 'it reads what is left (slots, expiry, window ends)');

# ---- 4. shared counters: another database, another owner, another store role
# server a: database shop with alice's int generator, database other with mallory's
for my $node ($sa, $sb)
{
	$node->safe_psql('postgres', q{
		CREATE ROLE alice LOGIN;
		CREATE ROLE mallory LOGIN;
		CREATE DATABASE shop;
		GRANT CREATE ON DATABASE shop TO alice, mallory;
	});
	$node->safe_psql('shop', 'CREATE EXTENSION cosid');
}
$sa->safe_psql('postgres', 'CREATE DATABASE other; GRANT CREATE ON DATABASE other TO mallory');
$sa->safe_psql('other', 'CREATE EXTENSION cosid');
my $tickets = '{"strategy": "segment", "distributor": "lease-store", "step": 10, "reserve": 1, "int": true}';
my $evil = '{"strategy": "segment", "distributor": "lease-store", "step": 10, "reserve": 1, "start": 4611686018427387904}';
$sa->safe_psql('shop', qq{SET ROLE alice; SELECT cosid_define('tickets', '$tickets')});
is($sa->safe_psql('shop', q{SELECT max(n) FROM cosid_next_many('tickets', 100) n}), '100',
	'server a: alice\'s int generator tickets in database shop issues 1 .. 100');

$sa->safe_psql('other', qq{SET ROLE mallory; SELECT cosid_define('tickets', '$evil')});
my $m = $sa->safe_psql('other', q{SET ROLE mallory; SELECT cosid_next('tickets')});
is($m, '4611686018427387904', 'mallory\'s tickets in database other starts at 2^62: a counter of its own');
my ($state, $msg) = psql_error($sa, 'shop', q{SELECT max(n) FROM cosid_next_many('tickets', 100) n});
ok(!defined $state, 'alice\'s int generator still issues') or diag("$state: $msg");
is($sa->safe_psql('shop', q{SELECT max(n) <= 300 FROM cosid_next_many('tickets', 100) n}), 't',
	'with small numbers: its counter did not move');
is( $store->safe_psql('postgres', q{
		SELECT string_agg(database || ':' || owner || ':' || store_role, ',' ORDER BY database)
		FROM cosid.segment_counter WHERE name = 'tickets'}),
	'other:mallory:srv_a,shop:alice:srv_a',
	'the store has one counter per database, each with its owner and the store role that made it');

# server b: database shop too, where mallory defines tickets first
$sb->safe_psql('shop', qq{SET ROLE mallory; SELECT cosid_define('tickets', '$evil')});
($state, $msg) = psql_error($sb, 'shop', q{SELECT cosid_next('tickets')});
is($state, '42501', 'server b: mallory\'s tickets in a database named shop may not use alice\'s counter (42501)');
like($msg, qr/the lease store refused segment generator "tickets" its shared counter/, '... saying so');
$sb->safe_psql('shop', q{SELECT cosid_drop('tickets', forget_history => true)});
$sb->safe_psql('shop', qq{SET ROLE alice; SELECT cosid_define('tickets', '$tickets')});
($state, $msg) = psql_error($sb, 'shop', q{SELECT cosid_next('tickets')});
is($state, '42501', 'server b as srv_b, of the same group as srv_a, may not use srv_a\'s counter without a grant (42501, 1.4)');
like($msg, qr/the lease store refused segment generator "tickets" its shared counter/, '... saying so');
$store->safe_psql('postgres', q{INSERT INTO cosid.segment_counter_grant VALUES ('default', 'shop', 'tickets', 'srv_b')});
my $b_max = $sb->safe_psql('shop', q{SELECT max(n) FROM cosid_next_many('tickets', 100) n});
cmp_ok($b_max, '<', 1000, 'once the store\'s superuser grants it to srv_b, alice\'s tickets on server b shares the counter');
is( $store->safe_psql('postgres', q{SELECT last_number <= 1000 FROM cosid.segment_counter
		WHERE database = 'shop' AND name = 'tickets'}),
	't', 'and the counter never moved to 2^62');
my $dups = 0;
{
	my %seen;
	for my $n (split /\n/, $sa->safe_psql('shop', q{SELECT n FROM cosid_next_many('tickets', 200) n}) . "\n"
		. $sb->safe_psql('shop', q{SELECT n FROM cosid_next_many('tickets', 200) n}))
	{
		$dups++ if $seen{$n}++;
	}
}
is($dups, 0, 'servers a and b hand out disjoint numbers from it');

# granted, srv_b still cannot re-base srv_a's counter: not by calling the
# store itself, nor through a generator of server b with a start of 2^62
my @r2 = store_as('srv_b', q{SELECT last FROM cosid.segment_acquire('default', 'shop', 'tickets', 'alice', 10, 9223372036754775806, 1)});
is($r2[1], '42501', 'srv_b cannot re-base the counter to 9223372036754775806 (42501)');
like($r2[2] // '', qr/can be raised only by the store role that created it/, '... only its creator can raise it');
$sb->safe_psql('shop', q{SELECT cosid_drop('tickets')});
$sb->safe_psql('shop', q{SET ROLE alice; SELECT cosid_define('tickets',
	'{"strategy": "segment", "distributor": "lease-store", "step": 10, "reserve": 1, "start": 4611686018427387904}')});
($state, $msg, my $err) = psql_error($sb, 'shop', q{SELECT cosid_next('tickets')});
is($state, '42501', 'nor server b, with alice\'s generator starting at 2^62 (42501)');
like($err, qr/can be raised only by the store role that created it/, '... the same reason');
is( $store->safe_psql('postgres', q{SELECT last_number < 2000 FROM cosid.segment_counter
		WHERE database = 'shop' AND name = 'tickets'}),
	't', 'the counter did not move');
($state, $msg) = psql_error($sa, 'shop', q{SELECT max(n) FROM cosid_next_many('tickets', 100) n});
ok(!defined $state, 'alice\'s int generator on server a goes on issuing') or diag("$state: $msg");

# server b logging in as srv_c (another tenant's store role): a counter srv_a made
$sa->safe_psql('shop', qq{SET ROLE alice; SELECT cosid_define('tickets2', '$tickets')});
is($sa->safe_psql('shop', q{SELECT cosid_next('tickets2')}), '1', 'server a: tickets2 makes its counter as srv_a');
$sb->append_conf('postgresql.conf', "cosid.lease_store = '" . store_connstr('srv_c') . "'");
$sb->reload;
$sb->safe_psql('shop', qq{SET ROLE alice; SELECT cosid_define('tickets2', '$evil')});
poll_until(5, sub { $sb->safe_psql('shop', q{SHOW cosid.lease_store}) =~ /srv_c/ });
($state, $msg) = psql_error($sb, 'shop', q{SELECT cosid_next('tickets2')});
is($state, '42501', 'server b as srv_c may not use it, not even with its owner\'s name (42501)');
is( $store->safe_psql('postgres', q{SELECT last_number < 1000 FROM cosid.segment_counter
		WHERE database = 'shop' AND name = 'tickets2'}),
	't', 'and could not move it');

# ---- 5. a copy of the database, and the database renamed, keep the counter
# (it is named after the database as it was called when the generator was
# defined, kept in the generator's row)
$sa->safe_psql('shop', q{CREATE TABLE t AS SELECT 'before' AS phase, n FROM cosid_next_many('tickets', 50) n});
$sa->safe_psql('postgres', q{CREATE DATABASE shop_copy TEMPLATE shop});
$sa->safe_psql('postgres', q{ALTER DATABASE shop RENAME TO shop_renamed});
is($sa->safe_psql('shop_copy', q{SELECT counter_database FROM cosid.generator WHERE name = 'tickets'}),
	'shop', 'a copy of shop keeps the counter\'s database name, shop');
$sa->safe_psql('shop_copy', q{INSERT INTO t SELECT 'copy', n FROM cosid_next_many('tickets', 100) n});
$sa->safe_psql('shop_renamed', q{INSERT INTO t SELECT 'renamed', n FROM cosid_next_many('tickets', 100) n});
# the renamed database's rows (those from before the copy too) and the copy's new ones
my $copy_t = $sa->safe_psql('shop_copy', q{SELECT string_agg(n::text, ',') FROM t WHERE phase = 'copy'});
is($sa->safe_psql('shop_renamed', qq{SELECT count(*) - count(DISTINCT n) FROM
		(SELECT n FROM t UNION ALL SELECT unnest(string_to_array('$copy_t', ','))::bigint) x}),
	'0', 'the copy and the renamed database go on with one counter: no number twice');
is($store->safe_psql('postgres', q{SELECT count(*) FROM cosid.segment_counter WHERE name = 'tickets'
		AND database IN ('shop_copy', 'shop_renamed')}), '0', '... and no counter named after them');

$sa->stop;
$sb->stop;
$store->stop;
done_testing();
