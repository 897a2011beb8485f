# A generator name dropped and defined again never issues an id twice
# (DESIGN 2.6), and only permanent, logged sequences can be adopted.
#
# 1. Migration cycles of a bigserial table: a segment generator adopts its
#    sequence (upgrade), is dropped with the DEFAULT going back to nextval()
#    (downgrade), and adopts it again; rows go in from several sessions at
#    every step, three cycles, the second with kill -9 between the steps.
#    No insert ever meets a duplicate key and every row is there.  (In 1.0
#    the second adoption continued from the shared state of the first.)
# 2. A time-based name dropped and defined again with the same layout
#    continues above what it issued: at once, across a restart, a crash and
#    DROP EXTENSION / CREATE EXTENSION.
# 3. Defined again with another epoch: a later one (its ids would start
#    below what the name issued) is refused with 22023, an earlier one is
#    accepted and issues above everything before.  Both hold with nothing in
#    between, across a restart, a crash and DROP/CREATE EXTENSION.
# 4. adopt-sequence refuses temporary and unlogged sequences (22023).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use CosidTest;

my $node = cosid_node('migration_cycle');
my $dir = $node->basedir;

# ---------------------------------------------------------------------------
# 1. migration cycles
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE TABLE t (id bigserial PRIMARY KEY, cycle int, step text);
	INSERT INTO t (cycle, step) SELECT 0, 'serial' FROM generate_series(1, 500);
});
my $expected = 500;

my $load = "$dir/load.sql";
PostgreSQL::Test::Utils::append_to_file($load,
	"INSERT INTO t (cycle, step) SELECT :cycle, :step FROM generate_series(1, 10);\n");

# A session that stays connected through the cycles (its cached view of
# the generator must follow every change).
my $bg;

sub bg_connect
{
	$bg = $node->background_psql('postgres');
}

sub bg_gone
{
	eval { $bg->quit };
	$bg = undef;
}

# 3 pgbench clients x 20 x 10 rows and 10 rows from the long-lived session:
# the text of every error ('' when none).
sub insert_rows
{
	my ($cycle, $step) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-c', 3, '-j', 3, '-t', 20, '-f', $load,
			'-D', "cycle=$cycle", '-D', "step='$step'",
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	my $errors = $ok ? '' : "pgbench: $err";
	bg_connect() unless $bg;
	unless (eval {
			$bg->query_safe(
				"INSERT INTO t (cycle, step) SELECT $cycle, '$step' FROM generate_series(1, 10)");
			1;
		})
	{
		$errors .= "long-lived session: $@";
		bg_gone();
	}
	$expected += 610;
	return $errors;
}

# Insert at one step of a cycle and check the table.
sub step_rows
{
	my ($cycle, $step, $what) = @_;
	is(insert_rows($cycle, $step), '',
		"cycle $cycle, $what: 610 rows from 4 sessions, no error (no duplicate key)");
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) = $expected AND count(DISTINCT id) = count(*),
				   (SELECT min(id) FROM t WHERE cycle = $cycle AND step = '$step')
				 > (SELECT max(id) FROM t WHERE (cycle, step) <> ($cycle, '$step'))
			FROM t}),
		't|t', "cycle $cycle, $what: all $expected rows there, the new ones above all before");
}

sub upgrade
{
	$node->safe_psql('postgres', q{
		BEGIN;
		SELECT cosid_define('t', '{"strategy":"segment","step":100,"adopt-sequence":"t_id_seq"}');
		ALTER TABLE t ALTER id SET DEFAULT cosid_next('t');
		COMMIT;
	});
}

# restore_serial: also give the sequence back its increment of 1 and set it
# to the table's highest id, as a migration back to bigserial would
sub downgrade
{
	my ($restore_serial) = @_;
	$node->safe_psql('postgres', q{
		BEGIN;
		SELECT cosid_drop('t');
		ALTER TABLE t ALTER id SET DEFAULT nextval('t_id_seq');
	} . ($restore_serial ? q{
		ALTER SEQUENCE t_id_seq INCREMENT BY 1;
		SELECT setval('t_id_seq', max(id)) FROM t;
	} : '') . q{
		COMMIT;
	});
}

sub crash
{
	my ($what) = @_;
	note("kill -9 $what");
	crash_restart($node);
	bg_gone();
}

bg_connect();
for my $cycle (1 .. 3)
{
	upgrade();
	is($node->safe_psql('postgres', "SELECT cosid_next('t') > max(id) FROM t"), 't',
		"cycle $cycle: the adopted sequence continues above the table");
	step_rows($cycle, 'up', 'adopted by a segment generator');
	crash('after the upgrade') if $cycle == 2;
	downgrade($cycle > 1);
	step_rows($cycle, 'down', 'back on nextval()');
	crash('after the downgrade') if $cycle == 2;
}
upgrade();
step_rows(4, 'up', 'adopted a fourth time');
is($node->safe_psql('postgres', q{SELECT count(*) FROM t WHERE step = 'serial'}), '500',
	'the 500 bigserial rows of the start are all still there');
bg_gone();

# ---------------------------------------------------------------------------
# 2 and 3 use a database of their own, which can drop the extension
$node->safe_psql('postgres', 'CREATE DATABASE g');
$node->safe_psql('g', q{
	CREATE EXTENSION cosid;
	CREATE TABLE issued (name text, phase text, n bigserial, id bigint);
});

my $same = '{"strategy":"snowflake"}';
my $same_other_keys = '{"strategy":"snowflake","layout":"SNOWFLAKE_MS","clock-regression":"FAIL","codec":[{"radix":{"radix":62}}]}';

# SQL that issues n ids of a name into issued
sub issue_sql
{
	my ($name, $phase, $n) = @_;
	return "INSERT INTO issued (name, phase, id) SELECT '$name', '$phase', cosid_next_many('$name', $n);\n";
}

# the ids of this phase are above every other id of the name, none twice
sub above_all
{
	my ($name, $phase, $what) = @_;
	is( $node->safe_psql('g', qq{
			SELECT (SELECT min(id) FROM issued WHERE name = '$name' AND phase = '$phase')
				 > (SELECT max(id) FROM issued WHERE name = '$name' AND phase <> '$phase'),
				   (SELECT count(*) - count(DISTINCT id) FROM issued WHERE name = '$name')}),
		't|0', "$what: every new id is above every id the name issued before, none twice");
}

# drop extension cosid (the issued table does not depend on it) and create it
sub recreate_extension
{
	$node->safe_psql('g', 'DROP EXTENSION cosid; CREATE EXTENSION cosid;');
}

# ---- 2. same layout
$node->safe_psql('g', "SELECT cosid_define('same', '$same');" . issue_sql('same', 'first', 50000));
# dropped and defined again at once (same time unit, most likely)
$node->safe_psql('g', issue_sql('same', 'before', 50000)
	  . "SELECT cosid_drop('same'); SELECT cosid_define('same', '$same_other_keys');"
	  . issue_sql('same', 'at once', 50000));
above_all('same', 'at once', 'same layout, dropped and defined again at once');

$node->safe_psql('g', issue_sql('same', 'before restart', 50000) . "SELECT cosid_drop('same');");
$node->restart;
$node->safe_psql('g', "SELECT cosid_define('same', '$same');" . issue_sql('same', 'after restart', 50000));
above_all('same', 'after restart', 'same layout, dropped, server restarted, defined again');

$node->safe_psql('g', issue_sql('same', 'before crash', 50000) . "SELECT cosid_drop('same');");
crash_restart($node);
$node->safe_psql('g', "SELECT cosid_define('same', '$same');" . issue_sql('same', 'after crash', 50000));
above_all('same', 'after crash', 'same layout, dropped, kill -9, defined again');

$node->safe_psql('g', issue_sql('same', 'before drop extension', 50000));
recreate_extension();
$node->safe_psql('g', "SELECT cosid_define('same', '$same');"
	  . issue_sql('same', 'after create extension', 50000));
above_all('same', 'after create extension',
	'same layout, DROP EXTENSION cosid and CREATE EXTENSION cosid, defined again');

# ---- 3. another epoch
my $earlier = '{"strategy":"snowflake","epoch":"2015-01-01T00:00:00Z"}';

# a later epoch: a day ago (ms), so its ids would start far below
sub later
{
	my $epoch = now_ms() - 86_400_000;
	return qq({"strategy":"snowflake","epoch":$epoch});
}

# name issued with the default epoch, dropped; $between->() runs; then the
# later epoch is refused and the earlier one accepted
sub another_epoch
{
	my ($name, $what, $between) = @_;
	$node->safe_psql('g', "SELECT cosid_define('$name', '$same');" . issue_sql($name, 'default epoch', 50000)
		  . "SELECT cosid_drop('$name');");
	$between->() if $between;

	my ($state, $msg, $stderr) = psql_error($node, 'g', "SELECT cosid_define('$name', '" . later() . "')");
	is($state, '22023', "$what: defined again with a later epoch: refused with 22023")
	  or diag($stderr // 'it was accepted');
	like($msg // '', qr/already issued\b.*\bon this server/,
		"$what: ... saying the name already issued (higher) ids on this server")
	  or diag($stderr);
	is($node->safe_psql('g', "SELECT count(*) FROM cosid.generator WHERE name = '$name'"), '0',
		"$what: ... and the name stays undefined");

	# (1.0 accepted it: drop it again so that what follows still tests)
	$node->safe_psql('g', "SELECT cosid_drop('$name', true)");
	($state, $msg, $stderr) = psql_error($node, 'g',
		"SELECT cosid_define('$name', '$earlier');" . issue_sql($name, 'earlier epoch', 50000));
	ok(!defined $state, "$what: defined again with an earlier epoch (2015): accepted")
	  or diag($stderr);
	above_all($name, 'earlier epoch', "$what: earlier epoch");
}

another_epoch('e_plain', 'another epoch, nothing between drop and define');
another_epoch('e_restart', 'another epoch, restart between drop and define', sub { $node->restart });
another_epoch('e_crash', 'another epoch, kill -9 between drop and define', sub { crash_restart($node) });
another_epoch('e_ext', 'another epoch, DROP/CREATE EXTENSION between drop and define',
	\&recreate_extension);

# The name now issued on the 2015 epoch: the default epoch, four years later,
# is a later one now, and refused; after a restart and a crash as well.
for my $between (
	[ 'at once', undef ],
	[ 'after a restart', sub { $node->restart } ],
	[ 'after kill -9', sub { crash_restart($node) } ])
{
	my ($when, $sub) = @$between;
	$node->safe_psql('g', "SELECT cosid_drop('e_plain', true)");
	$sub->() if $sub;
	my ($state, $msg, $stderr) = psql_error($node, 'g', "SELECT cosid_define('e_plain', '$same')");
	is($state, '22023',
		"a name issued on the 2015 epoch, dropped, defined on the default epoch $when: refused with 22023")
	  or diag($stderr // 'it was accepted');
}

# ---------------------------------------------------------------------------
# 4. unsafe sequences
my @refused = (
	[ 'a temporary sequence', 'tmp_seq', 'CREATE TEMPORARY SEQUENCE tmp_seq;' ],
	[ "a temporary table's bigserial", 'tmp_t_id_seq', 'CREATE TEMPORARY TABLE tmp_t (id bigserial);' ],
	[ 'an unlogged sequence', 'unl_seq', 'CREATE UNLOGGED SEQUENCE unl_seq;' ]);
# PostgreSQL 15 makes an unlogged table's serial sequence unlogged too
push @refused, [ "an unlogged table's bigserial", 'unl_t_id_seq', '' ]
  if $node->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE unl_t (id bigserial);
	SELECT relpersistence FROM pg_class WHERE oid = 'unl_t_id_seq'::regclass}) eq 'u';
for my $case (@refused)
{
	my ($what, $seq, $create) = @$case;
	my ($state, $msg, $stderr) = psql_error($node, 'postgres', qq{
		$create
		SELECT cosid_define('unsafe', '{"strategy":"segment","adopt-sequence":"$seq"}');
	});
	is($state, '22023', "adopt-sequence refuses $what with 22023")
	  or diag($stderr // 'it was accepted');
	like($msg // '', qr/\Q$seq\E/, "... the message names the sequence ($seq)") or diag($stderr);
	$node->safe_psql('postgres', "SELECT cosid_drop('unsafe', true)");
}
$node->safe_psql('postgres', q{
	CREATE SEQUENCE perm_seq;
	SELECT setval('perm_seq', 41);
	SELECT cosid_define('safe', '{"strategy":"segment","adopt-sequence":"perm_seq"}');
});
is($node->safe_psql('postgres', "SELECT cosid_next('safe')"), '42',
	'adopt-sequence accepts a permanent, logged sequence and continues it');

$node->stop;
done_testing();
