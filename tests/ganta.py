"""Ganta, Kasiviswanathan & Smith's two hospitals, shared by the linkage tests."""

from __future__ import annotations

import pandas as pd

__all__ = ["HOSPITAL_A", "HOSPITAL_B"]

# Ganta, Kasiviswanathan & Smith 2008 ("Composition attacks and auxiliary information in
# data privacy", KDD, Section 1 and Table 1): two hospitals in one city publish, each on
# its own, a 4-anonymous and a 6-diverse table of overlapping patients. Alice is known to
# have visited both; her class in each release holds several diseases, but only AIDS is
# in both. The tables are reconstructed from that description (the paper's own rows are
# not reproduced): the same structure, the same conclusion.
HOSPITAL_A = pd.DataFrame(
    {
        "pid": [1, 2, 3, 4, 5, 6, 7, 8],
        "zip": ["130**"] * 8,
        "age": ["<30"] * 4 + [">=40"] * 4,
        "disease": [
            "AIDS",
            "Cold",
            "Stomach ulcer",
            "Flu",
            "Cancer",
            "Heart disease",
            "Flu",
            "Flu",
        ],
    }
)
HOSPITAL_B = pd.DataFrame(
    {
        "pid": [1, 11, 12, 13, 14, 15, 5, 21, 22, 23, 24, 25],
        "zip": ["130**"] * 12,
        "age": ["<35"] * 6 + [">=35"] * 6,
        "disease": [
            "AIDS",
            "Tuberculosis",
            "Cancer",
            "Heart disease",
            "Viral infection",
            "Hepatitis",
            "Cancer",
            "Flu",
            "Cold",
            "Heart disease",
            "Hepatitis",
            "Tuberculosis",
        ],
    }
)
