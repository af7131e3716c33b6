"""python -m nanhunt ARGS runs the nanhunt binary with ARGS."""

import os
import sys

from ._binary import find
from ._errors import NanhuntError


def main() -> None:
    try:
        binary = find()
    except NanhuntError as e:
        sys.exit(f"nanhunt: {e}")
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
