"""Output files, all or nothing.

Every file irtool writes (IR ``.xml`` + ``.bin``, ``.npz`` outputs, ``.dot`` and
``.svg`` drawings) goes through :func:`replacing`: content is written to temporary
files beside the targets and renamed into place only when all of it succeeded,
so a failure leaves neither a partial file nor a folder created for it.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from .errors import IRToolError

PathLike = str | os.PathLike


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the ones created."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    if not folder.is_dir():
        raise IRToolError("is not a folder, so nothing can be written under it",
                          file=str(folder))
    for path in reversed(missing):
        path.mkdir()
    return missing


def check_writable(path: PathLike) -> None:
    """Fail now, not after a long run, when ``path`` could not be written later: its
    nearest existing ancestor must be a folder this process may write in."""
    folder = Path(path).absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise IRToolError(f"cannot write here: {folder} is not a writable folder",
                          file=str(path))


@contextmanager
def replacing(*targets: PathLike) -> Iterator[tuple[Path, ...]]:
    """Temporary paths, one beside each target, for the block to write.

    When the block ends normally each is renamed onto its target, in order (put the
    file readers look for first, such as an IR's ``.xml``, last); when it raises, the
    temporaries and any folder created for them are removed. OS errors become an
    ``IRToolError`` naming the file.
    """
    paths = [Path(t) for t in targets]
    for path in paths:  # checked first: renaming onto a folder would fail halfway through
        if path.is_dir():
            raise IRToolError("is a folder, not a file", file=str(path))
    created: list[Path] = []
    temporaries: list[Path] = []
    try:
        for path in paths:
            created += _make_folders(path.parent)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            os.close(fd)
            temporaries.append(Path(tmp))
        yield tuple(temporaries)
        for tmp, path in zip(temporaries, paths):
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
            os.replace(tmp, path)
        created.clear()
    except OSError as err:
        targets_of = {str(tmp): path for tmp, path in zip(temporaries, paths)}
        where = targets_of.get(str(err.filename), err.filename or paths[-1])
        raise IRToolError(f"cannot write: {err.strerror}", file=str(where)) from None
    finally:
        for tmp in temporaries:
            tmp.unlink(missing_ok=True)
        # Only when failing (else cleared): deepest first, and only if still empty.
        for folder in sorted(created, key=lambda f: len(f.parts), reverse=True):
            with suppress(OSError):
                folder.rmdir()


def write_files(contents: Mapping[PathLike, bytes]) -> None:
    """Write each ``path: bytes`` of ``contents``, all or nothing, synced to disk."""
    with replacing(*contents) as temporaries:
        for tmp, data in zip(temporaries, contents.values()):
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())


def write_npz(path: PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """An uncompressed ``.npz`` keyed exactly by tensor name, written all or nothing.

    Unlike ``np.savez(file, **arrays)``, any name works, ``file`` and ``allow_pickle``
    included. String tensors (object arrays) are stored as unicode arrays, so the file
    loads without pickle.
    """
    with replacing(path) as (tmp,), zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            value = np.asanyarray(array)
            if value.dtype == object:
                value = value.astype(str)
            with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, value, allow_pickle=False)
