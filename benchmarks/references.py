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

_add("Castro 2022 decomposition", "shared/papers/000 (Castro et al. PSD 2022) Table 5, new heuristic", {
    "tarragona": {3: 14.50, 5: 20.25, 10: 30.55},
    "census": {3: 4.79, 5: 7.84, 10: 12.32},
})
_add("Aloise 2014 column generation", "shared/papers/000 (Castro et al. PSD 2022) Table 5, optimization method of [1]", {
    "tarragona": {3: 14.46, 5: 20.16},
    "census": {3: 4.67, 5: 7.36},
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


def lookup(dataset: str, k: int, name: str | None):
    if not name:
        return None
    return REFERENCES.get((dataset, k, name))
