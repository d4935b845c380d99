"""Local search on the CASC sets: two-swap after the Step-2 start of Castro et al. 2022
(papers/000, Tables 1 and 3: the best of MDAV and V-MDAV; V-MDAV with the gamma that
reproduces their Step-2 IL, see the V-MDAV section of docs/guide/method-details.md), ICSM from MDAV in one run
(papers/003, Table 2), and ICSM with restarts for 600 s (papers/003, Table 4: best of 1600
perturbed restarts). Restart cells: seed 0, `max_restarts=None` (restart until the time
limit), so their number depends on the machine's speed (in the runner's fresh process,
with OMP_NUM_THREADS=1). The 12 restart cells take 2 hours; `local_search_short` runs the
same cells with 120 s."""

TWO_SWAP_STARTS = {
    # data set, k: (method, options) of the Step-2 start (Castro 2022, Tables 1 and 3)
    ("tarragona", 3): ("vmdav", {"gamma": 0.6}),    # VMDAV 15.85 (gamma in [0.5039, 0.6738))
    ("tarragona", 5): ("mdav", {}),                 # MDAV 22.46
    ("tarragona", 10): ("mdav", {}),                # MDAV 33.19
    ("census", 3): ("vmdav", {"gamma": 0.2}),       # VMDAV 5.66 (gamma in [0, 0.2989))
    ("census", 5): ("vmdav", {"gamma": 0.46}),      # VMDAV 8.98 (gamma in [0.4439, 0.4837))
    ("census", 10): ("vmdav", {"gamma": 0.5}),      # VMDAV 14.04 (gamma in [0.4439, 0.5405))
}


def cases(restart_seconds: float = 600.0) -> list:
    out = []
    for (dataset, k), (method, options) in TWO_SWAP_STARTS.items():
        out.append({"dataset": dataset, "k": k, "method": method, "options": options, "improve": "two-swap",
                    "reference": "Castro 2022 two-swap", "label": f"{method}+two-swap"})
    for dataset in ("tarragona", "census", "eia"):
        for k in (3, 5, 10):
            out.append({"dataset": dataset, "k": k, "method": "icsm", "reference": "ICSM table 2",
                        "label": "icsm (one run)"})
    for dataset in ("tarragona", "census", "eia"):
        for k in (3, 4, 5, 10):
            out.append({"dataset": dataset, "k": k, "method": "icsm", "options": {"max_restarts": None},
                        "time_limit": restart_seconds, "seed": 0, "reference": "ICSM table 4",
                        "label": "icsm (restarts)"})
    return out


CASES = cases(600.0)
