"""The package's version: python/VERSION, as the wheel recorded it."""

import os
from importlib import metadata


def _version() -> str:
    tree = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = os.path.join(tree, "VERSION")
    if os.path.isfile(source) and os.path.isfile(os.path.join(tree, "setup.py")):  # run from the source tree
        with open(source, encoding="utf-8") as f:
            return f.read().strip()
    try:
        return metadata.version("nanhunt")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
