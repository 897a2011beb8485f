# Helpers shared by cosid's TAP tests.
package CosidTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Time::HiRes qw(usleep);

our @EXPORT = qw(cosid_node crash_restart);

# A new, started node with cosid preloaded (unless preload => 0) and any
# extra postgresql.conf lines given as conf => [...].
sub cosid_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'cosid'")
	  if $opt{preload} // 1;
	$node->append_conf('postgresql.conf', $_) for @{ $opt{conf} // [] };
	$node->start unless $opt{no_start};
	return $node;
}

# kill -9 the postmaster, then start again once the old one is gone (its
# children exit on their own when they notice; until then the new postmaster
# finds their shared memory in use and refuses to start, so retry).
sub crash_restart
{
	my ($node) = @_;
	my $pid = $node->{_pid};
	$node->kill9;
	for (my $i = 0; $i < 600 && kill(0, $pid); $i++)
	{
		usleep(50_000);
	}
	for (my $i = 0; $i < 100; $i++)
	{
		return if $node->start(fail_ok => 1);
		usleep(200_000);
	}
	die "node " . $node->name . " did not start after kill -9";
}

1;
