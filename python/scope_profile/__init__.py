# SPDX-License-Identifier: MIT
"""Read scope profiles (HDF5 schema 3) into pandas: tables, calls, call trees and plots.

    import scope_profile
    with scope_profile.load("out.h5") as p:
        print(p.summary().head())               # regions by self time
        calls = p.events(region="work", lane=1)  # one row per call, starts in unix ns
        tree = p.tree(process=0)                 # calls, total and self per call path
        p.plot_flame(path="flame.png")

The file format is described in scope's docs/SCHEMA.md, and in the file itself:
every group and dataset has a "description" attribute, and a "unit" where it has one.
"""

from ._profile import NEVER_RETURNED, Profile, decode_starts, load, parse_time

__version__ = "0.1.0"
__all__ = ["NEVER_RETURNED", "Profile", "decode_starts", "load", "parse_time", "__version__"]
