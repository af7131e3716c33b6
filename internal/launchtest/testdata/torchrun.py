# torchrun of Debian's python3-torch 1.13 under Python 3.11, without its crash
# before the first worker: Python 3.11 no longer iterates an IntFlag's
# zero-valued member, so Std.from_str("0") returns None. Mapping "0" to
# Std.NONE here leaves the installed package as it is.
import sys

from torch.distributed.elastic.multiprocessing import api

_orig = api.Std.from_str.__func__
api.Std.from_str = classmethod(lambda cls, vm: cls.NONE if vm.strip() == "0" else _orig(cls, vm))

from torch.distributed.run import main  # noqa: E402

sys.exit(main())
