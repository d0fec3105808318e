"""Pinned agent CLIs, installed once into a cache folder outside the tracked tree.

``pins.txt`` names each agent's package and version; the cache is ``$OXIDE_COMPAT_CACHE`` or
``<repo>/.compat-cache``, one folder per agent and version, so bumping a pin installs beside the old
one. ``python -m tests.compat.install`` installs every pin (what ``make compat`` runs first).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


@dataclass(frozen=True)
class Pin:
    agent: str
    registry: str
    package: str
    version: str
    bin: str = ""  # the command's name, when it is not the agent's

    def __post_init__(self) -> None:
        if not self.bin:
            object.__setattr__(self, "bin", self.agent)

    @property
    def folder(self) -> Path:
        return cache() / f"{self.agent}-{self.version}"

    @property
    def binary(self) -> Path:
        name = self.bin
        if self.registry == "npm":
            return self.folder / "node_modules" / ".bin" / name
        return self.folder / "venv" / "bin" / name

    @property
    def bin_dir(self) -> Path:
        return self.binary.parent


def cache() -> Path:
    return Path(os.environ.get("OXIDE_COMPAT_CACHE") or ROOT / ".compat-cache")


def pins() -> dict[str, Pin]:
    out = {}
    for line in (HERE / "pins.txt").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            agent, registry, package, version, *binary = line.split()
            out[agent] = Pin(agent, registry, package, version, *binary[:1])
    return out


def installed(pin: Pin) -> bool:
    return (pin.folder / ".installed").exists() and pin.binary.exists()


def install(pin: Pin, *, quiet: bool = True) -> Path:
    """Install ``pin`` unless it is there; return its binary."""
    if installed(pin):
        return pin.binary
    # Into the final folder (a venv's scripts name it by absolute path); the marker written last
    # says the install is whole, and a broken one is started again from nothing.
    shutil.rmtree(pin.folder, ignore_errors=True)
    pin.folder.mkdir(parents=True)
    out = subprocess.DEVNULL if quiet else None
    if pin.registry == "npm":
        # Install scripts stay off (npm's default now): every CLI here ships its binary as a
        # dependency package and runs without its postinstall step.
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                        "--prefix", str(pin.folder), f"{pin.package}@{pin.version}"],
                       check=True, stdout=out)
    else:
        venv = pin.folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                        f"{pin.package}=={pin.version}"], check=True, stdout=out)
    (pin.folder / ".installed").write_text(pin.version + "\n")
    return pin.binary


def main() -> int:
    for pin in pins().values():
        print(f"{pin.agent} {pin.version}: ", end="", flush=True)
        was = installed(pin)
        install(pin)
        print("cached" if was else "installed", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
