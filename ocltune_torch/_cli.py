"""The `ocltune` console script of the wheel: runs the CLI binary the wheel installs in the package
(bin/ocltune, beside lib/ and share/ocltune/, where it finds libocltune's shipped databases).

pip installs only Python entry points as console scripts, so this is a small launcher that replaces
itself with the binary (exec): signals, exit codes and the terminal reach the CLI unchanged.
"""

import os
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent


def binary_path() -> pathlib.Path:
    """The ocltune binary of this package: the wheel's bin/ocltune, else the build tree's
    (<repo>/build/ocltune) for a source checkout."""
    for path in (_HERE / "bin" / "ocltune", _HERE.parent / "build" / "ocltune"):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        f"ocltune: no CLI binary in {_HERE / 'bin'} (an installed wheel) or {_HERE.parent / 'build'} "
        "(a source build: cmake --build build --target ocltune)"
    )


def main() -> None:
    try:
        path = binary_path()
    except FileNotFoundError as e:
        sys.exit(str(e))
    os.execv(path, [str(path), *sys.argv[1:]])


if __name__ == "__main__":
    main()
