"""Reader for the CASC reference data sets (Tarragona, Census, EIA).

The files are not part of the package (they come from the R package sdcMicro; see the
project README). Pass ``data_dir`` or set ``PYSDCMICRO_CASC_DIR`` to the folder holding
``tarragona.csv``, ``census.csv`` and ``eia.csv``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .._errors import InvalidInputError
from .._validation import check_choice

__all__ = ["load_casc", "CASC_COLUMNS"]

#: The columns the microaggregation literature uses for each set. EIA: ``UTILITYID`` and
#: the ten revenue/sales columns (every numeric column except ``YEAR`` and ``MONTH``).
CASC_COLUMNS = {
    "tarragona": ["FIXED.ASSETS", "CURRENT.ASSETS", "TREASURY", "UNCOMMITTED.FUNDS", "PAID.UP.CAPITAL",
                  "SHORT.TERM.DEBT", "SALES", "LABOR.COSTS", "DEPRECIATION", "OPERATING.PROFIT",
                  "FINANCIAL.OUTCOME", "GROSS.PROFIT", "NET.PROFIT"],
    "census": ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC", "POTHVAL",
               "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL"],
    "eia": ["UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE", "INDSALES",
            "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES"],
}


def load_casc(name: str, *, data_dir: str | os.PathLike | None = None, columns: str = "published") -> pd.DataFrame:
    """Read a CASC reference set.

    Parameters
    ----------
    name : {"tarragona", "census", "eia"}
    data_dir : path, optional
        Folder with the CSV files; default ``$PYSDCMICRO_CASC_DIR``.
    columns : {"published", "all"}
        ``"published"`` keeps the columns of :data:`CASC_COLUMNS` (what the literature
        microaggregates); ``"all"`` keeps the file as it is.
    """
    name = check_choice(name, "name", tuple(CASC_COLUMNS))
    columns = check_choice(columns, "columns", ("published", "all"))
    folder = data_dir if data_dir is not None else os.environ.get("PYSDCMICRO_CASC_DIR")
    if folder is None:
        raise InvalidInputError(
            "`data_dir` is needed (or the environment variable PYSDCMICRO_CASC_DIR): "
            "the CASC files are not shipped with pysdcmicro."
        )
    path = Path(folder) / f"{name}.csv"
    if not path.is_file():
        raise InvalidInputError(f"no file {path}; `data_dir` must hold {name}.csv.")
    frame = pd.read_csv(path)
    return frame[CASC_COLUMNS[name]].copy() if columns == "published" else frame
