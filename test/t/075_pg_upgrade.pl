# pg_upgrade from PostgreSQL 15 to this version (issue 21, item 1).
#
# pg_upgrade does not copy pg_cosid/ (where the window of the slot ended, the
# layout history of names, the mark of monotonic ULIDs and uuids).  1.3 before
# this test: the new server opened its window at its own clock, so with the
# clock set back it issued ids equal to and below the old server's, and a
# name dropped and defined again with another layout was accepted.  Now the
# new server marks itself during pg_upgrade (pg_cosid/upgraded) and at its
# first start, with nothing copied, refuses everything that depends on that
# state (55000, the procedure in the hint) and writes nothing there; after
# the documented procedure (the old data directory's pg_cosid files copied
# into the new one) it takes the state as its own and, with its clock 5 s
# behind, issues nothing at or below an id of the old server.
#
# One old cluster (PostgreSQL 15, with cosid 1.3 installed there) is
# upgraded in copy mode, then in clone mode when the file system can clone
# files (else that mode says why and is skipped), then in link mode (last:
# it leaves the old cluster unusable), with cosid preloaded into the new
# cluster only after pg_upgrade.
use strict;
use warnings;
use File::Basename ();
use File::Copy ();
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my ($old_install, $old_bin, $new_bin) = pg_upgrade_plan();

my $later_epoch = '{"strategy":"snowflake","epoch":1609459200000}';	# 2021: below earlier ids

# ---- the old cluster, PostgreSQL 15: manual slot 3
my $old = PostgreSQL::Test::Cluster->new('old15', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', "shared_preload_libraries = 'cosid'\ncosid.slot = 3");
$old->start;
$old->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('snow', '{"strategy":"snowflake","seq-reset-threshold":0}');
	SELECT cosid_define('dflt', '{"strategy":"snowflake"}');
	SELECT cosid_define('seg', '{"strategy":"segment","step":100}');
	SELECT cosid_define('h', '{"strategy":"snowflake"}');
	CREATE TABLE ids (phase int, gen text, id bigint);
	CREATE TABLE u (phase int, id ulid, v uuid);
	INSERT INTO ids SELECT 1, 'h', cosid_next('h') FROM generate_series(1, 500);
	SELECT cosid_drop('h');
	-- an earlier epoch: its ids are above the old layout's, so it is accepted
	SELECT cosid_define('h', '{"strategy":"snowflake","epoch":1546300800000}');
	CREATE DATABASE d2;
});
# a name whose layout history only pg_cosid/names keeps: its extension dropped
$old->safe_psql('d2', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('n', '{"strategy":"snowflake"}');
	SELECT count(cosid_next('n')) FROM generate_series(1, 100);
	DROP EXTENSION cosid;
});
$old->safe_psql('postgres', q{
	INSERT INTO ids SELECT 1, g, cosid_next(g) FROM unnest(ARRAY['snow', 'dflt', 'seg', 'h']) g,
		generate_series(1, 5000);
	INSERT INTO ids SELECT 1, 'snow', cosid_next('snow') FROM generate_series(1, 15000);
	INSERT INTO u SELECT 1, gen_ulid_monotonic(), gen_uuidv7_monotonic() FROM generate_series(1, 2000);
});
my $last_issue_ms = now_ms();

# what the layout history refuses on 15 (and must refuse after the upgrade)
sub refusals
{
	my ($node) = @_;
	my @r;
	push @r, [ psql_error($node, 'postgres', "BEGIN; SELECT cosid_drop('h'); SELECT cosid_define('h', '$later_epoch')") ];
	push @r, [ psql_error($node, 'd2', "BEGIN; CREATE EXTENSION cosid; SELECT cosid_define('n', '$later_epoch')") ];
	return @r;
}
my @before = refusals($old);
is($before[0][0], '22023', 'on 15: h dropped and defined with a later epoch is refused (22023)');
like($before[0][1], qr/would issue ids that its name already issued/, '... because its ids would repeat');
is($before[1][0], '22023', 'on 15: n, its extension dropped, defined with a later epoch is refused (22023)');

# Debian's PostgreSQL 15 sets an attribute option pg_attver on every column,
# which PostgreSQL 18 rejects while pg_upgrade restores the schema; it is not
# cosid's doing.  Clear it (the test's own tables only).
for my $db ('postgres', 'd2')
{
	$old->safe_psql($db, 'UPDATE pg_attribute SET attoptions = NULL WHERE attrelid >= 16384 AND attoptions IS NOT NULL');
}
$old->stop;
my $old_state = $old->data_dir . '/pg_cosid';
my $old_end = slot_state($old)->{end_ms};
ok(-f "$old_state/slot.state" && -f "$old_state/names" && -f "$old_state/ulid.state",
	'the old data directory has slot.state, names and ulid.state');

# Whether files can be cloned from the old data directory to where the new
# ones are made (what pg_upgrade --clone needs): undef, or why not.
sub clone_unsupported
{
	my ($to_dir) = @_;
	my $to = "$to_dir/clone_probe";
	my $out = `cp --reflink=always '${\$old->data_dir}/PG_VERSION' '$to' 2>&1`;
	my $ok = $? == 0;
	unlink $to;
	chomp $out;
	return $ok ? undef : "this file system cannot clone files (cp --reflink=always: $out)";
}

# The new cluster, upgraded from the old one.  preload_after => 1: cosid is
# preloaded only after pg_upgrade (pg_upgrade still loads it into the new
# server, to check that the old cluster's libraries load).
sub upgrade
{
	my ($mode, %opt) = @_;
	my $t0 = Time::HiRes::time();
	my $new = PostgreSQL::Test::Cluster->new("new_$mode");
	# an old cluster that pg_upgrade made itself, its state never copied in
	PostgreSQL::Test::Utils::append_to_file("$old_state/upgraded", '') if $opt{old_marked};
	my $conf = "shared_preload_libraries = 'cosid'\ncosid.slot = 3";
	# PostgreSQL 18's initdb turns data checksums on; the old cluster has none
	$new->init(extra => [ '--no-data-checksums' ]);
	$new->append_conf('postgresql.conf', $conf) unless $opt{preload_after};
	my ($ret, $stdout, $stderr) = run_pg_upgrade($old, $new, $mode, $old_bin, $new_bin);
	ok($ret, "$mode: pg_upgrade succeeds") or diag("$stdout\n$stderr");
	note(sprintf("%s: pg_upgrade took %.1f s", $mode, Time::HiRes::time() - $t0));
	ok(-f $new->data_dir . '/pg_cosid/upgraded',
		"$mode: the new data directory is marked pg_cosid/upgraded" . ($opt{preload_after} ? ' (cosid not preloaded)' : ''));
	if ($opt{old_marked})
	{
		ok(!-e "$old_state/upgrade.manifest",
			"$mode: the old server, marked pg_cosid/upgraded itself, wrote no upgrade.manifest (its state is not where its ids ended)");
		unlink "$old_state/upgraded";
	}
	else
	{
		ok(!-e "$old_state/upgraded", "$mode: the old one is not marked");
		like(-f "$old_state/upgrade.manifest" ? slurp_file("$old_state/upgrade.manifest") : "(none)",
			qr/\A[^\n]*\n[0-9a-f]{8} \d+ slot\.state\n[0-9a-f]{8} \d+ names\n[0-9a-f]{8} \d+ ulid\.state\n/,
			"$mode: the old server listed slot.state, names and ulid.state in pg_cosid/upgrade.manifest");
	}
	$new->append_conf('postgresql.conf', $conf) if $opt{preload_after};
	return $new;
}

# The files of a pg_cosid directory, sorted.
sub state_files
{
	my ($dir) = @_;
	opendir(my $dh, $dir) or die "could not read $dir: $!";
	my @f = sort grep { !/^\.\.?$/ } readdir $dh;
	closedir $dh;
	return @f;
}

# Copy the old data directory's pg_cosid files into $dir, but those in @$leave.
sub copy_state
{
	my ($dir, $leave) = @_;
	my %leave = map { $_ => 1 } @{ $leave // [] };
	for my $f (grep { -f "$old_state/$_" && !$leave{$_} } state_files($old_state))
	{
		File::Copy::copy("$old_state/$f", "$dir/$f") or die "copy $f: $!";
	}
}

# Rewrite a slot.state with its end a minute earlier: a stale copy of it.
sub stale_slot_state
{
	my ($file) = @_;
	my $text = slurp_file($file);
	$text =~ s/^end_ms=(\d+)$/'end_ms=' . ($1 - 60000)/me or die "no end_ms in $file";
	open(my $fh, '>', $file) or die;
	print $fh $text;
	close $fh;
}

# Rewrite a slot.state as the new cluster writes its own (its data
# directory's inode): a record of a start before pg_upgrade, not a copy.
sub own_slot_state
{
	my ($file) = @_;
	my $ino = (stat(File::Basename::dirname(File::Basename::dirname($file))))[1];
	my $text = slurp_file($file);
	$text =~ s/^datadir_inode=\d+$/datadir_inode=$ino/m or die "no datadir_inode in $file";
	open(my $fh, '>', $file) or die;
	print $fh $text;
	close $fh;
}

sub check_mode
{
	my ($mode, %opt) = @_;
	my $new = upgrade($mode, %opt);
	my $state_dir = $new->data_dir . '/pg_cosid';

	# ---- started before the state is copied: it refuses, and writes nothing
	$new->start;
	is($new->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'upgraded',
		"$mode, not copied: cosid_slot() says upgraded");
	for my $sql ("SELECT cosid_next('snow')", "SELECT cosid_next('dflt')", 'SELECT gen_ulid_monotonic()',
		'SELECT gen_uuidv7_monotonic()')
	{
		my ($state, $msg, $err) = psql_error($new, 'postgres', $sql);
		is($state, '55000', "$mode, not copied: $sql is refused (55000)");
		is($msg, "cosid's state was not carried over by pg_upgrade", "$mode, not copied: ... saying why");
		like($err // '', qr/HINT:  Stop this server, copy the files in pg_cosid of the old data directory into pg_cosid of this one, and start it again/,
			"$mode, not copied: ... and what to do");
	}
	my ($state, $msg) = psql_error($new, 'postgres', 'SELECT cosid_slot_confirm()');
	is("$state|$msg", "55000|cosid's state was not carried over by pg_upgrade",
		"$mode, not copied: cosid_slot_confirm() does not stand in for the state");
	($state) = psql_error($new, 'd2', "BEGIN; CREATE EXTENSION cosid; SELECT cosid_define('n', '$later_epoch')");
	is($state, '55000', "$mode, not copied: defining a time-based generator is refused (55000)");
	is($new->safe_psql('postgres', q{
		INSERT INTO ids SELECT 0, 'seg', cosid_next('seg') FROM generate_series(1, 100);
		SELECT count(*) FROM ids WHERE phase = 0 AND id <= (SELECT max(id) FROM ids WHERE phase = 1 AND gen = 'seg')}),
		'0', "$mode, not copied: a segment generator (its sequence came along) issues above its old numbers");
	like(slurp_file($new->logfile), qr/WARNING:  cosid slot worker holds no window: this server was upgraded by pg_upgrade/,
		"$mode, not copied: the log says so");
	$new->stop;
	is(join(',', state_files($state_dir)), 'upgraded', "$mode, not copied: nothing was written to pg_cosid");

	# ---- a copy that is not complete is refused like none, and nothing is written
	for my $p (@{ $opt{partial} // [] })
	{
		my ($what, $leave, $tamper, $why) = @$p;
		copy_state($state_dir, $leave);
		$tamper->("$state_dir/slot.state") if $tamper;
		my @files = state_files($state_dir);
		$new->start;
		is($new->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), 'upgraded',
			"$mode, $what: cosid_slot() says upgraded");
		my ($st, $m, $err) = psql_error($new, 'postgres', "SELECT cosid_next('snow')");
		is("$st|$m", "55000|cosid's state was not carried over by pg_upgrade", "$mode, $what: cosid_next is refused (55000)");
		like($err // '', qr/DETAIL:  .*the copy here is not complete: \Q$why\E\./, "$mode, $what: ... saying $why");
		$new->stop;
		is(join(',', state_files($state_dir)), join(',', @files), "$mode, $what: nothing was written to pg_cosid");
		unlink map { "$state_dir/$_" } grep { $_ ne 'upgraded' } @files;
	}

	# ---- the procedure: the old data directory's pg_cosid files copied in
	copy_state($state_dir);

	# started with its clock 5 s behind the old server's last ids
	my $offset_file = $new->basedir . '/faketime.rc';
	set_fake_offset($offset_file, sprintf('%.3f', ($last_issue_ms - 5000 - now_ms()) / 1000));
	start_faked($new, offset_file => $offset_file);
	ok(!-e "$state_dir/upgraded" && !-e "$state_dir/upgrade.manifest",
		"$mode: the marker and the manifest are gone once the state was taken");
	like(slurp_file($new->logfile), qr/cosid takes the record of slot 3 copied from the data directory this server was upgraded from/,
		"$mode: the log says the copied slot record was taken");
	is($new->safe_psql('postgres', q{SELECT state, (extract(epoch FROM window_start) * 1000)::bigint >= } . $old_end
		  . q{, clock_timestamp() < window_start FROM cosid_slot()}),
		'active|t|t', "$mode: the window is open, starts at the old server's end and the clock is behind it");
	for my $g ('snow', 'dflt')
	{
		my ($st, $msg) = psql_error($new, 'postgres', "SELECT cosid_next('$g')");
		is($st, '55000', "$mode, clock behind: cosid_next('$g') is refused (55000)");
		like($msg, qr/^clock is \d+ ms behind the start of this server's slot window$/, "$mode, clock behind: ... it says the clock is behind");
	}
	my @after = refusals($new);
	is($after[0][0], '22023', "$mode: h dropped and defined with a later epoch is still refused (22023)");
	is($after[0][1], $before[0][1], "$mode: ... as on 15");
	is($after[1][0], '22023', "$mode: n, whose history only pg_cosid/names holds, is still refused (22023)");
	is($after[1][1], $before[1][1], "$mode: ... as on 15");

	# monotonic ids go on above the old ones with the clock behind
	$new->safe_psql('postgres', q{
		INSERT INTO u SELECT 2, gen_ulid_monotonic(), gen_uuidv7_monotonic() FROM generate_series(1, 2000)});
	is($new->safe_psql('postgres', q{
		SELECT (SELECT min(id) FROM u WHERE phase = 2) > (SELECT max(id) FROM u WHERE phase = 1),
			   (SELECT min(v::ulid) FROM u WHERE phase = 2) > (SELECT max(v::ulid) FROM u WHERE phase = 1),
			   (SELECT count(*) - count(DISTINCT id) FROM u), (SELECT count(*) - count(DISTINCT v) FROM u),
			   (SELECT max(ulid_time(id)) FROM u WHERE phase = 2) > clock_timestamp()}),
		't|t|0|0|t', "$mode, clock behind: every ULID and uuid sorts above the old ones, none twice");

	# the clock 300 ms before the window start: the first call waits, then ids
	my $t0 = Time::HiRes::time();
	my $ws = $new->safe_psql('postgres', q{SELECT (extract(epoch FROM window_start) * 1000)::bigint FROM cosid_slot()});
	set_fake_offset($offset_file, sprintf('%.3f', ($ws - 300 - now_ms()) / 1000));
	$new->safe_psql('postgres', q{
		INSERT INTO ids SELECT 2, g, cosid_next(g) FROM unnest(ARRAY['snow', 'dflt', 'seg', 'h']) g,
			generate_series(1, 5000);
		INSERT INTO ids SELECT 2, 'snow', cosid_next('snow') FROM generate_series(1, 15000);
	});
	note(sprintf('%s: 35,000 ids in %.1f s', $mode, Time::HiRes::time() - $t0));
	$new->safe_psql('postgres', 'ANALYZE ids');
	is($new->safe_psql('postgres', q{
		SELECT string_agg(format('%s:%s', gen, below), ',' ORDER BY gen) FROM (
			SELECT gen, count(*) FILTER (WHERE id <= old_max) AS below
			FROM ids JOIN (SELECT gen, max(id) AS old_max FROM ids WHERE phase = 1 GROUP BY gen) o USING (gen)
			WHERE phase = 2 GROUP BY gen) s}),
		'dflt:0,h:0,seg:0,snow:0', "$mode: no new id is at or below the old maximum of its generator");
	is($new->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT gen, id FROM ids WHERE phase = 1
							  INTERSECT SELECT gen, id FROM ids WHERE phase = 2) s}),
		'0', "$mode: no new id equals an old one");
	is($new->safe_psql('postgres', q{SELECT count(*) FROM ids WHERE phase = 2}), '35000', "$mode: every id was issued");
	$new->stop;
	$new->start;
	ok($new->poll_query_until('postgres', q{SELECT state = 'active' FROM cosid_slot()}),
		"$mode: a restart holds the slot with no confirmation");
	$new->stop;
}

# Partial copies are tried in copy mode (with the old server's manifest) and
# in link mode (without it: there the old cluster is marked pg_cosid/upgraded
# as if pg_upgrade had made it and its state had never been copied in, so it
# lists nothing; so does an old server without cosid 1.3 preloaded):
# [what, files left out, tampering, why].
check_mode('copy', partial => [
	[ 'names not copied', [ 'names' ], undef, 'names is missing' ],
	[ 'a stale slot.state', [], \&stale_slot_state, "slot.state is not the old data directory's" ] ]);
SKIP:
{
	my $why = clone_unsupported(PostgreSQL::Test::Utils::tempdir());
	skip "clone mode: $why", 1 if defined $why;
	check_mode('clone');
}
check_mode('link', preload_after => 1, old_marked => 1, partial => [
	[ 'no manifest, slot.state not copied', [ 'slot.state' ], undef,
	  'slot.state is missing, which a manual slot needs' ],
	[ "no manifest, the new cluster's own slot.state", [], \&own_slot_state,
	  'slot.state was written by this data directory, not copied from the old one' ] ]);

done_testing();
