#!/usr/bin/perl
# Validate a META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/spec/,
# the rules of the v1 JSON schemas of pgxn/meta), then against what this
# project promises.  Debian has no PGXN validator package, so this is ours.
#
#   test/package/pgxn_meta.pl [--root DIR] [--control FILE] META.json
#
# --root DIR      the distribution's top directory: every path in provides
#                 (file, docfile) must name a file under it (default: the
#                 directory of META.json)
# --control FILE  the extension's control file: the distribution and the
#                 extension version must be its default_version in semver
#                 (1.1 -> 1.1.0), and the project's own keys (resources,
#                 release_status, prereqs with PostgreSQL >= 15.0.0) are required
#
# Prints one line per problem and exits 1, or prints "... valid" and exits 0.
# Core Perl only (JSON::PP, B).
use strict;
use warnings;
use B ();
use File::Basename qw(dirname);
use JSON::PP ();

my ($root, $control);
while (@ARGV && $ARGV[0] =~ /^--/) {
	my $opt = shift @ARGV;
	if ($opt eq '--root') { $root = shift @ARGV }
	elsif ($opt eq '--control') { $control = shift @ARGV }
	else { die "usage: $0 [--root DIR] [--control FILE] META.json\n" }
}
@ARGV == 1 or die "usage: $0 [--root DIR] [--control FILE] META.json\n";
my $file = $ARGV[0];
$root //= dirname($file);

my @errors;
sub err { push @errors, join('', @_) }

my $text = do {
	open my $fh, '<:raw', $file or die "$file: $!\n";
	local $/;
	<$fh>;
};
my $meta = eval { JSON::PP->new->utf8->decode($text) };
if (!defined $meta) {
	print "$file: not JSON: $@";
	exit 1;
}

# --- JSON types -------------------------------------------------------------

sub is_obj { ref $_[0] eq 'HASH' }
sub is_arr { ref $_[0] eq 'ARRAY' }
sub is_num {
	my $v = shift;
	return 0 if !defined $v || ref $v;
	my $f = B::svref_2object(\$v)->FLAGS;
	return ($f & (B::SVp_IOK | B::SVp_NOK)) && !($f & B::SVp_POK);
}
sub is_str { my $v = shift; defined $v && !ref $v && !is_num($v) }

# --- value kinds of the spec --------------------------------------------------

my $SEMVER = qr/(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)
	(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?
	(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?/x;
my $RANGE_ONE = qr/(?:(?:[=!]=|[<>]=?)\s*)?(?:$SEMVER|0)/;
my @LICENSES = qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd
	gfdl_1_2 gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1
	openssl perl_5 postgresql qpl_1_0 ssleay sun zlib open_source restricted
	unrestricted unknown);
my %LICENSE = map { $_ => 1 } @LICENSES;

sub custom_key { $_[0] =~ /^[xX]_./ }

sub check_string {
	my ($where, $v) = @_;
	is_str($v) && length $v >= 1 or err("$where: must be a non-empty string");
}
sub check_term {
	my ($where, $v) = @_;
	is_str($v) && $v =~ /^[^\/\\\s\p{Cntrl}]{2,}$/
		or err("$where: must be a term (2 or more characters, no slash, backslash, space or control character)");
}
sub check_semver {
	my ($where, $v) = @_;
	is_str($v) && $v =~ /^$SEMVER$/ or err("$where: must be a semantic version (like 1.1.0), not ", JSON::PP->new->allow_nonref->encode($v));
}
sub check_uri {
	my ($where, $v) = @_;
	is_str($v) && $v =~ /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/ or err("$where: must be a URI");
}
sub check_email {
	my ($where, $v) = @_;
	is_str($v) && $v =~ /^[^@\s]+@[^@\s]+$/ or err("$where: must be an email address");
}
sub check_path {
	my ($where, $v) = @_;
	if (!(is_str($v) && length $v >= 2) || $v =~ m{\\|^/|(?:^|/)\.\.(?:/|$)}) {
		err("$where: must be a relative path with unix conventions");
		return 0;
	}
	return 1;
}
sub check_range {
	my ($where, $v) = @_;
	return if is_num($v) && $v == 0;
	is_str($v) && $v =~ /^$RANGE_ONE(?:,\s*$RANGE_ONE)*$/
		or err("$where: must be a version range (0, 1.2.0, \">= 1.2.0, < 2.0.0\")");
}
# An object whose keys are the given ones or custom (x_) keys.
sub check_keys {
	my ($where, $obj, @allowed) = @_;
	my %ok = map { $_ => 1 } @allowed;
	for my $k (sort keys %$obj) {
		err("$where: unknown key \"$k\" (custom keys start with x_)") unless $ok{$k} || custom_key($k);
	}
}

# --- the distribution ---------------------------------------------------------

if (!is_obj($meta)) {
	print "$file: the top level must be an object\n";
	exit 1;
}

for my $k (qw(name version abstract maintainer license provides meta-spec)) {
	err("$k: required") unless exists $meta->{$k};
}
check_keys('(top level)', $meta, qw(name version abstract maintainer license provides
	meta-spec description generated_by tags no_index prereqs release_status resources));

# meta-spec first: a consumer stops here if it does not know the version
if (exists $meta->{'meta-spec'}) {
	my $ms = $meta->{'meta-spec'};
	if (!is_obj($ms)) {
		err('meta-spec: must be an object');
	} else {
		check_keys('meta-spec', $ms, qw(version url));
		if (!is_str($ms->{version}) || $ms->{version} !~ /^1\.0\.\d+$/) {
			err('meta-spec.version: must be 1.0.x');
		}
		if (exists $ms->{url} && !(is_str($ms->{url})
				&& $ms->{url} =~ m{^https?://pgxn\.org/meta/spec\.txt$})) {
			err('meta-spec.url: must be https://pgxn.org/meta/spec.txt');
		}
	}
}

check_term('name', $meta->{name}) if exists $meta->{name};
check_semver('version', $meta->{version}) if exists $meta->{version};
check_string('abstract', $meta->{abstract}) if exists $meta->{abstract};
check_string('description', $meta->{description}) if exists $meta->{description};
check_string('generated_by', $meta->{generated_by}) if exists $meta->{generated_by};

if (exists $meta->{maintainer}) {
	my $m = $meta->{maintainer};
	if (is_arr($m)) {
		err('maintainer: must not be empty') unless @$m;
		check_string("maintainer[$_]", $m->[$_]) for 0 .. $#$m;
	} else {
		check_string('maintainer', $m);
	}
}

if (exists $meta->{license}) {
	my $l = $meta->{license};
	if (is_obj($l)) {
		err('license: must not be empty') unless %$l;
		check_uri("license.$_", $l->{$_}) for sort keys %$l;
	} elsif (is_arr($l)) {
		err('license: must not be empty') unless @$l;
		for (@$l) { err("license: unknown license \"$_\"") unless is_str($_) && $LICENSE{$_} }
	} elsif (!(is_str($l) && $LICENSE{$l})) {
		err('license: must be one of ', join(' ', @LICENSES), ', a list of them, or an object of name => URI');
	}
}

if (exists $meta->{provides}) {
	my $p = $meta->{provides};
	if (!is_obj($p) || !%$p) {
		err('provides: must be an object naming at least one extension');
	} else {
		for my $ext (sort keys %$p) {
			my $e = $p->{$ext};
			check_term("provides key \"$ext\"", $ext);
			if (!is_obj($e)) { err("provides.$ext: must be an object"); next }
			check_keys("provides.$ext", $e, qw(file version abstract docfile docpath));
			for my $k (qw(file version)) { err("provides.$ext.$k: required") unless exists $e->{$k} }
			check_semver("provides.$ext.version", $e->{version}) if exists $e->{version};
			check_string("provides.$ext.abstract", $e->{abstract}) if exists $e->{abstract};
			check_string("provides.$ext.docpath", $e->{docpath}) if exists $e->{docpath};
			for my $k (qw(file docfile)) {
				next unless exists $e->{$k};
				next unless check_path("provides.$ext.$k", $e->{$k});
				-f "$root/$e->{$k}" or err("provides.$ext.$k: $e->{$k} does not exist in the distribution");
			}
		}
	}
}

if (exists $meta->{tags}) {
	my $t = $meta->{tags};
	if (!is_arr($t) || !@$t) {
		err('tags: must be a non-empty list');
	} else {
		for (@$t) {
			is_str($_) && length $_ >= 2 && length $_ <= 255 && /^[^\/\\\p{Cntrl}]+$/
				or err("tags: \"$_\" must be 2 to 255 characters without slash, backslash or control characters");
		}
	}
}

if (exists $meta->{no_index}) {
	my $n = $meta->{no_index};
	if (!is_obj($n) || !(exists $n->{file} || exists $n->{directory})) {
		err('no_index: must be an object with file or directory');
	} else {
		check_keys('no_index', $n, qw(file directory));
		for my $k (grep { exists $n->{$_} } qw(file directory)) {
			my @l = is_arr($n->{$k}) ? @{ $n->{$k} } : ($n->{$k});
			err("no_index.$k: must not be empty") unless @l;
			check_path("no_index.$k", $_) for @l;
		}
	}
}

if (exists $meta->{prereqs}) {
	my $pr = $meta->{prereqs};
	if (!is_obj($pr) || !%$pr) {
		err('prereqs: must be a non-empty object');
	} else {
		check_keys('prereqs', $pr, qw(configure build test runtime develop));
		for my $phase (grep { !custom_key($_) } sort keys %$pr) {
			my $ph = $pr->{$phase};
			if (!is_obj($ph) || !%$ph) { err("prereqs.$phase: must be a non-empty object"); next }
			check_keys("prereqs.$phase", $ph, qw(requires recommends suggests conflicts));
			for my $rel (grep { !custom_key($_) } sort keys %$ph) {
				my $r = $ph->{$rel};
				if (!is_obj($r)) { err("prereqs.$phase.$rel: must be an object"); next }
				for my $dep (sort keys %$r) {
					check_term("prereqs.$phase.$rel key \"$dep\"", $dep);
					check_range("prereqs.$phase.$rel.$dep", $r->{$dep});
				}
			}
		}
	}
}

if (exists $meta->{release_status}) {
	my $s = $meta->{release_status};
	is_str($s) && $s =~ /^(?:stable|testing|unstable)$/
		or err('release_status: must be stable, testing or unstable');
}

if (exists $meta->{resources}) {
	my $r = $meta->{resources};
	if (!is_obj($r) || !%$r) {
		err('resources: must be a non-empty object');
	} else {
		check_keys('resources', $r, qw(homepage bugtracker repository));
		check_uri('resources.homepage', $r->{homepage}) if exists $r->{homepage};
		if (exists $r->{bugtracker}) {
			my $b = $r->{bugtracker};
			if (!is_obj($b) || !(exists $b->{web} || exists $b->{mailto})) {
				err('resources.bugtracker: must be an object with web or mailto');
			} else {
				check_keys('resources.bugtracker', $b, qw(web mailto));
				check_uri('resources.bugtracker.web', $b->{web}) if exists $b->{web};
				check_email('resources.bugtracker.mailto', $b->{mailto}) if exists $b->{mailto};
			}
		}
		if (exists $r->{repository}) {
			my $g = $r->{repository};
			if (!is_obj($g) || !(exists $g->{web} || (exists $g->{url} && exists $g->{type}))) {
				err('resources.repository: must be an object with web, or url and type');
			} else {
				check_keys('resources.repository', $g, qw(url web type));
				check_uri("resources.repository.$_", $g->{$_}) for grep { exists $g->{$_} } qw(url web);
				check_string('resources.repository.type', $g->{type}) if exists $g->{type};
			}
		}
	}
}

# --- what this project promises -----------------------------------------------

if (defined $control) {
	my ($default) = do {
		open my $fh, '<', $control or die "$control: $!\n";
		map { /^\s*default_version\s*=\s*'([^']*)'/ ? ($1) : () } <$fh>;
	};
	if (!defined $default) {
		err("$control: no default_version");
	} else {
		my @parts = split /\./, $default;
		push @parts, 0 while @parts < 3;
		my $want = join '.', @parts;
		(my $ext = $control) =~ s{^.*/|\.control$}{}g;
		err("version: must be $want (default_version $default of $control)")
			unless ($meta->{version} // '') eq $want;
		my $e = is_obj($meta->{provides}) ? $meta->{provides}{$ext} : undef;
		if (!is_obj($e)) {
			err("provides.$ext: required");
		} else {
			err("provides.$ext.version: must be $want") unless ($e->{version} // '') eq $want;
			err("provides.$ext.abstract: required") unless exists $e->{abstract};
			err("provides.$ext.file: must be the install script of $default (sql/$ext--$default.sql)")
				unless ($e->{file} // '') eq "sql/$ext--$default.sql";
		}
	}
	for my $k (qw(resources release_status prereqs)) {
		err("$k: required by this project") unless exists $meta->{$k};
	}
	my $pg = eval { $meta->{prereqs}{runtime}{requires}{PostgreSQL} };
	if (!defined $pg) {
		err('prereqs.runtime.requires.PostgreSQL: required');
	} elsif ($pg !~ /^(?:>=\s*)?15\.0\.0$/) {
		err("prereqs.runtime.requires.PostgreSQL: must be 15.0.0 (at least 15), not \"$pg\"");
	}
	if (($meta->{license} // '') eq 'postgresql' && !-f "$root/LICENSE") {
		err('license: postgresql, but the distribution has no LICENSE file');
	}
}

if (@errors) {
	print "$file: $_\n" for @errors;
	print "$file: INVALID (", scalar(@errors), " problem", (@errors == 1 ? '' : 's'), ")\n";
	exit 1;
}
printf "%s: valid (PGXN Meta Spec %s): %s %s, provides %s\n", $file, $meta->{'meta-spec'}{version},
	$meta->{name}, $meta->{version}, join(', ', map { "$_ $meta->{provides}{$_}{version} ($meta->{provides}{$_}{file})" } sort keys %{ $meta->{provides} });
exit 0;
