# Databases are separate (DESIGN 2.8; issue 19, items 2, 4 and 6): nothing a
# role does in its own database stops, slows or reveals another database's
# generators.  Two roles, each owning a database: alice (database da, which
# mallory may not even connect to) and mallory (database dm).
#
#  1. mallory defines alice's generator name with another layout ("epoch":
#     0) and issues: alice's generator goes on issuing, also after a restart,
#     and alice can drop it and define it again with its old layout.  (1.2:
#     the state and the layout history were per server and name, and alice's
#     generator failed for good with 55000 "would issue ids that its name
#     already issued on this server".)
#  2. mallory's generator of the same name and layout is another generator:
#     alice's counts show only her ids, and mallory's ids do not come out of
#     alice's sequence.
#  3. cosid.stats() in dm lists dm's generators only.  (1.2: every
#     database's, with counts and layouts.)
#  4. With cosid.max_generators = 16, mallory keeps every entry busy; alice
#     still gets up to her share (8 of 16) and mallory can take no more than
#     his once alice holds hers: he churns through his own.  (1.2: "too many
#     cosid generators in use" for alice; 1.3: 53200 for mallory.)
#  5. pg_cosid/names stays bounded through 1,000 define/issue/drop cycles of
#     new names (1.2: 120 bytes more for every name ever issued; 1.4: at most
#     cosid.max_names live records, 48 here, names.next included), a
#     generator's first use writes nothing to it, and adding a name appends
#     to it rather than rewriting it.
#  6. A copy of da (CREATE DATABASE TEMPLATE) is still the same generator:
#     it issues side by side with da and never an id da issued.
#  7. Two tenants' copies of one template: one defines the generator again
#     with another layout, and the other's copy goes on issuing.
#  8. A row in cosid.generator_history that cosid_drop did not write (a
#     null layout) is ignored with a warning, not trusted.
#  9. 1.2's pg_cosid/names is read and rewritten in 1.3's format.
# 10. cosid_drop(forget_history => true) in a transaction rolled back
#     forgets nothing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('two_dbs', conf => [ 'cosid.max_generators = 16', 'cosid.max_names = 48' ]);
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE da OWNER alice;
	CREATE DATABASE dm OWNER mallory;
	REVOKE CONNECT ON DATABASE da FROM PUBLIC;
	GRANT CONNECT ON DATABASE da TO alice;
});
$node->safe_psql($_, 'CREATE EXTENSION cosid') for qw(da dm);

# psql in database $db as $role
sub as
{
	my ($role, $db, $sql) = @_;
	return $node->safe_psql($db, "SET ROLE $role;\n$sql");
}

sub as_error
{
	my ($role, $db, $sql) = @_;
	return psql_error($node, $db, "SET ROLE $role;\n$sql");
}

my ($state, $msg);
($state) = $node->psql('da', 'SELECT 1', extra_params => [ '-U', 'mallory' ]);
isnt($state, 0, 'mallory may not connect to da');

# ---- 1. another layout under alice's name
as('alice', 'da', q{
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase text, id bigint);
	INSERT INTO ids SELECT 'first', cosid_next_many('order', 5000);
});
($state, $msg) = as_error('mallory', 'dm', q{
	SELECT cosid_define('order', '{"strategy":"snowflake","epoch":0}');
	SELECT cosid_next('order');
});
ok(!defined $state, "mallory defines 'order' with epoch 0 in dm and issues")
  or diag($msg);

($state, $msg) = as_error('alice', 'da', q{INSERT INTO ids SELECT 'after mallory', cosid_next_many('order', 5000)});
ok(!defined $state, "alice's 'order' still issues after mallory's definition of its name")
  or diag($msg);
$node->restart;
($state, $msg) = as_error('mallory', 'dm', q{SELECT cosid_next('order')});
ok(!defined $state, "after a restart, mallory's issues first") or diag($msg);
($state, $msg) = as_error('alice', 'da', q{INSERT INTO ids SELECT 'after restart', cosid_next_many('order', 5000)});
ok(!defined $state, "... and alice's 'order' still issues") or diag($msg);

($state, $msg) = as_error('alice', 'da', q{
	SELECT cosid_drop('order');
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	INSERT INTO ids SELECT 'defined again', cosid_next_many('order', 5000);
});
ok(!defined $state, "alice drops 'order' and defines it again with its old layout; it issues")
  or diag($msg);
is(as('alice', 'da', q{
	SELECT (SELECT min(id) FROM ids WHERE phase = 'defined again') > (SELECT max(id) FROM ids WHERE phase <> 'defined again'),
		   count(*) - count(DISTINCT id) FROM ids}),
	't|0', "... above every id it issued before, none twice");

# ---- 2. the same name and layout in dm is another generator
# (mallory's own 'order' issued on epoch 0: he must forget its history to
# go back to the default epoch, else its own ids could come again)
($state) = as_error('mallory', 'dm', q{
	BEGIN;
	SELECT cosid_drop('order');
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	COMMIT;
});
is($state, '22023', "mallory's own 'order', dropped, cannot come back on the default epoch");
as('mallory', 'dm', q{
	SELECT cosid_drop('order', forget_history => true);
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	SELECT count(*) FROM (SELECT cosid_next_many('order', 20000)) x;
});
my $before = $node->safe_psql('da', q{SELECT issued FROM cosid.generator_stats WHERE name = 'order'});
as('alice', 'da', q{SELECT count(*) FROM (SELECT cosid_next_many('order', 1000)) x});
as('mallory', 'dm', q{SELECT count(*) FROM (SELECT cosid_next_many('order', 20000)) x});
is($node->safe_psql('da', q{SELECT issued FROM cosid.generator_stats WHERE name = 'order'}), $before + 1000,
	"alice's counts grow by her 1,000 ids only, not by mallory's 20,000");
isnt(as('alice', 'da', q{SELECT identity FROM cosid.generator WHERE name = 'order'}),
	as('mallory', 'dm', q{SELECT identity FROM cosid.generator WHERE name = 'order'}),
	"the two generators named 'order' have identities of their own");

# ---- 3. stats of this database only
as('alice', 'da', q{
	SELECT cosid_define('secret_plan', '{"strategy":"snowflake"}');
	SELECT cosid_define('secret_seg', '{"strategy":"segment"}');
	SELECT cosid_next('secret_plan'), cosid_next('secret_seg');
});
is(as('mallory', 'dm', q{SELECT count(*) FROM cosid.stats() WHERE name LIKE 'secret%'}), '0',
	"cosid.stats() in dm does not list da's generators");
is(as('mallory', 'dm', q{SELECT string_agg(DISTINCT name, ',') FROM cosid.stats()}), 'order',
	"... only dm's own");
is(as('alice', 'da', q{SELECT string_agg(name, ',' ORDER BY name) FROM cosid.stats()}),
	'order,secret_plan,secret_seg', "and da's lists da's");

# ---- 4. fair shares of cosid.max_generators (16): 8 each
my $fill = join('', map { "SELECT cosid_define('m$_', '{\"strategy\":\"snowflake\"}');\n" } 1 .. 16);
as('mallory', 'dm', $fill);
# mallory takes every free entry (alice's three stay: they are hers, and
# used in the last 10 seconds)
as('alice', 'da', q{SELECT cosid_next('order'), cosid_next('secret_plan'), cosid_next('secret_seg')});
my $mallory_got = 0;
for my $i (1 .. 16)
{
	my ($s) = as_error('mallory', 'dm', "SELECT cosid_next('m$i')");
	$mallory_got++ unless defined $s;
}
cmp_ok($mallory_got, '>=', 12, "mallory takes the free entries ($mallory_got of his 16 generators issue)");
# alice: five more generators (eight in all), while mallory's are in use
as('alice', 'da', join('', map { "SELECT cosid_define('a$_', '{\"strategy\":\"snowflake\"}');\n" } 1 .. 5));
my @alice_failed;
for my $i (1 .. 5)
{
	# (his calls fail once alice took his entries above his share)
	as_error('mallory', 'dm', "SELECT cosid_next('m$_')") for 1 .. $mallory_got;
	my ($s, $m) = as_error('alice', 'da', "SELECT cosid_next('a$i')");
	push @alice_failed, "a$i: $s $m" if defined $s;
}
is(scalar(@alice_failed), 0, "alice's eight generators all issue while mallory keeps his entries busy")
  or diag(join("\n", @alice_failed));
($state, $msg) = as_error('mallory', 'dm', 'SELECT ' . join(', ', map { "cosid_next('m$_')" } 1 .. 16));
ok(!defined $state, 'mallory, at his share (8 of 16), issues from all 16, churning through his own entries (1.3: 53200)')
  or diag($msg);
is($node->safe_psql('dm', q{SELECT count(*) FROM cosid.stats()}), '8', '... holding 8 entries, his share');
is($node->safe_psql('da', q{SELECT count(*) FROM cosid.stats()}), '8', "... and alice's 8 keep theirs");
($state, $msg) = as_error('alice', 'da', join('', map { "SELECT cosid_next('a$_');\n" } 1 .. 5)
	  . q{SELECT cosid_next('order'), cosid_next('secret_plan'), cosid_next('secret_seg')});
ok(!defined $state, "alice's eight generators still issue") or diag($msg);

# ---- 5. pg_cosid/names stays bounded
my $names = $node->data_dir . '/pg_cosid/names';
# the log is names and, while it is compacted, names.next
sub names_size { return (-s $names // 0) + (-s "$names.next" // 0); }
sub names_inode { my @st = stat($names); return $st[1] // 0; }

my $size = names_size();
as('alice', 'da', q{SELECT cosid_next('a1'), cosid_next('a2')});
$node->restart;
as('alice', 'da', q{SELECT cosid_next('a1'), cosid_next('a2'), cosid_next('order')});
is(names_size(), $size, "a generator's first use (after a restart) writes nothing to pg_cosid/names");

my ($rewrites, $inode) = (0, names_inode());
for my $i (1 .. 10)
{
	as('mallory', 'dm', "SELECT cosid_define('n$i', '{\"strategy\":\"snowflake\"}')");
	my $now = names_inode();
	$rewrites++ if $now != $inode;
	$inode = $now;
}
cmp_ok($rewrites, '<=', 1, "10 new names: pg_cosid/names rewritten $rewrites time(s) (appended to otherwise)");

# (sampled every 20 cycles, so that each half sees the saw-tooth's peaks)
my @sizes;
for my $round (1 .. 50)
{
	my $sql = '';
	for my $i (1 .. 20)
	{
		my $n = "churn_${round}_$i";
		$sql .= "SELECT cosid_define('$n', '{\"strategy\":\"snowflake\"}'); SELECT cosid_next('$n'); SELECT cosid_drop('$n');\n";
	}
	as('mallory', 'dm', $sql);
	push @sizes, names_size();
}
note('pg_cosid/names after each 20 cycles: ' . join(', ', @sizes));
# Compaction rewrites the log with the live records when most of it is
# superseded, and the server keeps at most cosid.max_names live records
# (when it is full, the database holding the most forgets its oldest):
# the size goes up and down (a saw-tooth), and the second 500 cycles make it
# no larger than the first 500 did, give or take a tooth's phase (growing
# with the names, it would double).
my ($first, $second) = (0, 0);
$first = $_ > $first ? $_ : $first for @sizes[ 0 .. 24 ];
$second = $_ > $second ? $_ : $second for @sizes[ 25 .. 49 ];
cmp_ok($second, '<=', 1.25 * $first, '1,000 define/issue/drop cycles of new names: pg_cosid/names stops growing');
cmp_ok($second, '<', 40_000, '... and stays well below 120 bytes a name (1.2: 120,000 bytes)');
($state, $msg) = as_error('alice', 'da', q{SELECT cosid_next('order'), cosid_next('a1')});
ok(!defined $state, "alice's generators issue after mallory's churn") or diag($msg);
# cosid.max_names (48) filled up with mallory's records: he, holding the
# most, forgot his own; alice's identities (within her share) still belong
# to da, so mallory cannot take one with a history row
my @alice = split /\n/, $node->safe_psql('da', q{SELECT name || '|' || identity || '|' || epoch_ms || '|' || unit_ms
	|| '|' || time_bits || '|' || node_bits || '|' || seq_bits FROM cosid.generator WHERE strategy = 'snowflake' ORDER BY name});
my @taken;
for my $row (@alice)
{
	my ($n, $id, $e, $u, $t, $nb, $sb) = split /\|/, $row;
	my ($st) = as_error('mallory', 'dm', qq{INSERT INTO cosid.generator_history (name, last_number, identity, strategy,
		epoch_ms, unit_ms, time_bits, node_bits, seq_bits, uncertainty_bits) VALUES ('$n', 0, $id, 'snowflake', $e, $u, $t, $nb, $sb, 0)});
	push @taken, "$n: " . ($st // 'accepted') unless ($st // '') eq '42501';
}
like(slurp_file($node->logfile), qr/cosid.max_names \(48\) is full/, 'the names index filled up during the churn');
is(join(', ', @taken), '', 'after the churn filled cosid.max_names, all ' . scalar(@alice) . " of alice's identities still belong to da (42501 for mallory)");

# ---- 6. a copy is the same generator
$node->safe_psql('postgres', 'CREATE DATABASE da_copy TEMPLATE da OWNER alice');
as('alice', 'da', q{INSERT INTO ids SELECT 'da', cosid_next_many('order', 20000)});
as('alice', 'da_copy', q{INSERT INTO ids SELECT 'copy', cosid_next_many('order', 20000)});
as('alice', 'da', q{INSERT INTO ids SELECT 'da', cosid_next_many('order', 20000)});
my $copy_ids = as('alice', 'da_copy', q{SELECT string_agg(id::text, ',') FROM ids WHERE phase = 'copy'});
as('alice', 'da', qq{INSERT INTO ids SELECT 'copy', unnest(string_to_array('$copy_ids', ',')::bigint[])});
is(as('alice', 'da', q{SELECT count(*), count(DISTINCT id) FROM ids}), '80000|80000',
	'da and its copy (CREATE DATABASE TEMPLATE) issue one sequence of ids: none twice');

# ---- 7. copies of a template: a tenant's redefinition is its own
# (identity 1.3: a generator defined again with another layout gets a new
# identity, so the template's other copies are not bound by it)
$node->safe_psql('postgres', 'CREATE DATABASE tmpl');
$node->safe_psql('tmpl', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('shared', '{"strategy":"snowflake"}');
	SELECT cosid_next('shared');
});
$node->safe_psql('postgres', 'CREATE DATABASE t_alice TEMPLATE tmpl OWNER alice');
$node->safe_psql('postgres', 'CREATE DATABASE t_mallory TEMPLATE tmpl OWNER mallory');
$node->safe_psql('t_mallory', 'ALTER TABLE cosid.generator OWNER TO CURRENT_USER');
my $tmpl_identity = $node->safe_psql('tmpl', q{SELECT identity FROM cosid.generator WHERE name = 'shared'});
is($node->safe_psql('t_alice', q{SELECT identity FROM cosid.generator WHERE name = 'shared'}), $tmpl_identity,
	'a copy of the template carries its generator\'s identity');
$node->safe_psql('t_mallory', q{UPDATE cosid.generator SET owner = 'mallory' WHERE name = 'shared'});
($state, $msg) = as_error('mallory', 't_mallory', q{
	SELECT cosid_drop('shared');
	SELECT cosid_define('shared', '{"strategy":"snowflake","epoch":0}');
	SELECT cosid_next('shared');
});
ok(!defined $state, "mallory drops his copy's 'shared' and defines it again on epoch 0, and issues") or diag($msg);
isnt($node->safe_psql('t_mallory', q{SELECT identity FROM cosid.generator WHERE name = 'shared'}), $tmpl_identity,
	'... with an identity of its own');
($state, $msg) = as_error('alice', 't_alice', q{SELECT count(*) FROM (SELECT cosid_next_many('shared', 1000)) x});
ok(!defined $state, "alice's copy of 'shared' still issues") or diag($msg);
$node->restart;
($state, $msg) = as_error('alice', 't_alice', q{SELECT cosid_next('shared')});
ok(!defined $state, '... also after a restart') or diag($msg);
($state, $msg) = as_error('mallory', 't_mallory', q{SELECT cosid_next('shared')});
ok(!defined $state, '... and so does mallory\'s') or diag($msg);

# ---- 8. a history row cosid_drop did not write is ignored, with a warning
$node->safe_psql('dm', q{INSERT INTO cosid.generator_history (name, last_number, identity) VALUES ('hx', 0, 1)});
my ($ret, $out, $err2) = $node->psql('dm', q{SET ROLE mallory; SELECT cosid_define('hx', '{"strategy":"snowflake"}'); SELECT cosid_next('hx') > 0});
is($ret, 0, 'a define over a history row with a null layout works (1.3 before: the server crashed)');
like($err2, qr/WARNING:  ignoring the history of time-based generator name "hx": a column is null/, '... with a warning');
isnt($node->safe_psql('dm', q{SELECT identity FROM cosid.generator WHERE name = 'hx'}), '1',
	'... and a new identity');

# ---- 9. 1.2's pg_cosid/names (one record per name issued) is read and
# rewritten in 1.3's format, every record with its checksum
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
$node->stop;
# a 1.2 record: name, wide, uncertainty bits, layout (epoch, unit, time,
# node and sequence bits, padding, reset threshold), floor
my $rec12 = pack('a64 l l q q l l l l q q', 'legacy', 0, 0, 1288834974657, 1, 41, 10, 12, 0, 0, -1);
my $rec12b = pack('a64 l l q q l l l l q q', 'legacy2', 0, 0, 1288834974657, 1, 41, 10, 12, 0, 0, -1);
my $records = $rec12 . $rec12b;
open(my $nf, '>:raw', $names) or die $!;
print $nf pack('L L L L', 0xC051D4A3, 2, 2, crc32c($records)) . $records;
close($nf);
$node->start;
($state, $msg) = as_error('mallory', 'dm', q{SELECT cosid_define('after12', '{"strategy":"snowflake"}')});
ok(!defined $state, 'a define with 1.2\'s pg_cosid/names on disk') or diag($msg);
($state, $msg) = as_error('mallory', 'dm', q{SELECT cosid_define('after12b', '{"strategy":"snowflake"}'); SELECT cosid_next('after12b')});
ok(!defined $state, '... and the file it rewrote reads back (every record has its checksum)') or diag($msg);
my $head = '';
open($nf, '<:raw', $names) or die $!;
read($nf, $head, 8);
close($nf);
is(join(',', unpack('L L', $head)), (0xC051D4A3) . ',5', 'pg_cosid/names is in 1.4\'s format now (5)');
$node->restart;
($state, $msg) = as_error('alice', 'da', q{SELECT cosid_next('order'), cosid_next('a1')});
ok(!defined $state, 'generators issue after a restart with the rewritten file') or diag($msg);

# ---- 10. forget_history in a transaction rolled back forgets nothing
$node->safe_psql('postgres', 'CREATE DATABASE dforget');
$node->safe_psql('dforget', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('f', '{"strategy":"snowflake"}');
	SELECT cosid_next('f');
});
my $f_identity = $node->safe_psql('dforget', q{SELECT identity FROM cosid.generator WHERE name = 'f'});
$node->safe_psql('dforget', q{
	BEGIN;
	SELECT cosid_drop('f', forget_history => true);
	ROLLBACK;
	DROP EXTENSION cosid;
	CREATE EXTENSION cosid;
	SELECT cosid_define('f', '{"strategy":"snowflake"}');
});
is($node->safe_psql('dforget', q{SELECT identity FROM cosid.generator WHERE name = 'f'}), $f_identity,
	'a forget_history rolled back: after DROP/CREATE EXTENSION the name keeps its identity');
$node->safe_psql('dforget', q{
	SELECT cosid_drop('f', forget_history => true);
	DROP EXTENSION cosid;
	CREATE EXTENSION cosid;
	SELECT cosid_define('f', '{"strategy":"snowflake"}');
});
isnt($node->safe_psql('dforget', q{SELECT identity FROM cosid.generator WHERE name = 'f'}), $f_identity,
	'a forget_history committed: the name starts over with a new identity');

$node->stop;
done_testing();
