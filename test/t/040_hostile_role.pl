# A hostile ordinary role must gain no privilege through cosid (DESIGN
# section 2 item 7).  cosid runs some statements with raised rights (as the
# owner of its catalog table cosid.generator, the superuser who ran CREATE
# EXTENSION); in 1.0 they ran with the caller's search_path and temporary
# objects, and pasted names into SQL text, so an ordinary role could become
# superuser.  Each route below was enough in 1.0:
#
#  a) a function, operator, table or view in a schema the role owns, first
#     on its search_path ("evil, pg_catalog, public" and "evil" alone),
#     shadowing one cosid's internal statements used;
#  b) temporary views named pg_sequence, generator, pg_class (no schema on
#     the search_path at all), with adopt-sequence of a temporary sequence
#     (refused) and of a permanent one;
#  c) quotes and other special characters in the name of an adopted
#     sequence (with an injection payload), and in generator names;
#  d) custom codec functions: EXECUTE is needed on them; a generator's
#     functions run as its owner in a security-restricted operation when a
#     superuser uses the generator; they stay the functions resolved at
#     definition whatever the caller's search_path; they are bound by OID
#     and must be owned by the generator's owner or a superuser (1.3): in
#     1.2 a superuser's generator with the attacker's functions (d4), a
#     superuser's function dropped and created again by the attacker (d5),
#     and a function given to the attacker after a backend bound it (d6)
#     each ran the attacker's code as the superuser;
#  e) defining needs CREATE on the database; altering and dropping need
#     ownership of the generator;
#  f) an operator the role names "<" over cosid's equality function: the
#     planner support follows the function, so an index scan gives the rows
#     the operator gives.
#
# The attacker is an ordinary role: LOGIN, CREATE on the database, its own
# schema evil.  Every shadowing object calls evil.probe(), which (running as
# whoever calls it) tries ALTER ROLE attacker SUPERUSER, checks whether it
# may SET ROLE and create a temporary table (both refused in a
# security-restricted operation), logs all that into evil.log, raises a
# WARNING (which survives a rollback) and returns; the shadow then delegates
# to the real pg_catalog function so that the caller keeps working.  After
# every route: the attacker is not a superuser, no logged call ran as a
# superuser or as the catalog owner, and (for routes a to c, where cosid
# must call none of the role's objects) evil.log is empty and no probe
# warning was seen.  Each route also checks that what it did legitimately
# still works.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use CosidTest;

my $node = cosid_node('hostile');
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE ROLE attacker LOGIN;
	GRANT CREATE ON DATABASE postgres TO attacker;
	CREATE ROLE other LOGIN;
	CREATE ROLE plain LOGIN;
});
my $superuser = $node->safe_psql('postgres', 'SELECT current_user');
my $cat_owner = $node->safe_psql('postgres',
	q{SELECT relowner::regrole FROM pg_class WHERE oid = 'cosid.generator'::regclass});
note("test superuser $superuser, owner of cosid.generator $cat_owner");

my $json = JSON::PP->new->canonical;

# SQL literal and quoted identifier of any string
sub lit { my ($s) = @_; $s =~ s/'/''/g; return "'$s'"; }
sub qi  { my ($s) = @_; $s =~ s/"/""/g; return "\"$s\""; }
# a jsonb literal of a Perl structure
sub jlit { return lit($json->encode($_[0])) . '::jsonb'; }

# Run steps ([key, sql], ...) in one session as $role (a real login).
# Returns { key => { out => stdout, err => stderr, state => SQLSTATE of its
# first ERROR or undef } } and the list of probe warnings of the session.
# Keys starting with "setup" are the role's own preparations.
sub session
{
	my ($role, @steps) = @_;
	my $script = "\\set VERBOSITY verbose\n";
	for my $s (@steps)
	{
		my ($k, $sql) = @$s;
		$script .= "\\echo \@\@step $k\@\@\n\\warn \@\@step $k\@\@\n$sql\n";
	}
	my @params = $role eq $superuser ? () : (extra_params => [ '-U', $role ]);
	my ($ret, $out, $err) = $node->psql('postgres', $script, on_error_stop => 0, @params);
	my %r;
	my @probes;
	for my $pair ([ 'out', $out // '' ], [ 'err', $err // '' ])
	{
		my ($what, $text) = @$pair;
		my $key = '(before)';
		for my $line (split /\n/, $text)
		{
			if ($line =~ /^\@\@step (.*)\@\@$/)
			{
				$key = $1;
				$r{$key}{$what} //= '';
				next;
			}
			$r{$key}{$what} .= ($r{$key}{$what} // '') eq '' ? $line : "\n$line";
			push @probes, $1 if $what eq 'err' && $line =~ /cosid-probe (.*)$/;
		}
	}
	for my $k (keys %r)
	{
		$r{$k}{out} //= '';
		$r{$k}{err} //= '';
		$r{$k}{state} = $1 if $r{$k}{err} =~ /ERROR:  ([0-9A-Z]{5}):/;
	}
	return (\%r, \@probes);
}

# The errors of the role's own preparation steps (a bug of this test if any).
sub setup_errors
{
	my ($r) = @_;
	return join("\n", map { "$_: $r->{$_}{err}" }
		  grep { /^setup/ && defined $r->{$_}{state} } sort keys %$r);
}

# What a step printed, or its error.
sub got
{
	my ($r, $k) = @_;
	return "(step $k did not run)" unless $r->{$k};
	return defined $r->{$k}{state} ? "ERROR $r->{$k}{state}: $r->{$k}{err}" : $r->{$k}{out};
}

# The checks after every route; then the attacker is reset to NOSUPERUSER
# and evil.log emptied for the next route.
sub check_route
{
	my ($label, $probes, %o) = @_;
	is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'attacker'}),
		'f', "$label: the attacker is still not a superuser");
	$node->safe_psql('postgres', 'ALTER ROLE attacker NOSUPERUSER');
	is( $node->safe_psql('postgres', qq{
			SELECT string_agg(format('%s ran as %s', tag, cu), '; ' ORDER BY id) FROM evil.log
			WHERE is_super OR cu = '$cat_owner' OR cu IN (SELECT rolname FROM pg_roles WHERE rolsuper)}),
		'', "$label: evil.log: no attacker object ran as a superuser or as the catalog owner");
	my @as_super = grep { /superuser=t/ || / current_user=\Q$cat_owner\E / } @$probes;
	is(join("\n", @as_super), '',
		"$label: no probe warning from a run as a superuser, not even in a statement that failed");
	if ($o{no_calls})
	{
		is( $node->safe_psql('postgres',
				q{SELECT string_agg(format('%s ran as %s', tag, cu), '; ' ORDER BY id) FROM evil.log}),
			'', "$label: cosid's statements called none of the attacker's objects (evil.log is empty)");
		is(join("\n", @$probes), '',
			"$label: no attacker object ran at all, not even in a statement that failed");
	}
	$node->safe_psql('postgres', 'TRUNCATE evil.log');
}

# ---- the attacker's schema, log and probe
my ($r) = session('attacker', [ 'setup', q{
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
CREATE TABLE evil.log (id bigserial, tag text, cu name, su name, is_super boolean,
	altered boolean, can_set_role boolean, can_temp boolean);
GRANT INSERT ON evil.log TO PUBLIC;
GRANT USAGE ON SEQUENCE evil.log_id_seq TO PUBLIC;
CREATE FUNCTION evil.probe(tag text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	sup boolean;
	altered boolean := false;
	setrole boolean := false;
	tmp boolean := false;
BEGIN
	SELECT rolsuper INTO sup FROM pg_roles WHERE rolname = current_user;
	BEGIN
		EXECUTE 'ALTER ROLE attacker SUPERUSER';
		altered := true;
	EXCEPTION WHEN others THEN NULL;
	END;
	BEGIN
		SET LOCAL ROLE NONE;
		setrole := true;
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN others THEN NULL;
	END;
	BEGIN
		CREATE TEMP TABLE cosid_probe_tmp (x int);
		tmp := true;
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN others THEN NULL;
	END;
	INSERT INTO evil.log (tag, cu, su, is_super, altered, can_set_role, can_temp)
		VALUES (tag, current_user, session_user, sup, altered, setrole, tmp);
	RAISE WARNING 'cosid-probe tag=% current_user=% session_user=% superuser=% altered=% set_role=% temp=%',
		tag, current_user, session_user, CASE WHEN sup THEN 't' ELSE 'f' END,
		altered, setrole, tmp;
	RETURN true;
END
$f$;
} ]);
is(setup_errors($r), '', 'the attacker creates its schema evil, evil.log and evil.probe()');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'attacker'}),
	'f', 'the attacker starts as an ordinary role');

# ---- a) shadowing functions, operators, tables and views
# Each shadow: a tag, what the attacker creates in evil, what drops it again.
sub shadow_fn
{
	my ($name, $args, $ret, $call, $tag) = @_;
	return "CREATE FUNCTION evil.$name($args) RETURNS $ret LANGUAGE plpgsql "
	  . "SET search_path = pg_catalog, pg_temp AS \$f\$BEGIN PERFORM evil.probe("
	  . lit($tag) . "); RETURN $call; END\$f\$;";
}

my @shadows = (
	{
		tag => 'md5(text)',
		create => shadow_fn('md5', 'a text', 'text', 'pg_catalog.md5(a)', 'md5(text)'),
		drop => 'DROP FUNCTION IF EXISTS evil.md5(text) CASCADE'
	},
	{
		tag => 'format(text,text)',
		create => shadow_fn('format', 'a text, b text', 'text', 'pg_catalog.format(a, b)', 'format(text,text)'),
		drop => 'DROP FUNCTION IF EXISTS evil.format(text, text) CASCADE'
	},
	{
		tag => 'textcat(text,text)',
		create => shadow_fn('textcat', 'a text, b text', 'text', 'pg_catalog.textcat(a, b)', 'textcat(text,text)'),
		drop => 'DROP FUNCTION IF EXISTS evil.textcat(text, text) CASCADE'
	},
	{
		tag => 'operator ||(text,text)',
		create => shadow_fn('cat_shadow', 'a text, b text', 'text', 'pg_catalog.textcat(a, b)', 'operator ||(text,text)')
		  . "\nCREATE OPERATOR evil.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.cat_shadow);",
		drop => 'DROP FUNCTION IF EXISTS evil.cat_shadow(text, text) CASCADE'
	},
	{
		tag => 'operator =(text,text)',
		create => shadow_fn('eq_text_shadow', 'a text, b text', 'boolean', 'pg_catalog.texteq(a, b)', 'operator =(text,text)')
		  . "\nCREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.eq_text_shadow);",
		drop => 'DROP FUNCTION IF EXISTS evil.eq_text_shadow(text, text) CASCADE'
	},
	{
		tag => 'operator =(oid,oid)',
		create => shadow_fn('eq_oid_shadow', 'a oid, b oid', 'boolean', 'pg_catalog.oideq(a, b)', 'operator =(oid,oid)')
		  . "\nCREATE OPERATOR evil.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = evil.eq_oid_shadow);",
		drop => 'DROP FUNCTION IF EXISTS evil.eq_oid_shadow(oid, oid) CASCADE'
	},
	{
		# an exact match for "oid = <integer literal>", which pg_catalog lacks:
		# it wins even when pg_catalog is searched first
		tag => 'operator =(oid,integer)',
		create => shadow_fn('eq_oid_int_shadow', 'a oid, b integer', 'boolean', 'a = b::oid', 'operator =(oid,integer)')
		  . "\nCREATE OPERATOR evil.= (LEFTARG = oid, RIGHTARG = integer, FUNCTION = evil.eq_oid_int_shadow);",
		drop => 'DROP FUNCTION IF EXISTS evil.eq_oid_int_shadow(oid, integer) CASCADE'
	},
	{
		tag => 'setval(regclass,bigint,boolean)',
		create => shadow_fn('setval', 'a regclass, b bigint, c boolean', 'bigint', 'pg_catalog.setval(a, b, c)',
			'setval(regclass,bigint,boolean)'),
		drop => 'DROP FUNCTION IF EXISTS evil.setval(regclass, bigint, boolean) CASCADE'
	},
	{
		tag => 'setval(text,bigint,boolean)',
		create => shadow_fn('setval', 'a text, b bigint, c boolean', 'bigint', 'pg_catalog.setval(a::regclass, b, c)',
			'setval(text,bigint,boolean)'),
		drop => 'DROP FUNCTION IF EXISTS evil.setval(text, bigint, boolean) CASCADE'
	},
	{
		tag => 'nextval',
		create => shadow_fn('nextval', 'a regclass', 'bigint', 'pg_catalog.nextval(a)', 'nextval(regclass)') . "\n"
		  . shadow_fn('nextval', 'a text', 'bigint', 'pg_catalog.nextval(a::regclass)', 'nextval(text)'),
		drop => 'DROP FUNCTION IF EXISTS evil.nextval(regclass) CASCADE; DROP FUNCTION IF EXISTS evil.nextval(text) CASCADE'
	},
	{
		tag => 'view evil.pg_sequence',
		create => q{CREATE VIEW evil.pg_sequence AS
			SELECT s.* FROM pg_catalog.pg_sequence s WHERE evil.probe('view evil.pg_sequence');},
		drop => 'DROP VIEW IF EXISTS evil.pg_sequence'
	},
	{
		tag => 'view evil.generator',
		create => q{CREATE VIEW evil.generator AS
			SELECT g.* FROM cosid.generator g WHERE evil.probe('view evil.generator');},
		drop => 'DROP VIEW IF EXISTS evil.generator'
	},
	{
		tag => 'view evil.pg_class',
		create => q{CREATE VIEW evil.pg_class AS
			SELECT c.* FROM pg_catalog.pg_class c WHERE evil.probe('view evil.pg_class');},
		drop => 'DROP VIEW IF EXISTS evil.pg_class'
	});

my %paths = (1 => 'evil, pg_catalog, public', 2 => 'evil');
my $n = 0;
for my $sh (@shadows)
{
	for my $p (sort keys %paths)
	{
		$n++;
		my $path = $paths{$p};
		my $label = "a) $sh->{tag}, search_path '$path'";
		my $g = "a_$n";
		my $seq = "evil.aseq_$n";
		my ($r, $probes) = session(
			'attacker',
			[ 'setup shadow', $sh->{create} ],
			[ 'setup sequence', "CREATE SEQUENCE $seq; SELECT pg_catalog.nextval('$seq') FROM pg_catalog.generate_series(1, 3);" ],
			[ 'setup path', "SET search_path = $path;" ],
			[ 'define', "SELECT public.cosid_define('$g', '{\"strategy\":\"segment\"}');" ],
			[ 'next1', "SELECT public.cosid_next('$g');" ],
			[ 'next2', "SELECT public.cosid_next('$g');" ],
			[ 'next3', "SELECT public.cosid_next('$g');" ],
			[ 'adopt', "SELECT public.cosid_define('${g}_adopt', '{\"strategy\":\"segment\",\"adopt-sequence\":\"$seq\"}');" ],
			[ 'adopt next', "SELECT public.cosid_next('${g}_adopt');" ],
			[ 'alter', "SELECT public.cosid_alter('$g', '{\"step\":10}');" ],
			[ 'next text', "SELECT public.cosid_next_text('$g');" ],
			[ 'encode', "SELECT public.cosid_encode('$g', 7);" ],
			[ 'drop adopted', "SELECT public.cosid_drop('${g}_adopt');" ],
			[ 'drop', "SELECT public.cosid_drop('$g');" ]);
		is(setup_errors($r), '', "$label: the attacker's own preparations succeed");
		is(join(',', map { got($r, $_) } 'next1', 'next2', 'next3'), '1,2,3',
			"$label: a segment generator defined under this search_path issues 1, 2, 3");
		is(got($r, 'adopt next'), '4',
			"$label: adopting $seq (at 3) continues its numbering at 4");
		# (a changed step may start a new segment: any number above 3)
		my $after = got($r, 'next text');
		is(join(',', map { got($r, $_) } 'alter', 'encode', 'drop adopted', 'drop')
			  . ($after =~ /^\d+$/ && $after > 3 ? ',above 3' : ",$after"), ',7,,,above 3',
			"$label: cosid_alter, cosid_next_text (a number above 3), cosid_encode and cosid_drop work");
		check_route($label, $probes, no_calls => 1);
		$node->safe_psql('postgres', $sh->{drop});
	}
}

# ---- b) temporary views, no schema on the search_path
{
	my $label = 'b) temp views pg_sequence, generator, pg_class';
	my ($r, $probes) = session(
		'attacker',
		[ 'setup temp sequence', q{CREATE TEMP SEQUENCE tseq; SELECT nextval('tseq') FROM generate_series(1, 3);} ],
		[ 'setup sequence', q{CREATE SEQUENCE evil.bseq; SELECT nextval('evil.bseq') FROM generate_series(1, 3);} ],
		[ 'setup views', q{
CREATE TEMP VIEW pg_sequence AS
	SELECT s.* FROM pg_catalog.pg_sequence s WHERE evil.probe('temp view pg_sequence');
CREATE TEMP VIEW generator AS
	SELECT g.* FROM cosid.generator g WHERE evil.probe('temp view generator');
CREATE TEMP VIEW pg_class AS
	SELECT c.* FROM pg_catalog.pg_class c WHERE evil.probe('temp view pg_class');} ],
		[ 'define temp', q{SELECT public.cosid_define('b_temp', '{"strategy":"segment","adopt-sequence":"tseq"}');} ],
		[ 'next temp', q{SELECT public.cosid_next('b_temp');} ],
		[ 'define perm', q{SELECT public.cosid_define('b_perm', '{"strategy":"segment","adopt-sequence":"evil.bseq"}');} ],
		[ 'next perm', q{SELECT public.cosid_next('b_perm');} ],
		[ 'define seg', q{SELECT public.cosid_define('b_seg', '{"strategy":"segment"}');} ],
		[ 'next seg', q{SELECT public.cosid_next('b_seg');} ],
		[ 'alter perm', q{SELECT public.cosid_alter('b_perm', '{"step":7}');} ],
		[ 'drop seg', q{SELECT public.cosid_drop('b_seg');} ],
		[ 'drop perm', q{SELECT public.cosid_drop('b_perm');} ]);
	is(setup_errors($r), '', "$label: the attacker's own preparations succeed");
	ok(defined $r->{'define temp'}{state},
		"$label: adopting a TEMPORARY sequence is refused")
	  or diag('cosid_define adopting tseq: ' . got($r, 'define temp'));
	is(got($r, 'next perm'), '4',
		"$label: adopting a permanent sequence (at 3) while the views exist continues at 4");
	is(got($r, 'next seg'), '1', "$label: a new segment generator issues 1");
	is(join(',', map { got($r, $_) } 'alter perm', 'drop seg', 'drop perm'), ',,',
		"$label: cosid_alter and cosid_drop work");
	check_route($label, $probes, no_calls => 1);
	$node->safe_psql('postgres', q{SELECT cosid_drop('b_temp', true)});
}

# ---- c) special characters in names
my @names = (
	"it's",
	'say "hi"',
	'semi;colon',
	'$$dollar$$',
	'back\\slash',
	'with space',
	"x'); ALTER ROLE attacker SUPERUSER; --",
	# 1.0 built "SELECT setval('<schema>.<quoted name>', n, true)": these
	# close the literal, keep the first statement valid, then run their own
	"x'||chr(34),1,true);ALTER ROLE attacker SUPERUSER;SELECT 1--",
	"x'||chr(34),1,true);SELECT evil.probe('c')--");
# for the payloads' first statement
$node->psql('postgres', 'CREATE SEQUENCE evil.x', extra_params => [ '-U', 'attacker' ]);
my $seqs_before = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_class WHERE relnamespace = 'cosid'::regnamespace AND relkind = 'S'});
$n = 0;
for my $name (@names)
{
	$n++;
	my $label = "c) name <$name>";
	my $seq = 'evil.' . qi($name);
	my $g = lit($name);
	my @steps = (
		[ 'setup sequence', "CREATE SEQUENCE $seq; SELECT nextval(" . lit($seq) . ") FROM generate_series(1, 3);" ],
		[ 'adopt', "SELECT public.cosid_define('c_adopt_$n', "
			  . jlit({ strategy => 'segment', 'adopt-sequence' => $seq }) . ');' ],
		[ 'adopt next', "SELECT public.cosid_next('c_adopt_$n');" ],
		[ 'adopt next2', "SELECT public.cosid_next('c_adopt_$n');" ],
		[ 'adopt alter', "SELECT public.cosid_alter('c_adopt_$n', '{\"step\":5}');" ],
		[ 'adopt drop', "SELECT public.cosid_drop('c_adopt_$n');" ],
		[ 'adopt kept', "SELECT last_value, is_called FROM $seq;" ],
		[ 'define', "SELECT public.cosid_define($g, "
			  . jlit({ strategy => 'segment', codec => [ { radix => 62 }, { prefix => 'P' } ] }) . ');' ],
		[ 'next', "SELECT public.cosid_next($g);" ],
		[ 'next text', "SELECT public.cosid_next_text($g);" ],
		[ 'encode', "SELECT public.cosid_encode($g, 3844);" ],
		[ 'decode', "SELECT public.cosid_decode($g, 'P100');" ],
		[ 'alter', "SELECT public.cosid_alter($g, " . jlit({ codec => [ { prefix => 'Q' } ] }) . ');' ],
		[ 'encode after alter', "SELECT public.cosid_encode($g, 7);" ],
		[ 'listed', "SELECT strategy FROM cosid.generators WHERE name = $g;" ],
		[ 'drop', "SELECT public.cosid_drop($g);" ],
		[ 'gone', "SELECT count(*) FROM cosid.generator WHERE name = $g;" ],
		[ 'define snowflake', "SELECT public.cosid_define($g, '{\"strategy\":\"snowflake\"}');" ],
		[ 'next snowflake', "SELECT public.cosid_next($g) > 0;" ],
		[ 'drop snowflake', "SELECT public.cosid_drop($g, true);" ]);
	my ($r, $probes) = session('attacker', @steps);
	is(setup_errors($r), '', "$label: the attacker's own preparations succeed");
	is(got($r, 'adopt'), '', "$label: cosid_define adopting sequence $seq succeeds");
	is(got($r, 'adopt next') . ',' . got($r, 'adopt next2'), '4,5',
		"$label: the adopted sequence (at 3) continues at 4, 5");
	is(join(',', map { got($r, $_) } 'adopt alter', 'adopt drop'), ',',
		"$label: alter and drop of the generator that adopted it work");
	like(got($r, 'adopt kept'), qr/^\d+\|t$/, "$label: the adopted sequence stays after the drop");
	is(got($r, 'define'), '', "$label: a segment generator with this name is defined");
	is(got($r, 'next') . ',' . got($r, 'next text'), '1,P2',
		"$label: cosid_next and cosid_next_text by this name issue 1, P2");
	is(got($r, 'encode') . ',' . got($r, 'decode'), 'P100,3844',
		"$label: cosid_encode and cosid_decode by this name");
	is(got($r, 'alter') . ',' . got($r, 'encode after alter'), ',Q7',
		"$label: cosid_alter by this name changes its codec");
	is(got($r, 'listed'), 'segment', "$label: cosid.generators lists it");
	is(got($r, 'drop') . ',' . got($r, 'gone'), ',0', "$label: cosid_drop by this name removes it");
	is(join(',', map { got($r, $_) } 'define snowflake', 'next snowflake', 'drop snowflake'), ',t,',
		"$label: a snowflake generator with this name: define, next, drop");
	check_route($label, $probes, no_calls => 1);
}
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_class WHERE relnamespace = 'cosid'::regnamespace AND relkind = 'S'}),
	$seqs_before, 'c) the backing sequences cosid made for these names were dropped with their generators');

# ---- d) custom codec functions
# functions the attacker may not execute, and another enc/dec pair that a
# different search_path finds
$node->safe_psql('postgres', q{
	CREATE SCHEMA priv;
	GRANT USAGE ON SCHEMA priv TO PUBLIC;
	CREATE FUNCTION priv.enc(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'X' || $1::text $$;
	CREATE FUNCTION priv.dec(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT substr($1, 2)::bigint $$;
	REVOKE EXECUTE ON FUNCTION priv.enc(bigint), priv.dec(text) FROM PUBLIC;
	CREATE SCHEMA other_s;
	GRANT USAGE ON SCHEMA other_s TO PUBLIC;
	CREATE FUNCTION other_s.enc(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT 'O' || $1::text $$;
	CREATE FUNCTION other_s.dec(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT substr($1, 2)::bigint $$;
});
my $custom = sub {
	my ($enc, $dec) = @_;
	return [ { custom => { encode => $enc, decode => $dec } } ];
};
($r) = session('attacker', [ 'setup functions', q{
CREATE FUNCTION evil.enc(id bigint) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM evil.probe('evil.enc');
	RETURN 'E' || id::text;
END
$f$;
CREATE FUNCTION evil.dec(t text) RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM evil.probe('evil.dec');
	RETURN substr(t, 2)::bigint;
END
$f$;} ]);
is(setup_errors($r), '', 'd) the attacker creates evil.enc(bigint) and evil.dec(text)');

# d1) EXECUTE is needed on a custom codec's functions
{
	my $label = 'd1) custom functions without EXECUTE';
	my ($r, $probes) = session(
		'attacker',
		[ 'both', "SELECT public.cosid_define('d1a', "
			  . jlit({ strategy => 'segment', codec => $custom->('priv.enc(bigint)', 'priv.dec(text)') }) . ');' ],
		[ 'decode only', "SELECT public.cosid_define('d1b', "
			  . jlit({ strategy => 'segment', codec => $custom->('evil.enc(bigint)', 'priv.dec(text)') }) . ');' ],
		[ 'encode only', "SELECT public.cosid_define('d1c', "
			  . jlit({ strategy => 'snowflake', codec => $custom->('priv.enc(bigint)', 'evil.dec(text)') }) . ');' ],
		[ 'inline encode', 'SELECT public.cosid_encode_with(5::bigint, '
			  . jlit($custom->('priv.enc(bigint)', 'priv.dec(text)')) . ');' ],
		[ 'inline decode', q{SELECT public.cosid_decode_with('X5', }
			  . jlit($custom->('priv.enc(bigint)', 'priv.dec(text)')) . ');' ],
		[ 'inline own', 'SELECT public.cosid_encode_with(5::bigint, '
			  . jlit($custom->('evil.enc(bigint)', 'evil.dec(text)')) . ');' ],
		[ 'define own', "SELECT public.cosid_define('d1d', "
			  . jlit({ strategy => 'segment', codec => $custom->('evil.enc(bigint)', 'evil.dec(text)') }) . ');' ],
		[ 'next own', "SELECT public.cosid_next_text('d1d');" ]);
	is($r->{both}{state}, '42501', "$label: cosid_define with encode and decode not executable: 42501")
	  or diag(got($r, 'both'));
	is($r->{'decode only'}{state}, '42501', "$label: cosid_define with the decode function not executable: 42501")
	  or diag(got($r, 'decode only'));
	is($r->{'encode only'}{state}, '42501', "$label: cosid_define with the encode function not executable: 42501")
	  or diag(got($r, 'encode only'));
	is($r->{'inline encode'}{state}, '42501', "$label: inline cosid_encode_with(id, codec) with it: 42501")
	  or diag(got($r, 'inline encode'));
	is($r->{'inline decode'}{state}, '42501', "$label: inline cosid_decode_with(text, codec) with it: 42501")
	  or diag(got($r, 'inline decode'));
	is(got($r, 'inline own'), 'E5', "$label: inline codec with the attacker's own functions works (E5)");
	is(got($r, 'define own') . ',' . got($r, 'next own'), ',E1',
		"$label: a generator with the attacker's own functions works (E1)");
	check_route($label, $probes);
	$node->safe_psql('postgres', q{
		SELECT cosid_drop(n, true) FROM unnest(ARRAY['d1a', 'd1b', 'd1c', 'd1d']) n});
}

# d2) a superuser uses the attacker's generator
{
	my $label = 'd2) a superuser uses the attacker\'s custom codec';
	($r) = session('attacker', [ 'define', "SELECT public.cosid_define('d2', "
		  . jlit({ strategy => 'segment', codec => $custom->('evil.enc(bigint)', 'evil.dec(text)') }) . ');' ]);
	is(got($r, 'define'), '', "$label: the attacker defines d2 with evil.enc and evil.dec");
	$node->safe_psql('postgres', 'TRUNCATE evil.log');
	my ($s, $probes) = session(
		$superuser,
		[ 'next text', q{SELECT cosid_next_text('d2');} ],
		[ 'encode', q{SELECT cosid_encode('d2', 42);} ],
		[ 'decode', q{SELECT cosid_decode('d2', 'E42');} ],
		[ 'rows', q{SELECT string_agg(x, ',') FROM (SELECT cosid_encode('d2', g) AS x FROM generate_series(1, 3) g) s;} ]);
	is(got($s, 'next text'), 'E1', "$label: cosid_next_text gives E1");
	is(got($s, 'encode') . ',' . got($s, 'decode'), 'E42,42', "$label: cosid_encode and cosid_decode by name");
	is(got($s, 'rows'), 'E1,E2,E3', "$label: cosid_encode over several rows");
	my $log = $node->safe_psql('postgres', q{
		SELECT count(*), count(*) FILTER (WHERE cu = 'attacker'),
			   count(*) FILTER (WHERE can_set_role), count(*) FILTER (WHERE can_temp),
			   count(*) FILTER (WHERE altered)
		FROM evil.log});
	my ($total, $as_attacker, $set_role, $temp, $altered) = split /\|/, $log;
	cmp_ok($total, '>', 0, "$label: the custom functions ran (evil.log has $total rows)");
	is($as_attacker, $total, "$label: every call of them ran as the generator's owner, attacker")
	  or diag($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT cu::text, ',') FROM evil.log}));
	is($set_role, 0, "$label: they ran in a security-restricted operation: SET ROLE refused");
	is($temp, 0, "$label: they ran in a security-restricted operation: CREATE TEMP TABLE refused");
	is($altered, 0, "$label: ALTER ROLE attacker SUPERUSER failed in every call");
	check_route($label, $probes);
}

# d3) the functions resolved at definition, whatever the caller's search_path
{
	my $label = 'd3) unqualified custom functions and another search_path';
	($r) = session(
		'attacker',
		[ 'setup path', 'SET search_path = evil, public;' ],
		[ 'define', "SELECT public.cosid_define('d3', "
			  . jlit({ strategy => 'segment', codec => $custom->('enc(bigint)', 'dec(text)') }) . ');' ],
		[ 'encode', q{SELECT public.cosid_encode('d3', 5);} ]);
	is(setup_errors($r), '', "$label: the attacker's own preparations succeed");
	is(got($r, 'define') . ',' . got($r, 'encode'), ',E5',
		"$label: the attacker defines d3 with enc(bigint), dec(text) found in evil");
	my ($o, $probes_o) = session(
		'other',
		[ 'setup path', 'SET search_path = other_s, public;' ],
		[ 'encode', q{SELECT cosid_encode('d3', 5);} ],
		[ 'decode', q{SELECT cosid_decode('d3', 'E5');} ],
		[ 'next text', q{SELECT cosid_next_text('d3');} ]);
	is(setup_errors($o), '', "$label: role other sets its search_path");
	is(got($o, 'encode'), 'E5', "$label: role other (other_s.enc first on its path) gets evil.enc's E5");
	is(got($o, 'decode'), '5', "$label: role other decodes E5 with evil.dec");
	is(got($o, 'next text'), 'E1', "$label: role other's cosid_next_text gives E1");
	my ($s, $probes_s) = session(
		$superuser,
		[ 'setup path', 'SET search_path = other_s, public;' ],
		[ 'encode other path', q{SELECT cosid_encode('d3', 6);} ],
		[ 'setup reset', 'RESET search_path;' ],
		[ 'encode default path', q{SELECT cosid_encode('d3', 7);} ]);
	is(got($s, 'encode other path'), 'E6',
		"$label: a superuser with other_s first on the path gets evil.enc's E6");
	is(got($s, 'encode default path'), 'E7',
		"$label: a superuser with the default path (no enc on it) gets evil.enc's E7");
	is( $node->safe_psql('postgres',
			q{SELECT string_agg(DISTINCT cu::text, ',' ORDER BY cu::text) FROM evil.log}),
		'attacker', "$label: evil.enc and evil.dec ran as the generator's owner for every caller");
	check_route($label, [ @$probes_o, @$probes_s ]);
}

# d4) a superuser's generator with the attacker's functions: in 1.2 the
# superuser could define it, and the attacker then replaced a function with
# CREATE OR REPLACE and called cosid_encode itself: its code ran as the
# generator's owner, the superuser.  Now defining it is refused (42501), and a
# row that has such functions anyway (written directly, as the update from 1.2
# keeps one) is refused at every bind (42501): the attacker's code never runs.
{
	my $label = 'd4) a superuser\'s generator with the attacker\'s functions';
	($r) = session('attacker', [ 'setup functions', q{
CREATE FUNCTION evil.enc4(id bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT 'A' || id::text $f$;
CREATE FUNCTION evil.dec4(t text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT substr(t, 2)::bigint $f$;} ]);
	is(setup_errors($r), '', "$label: the attacker creates evil.enc4 and evil.dec4 (harmless so far)");
	my ($s) = session(
		$superuser,
		[ 'define', "SELECT cosid_define('d4', "
			  . jlit({ strategy => 'snowflake', codec => $custom->('evil.enc4(bigint)', 'evil.dec4(text)') }) . ');' ],
		[ 'setup base', q{SELECT cosid_define('d4_base', '{"strategy":"snowflake"}');} ],
		[ 'setup row', q{INSERT INTO cosid.generator (name, strategy, config, epoch_ms, unit_ms, time_bits, node_bits,
				seq_bits, seq_reset_threshold, owner)
			SELECT 'd4_row', strategy, config || '{"codec": [{"custom": {"encode": "evil.enc4(bigint)", "decode": "evil.dec4(text)"}}]}',
				   epoch_ms, unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold, owner
			FROM cosid.generator WHERE name = 'd4_base';} ],
		[ 'row bound', q{SELECT codec_functions = ARRAY['evil.enc4(bigint)'::regprocedure, 'evil.dec4(text)'::regprocedure]::oid[]
			FROM cosid.generator WHERE name = 'd4_row';} ]);
	is(setup_errors($s), '', "$label: the superuser's own preparations succeed");
	is($s->{define}{state}, '42501', "$label: a superuser cannot define a generator whose functions the attacker owns (42501)")
	  or diag(got($s, 'define'));
	like($s->{define}{err} // '', qr/owned by role attacker/, "$label: ... and the detail names the function's owner");
	is(got($s, 'row bound'), 't', "$label: a row written with them directly is bound to them by OID");
	my ($a, $probes) = session(
		'attacker',
		[ 'setup replace', q{
CREATE OR REPLACE FUNCTION evil.enc4(id bigint) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM evil.probe('evil.enc4');
	RETURN 'A' || id::text;
END
$f$;} ],
		[ 'encode', q{SELECT public.cosid_encode('d4', 5);} ],
		[ 'encode row', q{SELECT public.cosid_encode('d4_row', 5);} ],
		[ 'decode row', q{SELECT public.cosid_decode('d4_row', 'A5');} ],
		[ 'next text row', q{SELECT public.cosid_next_text('d4_row');} ]);
	is(setup_errors($a), '', "$label: the attacker replaces evil.enc4 with code that calls its probe");
	is($a->{encode}{state}, '42704', "$label: generator d4 does not exist (its definition was refused)")
	  or diag(got($a, 'encode'));
	is(join(',', map { $a->{$_}{state} // got($a, $_) } 'encode row', 'decode row', 'next text row'), '42501,42501,42501',
		"$label: the row with the attacker's functions refuses to encode, decode and issue text (42501)");
	like($a->{'encode row'}{err}, qr/permission denied for function evil\.enc4\(bigint\) of generator "d4_row"/,
		"$label: ... naming the function and the generator");
	check_route($label, $probes, no_calls => 1);
	$node->safe_psql('postgres', q{SELECT cosid_drop(n, true) FROM unnest(ARRAY['d4', 'd4_row', 'd4_base']) n});
}

# d5) a superuser's codec function dropped (nothing refuses: a catalog row is
# no object that a dependency can hold), and a function of the same name
# created by the attacker, who may create in that schema: in 1.2 the next bind
# found it by name and ran it as the superuser.  Now the codec fails (55000)
# and the attacker's function never runs; binding it again by name is refused
# (42501: the attacker owns it).
{
	my $label = 'd5) a dropped function created again by the attacker';
	$node->safe_psql('postgres', q{
		CREATE SCHEMA shared;
		GRANT USAGE, CREATE ON SCHEMA shared TO attacker;
		CREATE FUNCTION shared.enc(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 'S' || $1::text $$;
		CREATE FUNCTION shared.dec(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT substr($1, 2)::bigint $$;
		SELECT cosid_define('d5', '{"strategy": "snowflake", "codec": [{"custom": {"encode": "shared.enc(bigint)", "decode": "shared.dec(text)"}}]}');
	});
	is($node->safe_psql('postgres', q{SELECT cosid_encode('d5', 5)}), 'S5', "$label: the superuser's generator d5 encodes 5 as S5");
	$node->safe_psql('postgres', 'DROP FUNCTION shared.enc(bigint)');
	my ($a, $probes_a) = session(
		'attacker',
		[ 'setup create', q{
CREATE FUNCTION shared.enc(id bigint) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM evil.probe('shared.enc');
	RETURN 'S' || id::text;
END
$f$;} ],
		[ 'encode', q{SELECT public.cosid_encode('d5', 5);} ],
		[ 'next text', q{SELECT public.cosid_next_text('d5');} ]);
	is(setup_errors($a), '', "$label: the attacker creates shared.enc(bigint) again");
	is(join(',', map { $a->{$_}{state} // got($a, $_) } 'encode', 'next text'), '55000,55000',
		"$label: the generator's codec fails for the attacker (55000): the dropped function is not looked up again")
	  or diag(got($a, 'encode'));
	like($a->{encode}{err}, qr/custom codec function shared\.enc\(bigint\) of generator "d5" no longer exists/,
		"$label: ... naming the function and the generator");
	my ($s, $probes_s) = session(
		$superuser,
		[ 'encode', q{SELECT cosid_encode('d5', 5);} ],
		[ 'rebind', q{SELECT cosid_alter('d5', '{"codec": [{"custom": {"encode": "shared.enc(bigint)", "decode": "shared.dec(text)"}}]}');} ]);
	is($s->{encode}{state}, '55000', "$label: ... and for the superuser (55000)") or diag(got($s, 'encode'));
	is($s->{rebind}{state}, '42501', "$label: binding the codec again finds the attacker's function and refuses it (42501)")
	  or diag(got($s, 'rebind'));
	check_route($label, [ @$probes_a, @$probes_s ], no_calls => 1);
	$node->safe_psql('postgres', q{
		SELECT cosid_drop('d5');
		DROP SCHEMA shared CASCADE;});
}

# d6) a function given to the attacker (ALTER FUNCTION ... OWNER TO) after the
# attacker's backend bound the codec: in 1.2 the attacker replaced it and its
# backend, keeping the codec it had bound, ran the new code as the superuser.
# A change of a function or role makes a backend bind again (42501).
{
	my $label = 'd6) a function whose owner changes after a backend bound it';
	$node->safe_psql('postgres', q{
		CREATE SCHEMA su6;
		GRANT USAGE ON SCHEMA su6 TO PUBLIC;
		GRANT CREATE ON SCHEMA su6 TO attacker;   -- (CREATE OR REPLACE needs it)
		-- plpgsql, as the replacement is: a backend that kept its binding would run the new code
		CREATE FUNCTION su6.enc(id bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ BEGIN RETURN 'U' || id::text; END $$;
		CREATE FUNCTION su6.dec(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT substr($1, 2)::bigint $$;
		SELECT cosid_define('d6', '{"strategy": "snowflake", "codec": [{"custom": {"encode": "su6.enc(bigint)", "decode": "su6.dec(text)"}}]}');
	});
	my $bg = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'attacker' ]);
	$bg->query_safe('\set VERBOSITY verbose');
	is($bg->query_safe(q{SELECT public.cosid_encode('d6', 5)}), 'U5', "$label: the attacker's backend binds d6 and encodes 5 as U5");
	$node->safe_psql('postgres', 'ALTER FUNCTION su6.enc(bigint) OWNER TO attacker');
	$bg->{stderr} = '';
	$bg->query(q{
CREATE OR REPLACE FUNCTION su6.enc(id bigint) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM evil.probe('su6.enc');
	RETURN 'U' || id::text;
END
$f$;});
	is($bg->{stderr}, '', "$label: the attacker, now its owner, replaces su6.enc with code that calls its probe");
	$bg->{stderr} = '';
	my $out = $bg->query(q{SELECT public.cosid_encode('d6', 5)});
	my $err = $bg->{stderr};
	like($err, qr/ERROR:  42501: permission denied for function su6\.enc\(bigint\) of generator "d6"/,
		"$label: the same backend binds again and refuses the function (42501)")
	  or diag("out: $out\nerr: $err");
	my @probes = ($err =~ /cosid-probe (.*)$/mg);
	$bg->quit;
	my ($s, $probes_s) = session($superuser, [ 'encode', q{SELECT cosid_encode('d6', 5);} ]);
	is($s->{encode}{state}, '42501', "$label: a new backend refuses it too (42501)") or diag(got($s, 'encode'));
	check_route($label, [ @probes, @$probes_s ], no_calls => 1);
	$node->safe_psql('postgres', q{
		SELECT cosid_drop('d6');
		DROP SCHEMA su6 CASCADE;});
}

# ---- e) CREATE on the database to define; ownership to alter and drop
{
	my $label = 'e) privileges';
	$node->safe_psql('postgres', q{
		REVOKE CREATE ON DATABASE postgres FROM PUBLIC;
		REVOKE CREATE ON DATABASE postgres FROM attacker;
		SELECT cosid_define('su_gen', '{"strategy":"segment"}');
		SELECT cosid_define('su_flake', '{"strategy":"snowflake"}');
	});
	my ($a1, $p1) = session(
		'attacker',
		[ 'define snowflake', q{SELECT public.cosid_define('e_flake', '{"strategy":"snowflake"}');} ],
		[ 'define segment', q{SELECT public.cosid_define('e_seg', '{"strategy":"segment"}');} ]);
	is($a1->{'define snowflake'}{state}, '42501',
		"$label: without CREATE on the database, cosid_define (snowflake) is 42501")
	  or diag(got($a1, 'define snowflake'));
	is($a1->{'define segment'}{state}, '42501',
		"$label: without CREATE on the database, cosid_define (segment) is 42501")
	  or diag(got($a1, 'define segment'));
	my ($pl, $p2) = session(
		'plain',
		[ 'define', q{SELECT cosid_define('e_plain', '{"strategy":"snowflake"}');} ],
		[ 'next', q{SELECT cosid_next('su_gen');} ],
		[ 'encode', q{SELECT cosid_encode('su_gen', 5);} ],
		[ 'next flake', q{SELECT cosid_next('su_flake') > 0;} ]);
	is($pl->{define}{state}, '42501', "$label: a role never granted CREATE: cosid_define is 42501")
	  or diag(got($pl, 'define'));
	# (what a missing check let through, so that the next step starts afresh)
	$node->safe_psql('postgres', q{
		SELECT cosid_drop(n, true) FROM unnest(ARRAY['e_flake', 'e_seg', 'e_plain']) n});
	is(join(',', map { got($pl, $_) } 'next', 'encode', 'next flake'), '1,5,t',
		"$label: anyone may issue and encode with another role's generators");

	$node->safe_psql('postgres', 'GRANT CREATE ON DATABASE postgres TO attacker');
	my ($a2, $p3) = session(
		'attacker',
		[ 'define snowflake', q{SELECT public.cosid_define('e_flake', '{"strategy":"snowflake"}');} ],
		[ 'define segment', q{SELECT public.cosid_define('e_seg', '{"strategy":"segment"}');} ],
		[ 'next', q{SELECT public.cosid_next('e_seg');} ],
		[ 'alter su', q{SELECT public.cosid_alter('su_gen', '{"step":5}');} ],
		[ 'alter su codec', q{SELECT public.cosid_alter('su_flake', '{"codec":[{"prefix":"Z"}]}');} ],
		[ 'drop su', q{SELECT public.cosid_drop('su_gen');} ],
		[ 'drop su if exists', q{SELECT public.cosid_drop('su_flake', true);} ],
		[ 'insert', q{INSERT INTO cosid.generator (name, strategy, config, owner, sequence)
			SELECT 'e_forged', strategy, config, 'attacker', sequence FROM cosid.generator WHERE name = 'su_gen';} ],
		[ 'update', q{UPDATE cosid.generator SET owner = 'attacker' WHERE name = 'su_gen';} ],
		[ 'delete', q{DELETE FROM cosid.generator WHERE name = 'su_gen';} ]);
	is(got($a2, 'define snowflake') . ',' . got($a2, 'define segment') . ',' . got($a2, 'next'), ',,1',
		"$label: with CREATE granted, cosid_define works");
	is($a2->{'alter su'}{state}, '42501', "$label: cosid_alter of another role's generator is 42501")
	  or diag(got($a2, 'alter su'));
	is($a2->{'alter su codec'}{state}, '42501', "$label: cosid_alter of another role's codec is 42501")
	  or diag(got($a2, 'alter su codec'));
	is($a2->{'drop su'}{state}, '42501', "$label: cosid_drop of another role's generator is 42501")
	  or diag(got($a2, 'drop su'));
	is($a2->{'drop su if exists'}{state}, '42501',
		"$label: cosid_drop(..., if_exists) of another role's generator is 42501")
	  or diag(got($a2, 'drop su if exists'));
	is(join(',', map { $a2->{$_}{state} // 'succeeded' } 'insert', 'update', 'delete'), '42501,42501,42501',
		"$label: INSERT, UPDATE and DELETE on cosid.generator are 42501");
	my ($pl2, $p4) = session(
		'plain',
		[ 'alter', q{SELECT cosid_alter('e_seg', '{"step":5}');} ],
		[ 'drop', q{SELECT cosid_drop('e_seg');} ]);
	is(join(',', map { $pl2->{$_}{state} // 'succeeded' } 'alter', 'drop'), '42501,42501',
		"$label: another role cannot alter or drop the attacker's generator (42501)");
	is( $node->safe_psql('postgres', q{
			SELECT string_agg(name || ':' || owner::text, ',' ORDER BY name) FROM cosid.generator
			WHERE name IN ('su_gen', 'su_flake', 'e_seg', 'e_flake', 'e_forged')}),
		"e_flake:attacker,e_seg:attacker,su_flake:$superuser,su_gen:$superuser",
		"$label: every generator still exists, with its owner");
	check_route($label, [ @$p1, @$p2, @$p3, @$p4 ], no_calls => 1);
}

# ---- f) an operator's name: the planner support of the ulid/uuid
# comparisons serves an index condition from what the operator's function
# computes, never from its name.  In 1.2 "evil.<" over uuid_ulid_eq (an
# equality named <) was rewritten to an index condition "id > value": the
# index scan returned other rows than the operator (wrong results, no error).
{
	my $label = 'f) operator names';
	$node->safe_psql('postgres', q{
		CREATE TABLE public.f_ids (id ulid PRIMARY KEY);
		INSERT INTO public.f_ids SELECT gen_ulid() FROM generate_series(1, 2000);
		ANALYZE public.f_ids;
		GRANT SELECT ON public.f_ids TO attacker;
	});
	my $pick = $node->safe_psql('postgres', 'SELECT id::uuid FROM public.f_ids ORDER BY id OFFSET 1000 LIMIT 1');
	my $q = "SELECT count(*) FROM public.f_ids WHERE '$pick'::uuid OPERATOR(evil.<) id";
	my $pick2 = $node->safe_psql('postgres', 'SELECT id::uuid FROM public.f_ids ORDER BY id OFFSET 500 LIMIT 1');
	my $q2 = "SELECT count(*) FROM public.f_ids WHERE id OPERATOR(evil.>=) '$pick2'::uuid";
	my ($r, $probes) = session(
		'attacker',
		[ 'setup op', q{CREATE OPERATOR evil.< (LEFTARG = uuid, RIGHTARG = ulid, FUNCTION = public.uuid_ulid_eq);} ],
		[ 'setup op2', q{CREATE OPERATOR evil.>= (LEFTARG = ulid, RIGHTARG = uuid, FUNCTION = public.ulid_uuid_lt);} ],
		[ 'seqscan', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q;" ],
		[ 'indexscan', "SET enable_seqscan = off; SET enable_indexscan = on; SET enable_bitmapscan = off; $q;" ],
		[ 'plan', "EXPLAIN (COSTS OFF) $q;" ],
		[ 'seqscan2', "SET enable_seqscan = on; SET enable_indexscan = off; $q2;" ],
		[ 'indexscan2', "SET enable_seqscan = off; SET enable_indexscan = on; $q2;" ]);
	is(setup_errors($r), '', "$label: the attacker created its operators");
	is(got($r, 'seqscan'), '1', "$label: a sequential scan finds the one row the operator (an equality) is true for");
	is(got($r, 'indexscan'), got($r, 'seqscan'), "$label: an index scan finds the same rows");
	like(got($r, 'plan'), qr/Index (Only )?Scan using f_ids_pkey .*\n.*Index Cond: \(id = /s,
		"$label: the index serves it as the equality its function is");
	is(got($r, 'seqscan2'), '500', "$label: \"evil.>=\" over ulid_uuid_lt is a less-than: the 500 rows below");
	is(got($r, 'indexscan2'), got($r, 'seqscan2'), "$label: the index scan of it finds the same rows");
	check_route($label, $probes);
}

$node->stop;
done_testing();
