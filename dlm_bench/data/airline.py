"""Airline 2008 (ASA Data Expo 2009) with the preprocessing of Hensman et al. (2015):
flights of January-April 2008, inputs month, day of month, day of week, plane age, distance,
air time, departure time, arrival time; label 1 when the arrival delay is > 0.

The CSV (~7M rows, ~690 MB uncompressed) is streamed in chunks with only the needed columns, so
peak memory stays far below 2 GB; rows with a missing value (cancelled / diverted flights, planes
without a known year of manufacture) are dropped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

FEATURES = ["Month", "DayofMonth", "DayOfWeek", "PlaneAge", "Distance", "AirTime", "DepTime", "ArrTime"]
MONTHS = (1, 2, 3, 4)
YEAR = 2008
CHUNK_ROWS = 500_000


def plane_years(path: Path) -> dict[str, float]:
    """tailnum -> year of manufacture from plane-data.csv (blank / 'None' / 0 years dropped)."""
    df = pd.read_csv(path, usecols=["tailnum", "year"], dtype=str)
    year = pd.to_numeric(df["year"], errors="coerce")
    ok = year.notna() & (year > 1900)
    return dict(zip(df.loc[ok, "tailnum"].str.strip(), year[ok].astype(float)))


def parse_airline(flights: Path, planes: Path, chunk_rows: int = CHUNK_ROWS):
    years = plane_years(planes)
    cols = ["Month", "DayofMonth", "DayOfWeek", "DepTime", "ArrTime", "TailNum", "AirTime", "ArrDelay", "Distance"]
    Xs, ys = [], []
    reader = pd.read_csv(flights, usecols=cols, chunksize=chunk_rows, dtype={"TailNum": str},
                         na_values=["NA", ""], low_memory=True)
    for chunk in reader:
        chunk = chunk[chunk["Month"].isin(MONTHS)]
        age = YEAR - chunk["TailNum"].str.strip().map(years)
        chunk = chunk.assign(PlaneAge=age)
        chunk = chunk.dropna(subset=FEATURES + ["ArrDelay"])
        Xs.append(chunk[FEATURES].to_numpy(np.float64))
        ys.append((chunk["ArrDelay"].to_numpy(np.float64) > 0).astype(np.float64))
    X = np.vstack(Xs) if Xs else np.zeros((0, len(FEATURES)))
    y = np.concatenate(ys) if ys else np.zeros(0)
    return X, y, list(FEATURES)
