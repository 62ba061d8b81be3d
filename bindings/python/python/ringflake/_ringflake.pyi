"""The native module of ringflake (Rust, PyO3): the generator, the exceptions, parsing."""

import os
from typing import Any, Dict, List, Optional, Tuple, Union

from typing_extensions import disjoint_base

__all__ = [
    "Error",
    "InvalidArgument",
    "WorkerIdError",
    "ForkError",
    "ClosedError",
    "Generator",
    "_layout",
    "_parse",
    "_parse_uid",
    "PRESET_NAMES",
    "DEFAULT_STATE_FILE",
    "DEFAULT_DATABASE",
]

_LayoutTuple = Tuple[int, int, int, int, int, bool, Optional[str], int, int]
_NativeLayout = Tuple[int, int, int, int, int, bool]

PRESET_NAMES: List[str]
DEFAULT_STATE_FILE: str
DEFAULT_DATABASE: str

class Error(Exception):
    """The base of every ringflake exception. `kind` names the library's error variant."""

    kind: str

class InvalidArgument(Error, ValueError):
    """A bad argument: a layout, a setting or an ID the layout cannot have made."""

class WorkerIdError(Error):
    """No worker id: the database refused or did not answer, or the lease was lost."""

class ForkError(Error):
    """A forked child cannot take from its parent's generator (a fixed worker id)."""

class ClosedError(Error):
    """The generator is closed."""

@disjoint_base
class Generator:
    """A source of unique, time-ordered 64-bit IDs."""

    def __new__(
        cls,
        *,
        database: Union[str, "os.PathLike[str]", None] = None,
        worker_id: Optional[int] = None,
        preset: Optional[str] = None,
        bits: Optional[Tuple[int, int, int]] = None,
        epoch: Union[int, str, None] = None,
        tick: Optional[str] = None,
        state_file: Union[str, "os.PathLike[str]", bool, None] = None,
        max_lead: Optional[int] = None,
        lead_policy: str = "wait",
        create_table: bool = False,
        recycle: bool = True,
    ) -> "Generator": ...
    def next_id(self) -> int:
        """Takes the next ID."""
    def next_ids(self, n: int) -> List[int]:
        """Takes n IDs at once (0 to 10,000,000), strictly increasing."""
    @property
    def worker_id(self) -> int:
        """The worker id this generator serves with now."""
    @property
    def closed(self) -> bool:
        """Whether close() was called."""
    def close(self) -> None:
        """Stops the filler and gives the worker id's lease back."""
    def _layout(self) -> _LayoutTuple: ...
    def _stats(self) -> Dict[str, Any]: ...

def _layout(
    *,
    preset: Optional[str] = None,
    bits: Optional[Tuple[int, int, int]] = None,
    epoch: Union[int, str, None] = None,
    tick: Optional[str] = None,
) -> _LayoutTuple: ...
def _parse(layout: _NativeLayout, id: int) -> Tuple[int, int, int, int]: ...
def _parse_uid(layout: _NativeLayout, id: int, tz: Optional[str] = None) -> str: ...
