# gen_ulid_monotonic() is strictly increasing across restarts and crashes,
# also when the server comes back with its clock behind (libfaketime): the
# time of the last ULID is kept ahead of use on disk (pg_cosid/ulid.state),
# and a new ULID goes on from there while the clock is behind it (its time
# part is the file's mark, its 80-bit part starts from fresh random bits and
# counts up from them: until 1.4 it counted 1, 2, 3..., so two servers in
# that state were no longer kept apart by randomness).  Before, nothing of
# the last ULID survived a restart: with the clock 3-5 s behind, every new
# ULID sorted below the last one before it.  gen_uuidv7_monotonic() (1.3)
# keeps its last uuid under the same mark: each statement below makes a
# ULID and a version 7 uuid, and both are checked.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

plan skip_all => 'libfaketime is not installed' unless faketime_lib();

my $node = cosid_node('ulid_restart', no_start => 1);
my $offset_file = $node->basedir . '/faketime.rc';
set_fake_offset($offset_file, '+0');
start_faked($node, offset_file => $offset_file);
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE TABLE u (phase int, n bigserial, id ulid, v uuid);
});

sub make_ulids
{
	my ($phase, $count) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO u (phase, id, v) SELECT $phase, gen_ulid_monotonic(), gen_uuidv7_monotonic() FROM generate_series(1, $count)");
}

# every ULID of the phase (one backend) sorts above every earlier one, in the
# order issued
sub check_phase
{
	my ($phase, $what) = @_;
	is( $node->safe_psql('postgres', qq{
		SELECT (SELECT min(id) FROM u WHERE phase = $phase) > (SELECT max(id) FROM u WHERE phase < $phase),
			   (SELECT count(*) - count(DISTINCT id) FROM u),
			   (SELECT count(*) FROM (SELECT id < lag(id) OVER (ORDER BY n) AS down FROM u WHERE phase = $phase) s
				WHERE down)}),
		't|0|0', "$what: every new ULID sorts above every earlier one, none twice, in the order issued");
	is( $node->safe_psql('postgres', qq{
		SELECT (SELECT min(v::ulid) FROM u WHERE phase = $phase) > (SELECT max(v::ulid) FROM u WHERE phase < $phase),
			   (SELECT count(*) - count(DISTINCT v) FROM u),
			   (SELECT count(*) FROM (SELECT v < lag(v) OVER (ORDER BY n) AS down FROM u WHERE phase = $phase) s
				WHERE down)}),
		't|0|0', "$what: so does every new version 7 uuid");
}

# after a restart with the clock behind: the random bits of the phase's ids
# are random still, not a run of small integers (the 40 bits at the top of a
# ULID's 80-bit part are zero with odds of 2^-40 each; in 1.3 they all were)
sub check_random_bits
{
	my ($phase, $what) = @_;
	is( $node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE substr(id::text, 11, 8) = '00000000'),
			   count(*) FILTER (WHERE substr(v::text, 16, 3) || substr(v::text, 21, 3) || substr(v::text, 25, 4) = '0000000000')
		FROM u WHERE phase = $phase}),
		'0|0', "$what: the ULIDs' 80-bit parts and the uuids' random bits are random, not 1, 2, 3...");
}

make_ulids(1, 2000);
my $last_ms = $node->safe_psql('postgres',
	q{SELECT (extract(epoch FROM ulid_time(max(id))) * 1000)::bigint FROM u});

# ---- a clean restart with the clock 4 s behind
$node->stop;
my $state_file = $node->data_dir . '/pg_cosid/ulid.state';
my $state = -f $state_file ? slurp_file($state_file) : '';
like($state, qr/^cosid ulid state 1\nmark_ms=(\d+)\n$/, 'the mark is on disk');
my ($mark) = $state =~ /mark_ms=(\d+)/;
$mark //= 0;
cmp_ok($mark, '>', $last_ms, 'the mark lies above the time of the last ULID');
cmp_ok($mark - $last_ms, '<=', 1500, 'and at most about a second ahead of it');
set_fake_offset($offset_file, '-4');
start_faked($node, offset_file => $offset_file);
make_ulids(2, 2000);
check_phase(2, 'restart, clock 4 s behind');
# (while the server's clock is still behind the last ULID before the restart,
# the new ones carry that ULID's time, not the clock's)
my ($t2, $clock2) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (extract(epoch FROM ulid_time(min(id))) * 1000)::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
	FROM u WHERE phase = 2});
SKIP:
{
	# the check needs the server's clock still behind the last ULID before the
	# restart; on a machine so slow that 4 s went by, there is nothing to see
	skip('restart, clock 4 s behind: the server\'s clock (' . ($clock2 - $last_ms)
		  . ' ms past the last ULID) had passed it already, so which time the new ULIDs carry shows nothing', 2)
	  unless $clock2 < $last_ms;
	cmp_ok($t2, '>=', $last_ms,
		'restart, clock 4 s behind: the new ULIDs carry the time they went on from, not the clock');
	check_random_bits(2, 'restart, clock 4 s behind');
}

# ---- a crash (kill -9 of every process) with the clock 5 s behind
make_ulids(3, 2000);
set_fake_offset($offset_file, '-5');
crash_restart($node, all => 1,
	start => sub { start_faked($node, offset_file => $offset_file, fail_ok => 1) });
make_ulids(4, 2000);
check_phase(4, 'crash, clock 5 s behind');
check_random_bits(4, 'crash, clock 5 s behind');

# ---- several backends at once after a crash with the clock 3 s behind
set_fake_offset($offset_file, '-3');
crash_restart($node, all => 1,
	start => sub { start_faked($node, offset_file => $offset_file, fail_ok => 1) });
my $load = start_load_tx($node, 4, 1,
	'INSERT INTO u (phase, id, v) SELECT 5, gen_ulid_monotonic(), gen_uuidv7_monotonic() FROM generate_series(1, 3000);');
my ($load_ok, $tx, $load_out) = finish_load($load);
ok($load_ok, '4 backends ran') or diag($load_out);
is($node->safe_psql('postgres', 'SELECT count(*) FROM u WHERE phase = 5'), '12000', '4 backends issued 12,000 ULIDs');
is( $node->safe_psql('postgres', q{
	SELECT (SELECT min(id) FROM u WHERE phase = 5) > (SELECT max(id) FROM u WHERE phase < 5),
		   (SELECT count(*) - count(DISTINCT id) FROM u)}),
	't|0', 'crash, clock 3 s behind, 4 backends: all above every earlier ULID, none twice');
is( $node->safe_psql('postgres', q{
	SELECT (SELECT min(v::ulid) FROM u WHERE phase = 5) > (SELECT max(v::ulid) FROM u WHERE phase < 5),
		   (SELECT count(*) - count(DISTINCT v) FROM u)}),
	't|0', '... and every version 7 uuid above every earlier one, none twice');
check_random_bits(5, 'crash, clock 3 s behind, 4 backends');

# ---- the clock back in step: ULIDs carry the clock again
set_fake_offset($offset_file, '+0');
$node->restart;
make_ulids(6, 100);
check_phase(6, 'restart with the right clock');
my $t6 = $node->safe_psql('postgres',
	q{SELECT (extract(epoch FROM ulid_time(max(id))) * 1000)::bigint FROM u WHERE phase = 6});
cmp_ok(abs($t6 - now_ms()), '<', 2000, 'with the right clock, the time part is the clock\'s');
my $v6 = $node->safe_psql('postgres',
	q{SELECT (extract(epoch FROM uuidv7_time(max(v::ulid)::uuid)) * 1000)::bigint FROM u WHERE phase = 6});
cmp_ok(abs($v6 - now_ms()), '<', 2000, '... the uuids\' too');

# ---- a damaged state file stops gen_ulid_monotonic() with a clear error
$node->stop;
open(my $fh, '>', $node->data_dir . '/pg_cosid/ulid.state') or die $!;
print $fh "garbage\n";
close($fh);
start_faked($node, offset_file => $offset_file);
my ($st, $msg) = psql_error($node, 'postgres', 'SELECT gen_ulid_monotonic()');
is($st, 'XX001', 'a damaged ulid.state: gen_ulid_monotonic() fails with XX001 (data corrupted)');
like($msg, qr/^cosid ULID state file "pg_cosid\/ulid.state" is damaged$/, 'naming the file');
($st) = psql_error($node, 'postgres', 'SELECT gen_uuidv7_monotonic()');
is($st, 'XX001', '... and so does gen_uuidv7_monotonic()');
like($node->safe_psql('postgres', 'SELECT gen_ulid()::text'), qr/^[0-9A-Z]{26}$/,
	'gen_ulid() does not need the file');

done_testing();
