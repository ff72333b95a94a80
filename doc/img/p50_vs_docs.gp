# doc/img/p50_vs_docs.png: doc/benchmarks.md "The README's table", the flat tiers of
# `bench/run --docs 1000,100000,1000000 --no-mixed --sets skewed
# --duration 10 --hnsw-max-docs 100000` at 30dca15 (2026-12-02), p50 at
# one client, from the run's report as that table gives it (not a
# new measurement).  Regenerate: gnuplot doc/img/p50_vs_docs.gp
set terminal pngcairo size 800,500 font ",10" noenhanced
set output "doc/img/p50_vs_docs.png"
set title "p50 latency, LIMIT 10, one client (bench/run at 30dca15, flat corpus)"
set logscale xy
set xlabel "documents"
set ylabel "p50 ms"
set xtics ("1k" 1000, "100k" 100000, "1M" 1000000)
set key left top box opaque
set xrange [700:1500000]
set yrange [0.01:20000]
set grid
$d << END
# docs index index_maxscore index_exhaustive seqscan pk_lookup hnsw
1000 0.090 0.087 0.098 0.910 0.040 0.836
100000 0.770 0.928 0.751 105.6 0.040 3.86
1000000 6.04 9.94 6.76 1079 0.042 NaN
END
plot $d using 1:5 with linespoints title "seq scan", \
     $d using 1:7 with linespoints title "pgvector HNSW (recall@10 0.98 at 1k, 0.60 at 100k; not built at 1M)", \
     $d using 1:4 with linespoints title "index, exhaustive", \
     $d using 1:3 with linespoints title "index, MaxScore", \
     $d using 1:2 with linespoints lw 3 lc rgb "#c00000" title "index (auto)", \
     $d using 1:6 with linespoints title "primary-key lookup"
