# A hot standby of a manual-mode primary does not issue time-based ids: the
# primary (manual slot 0, the defaults) issues in a loop while its streaming
# standby, started from a base backup with its clock 3 s behind, is asked for
# ids in every form.  Every attempt fails at once with 55000, a message that
# says the server is in recovery and a hint that names leasing a slot
# (cosid.slot = 'lease') and promoting; cosid_slot() says 'recovery'.  The
# primary's ids are unaffected, gen_ulid() works on the standby, and the
# standby replays the primary's rows.  (1.0 issued on the standby from its
# own copy of the slot window: the ids repeated the primary's once it was
# promoted; 061 shows that part.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $primary = cosid_node('primary', init => { allows_streaming => 1 });
$primary->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	SELECT cosid_define('t', '{"strategy":"snowflake","codec":[{"radix":{"radix":62}}]}');
	CREATE TABLE ids (n bigserial PRIMARY KEY, id bigint NOT NULL);
	INSERT INTO ids (id) SELECT cosid_next('g') FROM generate_series(1, 100);
});
like($primary->safe_psql('postgres', 'SELECT mode, slot, state FROM cosid_slot()'),
	qr/^manual\|0\|active$/, 'primary: manual slot 0, active');

my $standby = standby_of($primary, 'standby', offset => '-3s');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
my $behind = now_ms() - node_now_ms($standby);
ok($behind > 2500 && $behind < 3600, "the standby's clock is about 3 s behind ($behind ms)");

# The state leaves 'starting' once the worker has seen it is in recovery.
my $state;
poll_until(10, sub {
	$state = $standby->safe_psql('postgres', 'SELECT state FROM cosid_slot()');
	return $state ne 'starting';
});
is($state, 'recovery', "standby: cosid_slot() shows state 'recovery'");
like($standby->safe_psql('postgres', 'SELECT mode, slot FROM cosid_slot()'),
	qr/^manual\|0$/, 'standby: cosid_slot() shows manual slot 0');

# ---- both at the same time: the primary issues in a loop, the standby is asked
my $load = start_load($primary, 4, 1, "INSERT INTO ids (id) VALUES (cosid_next('g'));");
my @forms = (
	[ 'cosid_next', "SELECT cosid_next('g')" ],
	[ 'cosid_next_text', "SELECT cosid_next_text('t')" ],
	[ 'cosid_next_int', "SELECT cosid_next_int('g')" ],
	[ 'cosid_next_many', "SELECT count(*) FROM cosid_next_many('g', 100)" ],
	[ 'cosid_next in a VALUES list', "SELECT id FROM (VALUES (cosid_next('g')), (cosid_next('g'))) v(id)" ]);
my (%attempts, %refused, %msg_ok, %hint_ok, %fast);
my (@bad, $slowest);
$slowest = 0;
my $deadline = Time::HiRes::time() + 3.5;
while (Time::HiRes::time() < $deadline)
{
	for my $f (@forms)
	{
		my ($name, $sql) = @$f;
		my ($st, $msg, $hint, $took) = recovery_refusal($standby, $sql);
		$attempts{$name}++;
		$refused{$name}++ if $st eq '55000';
		$msg_ok{$name}++ if $msg =~ /recovery/i;
		$hint_ok{$name}++ if $hint =~ /cosid\.slot = 'lease'/ && $hint =~ /promot/i;
		$fast{$name}++ if $took < 1.0;
		$slowest = $took if $took > $slowest;
		push @bad, "$name: [$st] $msg (hint: $hint)" if $st ne '55000' && @bad < 5;
	}
}
my ($load_ok, $load_tx, $load_out) = finish_load($load);
ok($load_ok, "primary: the loop ran ($load_tx inserts) while the standby was asked") or diag($load_out);
cmp_ok($load_tx, '>', 100, 'primary: it inserted more than 100 rows meanwhile');
diag("standby answers other than 55000: @bad") if @bad;
for my $f (@forms)
{
	my $name = $f->[0];
	my $n = $attempts{$name};
	is($refused{$name} // 0, $n, "standby: all $n attempts of $name failed with 55000");
	is($msg_ok{$name} // 0, $n, "standby: every $name message says the server is in recovery");
	is($hint_ok{$name} // 0, $n, "standby: every $name hint names cosid.slot = 'lease' and promoting");
	is($fast{$name} // 0, $n, "standby: every $name attempt failed at once (slowest of all: "
		  . sprintf('%.2f', $slowest) . ' s)');
}
my ($st, $msg, $hint) = recovery_refusal($standby, "SELECT cosid_next('g')");
note("the standby's answer: $st: $msg / HINT: $hint");
is($standby->safe_psql('postgres', "SELECT issued FROM cosid.generator_stats WHERE name = 'g'"), '0',
	'standby: cosid.generator_stats counts no id issued');
is($standby->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'recovery',
	"standby: still 'recovery' after the attempts");

# ---- what still works on the standby
like($standby->safe_psql('postgres', 'SELECT gen_ulid()'), qr/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/,
	'standby: gen_ulid() works');
is($standby->safe_psql('postgres', 'SELECT count(DISTINCT u) FROM (SELECT gen_ulid() u FROM generate_series(1, 1000)) s'),
	'1000', 'standby: 1000 distinct gen_ulid() values');
is($standby->safe_psql('postgres', "SELECT cosid_decode('t', cosid_encode('t', 12345))"), '12345',
	'standby: codecs work');

# ---- the primary's ids are fine, and the standby replays them
is( $primary->safe_psql('postgres', q{
		SELECT count(*) = count(DISTINCT id),
			   bool_and((cosid_unpack('g', id)).node = 0),
			   count(*) FILTER (WHERE id <= prev)
		FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s}),
	't|t|0', 'primary: its ids are distinct, carry slot 0 and increase in the order issued');
like($primary->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), qr/^active$/,
	'primary: its slot is still active');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*), max(id) FROM ids'),
	$primary->safe_psql('postgres', 'SELECT count(*), max(id) FROM ids'),
	'standby: it replayed every row of the primary');
is($standby->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'recovery',
	"standby: still 'recovery' after replaying the primary's window ends");

$standby->stop;
$primary->stop;
done_testing();
