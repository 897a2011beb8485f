# A hot standby of a primary with cosid preloaded.  A segment generator needs
# to write (its backing sequence), so on the standby cosid_next() fails with a
# clear error (PostgreSQL's read-only error 25006, or 55000) and hands out no
# number, in every form (cosid_next, cosid_next_text, cosid_next_many, as a
# column default), and the primary's numbering is not disturbed.  A
# time-based generator (snowflake) defined on the primary, replicated, does
# not issue on the standby either while it has a manual slot (1.1: a manual
# slot has no window during recovery, 55000 with a hint to lease a slot or
# promote); standbys that issue lease a slot of their own (034).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $primary = cosid_node('primary', init => { allows_streaming => 1 });
$primary->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('seg', '{"strategy":"segment","step":10}');
	SELECT cosid_define('flake', '{"strategy":"snowflake"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('seg'), what text);
	INSERT INTO t (what) SELECT 'primary' FROM generate_series(1, 25);
});
is($primary->safe_psql('postgres', 'SELECT max(id) FROM t'), '25',
	'primary: the segment generator issued 1..25');

$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby = on\ncosid.slot = 1");
$standby->start;
$primary->safe_psql('postgres',
	"SELECT cosid_define('later', '{\"strategy\":\"segment\",\"step\":10}')");
$primary->wait_for_catchup($standby);

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is($standby->safe_psql('postgres', "SELECT count(*) FROM cosid.generators WHERE name IN ('seg', 'flake', 'later')"),
	'3', 'the generators are replicated to the standby');

# ---- segment generators on the standby: a clear error, no number
my @forms = (
	[ 'cosid_next', "SELECT cosid_next('seg')" ],
	[ 'cosid_next_text', "SELECT cosid_next_text('seg')" ],
	[ 'cosid_next_int', "SELECT cosid_next_int('seg')" ],
	[ 'cosid_next_many', "SELECT cosid_next_many('seg', 5)" ],
	[ 'a generator defined after the backup', "SELECT cosid_next('later')" ],
	[ 'cosid_next again', "SELECT cosid_next('seg')" ]);
for my $f (@forms)
{
	my ($name, $sql) = @$f;
	my ($ret, $stdout, $stderr) = $standby->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	isnt($ret, 0, "standby: $name of a segment generator fails");
	is($stdout, '', "standby: $name returns no number");
	my ($state, $msg) = $stderr =~ /ERROR:  ([0-9A-Z]{5}): ([^\n]*)/ ? ($1, $2) : ('', $stderr);
	ok($state eq '25006' || $state eq '55000',
		"standby: $name fails with SQLSTATE 25006 or 55000 (got $state: $msg)");
	like($msg, qr/^segment generator "(seg|later)" cannot allocate numbers on a hot standby$/,
		"standby: $name says which generator and why");
}
is( $standby->safe_psql('postgres',
		"SELECT issued FROM cosid.generator_stats WHERE name = 'seg'"),
	'0', 'standby: cosid.generator_stats counts no number issued by the segment generator');

# ---- a time-based generator does not issue on a standby with a manual slot
like($standby->safe_psql('postgres', 'SELECT mode, slot, state FROM cosid_slot()'),
	qr/^manual\|1\|recovery$/, 'standby: cosid_slot() shows manual slot 1, in recovery');
for my $call ("SELECT cosid_next('flake')", "SELECT cosid_next_text('flake')",
	"SELECT count(*) FROM cosid_next_many('flake', 10)")
{
	my ($state, $msg, $err) = psql_error($standby, 'postgres', $call);
	is($state, '55000', "standby: $call fails with 55000");
	like($err // '', qr/HINT:  .*lease a slot of its own \(cosid\.slot = 'lease'\); or promote it/,
		"standby: $call hints at leasing a slot or promoting");
}
like($standby->safe_psql('postgres', 'SELECT gen_ulid()'), qr/^[0-9A-Z]{26}$/,
	'standby: gen_ulid() works');
is( $primary->safe_psql('postgres',
		"SELECT (cosid_unpack('flake', cosid_next('flake'))).node"),
	'0', 'primary: its snowflake ids carry node 0');

# ---- the primary's segment numbering is not disturbed by the standby's failures
$primary->safe_psql('postgres', "INSERT INTO t (what) SELECT 'primary' FROM generate_series(1, 10)");
is($primary->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id), max(id) FROM t'),
	'35|35|35', 'primary: the segment generator continues densely (26..35)');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*), max(id) FROM t'), '35|35',
	'standby: sees the primary\'s rows');
my ($ret, $stdout, $stderr) = $standby->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT cosid_next('seg')");
isnt($ret, 0, 'standby: cosid_next of the segment generator still fails after replay');

$standby->stop;
$primary->stop;
done_testing();
