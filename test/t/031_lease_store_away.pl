# The lease store goes away for 2 x TTL.  The holder keeps issuing until the
# end of the window it last made durable in the store (at most its lead
# ahead: half the TTL and 700 ms, here 2.2 s; src/slot.h),
# then fails with 55000 and a message saying the lease could not be renewed
# (and why); cosid_slot() shows the store disconnected and the last error.
# When the store is back, issuing resumes within a few seconds, with ids
# above every earlier one.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

my $ttl = 3;
# the leased slot's window lead (src/slot.h: the part of the TTL a lease is
# renewed at and COSID_WINDOW_RENEW_MS, at most COSID_LEASE_LEAD_MAX_MS; the
# clocks agree)
my $lead_ms = lease_lead_ms($ttl);
my $store = lease_store('store');
my $h = cosid_node('holder', conf => lease_conf($store, ttl => $ttl));
$h->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase int, n bigserial, id bigint);
});
my $slot = wait_for_lease($h);
ok(defined $slot, 'the holder holds a leased slot') or BAIL_OUT('no lease');
is($h->safe_psql('postgres', 'SELECT store_connected, last_error IS NULL FROM cosid_slot()'),
	't|t', 'cosid_slot(): connected to the store, no error');

$h->safe_psql('postgres',
	"INSERT INTO ids (phase, id) SELECT 1, cosid_next('g') FROM generate_series(1, 1000)");

# One id into phase $phase: (id) or (undef, SQLSTATE, message, stderr).
sub next_id
{
	my ($phase) = @_;
	my ($ret, $out, $err) = $h->psql('postgres',
		"\\set VERBOSITY verbose\nINSERT INTO ids (phase, id) VALUES ($phase, cosid_next('g')) RETURNING id",
		on_error_stop => 1);
	return ($out) if $ret == 0 && $out =~ /^\d+$/;
	return (undef, $1, $2, $err) if $err =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/;
	return (undef, '', '', $err);
}

# Unix ms of the window end the holder shows.
sub window_end_ms
{
	return $h->safe_psql('postgres',
		'SELECT (extract(epoch FROM window_end) * 1000)::bigint FROM cosid_slot()');
}

# ---- the store goes away
my $t_stop = now_ms();
$store->stop;
my $t_stopped = now_ms();
note('the store took ' . ($t_stopped - $t_stop) . ' ms to stop');

my ($last_id, $last_ok_ms, $t_err, @err);
while (now_ms() - $t_stopped < 8000)
{
	my ($id, @e) = next_id(2);
	if (defined $id)
	{
		($last_id, $last_ok_ms) = ($id, now_ms());
		next;
	}
	@err = @e;
	$t_err = now_ms();
	last;
}
ok(defined $t_err, 'with the store away, cosid_next fails') or BAIL_OUT('it never failed');
is($err[0], '55000', 'with SQLSTATE 55000') or diag($err[2]);
like($err[1], qr/^the lease of slot $slot could not be renewed, so its window ended at /,
	'the message says the lease could not be renewed and when the window ended');
like($err[2], qr/DETAIL:  Last error: .*lease store/, 'the detail says why (the lease store)');
like($err[2], qr/HINT:  .*cosid\.lease_store/, 'the hint names cosid.lease_store');
my $end = window_end_ms();
note("store stopped at +0 ms; window ends at +" . ($end - $t_stop) . " ms; last id issued at +"
	  . (($last_ok_ms // $t_stop) - $t_stop) . " ms; first error at +" . ($t_err - $t_stop) . ' ms');
cmp_ok($end - $t_stopped, '<=', $lead_ms + 300,
	"the window ends at most the window lead ($lead_ms ms) after the store went away");
cmp_ok($t_err - $t_stop, '<=', $lead_ms + 2000 + 1500,
	'the first failure comes by the window end plus the 2 s a backend waits for a renewal');
cmp_ok($t_err, '>=', $end, 'and not before the window end');
is( $h->safe_psql('postgres', qq{
		SELECT count(*) FROM ids
		WHERE (extract(epoch FROM (cosid_unpack('g', id))."time") * 1000)::bigint >= $end}),
	'0', 'no id was issued at or after the window end');

my $slot_row = $h->safe_psql('postgres', q{
	SELECT state, slot, store_connected, renewal_failures > 0, last_error FROM cosid_slot()});
like($slot_row, qr/^active\|$slot\|f\|t\|./,
	'cosid_slot(): the slot is kept, store_connected false, renewal failures counted, a last error');
like($slot_row, qr/lease store/, 'the last error is about the lease store');
note("cosid_slot() with the store away: $slot_row");

# the store stays away 2 x TTL in all; still failing at the end of it
usleep(1000 * (2 * $ttl * 1000 - (now_ms() - $t_stop))) if now_ms() - $t_stop < 2 * $ttl * 1000;
my ($id_late, @err_late) = next_id(3);
ok(!defined $id_late && $err_late[0] eq '55000'
	  && $err_late[1] =~ /could not be renewed/,
	'after 2 x TTL without the store, cosid_next still fails with 55000')
  or diag("got id " . ($id_late // 'none') . " / @err_late");

# ---- the store comes back
$store->start;
my $t_back = now_ms();
my $first_id;
poll_until(15, sub { ($first_id) = next_id(4); defined $first_id }, 200);
ok(defined $first_id, 'with the store back, cosid_next issues again')
  or BAIL_OUT('no id after the store came back');
my $t_resumed = now_ms();
note('issuing resumed ' . ($t_resumed - $t_back) . ' ms after the store was started');
cmp_ok($t_resumed - $t_back, '<=', 8000, 'within a few seconds (the reconnect back-off is at most 2 s, COSID_BACKOFF_MAX_MS)');

$h->safe_psql('postgres',
	"INSERT INTO ids (phase, id) SELECT 5, cosid_next('g') FROM generate_series(1, 1000)");
is( $h->safe_psql('postgres', q{
		SELECT (SELECT min(id) FROM ids WHERE phase >= 4) > (SELECT max(id) FROM ids WHERE phase < 4),
			   count(*) - count(DISTINCT id),
			   count(*) FILTER (WHERE phase = 3)
		FROM ids}),
	't|0|0', 'the ids after the outage are above every id before it, none twice');
is( $h->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $slot) FROM ids}),
	'0', 'all of them carry the same slot');
like( $h->safe_psql('postgres', qq{
		SELECT state, slot, store_connected, last_renewal > now() - interval '@{[renewal_slack_ms($ttl)]} milliseconds' FROM cosid_slot()}),
	qr/^active\|$slot\|t\|t$/, 'cosid_slot(): the same slot, connected again, renewing');
my $hinst = $h->safe_psql('postgres', 'SELECT instance FROM cosid_slot()');
my $max_ms = $h->safe_psql('postgres',
	q{SELECT (extract(epoch FROM (cosid_unpack('g', max(id)))."time") * 1000)::bigint FROM ids});
is( $store->safe_psql('postgres', qq{
		SELECT instance = '$hinst', expires_at > now(), window_end > $max_ms
		FROM cosid.lease WHERE slot = $slot}),
	't|t|t', 'the store: the lease is still the holder\'s, alive again, its window end past the last id');

$h->stop;
$store->stop;
done_testing();
