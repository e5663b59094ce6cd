"""Which epsilon triples (small < middle < large) show the paper's KL/N pattern (Reeb et al. 2018, L130:
0.097 / 0.109 / 0.031: middle highest, large lowest)?  Reads the report's fig1_numbers.csv."""
import itertools, sys
import pandas as pd
d = pd.read_csv(sys.argv[1])
k = d[(d.series == "kl-PAC-SGP") & (d.metric == "kl_over_n")].set_index("epsilon")["mean"].to_dict()
P = (0.097, 0.109, 0.031)
rows = []
for s, m, l in itertools.combinations(sorted(k), 3):
    a, b, c = k[s], k[m], k[l]
    rows.append(dict(small=s, middle=m, large=l, kl_small=round(a, 3), kl_middle=round(b, 3), kl_large=round(c, 3),
                     pattern=bool(a < b > c and c < a), max_abs_diff=round(max(abs(a - P[0]), abs(b - P[1]), abs(c - P[2])), 3),
                     small_over_middle=round(a / b, 2), large_over_middle=round(c / b, 2)))
r = pd.DataFrame(rows)
print(f"{len(r)} triples, {int(r.pattern.sum())} with the paper's pattern (KL small < middle > large, large < small);"
      f" paper: small/middle {P[0]/P[1]:.2f}, large/middle {P[2]/P[1]:.2f}\n")
t = r[r.pattern].sort_values("max_abs_diff")
print("| " + " | ".join(t.columns) + " |")
print("|" + "---|" * len(t.columns))
for row in t.itertuples(index=False):
    print("| " + " | ".join(str(v) for v in row) + " |")
