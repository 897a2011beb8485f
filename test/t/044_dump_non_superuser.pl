# pg_dump and pg_restore by the owner of a database who is not a superuser
# (issue 19, item 8).  In 1.2 pg_dump failed as soon as a local segment
# generator existed: cosid makes its backing sequence in schema cosid as the
# catalog's owner, and the database's owner could not read it; a restore
# could neither create such a sequence nor load cosid's tables.
#
# cosid is not a trusted extension: a superuser creates it, in the source
# database and in the database restored into (pg_dump writes CREATE
# EXTENSION IF NOT EXISTS).  alice owns both databases (one created for her,
# one created by her) and does everything else: generators of every kind
# (time-based, cosid80, segment with cosid's sequence, adopted, custom codec,
# lease-store, a name dropped with history, one another role defined), a ulid
# column; pg_dump -Fc and plain; pg_restore and psql.  The restored
# generators carry their definitions, sequences and history, and issue
# above everything issued before, no id twice.
#
# What must not follow: an ordinary role with CREATE on the database (mallory)
# still cannot read, set or create cosid's sequences, nor write cosid's
# tables; the database's owner cannot set cosid's sequences back, and what
# it may insert into cosid.generator (for a restore) is only a generator it
# could have defined: forged rows are refused, or take the restorer as
# owner.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('dump_owner');
my $su = $node->safe_psql('postgres', 'SELECT current_user');
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN CREATEDB;
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE src OWNER alice;
});

# Run $sql as $role in $db; returns (SQLSTATE or '' when it succeeded,
# stdout, stderr).
sub as_role
{
	my ($role, $db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		on_error_stop => 1, extra_params => [ '-U', $role ]);
	return ('', $out, $err) if $ret == 0;
	return ($err =~ /ERROR:  ([0-9A-Z]{5}):/ ? $1 : "failed: $err", $out, $err);
}

sub as_role_ok
{
	my ($role, $db, $sql, $what) = @_;
	my ($state, $out, $err) = as_role($role, $db, $sql);
	is($state, '', $what) or diag($err);
	return $out;
}

# ---- who may create the extension: a superuser only (not trusted)
is($node->safe_psql('postgres',
		q{SELECT bool_or(trusted) FROM pg_available_extension_versions WHERE name = 'cosid'}),
	'f', 'cosid is not a trusted extension');
my ($state) = as_role('alice', 'src', 'CREATE EXTENSION cosid');
is($state, '42501', 'the database owner cannot CREATE EXTENSION cosid (42501): a superuser does');
$node->safe_psql('src', q{
	CREATE EXTENSION cosid;
	GRANT CREATE ON DATABASE src TO mallory;
});

# ---- alice's database: generators of every kind
as_role_ok('alice', 'src', q{
	CREATE FUNCTION hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
	SELECT cosid_define('flake', '{"strategy":"snowflake"}');
	SELECT cosid_define('slow', '{"strategy":"snowflake","layout":"SNOWFLAKE_S","codec":[{"radix":{"radix":62}}]}');
	SELECT cosid_define('token', '{"strategy":"cosid80"}');
	SELECT cosid_define('inv', '{"strategy":"segment","step":50}');
	SELECT cosid_define('daily', '{"strategy":"segment","step":20,"group":"day"}');
	SELECT cosid_define('hex', '{"strategy":"segment","step":10,
		"codec":[{"custom":{"encode":"hexid(bigint)","decode":"unhexid(text)"}}]}');
	SELECT cosid_define('shared', '{"strategy":"segment","distributor":"lease-store"}');
	CREATE TABLE legacy (id bigserial PRIMARY KEY, what text);
	INSERT INTO legacy (what) SELECT 'serial' FROM generate_series(1, 20);
	SELECT cosid_define('legacy_g', '{"strategy":"segment","step":10,"adopt-sequence":"legacy_id_seq"}');
	ALTER TABLE legacy ALTER id SET DEFAULT cosid_next('legacy_g');
	SELECT cosid_define('gone', '{"strategy":"segment","step":7}');
}, 'alice defines generators of every kind in her database');
as_role_ok('alice', 'src', q{
	SELECT count(cosid_next('gone')) FROM generate_series(1, 10);
	SELECT cosid_drop('gone');
	CREATE TABLE things (
		id bigint PRIMARY KEY DEFAULT cosid_next('flake'),
		slow text DEFAULT cosid_next_text('slow'),
		token text UNIQUE DEFAULT cosid_next_text('token'),
		inv bigint UNIQUE DEFAULT cosid_next('inv'),
		hex text UNIQUE DEFAULT cosid_next_text('hex'),
		u ulid UNIQUE DEFAULT gen_ulid_monotonic(),
		r ulid UNIQUE DEFAULT gen_ulid(),
		what text);
	INSERT INTO things (what) SELECT 'before dump' FROM generate_series(1, 120);
	INSERT INTO legacy (what) SELECT 'adopted' FROM generate_series(1, 15);
}, 'alice issues from them (and drops "gone": a history row)');
# (cosid.debug_now, the day a grouped generator counts in, is a superuser's)
$node->safe_psql('src', q{SET cosid.debug_now = '2031-05-06 12:00+00';
	SELECT count(cosid_next('daily')) FROM generate_series(1, 30)});
# another role's generator in alice's database
as_role_ok('mallory', 'src', q{SELECT cosid_define('mal', '{"strategy":"segment","step":5}');
	SELECT count(cosid_next('mal')) FROM generate_series(1, 7);},
	'mallory (CREATE on the database) defines a generator of her own');

my $seqs = q{SELECT name, pg_sequence_last_value(sequence) FROM cosid.generator
	WHERE sequence IS NOT NULL ORDER BY name};
my $defs = q{SELECT name, strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits,
	seq_reset_threshold, sequence, owns_sequence FROM cosid.generator ORDER BY name};
my $history = 'SELECT name, last_number, lease_store, dropped_at FROM cosid.generator_history ORDER BY name';
my %src = (
	seqs => $node->safe_psql('src', $seqs),
	defs => $node->safe_psql('src', $defs),
	history => $node->safe_psql('src', $history),
	owners => $node->safe_psql('src', 'SELECT name, owner FROM cosid.generator ORDER BY name'));
is($node->safe_psql('src', 'SELECT count(*) FROM cosid.generator_history'), '1',
	'src: one history row (gone)');
my %max;
$max{$_} = $node->safe_psql('src', "SELECT max($_) FROM things") for qw(id inv u);
$max{hex} = $node->safe_psql('src', 'SELECT max(unhexid(hex)) FROM things');
$max{legacy} = $node->safe_psql('src', 'SELECT max(id) FROM legacy');
$max{mal} = 7;
$max{daily} = '203105060000000030';

# Who may do what on a backing sequence cosid made: its owner (the catalog's)
# everything, the generator's owner and pg_database_owner SELECT.
my $seq_grants = q{SELECT string_agg(g.name || ':' || (SELECT string_agg(a.grantee::regrole::text || '=' || a.privilege_type, ','
		ORDER BY a.grantee::regrole::text, a.privilege_type) FROM aclexplode(c.relacl) a), ' ' ORDER BY g.name)
	FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence WHERE g.name IN ('inv', 'mal')};
is($node->safe_psql('src', $seq_grants),
	"inv:alice=SELECT,pg_database_owner=SELECT,$su=SELECT,$su=UPDATE,$su=USAGE mal:mallory=SELECT,pg_database_owner=SELECT,$su=SELECT,$su=UPDATE,$su=USAGE",
	'src: cosid_define grants SELECT on its sequence to the generator\'s owner and pg_database_owner, nothing more');

# ---- what the privileges do not give
for my $case (
	[ 'select', q{SELECT last_value FROM cosid.%s} ],
	[ 'setval', q{SELECT setval('cosid.%s', 1)} ],
	[ 'nextval', q{SELECT nextval('cosid.%s')} ],
	[ 'alter', q{ALTER SEQUENCE cosid.%s RESTART} ])
{
	my ($what, $sql) = @$case;
	my $seq = $node->safe_psql('src',
		q{SELECT c.relname FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence WHERE g.name = 'inv'});
	($state) = as_role('mallory', 'src', sprintf($sql, $seq));
	is($state, '42501', "mallory: $what on the backing sequence of alice's generator is 42501");
	next if $what eq 'select';
	($state) = as_role('alice', 'src', sprintf($sql, $seq));
	is($state, '42501', "alice (the database's owner): $what on cosid's backing sequence is 42501");
}
for my $case (
	[ 'insert generator', q{INSERT INTO cosid.generator (name, strategy, config, owner, sequence)
		SELECT 'forged', strategy, config, 'mallory', sequence FROM cosid.generator WHERE name = 'inv'} ],
	[ 'insert history', q{INSERT INTO cosid.generator_history (name, last_number) VALUES ('x', 1000000)} ],
	[ 'update', q{UPDATE cosid.generator SET owner = 'mallory' WHERE name = 'inv'} ],
	[ 'create in cosid', q{CREATE SEQUENCE cosid.segment_x} ],
	[ 'create table in cosid', q{CREATE TABLE cosid.generator_x (a int)} ])
{
	my ($what, $sql) = @$case;
	($state) = as_role('mallory', 'src', $sql);
	is($state, '42501', "mallory: $what is 42501");
}
# cosid.restore_check() reads a row by cosid.generator's column types: no
# other table may have it
($state) = as_role('mallory', 'src', q{BEGIN; CREATE SCHEMA m; CREATE TABLE m.generator (name text, config int);
	CREATE TRIGGER t BEFORE INSERT ON m.generator FOR EACH ROW EXECUTE FUNCTION cosid.restore_check(); COMMIT;});
is($state, '42501', 'mallory: a trigger of her own table on cosid.restore_check() is 42501 (no EXECUTE)');
$node->safe_psql('src', q{CREATE TABLE public.generator (name text, owner regrole, config int);
	CREATE TRIGGER t BEFORE INSERT ON public.generator FOR EACH ROW EXECUTE FUNCTION cosid.restore_check();
	GRANT INSERT ON public.generator TO mallory});
($state) = as_role('mallory', 'src', q{INSERT INTO public.generator VALUES ('x', 'mallory', 1)});
is($state, '39P01', 'cosid.restore_check() on a table not cosid\'s refuses to run (39P01)');
$node->safe_psql('src', 'DROP TABLE public.generator');
for my $case (
	[ 'update', q{UPDATE cosid.generator SET owner = 'mallory' WHERE name = 'inv'} ],
	[ 'delete', q{DELETE FROM cosid.generator WHERE name = 'inv'} ],
	[ 'truncate history', q{TRUNCATE cosid.generator_history} ])
{
	my ($what, $sql) = @$case;
	($state) = as_role('alice', 'src', $sql);
	is($state, '42501', "alice: $what on cosid's tables is 42501");
}

# What the database's owner may insert (for pg_restore) is checked row by
# row: a generator it could have defined, never someone else's sequence.
$node->safe_psql('src', q{
	CREATE SCHEMA su;
	CREATE SEQUENCE su.seq;
	CREATE FUNCTION su.hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION su.unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
	REVOKE ALL ON FUNCTION su.hexid(bigint), su.unhexid(text) FROM PUBLIC;
	GRANT USAGE ON SCHEMA su TO PUBLIC;
});
my $inv_seq = $node->safe_psql('src', q{SELECT sequence FROM cosid.generator WHERE name = 'inv'});
for my $case (
	[ 'cosid\'s sequence of another generator', '42501',
		qq{INSERT INTO cosid.generator (name, strategy, config, owner, sequence, owns_sequence)
		VALUES ('f1', 'segment', '{"strategy":"segment"}', 'alice', '$inv_seq', true)} ],
	[ 'cosid\'s sequence of another generator, as adopted', '42501',
		qq{INSERT INTO cosid.generator (name, strategy, config, owner, sequence, owns_sequence)
		VALUES ('f2', 'segment', '{"strategy":"segment"}', 'alice', '$inv_seq', false)} ],
	[ 'a superuser\'s sequence', '42501',
		q{INSERT INTO cosid.generator (name, strategy, config, owner, sequence, owns_sequence)
		VALUES ('f3', 'segment', '{"strategy":"segment"}', 'alice', 'su.seq', false)} ],
	[ 'her own sequence that already backs a generator', '42501',
		q{INSERT INTO cosid.generator (name, strategy, config, owner, sequence, owns_sequence)
		VALUES ('f4', 'segment', '{"strategy":"segment"}', 'alice', 'legacy_id_seq', false)} ],
	[ 'a layout of 80 bits as snowflake', '22023',
		q{INSERT INTO cosid.generator (name, strategy, config, owner, epoch_ms, unit_ms, time_bits,
			node_bits, seq_bits, seq_reset_threshold)
		VALUES ('f5', 'snowflake', '{"strategy":"snowflake"}', 'alice', 0, 1, 60, 10, 10, 100)} ],
	[ 'a strategy column unlike its definition', '22023',
		q{INSERT INTO cosid.generator (name, strategy, config, owner, epoch_ms, unit_ms, time_bits,
			node_bits, seq_bits, seq_reset_threshold)
		VALUES ('f6', 'snowflake', '{"strategy":"cosid80"}', 'alice', 0, 1, 44, 20, 16, 100)} ],
	[ 'a lease row', '42501',
		q{INSERT INTO cosid.lease (namespace, slot, instance, expires_at) VALUES ('n', 0, 'i', now())} ],
	[ 'a segment counter row', '42501',
		q{INSERT INTO cosid.segment_counter (namespace, name, last_number) VALUES ('n', 'inv', 0)} ])
{
	my ($what, $want, $sql) = @$case;
	my ($got, $out, $err) = as_role('alice', 'src', $sql);
	is($got, $want, "alice: inserting a generator row with $what is refused ($want)") or diag($err);
}
# a superuser as owner (custom functions would run as it): the row is the
# restorer's, with a warning
my ($got, $out, $err) = as_role('alice', 'src',
	qq{INSERT INTO cosid.generator (name, strategy, config, owner, epoch_ms, unit_ms, time_bits,
		node_bits, seq_bits, seq_reset_threshold)
	VALUES ('f7', 'snowflake',
		'{"strategy":"snowflake","codec":[{"custom":{"encode":"su.hexid(bigint)","decode":"su.unhexid(text)"}}]}',
		'$su', 1577203200000, 1, 41, 10, 12, 2047)});
is($got, '42501', 'alice: a generator row owned by a superuser with its custom functions is refused (42501)')
  or diag($err);
($got, $out, $err) = as_role('alice', 'src',
	qq{INSERT INTO cosid.generator (name, strategy, config, owner, epoch_ms, unit_ms, time_bits,
		node_bits, seq_bits, seq_reset_threshold)
	VALUES ('f8', 'snowflake', '{"strategy":"snowflake"}', '$su', 1577203200000, 1, 41, 10, 12, 2047)});
is($got, '', 'alice: a generator row owned by a superuser is accepted ...') or diag($err);
like($err, qr/WARNING:  01007: generator "f8" is restored as owned by role alice/,
	'... with a warning that it is restored as hers');
is($node->safe_psql('src', q{SELECT owner FROM cosid.generator WHERE name = 'f8'}), 'alice',
	'... and alice owns it');
$node->safe_psql('src', q{SELECT cosid_drop('f8', forget_history => true); DROP SCHEMA su CASCADE});
is($node->safe_psql('src', $defs), $src{defs}, 'src: the refused rows left the catalog as it was');

# ---- pg_dump as alice: custom and plain
my $dump = $node->basedir . '/src.dump';
my $plain = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '-U', 'alice', '-Fc', '-f', $dump, '-d', 'src' ],
	'pg_dump -Fc as the database owner');
$node->command_ok([ 'pg_dump', '-U', 'alice', '--no-owner', '-f', $plain, '-d', 'src' ],
	'pg_dump (plain, --no-owner) as the database owner');

# ---- pg_restore -Fc into a database created for alice (cosid created by a
# superuser), as alice with --no-owner, every entry but the extension's
# comment (only the extension's owner may comment on it)
$node->safe_psql('postgres', 'CREATE DATABASE dst OWNER alice');
$node->safe_psql('dst', 'CREATE EXTENSION cosid');
my $list = $node->basedir . '/src.list';
my ($toc) = run_command([ 'pg_restore', '-l', $dump ]);
open(my $fh, '>', $list) or die "could not write $list: $!";
print $fh join("\n", grep { !/COMMENT - EXTENSION cosid/ } split /\n/, $toc), "\n";
close($fh);
my ($rout, $rerr);
my $ret = IPC::Run::run([ 'pg_restore', '-U', 'alice', '--no-owner', '--exit-on-error', '-L', $list,
		'-d', $node->connstr('dst'), $dump ], '>', \$rout, '2>', \$rerr);
ok($ret, 'pg_restore --no-owner --exit-on-error as alice into a database created for her') or diag($rerr);

# ---- plain dump into a database alice created herself, with psql as alice
as_role_ok('alice', 'postgres', 'CREATE DATABASE dst2', 'alice creates a database');
$node->safe_psql('dst2', 'CREATE EXTENSION cosid');
my ($pout, $perr);
IPC::Run::run([ 'psql', '-X', '-q', '-U', 'alice', '-d', $node->connstr('dst2'), '-f', $plain ],
	'>', \$pout, '2>', \$perr);
my @errors = $perr =~ /ERROR:  ([^\n]*)/g;
is_deeply(\@errors, ['must be owner of extension cosid'],
	'psql -f of the plain dump as alice: the one error is the extension\'s comment') or diag($perr);

for my $db ('dst', 'dst2')
{
	is($node->safe_psql($db, $defs), $src{defs}, "$db: the definitions, layouts and sequences as in src");
	(my $owners = $src{owners}) =~ s/^mal\|mallory$/mal|alice/m;
	is($node->safe_psql($db, 'SELECT name, owner FROM cosid.generator ORDER BY name'), $owners,
		"$db: every generator is alice's (mallory's became hers)");
	is($node->safe_psql($db, $seqs), $src{seqs}, "$db: the backing sequences' values carried");
	is($node->safe_psql($db, $history), $src{history}, "$db: the history carried");

	# everything issues above what src issued, no id twice
	as_role_ok('alice', $db, q{
		INSERT INTO things (what) SELECT 'after restore' FROM generate_series(1, 120);
		INSERT INTO legacy (what) SELECT 'after restore' FROM generate_series(1, 15);
	}, "$db: alice inserts with every column default");
	is($node->safe_psql($db, q{
			SELECT count(*), count(DISTINCT id), count(DISTINCT token), count(DISTINCT inv),
				   count(DISTINCT hex), count(DISTINCT u), count(DISTINCT r) FROM things}),
		'240|240|240|240|240|240|240', "$db: things: no id twice in any column");
	my $after = "FROM things WHERE what = 'after restore'";
	is($node->safe_psql($db, "SELECT min(inv) > $max{inv}, min(u) > '$max{u}', min(unhexid(hex)) > $max{hex} $after"),
		't|t|t', "$db: segment, custom-codec and monotonic ulid columns continue above src");
	for my $col ('id', 'token', 'slow', 'r')
	{
		my %seen;
		$seen{$_}++ for split /\n/, $node->safe_psql('src', "SELECT $col FROM things"),
		  split /\n/, $node->safe_psql($db, "SELECT $col $after");
		is(scalar(grep { $seen{$_} > 1 } keys %seen), 0, "$db: things.$col: no value of src issued again");
	}
	is($node->safe_psql($db, qq{SELECT count(*), count(DISTINCT id),
			min(id) FILTER (WHERE what = 'after restore') > $max{legacy} FROM legacy}),
		'50|50|t', "$db: the adopted bigserial continues above src");
	cmp_ok(as_role_ok('alice', $db, q{SELECT cosid_next('mal')}, "$db: mal issues"), '>', $max{mal},
		"$db: mal continues above src");
	cmp_ok($node->safe_psql($db, q{SET cosid.debug_now = '2031-05-06 18:00+00'; SELECT cosid_next('daily')}),
		'>', $max{daily}, "$db: daily continues in its day above src");
	as_role_ok('alice', $db, q{SELECT cosid_define('gone', '{"strategy":"segment","step":7}');},
		"$db: alice defines gone again");
	my $gone_last = $node->safe_psql('src', q{SELECT last_number FROM cosid.generator_history WHERE name = 'gone'});
	cmp_ok($node->safe_psql($db, q{SELECT cosid_next('gone')}), '>', $gone_last,
		"$db: gone, defined again, continues above its history ($gone_last)");
	# the restored sequences are alice's now; a new definition's is cosid's
	as_role_ok('alice', $db, q{SELECT cosid_define('fresh', '{"strategy":"segment"}')},
		"$db: alice defines a new segment generator");
	is($node->safe_psql($db, q{SELECT string_agg(g.name || ':' || c.relowner::regrole::text, ',' ORDER BY g.name)
			FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence WHERE g.owns_sequence}),
		"daily:alice,fresh:$su,gone:$su,hex:alice,inv:alice,mal:alice",
		"$db: restored backing sequences are the restorer's, a new one the catalog owner's");
	($state) = as_role('mallory', $db, q{SELECT last_value FROM cosid.} . $node->safe_psql($db,
		q{SELECT c.relname FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence WHERE g.name = 'inv'}));
	is($state, '42501', "$db: mallory cannot read the restored backing sequence");
}

# ---- a database at 1.2 updated to 1.3: the sequences cosid made before
# get the same grants, and its owner can dump it
$node->safe_psql('postgres', 'CREATE DATABASE old OWNER alice');
$node->safe_psql('old', q{CREATE EXTENSION cosid VERSION '1.2'; GRANT CREATE ON DATABASE old TO mallory});
as_role_ok('alice', 'old', q{SELECT cosid_define('inv', '{"strategy":"segment"}'); SELECT cosid_next('inv')},
	'old (1.2): alice defines a segment generator');
as_role_ok('mallory', 'old', q{SELECT cosid_define('mal', '{"strategy":"segment"}')},
	'old (1.2): mallory defines one');
$node->command_fails([ 'pg_dump', '-U', 'alice', '-Fc', '-f', $node->basedir . '/old12.dump', '-d', 'old' ],
	'old (1.2): pg_dump as the database owner fails (the 1.2 behaviour)');
$node->safe_psql('old', 'ALTER EXTENSION cosid UPDATE');
$node->command_ok([ 'pg_dump', '-U', 'alice', '-Fc', '-f', $node->basedir . '/old.dump', '-d', 'old' ],
	'old, updated to 1.3: pg_dump as the database owner');
is($node->safe_psql('old', $seq_grants),
	"inv:alice=SELECT,pg_database_owner=SELECT,$su=SELECT,$su=UPDATE,$su=USAGE mal:mallory=SELECT,pg_database_owner=SELECT,$su=SELECT,$su=UPDATE,$su=USAGE",
	'old, updated: SELECT on each backing sequence for its generator\'s owner and pg_database_owner');
is($node->safe_psql('old', 'SELECT c.relacl::text FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence ORDER BY g.name'),
	$node->safe_psql('src', q{SELECT c.relacl::text FROM cosid.generator g JOIN pg_class c ON c.oid = g.sequence
		WHERE g.name IN ('inv', 'mal') ORDER BY g.name}),
	'old, updated: the same ACLs as cosid_define gives in 1.3');

$node->stop;
done_testing();
