# Copies of a database issue side by side with the original and never repeat
# an id of it (DESIGN 2.6: the state of a time-based generator is per server
# and generator, and a copy is the same generator: its catalog row carries
# the generator's identity).
#
# Database a defines the snowflake generator 'order' and the cosid80
# generator 'token'.  b is CREATE DATABASE b TEMPLATE a, c is restored from
# pg_dump -Fc a with pg_restore, d from a plain pg_dump a with psql, and e
# defines the same two generators on its own (same name, same layout).  Then
# all five issue at the same time, one pgbench client each, 300,000 'order'
# ids (cosid_next_many, cosid_next, or the column DEFAULT) and 60,000 'token'
# ids: the ids are copied into one table and no id of a is found twice in a
# and its copies.  e's generators are others (DESIGN 2.8, databases are
# separate; 1.3): they have an identity of their own, and e's ids are its
# own, distinct among themselves.
#
# In 1.0 every database had a state of its own: copies issued the same ids
# (about 230,000 of 2 x 300,000 in common).  In 1.1 and 1.2 e shared a's
# state, so that e could stop a's generator by defining its name with
# another layout.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use CosidTest;

my $node = cosid_node('db_copies');
my $dir = $node->basedir;

my $setup = q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('order', '{"strategy":"snowflake"}');
	SELECT cosid_define('token', '{"strategy":"cosid80"}');
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), what text);
	CREATE UNLOGGED TABLE made (id bigint);
	CREATE UNLOGGED TABLE made_tok (t text);
};
$node->safe_psql('postgres', 'CREATE DATABASE a');
$node->safe_psql('a', $setup);
# a issues a few ids before it is copied: the copies carry them in orders
$node->safe_psql('a', "INSERT INTO orders (what) SELECT 'before copy' FROM generate_series(1, 1000)");

$node->safe_psql('postgres', 'CREATE DATABASE b TEMPLATE a');
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/a.dump", '-d', 'a' ], 'pg_dump -Fc a');
$node->safe_psql('postgres', 'CREATE DATABASE c');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'c', "$dir/a.dump" ],
	'pg_restore -d c');
$node->command_ok([ 'pg_dump', '-Fp', '-f', "$dir/a.sql", '-d', 'a' ], 'pg_dump -Fp a');
$node->safe_psql('postgres', 'CREATE DATABASE d');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/a.sql", '-d', 'd' ],
	'psql -d d < plain dump');
$node->safe_psql('postgres', 'CREATE DATABASE e');
$node->safe_psql('e', $setup);

my @dbs = qw(a b c d e);
my %how = (
	a => 'the original',
	b => 'CREATE DATABASE TEMPLATE a',
	c => 'pg_restore of a',
	d => 'psql restore of a plain dump',
	e => 'its own definition');

my $generators = q{SELECT name, strategy, epoch, unit, time_bits, node_bits, seq_bits
	FROM cosid.generators ORDER BY name};
my $a_generators = $node->safe_psql('a', $generators);
for my $db (qw(b c d e))
{
	is($node->safe_psql($db, $generators), $a_generators,
		"$db ($how{$db}): generators 'order' and 'token' with the layout of a");
}
is($node->safe_psql('c', "SELECT count(*) FROM orders WHERE what = 'before copy'"), '1000',
	"c: the restore holds a's 1000 rows");
my $identity = q{SELECT string_agg(identity::text, ',' ORDER BY name) FROM cosid.generator};
my $a_identity = $node->safe_psql('a', $identity);
unlike($a_identity, qr/(^|,)0(,|$)/, "a: its generators have identities (not 1.2's 0)");
for my $db (qw(b c d))
{
	is($node->safe_psql($db, $identity), $a_identity,
		"$db ($how{$db}): the generators carry a's identities");
}
isnt($node->safe_psql('e', $identity), $a_identity,
	"e ($how{e}): generators of its own, with identities of their own");

# ---- all five issue at once
my %script = (
	a => "INSERT INTO made SELECT cosid_next_many('order', 100000);",
	b => "INSERT INTO made SELECT cosid_next('order') FROM generate_series(1, 100000);",
	c => "INSERT INTO orders (what) SELECT 'load' FROM generate_series(1, 100000);",
	d => "INSERT INTO made SELECT cosid_next_many('order', 100000);",
	e => "INSERT INTO made SELECT cosid_next('order') FROM generate_series(1, 100000);");
my %run;
for my $db (@dbs)
{
	my $file = "$dir/load_$db.sql";
	PostgreSQL::Test::Utils::append_to_file($file, "$script{$db}\n"
		  . "INSERT INTO made_tok SELECT cosid_next_text('token') FROM generate_series(1, 20000);\n");
	my ($out, $err) = ('', '');
	$run{$db} = {
		out => \$out,
		err => \$err,
		h => IPC::Run::start(
			[
				'pgbench', '-n', '-c', 1, '-t', 3, '-f', $file,
				'-h', $node->host, '-p', $node->port, $db
			],
			'>', \$out, '2>', \$err) };
}
for my $db (@dbs)
{
	ok($run{$db}{h}->finish, "$db ($how{$db}): 300,000 'order' and 60,000 'token' ids issued")
	  or diag("pgbench on $db:\n${ $run{$db}{out} }\n${ $run{$db}{err} }");
}
$node->safe_psql('c', "INSERT INTO made SELECT id FROM orders WHERE what = 'load'");

# ---- every id into one table of database postgres
$node->safe_psql('postgres', q{
	CREATE UNLOGGED TABLE all_ids (db text, id bigint);
	CREATE UNLOGGED TABLE all_tok (db text, t text);
});
for my $db (@dbs)
{
	is($node->safe_psql($db, 'SELECT count(*), count(DISTINCT id) FROM made'),
		'300000|300000', "$db: 300,000 distinct 'order' ids");
	$node->safe_psql($db, qq{
		COPY (SELECT '$db', id FROM made) TO '$dir/ids_$db.copy';
		COPY (SELECT '$db', t FROM made_tok) TO '$dir/tok_$db.copy';
	});
	$node->safe_psql('postgres', qq{
		COPY all_ids FROM '$dir/ids_$db.copy';
		COPY all_tok FROM '$dir/tok_$db.copy';
	});
}
# a's ids from before the copy are in b, c and d too: count them once
$node->safe_psql('a', "COPY (SELECT 'a0', id FROM orders) TO '$dir/ids_a0.copy'");
$node->safe_psql('postgres', "COPY all_ids FROM '$dir/ids_a0.copy'");

# The databases really issued at the same time: their id ranges interleave.
my $concurrent = $node->safe_psql('postgres', q{
	WITH r AS (SELECT db, min(id) AS lo, max(id) AS hi FROM all_ids WHERE db <> 'a0' GROUP BY db)
	SELECT count(*) FROM r x JOIN r y ON x.db < y.db AND x.lo < y.hi AND y.lo < x.hi});
cmp_ok($concurrent, '>=', 4,
	"the databases issued at the same time (id ranges of $concurrent of 10 pairs interleave)");

# Ids found in two databases, for every pair (0 rows when there are none).
my %common;
for my $row (split /\n/, $node->safe_psql('postgres', q{
	SELECT x.db, y.db, count(*) FROM all_ids x JOIN all_ids y ON x.id = y.id AND x.db < y.db
	GROUP BY 1, 2 ORDER BY 1, 2}))
{
	my ($x, $y, $n) = split /\|/, $row;
	$common{"$x|$y"} = $n;
}
for my $pair ([qw(a b)], [qw(a c)], [qw(a d)], [qw(b c)], [qw(b d)], [qw(c d)])
{
	my ($x, $y) = @$pair;
	is($common{"$x|$y"} // 0, 0,
		"'order': no id of $x ($how{$x}) was also issued by $y ($how{$y})");
}
is($node->safe_psql('postgres', q{SELECT count(*) FROM all_ids x JOIN all_ids y ON x.id = y.id
		WHERE x.db = 'a0' AND y.db NOT IN ('a0', 'e')}),
	'0', "'order': no copy issued again an id a had issued before it was copied");
is($node->safe_psql('postgres', q{SELECT count(*), count(DISTINCT id) FROM all_ids WHERE db <> 'e'}),
	'1201000|1201000', "'order': 1,201,000 ids of a and its copies, all distinct");
is($node->safe_psql('postgres', q{SELECT count(*), count(DISTINCT t) FROM all_tok WHERE db <> 'e'}),
	'240000|240000', "'token' (cosid80): 240,000 ids in a and its three copies, all distinct");
is($node->safe_psql('postgres', q{SELECT count(*), count(DISTINCT t) FROM all_tok WHERE db = 'e'}),
	'60000|60000', "'token' (cosid80): e's 60,000 ids, all distinct");
note('ids in common per pair: '
	  . (join(', ', map { "$_ $common{$_}" } sort keys %common) || 'none'));

# One after the other, from a or any copy, each 'order' id is above the last.
my @seq;
for my $round (1 .. 3)
{
	push @seq, $node->safe_psql($_, "SELECT cosid_next('order')") for qw(a b c d);
}
my $up = 1;
$up &&= $seq[$_] > $seq[ $_ - 1 ] for 1 .. $#seq;
ok($up, 'calls made one after the other in a, b, c, d (three rounds) get increasing ids')
  or diag(join("\n", @seq));

$node->stop;
done_testing();
