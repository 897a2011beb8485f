# Identities belong to a database (issue 28, items 2, 4 (local part) and 6).
# A time-based generator's identity belongs to the database that first
# defined it or issued with it on this server; another database gets it only
# through a copy that a superuser or a member of the owning database's owner
# role makes.  mallory owns database dm and is no superuser; alice owns da,
# which mallory may not even connect to.  Every attack below worked on 1.3:
#
#  1. A row of cosid.generator_history with alice's identity, then
#     cosid_define: mallory's generator shared alice's state (1.3: the
#     history had no restore check).  Now 42501 at the insert, naming the
#     identity and database da.
#  2. A restored cosid.generator row with alice's identity, of the same
#     layout and of another one (1.3: accepted, because an identity whose
#     layout never changed had no layout record): 42501.
#  3. A restored row with identity 0 of a name that alice's database at 1.2
#     issued with (1.3: accepted, and the two shared identity 0's state).
#     The update to 1.4 gave alice's generator an identity of its own, whose
#     ids continue above all identity 0 issued, and a copy of her database
#     still at 1.2 issues with it too; mallory's row is refused, and so is
#     his definition of that name in a database of his still at 1.2.  Two
#     tenants copied from one 1.2 template share their identity after the
#     update, and each tenant's owner may restore it.
#  4. A row whose layout is not its identity's, restored by alice herself
#     (who may copy her identities) into another database of hers, as a
#     generator row or a history row, and a history row written by a
#     superuser then taken by cosid_define: 22023 (1.3: accepted).
#  5. A restored lease-store row naming counter_database 'da' (1.3: accepted,
#     and da's generator of that name later got 42501 on every fetch):
#     42501 unless restored by a superuser or da's owner.
#  6. Fair shares: with cosid.max_generators = 16 mallory keeps his entries
#     busy and also issues on the generators of two more databases
#     (PUBLIC may issue), so that four databases hold entries; victor's
#     database, with 6 generators, still issues every time (1.3: 53200 once
#     it held 4, the share of 4 databases).
#
# And what must go on working: a copy made by a superuser (CREATE DATABASE
# ... TEMPLATE) and a restore by the owner into another database of hers,
# both of the same identity; a name dropped and defined again keeps its
# identity; pg_cosid/names in 1.3's format is read and rewritten in 1.4's.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('ident_owner', conf => [ 'cosid.max_generators = 16' ]);
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE mallory LOGIN;
	CREATE ROLE victor LOGIN;
	CREATE DATABASE da OWNER alice;
	CREATE DATABASE da2 OWNER alice;
	CREATE DATABASE dm OWNER mallory;
	CREATE DATABASE dv OWNER victor;
	REVOKE CONNECT ON DATABASE da FROM PUBLIC;
	GRANT CONNECT ON DATABASE da TO alice;
});
$node->safe_psql($_, 'CREATE EXTENSION cosid') for qw(da da2 dm dv);

sub as
{
	my ($role, $db, $sql) = @_;
	return $node->safe_psql($db, "SET ROLE $role;\n$sql");
}

# (SQLSTATE, message, stderr), or () when it succeeded
sub as_error
{
	my ($role, $db, $sql) = @_;
	return psql_error($node, $db, "SET ROLE $role;\n$sql");
}

my $layout_cols = 'epoch_ms, unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold';
as('alice', 'da', q{
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	SELECT cosid_define('pay', '{"strategy":"snowflake"}');
	SELECT cosid_define('inv', '{"strategy":"snowflake"}');
	CREATE TABLE ids (g text, id bigint);
	INSERT INTO ids SELECT 'order', cosid_next_many('order', 1000);
	INSERT INTO ids SELECT 'pay', cosid_next_many('pay', 1000);
	SELECT cosid_next('inv');
});
my %ident = map { $_ => as('alice', 'da', "SELECT identity FROM cosid.generator WHERE name = '$_'") }
  qw(order pay inv);
my %layout = map { $_ => as('alice', 'da', "SELECT $layout_cols FROM cosid.generator WHERE name = '$_'") }
  qw(order pay inv);
my ($state, $msg, $err);

# ---- 1. a history row with alice's identity, then cosid_define
my ($e, $u, $t, $n, $s) = split /\|/, $layout{order};
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator_history (name, last_number, identity, strategy, epoch_ms, unit_ms,
		time_bits, node_bits, seq_bits, uncertainty_bits)
	VALUES ('order', 0, $ident{order}, 'snowflake', $e, $u, $t, $n, $s, 0)});
is($state, '42501', "mallory: a history row with alice's identity of 'order' is refused (42501)") or diag($err);
like($err // '', qr/DETAIL:  Identity $ident{order} of generator "order" belongs to database "da"/,
	'... the detail names the identity and its database');
like($err // '', qr/HINT:  Copy database "da" as a superuser or as a member of its owner role alice/,
	'... the hint says who may copy it');
($state, $msg) = as_error('mallory', 'dm', q{SELECT cosid_define('order', '{"strategy":"snowflake"}')});
ok(!defined $state, "mallory defines 'order'") or diag($msg);
isnt(as('mallory', 'dm', q{SELECT identity FROM cosid.generator WHERE name = 'order'}), $ident{order},
	'... with an identity of its own, not alice\'s');
as('mallory', 'dm', q{SELECT count(*) FROM (SELECT cosid_next_many('order', 5000)) x});
is($node->safe_psql('da', q{SELECT issued FROM cosid.generator_stats WHERE name = 'order'}), '1000',
	"alice's stats show her 1,000 ids only");

# ---- 2. generator rows with alice's identity, same layout and another
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	SELECT 'pay', 'snowflake', '{"strategy":"snowflake"}', 'mallory', } . join(', ', split /\|/, $layout{pay})
	  . qq{, $ident{pay}});
is($state, '42501', "mallory: a generator row with alice's identity of 'pay' (same layout) is refused (42501)")
  or diag($err);
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	VALUES ('inv', 'snowflake', '{"strategy":"snowflake","epoch":0}', 'mallory', 0, 1, 41, 10, 12, 2047, $ident{inv})});
is($state, '42501', "mallory: a generator row with alice's identity of 'inv' and another layout is refused (42501)")
  or diag($err);
is(as('mallory', 'dm', q{SELECT count(*) FROM cosid.generator WHERE name IN ('pay', 'inv')}), '0',
	'... neither row is in dm');
($state, $msg) = as_error('alice', 'da', q{
	SELECT count(*) FROM (SELECT cosid_next_many('order', 1000)) x;
	SELECT count(*) FROM (SELECT cosid_next_many('pay', 1000)) x;
	SELECT cosid_next('inv')});
ok(!defined $state, "alice's generators issue") or diag($msg);

# ---- 3. identity 0: alice's database at 1.2, updated to 1.4
$node->safe_psql('postgres', 'CREATE DATABASE dl OWNER alice');
$node->safe_psql('dl', q{CREATE EXTENSION cosid VERSION '1.2'});
as('alice', 'dl', q{
	SELECT cosid_define('legacy', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase text, id bigint);
	INSERT INTO ids SELECT 'at 1.2', cosid_next_many('legacy', 5000);
});
# a copy made before the update, which stays at 1.2
$node->safe_psql('postgres', 'CREATE DATABASE dl_copy TEMPLATE dl OWNER alice');
$node->safe_psql('dl', q{ALTER EXTENSION cosid UPDATE});
is($node->safe_psql('dl', q{SELECT extversion FROM pg_extension WHERE extname = 'cosid'}), '1.4',
	'dl is at 1.4');
my $legacy = $node->safe_psql('dl', q{SELECT identity FROM cosid.generator WHERE name = 'legacy'});
isnt($legacy, '0', 'the update gave identity 0\'s generator an identity of its own');
as('alice', 'dl', q{INSERT INTO ids SELECT 'at 1.4', cosid_next_many('legacy', 5000)});
is($node->safe_psql('dl', q{SELECT min(id) FILTER (WHERE phase = 'at 1.4') > max(id) FILTER (WHERE phase = 'at 1.2'),
		count(DISTINCT id) FROM ids}), 't|10000', '... whose ids continue above every id identity 0 issued');
as('alice', 'dl_copy', q{INSERT INTO ids SELECT 'copy', cosid_next_many('legacy', 3000)});
is($node->safe_psql('dl', q{SELECT issued FROM cosid.generator_stats WHERE name = 'legacy'}), '8000',
	'the copy still at 1.2 (identity 0) issues with the identity dl got: one entry, 5,000 + 3,000 ids');
my $copy_ids = as('alice', 'dl_copy', q{SELECT string_agg(id::text, ',') FROM ids WHERE phase = 'copy'});
as('alice', 'dl', qq{INSERT INTO ids SELECT 'copy', unnest(string_to_array('$copy_ids', ',')::bigint[])});
is($node->safe_psql('dl', q{SELECT count(*), count(DISTINCT id) FROM ids}), '13000|13000',
	'... and none of its ids is one dl issued');
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols)
	SELECT 'legacy', 'snowflake', '{"strategy":"snowflake"}', 'mallory', } . join(', ', split /\|/,
		$node->safe_psql('dl', "SELECT $layout_cols FROM cosid.generator WHERE name = 'legacy'")));
is($state, '42501', "mallory: a generator row with identity 0 of 'legacy' is refused (42501)") or diag($err);
like($err // '', qr/Identity 0 of generator "legacy" belongs to database "dl"/, '... it is dl\'s');
# mallory's database still at 1.2 defines 'legacy' with its layout: its
# identity 0 would issue with dl's identity
$node->safe_psql('postgres', 'CREATE DATABASE dm12 OWNER mallory');
$node->safe_psql('dm12', q{CREATE EXTENSION cosid VERSION '1.2'});
($state, $msg, $err) = as_error('mallory', 'dm12', q{SELECT cosid_define('legacy', '{"strategy":"snowflake"}')});
is($state, '42501', "mallory: defining 'legacy' in a database still at 1.2 is refused (42501)") or diag($err);
like($err // '', qr/HINT:  Update cosid in this database/, '... with a hint to update it');
# tenants copied from one template at 1.2 (one identity 0), updated one
# after the other: one identity, and each owner restores it
$node->safe_psql('postgres', 'CREATE DATABASE dtpl');
$node->safe_psql('dtpl', q{CREATE EXTENSION cosid VERSION '1.2'; SELECT cosid_define('tg', '{"strategy":"snowflake"}'); SELECT cosid_next('tg')});
$node->safe_psql('postgres', 'CREATE DATABASE dt1 TEMPLATE dtpl OWNER alice');
$node->safe_psql('postgres', 'CREATE DATABASE dt2 TEMPLATE dtpl OWNER victor');
$node->safe_psql($_, 'ALTER EXTENSION cosid UPDATE') for qw(dt1 dt2);
my $tg = $node->safe_psql('dt1', q{SELECT identity FROM cosid.generator WHERE name = 'tg'});
is($node->safe_psql('dt2', q{SELECT identity FROM cosid.generator WHERE name = 'tg'}), $tg,
	'two copies of a 1.2 template, updated one after the other, get one identity');
($state, $msg, $err) = as_error('victor', 'dv', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	SELECT 'tg', 'snowflake', '{"strategy":"snowflake"}', 'victor', } . join(', ', split /\|/,
		$node->safe_psql('dt2', "SELECT $layout_cols FROM cosid.generator WHERE name = 'tg'")) . qq{, $tg});
ok(!defined $state, "victor, dt2's owner, restores its 'tg' into dv (its identity is dt1's first)") or diag($err);
$node->safe_psql('dv', q{DELETE FROM cosid.generator WHERE name = 'tg'});
$node->restart;
as('alice', 'dl', q{INSERT INTO ids SELECT 'restarted', cosid_next_many('legacy', 5000)});
is($node->safe_psql('dl', q{SELECT count(*), count(DISTINCT id) FROM ids}), '18000|18000',
	'dl: no id twice, also after a restart');

# ---- 4. a layout that is not the identity's, by alice herself
($state, $msg, $err) = as_error('alice', 'da2', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	VALUES ('inv', 'snowflake', '{"strategy":"snowflake","epoch":0}', 'alice', 0, 1, 41, 10, 12, 2047, $ident{inv})});
is($state, '22023', "alice: a generator row with 'inv''s identity and another layout is refused (22023)")
  or diag($err);
like($msg // '', qr/has another layout than its identity issued ids with/, '... for its layout');
($state, $msg, $err) = as_error('alice', 'da2', qq{
	INSERT INTO cosid.generator_history (name, last_number, identity, strategy, epoch_ms, unit_ms,
		time_bits, node_bits, seq_bits, uncertainty_bits)
	VALUES ('inv', 0, $ident{inv}, 'snowflake', 0, 1, 41, 10, 12, 0)});
is($state, '22023', "alice: a history row with 'inv''s identity and another layout is refused (22023)") or diag($err);
$node->safe_psql('da2', qq{
	DELETE FROM cosid.generator_history WHERE name = 'inv';
	INSERT INTO cosid.generator_history (name, last_number, identity, strategy, epoch_ms, unit_ms,
		time_bits, node_bits, seq_bits, uncertainty_bits)
	VALUES ('inv', 0, $ident{inv}, 'snowflake', 0, 1, 41, 10, 12, 0)});
($state, $msg) = as_error('alice', 'da2', q{SELECT cosid_define('inv', '{"strategy":"snowflake","epoch":0}')});
is($state, '22023', 'cosid_define over a history row (written by a superuser) with another layout than its identity\'s: 22023')
  or diag($msg);
$node->safe_psql('da2', q{DELETE FROM cosid.generator_history});

# ---- legitimate paths: the owner's restore, a superuser's copy, a drop
($state, $msg, $err) = as_error('alice', 'da2', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	SELECT 'pay', 'snowflake', '{"strategy":"snowflake"}', 'alice', } . join(', ', split /\|/, $layout{pay})
	  . qq{, $ident{pay}});
ok(!defined $state, "alice restores 'pay' with its identity into da2, a database of hers") or diag($err);
as('alice', 'da2', q{CREATE TABLE ids (g text, id bigint); INSERT INTO ids SELECT 'pay', cosid_next_many('pay', 1000)});
my $da2_ids = as('alice', 'da2', q{SELECT string_agg(id::text, ',') FROM ids});
as('alice', 'da', qq{INSERT INTO ids SELECT 'pay', unnest(string_to_array('$da2_ids', ',')::bigint[])});
is(as('alice', 'da', q{SELECT count(*), count(DISTINCT id) FROM ids WHERE g = 'pay'}), '2000|2000',
	'... and da2 issues from the same sequence as da: no id twice');
$node->safe_psql('postgres', 'CREATE DATABASE da_copy TEMPLATE da OWNER alice');
($state, $msg) = as_error('alice', 'da_copy', q{SELECT cosid_next('order'), cosid_next('pay'), cosid_next('inv')});
ok(!defined $state, 'a copy made by a superuser (CREATE DATABASE ... TEMPLATE) issues') or diag($msg);
as('alice', 'da', q{SELECT cosid_drop('order'); SELECT cosid_define('order', '{"strategy":"snowflake"}')});
is(as('alice', 'da', q{SELECT identity FROM cosid.generator WHERE name = 'order'}), $ident{order},
	'alice drops \'order\' and defines it again: it keeps its identity');
as('alice', 'da_copy', q{SELECT cosid_drop('order'); SELECT cosid_define('order', '{"strategy":"snowflake"}')});
is(as('alice', 'da_copy', q{SELECT identity FROM cosid.generator WHERE name = 'order'}), $ident{order},
	'... and so does the copy');

# ---- 5. a lease-store row naming another database's counter
($state, $msg, $err) = as_error('mallory', 'dm', q{
	INSERT INTO cosid.generator (name, strategy, config, owner, counter_database)
	VALUES ('cnt', 'segment', '{"strategy":"segment","distributor":"lease-store"}', 'mallory', 'da')});
is($state, '42501', "mallory: a row naming da's counter (counter_database 'da') is refused (42501)") or diag($err);
like($err // '', qr/counter_database names the lease store's counters of database "da"/, '... saying why');
($state, $msg, $err) = as_error('mallory', 'dm', q{
	INSERT INTO cosid.generator (name, strategy, config, owner, counter_database)
	VALUES ('cnt', 'segment', '{"strategy":"segment","distributor":"lease-store"}', 'mallory', 'dm')});
ok(!defined $state, "... one naming dm's own counter restores") or diag($err);
($state, $msg, $err) = as_error('alice', 'da2', q{
	INSERT INTO cosid.generator (name, strategy, config, owner, counter_database)
	VALUES ('cnt', 'segment', '{"strategy":"segment","distributor":"lease-store"}', 'alice', 'da')});
ok(!defined $state, "alice (da's owner) restores a row naming da's counter into da2") or diag($err);
$node->safe_psql('dm', q{
	INSERT INTO cosid.generator (name, strategy, config, owner, counter_database)
	VALUES ('cnt2', 'segment', '{"strategy":"segment","distributor":"lease-store"}', 'mallory', 'da')});
pass('a superuser restores one');

# ---- 6. fair shares: mallory issues in two more databases (after a restart:
# no other database holds entries)
$node->restart;
for my $db (qw(do1 do2))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{CREATE EXTENSION cosid; SELECT cosid_define('g', '{"strategy":"snowflake"}')});
}
as('mallory', 'dm', join('', map { "SELECT cosid_define('m$_', '{\"strategy\":\"snowflake\"}');\n" } 1 .. 16));
as('victor', 'dv', join('', map { "SELECT cosid_define('v$_', '{\"strategy\":\"snowflake\"}');\n" } 1 .. 6));
my $busy = q{DO $$ BEGIN FOR i IN 1..16 LOOP BEGIN PERFORM cosid_next('m' || i);
	EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$;};
my @victim_failed;
for my $round (1 .. 8)
{
	as('mallory', 'dm', $busy);
	as('mallory', $_, q{SELECT cosid_next('g')}) for qw(do1 do2);
	my ($vs, $vm) = as_error('victor', 'dv', 'SELECT ' . join(', ', map { "cosid_next('v$_')" } 1 .. 6));
	push @victim_failed, "round $round: $vs $vm" if defined $vs;
}
is(scalar(@victim_failed), 0, "victor's 6 generators issue in every round while mallory holds entries and issues in do1 and do2")
  or diag(join("\n", @victim_failed));
($state, $msg) = as_error('mallory', 'dm', 'SELECT ' . join(', ', map { "cosid_next('m$_')" } 1 .. 16));
ok(!defined $state, 'mallory issues from all his 16 at once, churning through his own entries (1.3: 53200)') or diag($msg);
is($node->safe_psql('dv', q{SELECT count(*) FROM cosid.stats()}), '6',
	"... while victor's 6 generators keep their entries");

# ---- pg_cosid/names in 1.3's format (3) is read and rewritten in 1.4's (4)
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	for my $byte (unpack('C*', $data))
	{
		$crc ^= $byte;
		for (1 .. 8)
		{
			$crc = ($crc & 1) ? (($crc >> 1) ^ 0x82F63B78) : ($crc >> 1);
		}
	}
	return $crc ^ 0xFFFFFFFF;
}
my $names = $node->data_dir . '/pg_cosid/names';
my $da_oid = $node->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'da'});
$node->safe_psql('da', q{SELECT cosid_define('v13', '{"strategy":"snowflake"}')});
my $v13 = as('alice', 'da', q{SELECT identity FROM cosid.generator WHERE name = 'v13'});
my @l13 = split /\|/, as('alice', 'da', qq{SELECT $layout_cols FROM cosid.generator WHERE name = 'v13'});
my $l13 = join(', ', @l13);
$node->stop;
# a 1.3 record: name, kind (2: the name's in a database), database, identity,
# wide, uncertainty bits, layout (epoch, unit, time, node, sequence bits,
# padding, reset threshold), floor, forgotten, checksum
my $body = pack('a64 l L q l l q q l l l l q q l', 'v13', 2, $da_oid, $v13, 0, 0,
	@l13[ 0 .. 4 ], 0, 0, -1, 0);
open(my $nf, '>:raw', $names) or die $!;
print $nf pack('L L', 0xC051D4A3, 3) . $body . pack('L', crc32c($body));
close($nf);
$node->start;
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	VALUES ('v13', 'snowflake', '{"strategy":"snowflake"}', 'mallory', $l13, $v13)});
is($state, '42501', "with 1.3's pg_cosid/names: its record makes the identity da's (42501 for mallory)") or diag($err);
($state, $msg) = as_error('mallory', 'dm', q{SELECT cosid_define('after13', '{"strategy":"snowflake"}'); SELECT cosid_next('after13')});
ok(!defined $state, '... a define rewrites the file') or diag($msg);
my $head = '';
open($nf, '<:raw', $names) or die $!;
read($nf, $head, 8);
close($nf);
is(join(',', unpack('L L', $head)), (0xC051D4A3) . ',5', 'pg_cosid/names is in 1.4\'s format now (5)');
$node->restart;
($state, $msg, $err) = as_error('mallory', 'dm', qq{
	INSERT INTO cosid.generator (name, strategy, config, owner, $layout_cols, identity)
	VALUES ('v13', 'snowflake', '{"strategy":"snowflake"}', 'mallory', $l13, $v13)});
is($state, '42501', '... and still says the identity is da\'s after a restart') or diag($err);
($state, $msg) = as_error('alice', 'da', q{SELECT cosid_next('v13')});
ok(!defined $state, "da's generator issues") or diag($msg);

$node->stop;
done_testing();
