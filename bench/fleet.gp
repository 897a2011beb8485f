# bench/fleet.gp: the fleet chart of make bench, drawn by bench/fleet.sh as
#   gnuplot -e "data='fleet.tsv'; out='fleet.svg'; chart_title='...'" bench/fleet.gp
# fleet.tsv: route, mode, holders, store_cpu_pct, bouncer_cpu_pct,
# renew_per_s, renew_p50_ms, renew_p99_ms, ... (a header line first).  Two
# panels, busy holders, direct and through PgBouncer: the store's CPU (% of
# one core) and the renewals' p99 latency, against the number of holders,
# each with its target (10% at 1,024; 10 ms).
set terminal svg size 900,420 dynamic noenhanced font "sans,12" background "#ffffff"
set output out
set datafile separator "\t"
set key top left
set logscale x 2
set xtics ("64" 64, "256" 256, "1024" 1024)
set xrange [48:1400]
set grid ytics lc rgb "#e2e2e2"
set xlabel "holders (busy: a renewal every half TTL, 5 s; 1.3: every 300 ms)"
set multiplot layout 1,2 title chart_title font "sans,13"
set ylabel "store CPU, % of one core"
set yrange [0:*]
plot data using (strcol(2) eq "busy" && strcol(1) eq "direct" ? $3 : NaN):4 every ::1 with linespoints lw 2 pt 7 lc rgb "#2b6cb0" title "direct", \
     data using (strcol(2) eq "busy" && strcol(1) eq "pgbouncer" ? $3 : NaN):4 every ::1 with linespoints lw 2 pt 5 lc rgb "#dd6b20" title "PgBouncer", \
     10 with lines dt 2 lc rgb "#9aa5b1" title "target 10%"
set ylabel "renewal latency p99, ms"
plot data using (strcol(2) eq "busy" && strcol(1) eq "direct" ? $3 : NaN):8 every ::1 with linespoints lw 2 pt 7 lc rgb "#2b6cb0" title "direct", \
     data using (strcol(2) eq "busy" && strcol(1) eq "pgbouncer" ? $3 : NaN):8 every ::1 with linespoints lw 2 pt 5 lc rgb "#dd6b20" title "PgBouncer", \
     10 with lines dt 2 lc rgb "#9aa5b1" title "target 10 ms"
unset multiplot
