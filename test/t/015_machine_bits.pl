# cosid.machine_bits and cosid.slot: JS_SAFE layouts are accepted at 3 bits
# or less; the slot shows up in every id; a slot that does not fit the bits
# keeps the server from starting; raising machine_bits above a generator's
# node bits stops that generator with a clear error instead of reusing slots;
# cosid.slot = 'lease' without cosid.lease_store keeps the server from starting.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CosidTest;

my $node = cosid_node('bits', conf => [ 'cosid.machine_bits = 3', 'cosid.slot = 5' ]);
$node->safe_psql('postgres', 'CREATE EXTENSION cosid');

is($node->safe_psql('postgres', q{
	SELECT cosid_define('js', '{"layout": "JS_SAFE_MS"}');
	SELECT cosid_define('js_s', '{"layout": "JS_SAFE_S"}');
	SELECT count(*) FROM cosid.generators WHERE js_safe}),
	"\n\n2", 'JS_SAFE_MS and JS_SAFE_S are accepted with cosid.machine_bits = 3');
is($node->safe_psql('postgres', q{
	SELECT bool_and(cosid_is_js_safe(id)) AND bool_and((cosid_unpack('js', id)).node = 5)
	FROM (SELECT cosid_next('js') AS id FROM generate_series(1, 1000)) s}),
	't', 'their ids are JavaScript-safe and carry slot 5');
is($node->safe_psql('postgres', 'SELECT slot FROM cosid_slot()'), '5', 'cosid_slot() shows slot 5');

# A slot that does not fit in machine_bits: the server refuses to start.
$node->stop;
$node->append_conf('postgresql.conf', 'cosid.slot = 8');
ok(!$node->start(fail_ok => 1), 'slot 8 with 3 machine bits: the server does not start');
like(slurp_file($node->logfile), qr/cosid\.slot 8 does not fit in cosid\.machine_bits = 3/,
	'and the log says why');

# Back to a fitting slot, but with more machine bits than JS_SAFE has node bits.
$node->append_conf('postgresql.conf', "cosid.slot = 0\ncosid.machine_bits = 10");
$node->start;
my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT cosid_next('js')");
isnt($ret, 0, 'a JS_SAFE generator does not issue once machine_bits exceeds its node bits');
like($err, qr/ERROR:  55000: generator "js" has 3 node bits, fewer than cosid.machine_bits \(10\)/,
	'with 55000 and a message naming both');

# lease mode needs a lease store: without one the server does not start
$node->stop;
$node->append_conf('postgresql.conf', "cosid.slot = 'lease'");
my $log_offset = -s $node->logfile;
ok(!$node->start(fail_ok => 1), "cosid.slot = 'lease' without cosid.lease_store: the server does not start");
like(slurp_file($node->logfile, $log_offset), qr/cosid\.slot = 'lease' needs cosid\.lease_store/,
	'and the log says why');

done_testing();
