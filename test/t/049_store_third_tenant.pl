# A lease store shared by a third tenant (issue 28, item 7): the store's
# server holds the servers' database "leases" and a third database, "other",
# owned by a role of its own (tenant3, not a superuser), with cosid in it
# (created by a superuser, as only one may).  Two servers lease their slots
# and share a segment counter in "leases" while tenant3 does what its rights
# allow, in its own database and in theirs:
#  - in "leases" it may not call the store functions (not granted: 42501),
#    nor read the lease rows' tokens, nor write the counters or the grants;
#  - in "other" it owns the database but may not plant an overload of a
#    store function in cosid's schema (42501), nor write the largest TTL of a
#    namespace or a counter grant there (only superusers);
#  - its own store functions in "other" keep their own leases and counters:
#    a lease there has no effect on "leases".
# The servers keep distinct slots throughout and issue ids and segment
# numbers with none twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $store = cosid_node('store', preload => 0);
$store->safe_psql('postgres', q{
	CREATE ROLE srv_a LOGIN;
	CREATE ROLE srv_b LOGIN;
	CREATE ROLE tenant3 LOGIN;
	CREATE DATABASE leases;
	CREATE DATABASE other OWNER tenant3;
});
for my $db ('leases', 'other')
{
	$store->safe_psql($db, 'CREATE EXTENSION cosid');
}
$store->safe_psql('leases', q{
	GRANT USAGE ON SCHEMA cosid TO srv_a, srv_b;
	GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval),
		cosid.lease_renew(text, integer, text, uuid, bigint, interval),
		cosid.lease_release(text, integer, text, uuid, bigint),
		cosid.segment_acquire(text, text, text, text, bigint, bigint, integer) TO srv_a, srv_b;
	INSERT INTO cosid.segment_counter_grant (namespace, database, name, role)
	VALUES ('default', 'postgres', 'seg', 'srv_a'), ('default', 'postgres', 'seg', 'srv_b');
});

# psql as a role on one of the store's databases: (stdout) or (undef, SQLSTATE)
sub as_role
{
	my ($db, $user, $sql) = @_;
	my ($ret, $out, $err) = $store->psql($db, "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $user ], on_error_stop => 1);
	return ($out) if $ret == 0;
	return (undef, $err =~ /ERROR:  ([0-9A-Z]{5}):/ ? $1 : $err);
}

sub server
{
	my ($name, $user) = @_;
	my $node = cosid_node($name, conf => [
		"cosid.slot = 'lease'",
		"cosid.lease_store = 'host=" . $store->host . ' port=' . $store->port . " dbname=leases user=$user'",
		'cosid.lease_ttl = 3', "cosid.instance_id = 'server-$name'" ]);
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		SELECT cosid_define('seg', '{"strategy":"segment","distributor":"lease-store","step":10,"reserve":1}');
	});
	return $node;
}

my %ids;
my $dups = 0;
sub take
{
	my ($node, $what, $n) = @_;
	for (split /\n/, $node->safe_psql('postgres',
			"SELECT cosid_next('$what') FROM generate_series(1, $n)"))
	{
		$dups++ if $ids{"$what:$_"}++;
	}
}

my $sa = server('a', 'srv_a');
my $sb = server('b', 'srv_b');
my ($slot_a, $slot_b) = (wait_for_lease($sa), wait_for_lease($sb));
ok(defined $slot_a && defined $slot_b && $slot_a != $slot_b, "a and b lease slots $slot_a and $slot_b from \"leases\"");
take($_, 'g', 500), take($_, 'seg', 50) for ($sa, $sb);

# ---- the third tenant in the servers' database
my @r = as_role('leases', 'tenant3',
	q{SELECT * FROM cosid.lease_acquire('default'::text, 'evil'::text, 10, interval '1 day')});
is($r[1], '42501', 'tenant3 may not call lease_acquire in "leases" (42501)');
@r = as_role('leases', 'tenant3', q{SELECT * FROM cosid.segment_acquire('default', 'postgres', 'seg',
	'postgres', 10::bigint, 9223372036754775806::bigint, 1)});
is($r[1], '42501', '... nor segment_acquire, to re-base the shared counter (42501)');
@r = as_role('leases', 'tenant3', q{SELECT token FROM cosid.lease});
is($r[1], '42501', '... nor read the leases\' fencing tokens (42501)');
@r = as_role('leases', 'tenant3', q{INSERT INTO cosid.segment_counter_grant VALUES ('default', 'postgres', 'seg', 'tenant3')});
is($r[1], '42501', '... nor grant itself the shared counter (42501)');
@r = as_role('leases', 'tenant3', q{CREATE FUNCTION cosid.lease_acquire(text, text, text, text) RETURNS int
	LANGUAGE sql AS 'SELECT 0'});
is($r[1], '42501', '... nor plant an overload there (42501)');

# ---- in its own database
@r = as_role('other', 'tenant3', q{CREATE FUNCTION cosid.lease_acquire(namespace text, instance text, slot_bits text,
	ttl text, OUT slot integer, OUT previous_end bigint, OUT expires_at timestamptz, OUT token uuid)
	LANGUAGE sql AS $$ SELECT 0, 0::bigint, now() + interval '1 day', gen_random_uuid() $$});
is($r[1], '42501', 'tenant3 owns "other" but may not plant an overload in its cosid schema (42501)');
@r = as_role('other', 'tenant3', q{INSERT INTO cosid.lease_namespace_config (namespace, max_ttl)
	VALUES ('default', interval '1 day')});
is($r[1], '42501', '... nor raise a namespace\'s largest TTL there (42501)');
$store->safe_psql('other', q{GRANT EXECUTE ON FUNCTION cosid.lease_acquire(text, text, integer, interval) TO tenant3;
	GRANT USAGE ON SCHEMA cosid TO tenant3});
@r = as_role('other', 'tenant3', q{SELECT count(*) FROM generate_series(0, 1023) s,
	LATERAL cosid.lease_acquire('default'::text, 'squat-' || s, 10, interval '60 seconds')});
is($r[0] // $r[1], '1024', 'granted the store functions of "other", tenant3 leases all 1,024 slots there');

# ---- the servers go on, unaffected
$_->restart for ($sa, $sb);
my ($again_a, $again_b) = (wait_for_lease($sa), wait_for_lease($sb));
ok(defined $again_a && defined $again_b && $again_a != $again_b,
	"after a restart a and b lease slots again from \"leases\" ($again_a, $again_b): \"other\"'s leases are its own");
take($_, 'g', 500), take($_, 'seg', 50) for ($sa, $sb);
is($store->safe_psql('leases', q{SELECT count(*) FROM cosid.lease WHERE instance LIKE 'squat-%'}), '0',
	'"leases" has none of tenant3\'s leases');
is($store->safe_psql('leases', q{SELECT count(DISTINCT store_role) FROM cosid.segment_counter WHERE name = 'seg'}), '1',
	'the shared counter has one creator, a server\'s role');
is(scalar(keys %ids), 2 * 2 * 550, 'both servers issued 1,000 ids and 100 segment numbers each');
is($dups, 0, '... none twice');

$_->stop for ($sa, $sb, $store);
done_testing();
