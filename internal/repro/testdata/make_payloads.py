#!/usr/bin/env python3
"""Writes tensor files that carry a pickle payload, and clean ones, for the tests.

    python3 make_payloads.py DIR MARKER

Loading a payload file the unsafe way (torch.load without weights_only,
numpy.load with allow_pickle=True) runs os.system("touch MARKER"):

  payload.pt         torch.save of an object whose __reduce__ is the call (a zip archive)
  payload-legacy.pt  the same object as a bare protocol-2 pickle (torch.save's legacy format)
  payload.npy        a NumPy object array holding it

and the clean files a case is first written from:

  good.pt            torch.save of a float32 tensor [-1, 0.5, 2]
  good.npy           numpy.save of the same values
"""

import os
import pickle
import shlex
import sys

import numpy
import torch


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + shlex.quote(self.marker),))


def main():
    out, marker = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    p = Payload(marker)
    torch.save(p, os.path.join(out, "payload.pt"))
    with open(os.path.join(out, "payload-legacy.pt"), "wb") as f:
        pickle.dump(p, f, protocol=2)
    arr = numpy.empty(1, dtype=object)
    arr[0] = p
    numpy.save(os.path.join(out, "payload.npy"), arr, allow_pickle=True)
    values = [-1.0, 0.5, 2.0]
    torch.save(torch.tensor(values, dtype=torch.float32), os.path.join(out, "good.pt"))
    numpy.save(os.path.join(out, "good.npy"), numpy.array(values, dtype=numpy.float32))


if __name__ == "__main__":
    main()
