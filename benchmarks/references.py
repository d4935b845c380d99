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

_add("mu-Approx paper 002", "shared/papers/002 (Domingo-Ferrer, Sebe, Solanas 2008) Table 5, L_SSE", {
    "census": {3: 6.25, 4: 8.47, 5: 10.78, 10: 17.01},
    "eia": {3: 0.43, 4: 0.59, 5: 0.83, 10: 2.26},
})


def lookup(dataset: str, k: int, name: str | None):
    if not name:
        return None
    return REFERENCES.get((dataset, k, name))
