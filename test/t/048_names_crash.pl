# pg_cosid/names across crashes (issue 29, item 4).  The record of
# time-based generators' identities and layouts is a log appended to with
# one fsync per batch and compacted incrementally into pg_cosid/names.next;
# its live records are indexed in shared memory.  While two clients define
# and drop generators (each define appends; each drop with forget_history
# supersedes, so compaction runs again and again), the server is killed
# with kill -9:
#
#  - while records are appended (the postmaster alone, then the whole
#    server at once), and
#  - while the log is compacted (names.next exists when the kill comes),
#  - once with a torn record at the end of the log (bytes of a record that
#    a crash cut short, never acknowledged).
#
# After each restart, nothing is lost:
#  a. every kept generator issues above every id it issued before;
#  b. a generator whose layout changed (a new identity with a floor) issues
#     above every id of its old layout, and a row of its old identity with
#     the new layout is refused (22023);
#  c. every identity still belongs to its database: a history row with one
#     of alice's identities, in mallory's database, is refused (42501),
#     also for generators the clients defined and that were committed;
#  d. and at the end, after DROP EXTENSION, a kept name defined again gets
#     its identity back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use CosidTest;

my $node = cosid_node('names_crash', conf => [ 'cosid.max_generators = 256', 'cosid.max_names = 4096' ]);
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE da OWNER alice;
	CREATE DATABASE da2 OWNER alice;
	CREATE DATABASE dm OWNER mallory;
});
$node->safe_psql($_, 'CREATE EXTENSION cosid') for qw(da da2 dm);
my $names = $node->data_dir . '/pg_cosid/names';
my $layout_cols = 'epoch_ms, unit_ms, time_bits, node_bits, seq_bits';

sub as
{
	my ($role, $db, $sql) = @_;
	return $node->safe_psql($db, "SET ROLE $role;\n$sql");
}

# 100 kept generators and 10 whose layout changes (r1..r10: dropped and
# defined again with another epoch, which gives them a new identity)
as('alice', 'da', q{
	CREATE TABLE maxes (name text PRIMARY KEY, max bigint);
	SELECT cosid_define('k' || i, '{"strategy":"snowflake"}') FROM generate_series(1, 100) i;
	SELECT cosid_define('r' || i, '{"strategy":"snowflake"}') FROM generate_series(1, 10) i;
});
as('alice', 'da', q{
	INSERT INTO maxes SELECT name, (SELECT max(x) FROM cosid_next_many(name, 50) x)
	FROM cosid.generator WHERE name ~ '^[kr]';
});
my %old_ident = map { split /\|/ }
  split /\n/, as('alice', 'da', q{SELECT name, identity FROM cosid.generator WHERE name ~ '^r'});
my @old_layout = split /\|/, as('alice', 'da', qq{SELECT $layout_cols FROM cosid.generator WHERE name = 'r1'});
as('alice', 'da', q{
	SELECT cosid_drop('r' || i) FROM generate_series(1, 10) i;
	SELECT cosid_define('r' || i, '{"strategy":"snowflake","epoch":1500000000000}') FROM generate_series(1, 10) i;
});
my @new_layout = split /\|/, as('alice', 'da', qq{SELECT $layout_cols FROM cosid.generator WHERE name = 'r1'});
isnt(join(',', @new_layout), join(',', @old_layout), 'r1..r10 have another layout now');
my $kept = as('alice', 'da', q{SELECT string_agg(name || ':' || identity, ',' ORDER BY name) FROM cosid.generator});

# the clients' churn: define, or drop forgetting the name, 40 names each
as('alice', 'da', q{
	CREATE FUNCTION churn(n int) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		IF EXISTS (SELECT FROM cosid.generator WHERE name = 'c' || n) THEN
			PERFORM cosid_drop('c' || n, forget_history => true);
		ELSE
			PERFORM cosid_define('c' || n, '{"strategy":"snowflake"}');
		END IF;
	END $$;
});
my $script = $node->basedir . '/churn.sql';
PostgreSQL::Test::Utils::append_to_file($script, qq{\\set n random(1, 40) + 100 * :client_id\nSELECT churn(:n);\n});

sub start_churn
{
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', 2, '-j', 2, '-T', 60, '-f', $script,
			'-h', $node->host, '-p', $node->port, '-U', 'alice', 'da'
		],
		'>', \$out, '2>', \$err);
}

# what must hold after every restart
sub check_all
{
	my ($round) = @_;
	my ($ret, $out, $err) = $node->psql('da', q{
		SET ROLE alice;
		SELECT count(*) FILTER (WHERE id <= max) || '/' || count(*) FROM (SELECT max, cosid_next(name) id FROM maxes) x;
		UPDATE maxes SET max = cosid_next(name)});
	is($out, '0/110', "$round: every kept generator issues above all it issued before (a, b)") or diag($err);
	is(as('alice', 'da', q{SELECT string_agg(name || ':' || identity, ',' ORDER BY name) FROM cosid.generator WHERE name ~ '^[kr]'}),
		$kept, "$round: ... with its identity");

	# c. alice's identities are da's: kept ones, a changed layout's old and
	# new identity, and the newest committed churned generator's
	my @idents = split /\n/, as('alice', 'da', q{
		SELECT identity FROM cosid.generator WHERE name IN ('k1', 'k57', 'k100', 'r3')
		UNION ALL (SELECT identity FROM cosid.generator WHERE name ~ '^c' ORDER BY identity LIMIT 2)});
	push @idents, $old_ident{r3};
	my @refusals;
	for my $id (@idents)
	{
		my $name = as('alice', 'da', qq{SELECT coalesce((SELECT name FROM cosid.generator WHERE identity = $id), 'r3')});
		my @l = $id == $old_ident{r3} ? @old_layout
		  : split /\|/, as('alice', 'da', qq{SELECT $layout_cols FROM cosid.generator WHERE identity = $id});
		my ($state, $msg) = psql_error($node, 'dm', qq{SET ROLE mallory;
			INSERT INTO cosid.generator_history (name, last_number, identity, strategy, $layout_cols, uncertainty_bits)
			VALUES ('$name', 0, $id, 'snowflake', } . join(', ', @l) . q{, 0)});
		push @refusals, $state // 'accepted';
	}
	is(join(',', @refusals), join(',', ('42501') x @idents),
		"$round: " . scalar(@idents) . " of alice's identities still belong to da (c)");

	# b. the old identity of r3 keeps its layout: a row of it with the new
	# layout, restored by alice into her other database, is refused
	my ($state, $msg) = psql_error($node, 'da2', qq{SET ROLE alice;
		INSERT INTO cosid.generator_history (name, last_number, identity, strategy, $layout_cols, uncertainty_bits)
		VALUES ('r3', 0, $old_ident{r3}, 'snowflake', } . join(', ', @new_layout) . q{, 0)});
	is($state // 'accepted', '22023', "$round: r3's old identity keeps its old layout (b)") or diag($msg);
}

check_all('before any crash');

my %caught = (appends => 0, compaction => 0);
for my $round (1 .. 6)
{
	my $during = $round % 2 ? 'appends' : 'compaction';
	my $load = start_churn();
	my $t0 = time();
	if ($during eq 'compaction')
	{
		# kill as soon as a compaction is under way (names.next is there)
		poll_until(30, sub { -e "$names.next" }, 2);
	}
	else
	{
		# kill between compactions (names.next absent): compaction runs for
		# much of a churn, so wait for a moment without one
		usleep(300_000);
		poll_until(30, sub { !-e "$names.next" }, 1);
	}
	my $next = -e "$names.next" ? 1 : 0;
	$caught{compaction}++ if $next;
	$caught{appends}++ unless $next;
	crash_restart($node, all => $round == 3 || $round == 4);
	$load->kill_kill;
	$load->finish;

	if ($round == 5)
	{
		# a torn record at the end of the log (a crash cut its append short),
		# then a crash before any use: the next start drops it
		$node->stop('immediate');
		my $last = -e "$names.next" ? "$names.next" : $names;
		open(my $fh, '>>:raw', $last) or die $!;
		print $fh 'x' x 37;
		close($fh);
		$node->start;
	}
	note(sprintf('round %d: killed after %.1f s, names.next %s', $round, time() - $t0,
		$next ? 'present (compaction under way)' : 'absent'));
	check_all("after crash $round (during $during" . ($round == 5 ? ', then a torn record' : '') . ')');
}
cmp_ok($caught{compaction}, '>=', 1, "a crash came while the log was compacted ($caught{compaction} of 6)");
cmp_ok($caught{appends}, '>=', 1, "a crash came while records were appended outside a compaction ($caught{appends} of 6)");
is((-s $names) % 160 == 16 ? 'whole' : 'torn', 'whole', 'the log holds whole records after the torn one was dropped');

# d. DROP EXTENSION, then the kept names defined again: the same identities
my %before = map { split /\|/ } split /\n/,
  as('alice', 'da', q{SELECT name, identity FROM cosid.generator WHERE name IN ('k1', 'k2', 'k99', 'r7')});
$node->safe_psql('da', 'DROP EXTENSION cosid CASCADE; CREATE EXTENSION cosid');
crash_restart($node);
as('alice', 'da', q{
	SELECT cosid_define(n, '{"strategy":"snowflake"}') FROM unnest(ARRAY['k1', 'k2', 'k99']) n;
	SELECT cosid_define('r7', '{"strategy":"snowflake","epoch":1500000000000}');
});
my %after = map { split /\|/ } split /\n/,
  as('alice', 'da', q{SELECT name, identity FROM cosid.generator WHERE name IN ('k1', 'k2', 'k99', 'r7')});
is(join(',', map { "$_=$after{$_}" } sort keys %after), join(',', map { "$_=$before{$_}" } sort keys %before),
	'after DROP EXTENSION and a crash, the names defined again keep their identities (d)');

done_testing();
