"""Measures of a masked data set against its original: information loss, sdcMicro's
utility measures (IL1s, IL1, eigenvalues), interval disclosure risk, distance-based
record-linkage risk and k-anonymity.

Every function takes the data sets first (``original, masked``, row-aligned DataFrames or
2-D arrays) and the columns as ``variables=``; the docstrings give each formula, its
source, and where sdcMicro's conventions (followed here by default) need a word.
"""

from ._anonymity import equivalence_class_sizes, frequency_counts, is_k_anonymous
from ._linkage import RecordLinkageRisk, record_linkage_risk
from ._risk import interval_disclosure_risk
from ._utility import correlation_changes, eigen_utility, il1, il1s, il_sse, variable_changes

__all__ = [
    "il_sse",
    "il1s",
    "il1",
    "eigen_utility",
    "interval_disclosure_risk",
    "record_linkage_risk",
    "RecordLinkageRisk",
    "is_k_anonymous",
    "frequency_counts",
    "equivalence_class_sizes",
    "variable_changes",
    "correlation_changes",
]
