# Generators are data of the extension's catalog table: pg_dump -Fc and
# pg_restore into a new database bring every definition back unchanged, and
# the restored generators (and column defaults that call them) issue ids.
# ALTER EXTENSION cosid UPDATE (already at the default version) is a no-op
# that keeps them.  Custom codec functions, bound by OID, are bound to the
# restored functions (their new OIDs); one dropped in the source stays unbound.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use CosidTest;

# Sleep until the wall clock reaches Unix ms $ms.
sub sleep_until_ms
{
	my ($ms) = @_;
	my $left = $ms - now_ms();
	usleep($left * 1000) if $left > 0;
}

my $node = cosid_node('pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('order', '{"strategy":"snowflake","epoch":"2021-01-01T00:00:00Z",
		"unit":"s","time-bits":31,"node-bits":11,"seq-bits":21,"seq-reset-threshold":1000,
		"clock-regression":{"borrow-up-to":"20ms","wait-up-to":"3s"}}');
	SELECT cosid_define('trace', '{"strategy":"snowflake","layout":"SNOWFLAKE_MS","time-bits":40,
		"clock-regression":"FAIL","uncertainty-bits":1,
		"codec":[{"radix":{"radix":62}}]}');
	SELECT cosid_define('token', '{"strategy":"cosid80"}');
	SELECT cosid_define('plain', '{"strategy":"snowflake"}');
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), what text);
	CREATE TABLE tokens (t text PRIMARY KEY DEFAULT cosid_next_text('token'), what text);
	INSERT INTO orders (what) SELECT 'before dump' FROM generate_series(1, 1000);
	INSERT INTO tokens (what) SELECT 'before dump' FROM generate_series(1, 1000);
});

my $generators = 'SELECT * FROM cosid.generators ORDER BY name';
my $catalog = 'SELECT * FROM cosid.generator ORDER BY name';
my $src_generators = $node->safe_psql('src', $generators);
my $src_catalog = $node->safe_psql('src', $catalog);
is($node->safe_psql('src', 'SELECT count(*) FROM cosid.generators'), '4',
	'four generators defined');

my $dump = $node->basedir . '/src.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', 'src' ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'dst', $dump ],
	'pg_restore into a new database');

is($node->safe_psql('dst', $generators), $src_generators,
	'cosid.generators after the restore: same rows, all columns');
is($node->safe_psql('dst', $catalog), $src_catalog,
	'cosid.generator (the stored definitions and layouts) after the restore: same');
is( $node->safe_psql('dst', "SELECT name FROM cosid.generator_stats ORDER BY name"),
	"order\nplain\ntoken\ntrace", 'cosid.generator_stats lists the restored generators');
# a time-based generator's state is the server's: the copy shares it
is( $node->safe_psql('dst',
		"SELECT name, issued FROM cosid.generator_stats WHERE strategy <> 'segment' ORDER BY name"),
	$node->safe_psql('src',
		"SELECT name, issued FROM cosid.generator_stats WHERE strategy <> 'segment' ORDER BY name"),
	'cosid.generator_stats: the copy shows the state its time-based generators share with the original');


# The restored generators issue ids.  'order' counts seconds: let the second
# of its last dumped id pass first (see the end for what happens otherwise).
sleep_until_ms(1000 + $node->safe_psql('src', q{
	SELECT (extract(epoch FROM (cosid_unpack('order', max(id))).time) * 1000)::bigint FROM orders}));
$node->safe_psql('dst', q{
	INSERT INTO orders (what) SELECT 'after restore' FROM generate_series(1, 1000);
	INSERT INTO tokens (what) SELECT 'after restore' FROM generate_series(1, 1000);
});
is( $node->safe_psql('dst', q{
		SELECT count(*), count(DISTINCT id),
			   (SELECT min(id) FROM orders WHERE what = 'after restore')
			 > (SELECT max(id) FROM orders WHERE what = 'before dump')
		FROM orders}),
	'2000|2000|t', 'restored column default cosid_next(): ids above those dumped, none twice');
is($node->safe_psql('dst', 'SELECT count(*), count(DISTINCT t) FROM tokens'),
	'2000|2000', 'restored cosid80 generator: cosid_next_text() issues new ids');
is( $node->safe_psql('dst', q{
		SELECT bool_and(extract(epoch FROM (cosid_unpack('order', id)).time) = floor(extract(epoch FROM (cosid_unpack('order', id)).time))
						AND (cosid_unpack('order', id)).time > now() - interval '1 hour'
						AND (cosid_unpack('order', id)).time < now() + interval '1 minute')
		FROM orders WHERE what = 'after restore'}),
	't', 'restored custom layout (seconds since 2021) decodes its new ids to now');
like($node->safe_psql('dst', "SELECT cosid_next('trace')"), qr/^\d+$/,
	'restored generator with FAIL policy and uncertainty bits issues');
like($node->safe_psql('dst', "SELECT cosid_next('plain')"), qr/^\d+$/,
	'restored default generator issues');
is( $node->safe_psql('dst', "SELECT issued > 0 FROM cosid.generator_stats WHERE name = 'order'"),
	't', 'cosid.generator_stats counts ids of the restored database');

# Defining a new generator in the restored database works, and the name of a
# restored one is taken.
$node->safe_psql('dst', q{SELECT cosid_define('new', '{"strategy":"snowflake"}')});
my ($state) = psql_error($node, 'dst', q{SELECT cosid_define('order', '{"strategy":"snowflake"}')});
is($state, '42710', 'a restored generator name is taken (42710)');

# ---- ALTER EXTENSION cosid UPDATE to the version installed: nothing changes
my $last_order = $node->safe_psql('src', 'SELECT max(id) FROM orders');
my ($ret, $stdout, $stderr) = $node->psql('src', 'ALTER EXTENSION cosid UPDATE');
is($ret, 0, 'ALTER EXTENSION cosid UPDATE succeeds');
my $dv = $node->safe_psql('src', "SELECT default_version FROM pg_available_extensions WHERE name = 'cosid'");
like($stderr, qr/version "\Q$dv\E" of extension "cosid" is already installed/,
	'... and says the version is already installed');
is($node->safe_psql('src', "SELECT extversion FROM pg_extension WHERE extname = 'cosid'"),
	$dv, "the version stays $dv");
is($node->safe_psql('src', $generators), $src_generators,
	'the generators are unchanged after ALTER EXTENSION UPDATE');
is($node->safe_psql('src', $catalog), $src_catalog, '... and so is the stored catalog');
$node->safe_psql('src',
	"INSERT INTO orders (what) SELECT 'after update' FROM generate_series(1, 1000)");
is( $node->safe_psql('src', qq{
		SELECT count(*), count(DISTINCT id),
			   (SELECT min(id) FROM orders WHERE what = 'after update') > $last_order
		FROM orders}),
	'2000|2000|t', 'generators still issue increasing ids after ALTER EXTENSION UPDATE');

# A second dump of the source restores the same generators again (the dump
# does not depend on what happened to the extension since).
my $dump2 = $node->basedir . '/src2.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump2, '-d', 'src' ], 'pg_dump -Fc again');
$node->safe_psql('postgres', 'CREATE DATABASE dst2');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'dst2', $dump2 ],
	'pg_restore into another new database');
is($node->safe_psql('dst2', $generators), $src_generators,
	'second restore: cosid.generators identical');

# ---- a restore that completes within the time unit of the last id dumped
# The restored generator has no state of its own in the new database yet;
# it must still not issue, in that unit, the sequence numbers the source
# already issued (a generator's first id comes from the unit after it was
# first used on this server).
$node->safe_psql('postgres', 'CREATE DATABASE fast');
$node->safe_psql('fast', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('sec', '{"strategy":"snowflake","layout":"SNOWFLAKE_S"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('sec'), db text);
});
my $dump3 = $node->basedir . '/fast.dump';
sleep_until_ms((int(now_ms() / 1000) + 1) * 1000 + 20);
my $t0 = time();
$node->safe_psql('fast', "INSERT INTO t (db) SELECT 'fast' FROM generate_series(1, 100)");
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump3, '-d', 'fast' ], 'pg_dump -Fc of a SNOWFLAKE_S generator');
$node->safe_psql('postgres', 'CREATE DATABASE fast2');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'fast2', $dump3 ],
	'pg_restore of it');
($ret, $stdout, $stderr) =
  $node->psql('fast2', "INSERT INTO t (db) SELECT 'fast2' FROM generate_series(1, 100)");
note(sprintf('dump, restore and insert took %.3f s after the first id', time() - $t0));
is($ret, 0, 'restored within the same second: the restored generator issues no id already in the table')
  or diag($stderr);

# ---- segment generators: a generator with its own backing sequence (step
# 50), a bigserial table moved onto a generator that adopted its sequence,
# and a day-grouped generator.  After pg_dump -Fc and pg_restore into a new
# database, each continues strictly above every number issued in the source
# (in the tables or only handed out), and the adopted table's DEFAULT keeps
# inserting with no duplicate.
$node->safe_psql('postgres', 'CREATE DATABASE segsrc');
$node->safe_psql('segsrc', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('inv', '{"strategy":"segment","step":50}');
	CREATE TABLE inv (id bigint PRIMARY KEY DEFAULT cosid_next('inv'), what text);
	INSERT INTO inv (what) SELECT 'before dump' FROM generate_series(1, 70);
	CREATE TABLE legacy (id bigserial PRIMARY KEY, what text);
	INSERT INTO legacy (what) SELECT 'serial' FROM generate_series(1, 120);
	SELECT cosid_define('legacy_g', '{"strategy":"segment","step":50,"adopt-sequence":"legacy_id_seq"}');
	ALTER TABLE legacy ALTER id SET DEFAULT cosid_next('legacy_g');
	INSERT INTO legacy (what) SELECT 'adopted' FROM generate_series(1, 30);
	SELECT cosid_define('daily', '{"strategy":"segment","step":50,"group":"day"}');
	CREATE TABLE daily (id bigint PRIMARY KEY, what text);
});
is( $node->safe_psql('segsrc', q{
		SELECT min(id) FILTER (WHERE what = 'adopted'), max(id) FILTER (WHERE what = 'adopted'),
			   count(*), count(DISTINCT id)
		FROM legacy}),
	'121|150|150|150', 'segsrc: the adopted bigserial continues with no gap (121..150)');
# numbers handed out but kept in no table
my %src_max;
$src_max{inv} = $node->safe_psql('segsrc',
	"SELECT max(x) FROM (SELECT cosid_next('inv') AS x FROM generate_series(1, 7)) s");
$src_max{legacy_g} = $node->safe_psql('segsrc',
	"SELECT max(x) FROM (SELECT cosid_next('legacy_g') AS x FROM generate_series(1, 3)) s");
$src_max{daily} = $node->safe_psql('segsrc', q{
	SET cosid.debug_now = '2031-05-06 12:00+00';
	INSERT INTO daily SELECT cosid_next('daily'), 'before dump' FROM generate_series(1, 60);
	SELECT max(x) FROM (SELECT cosid_next('daily') AS x FROM generate_series(1, 4)) s});
for my $t ('inv', 'legacy', 'daily')
{
	my $g = $t eq 'legacy' ? 'legacy_g' : $t;
	my $in_table = $node->safe_psql('segsrc', "SELECT max(id) FROM $t");
	$src_max{$g} = $in_table if $in_table > $src_max{$g};
}
note('segsrc: highest numbers issued: ' . join(', ', map { "$_ $src_max{$_}" } sort keys %src_max));
is($src_max{inv}, '77', 'segsrc: inv issued 1..77');
is($src_max{daily}, '203105060000000064', 'segsrc: daily issued 64 numbers of 2031-05-06');

my $segdump = $node->basedir . '/segsrc.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $segdump, '-d', 'segsrc' ],
	'pg_dump -Fc of a database with segment generators');
$node->safe_psql('postgres', 'CREATE DATABASE segdst');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'segdst', $segdump ],
	'pg_restore of it into a new database');
is($node->safe_psql('segdst', $generators), $node->safe_psql('segsrc', $generators),
	'segdst: cosid.generators (backing sequences included) as in the source');

my $next_inv = $node->safe_psql('segdst', "SELECT cosid_next('inv')");
cmp_ok($next_inv, '>', $src_max{inv}, "segdst: inv continues above the source's numbers ($next_inv)");
$node->safe_psql('segdst', "INSERT INTO inv (what) SELECT 'after restore' FROM generate_series(1, 100)");
is( $node->safe_psql('segdst', qq{
		SELECT count(*), count(DISTINCT id),
			   min(id) FILTER (WHERE what = 'after restore') > $src_max{inv}
		FROM inv}),
	'170|170|t', 'segdst: inv column default: 100 new rows, all above the source\'s numbers');

my ($ret2, $stdout2, $stderr2) = $node->psql('segdst',
	"INSERT INTO legacy (what) SELECT 'after restore' FROM generate_series(1, 100)",
	on_error_stop => 1);
is($ret2, 0, 'segdst: the adopted table\'s DEFAULT inserts 100 rows (no duplicate key)')
  or diag($stderr2);
is( $node->safe_psql('segdst', qq{
		SELECT count(*), count(DISTINCT id),
			   min(id) FILTER (WHERE what = 'after restore') > $src_max{legacy_g}
		FROM legacy}),
	'250|250|t', 'segdst: the adopted table continues above every number of the source');
my $next_legacy = $node->safe_psql('segdst', "SELECT cosid_next('legacy_g')");
cmp_ok($next_legacy, '>', $node->safe_psql('segdst', 'SELECT max(id) FROM legacy'),
	'segdst: cosid_next of the adopted generator is above the table');

my $daily_after = $node->safe_psql('segdst', q{
	SET cosid.debug_now = '2031-05-06 18:00+00';
	INSERT INTO daily SELECT cosid_next('daily'), 'after restore' FROM generate_series(1, 60);
	SELECT min(id) FILTER (WHERE what = 'after restore') || '|' || count(*) || '|' || count(DISTINCT id)
	FROM daily});
my ($daily_min, $daily_n, $daily_distinct) = split /\|/, $daily_after;
cmp_ok($daily_min, '>', $src_max{daily},
	"segdst: daily continues in the same day above the source's numbers ($daily_min)");
is("$daily_n|$daily_distinct", '120|120', 'segdst: daily: no number twice');
is(substr($daily_min, 0, 8), '20310506', 'segdst: daily: still the period 2031-05-06');

# the source is not disturbed by the restore: it goes on from its own segments
my $src_next = $node->safe_psql('segsrc', "SELECT cosid_next('inv')");
cmp_ok($src_next, '>', $src_max{inv}, 'segsrc: inv goes on above its own numbers');

# ---- custom codec functions: bound by OID in the source (codec_functions);
# the dump carries those OIDs, which mean nothing in the new database, and the
# restore binds each row by the schema-qualified names its codec list holds,
# so the restored generators call the restored functions.  A generator whose
# function was dropped in the source (its codec fails there) is not bound to
# anything by the restore.
$node->safe_psql('postgres', 'CREATE DATABASE codecsrc');
$node->safe_psql('codecsrc', q{
	CREATE EXTENSION cosid;
	CREATE SCHEMA codecs;
	CREATE FUNCTION codecs.hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'h' || to_hex($1) $$;
	CREATE FUNCTION codecs.unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad(substr($1, 2), 16, '0'))::bit(64)::bigint $$;
	CREATE FUNCTION codecs.gone(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'g' || $1 $$;
	SELECT cosid_define('hex', '{"codec": [{"custom": {"encode": "codecs.hexid(bigint)", "decode": "codecs.unhexid(text)"}}]}');
	SELECT cosid_define('hexseg', '{"strategy": "segment", "codec": [{"custom": {"encode": "codecs.hexid(bigint)", "decode": "codecs.unhexid(text)"}}, {"prefix": "S"}]}');
	SELECT cosid_define('gone', '{"codec": [{"custom": {"encode": "codecs.gone(bigint)", "decode": "codecs.unhexid(text)"}}]}');
	DROP FUNCTION codecs.gone(bigint);
});
my $bound_q = q{
	SELECT name, coalesce(codec_functions = ARRAY['codecs.hexid(bigint)'::regprocedure, 'codecs.unhexid(text)'::regprocedure]::oid[], false)
	FROM cosid.generator ORDER BY name};
is($node->safe_psql('codecsrc', $bound_q), "gone|f\nhex|t\nhexseg|t",
	'codecsrc: hex and hexseg are bound to codecs.hexid and codecs.unhexid by OID');
my $src_oids = $node->safe_psql('codecsrc', q{SELECT codec_functions::text FROM cosid.generator WHERE name = 'hex'});
my $codec_texts = q{SELECT cosid_encode('hex', 255), cosid_decode('hex', 'hff'), cosid_encode('hexseg', 4095), cosid_decode('hexseg', 'Shfff')};
is($node->safe_psql('codecsrc', $codec_texts), 'hff|255|Shfff|4095', 'codecsrc: their codecs work');
my ($gone_ret, $gone_out, $gone_err) = $node->psql('codecsrc', q{SELECT cosid_encode('gone', 1)});
like($gone_err, qr/custom codec function codecs\.gone\(bigint\) of generator "gone" no longer exists/,
	'codecsrc: gone, whose encode function was dropped, fails');

my $codecdump = $node->basedir . '/codecsrc.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $codecdump, '-d', 'codecsrc' ],
	'pg_dump -Fc of a database with custom codecs');
$node->safe_psql('postgres', 'CREATE DATABASE codecdst');
my ($rout, $rerr) = run_command([ 'pg_restore', '--exit-on-error', '--verbose', '-d', 'codecdst', '-h', $node->host,
	'-p', $node->port, $codecdump ]);
is($rerr =~ /ERROR/ ? $rerr : '', '', 'pg_restore of it into a new database: no error');
is($node->safe_psql('codecdst', $bound_q), "gone|f\nhex|t\nhexseg|t",
	'codecdst: hex and hexseg are bound to the restored functions (their new OIDs)');
isnt($node->safe_psql('codecdst', q{SELECT codec_functions::text FROM cosid.generator WHERE name = 'hex'}), $src_oids,
	'codecdst: ... which are not the OIDs of the source');
is( $node->safe_psql('codecdst', q{SELECT count(*) FROM cosid.generator WHERE name = 'gone' AND codec_functions IS NULL}), '1',
	'codecdst: gone is bound to nothing');
like($rerr, qr/function codecs\.gone\(bigint\) of the custom codec of cosid generator "gone" could not be resolved/,
	'codecdst: the restore warned about it (pg_restore --verbose shows it)');
is($node->safe_psql('codecdst', $codec_texts), 'hff|255|Shfff|4095', 'codecdst: the restored codecs give the same text');
is( $node->safe_psql('codecdst', q{SELECT string_agg(name || ' ' || (config -> 'codec')::text, ', ' ORDER BY name) FROM cosid.generator}),
	$node->safe_psql('codecsrc', q{SELECT string_agg(name || ' ' || (config -> 'codec')::text, ', ' ORDER BY name) FROM cosid.generator}),
	'codecdst: the codec lists (the names) as in the source');
($gone_ret, $gone_out, $gone_err) = $node->psql('codecdst', q{SELECT cosid_encode('gone', 1)});
like($gone_err, qr/ERROR:  custom codec function codecs\.gone\(bigint\) of generator "gone" is not bound/,
	'codecdst: gone still fails (55000), until cosid_alter binds it');

$node->stop;
done_testing();
