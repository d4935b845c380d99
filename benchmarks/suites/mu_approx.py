"""mu-Approx (Domingo-Ferrer, Sebe, Solanas 2008) on the CASC sets against the paper's Table 5
(L_SSE = 100 SSE/SST on z-scores, the same measure as our IL: the paper's MDAV row equals
sdcMicro's MDAV IL to 0.1). The randomized version (the one of the paper's Section 6) runs
with 11 seeds: IL is their median, the spread column their range. The fixed rule is
deterministic (one run). Table 5 gives no mu-Approx L_SSE for Tarragona (only L_E).
Seconds and peak MiB include importing scipy.spatial (KD-tree) in the fresh process, about
0.3-0.5 s and 20 MiB: the algorithm itself takes about 0.05 s on Census and 0.12 s on EIA
(``info["seconds_by_step"]``)."""

SEEDS = list(range(11))

CASES = []
for dataset in ("census", "eia", "tarragona"):
    for k in (3, 4, 5, 10):
        ref = "mu-Approx paper 002" if dataset != "tarragona" else None
        CASES.append({"dataset": dataset, "k": k, "method": "mu-approx", "options": {"randomized": True},
                      "seeds": SEEDS, "reference": ref, "label": "mu-approx (randomized)"})
        CASES.append({"dataset": dataset, "k": k, "method": "mu-approx", "options": {"randomized": False},
                      "seed": 0, "reference": ref, "label": "mu-approx (fixed rule)"})
