# bench/chart.gp: the chart of one make bench run, drawn by bench/run.sh as
#   gnuplot -e "calls='calls.tsv'; pk='pk.tsv'; out='chart.svg'; rows='1M'; pk_target=31" \
#           -e "chart_title='...'; chart_subtitle='...'; chart_note='...'" bench/chart.gp
# (chart_note, a third line of the title, may be left out)
# calls.tsv: label, per-call ns (bar), the figure printed, 1 for cosid's;
# pk.tsv: label, index MB (bar), the figure printed, 1 for cosid's (lib.sql,
# bench_chart_calls and bench_chart_pk).  Two panels of horizontal bars:
# per-call cost, and the size of the primary key.

set terminal svg size 900,640 dynamic noenhanced font "sans,12" background "#ffffff"
set output out
set datafile separator "\t"

colour(c) = c > 0 ? 0x2b6cb0 : 0x9aa5b1

# (stats before any range is set: it keeps to the ranges in force)
stats calls using 2 nooutput prefix "C"
stats pk using 2 nooutput prefix "P"
half = 0.34

if (!exists("chart_note")) chart_note = ""
set multiplot layout 2,1 title chart_title."\n".chart_subtitle.(strlen(chart_note) > 0 ? "\n".chart_note : "") font "sans,13"

set style fill solid 0.9 border -1
unset key
set border 3
set grid xtics lc rgb "#e2e2e2"
set xtics nomirror
set ytics nomirror scale 0
set lmargin 31
set rmargin 4

set yrange [C_records - 0.5:-0.5]
set xrange [0:C_max * 1.12]
set title "per-call cost, ns: (median query time - the bare scan's) / N   (blue: cosid, grey: what it is compared with)"
plot calls using ($2 / 2):0:($2 / 2):(half):(colour($4)):ytic(1) with boxxyerror lc rgb variable, \
     calls using 2:0:(" ".strcol(3)) with labels left font "sans,11"

set yrange [P_records - 0.5:-0.5]
set xrange [0:(P_max > pk_target ? P_max : pk_target) * 1.12]
set title sprintf("primary key of %s rows, MB   (dashed: target for gen_ulid_monotonic(), <= %g MB)", rows, pk_target)
set arrow 1 from first pk_target, graph 0 to first pk_target, graph 1 nohead dt 2 lw 1.5 lc rgb "#c05621"
plot pk using ($2 / 2):0:($2 / 2):(half):(colour($4)):ytic(1) with boxxyerror lc rgb variable, \
     pk using 2:0:(" ".strcol(3)) with labels left font "sans,11"

unset multiplot
