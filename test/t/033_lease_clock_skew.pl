# Clock skew between holders of one slot (libfaketime).  Two old holders run
# with their clocks 20 s ahead and issue ids; one is stopped cleanly, the
# other killed with kill -9 (its lease then expires after the TTL).  New
# holders of their slots, with correct clocks, start their windows at the end
# the old holder recorded: until their clocks pass it, cosid_next fails with
# 55000 ("behind the start of this server's slot window"), and no id at or
# below the old holder's is ever returned.  Meanwhile each new holder keeps
# its lease alive, so that no third server can take its slot.
#
# Both rounds run side by side (slots 0 and 1) to keep the test short.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $ttl = 3;
my $skew_s = 20;
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

# the store's row of a slot: instance (or NULL), window_end, alive?
sub lease_row
{
	my ($slot) = @_;
	return split /\|/, $store->safe_psql('postgres', qq{
		SELECT coalesce(instance, 'NULL'), window_end, expires_at > now()
		FROM cosid.lease WHERE namespace = 'default' AND slot = $slot}), -1;
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

# ---- the old holders, 20 s ahead
my @old;
for my $i (0, 1)
{
	my $node = cosid_node("old$i", conf => lease_conf($store, ttl => $ttl), no_start => 1);
	start_faked($node, offset => "+${skew_s}s");
	setup($node);
	is(wait_for_lease($node), $i, "old holder $i (clock +${skew_s} s) leases slot $i");
	push @old, $node;
}
# the new holders are made now, started later
my @new = map { cosid_node("new$_", conf => lease_conf($store, ttl => $ttl), no_start => 1) } (0, 1);

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
}

# round 1: old0 stops cleanly; round 2: old1 is killed
$old[0]->stop;
my ($r0_inst, $old_end0) = lease_row(0);
is($r0_inst, 'NULL', 'round 1: the old holder stopped cleanly released slot 0');
$old[1]->kill9;
my $t_kill = now_ms();
my ($r1_inst, $old_end1, $r1_alive) = lease_row(1);
is($r1_alive, 't', 'round 2: the killed old holder\'s lease of slot 1 lives on');
my @old_end = ($old_end0, $old_end1);
for my $i (0, 1)
{
	cmp_ok($old_end[$i], '>', $old_max_ms[$i], "slot $i: the store's window end is past the old holder's last id");
}

# round 1: a new holder, correct clock, takes slot 0 at once
$new[0]->start;
setup($new[0]);
is(wait_for_lease($new[0]), '0', 'round 1: the new holder takes slot 0');
my $t_new0 = now_ms();

# round 2: the killed holder's slot only after its lease expired
ok(poll_until($ttl + 5, sub { (lease_row(1))[2] eq 'f' }, 200), 'round 2: the dead lease of slot 1 expires');
note('round 2: it expired ' . (now_ms() - $t_kill) . ' ms after the kill');
# more than a TTL after it took slot 0, the new holder still holds it
my $more = $t_new0 + ($ttl + 1) * 1000 - now_ms();
usleep($more * 1000) if $more > 0;
is((lease_row(0))[2], 't',
	'round 1: the new holder of slot 0, waiting for its window, keeps its lease alive past the TTL')
  or diag('slot 0 in the store: ' . $store->safe_psql('postgres',
	"SELECT instance, expires_at, renewed_at, now() FROM cosid.lease WHERE slot = 0"));
$new[1]->start;
setup($new[1]);
is(wait_for_lease($new[1]), '1', 'round 2: the new holder takes slot 1, the dead holder\'s');

for my $i (0, 1)
{
	is( $new[$i]->safe_psql('postgres',
			'SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()'),
		$old_end[$i], "slot $i: the new holder's window starts at the old holder's recorded end");
}

# ---- poll both new holders until they issue (about $skew_s s)
my @st = map { { errors => 0, unexpected => 0, ids => [], first_ms => undef, lease_lost => 0 } } (0, 1);
my $deadline = now_ms() + ($skew_s + 15) * 1000;
while (now_ms() < $deadline && grep { !defined $_->{first_ms} } @st)
{
	for my $i (0, 1)
	{
		my $s = $st[$i];
		next if defined $s->{first_ms};
		my ($id, $state, $msg, $stderr) = next_id($new[$i]);
		if (defined $id)
		{
			$s->{first_ms} = now_ms();
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

for my $i (0, 1)
{
	my $s = $st[$i];
	ok(defined $s->{first_ms}, "slot $i: the new holder issues once its clock has passed the old holder's end")
	  or next;
	note("slot $i: $s->{errors} calls failed; the first id came "
		  . ($s->{first_ms} - $old_end[$i]) . ' ms after the old end (real clock)');
	cmp_ok($s->{errors}, '>', 0, "slot $i: before that, cosid_next failed");
	is($s->{unexpected}, 0, "slot $i: every failure was 55000 'clock is ... behind the start of this server's slot window'");
	is($s->{lease_lost}, 0, "slot $i: the new holder's lease stayed alive while it waited");
	cmp_ok($s->{first_ms}, '>=', $old_end[$i] - 100, "slot $i: no id before the real clock reached the old end");
	$new[$i]->safe_psql('postgres',
		"INSERT INTO ids (id) SELECT cosid_next('g') FROM generate_series(1, 5000)");
	is( $new[$i]->safe_psql('postgres', qq{
			SELECT count(*), count(*) FILTER (WHERE id <= $old_max[$i]),
				   count(*) FILTER (WHERE (extract(epoch FROM (cosid_unpack('g', id))."time") * 1000)::bigint < $old_end[$i]),
				   count(*) FILTER (WHERE (cosid_unpack('g', id)).node <> $i)
			FROM ids}),
		'5001|0|0|0', "slot $i: no id of the new holder is at or below the old holder's, none before its end; all of slot $i");
}

$_->stop for @new;
$store->stop;
done_testing();
