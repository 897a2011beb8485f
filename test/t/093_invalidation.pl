# A change of one generator makes backends read that generator again, not
# every generator they use (issue 29).  A session S in database db_b issues
# with 100 generators (every tenth a snowflake one).  Then, from other
# sessions, a generator is defined and another altered in database db_a, and
# one is defined in db_b: S's next calls of its 100 generators read the
# catalog no more than for the names that happen to share a slot with a
# changed one (cosid.generator's scans in S's transaction, from
# pg_stat_xact_user_tables).  On main before this change (one server-wide
# generation) they read all 100 again.
#
# And nothing goes stale: a generator altered in db_b shows its new codec in
# S at once (read again, once); an alter rolled back, or in a savepoint rolled
# back, changes nothing; a drop is seen at once; S's own alter is seen by S
# at once and its own rolled-back alter undone; a write to cosid.generator
# that is not cosid's by name (a restore's, here a superuser's UPDATE) makes
# S read every generator again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;

my $node = cosid_node('invalidation');
$node->safe_psql('postgres', 'CREATE DATABASE db_a; CREATE DATABASE db_b;');
$node->safe_psql($_, 'CREATE EXTENSION cosid') for qw(db_a db_b);
$node->safe_psql('db_a', q{SELECT cosid_define('a1', '{"strategy":"segment","codec":[{"prefix":"A-"}]}')});
$node->safe_psql('db_b', q{
	SELECT cosid_define('g' || i, CASE WHEN i % 10 = 0 THEN '{"strategy":"snowflake"}'
		ELSE '{"strategy":"segment","codec":[{"prefix":"A-"}]}' END::jsonb)
	FROM generate_series(1, 100) i;
});

# S: one psql session kept open; query() runs SQL in it and returns its output.
my ($in, $out, $err) = ('', '', '');
my $s = IPC::Run::start(
	[ 'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=0', '-h', $node->host, '-p', $node->port, 'db_b' ],
	'<', \$in, '>', \$out, '2>', \$err);

sub query
{
	my ($sql) = @_;
	($out, $err) = ('', '');
	$in .= "$sql\n\\echo __done__\n";
	IPC::Run::pump($s) until $out =~ /__done__\n\z/ || !$s->pumpable;
	my $res = $out;
	$res =~ s/__done__\n\z//;
	chomp $res;
	return $res;
}

# The scans of cosid.generator in S's transaction that ran $sql.  (From
# PostgreSQL 15, pg_stat_xact_* show what the backend has not yet sent to
# the statistics, which can be more than the transaction: they are sent
# first.)
my $scans = q{SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables
	WHERE schemaname = 'cosid' AND relname = 'generator';};
my $all = q{SELECT count(cosid_next('g' || i)) FROM generate_series(1, 100) i WHERE i NOT IN (%s);};

sub scans_for
{
	my ($sql) = @_;
	my $res = query("SELECT pg_stat_force_next_flush();\nBEGIN;\n$sql\n$scans\nCOMMIT;");
	my @lines = split /\n/, $res;
	shift @lines;    # pg_stat_force_next_flush()'s empty line
	return ($lines[-1], @lines[ 0 .. $#lines - 1 ]);
}

my ($n, @rows) = scans_for(sprintf($all, '0'));
is($rows[0], '100', 'S issues with its 100 generators');
cmp_ok($n, '>=', 100, "... reading each of them from the catalog the first time ($n scans)");
($n) = scans_for(sprintf($all, '0'));
is($n, '0', '... and none again while nothing changed');

# a define and an alter in another database, a define in db_b
$node->safe_psql('db_a', q{
	SELECT cosid_define('a2', '{"strategy":"segment"}');
	SELECT cosid_alter('a1', '{"codec":[{"prefix":"Z-"}]}');
});
$node->safe_psql('db_b', q{SELECT cosid_define('h1', '{"strategy":"snowflake"}')});
($n, @rows) = scans_for(sprintf($all, '0'));
is($rows[0], '100', 'after a define and an alter in db_a and a define in db_b, S issues with its 100 generators');
cmp_ok($n, '<=', 3,
	"... reading at most those that share a slot with a changed name again ($n scans; one server-wide generation: 100)");

# the changed generator itself: read again at once, once
$node->safe_psql('db_b', q{SELECT cosid_alter('g7', '{"codec":[{"prefix":"B-"}]}')});
($n, @rows) = scans_for(q{SELECT cosid_next_text('g7');});
like($rows[0], qr/^B-/, "g7 altered in another session: S's next id of it has the new codec ($rows[0])");
cmp_ok($n, '>=', 1, "... read again ($n scans)");
($n) = scans_for(sprintf($all, '0'));
cmp_ok($n, '<=', 1, "... and the others not ($n scans)");

# rolled back: nothing changes, in S either
$node->safe_psql('db_b', q{
	BEGIN;
	SELECT cosid_alter('g8', '{"codec":[{"prefix":"C-"}]}');
	ROLLBACK;
	BEGIN;
	SAVEPOINT s;
	SELECT cosid_alter('g9', '{"codec":[{"prefix":"C-"}]}');
	ROLLBACK TO SAVEPOINT s;
	SELECT cosid_alter('g11', '{"codec":[{"prefix":"D-"}]}');
	COMMIT;
});
like(query(q{SELECT cosid_next_text('g8');}), qr/^A-/, 'an alter rolled back: S keeps the old codec');
like(query(q{SELECT cosid_next_text('g9');}), qr/^A-/, '... also one in a savepoint rolled back');
like(query(q{SELECT cosid_next_text('g11');}), qr/^D-/, '... and the alter committed after it is seen');

# a drop is seen at once
$node->safe_psql('db_b', q{SELECT cosid_drop('g14')});
query(q{SELECT cosid_next('g14');});
like($err, qr/generator "g14" does not exist/, 'a generator dropped in another session: S finds it gone');

# S's own changes: seen at once, and a rollback undoes them
like(query(q{SELECT cosid_alter('g12', '{"codec":[{"prefix":"S-"}]}'); SELECT cosid_next_text('g12');}),
	qr/\nS-/, "S's own alter: S sees it at once");
like(query(q{BEGIN; SELECT cosid_alter('g13', '{"codec":[{"prefix":"R-"}]}'); SELECT cosid_encode('g13', 5);}),
	qr/\nR-5$/, "S's alter in its transaction: S sees it in the transaction");
like(query(q{ROLLBACK; SELECT cosid_next_text('g13');}), qr/^A-/, '... and the old codec once it rolled back');

# a write that is not cosid's by name: every generator read again
$node->safe_psql('db_b', q{
	UPDATE cosid.generator SET config = jsonb_set(config, '{codec}', '[{"prefix":"E-"}]') WHERE name = 'g15';
});
($n, @rows) = scans_for(q{SELECT cosid_next_text('g15');} . sprintf($all, '14, 15'));
like($rows[0], qr/^E-/, "a superuser's UPDATE of cosid.generator: S sees the new row ($rows[0])");
cmp_ok($n, '>=', 99, "... and reads every generator again ($n scans)");

$in .= "\\q\n";
$s->finish;
$node->stop;
done_testing();
