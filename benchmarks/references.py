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


def lookup(dataset: str, k: int, name: str | None):
    if not name:
        return None
    return REFERENCES.get((dataset, k, name))
