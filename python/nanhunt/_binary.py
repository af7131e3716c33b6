"""Where the nanhunt binary is: the one the wheel installed next to this
Python, or the one NANHUNT_BINARY names."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import List

from ._errors import NanhuntError

ENV = "NANHUNT_BINARY"
NAME = "nanhunt.exe" if sys.platform == "win32" else "nanhunt"


def candidates() -> List[str]:
    """The places looked at, in order (NANHUNT_BINARY is not among them)."""
    places = []
    # the wheel puts the binary in the scripts folder of the scheme it was
    # installed with: the venv's bin/, /usr/local/bin, ~/.local/bin
    places.append(os.path.join(sysconfig.get_path("scripts"), NAME))
    for scheme in (f"{os.name}_user", "osx_framework_user"):
        if scheme in sysconfig.get_scheme_names():
            places.append(os.path.join(sysconfig.get_path("scripts", scheme), NAME))
    # pip install --target DIR and --prefix DIR: DIR/bin next to DIR/nanhunt
    places.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", NAME))
    found = shutil.which(NAME)
    if found:
        places.append(found)
    return list(dict.fromkeys(places))


def find() -> str:
    """The path of the nanhunt binary; NanhuntError when there is none."""
    override = os.environ.get(ENV)
    if override:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            raise NanhuntError(f"{ENV}={override}: not an executable file")
        return override
    places = candidates()
    for place in places:
        if os.path.isfile(place) and os.access(place, os.X_OK):
            return place
    raise NanhuntError(
        "the nanhunt binary was not found (looked at " + ", ".join(places) + "): "
        f"install the nanhunt wheel, or set {ENV} to the binary"
    )
