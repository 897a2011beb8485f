# The lease store trusts only superusers (issue 28: attacks 1 and 5, and
# items 1 and 4 of what to build).  Each attack below worked on 1.3:
#  1. the store database's owner (not a superuser; 1.3 granted it CREATE on
#     schema cosid) creates cosid.lease_acquire(text, text, text, text)
#     answering slot 0: servers called cosid.lease_acquire($1, $2, $3, $4)
#     with untyped parameters, so that overload ran, and two servers were
#     active on slot 0.  1.4 refuses the CREATE; a server calls with typed
#     parameters (a superuser's overload is never chosen) and refuses a store
#     where such a function is owned by a role that is not a superuser (as a
#     superuser can still plant it).  The same for segment_acquire, which gave
#     the range 1..10 twice.
#  2. a second store role leases the free slots with a TTL of 1 day, renews
#     them to now + 86,400 s and releases them: the rightful server was then
#     refused for about 24 hours.  1.4 refuses a TTL or a window end above the
#     namespace's largest TTL (set by the store's superuser, 60 s by default)
#     and caps what a new holder waits for, whatever a lease recorded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

my $ttl = 3;
my $store = cosid_node('store', preload => 0);
$store->safe_psql('postgres', q{
	CREATE ROLE storeowner LOGIN;
	CREATE DATABASE leases OWNER storeowner;
	CREATE ROLE srv_a LOGIN;
	CREATE ROLE srv_b LOGIN;
	CREATE ROLE srv_x LOGIN;
});
$store->safe_psql('leases', q{
	CREATE EXTENSION cosid;
	GRANT USAGE ON SCHEMA cosid TO srv_a, srv_b, srv_x;
	GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
		cosid.lease_renew(text, integer, text, uuid, bigint, interval),
		cosid.lease_release(text, integer, text, uuid, bigint),
		cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO srv_a, srv_b, srv_x;
});

sub store_connstr
{
	my ($user) = @_;
	return 'host=' . $store->host . ' port=' . $store->port . " dbname=leases user=$user";
}

# psql on the store's database as a role: (stdout) or (undef, SQLSTATE, message)
sub store_as
{
	my ($user, $sql) = @_;
	my ($ret, $out, $err) = $store->psql('leases', "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ], on_error_stop => 1);
	return ($out) if $ret == 0;
	return (undef, $1, $2) if $err =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/;
	return (undef, '', $err);
}

sub server
{
	my ($name, $user, @extra) = @_;
	my $node = cosid_node($name, conf => [
		"cosid.slot = 'lease'",
		"cosid.lease_store = '" . store_connstr($user) . "'",
		"cosid.lease_ttl = $ttl",
		"cosid.instance_id = 'server-$name'", @extra ]);
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		SELECT cosid_define('seg', '{"strategy":"segment","distributor":"lease-store","step":10,"reserve":1}');
	});
	return $node;
}

my $sa = server('a', 'srv_a');
my $sb = server('b', 'srv_b');
my $slot_a = wait_for_lease($sa);
my $slot_b = wait_for_lease($sb);
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b, "servers a and b lease slots $slot_a and $slot_b");

# ---- 1. the store database's owner puts an overload next to cosid's
my $evil_lease = q{
	CREATE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits text, ttl text,
		OUT slot integer, OUT previous_end bigint, OUT expires_at timestamptz, OUT token uuid)
	LANGUAGE sql AS $$ SELECT 0, 0::bigint, now() + interval '1 day', gen_random_uuid() $$;
	CREATE FUNCTION cosid.lease_renew(text, text, text, text, text, text) RETURNS timestamptz
	LANGUAGE sql AS $$ SELECT now() + interval '1 day' $$;
};
my $evil_segment = q{
	CREATE FUNCTION cosid.segment_acquire(text, text, text, text, text, text, text,
		OUT first bigint, OUT last bigint)
	LANGUAGE sql AS $$ SELECT 1::bigint, 10::bigint $$;
};
my @r = store_as('storeowner', $evil_lease);
is($r[1], '42501', 'the store database\'s owner cannot create cosid.lease_acquire(text, text, text, text) (42501)');
like($r[2] // '', qr/only a superuser may create or alter function cosid\.lease_acquire\(text,text,text,text\) in schema cosid/,
	'... saying only a superuser may create there');
@r = store_as('storeowner', $evil_segment);
is($r[1], '42501', 'nor cosid.segment_acquire(text, ...) (42501)');
is($store->safe_psql('leases', q{SELECT count(*) FROM pg_proc WHERE pronamespace = 'cosid'::regnamespace
		AND proname IN ('lease_acquire', 'lease_renew', 'segment_acquire')}), '3',
	'cosid has only its own three store functions');

# A superuser's overloads (trusted) answering slot 0 and 1..10: the servers'
# typed calls never reach them.
$store->safe_psql('leases', $evil_lease . $evil_segment . q{
	GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, text, text),
		cosid.lease_renew(text, text, text, text, text, text),
		cosid.segment_acquire(text, text, text, text, text, text, text) TO PUBLIC;
});
$_->restart for ($sa, $sb);
$slot_a = wait_for_lease($sa);
$slot_b = wait_for_lease($sb);
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b,
	"with a superuser's overloads answering slot 0, servers a and b still lease slots of their own ($slot_a, $slot_b)");
is($store->safe_psql('leases', q{SELECT string_agg(holder, ',' ORDER BY holder) FROM cosid.lease
		WHERE instance IS NOT NULL AND expires_at > now()}),
	'srv_a,srv_b', 'each with a lease in the store (the real lease_acquire ran)');
my $ra = $sa->safe_psql('postgres', q{SELECT min(n) || '-' || max(n) FROM cosid_next_many('seg', 10) n});
# the counter is srv_a's, which made it: the store's superuser shares it with srv_b
$store->safe_psql('leases', q{INSERT INTO cosid.segment_counter_grant VALUES ('default', 'postgres', 'seg', 'srv_b')});
my $rb = $sb->safe_psql('postgres', q{SELECT min(n) || '-' || max(n) FROM cosid_next_many('seg', 10) n});
isnt($ra, $rb, "and segment fetches get disjoint ranges ($ra, $rb), not 1-10 twice");

# The same overloads owned by the store database's owner, as a superuser can
# still make them: a server refuses the store.
$store->safe_psql('leases', q{
	ALTER FUNCTION cosid.lease_acquire(text, text, text, text) OWNER TO storeowner;
	ALTER FUNCTION cosid.segment_acquire(text, text, text, text, text, text, text) OWNER TO storeowner;
});
my $log_a = -s $sa->logfile;
my $log_b = -s $sb->logfile;
$sa->stop;
$sb->stop;
$sa->start;
$sb->start;
ok(poll_until(15, sub { slurp_file($sa->logfile, $log_a) =~ /refuses the lease store/ }),
	'server a refuses the store');
my $log = slurp_file($sa->logfile, $log_a);
like($log, qr/WARNING:  (42501: )?cosid slot worker refuses the lease store: the lease store's function cosid\.lease_acquire\(text,text,text,text\) is owned by role storeowner, which is not a superuser/,
	'a WARNING names the function and its owner');
like($log, qr/HINT:  On the lease store, a superuser drops that object or gives it to a superuser/, '... with a hint');
my $both_zero = 0;
my $active = 0;
my $t0 = now_ms();
while (now_ms() - $t0 < 2 * $ttl * 1000)
{
	my %s = map { my $r = $_->safe_psql('postgres', 'SELECT state, slot FROM cosid_slot()'); $_->name => $r }
	  ($sa, $sb);
	$active++ if grep { /^active/ } values %s;
	$both_zero++ if $s{ $sa->name } eq 'active|0' && $s{ $sb->name } eq 'active|0';
	usleep(200_000);
}
is($active, 0, 'neither server holds a slot while the store is not trusted');
is($both_zero, 0, 'two servers are never both active on slot 0');
like($sa->safe_psql('postgres', 'SELECT last_error FROM cosid_slot()'), qr/is owned by role storeowner, which is not a superuser/,
	'cosid_slot() shows why');
my ($state, $msg) = psql_error($sa, 'postgres', q{SELECT cosid_next('g')});
is($state, '55000', 'server a issues no snowflake id');
($state, $msg, my $err) = psql_error($sa, 'postgres', q{SELECT cosid_next('seg')});
# the reserve may still hold numbers from before: use them up
for (1 .. 3) { last if defined $state; ($state, $msg, $err) = psql_error($sa, 'postgres', q{SELECT cosid_next('seg')}); }
is($state, '42501', 'a segment fetch refuses the store (42501)');
like($msg, qr/segment generator "seg" refuses the lease store: the lease store's function cosid\.lease_acquire|segment_acquire/,
	'... naming what is wrong');

# a table of the store given to a non-superuser: refused as well
$store->safe_psql('leases', q{
	DROP FUNCTION cosid.lease_acquire(text, text, text, text);
	DROP FUNCTION cosid.segment_acquire(text, text, text, text, text, text, text);
	ALTER TABLE cosid.segment_counter OWNER TO storeowner;
});
($state, $msg) = psql_error($sa, 'postgres', q{SELECT cosid_next('seg')});
is($state, '42501', 'a store whose cosid.segment_counter a non-superuser owns is refused too');
like($msg, qr/table cosid\.segment_counter is owned by role storeowner/, '... naming the table');
$store->safe_psql('leases', q{ALTER TABLE cosid.segment_counter OWNER TO CURRENT_USER});
# the superuser's lease_renew overload stays (a superuser's own: trusted)
$slot_a = wait_for_lease($sa, 30);
$slot_b = wait_for_lease($sb, 30);
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b,
	'once the store is a superuser\'s again, both servers lease slots of their own by themselves');
($state, $msg) = psql_error($sa, 'postgres', q{SELECT cosid_next('seg')});
ok(!defined $state, 'and fetch segments again') or diag("$state: $msg");

# ---- 2. a second store role stretches TTLs and window ends
$sa->stop;
$sb->stop;
my $ns = 'ttl';
@r = store_as('srv_x', qq{SELECT slot FROM cosid.lease_acquire('$ns', 'x0', 2, '1 day')});
is($r[1], '22023', 'a store role cannot lease with a TTL of 1 day (22023)');
like($r[2] // '', qr/ttl 1 day is above the largest TTL of namespace "ttl", 00:01:00/, '... naming the limit, 60 s by default');
@r = store_as('srv_x', qq{INSERT INTO cosid.lease_namespace_config VALUES ('$ns', '1 day')});
is($r[1], '42501', 'nor raise the limit itself');
@r = store_as('storeowner', qq{INSERT INTO cosid.lease_namespace_config VALUES ('$ns', '1 day')});
is($r[1], '42501', 'nor can the store database\'s owner');
my $max = 5;
$store->safe_psql('leases', qq{INSERT INTO cosid.lease_namespace_config VALUES ('$ns', '$max seconds')});
# srv_x takes every free slot of the 4 with the largest TTL, renews each to
# as far ahead as it may, and releases them
my $stretched = store_as('srv_x', qq{
	CREATE TEMP TABLE l AS SELECT s AS i, a.* FROM generate_series(0, 3) s,
		LATERAL cosid.lease_acquire('$ns', 'x' || s, 2, '$max seconds') a;
	SELECT count(*) FROM l, LATERAL cosid.lease_renew('$ns', l.slot, 'x' || l.i, l.token,
		(extract(epoch FROM clock_timestamp()) * 1000)::bigint + ($max + 1) * 1000 - 50, '$max seconds') r;
	SELECT count(*) FROM l, LATERAL cosid.lease_release('$ns', l.slot, 'x' || l.i, l.token, 0) r WHERE r;
});
is($stretched, "4\n4", 'srv_x leased, renewed and released the 4 slots within the limit');
@r = store_as('srv_x', qq{
	SELECT cosid.lease_renew('$ns', a.slot, 'y', a.token, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000, '$max seconds')
	FROM cosid.lease_acquire('$ns', 'y', 2, '$max seconds') a});
is($r[1], '22023', 'a renewal to now + 86,400 s is refused (22023)');
# what a 1.3 store holds after the attack: released slots whose window ends are a day ahead
$store->safe_psql('leases', qq{
	UPDATE cosid.lease SET instance = NULL, expires_at = now(),
		window_end = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 86400000
	WHERE namespace = '$ns'});
my $sc = server('c', 'srv_a', "cosid.namespace = '$ns'", 'cosid.machine_bits = 2');
my $t_start = now_ms();
my $issued = poll_until(3 * $max + 10, sub { !defined((psql_error($sc, 'postgres', q{SELECT cosid_next('g')}))[0]) }, 200);
my $waited = (now_ms() - $t_start) / 1000;
ok($issued, 'the rightful server gets a slot of that namespace and issues');
cmp_ok($waited, '<', 2 * $max + 5, "within the largest TTL ($max s) and its start, not a day (${waited} s)");
my $end_c = $store->safe_psql('leases', qq{SELECT max(window_end) - (extract(epoch FROM clock_timestamp()) * 1000)::bigint
	FROM cosid.lease WHERE namespace = '$ns' AND instance = 'server-c'});
cmp_ok($end_c, '<', ($max + 2) * 1000, 'its recorded window end is near the clock');

$sc->stop;
$store->stop;
done_testing();
