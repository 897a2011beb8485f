# A lease store that answers every call with an unexpected error (XX000, not
# the 55000 of a lease taken over) for 10 s, while a client keeps asking for
# ids.  The slot worker waits its back-off (core/backoff.h) after every
# failure and ends every turn of its loop in one latch wait, so it neither
# floods the log nor the store with connections; the log says the failure
# at a bounded rate, with a count of those it left out.  When the store
# answers again, issuing resumes within seconds.
#
# (Before the back-off, one server logged 1,046 lines in 5 s and opened a
# new store connection about every 8 ms.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use CosidTest;

my $store = lease_store('store');
$store->append_conf('postgresql.conf', 'log_connections = on');
$store->reload;
my $h = cosid_node('holder', conf => lease_conf($store, ttl => 3));
$h->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	SELECT cosid_define('g', '{"strategy":"snowflake"}');
});
my $slot = wait_for_lease($h);
ok(defined $slot, 'the holder holds a leased slot') or BAIL_OUT('no lease');
like($h->safe_psql('postgres', q{SELECT cosid_next('g')}), qr/^\d+$/, 'it issues');

# Every write to the lease table fails: acquire, renew and release all do one.
$store->safe_psql('postgres', q{
	CREATE FUNCTION public.fail_lease() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		RAISE EXCEPTION 'injected store failure' USING ERRCODE = 'XX000';
	END $$;
});

sub count_lines
{
	my ($node, $from, $re) = @_;
	my $log = slurp_file($node->logfile, $from);
	my @m = ($log =~ /$re/g);
	return scalar @m;
}

my $h_from = -s $h->logfile;
my $s_from = -s $store->logfile;
$store->safe_psql('postgres',
	'CREATE TRIGGER fail_lease BEFORE INSERT OR UPDATE OR DELETE ON cosid.lease '
	  . 'FOR EACH ROW EXECUTE FUNCTION public.fail_lease()');
my $t0 = now_ms();

# a client keeps asking for ids for 10 s; each call that finds the window
# over asks the worker to extend it (sets its latch)
my ($ok, $failed, $other) = (0, 0, 0);
while (now_ms() - $t0 < 10_000)
{
	my ($state) = psql_error($h, 'postgres', q{SELECT cosid_next('g')});
	if (!defined $state) { $ok++ }
	elsif ($state eq '55000') { $failed++ }
	else { $other++ }
	usleep(20_000);
}
my $elapsed = now_ms() - $t0;
note("in $elapsed ms: $ok ids issued, $failed calls refused with 55000, $other other errors");
cmp_ok($failed, '>', 0, 'with the store failing, the window ends and cosid_next is refused');
is($other, 0, 'no call failed but with 55000');

my $h_lines = count_lines($h, $h_from, qr/LOG:  cosid slot worker could not [^\n]*/);
# every LOG line but the statements the test harness logs (log_statement = all)
my $h_all = count_lines($h, $h_from, qr/LOG:  (?!statement: )[^\n]*/);
my $s_conns = count_lines($store, $s_from, qr/connection received: host=[^\n]*/);
my $s_errors = count_lines($store, $s_from, qr/ERROR:  injected store failure/);
note("holder: $h_lines failure lines ($h_all LOG lines in all); store: $s_conns connections, "
	  . "$s_errors failed calls");
cmp_ok($s_errors, '>=', 3, 'the worker kept trying the store');
cmp_ok($s_errors, '<=', 20, 'at most 20 tries of the store in 10 s (back-off: 100 ms doubling to 2 s, each wait at least half of that: 15 at most)');
cmp_ok($h_lines, '>=', 2, 'the failures are in the log');
cmp_ok($h_lines, '<=', 6, 'at most 6 lines about them in 10 s (a line per back-off step)');
cmp_ok($h_all, '<=', 20, 'and few LOG lines in all');
# the store's own connections (psql's checks here) count too: few
cmp_ok($s_conns, '<=', 20, 'at most 20 store connections in 10 s');
like(slurp_file($h->logfile, $h_from),
	qr/DETAIL:  \d+ more failures? like it since the last report (was|were) not logged; the next try is in \d+ ms\./,
	'a later line counts the failures it left out');
like(slurp_file($h->logfile, $h_from), qr/could not (renew the lease of slot \d+|lease a slot): .*injected store failure/,
	'the line names the store\'s error');

# ---- the store answers again
$store->safe_psql('postgres', 'DROP TRIGGER fail_lease ON cosid.lease');
my $t1 = now_ms();
my $resumed = poll_until(15, sub { !defined((psql_error($h, 'postgres', q{SELECT cosid_next('g')}))[0]) }, 50);
my $took = now_ms() - $t1;
ok($resumed, 'issuing resumes once the store answers again');
note("issuing resumed $took ms after the store answered again");
cmp_ok($took, '<=', 5000, 'within 5 s (the longest back-off is 2 s)');
ok(poll_until(5, sub { count_lines($h, $h_from, qr/cosid slot worker reaches the lease store again, after \d+ failed attempts?/) >= 1 }),
	'the log says the store answers again, with the number of failed attempts');
like($h->safe_psql('postgres', 'SELECT state FROM cosid_slot()'), qr/^active$/, 'the slot is active');

done_testing();
