# A segment generator under load (pgbench, 6 clients, 30 s) whose
# transactions roll back whole or to savepoints, while another session
# changes its step every 0.2 s (some of those changes rolled back), drops
# and defines it again (some of that rolled back too), and the server is
# restarted and then crashed (kill -9) mid-load.  Every number handed out
# to a client, in committed and rolled-back transactions alike, is written
# to the server log by the function that hands it out, before the client
# gets it.  No number is handed out twice, and each backend's numbers only
# go up.
#
# (Before: a rolled-back step change gave its numbers out again, an alter
# under load left a generator with several live entries and a backend's
# numbers going down, and sessions could wait on one another unseen.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

my $seconds = 30;
my $clients = 6;
my $node = cosid_node('segload', conf => [
	"log_line_prefix = '%m [%p] %c %q%a '",
	'log_statement = none',
	"deadlock_timeout = '100ms'",
	'max_connections = 40' ]);
$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('load', '{"strategy": "segment", "step": 50}');
	-- hands out one number, saying so in the server log first
	CREATE FUNCTION handout() RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE
		x bigint := cosid_next('load');
	BEGIN
		RAISE LOG 'handout %', x;
		RETURN x;
	END $$;
	CREATE FUNCTION handout_many(n int) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
	DECLARE
		x bigint;
	BEGIN
		FOR x IN SELECT cosid_next_many('load', n) LOOP
			RAISE LOG 'handout %', x;
			RETURN NEXT x;
		END LOOP;
	END $$;
	CREATE TABLE kept (id bigint);
});

my $script = <<'PGBENCH';
\set r random(1, 10)
BEGIN;
SELECT handout();
INSERT INTO kept SELECT handout_many(5);
SAVEPOINT a;
SELECT handout();
\if :r <= 2
ROLLBACK TO a;
\endif
SELECT handout();
\if :r <= 4
ROLLBACK;
\else
COMMIT;
\endif
PGBENCH

my $t0 = now_ms();
my $deadline = $t0 + $seconds * 1000;
sub left_s { return int(($deadline - now_ms()) / 1000); }
sub start_round { return start_pgbench($node, $script, '-c', $clients, '-j', $clients, '-T', left_s()); }

# the other session's changes: (statement, what it is)
my %done = (alter => 0, 'alter rolled back' => 0, 'drop and define' => 0,
	'drop and define rolled back' => 0, failed => 0);
my $i = 0;
sub change
{
	$i++;
	my $step = 10 + int(rand(190));
	my ($what, $sql);
	# a few of each kind even when a slow machine gets through few turns
	if ($i % 10 == 0)
	{
		($what, $sql) = ('drop and define', "BEGIN; SELECT cosid_drop('load'); "
			  . "SELECT cosid_define('load', '{\"strategy\": \"segment\", \"step\": $step}'); COMMIT;");
	}
	elsif ($i % 10 == 5)
	{
		($what, $sql) = ('drop and define rolled back', "BEGIN; SELECT cosid_drop('load'); "
			  . "SELECT cosid_define('load', '{\"strategy\": \"segment\", \"step\": $step}'); ROLLBACK;");
	}
	elsif ($i % 5 == 2)
	{
		($what, $sql) = ('alter rolled back', "BEGIN; SELECT cosid_alter('load', '{\"step\": $step}'); ROLLBACK;");
	}
	else
	{
		($what, $sql) = ('alter', "SELECT cosid_alter('load', '{\"step\": $step}');");
	}
	my ($ret) = $node->psql('postgres', "SET lock_timeout = '5s'; $sql", on_error_stop => 1);
	$done{ $ret == 0 ? $what : 'failed' }++;
}

my @rounds = (start_round());
my ($restarted, $crashed) = (0, 0);
while (now_ms() < $deadline)
{
	my $t = now_ms() - $t0;
	if (!$restarted && $t >= 10_000)
	{
		$node->restart;
		$restarted = 1;
		push @rounds, start_round() if left_s() > 1;
		next;
	}
	if (!$crashed && $t >= 20_000)
	{
		crash_restart($node, all => 1);
		$crashed = 1;
		push @rounds, start_round() if left_s() > 1;
		next;
	}
	change();
	usleep(200_000);
}
my $transactions = 0;
for my $r (@rounds)
{
	my ($ok, $tx, $out) = finish_load($r);
	$transactions += $tx;
	note("pgbench round: " . ($ok ? 'ended' : 'cut short') . ", $tx transactions");
}
note(join(', ', map { "$_: $done{$_}" } sort keys %done));
ok($restarted && $crashed, 'the server was restarted and crashed mid-load');
cmp_ok($done{alter}, '>=', 15, 'the step was changed often');
cmp_ok($done{'drop and define'}, '>=', 2, 'the generator was dropped and defined again');
cmp_ok($done{'alter rolled back'} + $done{'drop and define rolled back'}, '>=', 10, 'and changes were rolled back');

# ---- every number handed out, per backend (session id %c), in log order
my (%by_session, %seen, @twice);
my ($total, $down) = (0, 0);
open(my $fh, '<', $node->logfile) or die $!;
while (my $line = <$fh>)
{
	next unless $line =~ /^\S+ \S+ \S+ \[\d+\] (\S+) \S* ?LOG:  handout (\d+)$/;
	my ($session, $n) = ($1, $2);
	$total++;
	push @twice, $n if $seen{$n}++;
	my $last = $by_session{$session};
	$down++ if defined $last && $n <= $last;
	$by_session{$session} = $n;
}
close($fh);
note("$total numbers handed out to " . scalar(keys %by_session) . " sessions in $transactions transactions");
cmp_ok($total, '>=', 10_000, 'at least 10,000 numbers were handed out');
is(scalar(@twice), 0, 'no number was handed out twice')
  or diag('handed out twice: ' . join(', ', @twice[0 .. ($#twice < 19 ? $#twice : 19)]));
is($down, 0, "no backend's numbers went down");
my $errors = () = slurp_file($node->logfile) =~ /^\S+ \S+ \S+ \[\d+\] \S+ pgbench ERROR:  (?!canceling statement due to user request)/mg;
is($errors, 0, 'no client statement failed');
# none when the last change was a drop and define that no client used
# before the load ended; never more than one
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM cosid.stats() WHERE name = 'load'}), '<=', 1,
	'the generator has at most one live entry after the load');
$node->safe_psql('postgres', q{SELECT handout()});
is($node->safe_psql('postgres', q{SELECT count(*) FROM cosid.stats() WHERE name = 'load'}), '1',
	'and one live entry once a number is issued');

done_testing();
