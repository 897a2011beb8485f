# Clock skew between holders of one slot, and holders whose clocks run too
# far ahead of the lease store (libfaketime).
#
# 1. Skew within the TTL (TTL 12 s, old holders 10 s ahead): two old holders
#    issue ids about 10 s ahead of the real clock; the store records their
#    window ends.  One is stopped cleanly, the other killed with kill -9 (its
#    lease then expires after the TTL).  New holders of their slots (one with
#    a correct clock, one 8 s behind) start their windows at the end the old
#    holder recorded: until their clocks pass it, cosid_next fails with 55000
#    ("behind the start of this server's slot window"), and no id at or
#    below the old holder's is ever returned.  Meanwhile each new holder
#    keeps its lease alive, so that no third server can take its slot.
# 2. A holder 20 s ahead with a TTL of 3 s: the store refuses every window
#    end it asks for (22023, "ahead of the lease store's clock"), so it never
#    opens a window and issues nothing (55000, naming the refusal), and the
#    slot's recorded end stays where it was: the next holder, with a correct
#    clock, issues at once.  (Before 1.3 the store took any end: the slot's
#    next holders waited as long as the old holder was ahead, or forever for
#    an end in the year 9999.)
# 3. A holder whose clock jumps 20 s ahead while it runs: its renewals are
#    refused, it stops issuing at the end it had recorded (no id from the
#    future), the store's end never passes the store's clock by more than
#    the TTL and a second, and once its clock is right again it issues
#    again by itself.
#
# (Until 1.3 this test ran old holders 20 s ahead with a TTL of 3 s: the
# store now refuses such ends, which part 2 proves; part 1 keeps the skew
# under the TTL and proves what it proved before.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

# A call waits up to the longest lead (src/slot.h, COSID_LEASE_LEAD_MAX_MS:
# 6 s) for a window that starts ahead of its clock, and fails beyond that:
# the new holders start more than that behind the old holders' ends (the
# correct clock after a clean stop: the skew less its start; the one behind:
# that and the half second the old end may be past its lease's expiry).
my $ttl = 12;
my $skew_s = 10;
my $behind_s = 8;
my $store = lease_store('store');

sub setup
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE EXTENSION cosid;
		SELECT cosid_define('g', '{"strategy":"snowflake"}');
		CREATE TABLE ids (n bigserial, id bigint);
	});
}

# the store's row of a slot: instance (or NULL), window_end, alive?, renewed_at (ms)
sub lease_row
{
	my ($slot, $ns) = @_;
	$ns //= 'default';
	return split /\|/, $store->safe_psql('postgres', qq{
		SELECT coalesce(instance, 'NULL'), window_end, expires_at > now(),
			   (extract(epoch FROM renewed_at) * 1000)::bigint
		FROM cosid.lease WHERE namespace = '$ns' AND slot = $slot}), -1;
}

# the store's clock, Unix ms
sub store_ms
{
	return $store->safe_psql('postgres', 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint');
}

# One id from the node: (id) or (undef, SQLSTATE, message, stderr).
sub next_id
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nINSERT INTO ids (id) VALUES (cosid_next('g')) RETURNING id",
		on_error_stop => 1);
	return ($out) if $ret == 0 && $out =~ /^\d+$/;
	return (undef, $1, $2, $err) if $err =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/;
	return (undef, '', '', $err);
}

# the time (Unix ms) of a snowflake id of g
sub id_ms
{
	my ($node, $id) = @_;
	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM (cosid_unpack('g', $id)).\"time\") * 1000)::bigint");
}

# ======== 1. skew within the TTL

# ---- the old holders, $skew_s s ahead
my @old;
for my $i (0, 1)
{
	my $node = cosid_node("old$i", conf => lease_conf($store, ttl => $ttl), no_start => 1);
	start_faked($node, offset => "+${skew_s}s");
	setup($node);
	is(wait_for_lease($node), $i, "old holder $i (clock +${skew_s} s) leases slot $i");
	push @old, $node;
}
# the new holders are made now, started later: new1's clock is $behind_s s behind.
# Both lease 2 slots (cosid.machine_bits = 1): since 1.4 a holder takes a
# slot never leased before one that expired, and with slots 0 and 1 held
# (new0's, the dead lease of old1) the expired one is all new1 can take
my @new = map {
	cosid_node("new$_", conf => lease_conf($store, ttl => $ttl, extra => ['cosid.machine_bits = 1']), no_start => 1)
} (0, 1);
my @new_offset_ms = (0, -$behind_s * 1000);

my (@old_max, @old_max_ms);
for my $i (0, 1)
{
	$old[$i]->safe_psql('postgres',
		"INSERT INTO ids (id) SELECT cosid_next('g') FROM generate_series(1, 5000)");
	($old_max[$i], $old_max_ms[$i]) = split /\|/, $old[$i]->safe_psql('postgres', q{
		SELECT max(id), (extract(epoch FROM (cosid_unpack('g', max(id)))."time") * 1000)::bigint FROM ids});
	my $ahead = $old_max_ms[$i] - now_ms();
	note("old holder $i: last id $ahead ms ahead of the real clock");
	cmp_ok($ahead, '>', ($skew_s - 3) * 1000, "old holder $i issues ids about $skew_s s ahead of the real clock");
	my $end_ahead = (lease_row($i))[1] - store_ms();
	cmp_ok($end_ahead, '>', ($skew_s - 3) * 1000,
		"slot $i: the store took the old holder's window end, about $skew_s s ahead of its clock (under the TTL)");
}

# round 2: old1 is killed; round 1: old0 stops cleanly
$old[1]->kill9;
my $t_kill = now_ms();
my ($r1_inst, $old_end1, $r1_alive) = lease_row(1);
is($r1_alive, 't', 'round 2: the killed old holder\'s lease of slot 1 lives on');
$old[0]->stop;
my ($r0_inst, $old_end0) = lease_row(0);
is($r0_inst, 'NULL', 'round 1: the old holder stopped cleanly released slot 0');
my @old_end = ($old_end0, $old_end1);
for my $i (0, 1)
{
	cmp_ok($old_end[$i], '>', $old_max_ms[$i], "slot $i: the store's window end is past the old holder's last id");
}

# round 1: a new holder, correct clock, takes slot 0 at once
$new[0]->start;
setup($new[0]);
is(wait_for_lease($new[0]), '0', 'round 1: the new holder takes slot 0');
my $renewed_at_start0 = (lease_row(0))[3];

sub window_start_is
{
	my ($i) = @_;
	is( $new[$i]->safe_psql('postgres',
			'SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()'),
		$old_end[$i], "slot $i: the new holder's window starts at the old holder's recorded end");
}
window_start_is(0);

# ---- poll the new holders until they issue; round 2's starts ($behind_s s behind)
# once the killed holder's lease has expired
my @st = map { { errors => 0, unexpected => 0, ids => [], first_ms => undef, lease_lost => 0 } } (0, 1);
my $new1_started = 0;
my $deadline = now_ms() + ($skew_s + $ttl + 25) * 1000;
while (now_ms() < $deadline && grep { !defined $_->{first_ms} } @st)
{
	if (!$new1_started && (lease_row(1))[2] eq 'f')
	{
		note('round 2: the dead lease of slot 1 expired ' . (now_ms() - $t_kill) . ' ms after the kill');
		start_faked($new[1], offset => "-${behind_s}s");
		setup($new[1]);
		is(wait_for_lease($new[1]), '1',
			"round 2: the new holder (clock $behind_s s behind) takes slot 1, the dead holder's, once its lease expired");
		window_start_is(1);
		$new1_started = 1;
	}
	for my $i (0, 1)
	{
		my $s = $st[$i];
		next if defined $s->{first_ms} || ($i == 1 && !$new1_started);
		my ($id, $state, $msg, $stderr) = next_id($new[$i]);
		if (defined $id)
		{
			$s->{first_ms} = now_ms();
			$s->{renewed_at} = (lease_row($i))[3];
			push @{ $s->{ids} }, $id;
			next;
		}
		$s->{errors}++;
		if (!($state eq '55000' && $msg =~ /^clock is \d+ ms behind the start of this server's slot window$/))
		{
			$s->{unexpected}++;
			diag("slot $i: unexpected error: $state: $msg") if $s->{unexpected} <= 3;
		}
		my ($inst, undef, $alive) = lease_row($i);
		$s->{lease_lost}++ if $alive ne 't';
	}
	usleep(250_000);
}
ok($new1_started, 'round 2: the dead lease of slot 1 expired');

for my $i (0, 1)
{
	my $s = $st[$i];
	ok(defined $s->{first_ms}, "slot $i: the new holder issues once its clock has passed the old holder's end")
	  or next;
	my $first_clock = $s->{first_ms} + $new_offset_ms[$i];
	note("slot $i: $s->{errors} calls failed; the first id came "
		  . ($first_clock - $old_end[$i]) . ' ms after the old end (by the new holder\'s clock)');
	cmp_ok($s->{errors}, '>', 0, "slot $i: before that, cosid_next failed");
	is($s->{unexpected}, 0, "slot $i: every failure was 55000 'clock is ... behind the start of this server's slot window'");
	is($s->{lease_lost}, 0, "slot $i: the new holder's lease stayed alive while it waited");
	cmp_ok($first_clock, '>=', $old_end[$i] - 100, "slot $i: no id before the new holder's clock reached the old end");
	$new[$i]->safe_psql('postgres',
		"INSERT INTO ids (id) SELECT cosid_next('g') FROM generate_series(1, 5000)");
	is( $new[$i]->safe_psql('postgres', qq{
			SELECT count(*), count(*) FILTER (WHERE id <= $old_max[$i]),
				   count(*) FILTER (WHERE (extract(epoch FROM (cosid_unpack('g', id))."time") * 1000)::bigint < $old_end[$i]),
				   count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $i)
			FROM ids}),
		'5001|0|0|0', "slot $i: no id of the new holder is at or below the old holder's, none before its end; all of slot $i");
}
cmp_ok($st[0]{renewed_at} // 0, '>', $renewed_at_start0,
	'round 1: the new holder renewed its lease while it waited for its window');
$_->stop for @new;

# ======== 2. a holder 20 s ahead, TTL 3 s: refused, and the slot stays clean

my $far_skew_s = 20;
my $far_conf = lease_conf($store, ttl => 3, extra => ["cosid.namespace = 'ahead'"]);
my $far = cosid_node('far', conf => $far_conf, no_start => 1);
my $far_log = -s $far->logfile // 0;
start_faked($far, offset => "+${far_skew_s}s");
setup($far);
ok( poll_until(15, sub {
		slurp_file($far->logfile, $far_log) =~
		  /could not renew the lease of slot 0: .*window end \d+ is \d+ ms ahead of the lease store's clock/
	}),
	'part 2: the store refuses the window ends of a holder 20 s ahead (the log says so)');
my ($state, $msg, $stderr) = psql_error($far, 'postgres', q{SELECT cosid_next('g')});
is($state, '55000', 'part 2: it issues nothing (55000)');
like($stderr, qr/ms ahead of the lease store's clock/, 'part 2: the error\'s detail names the refusal');
is($far->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'starting',
	'part 2: it has opened no window');
my (undef, $far_end) = lease_row(0, 'ahead');
cmp_ok($far_end, '<=', store_ms() + 4000, 'part 2: the slot\'s recorded window end is not ahead of the store\'s clock by more than the TTL and a second');
$far->stop;
(undef, $far_end) = lease_row(0, 'ahead');
cmp_ok($far_end, '<=', store_ms() + 4000, 'part 2: nor after it stopped (its release, with an end 20 s ahead, is refused too)');
ok(poll_until(3 + 5, sub { (lease_row(0, 'ahead'))[2] eq 'f' }, 200), 'part 2: its lease ends (released, or expired)');

my $fix = cosid_node('fix', conf => $far_conf);
setup($fix);
my $t_fix = now_ms();
is(wait_for_lease($fix), '0', 'part 2: a holder with a correct clock takes the slot');
my ($fix_id) = (undef);
ok(poll_until(5, sub { ($fix_id) = next_id($fix); defined $fix_id }, 100),
	'part 2: and issues within seconds, not 20 s later');
note('part 2: the first id came ' . (now_ms() - $t_fix) . ' ms after the correct holder started');
cmp_ok(id_ms($fix, $fix_id), '<', now_ms() + 2000, 'part 2: its ids carry the real time');
$fix->stop;

# ======== 3. a holder whose clock jumps 20 s ahead while it runs

my $offset_file = PostgreSQL::Test::Utils::tempdir() . '/offset';
set_fake_offset($offset_file, '+0');
my $jump = cosid_node('jump', conf => lease_conf($store, ttl => 3, extra => ["cosid.namespace = 'jump'"]),
	no_start => 1);
start_faked($jump, offset_file => $offset_file);
setup($jump);
is(wait_for_lease($jump), '0', 'part 3: the holder leases slot 0 of its namespace');
$jump->safe_psql('postgres', "INSERT INTO ids (id) SELECT cosid_next('g') FROM generate_series(1, 1000)");
my $before_max = $jump->safe_psql('postgres', 'SELECT max(id) FROM ids');

set_fake_offset($offset_file, "+${far_skew_s}");
my ($ok_ids, $fails, $wrong, $end_max_ahead) = (0, 0, 0, -1e18);
my @jump_ids;
my $t_jump = now_ms();
while (now_ms() - $t_jump < 6000)
{
	my ($id, $st, $m, $err) = next_id($jump);
	if (defined $id) { $ok_ids++; push @jump_ids, $id; }
	else
	{
		$fails++;
		$wrong++ unless $st eq '55000';
	}
	my (undef, $end) = lease_row(0, 'jump');
	my $ahead = $end - store_ms();
	$end_max_ahead = $ahead if $ahead > $end_max_ahead;
	usleep(200_000);
}
note("part 3: while 20 s ahead: $ok_ids ids, $fails failures; the store's end was at most $end_max_ahead ms ahead of its clock");
cmp_ok($fails, '>', 0, 'part 3: once its clock is 20 s ahead, it stops issuing');
is($wrong, 0, 'part 3: with 55000');
cmp_ok($end_max_ahead, '<=', 4000, 'part 3: the store never recorded a window end more than the TTL and a second ahead of its clock');
my (undef, $jump_end) = lease_row(0, 'jump');
my $late = 0;
$late += id_ms($jump, $_) >= $jump_end ? 1 : 0 for @jump_ids;
is($late, 0, 'part 3: no id it issued is at or past the window end the store recorded (none from the future)');
like(slurp_file($jump->logfile), qr/could not renew the lease of slot 0: .*ms ahead of the lease store's clock/,
	'part 3: its log says why');

set_fake_offset($offset_file, '+0');
my ($back_id) = (undef);
ok(poll_until(20, sub { ($back_id) = next_id($jump); defined $back_id }, 200),
	'part 3: with its clock right again it issues again by itself');
cmp_ok($back_id, '>', $before_max, 'part 3: above every id it issued before the jump');
$jump->stop;

$store->stop;
done_testing();
