# Slots passing from one server to another through the lease store.
#
# (a) A holder stopped cleanly releases its slot (instance NULL) with the
#     true end of what it issued, not the window end it recorded ahead of
#     time, and (1.4) the store records that end, below the one recorded
#     ahead; a new server takes that slot over, its window starting there,
#     and issues ids above the old holder's.
# (c) A holder killed with kill -9 and restarted within the TTL gets its own
#     slot back (same instance id), not the lower slot that is free.
# (b) A holder killed with kill -9 and left dead: while its lease lives, a
#     server starting up gets another slot; after the TTL, the dead slot goes
#     to a new holder, whose ids are above the dead holder's, but (1.4) only
#     when no slot is released or never leased: a server restarted cleanly
#     takes its released slot again, and a new one takes a never leased slot
#     before an expired one (its holder may still be reconnecting).
#
# Every server defines the same snowflake generator 'g' (41 bits of time,
# 10 of node, 12 of sequence): ids of one slot compare as numbers.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

# (b) needs the dead holder's lease alive while another server starts and
# takes a slot: it lives at least the TTL less the part it is renewed at
# (src/slot.h: half), here 3 s
my $ttl = 6;
my $store = lease_store('store');

sub holder
{
	my ($name, @extra) = @_;
	my $node = cosid_node($name, conf => lease_conf($store, ttl => $ttl, extra => \@extra));
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE TABLE ids (phase text, id bigint);
	});
	return $node;
}

sub issue
{
	my ($node, $phase, $n) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO ids SELECT '$phase', cosid_next('g') FROM generate_series(1, $n)");
}

# max(id), min(id) and the Unix ms of max(id), of one phase
sub phase_ids
{
	my ($node, $phase) = @_;
	return split /\|/, $node->safe_psql('postgres', qq{
		SELECT max(id), min(id),
			   (extract(epoch FROM (cosid_unpack('g', max(id)))."time") * 1000)::bigint
		FROM ids WHERE phase = '$phase'});
}

sub instance_of { $_[0]->safe_psql('postgres', 'SELECT instance FROM cosid_slot()') }

sub window_start_ms
{
	$_[0]->safe_psql('postgres',
		'SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()');
}

# the store's row of a slot: instance (or NULL), window_end, expired?
sub lease_row
{
	my ($slot) = @_;
	return split /\|/, $store->safe_psql('postgres', qq{
		SELECT coalesce(instance, 'NULL'), window_end, expires_at <= now()
		FROM cosid.lease WHERE namespace = 'default' AND slot = $slot}), -1;
}

# A new holder of a slot ($what: who, and whose slot it was): its window
# starts at $end, the end the last holder recorded, and the ids it issues
# in $phase are above $prev_max, the last holder's largest, and carry $slot
sub took_over
{
	my ($node, $slot, $end, $prev_max, $phase, $what) = @_;
	is(window_start_ms($node), $end, "$what: the window starts at the end the last holder recorded");
	issue($node, $phase, 2000);
	my (undef, $min) = phase_ids($node, $phase);
	cmp_ok($min, '>', $prev_max, "$what: its ids are above every id the last holder issued");
	is($node->safe_psql('postgres',
			"SELECT count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $slot) FROM ids WHERE phase = '$phase'"),
		'0', "$what: and carry slot $slot");
}

# ---- two holders: A on slot 0, B on slot 1
my $a = holder('a');
is(wait_for_lease($a), '0', 'A leases slot 0');
my $b = holder('b');
is(wait_for_lease($b), '1', 'B leases slot 1');
my $inst_a = instance_of($a);
my $inst_b = instance_of($b);

# ==== (a) A stops cleanly
issue($a, 'a', 2000);
my ($a_max, $a_min, $a_max_ms) = phase_ids($a, 'a');
# let the recorded window end run well ahead of A's last id
usleep(1_500_000);
my (undef, $a_end_before) = lease_row(0);
cmp_ok($a_end_before, '>', $a_max_ms + 1000,
	'(a) while A runs, the store holds a window end ahead of its last id');
$a->stop;
my ($inst, $a_end, $expired) = lease_row(0);
is($inst, 'NULL', '(a) A stopped cleanly: its slot is released (instance NULL)');
is($expired, 't', '(a) and free at once (expires_at is past)');
cmp_ok($a_end, '>', $a_max_ms, '(a) the released window end is after A\'s last id');
cmp_ok($a_end, '<', $a_end_before,
	"(a) and (1.4) the store recorded that true end, below the window end recorded ahead: $a_end, before $a_end_before (A's last id at $a_max_ms), so the slot's next holder need not wait for the lead");
like(slurp_file($a->logfile), qr/cosid slot worker released slot 0/, '(a) A\'s log says it released slot 0');

# ==== (c) B killed with kill -9 and restarted within the TTL: slot 1 again,
# though slot 0 is free
issue($b, 'b1', 2000);
my ($b1_max) = phase_ids($b, 'b1');
my $t_kill = now_ms();
crash_restart($b);
is(wait_for_lease($b), '1', '(c) B, restarted after kill -9, gets its own slot 1 back (slot 0 is free and lower)');
my $t_back = now_ms();
note('(c) B was back with a lease ' . ($t_back - $t_kill) . ' ms after the kill');
cmp_ok($t_back - $t_kill, '<', $ttl * 1000, '(c) (within the TTL)');
is(instance_of($b), $inst_b, '(c) under the same instance id (system identifier, host, port)');
my ($b_row_inst) = lease_row(1);
is($b_row_inst, $inst_b, '(c) the store agrees');
issue($b, 'b2', 2000);
my (undef, $b2_min) = phase_ids($b, 'b2');
cmp_ok($b2_min, '>', $b1_max, '(c) B\'s ids after the restart are above those before');
is((lease_row(0))[0], 'NULL', '(c) slot 0 is still free');

# ==== (a) continued: a new server C takes over A's slot
my $c = holder('c');
is(wait_for_lease($c), '0', '(a) a new server C takes over slot 0, the lowest free one');
my $inst_c = instance_of($c);
isnt($inst_c, $inst_a, '(a) C is another instance than A');
is((lease_row(0))[0], $inst_c, '(a) the store shows slot 0 held by C');
took_over($c, 0, $a_end, $a_max, 'c', '(a) C on A\'s released slot 0');

# ==== (b) B killed with kill -9 and left dead
issue($b, 'b3', 2000);
my ($b_max, undef, $b_max_ms) = phase_ids($b, 'b3');
$b->kill9;
my $t_dead = now_ms();
# A comes back: its old lease was released, so it takes the lowest free slot;
# 0 is C's, 1 is B's (dead, but its lease lives on until the TTL)
$a->start;
my $a_slot = wait_for_lease($a);
my $t_a = now_ms();
my ($b_inst_now, $b_end, $b_expired) = lease_row(1);
note('(b) A had a lease ' . ($t_a - $t_dead) . ' ms after B was killed');
ok($t_a - $t_dead < $ttl * 1000 && $b_expired eq 'f',
	'(b) (B\'s lease was still alive when A took a slot)');
is($a_slot, '2', '(b) a server starting while the dead holder\'s lease lives gets another slot (2)');
is($b_inst_now, $inst_b, '(b) slot 1 is still leased to the dead B');
cmp_ok($b_end, '>', $b_max_ms, '(b) the window end B recorded is past its last id');

# wait for B's lease to expire
ok(poll_until($ttl + 5, sub { (lease_row(1))[2] eq 't' }, 200), '(b) B\'s lease expires');
my $t_expired = now_ms();
note('(b) B\'s lease expired ' . ($t_expired - $t_dead) . ' ms after the kill');
# B renewed at most the part of the TTL it renews at before the kill
# (src/slot.h: half; 1.4: a busy server's extension is that renewal, no
# longer one every 300 ms), and a turn late
# (and, whatever src/slot.h says, at least half the TTL: a lease renewed less
# often than that would not outlive a store hiccup)
my $renew_part = slot_constant('COSID_LEASE_RENEW_PART');
cmp_ok($renew_part, '>=', 2, '(b) (a lease is renewed at least every half TTL)');
cmp_ok($t_expired - $t_dead, '>=', $ttl * 1000 * ($renew_part - 1) / $renew_part - 200,
	'(b) (not before the TTL after its last renewal, at most 1/' . $renew_part . ' of the TTL before the kill)');
is((lease_row(1))[0], $inst_b, '(b) nobody has taken slot 1 in the meantime');

# A restarts: it gives slot 2 back and takes it again (1.4: a released
# slot comes first), not the dead B's expired slot 1
$a->restart;
is(wait_for_lease($a), '2', '(b) A, restarted cleanly, takes its released slot 2 again, not the expired slot 1');
is((lease_row(2))[0], $inst_a, '(b) the store shows slot 2 held by A again');

# a new server D: slot 3 was never leased, and comes before the expired 1
my $d = holder('d');
is(wait_for_lease($d), '3', '(b) a new server D takes slot 3, never leased, before the dead B\'s expired slot 1');
is((lease_row(1))[0], $inst_b, '(b) slot 1 is still B\'s expired lease');

# a new server E with 2 slots (cosid.machine_bits = 1): slot 0 is C's, so
# the only one it may take is B's expired slot 1
my $e = holder('e', 'cosid.machine_bits = 1');
is(wait_for_lease($e), '1', '(b) after the TTL, with no slot released or never leased, the dead holder\'s slot 1 goes to a new holder');
my $inst_e = instance_of($e);
is((lease_row(1))[0], $inst_e, '(b) the store shows slot 1 held by E');
took_over($e, 1, $b_end, $b_max, 'e_on_1', '(b) E on the dead B\'s expired slot 1');

$a->stop;
$c->stop;
$d->stop;
$e->stop;
$store->stop;
done_testing();
