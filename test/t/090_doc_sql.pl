# Every ```sql block of README.md and docs/*.md runs, in the order a reader
# meets it (issue 27): README.md first, then the pages of docs/ in the order
# of @PAGES (the README's list), each page in a fresh database, with psql
# (-X, ON_ERROR_STOP, aligned output as a reader sees it).  One test per
# block, named FILE:LINE (the line of its opening fence); a failure's
# diagnostics give psql's error and the page's line of the failing statement.
# A page whose blocks never run CREATE EXTENSION cosid gets it in its database
# first (its reader installed cosid on an earlier page).  Roles a page creates
# are dropped after it (roles belong to the server, not the database).
#
# Conventions (for whoever writes the documentation):
#
# - ```sql is for SQL a reader runs as it is.  Signatures, psql output,
#   configuration and shell lines are tagged otherwise (```text, ```sh, or
#   nothing).
# - Documented output: a ```text block right after a ```sql block (blank
#   lines between at most) is what psql prints on stdout for the whole block
#   (command tags, results in psql's aligned format); it is compared.  Runs
#   of spaces match runs of spaces and a ruler line (---+---) any ruler, so
#   that column widths may differ; these placeholders stand for what is
#   random or depends on the clock, and match only that:
#     <id>    an integer (a snowflake or segment id)
#     <ulid>  26 Crockford base32 characters
#     <uuid>  a uuid in its canonical text
#     <time>  a timestamptz as psql prints it (2026-11-29 21:33:47.418+00)
#     <date>  a date as yyyyMMdd (a periodic segment number's period)
#     <year>  a year as yyyy (a yearly segment number's period)
#   Everything else must be what psql prints.  Comments after a statement
#   (-- 3844) are for the reader and are not compared: show output that
#   matters in a ```text block.
# - <!-- runs in: test/t/NAME.pl --> on the line before a block's
#   <!-- test: BLOCK --> marker (doc_blocks in CosidTest.pm) says that the
#   block needs what no server of this test has and is run there instead;
#   this test checks that the file exists, calls doc_blocks and names BLOCK,
#   so the marker cannot point at a test that does not run it.  No page
#   needs one today; it exists for blocks that need a cluster of a kind this
#   test does not make.
#
# Servers (what the pages say their reader has; each is made here):
#
# - one server (cosid preloaded, slot 0, cosid.machine_bits = 3 as the
#   Cookbook's JS_SAFE_MS generator says, TimeZone UTC) for README.md and
#   every page but the two below;
# - operations.md: server a, its own lease store (cosid.lease_store names
#   the page's database app on a, reached as the bootstrap superuser: the
#   page grants cosid.segment_acquire to its servers' roles only after its
#   first shared segment generator), and server b beside it.  The pages
#   name the servers a.example/b.example and a/b: a and b listen on
#   127.0.0.1 and 127.0.0.2 on one port, and each server has PGHOSTADDR of
#   the other in its environment, so that a connection string the page
#   writes (host=b dbname=app) reaches the other server.  The blocks that
#   the page says run "on every server" (marked pglogical-every-server and
#   native-every-server) also run on b, with b's node name and dsn where
#   the page says so; then the subscriptions "on a" reach b.  The block
#   marked slot-confirm (what a copy of a server runs) runs on a copy of a
#   made then, whose slot is unconfirmed as the page says.  pglogical
#   (with pglogical installed) and native logical replication both ways
#   (PostgreSQL 16 and later, origin = none) need what not every version
#   has: their blocks skip, saying why, where it is missing.
# - citus.md: a Citus coordinator and one worker (CitusTest.pm), cosid
#   created on the coordinator only, as the page says; the page skips,
#   saying why, where Citus is missing (as 080-083 do).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use File::Basename qw(basename dirname);
use CosidTest;
use CitusTest;

# the pages, in the order of the README's "Documentation" list
my @PAGES = qw(installation generators reference operations citus cookbook migrations security benchmarks);

my @tries = ((defined $ENV{COSID_SRC} ? ($ENV{COSID_SRC}) : ()), dirname(__FILE__) . '/../..');
my ($root) = grep { -f "$_/README.md" && -d "$_/docs" } @tries;
die 'no README.md and docs/ (looked in ' . join(', ', @tries) . ')' unless defined $root;
my $testdir = dirname(__FILE__);

my %listed = map { ($_ => 1) } @PAGES;
for my $f (sort glob("$root/docs/*.md"))
{
	my $page = basename($f, '.md');
	fail("docs/$page.md is in \@PAGES of 090_doc_sql.pl") unless $listed{$page};
}

# The fenced blocks of a file: a list of hashes (line: of the opening fence,
# tag, text with the block's indentation taken off, markers: the HTML
# comments on the lines right above it, output: the text of a ```text block
# right after a ```sql block).
sub blocks_of
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "could not read $file: $!";
	my @lines = <$fh>;
	close($fh);
	my @blocks;
	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^([ \t]*)```([A-Za-z0-9_-]*)[ \t]*$/;
		my ($indent, $tag) = ($1, $2);
		my %blk = (line => $i + 1, tag => $tag, text => '', markers => []);
		for (my $j = $i - 1; $j >= 0 && $lines[$j] =~ /^[ \t]*(<!--.*-->)[ \t]*$/; $j--)
		{
			unshift @{ $blk{markers} }, $1;
		}
		my $j;
		for ($j = $i + 1; $j < @lines; $j++)
		{
			last if $lines[$j] =~ /^\Q$indent\E```[ \t]*$/;
			(my $l = $lines[$j]) =~ s/^\Q$indent\E//;
			$blk{text} .= $l;
		}
		die "$file:$blk{line}: the block has no closing fence" if $j >= @lines;
		$blk{end} = $j + 1;
		push @blocks, \%blk;
		$i = $j;
	}
	# a ```text block after a ```sql block, with blank lines between at most
	for my $k (1 .. $#blocks)
	{
		my ($prev, $blk) = ($blocks[ $k - 1 ], $blocks[$k]);
		next unless $prev->{tag} eq 'sql' && $blk->{tag} eq 'text' && !@{ $blk->{markers} };
		next if grep { $lines[$_] !~ /^\s*$/ } $prev->{end} .. $blk->{line} - 2;
		$prev->{output} = $blk->{text};
		$prev->{output_line} = $blk->{line};
	}
	return @blocks;
}

# A documented output as a regular expression (see the conventions above).
my %PLACEHOLDER = (
	id => '-?[0-9]+',
	ulid => '[0-7][0-9A-HJKMNP-TV-Z]{25}',
	uuid => '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
	date => '[0-9]{8}',
	year => '[0-9]{4}',
	time => '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?[+-][0-9]{2}(?::[0-9]{2})?',
);

sub output_regex
{
	my ($expected) = @_;
	my @re;
	for my $line (split /\n/, normalize($expected), -1)
	{
		if ($line =~ /^-+(\+-+)*$/)
		{
			push @re, '-+(?:\+-+)*';
			next;
		}
		my $re = '';
		for my $part (split /(<(?:id|ulid|uuid|time|date|year)>| +)/, $line)
		{
			next if $part eq '';
			if ($part =~ /^<(\w+)>$/) { $re .= $PLACEHOLDER{$1}; }
			elsif ($part =~ /^ +$/) { $re .= ' +'; }
			else { $re .= quotemeta($part); }
		}
		push @re, $re;
	}
	my $all = join('\n', @re);
	return qr/\A$all\z/;
}

# Trailing spaces and blank lines off.
sub normalize
{
	my ($text) = @_;
	$text =~ s/[ \t]+$//mg;
	$text =~ s/\n+\z//;
	$text =~ s/\A\n+//;
	return $text;
}

# Run SQL through psql as a reader would: (exit code, stdout, stderr).
sub run_psql
{
	my ($node, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '--pset=pager=off', '-h', $node->host, '-p', $node->port,
		  '-d', $db, '-f', '-' ],
		'<', \$sql, '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

sub server_roles
{
	my ($node) = @_;
	return split /\n/, $node->safe_psql('postgres', q{SELECT rolname FROM pg_roles ORDER BY 1});
}

# Run one block as a test named FILE:LINE: it passes when psql succeeds and
# prints the documented output, if the page shows one.
sub run_block
{
	my ($node, $db, $short, $blk) = @_;
	my $name = "$short:$blk->{line}";
	my ($rc, $out, $err) = run_psql($node, $db, $blk->{text});
	if ($rc != 0)
	{
		# psql names the line of its input (-f -) where the failing statement ends
		my $at = $err =~ /^psql:<stdin>:(\d+): /m ? "$short:" . ($blk->{line} + $1) : $name;
		fail($name);
		diag("$at: psql failed (exit $rc):\n$err");
		return 0;
	}
	if (defined $blk->{output})
	{
		my $re = output_regex($blk->{output});
		my $got = normalize($out);
		unless ($got =~ $re)
		{
			fail($name);
			diag("$name: psql's output differs from the documented output ($short:$blk->{output_line}):\n"
				  . "---- documented\n" . normalize($blk->{output}) . "\n---- psql printed\n$got\n----");
			return 0;
		}
	}
	pass($name);
	return 1;
}

# What a block needs that a server may lack: undef, or why it cannot run.
my ($major) = PostgreSQL::Test::Cluster->new('probe')->pg_version =~ /^(\d+)/;
my $no_pglogical = pglogical_missing();
my $no_citus = citus_missing();

sub missing_for
{
	my ($text) = @_;
	return "pglogical is not installed for this PostgreSQL: $no_pglogical"
	  if $text =~ /pglogical/ && defined $no_pglogical;
	return "origin = none (native logical replication both ways) needs PostgreSQL 16 or later, this is $major"
	  if $text =~ /origin = none/ && $major < 16;
	return undef;
}

sub test_name_of
{
	my ($blk) = @_;
	for my $m (@{ $blk->{markers} })
	{
		return $1 if $m =~ /^<!-- test: (\S+) -->$/;
	}
	return undef;
}

# A block marked <!-- runs in: FILE -->: the file must read it by name.
sub check_runs_in
{
	my ($short, $blk, $file) = @_;
	my $name = "$short:$blk->{line}";
	my $block = test_name_of($blk);
	my $path = "$testdir/" . basename($file);
	my $text = '';
	if (open(my $fh, '<', $path))
	{
		$text = do { local $/; <$fh> };
		close($fh);
	}
	my $ok = $file =~ m{^test/t/[\w.-]+\.pl$} && defined $block && $text =~ /\bdoc_blocks\b/
	  && $text =~ /(['"])\Q$block\E\1/;
	ok($ok, "$name (runs in $file)")
	  or diag("$name: <!-- runs in: $file --> needs a <!-- test: NAME --> marker whose NAME the file (which "
		  . "must exist and call doc_blocks) names; " . (defined $block ? "\"$block\" not found in $path" : 'none'));
}

# Run a page's ```sql blocks in order, in database $db of $node, made here
# (with cosid unless the page creates it) unless made => 1.  hooks => { NAME
# => sub } runs the sub after the block marked <!-- test: NAME --> passed;
# on => { NAME => sub } runs that block on the server the sub returns (in its
# database $db) instead.
sub run_page
{
	my ($node, $db, $file, %opt) = @_;
	my %hooks = %{ $opt{hooks} // {} };
	my %on = %{ $opt{on} // {} };
	my $short = $file eq 'README.md' ? $file : "docs/$file";
	my @sql = grep { $_->{tag} eq 'sql' } blocks_of("$root/$short");
	my @roles = server_roles($node);
	unless ($opt{made})
	{
		$node->safe_psql('postgres', "CREATE DATABASE $db");
		$node->safe_psql($db, 'CREATE EXTENSION cosid')
		  unless grep { $_->{text} =~ /^\s*CREATE EXTENSION (IF NOT EXISTS )?cosid\b/mi } @sql;
	}
	note("$short: sql blocks: " . scalar(@sql) . ', ' . scalar(grep { defined $_->{output} } @sql)
		  . ' with documented output');
	for my $blk (@sql)
	{
		my ($runs_in) = map { /^<!-- runs in: (\S+) -->$/ ? ($1) : () } @{ $blk->{markers} };
		if (defined $runs_in)
		{
			check_runs_in($short, $blk, $runs_in);
			next;
		}
		if (defined(my $why = missing_for($blk->{text})))
		{
		  SKIP: { skip("$short:$blk->{line}: $why", 1); }
			next;
		}
		my $tn = test_name_of($blk);
		my $server = defined $tn && $on{$tn} ? $on{$tn}->($blk) : $node;
		my $ok = run_block($server, $db, $short, $blk);
		$hooks{$tn}->($blk) if $ok && defined $tn && $hooks{$tn};
	}
	# roles belong to the server: drop the page's
	my %had = map { ($_ => 1) } @roles;
	for my $r (grep { !$had{$_} } server_roles($node))
	{
		$node->psql($db, qq{DROP OWNED BY "$r"});
		$node->psql('postgres', qq{DROP ROLE "$r"});
	}
}

# ---- README.md and the pages on one server
my $node = cosid_node('docs', conf => [ 'cosid.machine_bits = 3', "timezone = 'UTC'" ]);
run_page($node, 'doc_readme', 'README.md');
for my $page (grep { $_ ne 'operations' && $_ ne 'citus' } @PAGES)
{
	run_page($node, "doc_$page", "$page.md");
}
$node->stop;

# ---- operations.md: servers a and b (see the header)
{
	my $pglogical = !defined $no_pglogical;
	my $srv_a = PostgreSQL::Test::Cluster->new('a');
	my $srv_b = PostgreSQL::Test::Cluster->new('b', port => $srv_a->port, own_host => 1);
	my %addr = (a => '127.0.0.1', b => '127.0.0.2');
	my %other = (a => $srv_b, b => $srv_a);
	for my $n ($srv_a, $srv_b)
	{
		my $self = $n->name;
		$n->init;
		$n->append_conf('postgresql.conf', $_)
		  for (
			"shared_preload_libraries = '" . ($pglogical ? 'cosid,pglogical' : 'cosid') . "'",
			'cosid.slot = ' . ($self eq 'a' ? 1 : 2),
			"listen_addresses = '$addr{$self}'",
			"timezone = 'UTC'",
			'wal_level = logical', 'max_replication_slots = 10', 'max_wal_senders = 10', 'max_worker_processes = 16',
			# a's own database app is the lease store (as the bootstrap superuser)
			"cosid.lease_store = 'hostaddr=$addr{a} port=" . $srv_a->port . " dbname=app'");
		$n->append_conf('pg_hba.conf', "host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust");
		# as pglogical_node (CosidTest.pm) does, where the server has the parameter
		$n->append_conf('postgresql.conf', "output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'")
		  if $pglogical && CosidTest::has_parameter($n, 'output_plugin_libraries');
	}
	for my $n ($srv_a, $srv_b)
	{
		local $ENV{PGHOSTADDR} = $addr{ $other{ $n->name }->name };
		$n->start;
	}
	$srv_b->safe_psql('postgres', 'CREATE DATABASE app');
	# the blocks "on every server" also run on b, as the page says
	my $on_b = sub {
		my ($text, $line) = @_;
		$srv_b->safe_psql('app', 'CREATE EXTENSION IF NOT EXISTS cosid') unless $text =~ /CREATE EXTENSION cosid/;
		my ($rc, $out, $err) = run_psql($srv_b, 'app', $text);
		is($rc, 0, "docs/operations.md:$line: the same block on server b") or diag($err);
	};
	my %hooks = (
		'pglogical-every-server' => sub {
			(my $text = $_[0]{text}) =~ s/node_name := 'a'/node_name := 'b'/;
			$text =~ s/host=a\.example/host=b.example/;
			$on_b->($text, $_[0]{line});
		},
		'native-every-server' => sub { $on_b->($_[0]{text}, $_[0]{line}) });
	# "A copy of a server is not the same server": its cosid_slot_confirm()
	# runs on a copy of a (a base backup started as a primary of its own, as
	# 064_server_copies.pl makes one), without the replication a has (its
	# subscriptions would connect to b from the copy too)
	my $copy;
	my %on = (
		'slot-confirm' => sub {
			$srv_a->backup('copy');
			$copy = PostgreSQL::Test::Cluster->new('copy');
			$copy->init_from_backup($srv_a, 'copy');
			$copy->append_conf('postgresql.conf', $_)
			  for ("shared_preload_libraries = 'cosid'", "listen_addresses = ''", 'max_logical_replication_workers = 0');
			$copy->start;
			ok($copy->poll_query_until('app', q{SELECT state = 'unconfirmed' FROM cosid_slot()}),
				"docs/operations.md:$_[0]{line}: the copy of server a holds slot 1 unconfirmed");
			return $copy;
		});
	run_page($srv_a, 'app', 'operations.md', hooks => \%hooks, on => \%on);
	$_->stop('immediate') for grep { defined } ($copy, $srv_a, $srv_b);
}

# ---- citus.md: a coordinator and a worker
if (defined $no_citus)
{
	for my $blk (grep { $_->{tag} eq 'sql' } blocks_of("$root/docs/citus.md"))
	{
	  SKIP: { skip("docs/citus.md:$blk->{line}: $no_citus", 1); }
	}
}
else
{
	my $c = citus_cluster(workers => 1, db => 'doc_citus', cosid_on_workers => 0, conf => ["timezone = 'UTC'"]);
	run_page($c->{coordinator}, 'doc_citus', 'citus.md', made => 1);
	citus_stop($c);
}

done_testing();
