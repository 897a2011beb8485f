# bench/many.gp: the many-generators chart of make bench, drawn by bench/many.sh as
#   gnuplot -e "data='many.tsv'; out='many.svg'; dbs=100; one=6; long='1000'; chart_title='...'" bench/many.gp
# many.tsv: kind, dbs, n, define_ms, seq_define_ms, first_ms, seq_first_ms,
# long_ms, seq_long_ms, hot_ns, seq_hot_ns, ... (a header line first; "-"
# where a figure is not measured), sorted by kind, dbs and n.  Four panels
# against the number of generators (log scales): define, first call in a
# fresh session, first call in a long session, hot call; cosid's lines in
# colour (solid: one database, dashed: spread over dbs databases), the
# sequences' in grey (each kind's servers' own), and the targets (2 x the
# sequence, one database) dotted.  one: the number of one-database rows (0:
# only the spread rows, two panels).
set terminal svg size 1000,860 dynamic noenhanced font "sans,12" background "#ffffff"
set output out
set datafile separator "\t"
set datafile missing "-"
set key top left reverse Left opaque font "sans,9" spacing 0.85
set logscale x 10
set logscale y 10
set format y "%g"
set grid xtics ytics lc rgb "#e2e2e2"
set xlabel "generators (sequences)"
set offsets graph 0.05, graph 0.05, graph 1.0, 0
sel(k, d, c) = (strcol(1) eq k && $2 == d) ? column(c) : NaN
panels = (one > 0 ? 4 : 2)
if (panels == 2) { set terminal svg size 1000,400 dynamic noenhanced font "sans,12" background "#ffffff"; set output out }
set multiplot layout panels / 2, 2 title chart_title font "sans,13"

# panel(title, cosid column, sequence column, what the sequence line is)
do for [p = 1:panels] {
	col = (p == 1 ? 4 : p == 2 ? 6 : p == 3 ? 8 : 10)
	set title (p == 1 ? "define: cosid_define / CREATE SEQUENCE, ms" : \
		p == 2 ? "first call in a fresh session, ms" : \
		p == 3 ? "first call in a long session (".long." others used before), ms" : \
		"hot call, ns (cosid_next / nextval)")
	set ylabel (p == 4 ? "ns per call" : "ms (median)")
	# sequences: each kind's servers' own, grey; the target, 2 x the sequence
	# of one database, dotted in the kind's colour
	if (p <= 2 && dbs > 1) {
		plot data every ::1 using 3:(sel("snowflake", 1, col)) with linespoints lw 2 pt 7 lc rgb "#2b6cb0" title "snowflake", \
		     data every ::1 using 3:(sel("segment", 1, col)) with linespoints lw 2 pt 5 lc rgb "#dd6b20" title "segment (invoice codec)", \
		     data every ::1 using 3:(sel("snowflake", dbs, col)) with linespoints lw 2 dt 2 pt 6 lc rgb "#2b6cb0" title sprintf("snowflake, %d databases", dbs), \
		     data every ::1 using 3:(sel("segment", dbs, col)) with linespoints lw 2 dt 2 pt 4 lc rgb "#dd6b20" title sprintf("segment, %d databases", dbs), \
		     data every ::1 using 3:(sel("snowflake", 1, col + 1)) with linespoints lw 2 pt 9 lc rgb "#718096" title "sequence (snowflake's server)", \
		     data every ::1 using 3:(sel("segment", 1, col + 1)) with linespoints lw 2 pt 13 lc rgb "#a0aec0" title "sequence (segment's server)", \
		     data every ::1 using 3:(sel("snowflake", dbs, col + 1)) with linespoints lw 2 dt 2 pt 8 lc rgb "#718096" title sprintf("sequence, %d databases (snowflake's)", dbs), \
		     data every ::1 using 3:(sel("segment", dbs, col + 1)) with linespoints lw 2 dt 2 pt 12 lc rgb "#a0aec0" title sprintf("sequence, %d databases (segment's)", dbs), \
		     data every ::1 using 3:(2 * sel("snowflake", 1, col + 1)) with lines lw 1.5 dt 3 lc rgb "#2b6cb0" title "target: 2 x sequence (snowflake's)", \
		     data every ::1 using 3:(2 * sel("segment", 1, col + 1)) with lines lw 1.5 dt 3 lc rgb "#dd6b20" title "target: 2 x sequence (segment's)"
	} else {
		plot data every ::1 using 3:(sel("snowflake", 1, col)) with linespoints lw 2 pt 7 lc rgb "#2b6cb0" title "snowflake", \
		     data every ::1 using 3:(sel("segment", 1, col)) with linespoints lw 2 pt 5 lc rgb "#dd6b20" title (p == 4 ? "segment" : "segment (invoice codec)"), \
		     data every ::1 using 3:(sel("snowflake", 1, col + 1)) with linespoints lw 2 pt 9 lc rgb "#718096" title (p == 4 ? "nextval (snowflake's server)" : "sequence (snowflake's server)"), \
		     data every ::1 using 3:(sel("segment", 1, col + 1)) with linespoints lw 2 pt 13 lc rgb "#a0aec0" title (p == 4 ? "nextval (segment's server)" : "sequence (segment's server)"), \
		     data every ::1 using 3:(p == 4 ? NaN : 2 * sel("snowflake", 1, col + 1)) with lines lw 1.5 dt 3 lc rgb "#2b6cb0" title (p == 4 ? "" : "target: 2 x sequence (snowflake's)"), \
		     data every ::1 using 3:(p == 4 ? NaN : 2 * sel("segment", 1, col + 1)) with lines lw 1.5 dt 3 lc rgb "#dd6b20" title (p == 4 ? "" : "target: 2 x sequence (segment's)")
	}
}
unset multiplot
