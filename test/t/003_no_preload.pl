# Without shared_preload_libraries the ulid type and gen_ulid() work, and
# gen_ulid_monotonic() fails with 55000 and a hint that says what to do.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('no_preload', preload => 0);
$node->safe_psql('postgres', 'CREATE EXTENSION cosid');

is($node->safe_psql('postgres', "SELECT '01htqw311n1kr5g0y75m3ef00h'::ulid"),
	'01HTQW311N1KR5G0Y75M3EF00H', 'ulid I/O works without preloading');
is($node->safe_psql('postgres',
	'SELECT count(DISTINCT gen_ulid()) FROM generate_series(1, 1000)'),
	'1000', 'gen_ulid() works without preloading');

my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT gen_ulid_monotonic()");
isnt($ret, 0, 'gen_ulid_monotonic() fails without preloading');
like($stderr, qr/ERROR:  55000: gen_ulid_monotonic\(\) needs cosid to be loaded at server start/,
	'with SQLSTATE 55000 and a message that says why');
like($stderr, qr/HINT:  Add cosid to shared_preload_libraries/, 'and a hint naming shared_preload_libraries');

$node->stop;
done_testing();
