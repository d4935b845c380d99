"""Core constructive methods (MDAV, V-MDAV) on the CASC sets, against sdcMicro 5.8.1 and
the published V-MDAV values."""

CASES = []
for dataset in ("tarragona", "census", "eia"):
    for k in (3, 4, 5, 10):
        CASES.append({"dataset": dataset, "k": k, "method": "mdav", "reference": "sdcMicro mdav"})
