# gen_ulid_monotonic() keeps increasing across a clean restart and a crash
# (kill -9), and the extension's objects survive both.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('restart');

$node->safe_psql('postgres', q{
	CREATE EXTENSION cosid;
	CREATE TABLE ids (phase int, n bigserial, u ulid PRIMARY KEY DEFAULT gen_ulid_monotonic());
});

sub make_ids
{
	my ($phase, $count) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO ids (phase) SELECT $phase FROM generate_series(1, $count)");
}

# Every ULID of a later phase is above every ULID of the phases before it,
# and within the table the ULIDs increase in insertion order.
sub check_order
{
	my ($phase, $what) = @_;
	my $res = $node->safe_psql('postgres', qq{
		SELECT (SELECT min(u) FROM ids WHERE phase = $phase)
			 > (SELECT max(u) FROM ids WHERE phase < $phase),
			   (SELECT count(*) FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM ids) s
				WHERE u <= prev)
	});
	is($res, "t|0", "$what: ULIDs after it are above all before it, in order");
}

make_ids(1, 20000);
my $before = $node->safe_psql('postgres', 'SELECT max(u) FROM ids');

$node->restart;
make_ids(2, 20000);
check_order(2, 'clean restart');

crash_restart($node);
make_ids(3, 20000);
check_order(3, 'crash (kill -9) and restart');

is($node->safe_psql('postgres', "SELECT count(*) FROM ids"), '60000', 'no row lost');
is($node->safe_psql('postgres',
	"SELECT '$before'::ulid < gen_ulid_monotonic() AND gen_ulid() > '$before'::ulid"),
	't', 'both generators still work after the crash');
is($node->safe_psql('postgres',
	"SELECT extversion = default_version FROM pg_extension, pg_available_extensions WHERE extname = 'cosid' AND name = 'cosid'"),
	't', 'extension survives, at the version it was created with');

$node->stop;
done_testing();
