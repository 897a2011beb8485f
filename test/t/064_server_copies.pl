# A copy of a server is not the same server (issue 21, item 2).  A server
# started from a base backup as a primary of its own (staging, a split), with
# the manual slot of the server it was copied from, would issue the very ids
# that one issues: 1.2 issued silently.  Now it finds slot.state recorded by
# another data directory and holds no window (55000, state 'unconfirmed')
# until a superuser confirms the slot is its own with cosid_slot_confirm();
# then it issues above everything in its copy, and a restart needs no second
# confirmation.  A promoted standby (started with standby.signal) takes its
# primary's place at once, as before; a slot.state of 1.2 (no data directory
# in it) is taken as the server's own.  (Point-in-time recovery to a new
# server: 062_pitr_rewind.pl.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $setup = q{
	CREATE EXTENSION cosid;
	CREATE ROLE plain LOGIN;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT cosid_next('g'), who text NOT NULL);
};
my $primary = cosid_node('original', init => { allows_streaming => 1 }, conf => [ 'cosid.slot = 1' ]);
$primary->safe_psql('postgres', $setup);
$primary->safe_psql('postgres', q{INSERT INTO t (who) SELECT 'original' FROM generate_series(1, 5000)});
$primary->backup('b');
$primary->safe_psql('postgres', q{INSERT INTO t (who) SELECT 'original' FROM generate_series(1, 5000)});

# ---- the clone: a primary of its own from the base backup
my $clone = PostgreSQL::Test::Cluster->new('clone');
$clone->init_from_backup($primary, 'b');
$clone->start;
ok($clone->poll_query_until('postgres', q{SELECT state = 'unconfirmed' FROM cosid_slot()}),
	'the clone holds no window: its slot 1 was recorded by the original\'s data directory');
my ($state, $msg, $err) = psql_error($clone, 'postgres', q{INSERT INTO t (who) VALUES ('clone')});
is($state, '55000', 'the clone issues nothing (55000)');
like($msg, qr/^this server's manual slot 1 was recorded by another data directory: it issues no ids until it is confirmed$/,
	'... saying why');
like($err, qr/HINT:  If the server it was copied from no longer uses slot 1, a superuser runs SELECT cosid_slot_confirm\(\)/,
	'... and what to do');
like(slurp_file($clone->logfile), qr/WARNING:  cosid slot worker holds no window: slot 1 was recorded by another data directory/,
	'the clone\'s log says so');
($state) = psql_error($clone, 'postgres', q{SET ROLE plain; SELECT cosid_slot_confirm()});
is($state, '42501', 'an ordinary role may not confirm (42501)');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM (SELECT cosid_next('g')) x}), '1',
	'the original goes on issuing');

# the original leaves slot 1 (stopped for good): the operator confirms.
# What the original issued after the backup is what a clone issuing from the
# same slot could repeat: those ids are kept to compare the clone's with.
my %copy = map { $_ => 1 } split /\n/, $clone->safe_psql('postgres', q{SELECT id FROM t});
my @after_backup = grep { !$copy{$_} }
  split /\n/, $primary->safe_psql('postgres', q{SELECT id FROM t});
is(scalar(@after_backup), 5000, 'the original issued 5,000 ids into t after the backup');
my ($omax) = $primary->safe_psql('postgres', q{SELECT max(id) FROM t});
$primary->stop;
is($clone->safe_psql('postgres', q{SELECT cosid_slot_confirm()}), 't',
	'cosid_slot_confirm(): the clone opens a window');
is($clone->safe_psql('postgres', q{SELECT state FROM cosid_slot()}), 'active', '... state active');
like(slurp_file($clone->logfile), qr/takes slot 1, recorded by another data directory, as this server's: cosid_slot_confirm\(\) was called/,
	'... and logs it');
$clone->safe_psql('postgres', q{INSERT INTO t (who) SELECT 'clone' FROM generate_series(1, 5000)});
my $cmax = $clone->safe_psql('postgres', q{SELECT max(id) FROM t WHERE who = 'original'});
is($clone->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE who = 'clone'), min(id) FILTER (WHERE who = 'clone') > $cmax FROM t}),
	'5000|t', 'the clone issues above every id of its copy');
my @clone_ids = split /\n/, $clone->safe_psql('postgres', q{SELECT id FROM t WHERE who = 'clone'});
my %after = map { $_ => 1 } @after_backup;
is(scalar(grep { $after{$_} } @clone_ids), 0,
	'... none of its 5,000 ids is one the original issued after the backup');
is($clone->safe_psql('postgres', qq{SELECT min(id) > $omax FROM t WHERE who = 'clone'}), 't',
	'... and all are above every id the original issued, the 5,000 after the backup included');
$clone->restart;
is($clone->safe_psql('postgres', q{SELECT count(*) FROM (SELECT cosid_next('g')) x}), '1',
	'after a restart the clone issues at once: the slot is its own now');
is($clone->safe_psql('postgres', q{SELECT cosid_slot_confirm()}), 'f',
	'cosid_slot_confirm() with nothing to confirm: false');
$clone->stop;

# ---- a promoted standby takes its primary's place at once
$primary->start;
my $standby = standby_of($primary, 'standby');
$primary->safe_psql('postgres', q{INSERT INTO t (who) SELECT 'before promotion' FROM generate_series(1, 1000)});
$primary->wait_for_catchup($standby);
my ($pmax) = $primary->safe_psql('postgres', q{SELECT max(id) FROM t});
$primary->stop;
$standby->promote;
ok($standby->poll_query_until('postgres', q{SELECT state = 'active' FROM cosid_slot()}),
	'a promoted standby holds a window with no confirmation');
$standby->safe_psql('postgres', q{INSERT INTO t (who) SELECT 'promoted' FROM generate_series(1, 1000)});
is($standby->safe_psql('postgres', qq{SELECT min(id) > $pmax FROM t WHERE who = 'promoted'}), 't',
	'... and issues above its old primary\'s ids');
$standby->restart;
is($standby->safe_psql('postgres', q{SELECT count(*) FROM (SELECT cosid_next('g')) x}), '1',
	'... also after a restart');
$standby->stop;

# ---- a slot.state of 1.2 names no data directory: it is the server's own
my $file = $primary->data_dir . '/pg_cosid/slot.state';
my $old = slurp_file($file);
like($old, qr/^datadir_inode=\d+$/m, 'slot.state names the data directory that wrote it');
(my $v12 = $old) =~ s/^datadir_inode=\d+\n//m;
open(my $fh, '>', $file) or die $!;
print $fh $v12;
close($fh);
$primary->start;
ok($primary->poll_query_until('postgres', q{SELECT state = 'active' FROM cosid_slot()}),
	'a slot.state of 1.2 (no data directory): the server holds its window');
like(slurp_file($file), qr/^datadir_inode=\d+$/m, '... and the record names its data directory again');
$primary->stop;

done_testing();
