"""Output files, all or nothing.

Every file irtool writes (IR ``.xml`` + ``.bin``, ``.npz`` outputs, ``.dot`` and
``.svg`` drawings) goes through :func:`replacing`: content is written to temporary
files beside the targets and renamed into place only when all of it succeeded,
so a failure leaves neither a partial file nor a folder created for it.
"""

from __future__ import annotations

import glob
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import numpy as np

from .errors import IRToolError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, no sweep of killed writes' files
    fcntl = None  # type: ignore[assignment]

PathLike = str | os.PathLike[str]


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
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (``flock`` on the directory itself, so no lock
    file is left behind): saves into one folder create, sweep and rename their temporaries
    one at a time. Where ``fcntl`` does not exist (Windows) this does nothing."""
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        with suppress(OSError):  # a file system without flock (some NFS): no lock
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _temporary(path: Path) -> tuple[Path, int]:
    """A new temporary beside ``path``, locked (``flock``) for as long as its descriptor
    is open: a temporary nobody holds is left over from a killed writer."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    if fcntl is not None:
        with suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
    return Path(tmp), fd


def abandoned(lock: str | os.PathLike[str]) -> bool:
    """Whether the file ``lock`` exists and no process holds a lock on it: its owner, who
    locked it when making it and keeps it locked while alive, is gone. (False where there
    are no locks: Windows.)"""
    if fcntl is None:
        return False
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a live owner holds it
    else:
        return True
    finally:
        os.close(fd)


def _sweep(path: Path) -> None:
    """Remove the temporaries a killed write to ``path`` left behind (call under the folder
    lock): those whose lock nobody holds any more."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        if abandoned(tmp):
            tmp.unlink(missing_ok=True)


@contextmanager
def replacing(*targets: PathLike) -> Iterator[tuple[Path, ...]]:
    """Temporary paths, one beside each target, for the block to write.

    When the block ends normally each is renamed onto its target, in order (put the
    file readers look for first, such as an IR's ``.xml``, last); when it raises, the
    temporaries and any folder created for them are removed. OS errors become an
    ``IRToolError`` naming the file.

    Concurrent writers to the same targets (threads or processes) end with one whole
    set: the renames of one set happen under a lock on the folder, so two sets never
    interleave. Temporaries left by a writer that was killed are removed by the next
    write to the same target.
    """
    paths = [Path(t) for t in targets]
    for path in paths:  # checked first: renaming onto a folder would fail halfway through
        if path.is_dir():
            raise IRToolError("is a folder, not a file", file=str(path))
    created: list[Path] = []
    temporaries: list[Path] = []
    made: dict[Path, tuple[Path, int]] = {}  # target -> its temporary and that one's lock
    try:
        for path in paths:
            created += _make_folders(path.parent)
        for folder in _folders(paths):
            # Under the lock, so that no sweep sees a temporary before it is locked.
            with _folder_lock(folder):
                for path in paths:
                    if path.parent.resolve() == folder:
                        _sweep(path)
                        try:
                            made[path] = _temporary(path)
                        except OSError as err:  # name the target, not the hidden temporary
                            raise IRToolError(f"cannot write: {err.strerror}",
                                              file=str(path)) from None
        temporaries = [made[path][0] for path in paths]
        yield tuple(temporaries)
        mode = 0o666 & ~_umask()  # mkstemp makes 0600; outputs get the usual mode
        for tmp in temporaries:
            os.chmod(tmp, mode)
        with ExitStack() as locks:
            for folder in _folders(paths):
                locks.enter_context(_folder_lock(folder))
            for tmp, path in zip(temporaries, paths):
                os.replace(tmp, path)
        created.clear()
    except OSError as err:
        targets_of = {str(tmp): path for tmp, path in zip(temporaries, paths)}
        where = targets_of.get(str(err.filename), err.filename or paths[-1])
        raise IRToolError(f"cannot write: {err.strerror}", file=str(where)) from None
    finally:
        for tmp, fd in made.values():
            tmp.unlink(missing_ok=True)
            os.close(fd)
        # Only when failing (else cleared): deepest first, and only if still empty.
        for folder in sorted(created, key=lambda f: len(f.parts), reverse=True):
            with suppress(OSError):
                folder.rmdir()


def _folders(paths: list[Path]) -> list[Path]:
    """The distinct folders of ``paths``, in one fixed order (locks are taken in it)."""
    return sorted({p.parent.resolve() for p in paths}, key=str)


def write_files(contents: Mapping[PathLike, bytes | Sequence[bytes | memoryview]]) -> None:
    """Write each ``path: bytes`` of ``contents`` (or the buffers to write one after the
    other, streamed without joining them), all or nothing, synced to disk."""
    with replacing(*contents) as temporaries:
        for tmp, data in zip(temporaries, contents.values()):
            with open(tmp, "wb") as f:
                for part in ([data] if isinstance(data, bytes | bytearray) else data):
                    f.write(part)
                f.flush()
                os.fsync(f.fileno())


def write_npz(path: PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """An uncompressed ``.npz`` keyed exactly by tensor name, written all or nothing.

    Unlike ``np.savez(file, **arrays)``, any name works, ``file`` and ``allow_pickle``
    included. String tensors (object arrays) are stored as unicode arrays, so the file
    loads without pickle.
    """
    write_npz_files({path: arrays})


def write_npz_files(files: Mapping[PathLike, Mapping[str, np.ndarray]]) -> None:
    """Several ``.npz`` files (as ``write_npz``), all of them or none."""
    with replacing(*files) as temporaries:
        for tmp, arrays in zip(temporaries, files.values()):
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
                for name, array in arrays.items():
                    value = np.asanyarray(array)
                    if value.dtype == object:
                        value = value.astype(str)
                    with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                        np.lib.format.write_array(f, value, allow_pickle=False)
