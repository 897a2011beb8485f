# Every release over the ones before it: ALTER EXTENSION cosid UPDATE of a
# database made with an earlier release gives exactly the objects a fresh
# CREATE EXTENSION cosid gives (members, definitions, privileges, comments,
# configuration tables), whichever way it goes: 1.0 -> 1.1 -> 1.2 -> 1.3 ->
# ... -> latest one release at a time (and at each release before the latest
# the objects of a fresh install of it), 1.0 -> latest in one command, 1.1 ->
# latest, 1.2 -> latest, 1.3 -> latest.  Every generator keeps its
# definition, its state and its text: time-based ids continue above those
# issued before, segment numbers continue without overlap, codecs give the
# same text.  ulid columns and their indexes made under 1.1 serve uuid values
# after the update to 1.2.  pg_dump of the database updated from 1.0, and of
# the one updated from 1.3, restored into a new database gives the same
# objects again, and their generators continue.
#
# The comparison is a sorted text dump of the extension's objects per
# database (extension_objects below); equal dumps are an empty diff.  It is
# checked to catch a stray change (a comment, an ACL, a volatility) on a
# database changed on purpose; run against a copy of the installation whose
# cosid--1.0--1.1.sql ends with a stray COMMENT ON FUNCTION cosid_next(text),
# this test fails with exactly that line as the difference.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

# ---- the extension's objects as text, one line per fact, sorted.
# Every member of the extension (pg_depend deptype 'e'), named by
# pg_describe_object with search_path = pg_catalog (so every name outside
# pg_catalog is schema-qualified), and for each member what defines it.
my $objects_sql = <<'SQL';
WITH ext AS (SELECT * FROM pg_extension WHERE extname = 'cosid'),
m AS (
	SELECT d.classid, d.objid, pg_describe_object(d.classid, d.objid, 0) AS obj
	FROM pg_depend d, ext
	WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
)
-- the extension itself
SELECT 'extension cosid | relocatable=' || extrelocatable || ' schema=' || extnamespace::regnamespace::text
	|| ' owner=' || pg_get_userbyid(extowner)
FROM ext
UNION ALL
SELECT 'extension cosid | config ' || c.rel::regclass::text || ' condition=' || coalesce(quote_literal(c.cond), 'NULL')
FROM ext, unnest(ext.extconfig, ext.extcondition) AS c(rel, cond)
UNION ALL
-- every member
SELECT 'member | ' || m.obj FROM m
UNION ALL
-- comments on members (columns: below)
SELECT m.obj || ' | comment ' || quote_literal(ds.description)
FROM m JOIN pg_description ds ON ds.classoid = m.classid AND ds.objoid = m.objid AND ds.objsubid = 0
UNION ALL
-- initial privileges that pg_dump compares ACLs with
SELECT pg_describe_object(ip.classoid, ip.objoid, ip.objsubid) || ' | init_privs ' || ip.privtype::text || ' ' || ip.initprivs::text
FROM m JOIN pg_init_privs ip ON ip.classoid = m.classid AND ip.objoid = m.objid
UNION ALL
-- functions, procedures, aggregates
SELECT m.obj || ' | ' || coalesce(x, 'NULL')
FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid,
LATERAL (VALUES
	('kind=' || p.prokind::text || ' owner=' || pg_get_userbyid(p.proowner) || ' acl=' || coalesce(p.proacl::text, 'default')),
	('volatile=' || p.provolatile::text || ' strict=' || p.proisstrict || ' parallel=' || p.proparallel::text
	 || ' leakproof=' || p.proleakproof || ' secdef=' || p.prosecdef || ' config=' || coalesce(p.proconfig::text, 'none')
	 || ' cost=' || p.procost || ' rows=' || p.prorows),
	('def ' || CASE WHEN p.prokind = 'a' THEN '(aggregate)' ELSE replace(pg_get_functiondef(p.oid), E'\n', '\n') END)
) v(x)
UNION ALL
SELECT m.obj || ' | aggregate kind=' || a.aggkind::text || ' direct=' || a.aggnumdirectargs
	|| ' sfunc=' || a.aggtransfn::regprocedure::text || ' final=' || a.aggfinalfn::regprocedure::text
	|| ' combine=' || a.aggcombinefn::regprocedure::text || ' serial=' || a.aggserialfn::regprocedure::text
	|| ' deserial=' || a.aggdeserialfn::regprocedure::text || ' msfunc=' || a.aggmtransfn::regprocedure::text
	|| ' minv=' || a.aggminvtransfn::regprocedure::text || ' mfinal=' || a.aggmfinalfn::regprocedure::text
	|| ' finalextra=' || a.aggfinalextra || ' mfinalextra=' || a.aggmfinalextra
	|| ' finalmodify=' || a.aggfinalmodify::text || ' mfinalmodify=' || a.aggmfinalmodify::text
	|| ' sortop=' || a.aggsortop::regoperator::text || ' stype=' || format_type(a.aggtranstype, NULL)
	|| ' sspace=' || a.aggtransspace || ' mstype=' || coalesce(format_type(nullif(a.aggmtranstype, 0), NULL), '-')
	|| ' initval=' || coalesce(quote_literal(a.agginitval), 'NULL') || ' minitval=' || coalesce(quote_literal(a.aggminitval), 'NULL')
FROM m JOIN pg_aggregate a ON m.classid = 'pg_proc'::regclass AND a.aggfnoid = m.objid
UNION ALL
-- relations: kind, options, ACL, columns, constraints, indexes, triggers, rules, policies
SELECT m.obj || ' | relkind=' || c.relkind::text || ' persistence=' || c.relpersistence::text
	|| ' owner=' || pg_get_userbyid(c.relowner) || ' acl=' || coalesce(c.relacl::text, 'default')
	|| ' options=' || coalesce(c.reloptions::text, 'none')
	|| ' rls=' || c.relrowsecurity || ' force_rls=' || c.relforcerowsecurity
	|| ' replident=' || c.relreplident::text
FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
UNION ALL
SELECT m.obj || ' | column ' || lpad(row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum)::text, 3, '0')
	|| ' ' || quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
	|| CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
	|| coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), '')
	|| CASE WHEN a.attidentity <> '' THEN ' identity=' || a.attidentity::text ELSE '' END
	|| CASE WHEN a.attgenerated <> '' THEN ' generated=' || a.attgenerated::text ELSE '' END
	|| coalesce(' collate=' || nullif(a.attcollation, 0)::regcollation::text, '')
	|| ' storage=' || a.attstorage::text
	-- (this server stamps every column with a pg_attver option of its own: left out)
	|| coalesce(' options=' || nullif(array(SELECT o FROM unnest(a.attoptions) o WHERE o NOT LIKE 'pg\_attver=%'), '{}')::text, '')
	|| ' acl=' || coalesce(a.attacl::text, 'default')
	|| coalesce(' comment=' || quote_literal(col_description(a.attrelid, a.attnum)), '')
FROM m JOIN pg_attribute a ON m.classid = 'pg_class'::regclass AND a.attrelid = m.objid
	LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
WHERE a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT m.obj || ' | constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid)
	|| CASE WHEN co.condeferrable THEN ' deferrable' ELSE '' END
	|| coalesce(' comment=' || quote_literal(obj_description(co.oid, 'pg_constraint')), '')
FROM m JOIN pg_constraint co ON m.classid = 'pg_class'::regclass AND co.conrelid = m.objid
UNION ALL
SELECT m.obj || ' | index ' || pg_get_indexdef(i.indexrelid)
	|| CASE WHEN i.indisclustered THEN ' clustered' ELSE '' END
	|| CASE WHEN i.indisreplident THEN ' replident' ELSE '' END
FROM m JOIN pg_index i ON m.classid = 'pg_class'::regclass AND i.indrelid = m.objid
UNION ALL
SELECT m.obj || ' | trigger ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
	|| coalesce(' comment=' || quote_literal(obj_description(t.oid, 'pg_trigger')), '')
FROM m JOIN pg_trigger t ON m.classid = 'pg_class'::regclass AND t.tgrelid = m.objid
WHERE NOT t.tgisinternal
UNION ALL
SELECT m.obj || ' | view ' || replace(pg_get_viewdef(m.objid, true), E'\n', '\n')
FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
WHERE c.relkind IN ('v', 'm')
UNION ALL
SELECT m.obj || ' | rule ' || replace(pg_get_ruledef(r.oid, true), E'\n', '\n') || ' enabled=' || r.ev_enabled::text
FROM m JOIN pg_rewrite r ON m.classid = 'pg_class'::regclass AND r.ev_class = m.objid
WHERE r.rulename <> '_RETURN'
UNION ALL
SELECT m.obj || ' | policy ' || quote_ident(po.polname) || ' cmd=' || po.polcmd::text || ' permissive=' || po.polpermissive
	|| ' roles=' || po.polroles::regrole[]::text
	|| ' using=' || coalesce(pg_get_expr(po.polqual, po.polrelid), 'none')
	|| ' check=' || coalesce(pg_get_expr(po.polwithcheck, po.polrelid), 'none')
FROM m JOIN pg_policy po ON m.classid = 'pg_class'::regclass AND po.polrelid = m.objid
UNION ALL
SELECT m.obj || ' | sequence type=' || format_type(s.seqtypid, NULL) || ' start=' || s.seqstart
	|| ' increment=' || s.seqincrement || ' max=' || s.seqmax || ' min=' || s.seqmin
	|| ' cache=' || s.seqcache || ' cycle=' || s.seqcycle
FROM m JOIN pg_sequence s ON m.classid = 'pg_class'::regclass AND s.seqrelid = m.objid
UNION ALL
-- types
SELECT m.obj || ' | type ' || t.typtype::text || ' len=' || t.typlen || ' byval=' || t.typbyval
	|| ' category=' || t.typcategory::text || ' preferred=' || t.typispreferred || ' delim=' || t.typdelim::text
	|| ' in=' || t.typinput::regprocedure::text || ' out=' || t.typoutput::regprocedure::text
	|| ' recv=' || t.typreceive::regprocedure::text || ' send=' || t.typsend::regprocedure::text
	|| ' modin=' || t.typmodin::regprocedure::text || ' modout=' || t.typmodout::regprocedure::text
	|| ' analyze=' || t.typanalyze::regprocedure::text || ' subscript=' || t.typsubscript::regprocedure::text
	|| ' align=' || t.typalign::text || ' storage=' || t.typstorage::text || ' notnull=' || t.typnotnull
	|| ' base=' || coalesce(format_type(nullif(t.typbasetype, 0), NULLIF(t.typtypmod, -1)), '-')
	|| ' elem=' || coalesce(format_type(nullif(t.typelem, 0), NULL), '-') || ' array=' || coalesce(format_type(nullif(t.typarray, 0), NULL), '-')
	|| ' collation=' || coalesce(nullif(t.typcollation, 0)::regcollation::text, '-')
	|| ' default=' || coalesce(quote_literal(t.typdefault), 'NULL')
	|| ' owner=' || pg_get_userbyid(t.typowner) || ' acl=' || coalesce(t.typacl::text, 'default')
FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
UNION ALL
SELECT m.obj || ' | type attribute ' || lpad(row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum)::text, 3, '0')
	|| ' ' || quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
	|| coalesce(' collate=' || nullif(a.attcollation, 0)::regcollation::text, '')
FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
	JOIN pg_attribute a ON a.attrelid = t.typrelid
WHERE a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT m.obj || ' | enum ' || lpad(row_number() OVER (PARTITION BY e.enumtypid ORDER BY e.enumsortorder)::text, 3, '0') || ' ' || quote_literal(e.enumlabel)
FROM m JOIN pg_enum e ON m.classid = 'pg_type'::regclass AND e.enumtypid = m.objid
UNION ALL
SELECT m.obj || ' | domain constraint ' || quote_ident(co.conname) || ' ' || pg_get_constraintdef(co.oid)
FROM m JOIN pg_constraint co ON m.classid = 'pg_type'::regclass AND co.contypid = m.objid
UNION ALL
-- operators
SELECT m.obj || ' | operator code=' || o.oprcode::regprocedure::text || ' kind=' || o.oprkind::text
	|| ' result=' || format_type(o.oprresult, NULL)
	|| ' commutator=' || o.oprcom::regoperator::text || ' negator=' || o.oprnegate::regoperator::text
	|| ' restrict=' || o.oprrest::regprocedure::text || ' join=' || o.oprjoin::regprocedure::text
	|| ' hashes=' || o.oprcanhash || ' merges=' || o.oprcanmerge || ' owner=' || pg_get_userbyid(o.oprowner)
FROM m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
UNION ALL
-- operator classes and families, with the families' members
SELECT m.obj || ' | opclass am=' || am.amname || ' type=' || format_type(oc.opcintype, NULL)
	|| ' default=' || oc.opcdefault || ' family=' || pg_describe_object('pg_opfamily'::regclass, oc.opcfamily, 0)
	|| ' keytype=' || coalesce(format_type(nullif(oc.opckeytype, 0), NULL), '-')
	|| ' owner=' || pg_get_userbyid(oc.opcowner)
FROM m JOIN pg_opclass oc ON m.classid = 'pg_opclass'::regclass AND oc.oid = m.objid
	JOIN pg_am am ON am.oid = oc.opcmethod
UNION ALL
SELECT m.obj || ' | opfamily am=' || am.amname || ' owner=' || pg_get_userbyid(f.opfowner)
FROM m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
	JOIN pg_am am ON am.oid = f.opfmethod
UNION ALL
SELECT pg_describe_object('pg_opfamily'::regclass, ao.amopfamily, 0) || ' | amop ' || ao.amopstrategy
	|| ' (' || format_type(ao.amoplefttype, NULL) || ', ' || format_type(ao.amoprighttype, NULL) || ') '
	|| ao.amopopr::regoperator::text || ' purpose=' || ao.amoppurpose::text
	|| ' sortfamily=' || coalesce(pg_describe_object('pg_opfamily'::regclass, nullif(ao.amopsortfamily, 0), 0), '-')
FROM m JOIN pg_amop ao ON m.classid = 'pg_opfamily'::regclass AND ao.amopfamily = m.objid
UNION ALL
SELECT pg_describe_object('pg_opfamily'::regclass, ap.amprocfamily, 0) || ' | amproc ' || ap.amprocnum
	|| ' (' || format_type(ap.amproclefttype, NULL) || ', ' || format_type(ap.amprocrighttype, NULL) || ') '
	|| ap.amproc::regprocedure::text
FROM m JOIN pg_amproc ap ON m.classid = 'pg_opfamily'::regclass AND ap.amprocfamily = m.objid
UNION ALL
-- casts
SELECT m.obj || ' | cast context=' || ca.castcontext::text || ' method=' || ca.castmethod::text
	|| ' func=' || coalesce(ca.castfunc::regprocedure::text, '-')
FROM m JOIN pg_cast ca ON m.classid = 'pg_cast'::regclass AND ca.oid = m.objid
UNION ALL
-- schemas
SELECT m.obj || ' | schema owner=' || pg_get_userbyid(n.nspowner) || ' acl=' || coalesce(n.nspacl::text, 'default')
FROM m JOIN pg_namespace n ON m.classid = 'pg_namespace'::regclass AND n.oid = m.objid
UNION ALL
-- anything else an extension can own
SELECT m.obj || ' | event trigger ' || ev.evtevent || ' ' || ev.evtfoid::regprocedure::text
	|| ' enabled=' || ev.evtenabled::text || ' tags=' || coalesce(ev.evttags::text, 'none')
FROM m JOIN pg_event_trigger ev ON m.classid = 'pg_event_trigger'::regclass AND ev.oid = m.objid
UNION ALL
SELECT m.obj || ' | language trusted=' || l.lanpltrusted || ' handler=' || l.lanplcallfoid::regprocedure::text
	|| ' acl=' || coalesce(l.lanacl::text, 'default')
FROM m JOIN pg_language l ON m.classid = 'pg_language'::regclass AND l.oid = m.objid
UNION ALL
SELECT m.obj || ' | unhandled class ' || m.classid::regclass::text
FROM m
WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass,
	'pg_opclass'::regclass, 'pg_opfamily'::regclass, 'pg_cast'::regclass, 'pg_namespace'::regclass,
	'pg_event_trigger'::regclass, 'pg_language'::regclass)
SQL

my $node = cosid_node('upgrade');
my $scratch = PostgreSQL::Test::Utils::tempdir;

# The sorted dump of a database's extension objects.
sub extension_objects
{
	my ($db) = @_;
	my $out = $node->safe_psql($db, "SET search_path = pg_catalog, pg_temp;\n$objects_sql");
	my @lines = split /\n/, $out;
	# a NULL line would be an empty one: something the dump did not describe
	die "extension_objects($db): an empty line in the dump" if grep { $_ eq '' } @lines;
	return join("\n", sort @lines) . "\n";
}

# A unified diff of two dumps, empty when they are equal.
my $ndiff = 0;
sub dump_diff
{
	my ($want, $want_name, $got, $got_name) = @_;
	return '' if $got eq $want;
	$ndiff++;
	my ($fw, $fg) = ("$scratch/want$ndiff.txt", "$scratch/got$ndiff.txt");
	PostgreSQL::Test::Utils::append_to_file($fw, $want);
	PostgreSQL::Test::Utils::append_to_file($fg, $got);
	my ($stdout, $stderr) =
	  run_command([ 'diff', '-U0', '--label', $want_name, '--label', $got_name, $fw, $fg ]);
	return $stdout ne '' ? $stdout : "the dumps differ (diff said: $stderr)";
}

# The rows cosid.generators showed in 1.0 (its 1.0 columns).
my $generators_q = q{
	SELECT name, strategy, owner, epoch, unit, time_bits, node_bits, seq_bits, seq_reset_threshold,
		   uncertainty_bits, total_bits, js_safe, sequence, config
	FROM cosid.generators ORDER BY name};
my $extversion_q = "SELECT extversion FROM pg_extension WHERE extname = 'cosid'";
my $default_version = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'cosid'");
# (1.1 when this was written; a later release's chain 1.0 -> ... -> latest
# must give the same objects as its install script just the same)
isnt($default_version, '1.0', "the default version of cosid is past 1.0 ($default_version)");

# ---- database "upgraded": cosid 1.0, generators of every strategy, ids
$node->safe_psql('postgres', 'CREATE DATABASE upgraded');
$node->safe_psql('upgraded', q{CREATE EXTENSION cosid VERSION '1.0'});
is($node->safe_psql('upgraded', $extversion_q), '1.0', 'upgraded: cosid 1.0 installed');

$node->safe_psql('upgraded', q{
	CREATE FUNCTION public.hexid(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION public.unhexid(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;

	SELECT cosid_define('snow', '{"strategy":"snowflake"}');
	SELECT cosid_define('order', '{"strategy":"snowflake","codec":[{"radix":{"radix":62}},
		{"date-prefix":{"pattern":"yyMMdd"}},{"prefix":"O"}]}');
	SELECT cosid_define('token', '{"strategy":"cosid80"}');
	SELECT cosid_define('inv', '{"strategy":"segment","step":10}');
	CREATE TABLE legacy (id bigserial PRIMARY KEY, phase text);
	INSERT INTO legacy (phase) SELECT 'serial' FROM generate_series(1, 25);
	SELECT cosid_define('legacy_g', '{"strategy":"segment","step":10,"adopt-sequence":"legacy_id_seq"}');
	ALTER TABLE legacy ALTER id SET DEFAULT cosid_next('legacy_g');
	SELECT cosid_define('hex', '{"strategy":"snowflake","codec":[{"custom":{"encode":"hexid(bigint)",
		"decode":"unhexid(text)"}},{"prefix":"h"}]}');
	SELECT cosid_define('daily', '{"strategy":"segment","step":10,"group":"day",
		"codec":[{"grouped":{"value":{"radix":{"radix":10,"width":6,"pad-start":true}}}}]}');

	CREATE TABLE snow_t (id bigint PRIMARY KEY DEFAULT cosid_next('snow'), phase text);
	CREATE TABLE order_t (id bigint PRIMARY KEY DEFAULT cosid_next('order'), phase text);
	CREATE TABLE token_t (t text PRIMARY KEY DEFAULT cosid_next_text('token'), phase text);
	CREATE TABLE inv (id bigint PRIMARY KEY DEFAULT cosid_next('inv'), phase text);
	CREATE TABLE hex_t (code text PRIMARY KEY DEFAULT cosid_next_text('hex'), phase text);
	CREATE TABLE daily (id bigint PRIMARY KEY, phase text);
});

# Issue ids in phase $phase: 50 rows per generator through column defaults,
# then 3 ids handed out but kept nowhere.  Returns the highest of those 3 per
# generator (cosid80: as decimal text; periodic segments on 2031-05-06);
# highest() adds what the tables hold.
my @gens = qw(snow order token inv legacy_g hex daily);
sub issue
{
	my ($db, $phase) = @_;
	$node->safe_psql($db, qq{
		INSERT INTO snow_t (phase) SELECT '$phase' FROM generate_series(1, 50);
		INSERT INTO order_t (phase) SELECT '$phase' FROM generate_series(1, 50);
		INSERT INTO token_t (phase) SELECT '$phase' FROM generate_series(1, 50);
		INSERT INTO inv (phase) SELECT '$phase' FROM generate_series(1, 50);
		INSERT INTO legacy (phase) SELECT '$phase' FROM generate_series(1, 50);
		INSERT INTO hex_t (phase) SELECT '$phase' FROM generate_series(1, 50);
		SET cosid.debug_now = '2031-05-06 12:00+00';
		INSERT INTO daily SELECT cosid_next('daily'), '$phase' FROM generate_series(1, 50);
	});
	my %max;
	for my $g (@gens)
	{
		my $expr = $g eq 'token' ? "cosid_next_text('token')::numeric" : "cosid_next('$g')";
		$max{$g} = $node->safe_psql($db, qq{
			SET cosid.debug_now = '2031-05-06 12:00+00';
			SELECT max(x) FROM (SELECT $expr AS x FROM generate_series(1, 3)) s});
	}
	return \%max;
}

# The highest id of each generator in its table or handed out.
sub highest
{
	my ($db, $handed_out) = @_;
	my %in_table = (
		snow => 'SELECT max(id) FROM snow_t',
		order => 'SELECT max(id) FROM order_t',
		token => 'SELECT max(t::numeric) FROM token_t',
		inv => 'SELECT max(id) FROM inv',
		legacy_g => 'SELECT max(id) FROM legacy',
		hex => q{SELECT max(cosid_decode('hex', code)) FROM hex_t},
		daily => 'SELECT max(id) FROM daily');
	my %max;
	for my $g (@gens)
	{
		my $t = $node->safe_psql($db, $in_table{$g});
		$max{$g} = big_max($t, $handed_out->{$g});
	}
	return \%max;
}

# The larger of two non-negative decimal integers of any length.
sub big_max
{
	my ($a, $b) = @_;
	return $b if $a eq '';
	return $a if $b eq '';
	return (length($a) <=> length($b) || $a cmp $b) >= 0 ? $a : $b;
}

my $max10 = highest('upgraded', issue('upgraded', '1.0'));
note('highest under 1.0: ' . join(', ', map { "$_ $max10->{$_}" } @gens));
is($node->safe_psql('upgraded', q{SELECT count(*), min(id), max(id) FROM legacy WHERE phase = '1.0'}),
	'50|26|75', 'upgraded: the adopted bigserial continued under 1.0 (26..75)');

# Codecs: the text of the ids under 1.0, and back.
my $codec_q = q{
	SELECT 'order', id, cosid_encode('order', id), cosid_decode('order', cosid_encode('order', id))
	FROM order_t WHERE phase = '1.0'
	UNION ALL
	SELECT 'hex', cosid_decode('hex', code), code, cosid_decode('hex', cosid_encode('hex', cosid_decode('hex', code)))
	FROM hex_t WHERE phase = '1.0'
	UNION ALL
	SELECT 'daily', id, cosid_encode('daily', id), cosid_decode('daily', cosid_encode('daily', id))
	FROM daily WHERE phase = '1.0'
	UNION ALL
	SELECT 'token', NULL, t, (cosid_unpack('token', t)).seq FROM token_t WHERE phase = '1.0'
	UNION ALL
	SELECT 'inline', id, cosid_encode(id, '[{"radix":{"radix":36,"pad-start":true}},{"suffix":"!"}]'),
		   cosid_decode(cosid_encode(id, '[{"radix":{"radix":36,"pad-start":true}},{"suffix":"!"}]'),
						'[{"radix":{"radix":36,"pad-start":true}},{"suffix":"!"}]'::jsonb)
	FROM snow_t WHERE phase = '1.0'
	UNION ALL
	SELECT 'inline custom', id, cosid_encode(id, '[{"custom":{"encode":"public.hexid(bigint)","decode":"public.unhexid(text)"}}]'),
		   cosid_decode(cosid_encode(id, '[{"custom":{"encode":"public.hexid(bigint)","decode":"public.unhexid(text)"}}]'),
						'[{"custom":{"encode":"public.hexid(bigint)","decode":"public.unhexid(text)"}}]'::jsonb)
	FROM snow_t WHERE phase = '1.0'
	ORDER BY 1, 3};
my $codec10 = $node->safe_psql('upgraded', $codec_q);
# the same under 1.3's names: the inline-codec forms and the text form of
# cosid_unpack have names of their own (drivers' untyped parameters)
(my $codec_q13 = $codec_q) =~ s/cosid_decode\(cosid_encode\(id, /cosid_decode_with(cosid_encode_with(id, /g;
$codec_q13 =~ s/cosid_encode\(id, /cosid_encode_with(id, /g;
$codec_q13 =~ s/cosid_unpack\('token', t\)/cosid_unpack_text('token', t)/g;
is( $node->safe_psql('upgraded', qq{SELECT count(*), count(*) FILTER (WHERE id = back)
		FROM ($codec_q) c(g, id, txt, back) WHERE id IS NOT NULL}),
	'250|250', 'upgraded: under 1.0 every id decodes back from its text');
my $generators10 = $node->safe_psql('upgraded', $generators_q);
is($node->safe_psql('upgraded', 'SELECT count(*) FROM cosid.generator'), scalar(@gens),
	'upgraded: every generator defined under 1.0');

# A lease taken and renewed through the 1.0 lease functions.
is( $node->safe_psql('upgraded', q{
		SELECT slot, previous_end FROM cosid.lease_acquire('upgrade', 'server-a', 4, '1 hour')}),
	'0|0', 'upgraded: 1.0 lease_acquire gives server-a slot 0');
is( $node->safe_psql('upgraded', q{
		SELECT cosid.lease_renew('upgrade', 0, 'server-a', 1893456000000, '1 hour') > now()}),
	't', 'upgraded: 1.0 lease_renew records a window end');
my $lease_q = 'SELECT namespace, slot, instance, window_end, expires_at, acquired_at FROM cosid.lease ORDER BY 1, 2';
my $lease10 = $node->safe_psql('upgraded', $lease_q);

# 1.0 kept a custom codec's functions as written (unqualified); this build
# qualifies them when defining, so put back what 1.0 stored.  The update
# must resolve them: 1.1 looks them up with search_path = pg_catalog only.
$node->safe_psql('upgraded', q{
	UPDATE cosid.generator
	SET config = jsonb_set(jsonb_set(config, '{codec,0,custom,encode}', '"hexid(bigint)"'),
						   '{codec,0,custom,decode}', '"unhexid(text)"')
	WHERE name = 'hex'});
is($node->safe_psql('upgraded', q{SELECT config #>> '{codec,0,custom,encode}' FROM cosid.generator WHERE name = 'hex'}),
	'hexid(bigint)', 'upgraded: the custom codec is stored unqualified, as 1.0 stored it');

# ---- ALTER EXTENSION cosid UPDATE, one release at a time: to 1.1 ...
$node->safe_psql('upgraded', q{ALTER EXTENSION cosid UPDATE TO '1.1'});
is($node->safe_psql('upgraded', $extversion_q), '1.1', 'upgraded: ALTER EXTENSION cosid UPDATE TO 1.1');
is( $node->safe_psql('upgraded',
		q{SELECT config #>> '{codec,0,custom,encode}', config #>> '{codec,0,custom,decode}' FROM cosid.generator WHERE name = 'hex'}),
	'public.hexid(bigint)|public.unhexid(text)',
	'upgraded: the update to 1.1 stored the custom codec functions schema-qualified');

# ... which gives the objects of a fresh 1.1 (database "fresh11")
$node->safe_psql('postgres', 'CREATE DATABASE fresh11');
$node->safe_psql('fresh11', q{CREATE EXTENSION cosid VERSION '1.1'});
is($node->safe_psql('fresh11', $extversion_q), '1.1', 'fresh11: cosid 1.1 installed');
is(dump_diff(extension_objects('fresh11'), 'fresh11', extension_objects('upgraded'), 'upgraded to 1.1'), '',
	'upgraded to 1.1 and a fresh 1.1 have the same extension objects (the diff is empty)');

# ... then on, one release at a time, to the default version: at each
# release before it, the objects of a fresh install of that release
# (databases "fresh12", "fresh13", ...; the default version is compared
# with database "fresh" below)
my @releases = sort { my @x = split /\./, $a; my @y = split /\./, $b; $x[0] <=> $y[0] || $x[1] <=> $y[1] }
  split /\n/, $node->safe_psql('postgres',
	"SELECT version FROM pg_available_extension_versions WHERE name = 'cosid'");
is($releases[-1], $default_version, "the last release is the default version ($default_version)");
my @chain = grep { my ($maj, $min) = split /\./; $maj > 1 || $min > 1 } @releases;
ok(scalar(@chain) >= 3 && $chain[0] eq '1.2',
	'the chain goes on from 1.1 through every later release (' . join(' -> ', @chain) . ')');
for my $v (@chain)
{
	my ($ret, $out, $err) = $node->psql('upgraded', "ALTER EXTENSION cosid UPDATE TO '$v'");
	is($ret, 0, "upgraded: ALTER EXTENSION cosid UPDATE TO '$v'") or diag($err);
	is($node->safe_psql('upgraded', $extversion_q), $v, "upgraded: at $v");
	next if $v eq $default_version;
	(my $fresh_db = "fresh$v") =~ s/\.//;
	$node->safe_psql('postgres', "CREATE DATABASE $fresh_db");
	$node->safe_psql($fresh_db, "CREATE EXTENSION cosid VERSION '$v'");
	is(dump_diff(extension_objects($fresh_db), $fresh_db, extension_objects('upgraded'), "upgraded to $v"), '',
		"upgraded to $v and a fresh $v have the same extension objects (the diff is empty)");
}
is($chain[-1], $default_version, "upgraded: the chain reaches $default_version");

# ---- database "fresh": CREATE EXTENSION cosid
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION cosid');
is($node->safe_psql('fresh', $extversion_q), $default_version, "fresh: cosid $default_version installed");

my $fresh_objects = extension_objects('fresh');
my $nlines = () = $fresh_objects =~ /\n/g;
note("fresh: the dump of the extension's objects has $nlines lines");
for my $member (
	'function public.cosid_next(text)', 'function cosid.lease_acquire(text,text,integer,interval)',
	'table cosid.generator', 'table cosid.lease', 'view cosid.generators', 'type public.ulid',
	'operator class public.ulid_ops for access method btree', 'cast from public.ulid to uuid',
	'schema cosid',
	# 1.2
	'operator public.=(public.ulid,uuid)', 'operator public.<(uuid,public.ulid)',
	'operator public.=(public.ulid,text)', 'function public.ulid_uuid_support(internal)',
	'cast from character varying to public.ulid')
{
	like($fresh_objects, qr/^member \| \Q$member\E$/m, "the dump lists the member $member");
}
like($fresh_objects, qr/^function public\.cosid_next\(text\) \| def CREATE OR REPLACE FUNCTION/m,
	'the dump holds function definitions');
like($fresh_objects, qr/^table cosid\.generator \| constraint generator_pkey PRIMARY KEY \(name\)$/m,
	'the dump holds table constraints');

like($fresh_objects, qr/^operator family public\.ulid_ops for access method btree \| amop 3 \(public\.ulid, uuid\) public\.=\(public\.ulid,uuid\) purpose=s /m,
	'the dump holds operator family members');

my $upgraded_objects = extension_objects('upgraded');
is(dump_diff($fresh_objects, 'fresh', $upgraded_objects, 'upgraded'), '',
	'upgraded (1.0 -> 1.1 -> ... -> latest, one release at a time) and fresh have the same extension objects (the diff is empty)');

# 1.0 -> latest in one command (database "chain10")
$node->safe_psql('postgres', 'CREATE DATABASE chain10');
$node->safe_psql('chain10', q{CREATE EXTENSION cosid VERSION '1.0'});
$node->safe_psql('chain10', 'ALTER EXTENSION cosid UPDATE');
is($node->safe_psql('chain10', $extversion_q), $default_version, "chain10: 1.0 updated to $default_version at once");
is(dump_diff($fresh_objects, 'fresh', extension_objects('chain10'), 'chain10'), '',
	'chain10 (1.0 -> latest in one ALTER EXTENSION) and fresh have the same extension objects');

# The comparison sees a stray change: a database like fresh with a comment,
# an ACL and a volatility changed differs from fresh in exactly those lines.
$node->safe_psql('postgres', 'CREATE DATABASE tampered');
$node->safe_psql('tampered', q{
	CREATE EXTENSION cosid;
	COMMENT ON FUNCTION cosid_next(text) IS 'stray';
	REVOKE EXECUTE ON FUNCTION cosid_encode(text, bigint) FROM PUBLIC;
	ALTER FUNCTION cosid_is_js_safe(bigint) STABLE;
});
my $tampered_diff = dump_diff($fresh_objects, 'fresh', extension_objects('tampered'), 'tampered');
my @changed = sort grep { /^[-+](?![-+])/ } split /\n/, $tampered_diff;
is( join("\n", map { s/ \| .*//r } @changed),
	join("\n", sort
		'+function public.cosid_encode(text,bigint)', '-function public.cosid_encode(text,bigint)',
		'+function public.cosid_is_js_safe(bigint)', '+function public.cosid_is_js_safe(bigint)',
		'-function public.cosid_is_js_safe(bigint)', '-function public.cosid_is_js_safe(bigint)',
		'+function public.cosid_next(text)', '-function public.cosid_next(text)'),
	'the comparison catches a stray comment, ACL and volatility, and nothing else')
  or diag($tampered_diff);

# ---- database "from11": made with 1.1 (generators, a ulid and a uuid column
# with indexes and rows), updated to the latest release
$node->safe_psql('postgres', 'CREATE DATABASE from11');
$node->safe_psql('from11', q{
	CREATE EXTENSION cosid VERSION '1.1';
	SELECT cosid_define('snow11', '{"strategy":"snowflake"}');
	SELECT cosid_define('seg11', '{"strategy":"segment","step":10}');
	CREATE TABLE events (id ulid PRIMARY KEY DEFAULT gen_ulid_monotonic(),
						 n bigint DEFAULT cosid_next('snow11'), s bigint DEFAULT cosid_next('seg11'));
	INSERT INTO events (id) SELECT gen_ulid_monotonic() FROM generate_series(1, 2000);
	CREATE TABLE legacy_uuid (id uuid PRIMARY KEY, k int);
	INSERT INTO legacy_uuid SELECT id::uuid, row_number() OVER (ORDER BY id) FROM events;
	ANALYZE events, legacy_uuid;
});
is($node->safe_psql('from11', $extversion_q), '1.1', 'from11: cosid 1.1 installed');
my ($state11) = psql_error($node, 'from11',
	q{SELECT count(*) FROM events e JOIN legacy_uuid l ON e.id = l.id});
is($state11, '42883', 'from11: under 1.1 a ulid does not compare with a uuid (42883)');
my ($max_n11, $max_s11, $max_id11) = split /\|/, $node->safe_psql('from11', 'SELECT max(n), max(s), max(id) FROM events');
$node->safe_psql('from11', 'ALTER EXTENSION cosid UPDATE');
is($node->safe_psql('from11', $extversion_q), $default_version, "from11: updated to $default_version");
is(dump_diff($fresh_objects, 'fresh', extension_objects('from11'), 'from11'), '',
	'from11 (1.1 -> latest) and fresh have the same extension objects (the diff is empty)');

# the index built under 1.1 serves a uuid value, on either side, and a
# ulid value is served by the index of the uuid column
my $pick = $node->safe_psql('from11', q{SELECT id::uuid FROM events ORDER BY id OFFSET 1234 LIMIT 1});
my $plans = $node->safe_psql('from11', qq{
	SET plan_cache_mode = force_generic_plan;
	SET enable_seqscan = off;
	SET enable_bitmapscan = off;
	PREPARE by_uuid(uuid) AS SELECT count(*) FROM events WHERE id = \$1;
	PREPARE by_uuid_commuted(uuid) AS SELECT count(*) FROM events WHERE \$1 = id;
	PREPARE by_ulid(ulid) AS SELECT k FROM legacy_uuid WHERE id = \$1;
	EXPLAIN (COSTS OFF) EXECUTE by_uuid('$pick');
	EXPLAIN (COSTS OFF) EXECUTE by_uuid_commuted('$pick');
	EXPLAIN (COSTS OFF) EXECUTE by_ulid('$pick');
	EXECUTE by_uuid('$pick');
	EXECUTE by_uuid_commuted('$pick');
	EXECUTE by_ulid('$pick');
});
my @uses = ($plans =~ /(Index Only Scan using events_pkey on events|Index Scan using events_pkey on events|Index Scan using legacy_uuid_pkey on legacy_uuid)\n\s+Index Cond: \(id = /g);
is(scalar(@uses), 3, 'from11: the ulid index made under 1.1 serves = uuid on either side, the uuid index serves = ulid')
  or diag($plans);
like($plans, qr/\n1\n1\n1235$/, 'from11: ... and they find the row');
is($node->safe_psql('from11', q{SELECT count(*) FROM events e JOIN legacy_uuid l ON e.id = l.id}),
	'2000', 'from11: after the update a ulid column joins a uuid column');
is( $node->safe_psql('from11', qq{
		INSERT INTO events (id) SELECT gen_ulid_monotonic() FROM generate_series(1, 100);
		SELECT count(*) FILTER (WHERE id > '$max_id11'),
			   min(n) FILTER (WHERE id > '$max_id11') > $max_n11 AND min(s) FILTER (WHERE id > '$max_id11') > $max_s11,
			   count(*) = count(DISTINCT n) AND count(*) = count(DISTINCT s)
		FROM events}),
	'100|t|t', 'from11: the generators continue above every id issued under 1.1, none twice');

# ---- database "from12": made with 1.2 (a segment generator dropped and
# defined again, as 1.2 did it), updated to the latest release
$node->safe_psql('postgres', 'CREATE DATABASE from12');
$node->safe_psql('from12', q{
	CREATE EXTENSION cosid VERSION '1.2';
	SELECT cosid_define('seg12', '{"strategy":"segment","step":10}');
	SELECT cosid_define('snow12', '{"strategy":"snowflake"}');
	CREATE TABLE t12 (s bigint DEFAULT cosid_next('seg12'), n bigint DEFAULT cosid_next('snow12'));
	INSERT INTO t12 SELECT FROM generate_series(1, 55);
});
is($node->safe_psql('from12', $extversion_q), '1.2', 'from12: cosid 1.2 installed');
# custom codecs as 1.2 kept them (names), one with a function another role
# owns (1.2 ran it as the generator's owner; the owner is changed after the
# definition, as this library refuses such a definition)
$node->safe_psql('from12', q{
	CREATE ROLE from12_fn_owner;
	CREATE FUNCTION public.hex12(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION public.unhex12(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
	CREATE FUNCTION public.other12(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_hex($1) $$;
	SELECT cosid_define('hex12', '{"codec": [{"custom": {"encode": "hex12(bigint)", "decode": "unhex12(text)"}}]}');
	SELECT cosid_define('other12', '{"codec": [{"custom": {"encode": "other12(bigint)", "decode": "unhex12(text)"}}]}');
	ALTER FUNCTION public.other12(bigint) OWNER TO from12_fn_owner;
});
is($node->safe_psql('from12', q{SELECT cosid_encode('hex12', 255)}), 'ff',
	'from12: a custom codec under 1.2 (this library finds its functions by name until the update)');
my ($state12) = psql_error($node, 'from12', q{SELECT cosid_encode('other12', 255)});
is($state12, '42501', 'from12: ... under the owner rule: one whose function another role owns is refused (42501)');
is($node->safe_psql('from12', q{SELECT pg_get_function_identity_arguments('cosid_drop'::regproc)}),
	'name text, if_exists boolean', 'from12: 1.2 has the two-argument cosid_drop');
# a view of the user's on the inline-codec form, and one on the text form of
# cosid_unpack: 1.3 renames them (cosid_encode_with, cosid_unpack_text), and
# the views go on working
$node->safe_psql('from12', q{
	CREATE VIEW v12 AS SELECT cosid_encode(255::bigint, '[{"radix":{"radix":16}}]'::jsonb) AS hex,
		cosid_decode('FF', '[{"radix":{"radix":16}}]'::jsonb) AS n;
});
my ($max_s12, $max_n12) = split /\|/, $node->safe_psql('from12', 'SELECT max(s), max(n) FROM t12');
my ($upd_ret, $upd_out, $upd_err) = $node->psql('from12', 'ALTER EXTENSION cosid UPDATE');
is($upd_ret, 0, 'from12: ALTER EXTENSION cosid UPDATE') or diag($upd_err);
is($node->safe_psql('from12', $extversion_q), $default_version, "from12: updated to $default_version");
is($node->safe_psql('from12', q{SELECT hex, n FROM v12}), 'FF|255',
	'from12: a view on the renamed inline-codec functions works after the update');
like($node->safe_psql('from12', q{SELECT pg_get_viewdef('v12')}), qr/cosid_encode_with\(.*cosid_decode_with\(/s,
	'from12: ... and names them cosid_encode_with and cosid_decode_with');
my ($state_old) = psql_error($node, 'from12',
	q{SELECT cosid_encode(255::bigint, '[{"radix":{"radix":16}}]'::jsonb)});
is($state_old, '42883', 'from12: the old inline-codec name with typed arguments is gone (42883)');
is( $node->safe_psql('from12', q{
		SELECT name, codec_functions = ARRAY[(name || '(bigint)')::regprocedure, 'unhex12(text)'::regprocedure]::oid[]
		FROM cosid.generator WHERE codec_functions IS NOT NULL ORDER BY name}),
	"hex12|t\nother12|t", 'from12: the update bound the custom codec functions by OID');
like($upd_err, qr/WARNING:  function other12\(bigint\) of the custom codec of cosid generator "other12" is owned by role from12_fn_owner/,
	'from12: the update warned about the function another role owns');
is($node->safe_psql('from12', q{SELECT cosid_encode('hex12', 255)}), 'ff', 'from12: hex12 encodes after the update');
($state12) = psql_error($node, 'from12', q{SELECT cosid_encode('other12', 255)});
is($state12, '42501', 'from12: other12 is still refused (42501)');
is(dump_diff($fresh_objects, 'fresh', extension_objects('from12'), 'from12'), '',
	'from12 (1.2 -> latest) and fresh have the same extension objects (the diff is empty)');
is( $node->safe_psql('from12', qq{
		INSERT INTO t12 SELECT FROM generate_series(1, 20);
		SELECT min(s) FILTER (WHERE s > $max_s12) IS NOT NULL AND count(*) = count(DISTINCT s),
			   count(*) FILTER (WHERE n > $max_n12), count(*) = count(DISTINCT n)
		FROM t12}),
	't|20|t', 'from12: the generators continue above every id issued under 1.2, none twice');
# 1.2's calls of cosid_drop still work, and the name keeps its history now
is( $node->safe_psql('from12', qq{
		SELECT cosid_drop('seg12', false) \\gset
		SELECT cosid_define('seg12', '{"strategy":"segment","step":10}') \\gset
		SELECT cosid_next('seg12') > (SELECT max(s) FROM t12)}),
	't', 'from12: after the update a segment generator dropped and defined again continues above its numbers');

# ---- database "from13": made with 1.3 (generators of every strategy, a
# custom codec bound by OID, a segment generator dropped and defined again
# with its history, an adopted sequence), updated to the latest release,
# then dumped and restored into database "restored13"
$node->safe_psql('postgres', 'CREATE DATABASE from13');
$node->safe_psql('from13', q{
	CREATE EXTENSION cosid VERSION '1.3';
	CREATE FUNCTION public.hex13(bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT to_hex($1) $$;
	CREATE FUNCTION public.unhex13(text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
		AS $$ SELECT ('x' || lpad($1, 16, '0'))::bit(64)::bigint $$;
	SELECT cosid_define('snow13', '{"strategy":"snowflake"}');
	SELECT cosid_define('hex13', '{"strategy":"snowflake","codec":[{"custom":{"encode":"public.hex13(bigint)",
		"decode":"public.unhex13(text)"}},{"prefix":"h"}]}');
	SELECT cosid_define('tok13', '{"strategy":"cosid80"}');
	SELECT cosid_define('seg13', '{"strategy":"segment","step":10}');
	CREATE TABLE legacy13 (id bigserial PRIMARY KEY, k int);
	INSERT INTO legacy13 (k) SELECT 0 FROM generate_series(1, 25);
	SELECT cosid_define('adopt13', '{"strategy":"segment","step":10,"adopt-sequence":"legacy13_id_seq"}');
	ALTER TABLE legacy13 ALTER id SET DEFAULT cosid_next('adopt13');
	CREATE TABLE t13 (snow bigint DEFAULT cosid_next('snow13'), hex text DEFAULT cosid_next_text('hex13'),
					  tok text DEFAULT cosid_next_text('tok13'), seg bigint DEFAULT cosid_next('seg13'));
	INSERT INTO t13 SELECT FROM generate_series(1, 30);
});
# the history of a name (1.3): seg13 dropped and defined again continues
# above the numbers it handed out
$node->safe_psql('from13', q{SELECT cosid_drop('seg13')});
$node->safe_psql('from13', q{
	SELECT cosid_define('seg13', '{"strategy":"segment","step":10}');
	INSERT INTO t13 SELECT FROM generate_series(1, 25);
	INSERT INTO legacy13 (k) SELECT 13 FROM generate_series(1, 55);
});
is($node->safe_psql('from13', $extversion_q), '1.3', 'from13: cosid 1.3 installed');
is($node->safe_psql('from13', q{SELECT count(*) = count(DISTINCT seg) FROM t13}), 't',
	'from13: under 1.3 seg13 defined again after its drop hands out no number twice');
# what the update must keep: the catalog's rows, the names' history and the
# codecs' text; and the highest id of each generator, in its table or handed
# out (3 more each, kept nowhere)
my $catalog13_q = q{
	SELECT name, strategy, config, epoch_ms, unit_ms, time_bits, node_bits, seq_bits, seq_reset_threshold,
		   sequence, owns_sequence, owner, codec_functions::regprocedure[], identity, counter_database
	FROM cosid.generator ORDER BY name};
my $history13_q = 'SELECT name, last_number, lease_store, identity FROM cosid.generator_history ORDER BY name';
my $codec13_q = q{SELECT hex, cosid_decode('hex13', hex), cosid_encode('hex13', cosid_decode('hex13', hex)) FROM t13 ORDER BY 1};
my $catalog13 = $node->safe_psql('from13', $catalog13_q);
my $history13 = $node->safe_psql('from13', $history13_q);
my $codec13 = $node->safe_psql('from13', $codec13_q);
like($catalog13, qr/^hex13\|.*\|\{(public\.)?hex13\(bigint\),(public\.)?unhex13\(text\)\}\|/m,
	'from13: under 1.3 the custom codec functions are bound by OID');
like($history13, qr/^seg13\|\d+\|f\|$/m, 'from13: seg13 has a history');
my $max13_q = q{
	SELECT max(snow), max(cosid_decode('hex13', hex)), max(tok::numeric), max(seg), (SELECT max(id) FROM legacy13)
	FROM t13};
sub max13
{
	my ($db) = @_;
	my @max = split /\|/, $node->safe_psql($db, $max13_q);
	my @handed = split /\|/, $node->safe_psql($db, q{
		SELECT max(cosid_next('snow13')), max(cosid_decode('hex13', cosid_next_text('hex13'))),
			   max(cosid_next_text('tok13')::numeric), max(cosid_next('seg13')), max(cosid_next('adopt13'))
		FROM generate_series(1, 3)});
	return [ map { big_max($max[$_], $handed[$_]) } 0 .. 4 ];
}
# 50 new ids of each generator (legacy13's rows with k = $k), each above $max;
# and no id twice
my $after13_q = q{
	SELECT count(*), min(snow) > %s, min(cosid_decode('hex13', hex)) > %s, min(tok::numeric) > %s, min(seg) > %s,
		   (SELECT min(id) > %s AND count(*) = 50 FROM legacy13 WHERE k = %d)
	FROM t13 WHERE snow > %s};
sub continue13
{
	my ($db, $max, $k) = @_;
	$node->safe_psql($db, qq{
		INSERT INTO t13 SELECT FROM generate_series(1, 50);
		INSERT INTO legacy13 (k) SELECT $k FROM generate_series(1, 50)});
	return $node->safe_psql($db, sprintf($after13_q, @$max, $k, $max->[0])) . '|'
	  . $node->safe_psql($db, q{
		SELECT count(*) = count(DISTINCT snow) AND count(*) = count(DISTINCT hex) AND count(*) = count(DISTINCT tok)
			   AND count(*) = count(DISTINCT seg) AND (SELECT count(*) = count(DISTINCT id) FROM legacy13)
		FROM t13});
}
my $max13 = max13('from13');
my ($upd13_ret, $upd13_out, $upd13_err) = $node->psql('from13', 'ALTER EXTENSION cosid UPDATE');
is($upd13_ret, 0, 'from13: ALTER EXTENSION cosid UPDATE') or diag($upd13_err);
is($upd13_err, '', 'from13: ... with no warning');
is($node->safe_psql('from13', $extversion_q), $default_version, "from13: updated to $default_version");
is(dump_diff($fresh_objects, 'fresh', extension_objects('from13'), 'from13'), '',
	'from13 (1.3 -> latest) and fresh have the same extension objects (the diff is empty)');
is($node->safe_psql('from13', $catalog13_q), $catalog13,
	'from13: the update keeps every generator\'s row (definition, layout, sequence, codec functions, identity)');
is($node->safe_psql('from13', $history13_q), $history13, 'from13: ... and the names\' history');
is($node->safe_psql('from13', $codec13_q), $codec13, 'from13: the custom codec gives the same text, and decodes it back');
is(continue13('from13', $max13, 14), '50|t|t|t|t|t|t',
	'from13: every generator continues above every id issued under 1.3 (snowflake, custom codec, cosid80, '
	  . 'segment with history, adopted sequence), none twice');

# pg_dump of the updated database, restored into a new one
my $max13_dump = max13('from13');
my $dump13 = "$scratch/from13.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump13, '-d', 'from13' ], 'from13: pg_dump -Fc of the updated database');
$node->safe_psql('postgres', 'CREATE DATABASE restored13');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'restored13', $dump13 ], 'from13: pg_restore into restored13');
is($node->safe_psql('restored13', $extversion_q), $default_version, "restored13: cosid $default_version");
is(dump_diff($fresh_objects, 'fresh', extension_objects('restored13'), 'restored13'), '',
	'restored13 and fresh have the same extension objects (the diff is empty)');
is($node->safe_psql('restored13', $catalog13_q), $node->safe_psql('from13', $catalog13_q),
	'restored13: the generators\' rows are restored (the custom codec bound to the restored functions)');
is($node->safe_psql('restored13', $codec13_q), $node->safe_psql('from13', $codec13_q),
	'restored13: the custom codec gives the same text as in from13');
is($node->safe_psql('restored13', $history13_q), $history13, 'restored13: ... and the names\' history');
is(continue13('restored13', $max13_dump, 15), '50|t|t|t|t|t|t',
	'restored13: every generator continues above every id of the updated database, none twice');

# ---- after the update: the generators and their ids continue
is($node->safe_psql('upgraded', $generators_q), $generators10,
	'upgraded: cosid.generators lists the same rows as under 1.0');
is($node->safe_psql('upgraded', $codec_q13), $codec10,
	'upgraded: every codec gives the same text as under 1.0, and decodes it back the same');
is( $node->safe_psql('upgraded', q{SELECT codec_functions = ARRAY['public.hexid(bigint)'::regprocedure,
		'public.unhexid(text)'::regprocedure]::oid[] FROM cosid.generator WHERE name = 'hex'}),
	't', 'upgraded: the update bound the custom codec functions of hex by OID');

my %next;
for my $g (@gens)
{
	my $next = $next{$g} = $g eq 'token'
	  ? $node->safe_psql('upgraded', "SELECT cosid_next_text('token')")
	  : $node->safe_psql('upgraded', "SET cosid.debug_now = '2031-05-06 13:00+00'; SELECT cosid_next('$g')");
	ok(big_max($next, $max10->{$g}) eq $next && $next ne $max10->{$g},
		"upgraded: $g continues above the ids issued under 1.0 ($next > $max10->{$g})");
}
my $handed_updated = issue('upgraded', 'updated');
for my $t ([ 'inv', 'id', 'inv' ], [ 'legacy', 'id', 'legacy_g' ], [ 'daily', 'id', 'daily' ],
	[ 'snow_t', 'id', 'snow' ], [ 'order_t', 'id', 'order' ])
{
	my ($table, $col, $g) = @$t;
	is( $node->safe_psql('upgraded', qq{
			SELECT count(*) FILTER (WHERE phase = 'updated'), count(*) = count(DISTINCT $col),
				   min($col) FILTER (WHERE phase = 'updated') > $max10->{$g}
			FROM $table}),
		'50|t|t', "upgraded: $table: 50 rows after the update, all above every id of 1.0, none twice");
}
is( $node->safe_psql('upgraded', qq{
		SELECT count(*) FILTER (WHERE phase = 'updated'), count(*) = count(DISTINCT t),
			   min(t::numeric) FILTER (WHERE phase = 'updated') > $max10->{token}
		FROM token_t}),
	'50|t|t', 'upgraded: token_t (cosid80): 50 rows after the update, all above 1.0\'s');
is( $node->safe_psql('upgraded', qq{
		SELECT count(*) FILTER (WHERE phase = 'updated'), count(*) = count(DISTINCT cosid_decode('hex', code)),
			   min(cosid_decode('hex', code)) FILTER (WHERE phase = 'updated') > $max10->{hex}
		FROM hex_t}),
	'50|t|t', 'upgraded: hex_t (custom codec): 50 rows after the update, all above 1.0\'s');
is($next{legacy_g}, $max10->{legacy_g} + 1, 'upgraded: the adopted sequence continues with no gap after the update');
is($node->safe_psql('upgraded', q{SELECT min(id) FROM legacy WHERE phase = 'updated'}), $next{legacy_g} + 1,
	'upgraded: ... and so does the adopted table\'s DEFAULT');
is($node->safe_psql('upgraded', q{SELECT substr(min(id)::text, 1, 8) FROM daily WHERE phase = 'updated'}),
	'20310506', 'upgraded: the periodic segment stays in its period');

# The lease taken under 1.0 is still held: its holder takes it again (its
# window end is kept, and 1.1 gives it a fencing token); another instance
# does not get its slot.  (The third argument is slot_bits in 1.1.)
is($node->safe_psql('upgraded', $lease_q), $lease10, 'upgraded: the 1.0 lease row is kept');
# (1.4: a TTL above the namespace's largest, 60 s without a row, is refused;
# the store's superuser allows this test's 1 hour)
$node->safe_psql('upgraded', q{INSERT INTO cosid.lease_namespace_config VALUES ('upgrade', '1 hour')});
is( $node->safe_psql('upgraded', q{
		SELECT slot, previous_end, token IS NOT NULL FROM cosid.lease_acquire('upgrade', 'server-a', 2, '1 hour')}),
	'0|1893456000000|t', 'upgraded: server-a takes its slot 0 again, window end kept, with a token');
my ($state) = psql_error($node, 'upgraded',
	q{SELECT * FROM cosid.lease_acquire('upgrade', 'server-b', 0, '1 hour')});
is($state, '55000', 'upgraded: with one slot, another instance finds no free slot (55000)');
is( $node->safe_psql('upgraded', q{
		SELECT slot, previous_end FROM cosid.lease_acquire('upgrade', 'server-b', 2, '1 hour')}),
	'1|0', 'upgraded: another instance gets slot 1');

# ---- pg_dump of the upgraded database, restored into a new database
my $max_before_dump = highest('upgraded', $handed_updated);
my $generators_before_dump = $node->safe_psql('upgraded', $generators_q);
my $dumpfile = "$scratch/upgraded.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dumpfile, '-d', 'upgraded' ], 'pg_dump -Fc of the upgraded database');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'restored', $dumpfile ],
	'pg_restore into a new database');
is($node->safe_psql('restored', $extversion_q), $default_version, "restored: cosid $default_version");
is(dump_diff($fresh_objects, 'fresh', extension_objects('restored'), 'restored'), '',
	'restored and fresh have the same extension objects (the diff is empty)');
is($node->safe_psql('restored', $generators_q), $generators_before_dump,
	'restored: cosid.generators lists the same rows as the upgraded database');
is($node->safe_psql('restored', $codec_q13), $codec10, 'restored: every codec gives the same text');
is($node->safe_psql('restored', $lease_q =~ s/, expires_at, acquired_at//r),
	$node->safe_psql('upgraded', $lease_q =~ s/, expires_at, acquired_at//r),
	'restored: the lease rows are restored');
for my $g ('inv', 'legacy_g', 'daily')
{
	my $next = $node->safe_psql('restored', "SET cosid.debug_now = '2031-05-06 14:00+00'; SELECT cosid_next('$g')");
	cmp_ok($next, '>', $max_before_dump->{$g},
		"restored: segment $g continues above every number of the upgraded database");
}
my ($ret, $stdout, $stderr) = $node->psql('restored',
	"INSERT INTO legacy (phase) SELECT 'restored' FROM generate_series(1, 50)", on_error_stop => 1);
is($ret, 0, 'restored: the adopted table\'s DEFAULT inserts 50 rows') or diag($stderr);

# ---- a restart (as after installing a new library): still no overlap
$node->restart;
my $max_before_restart = highest('upgraded', $max_before_dump);
my $after_restart = issue('upgraded', 'restart');
for my $t ([ 'inv', 'inv' ], [ 'legacy', 'legacy_g' ], [ 'snow_t', 'snow' ])
{
	my ($table, $g) = @$t;
	is( $node->safe_psql('upgraded', qq{
			SELECT count(*) = count(DISTINCT id), min(id) FILTER (WHERE phase = 'restart') > $max_before_restart->{$g}
			FROM $table}),
		't|t', "upgraded: $table continues after a restart, above every earlier id");
}

$node->stop;
done_testing();
