# The Cookbook's "A generator per tenant" recipe (docs/cookbook.md), as
# written there (doc_blocks: tenant-schema), with 10,000 tenants and
# cosid.max_generators at its default, 1024, so that the tenants' shared
# entries churn (issue 29).
#
# The application (role saas_app, which logs in and owns nothing) signs up
# 10,000 tenants from 4 pgbench sessions: each sign-up defines the tenant's
# generator inv_<id>, owned by billing.  Then it bills them: 1,024 tenants in
# one statement (every entry taken: one more tenant takes the entry of one of
# them, as the recipe says; 1.3 failed with 53200 for 10 seconds), then the
# other 8,976 in waves of 500 tenants, 4
# pgbench sessions inserting invoices for random tenants of the wave, each
# wave started once the entries of the wave before the last one have been
# idle for 10 seconds (so every new tenant finds an entry to reclaim, and none
# fails).  What the recipe promises, checked:
#
# - every number is INV-yyyy-nnnnnn, decodes (cosid_decode) to yyyy * 10^14 +
#   n and encodes back to its text; no number twice for a tenant;
# - dense: each tenant's invoices are 1..k (no rollback, no restart, and each
#   tenant billed within the life of one entry);
# - a rolled-back invoice skips exactly its number;
# - a tenant whose entry was reclaimed (billed in the first statement, long
#   before), and tenants after a restart, continue above their numbers,
#   skipping at most 17 (what an entry fetched ahead) within a year;
# - saas_app cannot define, alter or drop a generator;
# - deleting 1,000 tenants drops their generators and backing sequences and
#   keeps their history (the last number at least the highest invoice); a
#   deleted tenant's generator issues nothing; the same id signed up again
#   (OVERRIDING SYSTEM VALUE) continues above its old numbers; a new tenant of
#   the same name starts at 1.
#
# The time of each phase is printed (define cost is what issue 29 is about).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);
use CosidTest;

my $TENANTS = 10_000;
my $FIRST = 1024;        # billed in one statement: every entry
my $WAVE = 500;          # tenants per pgbench wave
my $IDLE = 10.5;         # an entry may be reclaimed once idle for 10 s
my %doc = doc_blocks();
ok(defined $doc{'tenant-schema'}, 'docs/cookbook.md has the block tenant-schema');

my $t_all = time;
my $node = cosid_node('many_tenants', conf => [ "timezone = 'UTC'" ]);
is($node->safe_psql('postgres', 'SHOW cosid.max_generators'), '1024', 'cosid.max_generators is at its default');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION cosid');
$node->safe_psql('app', $doc{'tenant-schema'});
my $dir = $node->basedir;

# What the application runs (as docs/cookbook.md's tenant-use block does).
sub app
{
	my ($sql) = @_;
	return $node->safe_psql('app', $sql, extra_params => [ '-U', 'saas_app' ]);
}

sub sql
{
	return $node->safe_psql('app', $_[0]);
}

# pgbench as saas_app: (ok, transactions, output).
sub pgbench
{
	my ($script, @options) = @_;
	my $file = "$dir/pgbench_" . int(rand(1e9)) . '.sql';
	PostgreSQL::Test::Utils::append_to_file($file, "$script\n");
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-U', 'saas_app', @options, '-f', $file, '-h', $node->host,
			'-p', $node->port, 'app' ], '>', \$out, '2>', \$err);
	my $ok = $? == 0;
	my ($tx) = $out =~ /number of transactions actually processed: (\d+)/;
	my ($failed) = $out =~ /number of failed transactions: (\d+)/;
	$ok &&= !$failed;
	return ($ok, $tx // 0, "$out\n$err");
}

my %took;

# ---- sign-up: 10,000 tenants, 4 sessions, one tenant a transaction
my $t = time;
my ($ok, $tx, $log) = pgbench(q{INSERT INTO billing.tenants (name) VALUES ('tenant of client ' || :client_id);},
	'-c', 4, '-j', 2, '-t', $TENANTS / 4);
$took{signup} = time - $t;
ok($ok && $tx == $TENANTS, "$TENANTS tenants signed up from 4 sessions") or diag($log);
is( sql(q{SELECT count(*), count(*) FILTER (WHERE g.owner = 'billing'::regrole), min(t.id), max(t.id)
		FROM billing.tenants t LEFT JOIN cosid.generator g ON g.name = billing.invoice_generator(t.id)
		 AND g.strategy = 'segment'}),
	"$TENANTS|$TENANTS|1|$TENANTS",
	'every tenant has its generator inv_<id>, a segment generator owned by billing');
is(sql(q{SELECT count(*) FROM cosid.generator}), $TENANTS, 'and there is no other generator');
note(sprintf('sign-up: %.1f s, %.2f ms a tenant', $took{signup}, 1000 * $took{signup} / $TENANTS));

# ---- what saas_app may not do
for my $case (
	[ q{SELECT cosid_drop('inv_1')},                    'drop a tenant\'s generator' ],
	[ q{SELECT cosid_alter('inv_1', '{"step": 100}')},  'alter a tenant\'s generator' ],
	[ q{SELECT cosid_define('inv_x', '{"strategy": "segment"}')}, 'define a generator' ])
{
	my ($state) = psql_error($node, 'app', "SET ROLE saas_app; $case->[0]");
	is($state, '42501', "saas_app may not $case->[1] (42501)");
}

# ---- the first 1,024 tenants in one statement: every entry taken
$t = time;
app(qq{INSERT INTO billing.invoices (tenant_id, amount) SELECT id, 1 FROM billing.tenants WHERE id <= $FIRST});
my $first_end = time;
$took{first} = $first_end - $t;
is(sql('SELECT count(*) FROM cosid.stats()'), '1024', "$FIRST tenants billed: all 1024 shared entries taken");
my ($state, $msg) = psql_error($node, 'app', 'SET ROLE saas_app; '
	  . 'INSERT INTO billing.invoices (tenant_id, amount) VALUES (' . ($FIRST + 1) . ', 1)');
ok(!defined $state, 'one more tenant is billed at once: it takes the entry of one of the 1,024 (1.3: 53200)')
  or diag("$state: $msg");
is(sql('SELECT count(*) FROM cosid.stats()'), '1024', '... and shared memory still holds 1,024 of them');

# ---- the other 8,976 in waves of 500: 4 sessions, random tenants of the wave
my @wave_end = ($first_end);
my $invoices = $FIRST + 1;    # and the one more tenant's
my $waves_ok = 1;
$t = time;
my $slept = 0;
for (my ($w, $lo) = (1, $FIRST + 1); $lo <= $TENANTS; $w++, $lo += $WAVE)
{
	my $hi = $lo + $WAVE - 1;
	$hi = $TENANTS if $hi > $TENANTS;
	# the entries of the wave before the last one have been idle long enough
	my $ready = $wave_end[ $w >= 2 ? $w - 2 : 0 ] + $IDLE;
	if (time < $ready)
	{
		$slept += $ready - time;
		sleep($ready - time);
	}
	# 4 sessions, each as many invoices as the wave has tenants
	my $each = $hi - $lo + 1;
	my ($wok, $wtx, $wlog) = pgbench(
		"\\set t random($lo, $hi)\nINSERT INTO billing.invoices (tenant_id, amount) VALUES (:t, 1);",
		'-c', 4, '-j', 2, '-t', $each);
	push @wave_end, time;
	$invoices += $wtx;
	unless ($wok && $wtx == 4 * $each)
	{
		$waves_ok = 0;
		diag("wave $w (tenants $lo..$hi):\n$wlog");
		last;
	}
}
$took{waves} = time - $t;
ok($waves_ok, 'invoices for the other ' . ($TENANTS - $FIRST) . " tenants in waves of $WAVE, 4 sessions, none failed");
note(sprintf('waves: %.1f s (%.1f s of it waiting for entries to be idle), %d invoices', $took{waves}, $slept,
		$invoices));

# ---- what the recipe promises of the numbers
# d: each invoice with its number decoded through the tenant's generator
my $decoded = q{
	SELECT tenant_id, number, n, n / 100000000000000 AS year, n % 100000000000000 AS k
	FROM (SELECT tenant_id, number, cosid_decode(billing.invoice_generator(tenant_id), number) AS n
		  FROM billing.invoices) i};

sub check_numbers
{
	my ($what, $except) = @_;
	my $skip = $except ? "WHERE tenant_id NOT IN ($except)" : '';
	my $r = sql(qq{
		WITH d AS ($decoded)
		SELECT count(*),
		       count(DISTINCT tenant_id),
		       count(*) FILTER (WHERE number !~ '^INV-[0-9]{4}-[0-9]{6}\$'
		                          OR substr(number, 5, 4)::bigint <> year
		                          OR substr(number, 10)::bigint <> k
		                          OR cosid_encode(billing.invoice_generator(tenant_id), n) <> number),
		       (SELECT count(*) - count(DISTINCT (tenant_id, n)) FROM d)
		FROM d});
	my ($count, $tenants, $bad, $twice) = split /\|/, $r;
	is($bad, '0', "$what: every number is INV-yyyy-nnnnnn, decodes to yyyy * 10^14 + n and encodes back");
	is($twice, '0', "$what: no number twice for a tenant ($count invoices, $tenants tenants)");
	my $gaps = sql(qq{
		WITH d AS ($decoded)
		SELECT count(*) FROM (
			SELECT tenant_id, year FROM d $skip GROUP BY tenant_id, year
			HAVING min(k) <> 1 OR max(k) <> count(*) OR count(DISTINCT k) <> count(*)) g});
	is($gaps, '0', "$what: each tenant's invoices are numbered 1..k without a gap")
	  or diag(sql(qq{WITH d AS ($decoded) SELECT tenant_id, year, array_agg(k ORDER BY k)
		FROM d $skip GROUP BY 1, 2 HAVING min(k) <> 1 OR max(k) <> count(*) OR count(DISTINCT k) <> count(*)
		LIMIT 5}));
	return ($count, $tenants);
}

$t = time;
my ($count, $billed) = check_numbers('after the waves');
$took{check} = time - $t;
is($count, $invoices, 'every invoice pgbench inserted is there');
cmp_ok($billed, '>', 1024, "$billed tenants billed, more than the 1024 entries: entries churned");
cmp_ok(sql('SELECT count(*) FROM cosid.stats()'), '<=', 1024, 'at most 1024 tenants hold an entry');

# ---- a rolled-back invoice skips its number (tenants of the last wave, whose
# entries are live)
my @rolled = split /\n/, sql(qq{SELECT tenant_id FROM billing.invoices WHERE tenant_id > $TENANTS - $WAVE
	GROUP BY 1 ORDER BY 1 LIMIT 5});
my %max_before = map { split /\|/ } split /\n/, sql(qq{WITH d AS ($decoded)
	SELECT tenant_id, max(k) FROM d WHERE tenant_id IN (} . join(',', @rolled) . ') GROUP BY 1');
for my $id (@rolled)
{
	app(qq{BEGIN; INSERT INTO billing.invoices (tenant_id, amount) VALUES ($id, 1); ROLLBACK;
		INSERT INTO billing.invoices (tenant_id, amount) VALUES ($id, 1);});
}
my $after_rollback = sql(qq{WITH d AS ($decoded)
	SELECT count(*) FILTER (WHERE k > max_before), count(*) FILTER (WHERE k = max_before + 2)
	FROM d JOIN (VALUES } . join(',', map { "($_, $max_before{$_})" } @rolled)
	  . ') m(id, max_before) ON id = tenant_id');
is($after_rollback, scalar(@rolled) . '|' . scalar(@rolled),
	'after a rolled-back invoice, the next one skips exactly the rolled-back number');

# ---- tenants whose entries were reclaimed long ago, billed again
sub continue_above
{
	my ($what, $from, $to) = @_;
	sql(qq{CREATE TABLE before_$what AS WITH d AS ($decoded)
		SELECT tenant_id, max(n) AS n FROM d WHERE tenant_id BETWEEN $from AND $to GROUP BY 1});
	app(qq{INSERT INTO billing.invoices (tenant_id, amount)
		SELECT id, 1 FROM billing.tenants, generate_series(1, 2) WHERE id BETWEEN $from AND $to});
	my ($n, $above, $skips) = split /\|/, sql(qq{WITH d AS ($decoded),
		s AS (SELECT tenant_id, min(d.n) - b.n - 1 AS skip, count(*) AS c, max(d.n) - min(d.n) AS span,
			         max(d.year) > b.n / 100000000000000 AS new_year
			  FROM d JOIN before_$what b USING (tenant_id) WHERE d.n > b.n GROUP BY tenant_id, b.n)
		SELECT count(*), count(*) FILTER (WHERE c = 2 AND (new_year OR span = 1 AND skip BETWEEN 0 AND 17)),
		       string_agg(DISTINCT skip::text, ',' ORDER BY skip::text)
		FROM s});
	is($n, $to - $from + 1, "$what: every tenant billed again");
	is($above, $n, "$what: each continues above its numbers (skipped: $skips)");
}
# entries are reclaimed on demand only, so 1024 are held: the last two waves'
# and a few of the one before; 200 more are free once the wave before the last
# one has been idle for 10 seconds
my $ready = $wave_end[-2] + $IDLE;
sleep($ready - time) if time < $ready;
my $in_use = sql(q{SELECT count(*) FROM cosid.stats()
	WHERE name IN (SELECT 'inv_' || i FROM generate_series(1, 200) i)});
is($in_use, '0', 'the first 200 tenants hold no entry any more');
continue_above('reclaimed', 1, 200);

$node->restart;
continue_above('restarted', 201, 400);
check_numbers('the others', "SELECT generate_series(1, 400) UNION ALL VALUES " . join(',', map { "($_)" } @rolled));

# ---- deleting 1,000 tenants drops their generators
sql(qq{CREATE TABLE deleted AS WITH d AS ($decoded)
	SELECT t.id, max(d.n) AS n FROM billing.tenants t LEFT JOIN d ON d.tenant_id = t.id
	WHERE t.id % 10 = 0 GROUP BY 1});
$t = time;
is(app('DELETE FROM billing.tenants WHERE id % 10 = 0'), '', 'saas_app deletes 1,000 tenants');
$took{delete} = time - $t;
is( sql(q{SELECT count(*) FILTER (WHERE g.name IS NULL), count(*) FILTER (WHERE d.n IS NULL OR h.last_number >= d.n),
		(SELECT count(*) FROM billing.invoices WHERE tenant_id % 10 = 0)
		FROM deleted d LEFT JOIN cosid.generator g ON g.name = 'inv_' || d.id
		LEFT JOIN cosid.generator_history h ON h.name = 'inv_' || d.id}),
	'1000|1000|0',
	'their generators are dropped, their history kept (at or above their last invoice), their invoices gone');
is( sql(q{SELECT (SELECT count(*) FROM cosid.generator),
		(SELECT count(*) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		 WHERE s.nspname = 'cosid' AND c.relkind = 'S')}),
	'9000|9000', 'the others keep theirs: 9,000 generators and backing sequences left');
($state, $msg) = psql_error($node, 'app',
	'SET ROLE saas_app; INSERT INTO billing.invoices (tenant_id, amount) VALUES (10, 1)');
like("$state: $msg", qr/^42704: generator "inv_10" does not exist/, 'a deleted tenant\'s generator issues nothing');

# the same id again (a tenant restored with its id): above its old numbers
app(q{INSERT INTO billing.tenants (id, name) OVERRIDING SYSTEM VALUE VALUES (10, 'tenant 10 restored')});
app(q{INSERT INTO billing.invoices (tenant_id, amount) VALUES (10, 1)});
my ($old, $new) = split /\|/, sql(qq{WITH d AS ($decoded)
	SELECT (SELECT n FROM deleted WHERE id = 10), max(n) FROM d WHERE tenant_id = 10});
cmp_ok($new, '>', $old, "tenant 10 restored with its id continues above its old numbers ($old, now $new)");
# a new tenant of a deleted one's name: a new id, from 1
my $id = app(q{INSERT INTO billing.tenants (name) SELECT name FROM billing.tenants WHERE id = 11 RETURNING id});
app(qq{INSERT INTO billing.invoices (tenant_id, amount) VALUES ($id, 1)});
like(app(qq{SELECT number FROM billing.invoices WHERE tenant_id = $id}), qr/^INV-[0-9]{4}-000001$/,
	"a new tenant (id $id) starts at 1");

$took{all} = time - $t_all;
diag(sprintf('047: %.0f s in all: sign-up of %d tenants %.1f s (%.2f ms each), first %d tenants billed %.1f s, '
		  . 'waves %.1f s, checks %.1f s, deleting 1,000 tenants %.1f s',
		$took{all}, $TENANTS, $took{signup}, 1000 * $took{signup} / $TENANTS, $FIRST, $took{first}, $took{waves},
		$took{check}, $took{delete}));
$node->stop;
done_testing();
