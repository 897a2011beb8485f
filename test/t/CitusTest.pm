# A Citus cluster for cosid's TAP tests (issue 22): a coordinator and N
# workers, each a PostgreSQL::Test::Cluster node preloading 'citus,cosid',
# with citus and cosid created in one database on every node.
#
#   use CitusTest;
#   plan skip_all => $why if my $why = citus_missing();
#   my $c = citus_cluster(workers => 2);          # slots 0 (coordinator), 1, 2
#   $c->{coordinator}->safe_psql($c->{db}, ...);
#   my $w3 = citus_add_worker($c);                # slot 3, citus_add_node'd
#   citus_on_all($c, $sql);                       # run $sql on every node
#
# citus_cluster options:
#   workers => N      workers (2 unless given)
#   db => 'name'      the database (cosid_citus unless given), made on every node
#   slots => [...]    cosid.slot of the coordinator, then of each worker
#                     (0, 1, 2, ... unless given); a word ('lease', ...) is
#                     written quoted
#   conf => [...]     more postgresql.conf lines on every node
#   node_conf => sub { my ($name, $index) = @_; [...] }
#                     more lines per node (index 0 is the coordinator)
#   cosid_on_workers => 0
#                     CREATE EXTENSION cosid on the coordinator only (before
#                     the workers are added), so that Citus propagates it;
#                     by default it is created on every node
# citus_add_worker takes slot => and conf => for the new node, and
# before_add => sub { my ($node) = @_; ... } run on it once it is started
# and before the coordinator citus_add_node's it; it returns the node.
# The nodes reach each other over TCP on 127.0.0.1 (the address Citus keeps in
# pg_dist_node), with trust for the test's OS user.
package CitusTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

our @EXPORT = qw(citus_missing citus_cluster citus_add_worker citus_on_all
  citus_nodes citus_stop);

# Why Citus cannot be used with the PostgreSQL in PATH (older than 16, or
# citus.so / citus.control not installed: scripts/pg.sh builds it from the
# vendored tarball), or undef when it can.
sub citus_missing
{
	my $probe = PostgreSQL::Test::Cluster->new('citus_probe');
	my ($major) = $probe->pg_version =~ /^(\d+)/;
	return "Citus builds against PostgreSQL 16 and later, this is $major" if $major < 16;
	my $pg_config = $probe->installed_command('pg_config');
	my $libdir = `$pg_config --pkglibdir`;
	my $sharedir = `$pg_config --sharedir`;
	chomp($libdir, $sharedir);
	return "Citus is not installed (citus.so in $libdir, citus.control) (scripts/pg.sh builds it from the vendored "
	  . "tarball citus-*.tar.gz in ../shared/vendor or \$COSID_VENDOR)"
	  unless -f "$libdir/citus.so" && -f "$sharedir/extension/citus.control";
	return undef;
}

sub slot_line
{
	my ($slot) = @_;
	return $slot =~ /^\d+$/ ? "cosid.slot = $slot" : "cosid.slot = '$slot'";
}

# A new node for the cluster, started, with citus and cosid in the database.
sub citus_node
{
	my ($c, $name, $slot, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf(
		'postgresql.conf', join("\n",
			"shared_preload_libraries = 'citus,cosid'",
			slot_line($slot),
			"listen_addresses = '127.0.0.1'",
			# Citus commits multi-node writes with two-phase commit
			'max_prepared_transactions = 100',
			'max_connections = 100',
			'fsync = off',
			# the background rebalancer picks up its tasks quickly
			'citus.background_task_queue_interval = 200ms',
			# shard moves copy and catch up by logical replication
			'wal_level = logical', 'max_replication_slots = 20', 'max_wal_senders = 20',
			'citus.shard_count = 4',
			@{ $c->{conf} }, @{ $conf // [] }));
	# Citus connects over TCP to 127.0.0.1 as the same OS user
	$node->append_conf('pg_hba.conf', 'host all all 127.0.0.1/32 trust');
	$node->start;
	$node->safe_psql('postgres', "CREATE DATABASE $c->{db}") unless $c->{db} eq 'postgres';
	$node->safe_psql($c->{db}, 'CREATE EXTENSION citus');
	$node->safe_psql($c->{db}, 'CREATE EXTENSION cosid')
	  if $name eq 'coordinator' || $c->{cosid_on_workers};
	$node->{_cosid_slot} = $slot;
	return $node;
}

# Start a coordinator and workers (see above): a hash with coordinator,
# workers (array), db, and the options.
sub citus_cluster
{
	my (%opt) = @_;
	my $n = $opt{workers} // 2;
	my $c = {
		db => $opt{db} // 'cosid_citus',
		conf => $opt{conf} // [],
		node_conf => $opt{node_conf} // sub { [] },
		cosid_on_workers => $opt{cosid_on_workers} // 1,
		slots => $opt{slots} // [ 0 .. $n ],
		workers => [],
	};
	my $coord = citus_node($c, 'coordinator', $c->{slots}[0], $c->{node_conf}->('coordinator', 0));
	$c->{coordinator} = $coord;
	$coord->safe_psql($c->{db}, "SELECT citus_set_coordinator_host('127.0.0.1', " . $coord->port . ')');
	for my $i (1 .. $n)
	{
		my $name = "worker$i";
		push @{ $c->{workers} },
		  citus_node($c, $name, $c->{slots}[$i] // $i, $c->{node_conf}->($name, $i));
	}
	$coord->safe_psql($c->{db}, "SELECT citus_add_node('127.0.0.1', " . $_->port . ')')
	  for @{ $c->{workers} };
	return $c;
}

# One more worker, started, citus_add_node'd from the coordinator: slot =>
# its cosid.slot (the next number unless given), conf => [...].
sub citus_add_worker
{
	my ($c, %opt) = @_;
	my $i = @{ $c->{workers} } + 1;
	my $name = "worker$i";
	my $slot = $opt{slot} // $c->{slots}[$i] // $i;
	my $conf = [ @{ $c->{node_conf}->($name, $i) }, @{ $opt{conf} // [] } ];
	my $w = citus_node($c, $name, $slot, $conf);
	$opt{before_add}->($w) if $opt{before_add};
	$c->{coordinator}->safe_psql($c->{db}, "SELECT citus_add_node('127.0.0.1', " . $w->port . ')');
	push @{ $c->{workers} }, $w;
	return $w;
}

# Every node: the coordinator, then the workers.
sub citus_nodes
{
	my ($c) = @_;
	return ($c->{coordinator}, @{ $c->{workers} });
}

# Run $sql on every node (each with its own connection): the outputs.
sub citus_on_all
{
	my ($c, $sql) = @_;
	return map { $_->safe_psql($c->{db}, $sql) } citus_nodes($c);
}

sub citus_stop
{
	my ($c) = @_;
	$_->stop for reverse citus_nodes($c);
}

1;
