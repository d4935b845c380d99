"""Core constructive methods (MDAV, V-MDAV) on the CASC sets, against sdcMicro 5.8.1 and
the published V-MDAV values."""

CASES = []
for dataset in ("tarragona", "census", "eia"):
    for k in (3, 4, 5, 10):
        CASES.append({"dataset": dataset, "k": k, "method": "mdav", "reference": "sdcMicro mdav"})

# V-MDAV with its default gamma (0.5) on every set, against the V-MDAV row of Maya-Lopez et
# al. 2022 (a fixed-gamma implementation; see the README's "V-MDAV details").
for dataset in ("tarragona", "census", "eia"):
    for k in (3, 4, 5, 10):
        CASES.append({"dataset": dataset, "k": k, "method": "vmdav", "reference": "Maya 2022 V-MDAV",
                      "label": "vmdav (default gamma=0.5)"})

# The gammas that reproduce published V-MDAV values (tests/constructive/test_vmdav.py has the intervals).
for dataset, k, gamma, reference in [
    ("census", 3, 0.2, "Maya 2022 V-MDAV"),
    ("census", 5, 0.2, "Maya 2022 V-MDAV"),
    ("census", 10, 0.2, "Maya 2022 V-MDAV"),
    ("census", 5, 0.45, "Castro 2022 VMDAV"),
    ("census", 10, 0.45, "Castro 2022 VMDAV"),
    ("tarragona", 3, 0.55, "Castro 2022 VMDAV"),
]:
    CASES.append({"dataset": dataset, "k": k, "method": "vmdav", "options": {"gamma": gamma},
                  "reference": reference})
