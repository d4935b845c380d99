"""Published reference values, each with its source.

Keys: (data set, k, reference name) -> (value, source). IL in percent.
"""

REFERENCES: dict[tuple[str, int, str], tuple[float, str]] = {}


def _add(name: str, source: str, table: dict[str, dict[int, float]]) -> None:
    for dataset, row in table.items():
        for k, value in row.items():
            REFERENCES[(dataset, k, name)] = (value, source)


_add("sdcMicro mdav", "shared/data/README.md: sdcMicro 5.8.1 microaggregation(method='mdav')", {
    "tarragona": {3: 16.9326, 4: 19.5460, 5: 22.4619, 10: 33.1929},
    "census": {3: 5.6922, 4: 7.4947, 5: 9.0884, 10: 14.1559},
    "eia": {3: 0.4829, 4: 0.6713, 5: 1.6667, 10: 3.8397},
})

_add("Maya 2022 V-MDAV", "papers/001 (Maya-Lopez et al. 2022) Tables 2-4, row V-MDAV", {
    "census": {3: 5.6619, 4: 7.4947, 5: 9.0070, 6: 10.2666, 7: 11.5999, 8: 12.2985, 9: 13.3368, 10: 14.0730},
    "tarragona": {3: 16.6603, 4: 19.5460, 5: 22.4619, 6: 26.3252, 7: 27.5184, 8: 29.6929, 9: 31.2146,
                  10: 33.1929},
    "eia": {3: 0.4829, 4: 0.6713, 5: 1.2771, 6: 1.2320, 7: 2.2038, 8: 2.9193, 9: 3.2835, 10: 2.7478},
})

_add("Castro 2022 VMDAV", "papers/000 (Castro et al. 2022) Tables 1-4, Step 2 where Alg = VMDAV (2 decimals)", {
    "tarragona": {3: 15.85},
    "census": {3: 5.66, 5: 8.98, 10: 14.04},
})

_add("mu-Approx paper 002", "shared/papers/002 (Domingo-Ferrer, Sebe, Solanas 2008) Table 5, L_SSE", {
    "census": {3: 6.25, 4: 8.47, 5: 10.78, 10: 17.01},
    "eia": {3: 0.43, 4: 0.59, 5: 0.83, 10: 2.26},
})


_add("Castro 2022 two-swap", "papers/000 (Castro et al. 2022) Tables 1 and 3, Step 3 (two-swap after the best "
     "of MDAV/VMDAV; 2 decimals)", {
    "tarragona": {3: 15.00, 5: 20.74, 10: 30.77},
    "census": {3: 5.25, 5: 8.12, 10: 12.36},
})

_add("ICSM table 2", "papers/003 (Mortazavi and Jalili 2015) Table 2, IL_ICSM (one run from MDAV; 2 decimals)", {
    "tarragona": {3: 14.81, 5: 20.69, 10: 30.70},
    "census": {3: 4.85, 5: 7.78, 10: 11.93},
    "eia": {3: 0.36, 5: 0.78, 10: 2.24},
})

_add("ICSM table 4", "papers/003 (Mortazavi and Jalili 2015) Table 4, IL_ICSM (best of 1600 perturbed restarts)", {
    "tarragona": {3: 14.54, 4: 17.18, 5: 20.25, 10: 30.34},
    "census": {3: 4.75, 4: 6.21, 5: 7.50, 10: 11.74},
    "eia": {3: 0.35, 4: 0.49, 5: 0.74, 10: 1.95},
})


def lookup(dataset: str, k: int, name: str | None):
    if not name:
        return None
    return REFERENCES.get((dataset, k, name))
